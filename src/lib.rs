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

pub mod cli;
pub mod commands;
mod error;
pub mod generate;
pub mod manifests;
pub mod output;
mod parallel;
mod paths;
pub mod project;
pub mod scaffold;
pub mod templates;
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
        Command::Init(args) => commands::init::run(&args, cwd, out),
        Command::Create(CreateCommand::Api(args)) => commands::create_api::run(&args, cwd, out),
        Command::Create(CreateCommand::Webhook(args)) => {
            commands::create_webhook::run(&args, cwd, out)
        }
        Command::Edit(args) => commands::edit::run(&args, cwd, out),
        Command::Manifests(args) => commands::manifests::run(&args, cwd, out),
        Command::Generate(command) => commands::generate::run(&command, cwd, out),
        Command::Completion(args) => commands::completion::run(&args, out),
        Command::Version => commands::version::run(out),
    }
}
