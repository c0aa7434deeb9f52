//! The manager's command-line flags.
//!
//! The flag names and defaults follow the `cmd/main.go` that kubebuilder generates, so the manifests
//! under `config/` and the habits of people who run Go operators carry over unchanged. [`Flags`] is
//! a set of clap arguments: flatten it into the binary's own parser to add flags of yours.
//!
//! ```
//! use clap::Parser;
//!
//! /// My operator.
//! #[derive(Debug, Parser)]
//! #[command(name = "manager", version, about)]
//! struct Cli {
//!     #[command(flatten)]
//!     manager: rsop_runtime::Flags,
//!     /// How many widgets each object gets.
//!     #[arg(long, default_value_t = 3)]
//!     widgets: u32,
//! }
//!
//! let cli = Cli::parse_from(["manager", "--leader-elect", "--widgets=5"]);
//! assert!(cli.manager.leader_elect);
//! assert_eq!(cli.widgets, 5);
//! ```

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use clap::builder::BoolishValueParser;
use clap::{ArgAction, Parser, value_parser};

use crate::leader::Timing;
use crate::logging::LogFormat;

/// Flags of the manager.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "manager",
    about = "The operator's manager: runs its controllers, health probes and metrics"
)]
pub struct Flags {
    /// Address the metrics endpoint binds to: ":PORT", "IP:PORT", or "0" to disable metrics.
    #[arg(long, default_value = ":8443", value_name = "ADDR")]
    pub metrics_bind_address: BindAddress,

    /// Serve metrics over HTTPS, authenticating and authorizing every request against the
    /// Kubernetes API; `--metrics-secure=false` serves plain HTTP instead.
    #[arg(
        long,
        default_value_t = true,
        action = ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_parser = BoolishValueParser::new(),
        value_name = "BOOL"
    )]
    pub metrics_secure: bool,

    /// Directory holding tls.crt and tls.key for the metrics server, reloaded when they change;
    /// without it a self-signed certificate is generated at start-up.
    #[arg(long, value_name = "DIR")]
    pub metrics_cert_path: Option<PathBuf>,

    /// Address the /healthz and /readyz probes bind to: ":PORT", "IP:PORT", or "0" to disable them.
    #[arg(long, default_value = ":8081", value_name = "ADDR")]
    pub health_probe_bind_address: BindAddress,

    /// Enable leader election, so that only one replica runs the controllers at a time.
    #[arg(
        long,
        default_value_t = false,
        action = ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_parser = BoolishValueParser::new(),
        value_name = "BOOL"
    )]
    pub leader_elect: bool,

    /// Name of the Lease object used for leader election; `<name>.<domain>` of the
    /// [`Manager`](crate::Manager) by default, unique to the operator so that several can share a
    /// namespace.
    #[arg(long, value_name = "NAME")]
    pub leader_election_id: Option<String>,

    /// Namespace of the leader election Lease; defaults to the namespace the pod runs in.
    #[arg(long, env = "POD_NAMESPACE", value_name = "NAMESPACE")]
    pub leader_election_namespace: Option<String>,

    /// How long a standby waits, after it last saw the leader renew the Lease, before taking it over.
    #[arg(long, default_value = "15s", value_parser = parse_duration, value_name = "DURATION")]
    pub leader_elect_lease_duration: Duration,

    /// How long the leader keeps trying to renew the Lease before it gives leadership up and exits;
    /// an API server outage shorter than this is ridden out.
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    pub leader_elect_renew_deadline: Duration,

    /// How often the leader renews the Lease, and a standby checks whether it is free.
    #[arg(long, default_value = "2s", value_parser = parse_duration, value_name = "DURATION")]
    pub leader_elect_retry_period: Duration,

    /// How long in-flight reconciliations get to finish after SIGTERM before they are aborted and
    /// the manager exits non-zero; keep it below the pod's terminationGracePeriodSeconds.
    #[arg(long, default_value = "30s", value_parser = parse_duration, value_name = "DURATION")]
    pub graceful_shutdown_timeout: Duration,

    /// Namespace the controllers watch; empty means all namespaces.
    #[arg(long, env = "WATCH_NAMESPACE", value_name = "NAMESPACE")]
    pub namespace: Option<String>,

    /// Log output format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text, env = "LOG_FORMAT")]
    pub log_format: LogFormat,

    /// Log level or tracing filter directives (e.g. "info,kube=debug"); RUST_LOG, when set, wins.
    #[arg(long, default_value = "info", env = "LOG_LEVEL", value_name = "FILTER")]
    pub log_level: String,

    /// Maximum number of objects each controller reconciles at the same time; one object is never
    /// reconciled twice at once.
    #[arg(long, default_value_t = 10, value_parser = value_parser!(u16).range(1..), value_name = "N")]
    pub max_concurrent_reconciles: u16,

    /// How long one reconciliation may run before it is cancelled, logged and retried with backoff,
    /// so that one that cannot finish does not hold a concurrency slot for good; 0 for no limit.
    #[arg(long, default_value = "5m", value_parser = parse_duration, value_name = "DURATION")]
    pub reconcile_timeout: Duration,

    /// Number of shards the objects are spread over, one per replica at work; more than 1 needs
    /// --leader-elect, since the leader assigns the objects. 1 is one replica doing all the work.
    #[cfg(feature = "sharding")]
    #[arg(long, default_value_t = 1, value_parser = value_parser!(u16).range(1..), value_name = "N")]
    pub shards: u16,

    /// The webhook server's: --webhook-port, --webhook-cert-path, ...
    #[cfg(feature = "webhook")]
    #[command(flatten)]
    pub webhook: WebhookFlags,
}

impl Default for Flags {
    /// The flags of a command line that sets none: kubebuilder's defaults.
    fn default() -> Self {
        Self::parse_from(["manager"])
    }
}

impl Flags {
    /// The namespace to watch, `None` meaning the whole cluster.
    ///
    /// An empty value counts as unset because Deployments commonly pass `WATCH_NAMESPACE=""` to mean
    /// "all namespaces", as operator-sdk projects do.
    pub fn watch_namespace(&self) -> Option<&str> {
        non_empty(self.namespace.as_deref())
    }

    /// The leader election namespace given by flag or `POD_NAMESPACE`, if any.
    pub fn lease_namespace(&self) -> Option<&str> {
        non_empty(self.leader_election_namespace.as_deref())
    }

    /// The leader election timing the flags give, checked for consistency.
    pub fn leader_election_timing(&self) -> anyhow::Result<Timing> {
        Timing {
            lease_duration: self.leader_elect_lease_duration,
            renew_deadline: self.leader_elect_renew_deadline,
            retry_period: self.leader_elect_retry_period,
        }
        .validate()
    }
}

/// Parses a duration the way Go's `time.ParseDuration` does for the units a flag needs:
/// `"30s"`, `"1m30s"`, `"1.5s"`, `"500ms"`, `"0"`.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let invalid = || {
        format!("invalid duration {s:?}: expected a number and a unit, e.g. \"30s\" or \"1m30s\"")
    };
    let s = s.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut rest = s;
    let mut total = Duration::ZERO;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(invalid)?;
        let (number, tail) = rest.split_at(number_len);
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let value: f64 = number.parse().map_err(|_| invalid())?;
        let unit_secs = match unit {
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(invalid()),
        };
        let part = Duration::try_from_secs_f64(value * unit_secs).map_err(|_| invalid())?;
        total = total.checked_add(part).ok_or_else(invalid)?;
        rest = tail;
    }
    Ok(total)
}

fn non_empty(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// Where a server listens, in the syntax controller-runtime accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindAddress {
    /// `"0"`: the server is not started.
    Disabled,
    /// A concrete socket address.
    Socket(SocketAddr),
}

impl BindAddress {
    /// The address to listen on, or `None` when the server is disabled.
    pub fn socket_addr(self) -> Option<SocketAddr> {
        match self {
            Self::Disabled => None,
            Self::Socket(addr) => Some(addr),
        }
    }
}

impl FromStr for BindAddress {
    type Err = InvalidBindAddress;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let invalid = || InvalidBindAddress(s.to_owned());
        let s = s.trim();
        if s == "0" {
            return Ok(Self::Disabled);
        }
        // Go's ":PORT" listens on every interface. IPv4-only is used on purpose: binding "[::]"
        // fails outright on nodes where IPv6 is disabled, which would crash the pod.
        if let Some(port) = s.strip_prefix(':') {
            let port = port.parse().map_err(|_| invalid())?;
            return Ok(Self::Socket(SocketAddr::new(
                IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                port,
            )));
        }
        if let Some(port) = s.strip_prefix("localhost:") {
            let port = port.parse().map_err(|_| invalid())?;
            return Ok(Self::Socket(SocketAddr::new(
                IpAddr::V4(Ipv4Addr::LOCALHOST),
                port,
            )));
        }
        s.parse().map(Self::Socket).map_err(|_| invalid())
    }
}

impl fmt::Display for BindAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Disabled => f.write_str("0"),
            Self::Socket(addr) => addr.fmt(f),
        }
    }
}

/// A bind address that is neither ":PORT", "IP:PORT", "localhost:PORT" nor "0".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidBindAddress(String);

impl fmt::Display for InvalidBindAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid bind address {:?}: expected \":PORT\", \"IP:PORT\", or \"0\" to disable",
            self.0
        )
    }
}

impl std::error::Error for InvalidBindAddress {}

/// Flags of the webhook server, with kubebuilder's names and defaults.
#[cfg(feature = "webhook")]
#[derive(Debug, Clone, clap::Args)]
pub struct WebhookFlags {
    /// Port the webhook server listens on; the webhook Service forwards port 443 to it.
    #[arg(long, default_value_t = 9443, value_name = "PORT")]
    pub webhook_port: u16,

    /// Directory of the webhook server's certificate and key, where the Deployment mounts the
    /// Secret cert-manager issues. The files are reloaded when they change.
    #[arg(
        long,
        default_value = "/tmp/k8s-webhook-server/serving-certs",
        value_name = "DIR"
    )]
    pub webhook_cert_path: PathBuf,

    /// File name of the webhook server's certificate in --webhook-cert-path.
    #[arg(long, default_value = crate::tls::CERT_FILE, value_name = "FILE")]
    pub webhook_cert_name: String,

    /// File name of the webhook server's private key in --webhook-cert-path.
    #[arg(long, default_value = crate::tls::KEY_FILE, value_name = "FILE")]
    pub webhook_cert_key: String,

    /// Offer HTTP/2 on the webhook server. Off by default, as in kubebuilder, because of the HTTP/2
    /// Rapid Reset and Stream Cancellation CVEs; the API server speaks HTTP/1.1 just as well.
    #[arg(long)]
    pub enable_http2: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Flags, clap::Error> {
        Flags::try_parse_from(std::iter::once("manager").chain(args.iter().copied()))
    }

    fn addr(s: &str) -> BindAddress {
        BindAddress::Socket(s.parse().unwrap())
    }

    #[test]
    fn bind_address_accepts_go_and_rust_forms() {
        assert_eq!(":8443".parse(), Ok(addr("0.0.0.0:8443")));
        assert_eq!("127.0.0.1:8080".parse(), Ok(addr("127.0.0.1:8080")));
        assert_eq!("[::1]:9000".parse(), Ok(addr("[::1]:9000")));
        assert_eq!("localhost:8081".parse(), Ok(addr("127.0.0.1:8081")));
        assert_eq!(":0".parse(), Ok(addr("0.0.0.0:0")));
        assert_eq!("0".parse(), Ok(BindAddress::Disabled));
        assert_eq!(BindAddress::Disabled.socket_addr(), None);
    }

    #[test]
    fn bind_address_rejects_garbage_with_a_readable_error() {
        for bad in [
            "",
            ":",
            ":http",
            ":70000",
            "8443",
            "example.com:80",
            "1.2.3.4",
        ] {
            let err = bad.parse::<BindAddress>().unwrap_err();
            assert!(
                err.to_string().contains("expected \":PORT\""),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn defaults_match_kubebuilder() {
        let cli = parse(&[]).unwrap();
        assert_eq!(cli.metrics_bind_address, addr("0.0.0.0:8443"));
        assert!(cli.metrics_secure);
        assert_eq!(cli.metrics_cert_path, None);
        assert_eq!(cli.health_probe_bind_address, addr("0.0.0.0:8081"));
        assert!(!cli.leader_elect);
        assert_eq!(cli.leader_election_id, None);
        assert_eq!(cli.max_concurrent_reconciles, 10);
        assert_eq!(cli.reconcile_timeout, Duration::from_secs(300));
        // These flags fall back to environment variables, which a CI runner might set.
        if std::env::var_os("LOG_FORMAT").is_none() {
            assert_eq!(cli.log_format, LogFormat::Text);
        }
        if std::env::var_os("LOG_LEVEL").is_none() {
            assert_eq!(cli.log_level, "info");
        }
    }

    #[test]
    fn booleans_take_go_style_values() {
        let cli = parse(&["--metrics-secure=false", "--leader-elect"]).unwrap();
        assert!(!cli.metrics_secure);
        assert!(cli.leader_elect);
        let cli = parse(&["--metrics-secure", "--leader-elect=true"]).unwrap();
        assert!(cli.metrics_secure);
        assert!(cli.leader_elect);
        assert!(parse(&["--leader-elect=maybe"]).is_err());
    }

    #[test]
    fn flags_are_parsed() {
        let cli = parse(&[
            "--metrics-bind-address=0",
            "--health-probe-bind-address",
            "127.0.0.1:9090",
            "--namespace",
            "team-a",
            "--leader-election-namespace=ops",
            "--log-format=json",
            "--max-concurrent-reconciles=4",
        ])
        .unwrap();
        assert_eq!(cli.metrics_bind_address, BindAddress::Disabled);
        assert_eq!(cli.health_probe_bind_address, addr("127.0.0.1:9090"));
        assert_eq!(cli.watch_namespace(), Some("team-a"));
        assert_eq!(cli.lease_namespace(), Some("ops"));
        assert_eq!(cli.log_format, LogFormat::Json);
        assert_eq!(cli.max_concurrent_reconciles, 4);
        assert!(parse(&["--max-concurrent-reconciles=0"]).is_err());
        assert!(parse(&["--metrics-bind-address=nope"]).is_err());
    }

    #[test]
    fn durations_take_go_syntax() {
        let cli = parse(&[]).unwrap();
        assert_eq!(cli.graceful_shutdown_timeout, Duration::from_secs(30));
        assert_eq!(cli.leader_election_timing().unwrap(), Timing::default());
        for (text, expected) in [
            ("0", Duration::ZERO),
            ("500ms", Duration::from_millis(500)),
            ("1.5s", Duration::from_millis(1500)),
            ("1m30s", Duration::from_secs(90)),
            ("2h", Duration::from_secs(7200)),
        ] {
            assert_eq!(parse_duration(text), Ok(expected), "{text}");
        }
        let huge = "10000000000000000000s10000000000000000000s";
        for bad in ["", "10", "s", "1x", "-1s", "1..5s", huge] {
            let err = parse_duration(bad).unwrap_err();
            assert!(err.contains("invalid duration"), "{bad}: {err}");
        }
    }

    #[test]
    fn leader_election_timing_is_checked() {
        let cli = parse(&["--leader-elect-renew-deadline=20s"]).unwrap();
        let err = cli.leader_election_timing().unwrap_err().to_string();
        assert!(err.contains("shorter than the lease duration"), "{err}");
        let cli = parse(&[
            "--leader-elect-lease-duration=30s",
            "--leader-elect-renew-deadline=20s",
            "--leader-elect-retry-period=4s",
        ])
        .unwrap();
        assert_eq!(
            cli.leader_election_timing().unwrap(),
            Timing {
                lease_duration: Duration::from_secs(30),
                renew_deadline: Duration::from_secs(20),
                retry_period: Duration::from_secs(4),
            }
        );
    }

    #[test]
    fn empty_namespace_means_all_namespaces() {
        let cli = parse(&["--namespace="]).unwrap();
        assert_eq!(cli.watch_namespace(), None);
        let cli = parse(&["--leader-election-namespace", " "]).unwrap();
        assert_eq!(cli.lease_namespace(), None);
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Flags::command().debug_assert();
    }

    #[cfg(feature = "webhook")]
    #[test]
    fn the_webhook_flags_default_to_kubebuilder_s() {
        let cli = parse(&[]).unwrap();
        assert_eq!(cli.webhook.webhook_port, 9443);
        assert_eq!(
            cli.webhook.webhook_cert_path,
            PathBuf::from("/tmp/k8s-webhook-server/serving-certs")
        );
        assert_eq!(cli.webhook.webhook_cert_name, "tls.crt");
        assert_eq!(cli.webhook.webhook_cert_key, "tls.key");
        assert!(!cli.webhook.enable_http2);
    }
}
