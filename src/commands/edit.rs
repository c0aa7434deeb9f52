//! `rsop edit`: changes a project-wide setting recorded in PROJECT, through
//! the same plan, resolve and writer as the commands that scaffold.

use std::io::Write;
use std::path::Path;

use crate::cli::EditArgs;
use crate::output::{self, Disk, Mode, Outcome};
use crate::project::Project;
use crate::scaffold::{self, Plan};
use crate::{Error, Result};

pub fn run(args: &EditArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let Some(multigroup) = args.multigroup else {
        return Err(Error::user_with_help(
            "`rsop edit` needs a setting to change",
            "pass `--multigroup` or `--multigroup=false`",
        ));
    };
    let mut project = Project::load(cwd, "edit")?;
    if project.multigroup != multigroup && project.resources.iter().any(|r| r.api) {
        return Err(Error::user_with_help(
            "the project already has API types in the other layout",
            "rsop does not move existing types; change the layout before the first `rsop create api`",
        ));
    }
    project.multigroup = multigroup;
    let mut plan = Plan::new();
    plan.save_project(project);
    let changes = scaffold::resolve(&plan, &Disk::new(cwd))?;
    output::apply(cwd, &changes, Mode::Write, out)
}
