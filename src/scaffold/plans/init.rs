//! `rsop init`: the whole project skeleton, from the templates under
//! `templates/init/`, plus the license and the PROJECT file.

use std::path::{Component, Path, PathBuf};

use crate::cli::{InitArgs, License};
use crate::output::{Disk, check_path_is_writable};
use crate::project::{PROJECT_FILE, Project, names};
use crate::scaffold::{IfExists, Plan};
use crate::templates::Templates;
use crate::versions;
use crate::{Error, Result};

/// Files whose presence means the directory already holds a project.
const PROJECT_SIGNS: &[&str] = &[PROJECT_FILE, "Cargo.toml", "src/main.rs"];

/// Validated input of `rsop init`.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// Where the project goes, as the user gave it (for messages).
    pub dir: PathBuf,
    pub project: Project,
    pub owner: String,
    pub license: License,
    pub force: bool,
}

impl InitOptions {
    /// Validates the arguments; `cwd` resolves a relative `--dir`.
    pub fn from_args(args: &InitArgs, cwd: &Path) -> Result<Self> {
        let dir = args.dir.clone();
        let full = normalize(&cwd.join(&dir));
        if full.exists() && !full.is_dir() {
            return Err(Error::user_with_help(
                format!("`{}` is a file, not a directory", dir.display()),
                "pass a `--dir` that is a directory or does not exist yet",
            ));
        }
        check_path_is_writable(&full.join(PROJECT_FILE))?;

        names::validate_domain(&args.domain)?;
        let project_name = if let Some(name) = &args.project_name {
            name.clone()
        } else {
            let dir_name = full.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let derived = names::project_name_from_dir(dir_name);
            names::validate_project_name(&derived).map_err(|_| {
                Error::user_with_help(
                    format!("cannot derive a project name from the directory name `{dir_name}`"),
                    "pass `--project-name`, a DNS-1123 label that starts with a letter, \
                     such as `memcached-operator`",
                )
            })?;
            derived
        };
        names::validate_project_name(&project_name)?;
        if let Some(repo) = &args.repo
            && (repo.is_empty() || repo.chars().any(char::is_whitespace))
        {
            return Err(Error::user_with_help(
                format!("invalid repository URL `{repo}`"),
                "pass a URL without spaces, such as `https://github.com/acme/memcached-operator`",
            ));
        }
        let owner = args
            .owner
            .clone()
            .unwrap_or_else(|| format!("The {project_name} Authors"));
        if owner.trim().is_empty() || owner.contains(['\n', '\r']) {
            return Err(Error::user_with_help(
                format!("invalid owner `{}`", owner.escape_debug()),
                "pass a single-line name, such as `--owner \"Acme Corp\"`",
            ));
        }

        if !args.force
            && let Some(sign) = PROJECT_SIGNS.iter().find(|s| full.join(s).exists())
        {
            return Err(Error::user_with_help(
                format!(
                    "`{}` already holds a project (`{sign}` exists)",
                    dir.display()
                ),
                "choose another `--dir`, or pass `--force` to overwrite the project's files",
            ));
        }

        let mut project = Project::new(&args.domain, &project_name);
        project.repo.clone_from(&args.repo);
        project.namespaced = args.namespaced;
        project.multigroup = args.multigroup;
        Ok(InitOptions {
            dir,
            project,
            owner,
            license: args.license,
            force: args.force,
        })
    }
}

/// The template context shared by every file of the project.
pub fn context(project: &Project, owner: &str, license: License) -> tera::Context {
    let mut ctx = tera::Context::new();
    ctx.insert("project_name", &project.project_name);
    ctx.insert("crate_name", &project.crate_name());
    ctx.insert("domain", &project.domain);
    ctx.insert("namespace", &project.namespace());
    ctx.insert("repo", &project.repo);
    ctx.insert("owner", owner);
    ctx.insert("license", &license_spdx(license));
    ctx.insert("namespaced", &project.namespaced);
    ctx.insert("multigroup", &project.multigroup);
    ctx.insert("versions", &versions::context());
    ctx
}

fn license_spdx(license: License) -> Option<&'static str> {
    match license {
        License::Apache2 => Some("Apache-2.0"),
        License::Mit => Some("MIT"),
        License::None => None,
    }
}

/// Plans every file of a new project.
pub fn plan(opts: &InitOptions, templates: &Templates) -> Result<Plan> {
    let ctx = context(&opts.project, &opts.owner, opts.license);
    let if_exists = IfExists::from_force(opts.force);
    let mut plan = Plan::new();
    for (name, output) in templates.under("init/") {
        plan.create(output, templates.render(name, &ctx)?, if_exists);
    }
    let license = match opts.license {
        License::Apache2 => Some("licenses/apache2.tera"),
        License::Mit => Some("licenses/mit.tera"),
        License::None => None,
    };
    if let Some(name) = license {
        plan.create("LICENSE", templates.render(name, &ctx)?, if_exists);
    }
    plan.save_project(opts.project.clone());
    Ok(plan)
}

/// The engine's view of the project directory.
pub fn disk(opts: &InitOptions, cwd: &Path) -> Disk {
    Disk::new(cwd.join(&opts.dir))
}

/// `a/./b/../c` as `a/c`, without touching the disk (the directory may not
/// exist yet).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_lexically() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/a/b/.")), PathBuf::from("/a/b"));
    }
}
