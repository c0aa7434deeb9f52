//! `rsop completion`: a shell completion script on standard output; `rsop
//! man`: the man page, which the release archives carry beside them.

use std::io::Write;

use clap::CommandFactory;

use std::path::Path;

use crate::cli::{Cli, CompletionArgs, ManArgs};
use crate::output::Outcome;
use crate::{Error, Result};

pub fn run(args: &CompletionArgs, out: &mut dyn Write) -> Result<Outcome> {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "rsop", out);
    Ok(Outcome::Done)
}

/// Writes the man page of rsop and of each of its commands into the
/// directory, and names them.
pub fn man(args: &ManArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let dir = cwd.join(&args.dir);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
    clap_mangen::generate_to(Cli::command(), &dir)
        .map_err(|e| Error::io("write a man page into", &dir, e))?;
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| Error::io("read", &dir, e))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("rsop") && name.ends_with(".1"))
        .collect();
    pages.sort();
    for page in pages {
        writeln!(out, "{}", args.dir.join(page).display())
            .map_err(|e| Error::io("write", Path::new("<stdout>"), e))?;
    }
    Ok(Outcome::Done)
}
