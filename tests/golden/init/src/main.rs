//! The `manager` binary: the operator's controllers and webhooks, run by rsop-runtime's manager,
//! which serves the health probes and the metrics, takes part in leader election and shuts down
//! gracefully (see `manager --help` for its flags).

use std::process::ExitCode;

use clap::Parser;
use rsop_runtime::{Flags, Manager};

/// The operator's name: it names its leader election Lease (`<NAME>.<DOMAIN>`), the field manager
/// of what it applies, and its shard labels.
const NAME: &str = "demo-operator";
/// The domain of the operator's API groups.
const DOMAIN: &str = "example.com";

/// The demo-operator operator's manager: runs its controllers, health probes and metrics.
#[derive(Debug, Parser)]
#[command(name = "manager", version, about)]
struct Cli {
    /// The manager's flags, named as kubebuilder's `cmd/main.go` names them. Add flags of the
    /// operator's own beside them.
    #[command(flatten)]
    manager: Flags,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let manager = Manager::new(NAME, DOMAIN);
    // +rsop:scaffold:controllers
    manager.run(cli.manager).await
}
