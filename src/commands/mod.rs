//! One module per command, in the shape cargo gives its `commands/` over
//! `ops/`: each turns its clap `*Args` into the core's validated options,
//! runs the pipeline that makes the file changes, hands them to
//! [`output::apply`] and prints its own next steps. Below this layer no code
//! sees a clap type.
//!
//! [`output::apply`]: crate::output::apply

pub mod completion;
pub mod create_api;
pub mod create_webhook;
pub mod edit;
pub mod envtest;
pub mod generate;
pub mod init;
pub mod manifests;
pub mod rbac;
pub mod update;
pub mod version;

use std::io::Write;

use crate::output::Mode;
use crate::{Error, Result};

/// `--dry-run` lists what a scaffolding command would write; without it,
/// the command writes.
fn write_unless_dry_run(dry_run: bool) -> Mode {
    if dry_run { Mode::DryRun } else { Mode::Write }
}

/// Prints a command's own text (next steps, notes) after the file report.
fn say(out: &mut dyn Write, text: &str) -> Result<()> {
    out.write_all(text.as_bytes())
        .map_err(|e| Error::io("write to", "standard output", e))
}
