//! Prometheus metrics of the manager and its controllers.
//!
//! The reconcile metrics reuse controller-runtime's names and labels, so the dashboards and alerts
//! written for Go operators (and kubebuilder's Grafana plugin) work unchanged. Every metric family is
//! registered once at start-up; controllers only take handles to their own series, which keeps the
//! registry immutable and lets it be shared without a lock.

use std::fmt;
use std::time::Duration;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// Content type of [`Metrics::encode`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// controller-runtime's buckets for `controller_runtime_reconcile_time_seconds`.
const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    controller: String,
    result: ReconcileResult,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LeaseLabels {
    name: String,
}

/// How a reconciliation ended, as the `result` label of `controller_runtime_reconcile_total`.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum ReconcileResult {
    /// Reconciled; nothing more to do until the next event.
    Success,
    /// The reconciler returned an error.
    Error,
    /// Reconciled and asked to run again as soon as possible.
    Requeue,
    /// Reconciled and asked to run again after a delay.
    RequeueAfter,
}

impl ReconcileResult {
    /// The label value controller-runtime uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Error => "error",
            Self::Requeue => "requeue",
            Self::RequeueAfter => "requeue_after",
        }
    }
}

impl EncodeLabelValue for ReconcileResult {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> fmt::Result {
        fmt::Write::write_str(encoder, self.as_str())
    }
}

/// The manager's registry and the metric families shared by all controllers.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    reconcile_total: Family<ResultLabels, Counter>,
    reconcile_errors: Family<ControllerLabels, Counter>,
    reconcile_time: Family<ControllerLabels, Histogram, fn() -> Histogram>,
    reconcile_timeouts: Family<ControllerLabels, Counter>,
    leader_status: Family<LeaseLabels, Gauge>,
    /// The webhook server's requests.
    pub webhooks: super::webhook::WebhookMetrics,
    // +rsop:scaffold:metric-fields
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Creates the registry with every family registered and no series yet.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let reconcile_total = Family::default();
        let reconcile_errors = Family::default();
        let reconcile_time: Family<_, _, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(RECONCILE_TIME_BUCKETS));
        let reconcile_timeouts = Family::default();
        let leader_status = Family::default();
        // Counters get their `_total` suffix from the encoder, hence the names without it.
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            reconcile_total.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            reconcile_errors.clone(),
        );
        registry.register_with_unit(
            "controller_runtime_reconcile_time",
            "Length of time per reconciliation per controller",
            Unit::Seconds,
            reconcile_time.clone(),
        );
        // Not one of controller-runtime's: the reconciliations `--reconcile-timeout` cancelled.
        registry.register(
            "controller_runtime_reconcile_timeouts",
            "Total number of reconciliations per controller cancelled by --reconcile-timeout",
            reconcile_timeouts.clone(),
        );
        registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
            leader_status.clone(),
        );
        let webhooks = super::webhook::WebhookMetrics::register(&mut registry);
        // +rsop:scaffold:metric-families
        Self {
            registry,
            reconcile_total,
            reconcile_errors,
            reconcile_time,
            reconcile_timeouts,
            leader_status,
            webhooks,
            // +rsop:scaffold:metric-values
        }
    }

    /// Returns the handles a controller records its reconciliations with.
    ///
    /// Its series are created at zero right away, as controller-runtime does, so that `rate()` and
    /// alerts see a controller that has not reconciled anything yet.
    pub fn controller(&self, name: &str) -> ControllerMetrics {
        let controller = ControllerLabels {
            controller: name.to_owned(),
        };
        let result = |result| {
            self.reconcile_total
                .get_or_create(&ResultLabels {
                    controller: name.to_owned(),
                    result,
                })
                .clone()
        };
        ControllerMetrics {
            success: result(ReconcileResult::Success),
            error: result(ReconcileResult::Error),
            requeue: result(ReconcileResult::Requeue),
            requeue_after: result(ReconcileResult::RequeueAfter),
            errors: self.reconcile_errors.get_or_create(&controller).clone(),
            time: self.reconcile_time.get_or_create(&controller).clone(),
            timeouts: self.reconcile_timeouts.get_or_create(&controller).clone(),
        }
    }

    /// Records whether this replica holds the leader election Lease `name`.
    pub fn set_leader(&self, name: &str, leader: bool) {
        self.leader_status
            .get_or_create(&LeaseLabels {
                name: name.to_owned(),
            })
            .set(i64::from(leader));
    }

    /// Renders every metric in the OpenMetrics text format.
    pub fn encode(&self) -> Result<String, fmt::Error> {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

/// One controller's reconcile metrics; cheap to clone, and lock-free to update.
#[derive(Clone, Debug)]
pub struct ControllerMetrics {
    success: Counter,
    error: Counter,
    requeue: Counter,
    requeue_after: Counter,
    errors: Counter,
    time: Histogram,
    timeouts: Counter,
}

impl ControllerMetrics {
    /// Records one reconciliation that `--reconcile-timeout` cancelled after `elapsed`: an error.
    pub fn timed_out(&self, elapsed: Duration) {
        self.timeouts.inc();
        self.observe(ReconcileResult::Error, elapsed);
    }

    /// Records one reconciliation that ended with `result` after `elapsed`.
    pub fn observe(&self, result: ReconcileResult, elapsed: Duration) {
        let total = match result {
            ReconcileResult::Success => &self.success,
            ReconcileResult::Error => &self.error,
            ReconcileResult::Requeue => &self.requeue,
            ReconcileResult::RequeueAfter => &self.requeue_after,
        };
        total.inc();
        if result == ReconcileResult::Error {
            self.errors.inc();
        }
        self.time.observe(elapsed.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line starting with {prefix:?} in:\n{text}"))
    }

    #[test]
    fn families_without_series_are_not_exposed() {
        assert_eq!(Metrics::new().encode().unwrap(), "# EOF\n");
    }

    #[test]
    fn controller_series_start_at_zero() {
        let metrics = Metrics::new();
        metrics.controller("memcached");
        let text = metrics.encode().unwrap();
        assert!(text.contains("# TYPE controller_runtime_reconcile counter"));
        assert!(text.contains("# TYPE controller_runtime_reconcile_time_seconds histogram"));
        assert!(text.contains("# UNIT controller_runtime_reconcile_time_seconds seconds"));
        assert!(text.ends_with("# EOF\n"));
        for result in [
            ReconcileResult::Success,
            ReconcileResult::Error,
            ReconcileResult::Requeue,
            ReconcileResult::RequeueAfter,
        ] {
            let series = format!(
                "controller_runtime_reconcile_total{{controller=\"memcached\",result=\"{}\"}} 0",
                result.as_str()
            );
            assert!(text.contains(&series), "{series} missing in:\n{text}");
        }
        assert!(
            text.contains("controller_runtime_reconcile_errors_total{controller=\"memcached\"} 0")
        );
    }

    #[test]
    fn a_timeout_counts_as_an_error_and_as_a_timeout() {
        let metrics = Metrics::new();
        metrics
            .controller("memcached")
            .timed_out(Duration::from_secs(300));
        let text = metrics.encode().unwrap();
        for series in [
            "controller_runtime_reconcile_timeouts_total{controller=\"memcached\"} 1",
            "controller_runtime_reconcile_errors_total{controller=\"memcached\"} 1",
            "controller_runtime_reconcile_total{controller=\"memcached\",result=\"error\"} 1",
        ] {
            assert!(text.contains(series), "{series} missing in:\n{text}");
        }
    }

    #[test]
    fn observations_are_encoded_with_controller_runtime_names() {
        let metrics = Metrics::new();
        let memcached = metrics.controller("memcached");
        memcached.observe(ReconcileResult::Success, Duration::from_millis(20));
        memcached.observe(ReconcileResult::Error, Duration::from_millis(300));
        // A second handle for the same controller feeds the same series.
        metrics
            .controller("memcached")
            .observe(ReconcileResult::RequeueAfter, Duration::from_secs(2));
        metrics
            .controller("redis")
            .observe(ReconcileResult::Requeue, Duration::from_secs(120));

        let text = metrics.encode().unwrap();
        let total = "controller_runtime_reconcile_total{controller=\"memcached\",";
        assert!(line(&text, &format!("{total}result=\"success\"}}")).ends_with(" 1"));
        assert!(line(&text, &format!("{total}result=\"error\"}}")).ends_with(" 1"));
        assert!(line(&text, &format!("{total}result=\"requeue_after\"}}")).ends_with(" 1"));
        assert!(line(&text, &format!("{total}result=\"requeue\"}}")).ends_with(" 0"));
        assert!(
            line(
                &text,
                "controller_runtime_reconcile_errors_total{controller=\"memcached\"}"
            )
            .ends_with(" 1")
        );
        assert!(
            line(
                &text,
                "controller_runtime_reconcile_time_seconds_count{controller=\"memcached\"}"
            )
            .ends_with(" 3")
        );
        assert!(
            line(
                &text,
                "controller_runtime_reconcile_time_seconds_bucket{le=\"0.025\",controller=\"memcached\"}"
            )
            .ends_with(" 1")
        );
        // Two minutes is past the last bucket, so only +Inf counts it.
        assert!(
            line(
                &text,
                "controller_runtime_reconcile_time_seconds_bucket{le=\"60.0\",controller=\"redis\"}"
            )
            .ends_with(" 0")
        );
        assert!(
            line(
                &text,
                "controller_runtime_reconcile_time_seconds_bucket{le=\"+Inf\",controller=\"redis\"}"
            )
            .ends_with(" 1")
        );
    }

    #[test]
    fn leader_status_is_a_gauge_per_lease() {
        let metrics = Metrics::new();
        metrics.set_leader("lease-name", true);
        let text = metrics.encode().unwrap();
        assert!(line(&text, "leader_election_master_status{name=\"lease-name\"}").ends_with(" 1"));
        metrics.set_leader("lease-name", false);
        let text = metrics.encode().unwrap();
        assert!(line(&text, "leader_election_master_status{name=\"lease-name\"}").ends_with(" 0"));
    }
}
