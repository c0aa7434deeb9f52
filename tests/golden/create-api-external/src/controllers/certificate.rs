//! The controller `certificate` of `Certificate` (`cert-manager.io/v1`), a kind another project
//! defines: its types, under `src/external/`, are generated from that project's CRD, which this
//! project does not install.
//!
//! Each reconciliation gets a Certificate from the controller's watch cache and hands it to
//! [`apply`], which you complete. The scaffold writes nothing, so it sends no request but one, to hand an object over
//! to another replica when the manager is sharded (`--shards`).

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use kube::api::{ListParams, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Action, Config, Controller};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use tracing::{error, instrument};

use crate::controllers::{Deadline, TimedOut, log_result, reconcile_result};
use crate::external::cert_manager_io::v1::Certificate;
use crate::manager::backoff;
use crate::manager::cache;
use crate::manager::context::Context;
use crate::manager::metrics::{ControllerMetrics, ReconcileResult};
use crate::manager::shard::{self, Sharder};
use crate::manager::watch;

/// The controller's name in metrics and logs.
const CONTROLLER_NAME: &str = "certificate";

/// Why a reconciliation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the Kubernetes API failed.
    #[error("{}", crate::controllers::api_error_message(.0))]
    Kube(#[from] kube::Error),
    /// The reconciliation ran longer than `--reconcile-timeout`.
    #[error(transparent)]
    TimedOut(#[from] TimedOut),
}

/// What every reconciliation of this controller shares.
struct State {
    client: Client,
    metrics: ControllerMetrics,
    backoff: backoff::Backoff<Certificate>,
}

impl State {
    fn new(client: Client, metrics: ControllerMetrics) -> Self {
        Self {
            client,
            metrics,
            backoff: backoff::Backoff::default(),
        }
    }
}

// The requests this controller sends, and no more: `rsop manifests --rbac=check` finds every call
// in the code and names the marker a new one needs.
// +rsop:rbac:groups=cert-manager.io,resources=certificates,verbs=list;watch

/// Runs the controller until the manager shuts down.
pub async fn run(ctx: Arc<Context>) {
    let api = ctx.api::<Certificate>();
    // Fail fast, with a message that says why, rather than retry a watch that cannot work.
    if let Err(err) = api.list_metadata(&ListParams::default().limit(1)).await {
        error!(
            error = %err,
            "cannot list Certificate objects: is the manager allowed to list them?"
        );
        return;
    }
    // TODO(user): watch only the Certificate objects this controller is for, with a label or field
    // selector in `watcher::Config`: on a large cluster the cache of every one of them is big.
    let (objects, objects_writer) = reflector::store();

    let metrics = ctx.controller_metrics(CONTROLLER_NAME);
    let deadline = Deadline::new(ctx.reconcile_timeout, metrics.clone());
    let state = Arc::new(State::new(ctx.client.clone(), metrics));
    let object_events = watch::resilient(watcher(api, ctx.sharded(watcher::Config::default())));
    let object_events = cache::fill(object_events, objects_writer).touched_objects();
    Controller::for_stream(object_events, objects)
        .with_config(Config::default().concurrency(ctx.max_concurrent_reconciles))
        .graceful_shutdown_on(ctx.shutdown_signal())
        .run(
            move |obj, state| deadline.bound(ObjectRef::from(&*obj), reconcile(obj, state)),
            error_policy,
            state,
        )
        .for_each(log_result)
        .await;
}

/// Reconciles one Certificate, recording the outcome in the controller metrics.
#[instrument(skip_all, fields(namespace = obj.namespace(), name = obj.name_any()))]
async fn reconcile(obj: Arc<Certificate>, state: Arc<State>) -> Result<Action, Error> {
    let started = Instant::now();
    let object = ObjectRef::from(&*obj);
    let result = if shard::is_drained(&*obj) {
        hand_over(&obj, &state).await
    } else {
        apply(&obj, &state).await
    };
    let outcome = match &result {
        Ok(action) => {
            state.backoff.succeeded(&object);
            reconcile_result(action)
        }
        Err(_) => ReconcileResult::Error,
    };
    state.metrics.observe(outcome, started.elapsed());
    result
}

// +rsop:rbac:groups=cert-manager.io,resources=certificates,verbs=patch
/// Gives `obj` up to the shard the sharder moves it to (see `manager::shard`).
async fn hand_over(obj: &Certificate, state: &State) -> Result<Action, Error> {
    // An object of a namespaced kind always has a namespace.
    let ns = obj.namespace().unwrap_or_default();
    let api: Api<Certificate> = Api::namespaced(state.client.clone(), &ns);
    let (params, patch) = (PatchParams::default(), shard::hand_over(obj));
    match api.patch_metadata(&obj.name_any(), &params, &patch).await {
        Ok(_) => Ok(Action::await_change()),
        // The object changed since this copy was cached: the change brings a reconciliation.
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(Action::await_change()),
        Err(err) => Err(err.into()),
    }
}

/// Adds the Certificates to `sharder`, which spreads them over the replicas when the manager is
/// sharded (see `manager::shard`): only their metadata is read.
pub fn sharded(sharder: Sharder, ctx: &Context) -> Sharder {
    sharder.namespaced_kind(ctx.api::<PartialObjectMeta<Certificate>>())
}

/// Brings the cluster to what `obj` calls for.
///
/// TODO(user): do what this controller is for, with server-side apply so that every
/// reconciliation converges, and add RBAC markers above `run` for what it touches. The
/// Certificate is not the operator's: change only what is yours in it, such as an annotation
/// under the project's domain, under a field manager of your own. An error is retried with
/// backoff.
async fn apply(obj: &Certificate, _state: &State) -> Result<Action, Error> {
    // A Certificate being deleted is left to its owners and the garbage collector.
    if obj.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    // Changes to the Certificate trigger the next reconciliation. TODO(user):
    // return `Action::requeue(...)` instead if what you reconcile can change without a watch event.
    Ok(Action::await_change())
}

/// Schedules the retry of a failed reconciliation with a per-object exponential backoff.
fn error_policy(obj: Arc<Certificate>, _err: &Error, state: Arc<State>) -> Action {
    Action::requeue(state.backoff.failed(ObjectRef::from(&*obj)))
}

#[cfg(test)]
mod tests;
