//! Process-wide logging through `tracing`.
//!
//! Logs go to stderr, as with controller-runtime's zap logger, either human-readable or as one JSON
//! object per line for log collectors. `RUST_LOG` overrides `--log-level` so that a developer can turn
//! on debug output for a single crate without editing the Deployment's arguments.
//!
//! ```
//! use rsop_runtime::logging::error_chain;
//!
//! let err = anyhow::anyhow!("connection refused").context("cannot list ConfigMaps");
//! assert_eq!(error_chain(&err), "cannot list ConfigMaps: connection refused");
//! ```

use std::io::IsTerminal;

use anyhow::{Context as _, anyhow, bail};
use clap::ValueEnum;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;

/// Output format of the logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines, coloured when stderr is a terminal.
    Text,
    /// One JSON object per line.
    Json,
}

/// Installs the global subscriber; fails on an invalid filter rather than silently logging nothing.
pub fn init(format: LogFormat, level: &str) -> anyhow::Result<()> {
    let rust_log = std::env::var("RUST_LOG").ok();
    let directives = filter_directives(rust_log.as_deref(), level);
    if rust_log.as_deref() != Some(directives) {
        check_levels(directives)?;
    }
    let filter = EnvFilter::try_new(directives)
        .with_context(|| format!("invalid log filter {directives:?}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    }
    .map_err(|err| anyhow!(err).context("failed to install the logger"))
}

/// Renders an error and its causes on one line, like `{:#}`, but leaves out a cause whose message
/// its parent already quotes, as many Kubernetes client errors do; the chain stays readable in logs.
pub fn error_chain(err: &anyhow::Error) -> String {
    let mut out = String::new();
    let mut previous = String::new();
    for cause in err.chain() {
        let message = cause.to_string();
        if previous.contains(&message) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&message);
        previous = message;
    }
    out
}

/// Picks the filter: a non-empty `RUST_LOG` wins over the `--log-level` flag.
fn filter_directives<'a>(rust_log: Option<&'a str>, level: &'a str) -> &'a str {
    rust_log.filter(|v| !v.trim().is_empty()).unwrap_or(level)
}

/// Rejects bare words that are not levels in `--log-level`: `EnvFilter` would read a typo such as
/// "inf" as a target name and silently log nothing. `target=level` directives stay allowed.
fn check_levels(directives: &str) -> anyhow::Result<()> {
    for directive in directives.split(',').map(str::trim) {
        if !directive.contains('=') && directive.parse::<LevelFilter>().is_err() {
            bail!(
                "invalid log level {directive:?}: expected one of off, error, warn, info, debug, trace, or target=level directives"
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_log_wins_over_the_flag_unless_empty() {
        assert_eq!(filter_directives(Some("kube=debug"), "info"), "kube=debug");
        assert_eq!(filter_directives(Some("  "), "warn"), "warn");
        assert_eq!(filter_directives(None, "debug"), "debug");
    }

    #[test]
    fn error_chain_skips_causes_already_quoted() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let err = anyhow::Error::new(io)
            .context("failed to read kubeconfig: no such file")
            .context("failed to create the client");
        assert_eq!(
            error_chain(&err),
            "failed to create the client: failed to read kubeconfig: no such file"
        );
        let err = anyhow!("port in use").context("failed to bind");
        assert_eq!(error_chain(&err), "failed to bind: port in use");
    }

    #[test]
    fn log_level_flag_accepts_levels_and_directives() {
        for ok in [
            "info",
            "DEBUG",
            "warn,manager=trace",
            "kube_runtime=debug",
            "off",
        ] {
            check_levels(ok).unwrap();
            assert!(EnvFilter::try_new(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn log_level_typos_are_rejected() {
        for bad in ["inf", "verbose", "info,kube"] {
            let err = check_levels(bad).unwrap_err().to_string();
            assert!(err.contains("invalid log level"), "{bad}: {err}");
        }
        assert!(EnvFilter::try_new("kube=chatty").is_err());
    }
}
