//! The controllers, one module per kind, each started by the manager with its `run` function, and
//! what they share.

pub mod certificate;
pub mod frontend;
// +rsop:scaffold:controller-modules

use std::fmt::{Debug, Display};
use std::future::Future;
use std::time::{Duration, Instant};

use kube::Resource;
use kube::runtime::controller::{self, Action};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use tracing::{debug, warn};

use crate::manager::logging::error_chain;
use crate::manager::metrics::{ControllerMetrics, ReconcileResult};

/// A reconciliation cancelled because it ran longer than `--reconcile-timeout`.
#[derive(Debug, thiserror::Error)]
#[error("the reconciliation did not finish within {0:?} (--reconcile-timeout) and was cancelled")]
pub struct TimedOut(pub Duration);

/// The time limit of a controller's reconciliations (`--reconcile-timeout`).
///
/// kube-runtime runs at most `--max-concurrent-reconciles` reconciliations at a time and has no
/// limit of its own on how long one takes: a reconciliation that never finishes (a wait that is
/// never woken, a call to a service that never answers) would hold its slot for good, and stall
/// the shutdown's drain. Past the limit it is cancelled at its current `.await`, a warning names the
/// object, `controller_runtime_reconcile_timeouts_total` counts it, and the controller's error
/// policy retries it with backoff. A reconciliation must therefore be safe to cut short at any
/// `.await`, which one that converges with server-side apply is.
///
/// Every reconciliation it runs also counts as a worker in use until it ends or is cancelled, for
/// `controller_runtime_active_workers` and the `workqueue_*` series of the work.
#[derive(Clone, Debug)]
pub struct Deadline {
    timeout: Option<Duration>,
    metrics: ControllerMetrics,
}

impl Deadline {
    /// The limit `timeout` (`None` for none), recorded in the controller's `metrics`.
    pub fn new(timeout: Option<Duration>, metrics: ControllerMetrics) -> Self {
        Self { timeout, metrics }
    }

    /// Runs `reconciliation` of `object` within the limit.
    pub fn bound<E, O, R>(
        &self,
        object: O,
        reconciliation: R,
    ) -> impl Future<Output = Result<Action, E>> + Send + use<E, O, R>
    where
        E: From<TimedOut>,
        O: Display + Send + 'static,
        R: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let Self { timeout, metrics } = self.clone();
        async move {
            // A worker is in use until the reconciliation ends, or is cancelled here or by the
            // manager's shutdown.
            let _work = metrics.start_work();
            let Some(timeout) = timeout else {
                return reconciliation.await;
            };
            let started = Instant::now();
            match tokio::time::timeout(timeout, reconciliation).await {
                Ok(result) => result,
                Err(_) => {
                    warn!(%object, ?timeout, "reconciliation cancelled: it ran longer than --reconcile-timeout");
                    metrics.timed_out(started.elapsed());
                    Err(TimedOut(timeout).into())
                }
            }
        }
    }
}

/// What a failed API request tells a user reading a condition: the API server's own message when it
/// answered, the client's description otherwise. Logs get the whole error through its source.
pub fn api_error_message(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) if !status.message.is_empty() => status.message.clone(),
        other => other.to_string(),
    }
}

/// The metrics label of a successful reconciliation that returned `action`.
pub fn reconcile_result(action: &Action) -> ReconcileResult {
    if *action == Action::await_change() {
        ReconcileResult::Success
    } else if *action == Action::requeue(Duration::ZERO) {
        ReconcileResult::Requeue
    } else {
        ReconcileResult::RequeueAfter
    }
}

/// Logs what a controller's stream yields: reconciliations, their failures and watch errors.
pub async fn log_result<K, E>(
    result: Result<(ObjectRef<K>, Action), controller::Error<E, watcher::Error>>,
) where
    K: Resource,
    K::DynamicType: Debug,
    E: std::error::Error + Send + Sync + 'static,
{
    match result {
        Ok((object, _)) => debug!(%object, "reconciled"),
        Err(controller::Error::ReconcilerFailed(err, object)) => {
            warn!(%object, error = error_chain(&err.into()), "reconcile failed");
        }
        // A change of a deleted object raced with its deletion: nothing to do.
        Err(controller::Error::ObjectNotFound(object)) => debug!(%object, "object is gone"),
        Err(err) => warn!(error = error_chain(&err.into()), "controller error"),
    }
}

#[cfg(test)]
mod tests {
    use kube::core::Status;

    use super::*;
    use crate::manager::metrics::Metrics;

    #[derive(Debug, thiserror::Error)]
    #[error(transparent)]
    struct Failed(#[from] TimedOut);

    #[tokio::test(start_paused = true)]
    async fn a_reconciliation_past_the_deadline_is_cancelled_and_counted() {
        let metrics = Metrics::new();
        let deadline = Deadline::new(
            Some(Duration::from_secs(60)),
            metrics.controller("memcached"),
        );
        let hangs = std::future::pending::<Result<Action, Failed>>();
        let started = tokio::time::Instant::now();
        let err = deadline.bound("memcached/a", hangs).await.unwrap_err();
        assert_eq!(started.elapsed(), Duration::from_secs(60));
        assert!(err.to_string().contains("--reconcile-timeout"), "{err}");
        let text = metrics.encode().unwrap();
        let series = "controller_runtime_reconcile_timeouts_total{controller=\"memcached\"} 1";
        assert!(text.contains(series), "{text}");

        // A reconciliation within the limit, or with none, is left alone.
        let quick = async { Ok::<_, Failed>(Action::await_change()) };
        assert!(deadline.bound("memcached/b", quick).await.is_ok());
        let unbounded = Deadline::new(None, metrics.controller("memcached"));
        let slow = async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<_, Failed>(Action::await_change())
        };
        assert!(unbounded.bound("memcached/c", slow).await.is_ok());
    }

    #[test]
    fn api_errors_are_told_by_the_api_server_message() {
        let status = Status::failure("memcacheds.cache.example.com is forbidden", "Forbidden");
        assert_eq!(
            api_error_message(&kube::Error::Api(Box::new(status))),
            "memcacheds.cache.example.com is forbidden"
        );
        let err = kube::Error::LinesCodecMaxLineLengthExceeded;
        assert_eq!(api_error_message(&err), err.to_string());
    }

    #[test]
    fn reconcile_result_follows_the_action() {
        assert_eq!(
            reconcile_result(&Action::await_change()),
            ReconcileResult::Success
        );
        assert_eq!(
            reconcile_result(&Action::requeue(Duration::ZERO)),
            ReconcileResult::Requeue
        );
        assert_eq!(
            reconcile_result(&Action::requeue(Duration::from_secs(1))),
            ReconcileResult::RequeueAfter
        );
    }
}
