//! The controller of `Frontend` (`tls.example.com/v1alpha1`).
//!
//! Each reconciliation makes sure the object carries the operator's finalizer, brings the cluster to
//! what its spec asks for, and reports the outcome in the `Ready` condition, written through the
//! status subresource with server-side apply and announced with an event when it changes. Deletion
//! waits for [`cleanup`], then the finalizer is removed.
//!
//! The controller also watches:
//! - Certificates: their owner references route their changes to the Frontend that owns them;
//! - Backends: their owner references route their changes to the Frontend that owns them;
//! - Issuers: [`objects_for_issuer`] maps their changes to the Frontends to reconcile.
//!
//! [`sync`] reads them from the watch caches.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{ListParams, Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Action, Config, Controller};
use kube::runtime::events::{EventType, Recorder, Reporter};
use kube::runtime::finalizer::{self, Event as Finalizer, finalizer};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde_json::json;
use tracing::{debug, error, info, instrument, warn};

use crate::api::v1alpha1::Backend;
use crate::api::v1alpha1::Frontend;
use crate::api::v1alpha1::FrontendStatus;
use crate::controllers::{Deadline, TimedOut, log_result, reconcile_result};
use crate::external::cert_manager_io::v1::Certificate;
use crate::external::cert_manager_io::v1::Issuer;
use crate::manager::backoff;
use crate::manager::cache::{self, Index};
use crate::manager::conditions::{self, Change};
use crate::manager::context::Context;
use crate::manager::metrics::{ControllerMetrics, ReconcileResult};
use crate::manager::shard::{self, Sharder};
use crate::manager::watch::{self, CachesReady, first_list};

/// The controller's name in metrics and logs.
const CONTROLLER_NAME: &str = "frontend";
/// The finalizer that holds a deleted Frontend until [`cleanup`] has run.
///
/// It is for what owner references cannot clean up, such as state outside the cluster, and costs
/// a request when an object is created and another when it is deleted. If [`cleanup`] has nothing
/// to do, because everything a Frontend makes is owned by it, remove the finalizer and let the
/// garbage collector do the deleting, as the controllers `rsop create api --image` writes do.
pub const FINALIZER: &str = "tls.example.com/finalizer";
/// The server-side apply field manager of everything this controller writes.
const FIELD_MANAGER: &str = "tls-operator";
/// The `reportingController` of the events this controller publishes.
const EVENT_REPORTER: &str = "frontend-controller";

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

/// The watch caches of the kinds this controller owns or watches: a reconciliation reads
/// them instead of listing, so finding what changed costs no request.
struct Caches {
    /// Whether every cache below has had its first list.
    ready: CachesReady,
    /// The Certificates that Frontends may own, as their watch last saw them.
    certificates: Store<Certificate>,
    /// The same Certificates by the UID of their controller.
    certificates_by_owner: Index<Certificate, String>,
    /// The Backends that Frontends may own, as their watch last saw them.
    backends: Store<Backend>,
    /// The same Backends by the UID of their controller.
    backends_by_owner: Index<Backend, String>,
    /// The Issuers that Frontends may relate to, as their watch last saw them.
    issuers: Store<Issuer>,
    /// The same Issuers by [`relation_of_issuer`].
    issuers_by_relation: Index<Issuer, String>,
}

/// The controller's cache of Frontends, and the index the changes of Issuers are mapped
/// through.
#[derive(Clone)]
struct Objects {
    store: Store<Frontend>,
    by_name: Index<Frontend, String>,
}

/// What every reconciliation of this controller shares.
struct State {
    client: Client,
    /// Who publishes the events: see [`publish_transitions`].
    reporter: Reporter,
    metrics: ControllerMetrics,
    backoff: backoff::Backoff<Frontend>,
    caches: Caches,
}

impl State {
    fn new(client: Client, metrics: ControllerMetrics, caches: Caches) -> Self {
        Self {
            reporter: Reporter::from(EVENT_REPORTER),
            client,
            metrics,
            backoff: backoff::Backoff::default(),
            caches,
        }
    }
}

// The requests this controller sends, and no more, each marker next to its calls: `rsop manifests
// --rbac=check` finds every call in the code and names the marker a new one needs.
// +rsop:rbac:groups=tls.example.com,resources=frontends,verbs=list;watch
// +rsop:rbac:groups=cert-manager.io,resources=certificates,verbs=list;watch
// +rsop:rbac:groups=tls.example.com,resources=backends,verbs=list;watch
// +rsop:rbac:groups=cert-manager.io,resources=issuers,verbs=list;watch

/// Runs the controller until the manager shuts down.
pub async fn run(ctx: Arc<Context>) {
    let api = ctx.api::<Frontend>();
    // Fail fast, with a message that says why, rather than retry a watch that cannot work.
    if let Err(err) = api.list_metadata(&ListParams::default().limit(1)).await {
        error!(
            error = %err,
            "cannot list Frontend objects: is the CRD installed (`make install`) and is the manager allowed to list them?"
        );
        return;
    }
    let (objects, objects_writer) = reflector::store();
    let objects_by_name = Index::new(|obj: &Frontend| Some(obj.name_any()));
    let (certificates, certificates_writer) = reflector::store();
    let certificates_by_owner = Index::new(cache::controller_uid);
    let (backends, backends_writer) = reflector::store();
    let backends_by_owner = Index::new(cache::controller_uid);
    let (issuers, issuers_writer) = reflector::store();
    let issuers_by_relation = Index::new(relation_of_issuer);
    // Owner references route the changes of owned Certificates to their Frontend.
    let certificate_events = watch::resilient(watcher(
        ctx.api::<Certificate>(),
        watcher::Config::default(),
    ));
    let certificate_events = certificates_by_owner.follow(certificate_events);
    let certificate_events = cache::fill(certificate_events, certificates_writer).touched_objects();
    // Owner references route the changes of owned Backends to their Frontend.
    let backend_events =
        watch::resilient(watcher(ctx.api::<Backend>(), watcher::Config::default()));
    let backend_events = backends_by_owner.follow(backend_events);
    let backend_events = cache::fill(backend_events, backends_writer).touched_objects();
    // Issuers are not owned: `objects_for_issuer` maps each change to the Frontends to reconcile.
    // TODO(user): watch only the Issuers that can matter, with a label selector in
    // `watcher::Config`: the cache holds every one the manager may see.
    let issuer_events = watch::resilient(watcher(ctx.api::<Issuer>(), watcher::Config::default()));
    let issuer_events = issuers_by_relation.follow(issuer_events);
    let issuer_events = cache::fill(issuer_events, issuers_writer).touched_objects();
    let ready = CachesReady::new(
        [
            first_list(&certificates),
            first_list(&backends),
            first_list(&issuers),
        ],
        ctx.shutdown_signal(),
    );
    let objects_for_issuers = Objects {
        store: objects.clone(),
        by_name: objects_by_name.clone(),
    };

    let metrics = ctx.controller_metrics(CONTROLLER_NAME);
    let deadline = Deadline::new(ctx.reconcile_timeout, metrics.clone());
    let state = Arc::new(State::new(
        ctx.client.clone(),
        metrics,
        Caches {
            ready,
            certificates,
            certificates_by_owner,
            backends,
            backends_by_owner,
            issuers,
            issuers_by_relation,
        },
    ));
    let object_events = watch::resilient(watcher(api, ctx.sharded(watcher::Config::default())));
    let object_events =
        cache::fill(objects_by_name.follow(object_events), objects_writer).touched_objects();
    Controller::for_stream(object_events, objects)
        .owns_stream(certificate_events)
        .owns_stream(backend_events)
        .watches_stream(issuer_events, move |issuer| {
            objects_for_issuer(&objects_for_issuers, &issuer)
        })
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

/// Reconciles one Frontend, recording the outcome in the controller metrics.
#[instrument(skip_all, fields(namespace = obj.namespace(), name = obj.name_any()))]
async fn reconcile(obj: Arc<Frontend>, state: Arc<State>) -> Result<Action, Error> {
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
async fn hand_over(obj: &Frontend, state: &State) -> Result<Action, Error> {
    // An object of a namespaced kind always has a namespace.
    let ns = obj.namespace().unwrap_or_default();
    let api: Api<Frontend> = Api::namespaced(state.client.clone(), &ns);
    let (params, patch) = (PatchParams::default(), shard::hand_over(obj));
    match api.patch_metadata(&obj.name_any(), &params, &patch).await {
        Ok(_) => Ok(Action::await_change()),
        // The object changed since this copy was cached: the change brings a reconciliation.
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(Action::await_change()),
        Err(err) => Err(err.into()),
    }
}

/// Adds the Frontends to `sharder`, which spreads them over the replicas when the manager is
/// sharded (see `manager::shard`): only their metadata is read.
pub fn sharded(sharder: Sharder, ctx: &Context) -> Sharder {
    sharder.namespaced_kind(ctx.api::<PartialObjectMeta<Frontend>>())
}

// `finalizer` adds and removes the finalizer with a patch, and `hand_over` removes the shard labels.
// +rsop:rbac:groups=tls.example.com,resources=frontends,verbs=patch
/// Adds the finalizer to a new object, applies a live one, and cleans up a deleted one.
async fn apply_or_cleanup(obj: Arc<Frontend>, state: &State) -> Result<Action, Error> {
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
async fn apply(obj: &Frontend, ns: &str, state: &State) -> Result<Action, Error> {
    // The caches start empty: wait for their first list, so that an object not listed yet is not
    // taken for a missing one. If the manager stops first, the next one reconciles `obj`.
    if !state.caches.ready.wait().await {
        return Ok(Action::await_change());
    }
    let synced = sync(obj, state).await;
    let status = FrontendStatus {
        conditions: vec![ready_condition(obj, synced.as_ref().err())],
        observed_generation: obj.metadata.generation,
    };
    let api = Api::namespaced(state.client.clone(), ns);
    write_status(obj, status, &api, state).await?;
    // Changes to the Frontend trigger the next reconciliation. TODO(user): return
    // `Action::requeue(...)` instead if the state you reconcile can change without a watch event.
    synced.map(|()| Action::await_change())
}

/// Makes the cluster match `obj.spec`.
///
/// TODO(user): create or update what a Frontend stands for, with server-side apply under
/// [`FIELD_MANAGER`] so that every reconciliation converges, and add the RBAC markers above `run`
/// for what it touches. An error is reported in the `Ready` condition and retried with backoff.
async fn sync(obj: &Frontend, state: &State) -> Result<(), Error> {
    let certificates = owned_certificates(obj, &state.caches);
    let backends = owned_backends(obj, &state.caches);
    let issuers = selected_issuers(obj, &state.caches);
    // TODO(user): bring the related objects in line with `obj`.
    // Give what it creates `obj.controller_owner_ref(&())` in `metadata.ownerReferences`: its
    // changes then come back here, `owned_certificates` and the like find it, and the
    // garbage collector deletes it with `obj`. Setting `blockOwnerDeletion`, as that reference
    // does, takes `update` on the Frontend's `finalizers`: `rsop manifests` names the marker.
    debug!(
        certificates = certificates.len(),
        backends = backends.len(),
        issuers = issuers.len(),
        "related objects in the caches"
    );
    Ok(())
}

/// The Certificates in the cache that `obj` controls: those whose controller owner reference is
/// `obj.controller_owner_ref(&())`, as the ones it creates must have.
fn owned_certificates(obj: &Frontend, caches: &Caches) -> Vec<Arc<Certificate>> {
    let Some(uid) = obj.uid() else {
        return Vec::new();
    };
    caches
        .certificates_by_owner
        .get(&uid)
        .iter()
        .filter_map(|certificate| caches.certificates.get(certificate))
        .collect()
}

/// The Backends in the cache that `obj` controls: those whose controller owner reference is
/// `obj.controller_owner_ref(&())`, as the ones it creates must have.
fn owned_backends(obj: &Frontend, caches: &Caches) -> Vec<Arc<Backend>> {
    let Some(uid) = obj.uid() else {
        return Vec::new();
    };
    caches
        .backends_by_owner
        .get(&uid)
        .iter()
        .filter_map(|backend| caches.backends.get(backend))
        .collect()
}

/// The label that relates Issuers to Frontends in the scaffold: its value is
/// the name of the Frontend.
const RELATION_LABEL: &str = "tls.example.com/frontend";

/// The name of the Frontends `issuer` may relate to: what both caches are indexed by, so that
/// a change of either finds the other without a scan. [`selects_issuer`] then decides.
///
/// TODO(user): say which Issuers relate to which Frontends, here and in
/// [`selects_issuer`]. The scaffold relates those labelled [`RELATION_LABEL`] with the name
/// of the Frontend, in its namespace.
fn relation_of_issuer(issuer: &Issuer) -> Option<String> {
    issuer.labels().get(RELATION_LABEL).cloned()
}

/// Whether `obj` relates to `issuer`, one of the Issuers whose relation names it: a change
/// of the Issuer then reconciles `obj`, and [`selected_issuers`] hands the Issuer to its
/// reconciliation.
fn selects_issuer(obj: &Frontend, issuer: &Issuer) -> bool {
    issuer.namespace() == obj.namespace()
        && relation_of_issuer(issuer).is_some_and(|name| name == obj.name_any())
}

/// The Frontends to reconcile when `issuer` changes: those in the controller's cache that
/// select it.
fn objects_for_issuer(objects: &Objects, issuer: &Issuer) -> Vec<ObjectRef<Frontend>> {
    let Some(name) = relation_of_issuer(issuer) else {
        return Vec::new();
    };
    objects
        .by_name
        .get(&name)
        .iter()
        .filter_map(|obj| objects.store.get(obj))
        .filter(|obj| selects_issuer(obj, issuer))
        .map(|obj| ObjectRef::from(&*obj))
        .collect()
}

/// The Issuers in the cache that `obj` selects.
fn selected_issuers(obj: &Frontend, caches: &Caches) -> Vec<Arc<Issuer>> {
    caches
        .issuers_by_relation
        .get(&obj.name_any())
        .iter()
        .filter_map(|issuer| caches.issuers.get(issuer))
        .filter(|issuer| selects_issuer(obj, issuer))
        .collect()
}

/// Releases what a deleted Frontend holds; the finalizer goes once this succeeds.
///
/// TODO(user): release what lives outside the cluster or is not owned through owner references;
/// the garbage collector deletes owned objects. An error keeps the finalizer and is retried.
async fn cleanup(_obj: &Frontend, _state: &State) -> Result<Action, Error> {
    info!("cleaned up");
    Ok(Action::await_change())
}

/// The `Ready` condition after a reconciliation that ended with `failure`.
fn ready_condition(obj: &Frontend, failure: Option<&Error>) -> Condition {
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

// +rsop:rbac:groups=tls.example.com,resources=frontends/status,verbs=patch
// +rsop:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
/// Writes `status` to `obj` unless it is already there, then publishes one event per condition
/// transition.
async fn write_status(
    obj: &Frontend,
    mut status: FrontendStatus,
    api: &Api<Frontend>,
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
        "apiVersion": Frontend::api_version(&()),
        "kind": Frontend::kind(&()),
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
async fn publish_transitions(state: &State, obj: &Frontend, transitions: &[Condition]) {
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
fn error_policy(obj: Arc<Frontend>, _err: &Error, state: Arc<State>) -> Action {
    Action::requeue(state.backoff.failed(ObjectRef::from(&*obj)))
}

#[cfg(test)]
mod tests;
