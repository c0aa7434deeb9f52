//! `rsop init`: the arguments checked into [`InitOptions`], the project
//! skeleton planned and resolved against the target directory, then written
//! (or listed, with `--dry-run`).

use std::io::Write;
use std::path::Path;

use super::{say, write_unless_dry_run};
use crate::cli::{self, InitArgs};
use crate::output::{self, Mode, Outcome, check_path_is_writable};
use crate::project::{LicenseRecord, PROJECT_FILE, Project, names};
use crate::scaffold::{self, plans::init};
use crate::templates::Templates;
use crate::{Error, Result};

use init::{InitOptions, License};

/// Files whose presence means the directory already holds a project.
const PROJECT_SIGNS: &[&str] = &[PROJECT_FILE, "Cargo.toml", "src/main.rs"];

pub fn run(args: &InitArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let opts = options(args, cwd)?;
    let templates = Templates::load_dirs(init::TEMPLATE_DIRS)?;
    let disk = init::disk(&opts, cwd);
    let plan = init::plan(&opts, &templates, &disk)?;
    let changes = scaffold::resolve(&plan, &disk)?;
    let mode = write_unless_dry_run(args.dry_run);
    if mode == Mode::Write {
        scaffold::runtime::install()?;
    }
    let outcome = output::apply(disk.root(), &changes, mode, out)?;
    if mode == Mode::Write {
        say(out, &next_steps(&opts.dir))?;
    }
    Ok(outcome)
}

/// Validates the arguments; `cwd` resolves a relative `--dir`.
fn options(args: &InitArgs, cwd: &Path) -> Result<InitOptions> {
    let dir = args.dir.clone();
    let full = crate::paths::lexical(&cwd.join(&dir));
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
    project.autoupdate = args.autoupdate;
    project.grafana = args.grafana;
    project.e2e = args.e2e;
    project.devcontainer = args.devcontainer;
    project.owner = Some(owner.clone());
    project.license = Some(match args.license {
        cli::License::Apache2 => LicenseRecord::Apache2,
        cli::License::Mit => LicenseRecord::Mit,
        cli::License::None => LicenseRecord::None,
    });
    Ok(InitOptions {
        dir,
        project,
        owner,
        license: license(args.license),
        force: args.force,
    })
}

fn license(license: cli::License) -> Option<License> {
    match license {
        cli::License::Apache2 => Some(License::Apache2),
        cli::License::Mit => Some(License::Mit),
        cli::License::None => None,
    }
}

fn next_steps(dir: &Path) -> String {
    let cd = if dir == Path::new(".") {
        String::new()
    } else {
        format!("  cd {}\n", dir.display())
    };
    format!(
        "\nnext steps:\n{cd}  \
         rsop create api --group webapp --version v1 --kind Guestbook   # add an API kind\n  \
         make run                                                      # run against your current kube context\n"
    )
}
