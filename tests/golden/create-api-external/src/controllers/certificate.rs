//! The controller `certificate` of `Certificate` (`cert-manager.io/v1`), a kind another project
//! defines: its types, under `src/external/`, are generated from that project's CRD, which this
//! project does not install.
//!
//! Each reconciliation gets a Certificate from the controller's watch cache and hands it to
//! [`apply`], which you complete. The scaffold writes nothing, so it sends no request but one, to hand an object over
//! to another replica when the manager is sharded (`--shards`).

use std::sync::Arc;

use futures::StreamExt;
use kube::ResourceExt;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector;

use kube::runtime::{WatchStreamExt, watcher};
use rsop_runtime::Context;
use rsop_runtime::controller::{cache, can_list, log_result, watch};
use tracing::instrument;

use crate::external::cert_manager_io::v1::Certificate;

/// The controller's name in metrics and logs.
const CONTROLLER_NAME: &str = "certificate";

/// Why a reconciliation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the Kubernetes API failed.
    #[error("{}", rsop_runtime::controller::api_error_message(.0))]
    Kube(#[from] kube::Error),
}

/// What every reconciliation of this controller shares. TODO(user): keep the controller's
/// `Reconciler` here to write with (`Reconciler::apply`, server-side apply of what the Certificate
/// calls for).
struct State {}

// The requests this controller sends, and no more: `rsop manifests --rbac=check` finds every call
// in the code and names the marker a new one needs.
// +rsop:rbac:groups=cert-manager.io,resources=certificates,verbs=list;watch

/// Runs the controller until the manager shuts down.
pub async fn run(ctx: Arc<Context>) {
    let api = ctx.api::<Certificate>();
    // Fail fast, with a message that says why, rather than retry a watch that cannot work.
    if !can_list(&api).await {
        return;
    }
    // TODO(user): watch only the Certificate objects this controller is for, with a label or field
    // selector in `watcher::Config`: on a large cluster the cache of every one of them is big.
    let (objects, objects_writer) = reflector::store();

    let reconciler = ctx.reconciler::<Certificate>(CONTROLLER_NAME);
    let state = Arc::new(State {});
    let object_events = watch::resilient(watcher(api, ctx.sharded(watcher::Config::default())));
    let object_events = cache::fill(object_events, objects_writer);
    // It ends at shutdown, with the cache it fills: see `Context::until_shutdown`.
    let object_events = ctx.until_shutdown(object_events).touched_objects();
    Controller::for_stream(object_events, objects)
        .with_config(ctx.controller_config())
        .graceful_shutdown_on(ctx.shutdown_signal())
        .run(reconciler.wrap(reconcile), reconciler.error_policy(), state)
        .for_each(log_result)
        .await;
}

// The reconciler hands an object over to another shard with a patch.
// +rsop:rbac:groups=cert-manager.io,resources=certificates,verbs=patch
/// Brings the cluster to what `obj` calls for.
///
/// TODO(user): do what this controller is for, with server-side apply so that every
/// reconciliation converges, and add RBAC markers above `run` for what it touches. The
/// Certificate is not the operator's: change only what is yours in it, such as an annotation
/// under the project's domain, under a field manager of your own. An error is retried with
/// backoff.
#[instrument(skip_all, fields(namespace = obj.namespace(), name = obj.name_any()))]
async fn reconcile(obj: Arc<Certificate>, state: Arc<State>) -> Result<Action, Error> {
    apply(&obj, &state).await
}

/// Brings the cluster to what `obj` calls for; see [`reconcile`].
async fn apply(obj: &Certificate, _state: &State) -> Result<Action, Error> {
    // A Certificate being deleted is left to its owners and the garbage collector.
    if obj.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    // Changes to the Certificate trigger the next reconciliation. TODO(user):
    // return `Action::requeue(...)` instead if what you reconcile can change without a watch event.
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests;
