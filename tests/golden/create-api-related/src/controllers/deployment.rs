//! The controller `deployment` of `Deployment` (`apps/v1`), a kind Kubernetes defines:
//! the project has no types and no CRD for it, only this controller on k8s-openapi's type.
//!
//! Each reconciliation gets a Deployment from the controller's watch cache and hands it to
//! [`apply`], which you complete. The scaffold writes nothing, so it sends no request but one, to hand an object over
//! to another replica when the manager is sharded (`--shards`).

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector;

use kube::runtime::{WatchStreamExt, watcher};
use rsop_runtime::Context;
use rsop_runtime::controller::{cache, can_list, log_result, watch};
use tracing::instrument;

/// The controller's name in metrics and logs.
const CONTROLLER_NAME: &str = "deployment";

/// Why a reconciliation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the Kubernetes API failed.
    #[error("{}", rsop_runtime::controller::api_error_message(.0))]
    Kube(#[from] kube::Error),
}

/// What every reconciliation of this controller shares. TODO(user): keep the controller's
/// `Reconciler` here to write with (`Reconciler::apply`, server-side apply of what the Deployment
/// calls for).
struct State {}

// The requests this controller sends, and no more: `rsop manifests --rbac=check` finds every call
// in the code and names the marker a new one needs.
// +rsop:rbac:groups=apps,resources=deployments,verbs=list;watch

/// Runs the controller until the manager shuts down.
pub async fn run(ctx: Arc<Context>) {
    let api = ctx.api::<Deployment>();
    // Fail fast, with a message that says why, rather than retry a watch that cannot work.
    if !can_list(&api).await {
        return;
    }
    // TODO(user): watch only the Deployment objects this controller is for, with a label or field
    // selector in `watcher::Config`: on a large cluster the cache of every one of them is big.
    let (objects, objects_writer) = reflector::store();

    let reconciler = ctx.reconciler::<Deployment>(CONTROLLER_NAME);
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
// +rsop:rbac:groups=apps,resources=deployments,verbs=patch
/// Brings the cluster to what `obj` calls for.
///
/// TODO(user): do what this controller is for, with server-side apply so that every
/// reconciliation converges, and add RBAC markers above `run` for what it touches. The
/// Deployment is not the operator's: change only what is yours in it, such as an annotation
/// under the project's domain, under a field manager of your own. An error is retried with
/// backoff.
#[instrument(skip_all, fields(namespace = obj.namespace(), name = obj.name_any()))]
async fn reconcile(obj: Arc<Deployment>, state: Arc<State>) -> Result<Action, Error> {
    apply(&obj, &state).await
}

/// Brings the cluster to what `obj` calls for; see [`reconcile`].
async fn apply(obj: &Deployment, _state: &State) -> Result<Action, Error> {
    // A Deployment being deleted is left to its owners and the garbage collector.
    if obj.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    // Changes to the Deployment trigger the next reconciliation. TODO(user):
    // return `Action::requeue(...)` instead if what you reconcile can change without a watch event.
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests;
