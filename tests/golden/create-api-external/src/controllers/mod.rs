//! The controllers, one module per kind, each started by the manager with its `run` function, and
//! what they share.

pub mod backoff;
pub mod certificate;
pub mod conditions;
pub mod frontend;
pub mod watch;
// +rsop:scaffold:controller-modules

#[cfg(test)]
mod testing;

use std::fmt::Debug;
use std::time::Duration;

use kube::Resource;
use kube::runtime::controller::{self, Action};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use tracing::{debug, warn};

use crate::manager::logging::error_chain;
use crate::manager::metrics::ReconcileResult;

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
