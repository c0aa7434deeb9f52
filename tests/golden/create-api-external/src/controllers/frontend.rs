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

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::EventType;
use kube::runtime::finalizer::{self, Event as Finalizer, finalizer};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use rsop_runtime::controller::cache::{self, Index};
use rsop_runtime::controller::watch::{self, CachesReady, first_list};
use rsop_runtime::controller::{can_list, conditions, log_result};
use rsop_runtime::{Context, Reconciler};
use tracing::{debug, info, instrument};

use crate::api::v1alpha1::Backend;
use crate::api::v1alpha1::Frontend;
use crate::api::v1alpha1::FrontendStatus;
use crate::external::cert_manager_io::v1::Certificate;
use crate::external::cert_manager_io::v1::Issuer;

/// The controller's name in metrics, logs and events.
const CONTROLLER_NAME: &str = "frontend";
/// The finalizer that holds a deleted Frontend until [`cleanup`] has run.
///
/// It is for what owner references cannot clean up, such as state outside the cluster, and costs
/// a request when an object is created and another when it is deleted. If [`cleanup`] has nothing
/// to do, because everything a Frontend makes is owned by it, remove the finalizer and let the
/// garbage collector do the deleting, as the controllers `rsop create api --image` writes do.
pub const FINALIZER: &str = "tls.example.com/finalizer";

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
    /// The client, the metrics, the status writer.
    reconciler: Reconciler<Frontend>,
    caches: Caches,
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
    if !can_list(&api).await {
        return;
    }
    let reconciler = ctx.reconciler::<Frontend>(CONTROLLER_NAME);
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

    let state = Arc::new(State {
        reconciler: reconciler.clone(),
        caches: Caches {
            ready,
            certificates,
            certificates_by_owner,
            backends,
            backends_by_owner,
            issuers,
            issuers_by_relation,
        },
    });
    let object_events = watch::resilient(watcher(api, ctx.sharded(watcher::Config::default())));
    let object_events = cache::fill(objects_by_name.follow(object_events), objects_writer);
    // It ends at shutdown, with the cache it fills: see `Context::until_shutdown`.
    let object_events = ctx.until_shutdown(object_events).touched_objects();
    Controller::for_stream(object_events, objects)
        .owns_stream(certificate_events)
        .owns_stream(backend_events)
        .watches_stream(issuer_events, move |issuer| {
            objects_for_issuer(&objects_for_issuers, &issuer)
        })
        .with_config(ctx.controller_config())
        .graceful_shutdown_on(ctx.shutdown_signal())
        .run(reconciler.wrap(reconcile), reconciler.error_policy(), state)
        .for_each(log_result)
        .await;
}

// `finalizer` adds and removes the finalizer with a patch, and the reconciler hands an object
// over to another shard with one.
// +rsop:rbac:groups=tls.example.com,resources=frontends,verbs=patch
/// Adds the finalizer to a new Frontend, applies a live one, and cleans up a deleted one.
#[instrument(skip_all, fields(namespace = obj.namespace(), name = obj.name_any()))]
async fn reconcile(obj: Arc<Frontend>, state: Arc<State>) -> Result<Action, Error> {
    let client = state.reconciler.client().clone();
    let namespace = obj.namespace().unwrap_or_default();
    let api: Api<Frontend> = Api::namespaced(client, &namespace);
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
// +rsop:rbac:groups=tls.example.com,resources=frontends/status,verbs=patch
// +rsop:rbac:groups=events.k8s.io,resources=events,verbs=create
/// Brings the cluster to what `obj` asks for and reports the outcome in its status.
async fn apply(obj: &Frontend, state: &State) -> Result<Action, Error> {
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
    state
        .reconciler
        .write_status(obj, &status, event_type)
        .await?;
    // Changes to the Frontend trigger the next reconciliation. TODO(user): return
    // `Action::requeue(...)` instead if the state you reconcile can change without a watch event.
    synced.map(|()| Action::await_change())
}

/// Makes the cluster match `obj.spec`.
///
/// TODO(user): create or update what a Frontend stands for, with server-side apply
/// (`state.reconciler.apply`) so that every reconciliation converges, and add the RBAC markers
/// above `run` for what it touches. An error is reported in the `Ready` condition and retried with
/// backoff.
async fn sync(obj: &Frontend, state: &State) -> Result<(), Error> {
    let certificates = owned_certificates(obj, &state.caches);
    let backends = owned_backends(obj, &state.caches);
    let issuers = selected_issuers(obj, &state.caches);
    // TODO(user): bring the related objects in line with `obj`.
    // Give what it creates `obj.controller_owner_ref(&())` in `metadata.ownerReferences`: its
    // changes then come back here, `owned_certificates` and the like find it, and the
    // garbage collector deletes it with `obj`.
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

#[cfg(test)]
mod tests;
