//! Prometheus metrics of the manager and its controllers.
//!
//! The reconcile metrics reuse controller-runtime's names and labels, so the dashboards and alerts
//! written for Go operators (and kubebuilder's Grafana plugin) work unchanged. Every metric family is
//! registered once at start-up; controllers only take handles to their own series, which keeps the
//! registry immutable and lets it be shared without a lock.
//!
//! kube-runtime has no work queue of its own to instrument, so the `workqueue_*` series it can
//! honestly give are those of the work itself: each reconciliation counts as one item processed
//! from the time it starts to the time it ends or is cancelled (`workqueue_work_duration_seconds`,
//! `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds`), and each
//! failed one as a retry (`workqueue_retries_total`), since the error policy requeues it.
//!
//! ```
//! use std::time::Duration;
//!
//! use rsop_runtime::metrics::{Metrics, ReconcileResult};
//!
//! let metrics = Metrics::new();
//! let memcached = metrics.controller("memcached");
//! memcached.observe(ReconcileResult::Success, Duration::from_millis(20));
//! let text = metrics.encode().unwrap();
//! assert!(text.contains(r#"controller_runtime_reconcile_total{controller="memcached",result="success"} 1"#));
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{self, Poll};
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeLabelSet, EncodeLabelValue, EncodeMetric, LabelValueEncoder,
};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use tokio::time::Instant;
use tower::{Layer, Service};

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

/// The labels of controller-runtime's `workqueue_*` series: the queue is named after its controller.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    controller: String,
    name: String,
}

/// The labels of client-go's `rest_client_requests_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    code: String,
    host: String,
    method: String,
}

/// client-go's buckets for `workqueue_work_duration_seconds`: 10 ns to 1,000 s, by factors of ten.
const WORK_DURATION_BUCKETS: [f64; 12] = [
    1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0,
];

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

/// Every series name the manager's `/metrics` serves once its parts have run (a controller has
/// reconciled, the client has sent a request, leader election has started): what dashboards and
/// alerts may chart. A test of this crate renders them all.
pub const SERIES: &[&str] = &[
    "controller_runtime_active_workers",
    "controller_runtime_max_concurrent_reconciles",
    "controller_runtime_reconcile_errors_total",
    "controller_runtime_reconcile_time_seconds_bucket",
    "controller_runtime_reconcile_time_seconds_count",
    "controller_runtime_reconcile_time_seconds_sum",
    "controller_runtime_reconcile_timeouts_total",
    "controller_runtime_reconcile_total",
    "leader_election_master_status",
    "process_cpu_seconds_total",
    "process_max_fds",
    "process_open_fds",
    "process_resident_memory_bytes",
    "process_start_time_seconds",
    "process_virtual_memory_bytes",
    "rest_client_requests_total",
    "workqueue_longest_running_processor_seconds",
    "workqueue_retries_total",
    "workqueue_unfinished_work_seconds",
    "workqueue_work_duration_seconds_bucket",
    "workqueue_work_duration_seconds_count",
    "workqueue_work_duration_seconds_sum",
];

/// The series of the webhook server, served beside [`SERIES`] once it has answered a review.
#[cfg(feature = "webhook")]
pub const WEBHOOK_SERIES: &[&str] = &[
    "controller_runtime_webhook_latency_seconds_bucket",
    "controller_runtime_webhook_latency_seconds_count",
    "controller_runtime_webhook_latency_seconds_sum",
    "controller_runtime_webhook_requests_in_flight",
    "controller_runtime_webhook_requests_total",
];

/// The manager's registry and the metric families shared by all controllers.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    reconcile_total: Family<ResultLabels, Counter>,
    reconcile_errors: Family<ControllerLabels, Counter>,
    reconcile_time: Family<ControllerLabels, Histogram, fn() -> Histogram>,
    reconcile_timeouts: Family<ControllerLabels, Counter>,
    leader_status: Family<LeaseLabels, Gauge>,
    active_workers: Family<ControllerLabels, Gauge>,
    max_concurrent_reconciles: Family<ControllerLabels, Gauge>,
    work_duration: Family<QueueLabels, Histogram, fn() -> Histogram>,
    unfinished_work: Family<QueueLabels, Gauge<f64, AtomicU64>>,
    longest_running: Family<QueueLabels, Gauge<f64, AtomicU64>>,
    retries: Family<QueueLabels, Counter>,
    client_requests: Family<RequestLabels, Counter>,
    /// The reconciliations in flight of each controller, which the two gauges above are computed
    /// from at each scrape.
    in_flight: Mutex<BTreeMap<String, Arc<InFlight>>>,
    /// The webhook server's requests.
    #[cfg(feature = "webhook")]
    pub webhooks: WebhookMetrics,
}

/// When each reconciliation in flight started, by a number of its own.
#[derive(Debug, Default)]
struct InFlight {
    next: AtomicU64,
    started: Mutex<HashMap<u64, Instant>>,
}

impl InFlight {
    fn started(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Instant>> {
        // Each update is one insert or remove: a panic elsewhere cannot leave the map half changed.
        self.started.lock().unwrap_or_else(PoisonError::into_inner)
    }
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
        let active_workers = Family::default();
        let max_concurrent_reconciles = Family::default();
        let work_duration: Family<_, _, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(WORK_DURATION_BUCKETS));
        let unfinished_work = Family::default();
        let longest_running = Family::default();
        let retries = Family::default();
        let client_requests = Family::default();
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
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            active_workers.clone(),
        );
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            max_concurrent_reconciles.clone(),
        );
        registry.register_with_unit(
            "workqueue_work_duration",
            "How long in seconds processing an item from workqueue takes",
            Unit::Seconds,
            work_duration.clone(),
        );
        registry.register_with_unit(
            "workqueue_unfinished_work",
            "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads",
            Unit::Seconds,
            unfinished_work.clone(),
        );
        registry.register_with_unit(
            "workqueue_longest_running_processor",
            "How many seconds has the longest running processor for workqueue been running",
            Unit::Seconds,
            longest_running.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            retries.clone(),
        );
        registry.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host",
            client_requests.clone(),
        );
        registry.register_collector(Box::new(ProcessCollector));
        #[cfg(feature = "webhook")]
        let webhooks = WebhookMetrics::register(&mut registry);
        Self {
            registry,
            reconcile_total,
            reconcile_errors,
            reconcile_time,
            reconcile_timeouts,
            leader_status,
            active_workers,
            max_concurrent_reconciles,
            work_duration,
            unfinished_work,
            longest_running,
            retries,
            client_requests,
            in_flight: Mutex::default(),
            #[cfg(feature = "webhook")]
            webhooks,
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
        let queue = QueueLabels {
            controller: name.to_owned(),
            name: name.to_owned(),
        };
        // Created at zero too, before the first scrape measures them.
        self.unfinished_work.get_or_create(&queue).set(0.0);
        self.longest_running.get_or_create(&queue).set(0.0);
        let in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_owned())
            .or_default()
            .clone();
        ControllerMetrics {
            success: result(ReconcileResult::Success),
            error: result(ReconcileResult::Error),
            requeue: result(ReconcileResult::Requeue),
            requeue_after: result(ReconcileResult::RequeueAfter),
            errors: self.reconcile_errors.get_or_create(&controller).clone(),
            time: self.reconcile_time.get_or_create(&controller).clone(),
            timeouts: self.reconcile_timeouts.get_or_create(&controller).clone(),
            active_workers: self.active_workers.get_or_create(&controller).clone(),
            work_duration: self.work_duration.get_or_create(&queue).clone(),
            retries: self.retries.get_or_create(&queue).clone(),
            in_flight,
        }
    }

    /// Records the `--max-concurrent-reconciles` of the controller called `name`.
    pub fn set_max_concurrent_reconciles(&self, name: &str, limit: u16) {
        self.max_concurrent_reconciles
            .get_or_create(&ControllerLabels {
                controller: name.to_owned(),
            })
            .set(i64::from(limit));
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
        self.measure_work_in_flight();
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

impl Metrics {
    /// A layer for the Kubernetes client that counts its requests to `host` in
    /// `rest_client_requests_total`, by method and status code (`<error>` when no response came),
    /// as client-go does.
    pub fn count_client_requests(&self, host: &str) -> CountRequests {
        CountRequests {
            requests: self.client_requests.clone(),
            host: host.to_owned(),
        }
    }

    /// Sets `workqueue_unfinished_work_seconds` and `workqueue_longest_running_processor_seconds`
    /// of every controller from its reconciliations in flight, as of now.
    fn measure_work_in_flight(&self) {
        let now = Instant::now();
        let controllers = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (name, in_flight) in controllers.iter() {
            let running: Vec<f64> = in_flight
                .started()
                .values()
                .map(|started| (now - *started).as_secs_f64())
                .collect();
            let queue = QueueLabels {
                controller: name.clone(),
                name: name.clone(),
            };
            self.unfinished_work
                .get_or_create(&queue)
                .set(running.iter().fold(0.0, |sum, seconds| sum + seconds));
            self.longest_running
                .get_or_create(&queue)
                .set(running.iter().copied().fold(0.0, f64::max));
        }
    }
}

/// The figures of this process that Prometheus's own clients export (`process_*`), read from `/proc`
/// at each scrape. Other systems have no `/proc`: there the series are left out.
#[derive(Debug)]
struct ProcessCollector;

#[cfg(target_os = "linux")]
impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        use procfs::process::{LimitValue, Process};

        // A figure /proc does not give (a hardened kernel may hide some) is left out.
        let Ok(process) = Process::myself() else {
            return Ok(());
        };
        let mut gauges = Vec::new();
        if let Ok(stat) = process.stat() {
            let ticks = procfs::ticks_per_second() as f64;
            let cpu = ConstCounter::new((stat.utime + stat.stime) as f64 / ticks);
            let help = "Total user and system CPU time spent in seconds";
            encode(
                &mut encoder,
                "process_cpu",
                help,
                Some(&Unit::Seconds),
                &cpu,
            )?;
            gauges.push((
                "process_resident_memory",
                "Resident memory size in bytes",
                Some(Unit::Bytes),
                (stat.rss * procfs::page_size()) as f64,
            ));
            gauges.push((
                "process_virtual_memory",
                "Virtual memory size in bytes",
                Some(Unit::Bytes),
                stat.vsize as f64,
            ));
            if let Ok(boot) = procfs::boot_time_secs() {
                gauges.push((
                    "process_start_time",
                    "Start time of the process since unix epoch in seconds",
                    Some(Unit::Seconds),
                    boot as f64 + stat.starttime as f64 / ticks,
                ));
            }
        }
        if let Ok(open) = process.fd_count() {
            let help = "Number of open file descriptors";
            gauges.push(("process_open_fds", help, None, open as f64));
        }
        if let Ok(limits) = process.limits()
            && let LimitValue::Value(max) = limits.max_open_files.soft_limit
        {
            let help = "Maximum number of open file descriptors";
            gauges.push(("process_max_fds", help, None, max as f64));
        }
        for (name, help, unit, value) in gauges {
            encode(
                &mut encoder,
                name,
                help,
                unit.as_ref(),
                &ConstGauge::new(value),
            )?;
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
impl Collector for ProcessCollector {
    fn encode(&self, _encoder: DescriptorEncoder) -> fmt::Result {
        Ok(())
    }
}

/// Encodes one metric of a collector.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn encode(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<&Unit>,
    metric: &impl EncodeMetric,
) -> fmt::Result {
    metric.encode(encoder.encode_descriptor(name, help, unit, metric.metric_type())?)
}

/// See [`Metrics::count_client_requests`].
#[derive(Clone, Debug)]
pub struct CountRequests {
    requests: Family<RequestLabels, Counter>,
    host: String,
}

impl<S> Layer<S> for CountRequests {
    type Service = CountedRequests<S>;

    fn layer(&self, inner: S) -> Self::Service {
        CountedRequests {
            inner,
            count: self.clone(),
        }
    }
}

/// A client service whose requests are counted; see [`Metrics::count_client_requests`].
#[derive(Clone, Debug)]
pub struct CountedRequests<S> {
    inner: S,
    count: CountRequests,
}

impl<S, B, R> Service<http::Request<B>> for CountedRequests<S>
where
    S: Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut task::Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let method = request.method().as_str().to_owned();
        let count = self.count.clone();
        let response = self.inner.call(request);
        Box::pin(async move {
            let result = response.await;
            let code = match &result {
                Ok(response) => response.status().as_str().to_owned(),
                Err(_) => "<error>".to_owned(),
            };
            let labels = RequestLabels {
                code,
                host: count.host,
                method,
            };
            count.requests.get_or_create(&labels).inc();
            result
        })
    }
}

/// One controller's reconcile metrics; cheap to clone, and lock-free to update but for the start
/// and end of each reconciliation.
#[derive(Clone, Debug)]
pub struct ControllerMetrics {
    success: Counter,
    error: Counter,
    requeue: Counter,
    requeue_after: Counter,
    errors: Counter,
    time: Histogram,
    timeouts: Counter,
    active_workers: Gauge,
    work_duration: Histogram,
    retries: Counter,
    in_flight: Arc<InFlight>,
}

/// One reconciliation in flight, from [`ControllerMetrics::start_work`] until it is dropped: when
/// the reconciliation ends, or is cancelled.
#[must_use = "the work ends when this is dropped"]
#[derive(Debug)]
pub struct Work {
    id: u64,
    started: Instant,
    metrics: ControllerMetrics,
}

impl Drop for Work {
    fn drop(&mut self) {
        self.metrics.in_flight.started().remove(&self.id);
        self.metrics.active_workers.dec();
        self.metrics
            .work_duration
            .observe(self.started.elapsed().as_secs_f64());
    }
}

impl ControllerMetrics {
    /// Counts a reconciliation as a worker in use until the returned [`Work`] is dropped.
    pub fn start_work(&self) -> Work {
        let id = self.in_flight.next.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        self.in_flight.started().insert(id, started);
        self.active_workers.inc();
        Work {
            id,
            started,
            metrics: self.clone(),
        }
    }

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
            // The error policy requeues every failed reconciliation with backoff: a retry.
            self.errors.inc();
            self.retries.inc();
        }
        self.time.observe(elapsed.as_secs_f64());
    }
}

/// controller-runtime's buckets for `controller_runtime_webhook_latency_seconds`.
#[cfg(feature = "webhook")]
const WEBHOOK_LATENCY_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[cfg(feature = "webhook")]
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookLabels {
    webhook: String,
}

#[cfg(feature = "webhook")]
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookRequestLabels {
    webhook: String,
    code: String,
}

/// The webhook server's metrics, with controller-runtime's names and labels.
#[cfg(feature = "webhook")]
#[derive(Clone, Debug)]
pub struct WebhookMetrics {
    requests: Family<WebhookRequestLabels, Counter>,
    latency: Family<WebhookLabels, Histogram, fn() -> Histogram>,
    in_flight: Family<WebhookLabels, Gauge>,
}

#[cfg(feature = "webhook")]
impl WebhookMetrics {
    /// Registers the families in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = Self {
            requests: Family::default(),
            latency: Family::new_with_constructor(|| Histogram::new(WEBHOOK_LATENCY_BUCKETS)),
            in_flight: Family::default(),
        };
        registry.register(
            "controller_runtime_webhook_requests",
            "Total number of admission requests by HTTP status code",
            metrics.requests.clone(),
        );
        registry.register_with_unit(
            "controller_runtime_webhook_latency",
            "Histogram of the latency of processing admission requests",
            Unit::Seconds,
            metrics.latency.clone(),
        );
        registry.register(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served",
            metrics.in_flight.clone(),
        );
        metrics
    }

    /// Runs `serve`, the answer to one review of the webhook at `path`, counted in flight while it
    /// runs and timed.
    pub(crate) fn time<R>(&self, path: &str, serve: impl FnOnce() -> R) -> R {
        let labels = WebhookLabels {
            webhook: path.to_owned(),
        };
        let in_flight = self.in_flight.get_or_create(&labels).clone();
        in_flight.inc();
        let started = std::time::Instant::now();
        let answer = serve();
        let elapsed = started.elapsed().as_secs_f64();
        in_flight.dec();
        self.latency.get_or_create(&labels).observe(elapsed);
        answer
    }

    /// Counts a review of the webhook at `path` answered with the HTTP status `code`.
    pub(crate) fn count(&self, path: &str, code: u16) {
        self.requests
            .get_or_create(&WebhookRequestLabels {
                webhook: path.to_owned(),
                code: code.to_string(),
            })
            .inc();
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
        let text = Metrics::new().encode().unwrap();
        // Only the figures of the process are there before any controller starts.
        let process = text
            .lines()
            .filter(|line| *line != "# EOF")
            .all(|line| line.starts_with("process_") || line.contains(" process_"));
        assert!(process, "{text}");
        assert!(text.ends_with("# EOF\n"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_process_figures_are_read_from_proc() {
        let text = Metrics::new().encode().unwrap();
        for name in [
            "process_cpu_seconds_total",
            "process_resident_memory_bytes",
            "process_virtual_memory_bytes",
            "process_start_time_seconds",
            "process_open_fds",
            "process_max_fds",
        ] {
            let value: f64 = line(&text, &format!("{name} "))
                .rsplit(' ')
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} has no value in:\n{text}"));
            assert!(
                value > 0.0 || name == "process_cpu_seconds_total",
                "{name} {value}"
            );
        }
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

    #[tokio::test(start_paused = true)]
    async fn work_in_flight_is_measured_at_each_scrape() {
        let metrics = Metrics::new();
        metrics.set_max_concurrent_reconciles("memcached", 10);
        let memcached = metrics.controller("memcached");
        let queue = "{controller=\"memcached\",name=\"memcached\"}";
        let first = memcached.start_work();
        tokio::time::advance(Duration::from_secs(3)).await;
        let second = memcached.start_work();
        tokio::time::advance(Duration::from_secs(1)).await;
        let text = metrics.encode().unwrap();
        for series in [
            "controller_runtime_active_workers{controller=\"memcached\"} 2".to_owned(),
            "controller_runtime_max_concurrent_reconciles{controller=\"memcached\"} 10".to_owned(),
            format!("workqueue_unfinished_work_seconds{queue} 5.0"),
            format!("workqueue_longest_running_processor_seconds{queue} 4.0"),
        ] {
            assert!(text.contains(&series), "{series} missing in:\n{text}");
        }
        // A reconciliation that ends, or is cancelled, is no longer in flight.
        drop(first);
        drop(second);
        memcached.observe(ReconcileResult::Error, Duration::from_secs(4));
        let text = metrics.encode().unwrap();
        for series in [
            "controller_runtime_active_workers{controller=\"memcached\"} 0".to_owned(),
            format!("workqueue_unfinished_work_seconds{queue} 0.0"),
            format!("workqueue_longest_running_processor_seconds{queue} 0.0"),
            format!("workqueue_work_duration_seconds_count{queue} 2"),
            format!("workqueue_retries_total{queue} 1"),
        ] {
            assert!(text.contains(&series), "{series} missing in:\n{text}");
        }
    }

    #[tokio::test]
    async fn client_requests_are_counted_by_method_and_code() {
        use tower::ServiceExt;

        let metrics = Metrics::new();
        let layer = metrics.count_client_requests("10.96.0.1:443");
        let not_found = tower::service_fn(|_: http::Request<()>| async {
            Ok::<_, std::convert::Infallible>(
                http::Response::builder().status(404).body(()).unwrap(),
            )
        });
        let request = || http::Request::get("/api/v1/pods").body(()).unwrap();
        let counted = layer.layer(not_found);
        counted.clone().oneshot(request()).await.unwrap();
        counted.oneshot(request()).await.unwrap();
        let unreachable = tower::service_fn(|_: http::Request<()>| async {
            Err::<http::Response<()>, _>(std::io::Error::other("connection refused"))
        });
        let patch = http::Request::patch("/api/v1/pods/a").body(()).unwrap();
        assert!(layer.layer(unreachable).oneshot(patch).await.is_err());
        let text = metrics.encode().unwrap();
        for series in [
            r#"rest_client_requests_total{code="404",host="10.96.0.1:443",method="GET"} 2"#,
            r#"rest_client_requests_total{code="<error>",host="10.96.0.1:443",method="PATCH"} 1"#,
        ] {
            assert!(text.contains(series), "{series} missing in:\n{text}");
        }
    }

    /// The names of the samples `text` (from [`Metrics::encode`]) holds.
    fn sample_names(text: &str) -> std::collections::BTreeSet<&str> {
        text.lines()
            .filter(|line| !line.starts_with('#'))
            .filter_map(|line| line.split(['{', ' ']).next())
            .collect()
    }

    /// [`SERIES`] is what the manager renders once its parts have run, no more and no less.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_series_served_are_those_listed() {
        use tower::ServiceExt;

        let metrics = Metrics::new();
        metrics.set_max_concurrent_reconciles("memcached", 10);
        let memcached = metrics.controller("memcached");
        drop(memcached.start_work());
        memcached.observe(ReconcileResult::Error, Duration::from_millis(10));
        metrics.set_leader("lease", true);
        let ok = tower::service_fn(|_: http::Request<()>| async {
            Ok::<_, std::convert::Infallible>(http::Response::new(()))
        });
        let request = http::Request::get("/api/v1/pods").body(()).unwrap();
        let counted = metrics.count_client_requests("10.96.0.1:443").layer(ok);
        counted.oneshot(request).await.unwrap();
        let text = metrics.encode().unwrap();
        let rendered = sample_names(&text);
        let listed: std::collections::BTreeSet<&str> = SERIES.iter().copied().collect();
        assert_eq!(rendered, listed, "{text}");
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
