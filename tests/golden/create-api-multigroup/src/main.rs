//! The `manager` binary: the operator's controllers and webhooks, run by rsop-runtime's manager,
//! which serves the health probes and the metrics, takes part in leader election and shuts down
//! gracefully (see `manager --help` for its flags).

use std::process::ExitCode;

use clap::Parser;
use rsop_runtime::{Flags, Manager};

/// The operator's name: it names its leader election Lease (`<NAME>.<DOMAIN>`), the field manager
/// of what it applies, and its shard labels.
const NAME: &str = "platform-operator";
/// The domain of the operator's API groups.
const DOMAIN: &str = "example.com";

/// The platform-operator operator's manager: runs its controllers, health probes and metrics.
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
    let manager = manager
        .controller(platform_operator::controllers::infra::cluster::run)
        .shard::<platform_operator::api::infra::v1::Cluster>();
    let manager = manager
        .controller(platform_operator::controllers::apps::guest_book::run)
        .shard::<platform_operator::api::apps::v1beta1::GuestBook>();
    // +rsop:scaffold:controllers
    manager.run(cli.manager).await
}
