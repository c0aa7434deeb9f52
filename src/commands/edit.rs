//! `rsop edit`: changes a project-wide setting recorded in PROJECT, through
//! the same plan, resolve and writer as the commands that scaffold.

use std::io::Write;
use std::path::Path;

use crate::cli::EditArgs;
use crate::output::{self, Disk, FileChange, Mode, Outcome};
use crate::project::Project;
use crate::scaffold::plans::init;
use crate::scaffold::{self, IfExists, Plan};
use crate::templates::Templates;
use crate::{Error, Result};

pub fn run(args: &EditArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    if args.multigroup.is_none() && args.autoupdate.is_none() {
        return Err(Error::user_with_help(
            "`rsop edit` needs a setting to change",
            "pass `--multigroup`, `--autoupdate`, or either `=false`",
        ));
    }
    let mut project = Project::load(cwd, "edit")?;
    if let Some(multigroup) = args.multigroup {
        if project.multigroup != multigroup && project.resources.iter().any(|r| r.api) {
            return Err(Error::user_with_help(
                "the project already has API types in the other layout",
                "rsop does not move existing types; change the layout before the first `rsop create api`",
            ));
        }
        project.multigroup = multigroup;
    }
    let mut plan = Plan::new();
    if let Some(autoupdate) = args.autoupdate {
        project.autoupdate = autoupdate;
        if autoupdate {
            let templates = Templates::load_dirs(&["autoupdate/"])?;
            let ctx = init::context(&project, "", None);
            init::plan_autoupdate(&mut plan, &templates, &ctx, IfExists::Overwrite)?;
        }
    }
    plan.save_project(project.clone());
    let disk = Disk::new(cwd);
    let mut changes = scaffold::resolve(&plan, &disk)?;
    if args.autoupdate == Some(false) {
        let path = Path::new(init::AUTOUPDATE_WORKFLOW);
        changes.push(FileChange {
            path: path.to_path_buf(),
            before: disk.read(path)?,
            after: String::new(),
            remove: true,
        });
    }
    output::apply(cwd, &changes, Mode::Write, out)
}
