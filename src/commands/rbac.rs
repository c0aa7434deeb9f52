//! `rsop rbac`: the roles a project ships, checked against the requests its
//! code makes.

use std::io::Write;
use std::path::Path;

use crate::cli::{RbacArgs, RbacFormat};
use crate::output::Outcome;
use crate::rbac::{self, report};
use crate::{Error, Result};

pub fn run(args: &RbacArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let root = cwd.join(&args.dir);
    let helm = rbac::helm_on_path();
    let found = rbac::check_project(&root, helm.as_deref())?;
    let format = match args.format {
        RbacFormat::Text => report::Format::Text,
        RbacFormat::Github => report::Format::Github,
        RbacFormat::Sarif => report::Format::Sarif,
    };
    report::write(&found, format, out).map_err(|e| Error::io("write", Path::new("-"), e))?;
    Ok(if found.errors() > 0 {
        Outcome::Drift
    } else {
        Outcome::Done
    })
}
