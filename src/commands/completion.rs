//! `rsop completion`: a shell completion script on standard output.

use std::io::Write;

use clap::CommandFactory;

use crate::Result;
use crate::cli::{Cli, CompletionArgs};
use crate::output::Outcome;

pub fn run(args: &CompletionArgs, out: &mut dyn Write) -> Result<Outcome> {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "rsop", out);
    Ok(Outcome::Done)
}
