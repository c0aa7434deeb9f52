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
use crate::controllers::backoff::Backoff;
use crate::controllers::cache::{self, Index};
use crate::controllers::conditions::{self, Change};
use crate::controllers::watch::{self, CachesReady, first_list};
use crate::controllers::{Deadline, TimedOut, log_result, reconcile_result};
use crate::external::cert_manager_io::v1::Certificate;
use crate::external::cert_manager_io::v1::Issuer;
use crate::manager::context::Context;
use crate::manager::metrics::{ControllerMetrics, ReconcileResult};
use crate::manager::shard::{self, Sharder};

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
    backoff: Backoff<Frontend>,
    caches: Caches,
}

impl State {
    fn new(client: Client, metrics: ControllerMetrics, caches: Caches) -> Self {
        Self {
            reporter: Reporter::from(EVENT_REPORTER),
            client,
            metrics,
            backoff: Backoff::default(),
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
mod tests {
    use http::{Method, StatusCode};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;
    use serde_json::Value;

    use super::*;
    use crate::api::v1alpha1::FrontendSpec;
    use crate::controllers::testing::{ApiServer, drained, finished, mock_client};
    use crate::manager::metrics::Metrics;

    /// Where the client reads and writes the test object.
    fn url() -> String {
        let collection = Frontend::url_path(&(), Some("default"));
        format!("{collection}/test")
    }

    /// Where the controller applies the test object's status.
    fn status_url() -> String {
        format!("{}/status?&force=true&fieldManager={FIELD_MANAGER}", url())
    }
    const EVENTS_URL: &str = "/apis/events.k8s.io/v1/namespaces/default/events?";

    /// An error a reconciliation can end with.
    fn failure() -> Error {
        Error::Finalizer(Box::new(finalizer::Error::UnnamedObject))
    }

    /// A Frontend as the API server returns it, without finalizer or status.
    fn object() -> Frontend {
        let mut obj = Frontend::new(
            "test",
            FrontendSpec {
                foo: None,
                count: 1,
            },
        );
        obj.metadata.namespace = Some("default".into());
        obj.metadata.uid = Some("6ac0d01a-8fda-4b94-a8ec-6b8e0e4a39f2".into());
        obj.metadata.generation = Some(1);
        obj
    }

    fn with_finalizer(mut obj: Frontend) -> Frontend {
        obj.metadata.finalizers = Some(vec![FINALIZER.into()]);
        obj
    }

    fn ready_since(obj: &Frontend, seconds: i64) -> FrontendStatus {
        FrontendStatus {
            conditions: vec![Condition {
                last_transition_time: Time(Timestamp::from_second(seconds).unwrap()),
                ..ready_condition(obj, None)
            }],
            observed_generation: obj.metadata.generation,
        }
    }

    fn state() -> (Arc<State>, ApiServer) {
        let (state, server, _) = state_with_metrics();
        (state, server)
    }

    fn state_with_metrics() -> (Arc<State>, ApiServer, Metrics) {
        let (client, server) = mock_client();
        let metrics = Metrics::new();
        let state = State::new(client, metrics.controller(CONTROLLER_NAME), caches());
        (Arc::new(state), server, metrics)
    }

    /// Runs `reconcile` on its own task, so the test can play the API server meanwhile.
    fn spawn_reconcile(
        obj: Frontend,
        state: &Arc<State>,
    ) -> tokio::task::JoinHandle<Result<Action, Error>> {
        tokio::spawn(reconcile(Arc::new(obj), state.clone()))
    }

    /// Drops the state, and with it every client, then checks the script is complete.
    async fn finish(state: Arc<State>, server: ApiServer) {
        drop(state);
        server.assert_no_more_requests().await;
    }

    /// A Backend with an empty spec: the tests read only its metadata.
    // TODO(user): give the spec the fields it requires, once it has some.
    fn empty_backend() -> Backend {
        Backend::new("", serde_json::from_value(serde_json::json!({})).unwrap())
    }

    /// The names of `objects`, to compare them with those expected.
    fn names<K: kube::Resource>(objects: &[Arc<K>]) -> Vec<String> {
        objects.iter().map(|o| o.name_any()).collect()
    }

    /// Empty caches, ready as after a first list that found nothing.
    fn caches() -> Caches {
        Caches {
            ready: CachesReady::new([], std::future::pending()),
            certificates: reflector::store().0,
            certificates_by_owner: Index::new(cache::controller_uid),
            backends: reflector::store().0,
            backends_by_owner: Index::new(cache::controller_uid),
            issuers: reflector::store().0,
            issuers_by_relation: Index::new(relation_of_issuer),
        }
    }

    /// A cache holding `objects`, taken into `index` too, as their watch fills both.
    fn cached<K, Key>(objects: &[&K], index: &Index<K, Key>) -> Store<K>
    where
        K: kube::Resource + Clone,
        K::DynamicType: Default + Eq + std::hash::Hash + Clone,
        Key: Eq + std::hash::Hash + Clone,
    {
        let (store, mut writer) = reflector::store();
        for object in objects {
            let event = watcher::Event::Apply((*object).clone());
            writer.apply_watcher_event(&event);
            index.apply(&event);
        }
        store
    }

    #[test]
    fn owned_certificates_are_found_by_their_owner_reference() {
        let obj = object();
        let mut owned = Certificate::default();
        owned.metadata.name = Some("owned".into());
        owned.metadata.namespace = Some("default".into());
        owned.metadata.owner_references = Some(vec![obj.controller_owner_ref(&()).unwrap()]);
        let mut stranger = owned.clone();
        stranger.metadata.name = Some("stranger".into());
        stranger.metadata.owner_references = None;
        let mut caches = caches();
        caches.certificates = cached(&[&owned, &stranger], &caches.certificates_by_owner);
        assert_eq!(names(&owned_certificates(&obj, &caches)), ["owned"]);
    }

    #[test]
    fn owned_backends_are_found_by_their_owner_reference() {
        let obj = object();
        let mut owned = empty_backend();
        owned.metadata.name = Some("owned".into());
        owned.metadata.namespace = Some("default".into());
        owned.metadata.owner_references = Some(vec![obj.controller_owner_ref(&()).unwrap()]);
        let mut stranger = owned.clone();
        stranger.metadata.name = Some("stranger".into());
        stranger.metadata.owner_references = None;
        let mut caches = caches();
        caches.backends = cached(&[&owned, &stranger], &caches.backends_by_owner);
        assert_eq!(names(&owned_backends(&obj, &caches)), ["owned"]);
    }

    #[test]
    fn issuers_are_mapped_to_the_objects_that_select_them() {
        let obj = object();
        let mut other = object();
        other.metadata.name = Some("other".into());
        let by_name = Index::new(|obj: &Frontend| Some(obj.name_any()));
        let objects = Objects {
            store: cached(&[&obj, &other], &by_name),
            by_name,
        };
        let mut issuer = Issuer::default();
        issuer.metadata.name = Some("related".into());
        issuer.metadata.namespace = Some("default".into());
        assert!(objects_for_issuer(&objects, &issuer).is_empty());

        issuer.metadata.labels = Some([(RELATION_LABEL.to_owned(), obj.name_any())].into());
        assert_eq!(
            objects_for_issuer(&objects, &issuer),
            vec![ObjectRef::from(&obj)]
        );
        let mut elsewhere = issuer.clone();
        elsewhere.metadata.namespace = Some("elsewhere".into());
        assert!(objects_for_issuer(&objects, &elsewhere).is_empty());

        let mut caches = caches();
        caches.issuers = cached(&[&issuer], &caches.issuers_by_relation);
        assert_eq!(names(&selected_issuers(&obj, &caches)), ["related"]);
        assert!(selected_issuers(&other, &caches).is_empty());
    }

    #[test]
    fn ready_condition_reports_success_and_failure() {
        let obj = object();
        let ready = ready_condition(&obj, None);
        assert_eq!(
            (
                ready.type_.as_str(),
                ready.status.as_str(),
                ready.reason.as_str()
            ),
            ("Ready", "True", "Reconciled")
        );
        assert_eq!(ready.observed_generation, Some(1));
        assert_eq!(event_type(&ready), EventType::Normal);

        let failed = ready_condition(&obj, Some(&failure()));
        assert_eq!(
            (
                failed.status.as_str(),
                failed.reason.as_str(),
                failed.message.as_str()
            ),
            ("False", "ReconcileFailed", failure().to_string().as_str())
        );
        assert_eq!(event_type(&failed), EventType::Warning);
    }

    #[tokio::test]
    async fn error_policy_backs_off_until_a_success() {
        let (state, server) = state();
        let mut obj = with_finalizer(object());
        let err = failure();
        let first = error_policy(Arc::new(obj.clone()), &err, state.clone());
        let second = error_policy(Arc::new(obj.clone()), &err, state.clone());
        assert_ne!(first, second);

        obj.status = Some(ready_since(&obj, 0));
        finished(spawn_reconcile(obj.clone(), &state))
            .await
            .unwrap();
        assert_eq!(error_policy(Arc::new(obj), &err, state.clone()), first);
        finish(state, server).await;
    }

    #[tokio::test]
    async fn first_reconcile_adds_the_finalizer() {
        let (state, mut server) = state();
        let obj = object();
        let reconciling = spawn_reconcile(obj.clone(), &state);

        let request = server.expect(Method::PATCH, &format!("{}?", url())).await;
        assert_eq!(
            request.content_type.as_deref(),
            Some("application/json-patch+json")
        );
        assert_eq!(
            request.body,
            json!([
                { "op": "test", "path": "/metadata/finalizers", "value": null },
                { "op": "add", "path": "/metadata/finalizers", "value": [FINALIZER] },
            ])
        );
        request.respond(StatusCode::OK, &with_finalizer(obj));

        // The patch triggers a watch event, which brings the next reconciliation.
        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn reconcile_applies_the_ready_status_and_announces_it() {
        let (state, mut server) = state();
        let obj = with_finalizer(object());
        let reconciling = spawn_reconcile(obj.clone(), &state);

        let request = server.expect(Method::PATCH, &status_url()).await;
        assert_eq!(
            request.content_type.as_deref(),
            Some("application/apply-patch+yaml")
        );
        let condition = &request.body["status"]["conditions"][0];
        assert_eq!(
            request.body,
            json!({
                "apiVersion": "tls.example.com/v1alpha1",
                "kind": "Frontend",
                "status": {
                    "conditions": [{
                        "type": "Ready",
                        "status": "True",
                        "reason": "Reconciled",
                        "message": "The latest spec is reconciled",
                        "observedGeneration": 1,
                        "lastTransitionTime": condition["lastTransitionTime"],
                    }],
                    "observedGeneration": 1,
                },
            })
        );
        assert!(condition["lastTransitionTime"].is_string());
        let mut stored = obj.clone();
        stored.status = Some(serde_json::from_value(request.body["status"].clone()).unwrap());
        request.respond(StatusCode::OK, &stored);

        let request = server.expect(Method::POST, EVENTS_URL).await;
        let event = &request.body;
        assert_eq!(event["type"], "Normal");
        assert_eq!(event["reason"], "Reconciled");
        assert_eq!(
            event["note"],
            "Ready is True: The latest spec is reconciled"
        );
        assert_eq!(event["reportingController"], EVENT_REPORTER);
        assert_eq!(event["regarding"]["kind"], "Frontend");
        assert_eq!(event["regarding"]["name"], "test");
        assert_eq!(
            event["regarding"]["uid"],
            obj.metadata.uid.as_deref().unwrap()
        );
        let body = event.clone();
        request.respond(StatusCode::CREATED, &body);

        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    /// One new Frontend from creation to steady state, every request counted (events aside).
    #[tokio::test]
    async fn a_new_object_reaches_steady_state_in_two_requests() {
        let (state, mut server) = state();
        let mut requests = 0;
        let obj = object();

        let reconciling = spawn_reconcile(obj.clone(), &state);
        let request = server.expect(Method::PATCH, &format!("{}?", url())).await;
        requests += 1;
        let obj = with_finalizer(obj);
        request.respond(StatusCode::OK, &obj);
        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());

        // The finalizer's watch event brings the reconciliation that writes the status.
        let reconciling = spawn_reconcile(obj.clone(), &state);
        let request = server.expect(Method::PATCH, &status_url()).await;
        requests += 1;
        let mut stored = obj.clone();
        stored.status = Some(serde_json::from_value(request.body["status"].clone()).unwrap());
        request.respond(StatusCode::OK, &stored);
        let request = server.expect(Method::POST, EVENTS_URL).await;
        let body = request.body.clone();
        request.respond(StatusCode::CREATED, &body);
        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        assert_eq!(requests, 2, "requests from creation to steady state");

        // The status's watch event, or a resync, finds nothing to change and sends nothing.
        let reconciling = spawn_reconcile(stored, &state);
        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn reconciled_object_needs_no_request() {
        let (state, server) = state();
        let mut obj = with_finalizer(object());
        obj.status = Some(ready_since(&obj, 1_700_000_000));
        let action = finished(spawn_reconcile(obj, &state)).await.unwrap();
        assert_eq!(action, Action::await_change());
        finish(state, server).await;
    }

    /// A Frontend the sharder moves to another replica is handed over, and nothing else is done
    /// with it here: its shard and drain labels are removed, at the version this replica saw.
    #[tokio::test]
    async fn drained_object_is_handed_over() {
        let (state, mut server) = state();
        let reconciling = spawn_reconcile(drained(with_finalizer(object())), &state);
        server.expect_hand_over(&url()).await;
        let action = finished(reconciling).await.unwrap();
        assert_eq!(action, Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn new_generation_updates_the_status_without_an_event() {
        let (state, mut server) = state();
        let mut obj = with_finalizer(object());
        obj.status = Some(ready_since(&obj, 1_700_000_000));
        obj.metadata.generation = Some(2);
        let reconciling = spawn_reconcile(obj.clone(), &state);

        let request = server.expect(Method::PATCH, &status_url()).await;
        let status = &request.body["status"];
        assert_eq!(status["observedGeneration"], 2);
        assert_eq!(status["conditions"][0]["observedGeneration"], 2);
        // Still Ready since the same moment: no transition.
        assert_eq!(
            status["conditions"][0]["lastTransitionTime"],
            "2023-11-14T22:13:20Z"
        );
        request.respond(StatusCode::OK, &obj);

        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn failed_status_write_fails_the_reconciliation() {
        let (state, mut server) = state();
        let obj = with_finalizer(object());
        let reconciling = spawn_reconcile(obj, &state);

        server
            .expect(Method::PATCH, &status_url())
            .await
            .respond_error(StatusCode::FORBIDDEN, "Forbidden", "status is forbidden");

        let err = finished(reconciling).await.unwrap_err();
        assert!(err.to_string().contains("status is forbidden"), "{err}");
        finish(state, server).await;
    }

    #[tokio::test]
    async fn outcomes_are_counted_in_the_metrics() {
        let (state, mut server, metrics) = state_with_metrics();
        let mut obj = with_finalizer(object());
        obj.status = Some(ready_since(&obj, 0));
        finished(spawn_reconcile(obj.clone(), &state))
            .await
            .unwrap();

        obj.metadata.generation = Some(2);
        let reconciling = spawn_reconcile(obj, &state);
        server
            .expect(Method::PATCH, &status_url())
            .await
            .respond_error(StatusCode::CONFLICT, "Conflict", "try again");
        finished(reconciling).await.unwrap_err();

        let text = metrics.encode().unwrap();
        for series in [
            r#"controller_runtime_reconcile_total{controller="frontend",result="success"} 1"#,
            r#"controller_runtime_reconcile_total{controller="frontend",result="error"} 1"#,
            r#"controller_runtime_reconcile_errors_total{controller="frontend"} 1"#,
            r#"controller_runtime_reconcile_time_seconds_count{controller="frontend"} 2"#,
        ] {
            assert!(text.contains(series), "{series} missing in:\n{text}");
        }
        finish(state, server).await;
    }

    #[tokio::test]
    async fn deleted_object_is_cleaned_up_and_released() {
        let (state, mut server) = state();
        let mut obj = with_finalizer(object());
        obj.metadata.deletion_timestamp =
            Some(Time(Timestamp::from_second(1_700_000_000).unwrap()));
        let reconciling = spawn_reconcile(obj.clone(), &state);

        let request = server.expect(Method::PATCH, &format!("{}?", url())).await;
        assert_eq!(
            request.body,
            json!([
                { "op": "test", "path": "/metadata/finalizers/0", "value": FINALIZER },
                { "op": "remove", "path": "/metadata/finalizers/0" },
            ])
        );
        obj.metadata.finalizers = None;
        request.respond(StatusCode::OK, &obj);

        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[test]
    fn status_serializes_in_camel_case_without_empty_fields() {
        let empty = serde_json::to_value(FrontendStatus::default()).unwrap();
        assert_eq!(empty, json!({}));
        let obj = object();
        let status = serde_json::to_value(ready_since(&obj, 0)).unwrap();
        assert_eq!(status["observedGeneration"], 1);
        assert_eq!(
            status["conditions"][0]["lastTransitionTime"],
            "1970-01-01T00:00:00Z"
        );
        assert!(matches!(status, Value::Object(ref fields) if fields.len() == 2));
    }
}
