//! rsop: the kubebuilder experience for Rust operators on kube-rs.
//!
//! Each command is a module of [`commands`]: it turns its arguments ([`cli`])
//! into validated options and runs one of two pipelines. Scaffolding (`init`,
//! `create api`, `edit`) describes file actions as a [`scaffold::Plan`] and
//! resolves it in memory against a read-only view of the disk; derivation
//! (`manifests`, `generate`) computes files from the project's sources and
//! `config/`. Both end in [`output::apply`], the only code that writes.
//! `docs/architecture.md` says where new code goes. The binary in
//! `src/main.rs` parses arguments, calls [`run`] and maps the result to an
//! exit code.

pub mod calls;
pub mod cli;
pub mod commands;
pub mod envtest;
mod error;
pub mod generate;
pub mod manifests;
pub mod output;
mod parallel;
mod paths;
pub mod project;
pub mod rbac;
pub mod scaffold;
pub mod templates;
pub mod update;
pub mod versions;
pub mod yaml;

use std::io::Write;
use std::path::Path;

pub use error::{Error, Result};
pub use output::Outcome;

use cli::{Cli, Command, CreateCommand};

/// Runs one command. `cwd` anchors relative paths; reports go to `out`.
pub fn run(cli: Cli, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    match cli.command {
        Command::Init(args) => {
            let dir = cwd.join(&args.dir);
            // Into an empty directory, init writes exactly the scaffold.
            let fresh = std::fs::read_dir(&dir).map_or(true, |mut d| d.next().is_none());
            let outcome = commands::init::run(&args, cwd, out)?;
            if !args.dry_run {
                commands::update::after_init(&dir, args.vcs, fresh, out)?;
            }
            Ok(outcome)
        }
        Command::Create(CreateCommand::Api(args)) => recorded(cwd, args.dry_run, out, |out| {
            commands::create_api::run(&args, cwd, out)
        }),
        Command::Create(CreateCommand::Webhook(args)) => recorded(cwd, args.dry_run, out, |out| {
            commands::create_webhook::run(&args, cwd, out)
        }),
        Command::Edit(args) => {
            recorded(cwd, false, out, |out| commands::edit::run(&args, cwd, out))
        }
        Command::Update(args) => commands::update::run(&args, cwd, out),
        Command::Manifests(args) => commands::manifests::run(&args, cwd, out),
        Command::Rbac(args) => commands::rbac::run(&args, cwd, out),
        Command::Generate(command) => commands::generate::run(&command, cwd, out),
        Command::Envtest(command) => commands::envtest::run(&command, cwd, out),
        Command::Completion(args) => commands::completion::run(&args, out),
        Command::Man(args) => commands::completion::man(&args, cwd, out),
        Command::Version => commands::version::run(out),
    }
}

/// Runs a command that adds to the project, then records the scaffold it
/// leaves for `rsop update` (not after a dry run, which writes nothing).
fn recorded(
    root: &Path,
    dry_run: bool,
    out: &mut dyn Write,
    command: impl FnOnce(&mut dyn Write) -> Result<Outcome>,
) -> Result<Outcome> {
    let before = if dry_run {
        None
    } else {
        commands::update::before_command(root)?
    };
    let outcome = command(out)?;
    if let Some(before) = before {
        commands::update::record(root, Some(&before), false, out)?;
    }
    Ok(outcome)
}
