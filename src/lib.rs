//! rsop: the kubebuilder experience for Rust operators on kube-rs.
//!
//! Two pipelines share one exit. Scaffolding commands (`init`) turn validated
//! options into a [`scaffold::Plan`], resolve it in memory against a read-only
//! view of the disk, and hand the resulting file changes to [`output::apply`],
//! the only code that writes. The binary in `src/main.rs` parses arguments,
//! calls [`run`] and maps the result to an exit code.

pub mod cli;
mod error;
pub mod generate;
pub mod manifests;
pub mod output;
pub mod project;
pub mod scaffold;
pub mod templates;
pub mod versions;

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

pub use error::{Error, Result};
pub use output::Outcome;

use cli::{Cli, Command};
use output::Mode;
use templates::Templates;

/// Runs one command. `cwd` anchors relative paths; reports go to `out`.
pub fn run(cli: Cli, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    match cli.command {
        Command::Init(args) => {
            let opts = scaffold::plans::init::InitOptions::from_args(&args, cwd)?;
            let templates = Templates::load_dirs(&["init/", "licenses/"])?;
            let plan = scaffold::plans::init::plan(&opts, &templates)?;
            let disk = scaffold::plans::init::disk(&opts, cwd);
            let changes = scaffold::resolve(&plan, &disk)?;
            let mode = if args.dry_run {
                Mode::DryRun
            } else {
                Mode::Write
            };
            let outcome = output::apply(disk.root(), &changes, mode, out)?;
            if mode == Mode::Write {
                print_init_next_steps(out, &opts.dir)?;
            }
            Ok(outcome)
        }
        Command::Create(cli::CreateCommand::Api(args)) => {
            let root = cwd.to_path_buf();
            let opts = scaffold::plans::create_api::CreateApiOptions::from_args(&args, &root)?;
            let templates = Templates::load_dirs(&["create-api/"])?;
            let (plan, formatting) = scaffold::plans::create_api::plan(&opts, &templates)?;
            let mut changes = scaffold::plans::create_api::resolve_with_manifests(&opts, &plan)?;
            formatting.finish(&mut changes)?;
            let mode = if args.dry_run {
                Mode::DryRun
            } else {
                Mode::Write
            };
            let outcome = output::apply(&root, &changes, mode, out)?;
            if mode == Mode::Write {
                writeln!(
                    out,
                    "\nnext steps:\n  edit {}, then run `rsop manifests`\n  make test\n  make install run   # against your current kube context",
                    changes
                        .iter()
                        .find(|c| c.path.starts_with("src/api") && !c.path.ends_with("mod.rs"))
                        .map_or_else(|| "the controller".to_string(), |c| format!("`{}`", c.path.display()))
                )
                .map_err(|e| Error::io("write to", "standard output", e))?;
            }
            Ok(outcome)
        }
        Command::Edit(args) => {
            let Some(multigroup) = args.multigroup else {
                return Err(Error::user_with_help(
                    "`rsop edit` needs a setting to change",
                    "pass `--multigroup` or `--multigroup=false`",
                ));
            };
            let mut project = project::Project::load(cwd, "edit")?;
            if project.multigroup != multigroup && project.resources.iter().any(|r| r.api) {
                return Err(Error::user_with_help(
                    "the project already has API types in the other layout",
                    "rsop does not move existing types; change the layout before the first `rsop create api`",
                ));
            }
            project.multigroup = multigroup;
            let mut plan = scaffold::Plan::new();
            plan.save_project(project);
            let changes = scaffold::resolve(&plan, &output::Disk::new(cwd))?;
            output::apply(cwd, &changes, Mode::Write, out)
        }
        Command::Manifests(args) => {
            let root = cwd.join(&args.dir);
            // PROJECT is optional: any kube-rs crate can use `rsop manifests`.
            let project = project::Project::load_optional(&root)?;
            let opts = manifests::ManifestsOptions {
                root: root.clone(),
                crd_dir: args.crd_dir.clone(),
                rbac_dir: args.rbac_dir.clone(),
                namespaced: project.is_some_and(|p| p.namespaced),
                cargo: args.cargo,
            };
            let generated = manifests::generate(&opts)?;
            let changes = manifests::changes(&generated, &root)?;
            let mode = if args.check {
                Mode::Check
            } else if args.diff {
                Mode::Diff
            } else {
                Mode::Write
            };
            output::apply(&root, &changes, mode, out)
        }
        Command::Generate(command) => generate(command, cwd, out),
        Command::Completion(args) => {
            let mut cmd = Cli::command();
            clap_complete::generate(args.shell, &mut cmd, "rsop", out);
            Ok(Outcome::Done)
        }
        Command::Version => {
            writeln!(out, "rsop {}", env!("CARGO_PKG_VERSION"))
                .and_then(|()| {
                    writeln!(
                        out,
                        "generates: kube {}, k8s-openapi {} (Kubernetes {}), schemars {}",
                        versions::KUBE,
                        versions::K8S_OPENAPI,
                        versions::KUBERNETES,
                        versions::SCHEMARS
                    )
                })
                .map_err(|e| Error::io("write to", "standard output", e))?;
            Ok(Outcome::Done)
        }
    }
}

fn generate(command: cli::GenerateCommand, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    use cli::{GenerateCommand, KustomizeCommand};
    match command {
        GenerateCommand::Installer(args) => {
            project::Project::load(cwd, "generate installer")?;
            let changes = generate::installer(cwd, args.img.as_deref())?;
            output::apply(cwd, &changes, args.mode.mode(), out)
        }
        GenerateCommand::Kustomize(KustomizeCommand::Manifests(mode)) => {
            let project = project::Project::load(cwd, "generate kustomize manifests")?;
            let changes = generate::csv::plan(cwd, &project)?;
            output::apply(cwd, &changes, mode.mode(), out)
        }
        GenerateCommand::Bundle(args) => {
            let project = project::Project::load(cwd, "generate bundle")?;
            let opts = generate::bundle::BundleOptions::new(
                cwd,
                &project,
                args.version.as_deref(),
                &args.channels,
                args.default_channel.as_deref(),
                args.package.as_deref(),
                args.img.as_deref(),
            )?;
            let changes = generate::bundle::plan(cwd, &project, &opts)?;
            output::apply(cwd, &changes, args.mode.mode(), out)
        }
        GenerateCommand::Helm(args) => {
            let project = project::Project::load(cwd, "generate helm")?;
            let opts = generate::helm::HelmOptions {
                output_dir: args.output_dir,
                force: args.force,
                image: args.img,
            };
            let planned = generate::helm::plan(cwd, &project, &opts)?;
            let outcome = output::apply(cwd, &planned.changes, args.mode.mode(), out)?;
            for note in planned.notes {
                writeln!(out, "{note}").map_err(|e| Error::io("write to", "standard output", e))?;
            }
            Ok(outcome)
        }
    }
}

fn print_init_next_steps(out: &mut dyn Write, dir: &Path) -> Result<()> {
    let cd = if dir == Path::new(".") {
        String::new()
    } else {
        format!("  cd {}\n", dir.display())
    };
    write!(
        out,
        "\nnext steps:\n{cd}  \
         rsop create api --group webapp --version v1 --kind Guestbook   # add an API kind\n  \
         make run                                                      # run against your current kube context\n"
    )
    .map_err(|e| Error::io("write to", "standard output", e))
}
