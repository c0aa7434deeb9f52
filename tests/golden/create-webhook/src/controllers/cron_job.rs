//! The controller of `CronJob` (`batch.example.com/v1`).
//!
//! Each reconciliation makes sure the object carries the operator's finalizer, brings the cluster to
//! what its spec asks for, and reports the outcome in the `Ready` condition, written through the
//! status subresource with server-side apply and announced with an event when it changes. Deletion
//! waits for [`cleanup`], then the finalizer is removed.

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::EventType;
use kube::runtime::finalizer::{self, Event as Finalizer, finalizer};
use kube::runtime::reflector;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use rsop_runtime::controller::{cache, can_list, conditions, log_result, watch};
use rsop_runtime::{Context, Reconciler};
use tracing::{info, instrument};

use crate::api::v1::CronJob;
use crate::api::v1::CronJobStatus;

/// The controller's name in metrics, logs and events.
const CONTROLLER_NAME: &str = "cronjob";
/// The finalizer that holds a deleted CronJob until [`cleanup`] has run.
///
/// It is for what owner references cannot clean up, such as state outside the cluster, and costs
/// a request when an object is created and another when it is deleted. If [`cleanup`] has nothing
/// to do, because everything a CronJob makes is owned by it, remove the finalizer and let the
/// garbage collector do the deleting, as the controllers `rsop create api --image` writes do.
pub const FINALIZER: &str = "batch.example.com/finalizer";

/// The condition that tells whether the latest spec has been reconciled.
pub const READY: &str = "Ready";

/// Why a reconciliation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the Kubernetes API failed.
    #[error("{}", rsop_runtime::controller::api_error_message(.0))]
    Kube(#[from] kube::Error),
    /// Adding or removing the finalizer failed, or the reconciliation it wrapped.
    #[error(transparent)]
    Finalizer(#[from] Box<finalizer::Error<Error>>),
}

/// What every reconciliation of this controller shares.
struct State {
    /// The client, the metrics, the status writer.
    reconciler: Reconciler<CronJob>,
}

// The requests this controller sends, and no more, each marker next to its calls: `rsop manifests
// --rbac=check` finds every call in the code and names the marker a new one needs.
// +rsop:rbac:groups=batch.example.com,resources=cronjobs,verbs=list;watch

/// Runs the controller until the manager shuts down.
pub async fn run(ctx: Arc<Context>) {
    let api = ctx.api::<CronJob>();
    // Fail fast, with a message that says why, rather than retry a watch that cannot work.
    if !can_list(&api).await {
        return;
    }
    let reconciler = ctx.reconciler::<CronJob>(CONTROLLER_NAME);
    let state = Arc::new(State {
        reconciler: reconciler.clone(),
    });
    let (reader, writer) = reflector::store();
    let objects = watch::resilient(watcher(api, ctx.sharded(watcher::Config::default())));
    let objects = cache::fill(objects, writer);
    // It ends at shutdown, with the cache it fills: see `Context::until_shutdown`.
    let objects = ctx.until_shutdown(objects).touched_objects();
    Controller::for_stream(objects, reader)
        .with_config(ctx.controller_config())
        .graceful_shutdown_on(ctx.shutdown_signal())
        .run(reconciler.wrap(reconcile), reconciler.error_policy(), state)
        .for_each(log_result)
        .await;
}

// `finalizer` adds and removes the finalizer with a patch, and the reconciler hands an object
// over to another shard with one.
// +rsop:rbac:groups=batch.example.com,resources=cronjobs,verbs=patch
/// Adds the finalizer to a new CronJob, applies a live one, and cleans up a deleted one.
#[instrument(skip_all, fields(namespace = obj.namespace(), name = obj.name_any()))]
async fn reconcile(obj: Arc<CronJob>, state: Arc<State>) -> Result<Action, Error> {
    let client = state.reconciler.client().clone();
    let namespace = obj.namespace().unwrap_or_default();
    let api: Api<CronJob> = Api::namespaced(client, &namespace);
    finalizer(&api, FINALIZER, obj, |event| async {
        match event {
            Finalizer::Apply(obj) => apply(&obj, &state).await,
            Finalizer::Cleanup(obj) => cleanup(&obj, &state).await,
        }
    })
    .await
    .map_err(|err| Error::Finalizer(Box::new(err)))
}

// The status is written through the status subresource, and each condition transition announced
// with an event.
// +rsop:rbac:groups=batch.example.com,resources=cronjobs/status,verbs=patch
// +rsop:rbac:groups=events.k8s.io,resources=events,verbs=create
/// Brings the cluster to what `obj` asks for and reports the outcome in its status.
async fn apply(obj: &CronJob, state: &State) -> Result<Action, Error> {
    let synced = sync(obj, state).await;
    let status = CronJobStatus {
        conditions: vec![ready_condition(obj, synced.as_ref().err())],
        observed_generation: obj.metadata.generation,
    };
    state
        .reconciler
        .write_status(obj, &status, event_type)
        .await?;
    // Changes to the CronJob trigger the next reconciliation. TODO(user): return
    // `Action::requeue(...)` instead if the state you reconcile can change without a watch event.
    synced.map(|()| Action::await_change())
}

/// Makes the cluster match `obj.spec`.
///
/// TODO(user): create or update what a CronJob stands for, with server-side apply
/// (`state.reconciler.apply`) so that every reconciliation converges, and add the RBAC markers
/// above `run` for what it touches. An error is reported in the `Ready` condition and retried with
/// backoff.
async fn sync(_obj: &CronJob, _state: &State) -> Result<(), Error> {
    Ok(())
}

/// Releases what a deleted CronJob holds; the finalizer goes once this succeeds.
///
/// TODO(user): release what lives outside the cluster or is not owned through owner references;
/// the garbage collector deletes owned objects. An error keeps the finalizer and is retried.
async fn cleanup(_obj: &CronJob, _state: &State) -> Result<Action, Error> {
    info!("cleaned up");
    Ok(Action::await_change())
}

/// The `Ready` condition after a reconciliation that ended with `failure`.
fn ready_condition(obj: &CronJob, failure: Option<&Error>) -> Condition {
    let generation = obj.metadata.generation;
    match failure {
        None => conditions::new(
            READY,
            true,
            "Reconciled",
            "The latest spec is reconciled",
            generation,
        ),
        Some(err) => conditions::new(READY, false, "ReconcileFailed", err.to_string(), generation),
    }
}

/// The event type announcing a transition of `condition`: a warning when the object is not ready.
fn event_type(condition: &Condition) -> EventType {
    if condition.status == "True" {
        EventType::Normal
    } else {
        EventType::Warning
    }
}

#[cfg(test)]
mod tests;
