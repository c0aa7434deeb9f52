//! `rsop init`: the whole project skeleton, from the templates under
//! `templates/init/`, plus the license and the PROJECT file.

use std::path::{Path, PathBuf};

use crate::Result;
use crate::output::Disk;
use crate::project::Project;
use crate::scaffold::{IfExists, Plan, e2e, grafana};
use crate::templates::Templates;
use crate::versions;

/// Validated input of `rsop init`.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// Where the project goes, as the user gave it (for messages).
    pub dir: PathBuf,
    pub project: Project,
    pub owner: String,
    /// The license file to write, if any.
    pub license: Option<License>,
    pub force: bool,
}

/// The license of a new project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum License {
    Apache2,
    Mit,
}

impl License {
    /// The SPDX identifier Cargo.toml names.
    pub fn spdx(self) -> &'static str {
        match self {
            License::Apache2 => "Apache-2.0",
            License::Mit => "MIT",
        }
    }

    /// The template of the LICENSE file.
    fn template(self) -> &'static str {
        match self {
            License::Apache2 => "licenses/apache2.tera",
            License::Mit => "licenses/mit.tera",
        }
    }
}

/// The template directories `init` renders from.
pub const TEMPLATE_DIRS: &[&str] = &[
    "init/",
    "licenses/",
    "autoupdate/",
    "e2e/",
    "e2e-fragments/",
    "devcontainer/",
];

/// The template context shared by every file of the project.
pub fn context(project: &Project, owner: &str, license: Option<License>) -> tera::Context {
    let mut ctx = tera::Context::new();
    ctx.insert("project_name", &project.project_name);
    ctx.insert("crate_name", &project.crate_name());
    ctx.insert("domain", &project.domain);
    ctx.insert("namespace", &project.namespace());
    ctx.insert("repo", &project.repo);
    ctx.insert("owner", owner);
    ctx.insert("license", &license.map(License::spdx));
    ctx.insert("namespaced", &project.namespaced);
    ctx.insert("multigroup", &project.multigroup);
    ctx.insert("e2e", &project.e2e);
    ctx.insert("versions", &versions::context());
    ctx
}

/// Plans every file of a new project.
pub fn plan(opts: &InitOptions, templates: &Templates, disk: &Disk) -> Result<Plan> {
    let ctx = context(&opts.project, &opts.owner, opts.license);
    let if_exists = IfExists::from_force(opts.force);
    let mut plan = Plan::new();
    plan_dir(&mut plan, templates, &ctx, "init/", if_exists)?;
    if let Some(license) = opts.license {
        plan.create(
            "LICENSE",
            templates.render(license.template(), &ctx)?,
            if_exists,
        );
    }
    if opts.project.autoupdate {
        plan_dir(&mut plan, templates, &ctx, "autoupdate/", if_exists)?;
    }
    if opts.project.grafana {
        plan_grafana(&mut plan, &opts.project, None, if_exists)?;
    }
    if opts.project.e2e {
        e2e::plan(&mut plan, templates, &ctx, &opts.project, disk, if_exists)?;
    }
    if opts.project.devcontainer {
        plan_dir(&mut plan, templates, &ctx, "devcontainer/", if_exists)?;
    }
    crate::scaffold::runtime::plan(&mut plan)?;
    plan.save_project(opts.project.clone());
    Ok(plan)
}

/// Every template under `dir` (`init/`, `autoupdate/` for `--autoupdate`'s workflow,
/// `devcontainer/` for `--devcontainer`), as the file it produces.
pub fn plan_dir(
    plan: &mut Plan,
    templates: &Templates,
    ctx: &tera::Context,
    dir: &str,
    if_exists: IfExists,
) -> Result<()> {
    for (name, output) in templates.under(dir) {
        plan.create(output, templates.render(name, ctx)?, if_exists);
    }
    Ok(())
}

/// The file `--autoupdate` adds.
pub const AUTOUPDATE_WORKFLOW: &str = ".github/workflows/rsop-update.yml";

/// The files `--devcontainer` adds.
pub const DEVCONTAINER_FILES: [&str; 2] = [
    ".devcontainer/devcontainer.json",
    ".devcontainer/post-install.sh",
];

/// The dashboards of `--grafana`: the controllers' and the process's, the webhooks' when the
/// project serves some, and the custom one when `config` (the text of the user's
/// `grafana/custom-metrics/config.yaml`, `None` for a new one) lists metrics. The config itself
/// is the user's: it is written only where there is none.
pub fn plan_grafana(
    plan: &mut Plan,
    project: &Project,
    config: Option<&str>,
    if_exists: IfExists,
) -> Result<()> {
    let name = &project.project_name;
    plan.create(grafana::RUNTIME, grafana::runtime(name), if_exists);
    plan.create(grafana::RESOURCES, grafana::resources(name), if_exists);
    if project.resources.iter().any(|r| r.webhooks.is_some()) {
        plan.create(grafana::WEBHOOKS, grafana::webhooks(name), if_exists);
    }
    plan.create(
        grafana::CUSTOM_CONFIG,
        grafana::CUSTOM_CONFIG_TEXT.to_owned(),
        IfExists::Keep,
    );
    if let Some(dashboard) = grafana::custom(name, config.unwrap_or(grafana::CUSTOM_CONFIG_TEXT))? {
        plan.create(grafana::CUSTOM, dashboard, IfExists::Overwrite);
    }
    Ok(())
}

/// The engine's view of the project directory.
pub fn disk(opts: &InitOptions, cwd: &Path) -> Disk {
    Disk::new(cwd.join(&opts.dir))
}
