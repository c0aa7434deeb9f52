//! `rsop edit`: changes a project-wide setting recorded in PROJECT, through
//! the same plan, resolve and writer as the commands that scaffold.

use std::io::Write;
use std::path::Path;

use crate::cli::EditArgs;
use crate::output::{self, Disk, FileChange, Mode, Outcome};
use crate::project::Project;
use crate::scaffold::plans::init;
use crate::scaffold::{self, IfExists, Plan, e2e, grafana};
use crate::templates::Templates;
use crate::{Error, Result};

pub fn run(args: &EditArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    if args.multigroup.is_none()
        && args.autoupdate.is_none()
        && args.grafana.is_none()
        && args.e2e.is_none()
        && args.devcontainer.is_none()
    {
        return Err(Error::user_with_help(
            "`rsop edit` needs a setting to change",
            "pass `--multigroup`, `--autoupdate`, `--grafana`, `--e2e`, `--devcontainer`, \
             or one of them `=false`",
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
            init::plan_dir(
                &mut plan,
                &templates,
                &ctx,
                "autoupdate/",
                IfExists::Overwrite,
            )?;
        }
    }
    let disk = Disk::new(cwd);
    if let Some(on) = args.grafana {
        project.grafana = on;
        if on {
            let config = disk.read(Path::new(grafana::CUSTOM_CONFIG))?;
            init::plan_grafana(&mut plan, &project, config.as_deref(), IfExists::Overwrite)?;
        }
    }
    let mut e2e_section = None;
    if args.e2e.is_some() || args.devcontainer.is_some() {
        let mut dirs = e2e::TEMPLATE_DIRS.to_vec();
        dirs.push("devcontainer/");
        let templates = Templates::load_dirs(&dirs)?;
        let ctx = init::context(&project, "", None);
        if let Some(on) = args.e2e {
            project.e2e = on;
            if on {
                e2e::plan(&mut plan, &templates, &ctx, &project, &disk, IfExists::Keep)?;
                e2e::plan_makefile(&mut plan, &templates, &ctx, &disk)?;
            } else {
                e2e_section = Some(e2e::makefile_section(&templates, &ctx)?);
            }
        }
        if let Some(on) = args.devcontainer {
            project.devcontainer = on;
            if on {
                init::plan_dir(&mut plan, &templates, &ctx, "devcontainer/", IfExists::Keep)?;
            }
        }
    }
    plan.save_project(project.clone());
    let mut changes = scaffold::resolve(&plan, &disk)?;
    if let Some(section) = e2e_section
        && let Some(makefile) = disk.read(Path::new("Makefile"))?
        && let Some(after) = e2e::without_makefile_section(&makefile, &section)
    {
        changes.push(FileChange {
            path: "Makefile".into(),
            before: Some(makefile),
            after,
            remove: false,
        });
    }
    let mut removed: Vec<&str> = Vec::new();
    if args.autoupdate == Some(false) {
        removed.push(init::AUTOUPDATE_WORKFLOW);
    }
    if args.grafana == Some(false) {
        // The dashboards rsop writes; the custom metrics' config is the user's and stays.
        removed.extend([
            grafana::RUNTIME,
            grafana::RESOURCES,
            grafana::WEBHOOKS,
            grafana::CUSTOM,
        ]);
    }
    if args.e2e == Some(false) {
        removed.extend(e2e::FILES);
    }
    if args.devcontainer == Some(false) {
        removed.extend(init::DEVCONTAINER_FILES);
    }
    for path in removed.into_iter().map(Path::new) {
        if let Some(before) = disk.read(path)? {
            changes.push(FileChange {
                path: path.to_path_buf(),
                before: Some(before),
                after: String::new(),
                remove: true,
            });
        }
    }
    output::apply(cwd, &changes, Mode::Write, out)
}
