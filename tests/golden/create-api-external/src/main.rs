//! Entry point of the `manager` binary: parse the flags, set up logging, run the manager.

use std::process::ExitCode;

use clap::Parser as _;
use tracing::{error, info};

use tls_operator::manager::{self, cli::Cli, logging};

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(err) = logging::init(cli.log_format, &cli.log_level) {
        eprintln!("error: {}", logging::error_chain(&err));
        return ExitCode::FAILURE;
    }
    match manager::run(cli).await {
        Ok(()) => {
            info!("manager stopped");
            ExitCode::SUCCESS
        }
        Err(err) => {
            error!(error = logging::error_chain(&err), "manager failed");
            ExitCode::FAILURE
        }
    }
}
