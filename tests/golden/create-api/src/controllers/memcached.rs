//! The controller of `Memcached` (`cache.example.com/v1alpha1`).
//!
//! Each reconciliation makes sure the object carries the operator's finalizer, brings the cluster to
//! what its spec asks for, and reports the outcome in the `Ready` condition, written through the
//! status subresource with server-side apply and announced with an event when it changes. Deletion
//! waits for [`cleanup`], then the finalizer is removed.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{ListParams, Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Action, Config, Controller};
use kube::runtime::events::{EventType, Recorder, Reporter};
use kube::runtime::finalizer::{self, Event as Finalizer, finalizer};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde_json::json;
use tracing::{error, info, instrument, warn};

use crate::api::v1alpha1::Memcached;
use crate::api::v1alpha1::MemcachedStatus;
use crate::controllers::{Deadline, TimedOut, log_result, reconcile_result};
use crate::manager::backoff;
use crate::manager::cache;
use crate::manager::conditions::{self, Change};
use crate::manager::context::Context;
use crate::manager::metrics::{ControllerMetrics, ReconcileResult};
use crate::manager::shard::{self, Sharder};
use crate::manager::watch;

/// The controller's name in metrics and logs.
const CONTROLLER_NAME: &str = "memcached";
/// The finalizer that holds a deleted Memcached until [`cleanup`] has run.
///
/// It is for what owner references cannot clean up, such as state outside the cluster, and costs
/// a request when an object is created and another when it is deleted. If [`cleanup`] has nothing
/// to do, because everything a Memcached makes is owned by it, remove the finalizer and let the
/// garbage collector do the deleting, as the controllers `rsop create api --image` writes do.
pub const FINALIZER: &str = "cache.example.com/finalizer";
/// The server-side apply field manager of everything this controller writes.
const FIELD_MANAGER: &str = "memcached-operator";
/// The `reportingController` of the events this controller publishes.
const EVENT_REPORTER: &str = "memcached-controller";

/// The condition that tells whether the latest spec has been reconciled.
pub const READY: &str = "Ready";

/// Why a reconciliation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the Kubernetes API failed.
    #[error("{}", crate::controllers::api_error_message(.0))]
    Kube(#[from] kube::Error),
    /// The object lacks metadata the API server always sets: it cannot have come from a watch.
    #[error("the object has no metadata.{0}")]
    MissingMetadata(&'static str),
    /// Adding or removing the finalizer failed, or the reconciliation it wrapped.
    #[error(transparent)]
    Finalizer(#[from] Box<finalizer::Error<Error>>),
    /// The reconciliation ran longer than `--reconcile-timeout`.
    #[error(transparent)]
    TimedOut(#[from] TimedOut),
}

/// What every reconciliation of this controller shares.
struct State {
    client: Client,
    /// Who publishes the events: see [`publish_transitions`].
    reporter: Reporter,
    metrics: ControllerMetrics,
    backoff: backoff::Backoff<Memcached>,
}

impl State {
    fn new(client: Client, metrics: ControllerMetrics) -> Self {
        Self {
            reporter: Reporter::from(EVENT_REPORTER),
            client,
            metrics,
            backoff: backoff::Backoff::default(),
        }
    }
}

// The requests this controller sends, and no more, each marker next to its calls: `rsop manifests
// --rbac=check` finds every call in the code and names the marker a new one needs.
// +rsop:rbac:groups=cache.example.com,resources=memcacheds,verbs=list;watch

/// Runs the controller until the manager shuts down.
pub async fn run(ctx: Arc<Context>) {
    let api = ctx.api::<Memcached>();
    // Fail fast, with a message that says why, rather than retry a watch that cannot work.
    if let Err(err) = api.list_metadata(&ListParams::default().limit(1)).await {
        error!(
            error = %err,
            "cannot list Memcached objects: is the CRD installed (`make install`) and is the manager allowed to list them?"
        );
        return;
    }
    let metrics = ctx.controller_metrics(CONTROLLER_NAME);
    let deadline = Deadline::new(ctx.reconcile_timeout, metrics.clone());
    let state = Arc::new(State::new(ctx.client.clone(), metrics));
    let (reader, writer) = reflector::store();
    let objects = watch::resilient(watcher(api, ctx.sharded(watcher::Config::default())));
    let objects = cache::fill(objects, writer).touched_objects();
    Controller::for_stream(objects, reader)
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

/// Reconciles one Memcached, recording the outcome in the controller metrics.
#[instrument(skip_all, fields(namespace = obj.namespace(), name = obj.name_any()))]
async fn reconcile(obj: Arc<Memcached>, state: Arc<State>) -> Result<Action, Error> {
    let started = Instant::now();
    let object = ObjectRef::from(&*obj);
    let result = if shard::is_drained(&*obj) {
        hand_over(&obj, &state).await
    } else {
        apply_or_cleanup(obj, &state).await
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

/// Gives `obj` up to the shard the sharder moves it to (see `manager::shard`).
async fn hand_over(obj: &Memcached, state: &State) -> Result<Action, Error> {
    // An object of a namespaced kind always has a namespace.
    let ns = obj.namespace().unwrap_or_default();
    let api: Api<Memcached> = Api::namespaced(state.client.clone(), &ns);
    let (params, patch) = (PatchParams::default(), shard::hand_over(obj));
    match api.patch_metadata(&obj.name_any(), &params, &patch).await {
        Ok(_) => Ok(Action::await_change()),
        // The object changed since this copy was cached: the change brings a reconciliation.
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(Action::await_change()),
        Err(err) => Err(err.into()),
    }
}

/// Adds the Memcacheds to `sharder`, which spreads them over the replicas when the manager is
/// sharded (see `manager::shard`): only their metadata is read.
pub fn sharded(sharder: Sharder, ctx: &Context) -> Sharder {
    sharder.namespaced_kind(ctx.api::<PartialObjectMeta<Memcached>>())
}

// `finalizer` adds and removes the finalizer with a patch, and `hand_over` removes the shard labels.
// +rsop:rbac:groups=cache.example.com,resources=memcacheds,verbs=patch
/// Adds the finalizer to a new object, applies a live one, and cleans up a deleted one.
async fn apply_or_cleanup(obj: Arc<Memcached>, state: &State) -> Result<Action, Error> {
    let ns = obj.namespace().ok_or(Error::MissingMetadata("namespace"))?;
    let api = Api::namespaced(state.client.clone(), &ns);
    finalizer(&api, FINALIZER, obj, |event| async {
        match event {
            Finalizer::Apply(obj) => apply(&obj, &ns, state).await,
            Finalizer::Cleanup(obj) => cleanup(&obj, state).await,
        }
    })
    .await
    .map_err(|err| Error::Finalizer(Box::new(err)))
}

/// Brings the cluster to what `obj` asks for and reports the outcome in its status.
async fn apply(obj: &Memcached, ns: &str, state: &State) -> Result<Action, Error> {
    let synced = sync(obj, state).await;
    let status = MemcachedStatus {
        conditions: vec![ready_condition(obj, synced.as_ref().err())],
        observed_generation: obj.metadata.generation,
    };
    let api = Api::namespaced(state.client.clone(), ns);
    write_status(obj, status, &api, state).await?;
    // Changes to the Memcached trigger the next reconciliation. TODO(user): return
    // `Action::requeue(...)` instead if the state you reconcile can change without a watch event.
    synced.map(|()| Action::await_change())
}

/// Makes the cluster match `obj.spec`.
///
/// TODO(user): create or update what a Memcached stands for, with server-side apply under
/// [`FIELD_MANAGER`] so that every reconciliation converges, and add the RBAC markers above `run`
/// for what it touches. An error is reported in the `Ready` condition and retried with backoff.
async fn sync(_obj: &Memcached, _state: &State) -> Result<(), Error> {
    Ok(())
}

/// Releases what a deleted Memcached holds; the finalizer goes once this succeeds.
///
/// TODO(user): release what lives outside the cluster or is not owned through owner references;
/// the garbage collector deletes owned objects. An error keeps the finalizer and is retried.
async fn cleanup(_obj: &Memcached, _state: &State) -> Result<Action, Error> {
    info!("cleaned up");
    Ok(Action::await_change())
}

/// The `Ready` condition after a reconciliation that ended with `failure`.
fn ready_condition(obj: &Memcached, failure: Option<&Error>) -> Condition {
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

// +rsop:rbac:groups=cache.example.com,resources=memcacheds/status,verbs=patch
// +rsop:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
/// Writes `status` to `obj` unless it is already there, then publishes one event per condition
/// transition.
async fn write_status(
    obj: &Memcached,
    mut status: MemcachedStatus,
    api: &Api<Memcached>,
    state: &State,
) -> Result<(), Error> {
    let current = obj.status.clone().unwrap_or_default();
    let mut changed = status.observed_generation != current.observed_generation;
    let mut transitions = Vec::new();
    for condition in &mut status.conditions {
        match conditions::compare(&current.conditions, condition) {
            Change::None => {}
            Change::Updated => changed = true,
            Change::Transition => {
                changed = true;
                transitions.push(condition.clone());
            }
        }
    }
    if !changed {
        return Ok(());
    }

    // Server-side apply of the status alone: only the fields this controller sets are sent, so
    // conditions that other field managers own stay theirs. `force` wins conflicts over fields
    // someone else wrote, as the controller is the authority on its status.
    let patch = json!({
        "apiVersion": Memcached::api_version(&()),
        "kind": Memcached::kind(&()),
        "status": status,
    });
    api.patch_status(
        &obj.name_any(),
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await?;

    // Events come after the status is stored, so they never announce a state that was not
    // recorded.
    publish_transitions(state, obj, &transitions).await;
    Ok(())
}

/// Publishes an event for each condition that changed; losing one is harmless, so a failure is
/// only logged.
///
/// Each call has a `Recorder` of its own. kube's `Recorder` keeps every event it published for six
/// minutes, to count an event that repeats into a series, and looks through all of them on every
/// publish: shared by the controller, it would make each event cost more, and the manager hold
/// more, with every object (30,000 events kept at a start-up of 10,000 objects). A transition is
/// published once, so there is no series to count.
async fn publish_transitions(state: &State, obj: &Memcached, transitions: &[Condition]) {
    let recorder = Recorder::new(state.client.clone(), state.reporter.clone());
    let reference = obj.object_ref(&());
    for condition in transitions {
        let event = conditions::transition_event(condition, event_type(condition));
        if let Err(err) = recorder.publish(&event, &reference).await {
            warn!(error = %err, reason = event.reason, "failed to publish an event");
        }
    }
}

/// Schedules the retry of a failed reconciliation with a per-object exponential backoff.
fn error_policy(obj: Arc<Memcached>, _err: &Error, state: Arc<State>) -> Action {
    Action::requeue(state.backoff.failed(ObjectRef::from(&*obj)))
}

#[cfg(test)]
mod tests;
