//! The controller of `Exporter` (`monitoring.example.com/v1alpha1`).
//!
//! Each reconciliation makes sure the object carries the operator's finalizer, brings the cluster to
//! what its spec asks for, and reports the outcome in the `Ready` condition, written through the
//! status subresource with server-side apply and announced with an event when it changes. Deletion
//! waits for [`cleanup`], then the finalizer is removed.
//!
//! The controller also watches:
//! - Deployments: their owner references route their changes to the Exporter that owns them;
//! - ConfigMaps: their owner references route their changes to the Exporter that owns them;
//! - Pods: [`objects_for_pod`] maps their changes to the Exporters to reconcile.
//!
//! [`sync`] reads them from the watch caches.

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::core::v1::Pod;
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

use crate::api::v1alpha1::Exporter;
use crate::api::v1alpha1::ExporterStatus;

/// The controller's name in metrics, logs and events.
const CONTROLLER_NAME: &str = "exporter";
/// The finalizer that holds a deleted Exporter until [`cleanup`] has run.
///
/// It is for what owner references cannot clean up, such as state outside the cluster, and costs
/// a request when an object is created and another when it is deleted. If [`cleanup`] has nothing
/// to do, because everything a Exporter makes is owned by it, remove the finalizer and let the
/// garbage collector do the deleting, as the controllers `rsop create api --image` writes do.
pub const FINALIZER: &str = "monitoring.example.com/finalizer";

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
    /// The Deployments that Exporters may own, as their watch last saw them.
    deployments: Store<Deployment>,
    /// The same Deployments by the UID of their controller.
    deployments_by_owner: Index<Deployment, String>,
    /// The ConfigMaps that Exporters may own, as their watch last saw them.
    config_maps: Store<ConfigMap>,
    /// The same ConfigMaps by the UID of their controller.
    config_maps_by_owner: Index<ConfigMap, String>,
    /// The Pods that Exporters may relate to, as their watch last saw them.
    pods: Store<Pod>,
    /// The same Pods by [`relation_of_pod`].
    pods_by_relation: Index<Pod, String>,
}

/// The controller's cache of Exporters, and the index the changes of Pods are mapped
/// through.
#[derive(Clone)]
struct Objects {
    store: Store<Exporter>,
    by_name: Index<Exporter, String>,
}

/// What every reconciliation of this controller shares.
struct State {
    /// The client, the metrics, the status writer.
    reconciler: Reconciler<Exporter>,
    caches: Caches,
}

// The requests this controller sends, and no more, each marker next to its calls: `rsop manifests
// --rbac=check` finds every call in the code and names the marker a new one needs.
// +rsop:rbac:groups=monitoring.example.com,resources=exporters,verbs=list;watch
// +rsop:rbac:groups=apps,resources=deployments,verbs=list;watch
// +rsop:rbac:groups=core,resources=configmaps,verbs=list;watch
// +rsop:rbac:groups=core,resources=pods,verbs=list;watch

/// Runs the controller until the manager shuts down.
pub async fn run(ctx: Arc<Context>) {
    let api = ctx.api::<Exporter>();
    // Fail fast, with a message that says why, rather than retry a watch that cannot work.
    if !can_list(&api).await {
        return;
    }
    let reconciler = ctx.reconciler::<Exporter>(CONTROLLER_NAME);
    let (objects, objects_writer) = reflector::store();
    let objects_by_name = Index::new(|obj: &Exporter| Some(obj.name_any()));
    let (deployments, deployments_writer) = reflector::store();
    let deployments_by_owner = Index::new(cache::controller_uid);
    let (config_maps, config_maps_writer) = reflector::store();
    let config_maps_by_owner = Index::new(cache::controller_uid);
    let (pods, pods_writer) = reflector::store();
    let pods_by_relation = Index::new(relation_of_pod);
    // Owner references route the changes of owned Deployments to their Exporter.
    let deployment_events =
        watch::resilient(watcher(ctx.api::<Deployment>(), watcher::Config::default()));
    let deployment_events = deployments_by_owner.follow(deployment_events);
    let deployment_events = cache::fill(deployment_events, deployments_writer).touched_objects();
    // Owner references route the changes of owned ConfigMaps to their Exporter.
    let config_map_events =
        watch::resilient(watcher(ctx.api::<ConfigMap>(), watcher::Config::default()));
    let config_map_events = config_maps_by_owner.follow(config_map_events);
    let config_map_events = cache::fill(config_map_events, config_maps_writer).touched_objects();
    // Pods are not owned: `objects_for_pod` maps each change to the Exporters to reconcile.
    // TODO(user): watch only the Pods that can matter, with a label selector in
    // `watcher::Config`: the cache holds every one the manager may see.
    let pod_events = watch::resilient(watcher(ctx.api::<Pod>(), watcher::Config::default()));
    let pod_events = pods_by_relation.follow(pod_events);
    let pod_events = cache::fill(pod_events, pods_writer).touched_objects();
    let ready = CachesReady::new(
        [
            first_list(&deployments),
            first_list(&config_maps),
            first_list(&pods),
        ],
        ctx.shutdown_signal(),
    );
    let objects_for_pods = Objects {
        store: objects.clone(),
        by_name: objects_by_name.clone(),
    };

    let state = Arc::new(State {
        reconciler: reconciler.clone(),
        caches: Caches {
            ready,
            deployments,
            deployments_by_owner,
            config_maps,
            config_maps_by_owner,
            pods,
            pods_by_relation,
        },
    });
    let object_events = watch::resilient(watcher(api, ctx.sharded(watcher::Config::default())));
    let object_events = cache::fill(objects_by_name.follow(object_events), objects_writer);
    // It ends at shutdown, with the cache it fills: see `Context::until_shutdown`.
    let object_events = ctx.until_shutdown(object_events).touched_objects();
    Controller::for_stream(object_events, objects)
        .owns_stream(deployment_events)
        .owns_stream(config_map_events)
        .watches_stream(pod_events, move |pod| {
            objects_for_pod(&objects_for_pods, &pod)
        })
        .with_config(ctx.controller_config())
        .graceful_shutdown_on(ctx.shutdown_signal())
        .run(reconciler.wrap(reconcile), reconciler.error_policy(), state)
        .for_each(log_result)
        .await;
}

// `finalizer` adds and removes the finalizer with a patch, and the reconciler hands an object
// over to another shard with one.
// +rsop:rbac:groups=monitoring.example.com,resources=exporters,verbs=patch
/// Adds the finalizer to a new Exporter, applies a live one, and cleans up a deleted one.
#[instrument(skip_all, fields(namespace = obj.namespace(), name = obj.name_any()))]
async fn reconcile(obj: Arc<Exporter>, state: Arc<State>) -> Result<Action, Error> {
    let client = state.reconciler.client().clone();
    let namespace = obj.namespace().unwrap_or_default();
    let api: Api<Exporter> = Api::namespaced(client, &namespace);
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
// +rsop:rbac:groups=monitoring.example.com,resources=exporters/status,verbs=patch
// +rsop:rbac:groups=events.k8s.io,resources=events,verbs=create
/// Brings the cluster to what `obj` asks for and reports the outcome in its status.
async fn apply(obj: &Exporter, state: &State) -> Result<Action, Error> {
    // The caches start empty: wait for their first list, so that an object not listed yet is not
    // taken for a missing one. If the manager stops first, the next one reconciles `obj`.
    if !state.caches.ready.wait().await {
        return Ok(Action::await_change());
    }
    let synced = sync(obj, state).await;
    let status = ExporterStatus {
        conditions: vec![ready_condition(obj, synced.as_ref().err())],
        observed_generation: obj.metadata.generation,
    };
    state
        .reconciler
        .write_status(obj, &status, event_type)
        .await?;
    // Changes to the Exporter trigger the next reconciliation. TODO(user): return
    // `Action::requeue(...)` instead if the state you reconcile can change without a watch event.
    synced.map(|()| Action::await_change())
}

/// Makes the cluster match `obj.spec`.
///
/// TODO(user): create or update what a Exporter stands for, with server-side apply
/// (`state.reconciler.apply`) so that every reconciliation converges, and add the RBAC markers
/// above `run` for what it touches. An error is reported in the `Ready` condition and retried with
/// backoff.
async fn sync(obj: &Exporter, state: &State) -> Result<(), Error> {
    let deployments = owned_deployments(obj, &state.caches);
    let config_maps = owned_config_maps(obj, &state.caches);
    let pods = selected_pods(obj, &state.caches);
    // TODO(user): bring the related objects in line with `obj`.
    // Give what it creates `obj.controller_owner_ref(&())` in `metadata.ownerReferences`: its
    // changes then come back here, `owned_deployments` and the like find it, and the
    // garbage collector deletes it with `obj`.
    debug!(
        deployments = deployments.len(),
        config_maps = config_maps.len(),
        pods = pods.len(),
        "related objects in the caches"
    );
    Ok(())
}

/// The Deployments in the cache that `obj` controls: those whose controller owner reference is
/// `obj.controller_owner_ref(&())`, as the ones it creates must have.
fn owned_deployments(obj: &Exporter, caches: &Caches) -> Vec<Arc<Deployment>> {
    let Some(uid) = obj.uid() else {
        return Vec::new();
    };
    caches
        .deployments_by_owner
        .get(&uid)
        .iter()
        .filter_map(|deployment| caches.deployments.get(deployment))
        .collect()
}

/// The ConfigMaps in the cache that `obj` controls: those whose controller owner reference is
/// `obj.controller_owner_ref(&())`, as the ones it creates must have.
fn owned_config_maps(obj: &Exporter, caches: &Caches) -> Vec<Arc<ConfigMap>> {
    let Some(uid) = obj.uid() else {
        return Vec::new();
    };
    caches
        .config_maps_by_owner
        .get(&uid)
        .iter()
        .filter_map(|config_map| caches.config_maps.get(config_map))
        .collect()
}

/// The label that relates Pods to Exporters in the scaffold: its value is
/// the name of the Exporter.
const RELATION_LABEL: &str = "monitoring.example.com/exporter";

/// The name of the Exporters `pod` may relate to: what both caches are indexed by, so that
/// a change of either finds the other without a scan. [`selects_pod`] then decides.
///
/// TODO(user): say which Pods relate to which Exporters, here and in
/// [`selects_pod`]. The scaffold relates those labelled [`RELATION_LABEL`] with the name
/// of the Exporter, in its namespace.
fn relation_of_pod(pod: &Pod) -> Option<String> {
    pod.labels().get(RELATION_LABEL).cloned()
}

/// Whether `obj` relates to `pod`, one of the Pods whose relation names it: a change
/// of the Pod then reconciles `obj`, and [`selected_pods`] hands the Pod to its
/// reconciliation.
fn selects_pod(obj: &Exporter, pod: &Pod) -> bool {
    pod.namespace() == obj.namespace()
        && relation_of_pod(pod).is_some_and(|name| name == obj.name_any())
}

/// The Exporters to reconcile when `pod` changes: those in the controller's cache that
/// select it.
fn objects_for_pod(objects: &Objects, pod: &Pod) -> Vec<ObjectRef<Exporter>> {
    let Some(name) = relation_of_pod(pod) else {
        return Vec::new();
    };
    objects
        .by_name
        .get(&name)
        .iter()
        .filter_map(|obj| objects.store.get(obj))
        .filter(|obj| selects_pod(obj, pod))
        .map(|obj| ObjectRef::from(&*obj))
        .collect()
}

/// The Pods in the cache that `obj` selects.
fn selected_pods(obj: &Exporter, caches: &Caches) -> Vec<Arc<Pod>> {
    caches
        .pods_by_relation
        .get(&obj.name_any())
        .iter()
        .filter_map(|pod| caches.pods.get(pod))
        .filter(|pod| selects_pod(obj, pod))
        .collect()
}

/// Releases what a deleted Exporter holds; the finalizer goes once this succeeds.
///
/// TODO(user): release what lives outside the cluster or is not owned through owner references;
/// the garbage collector deletes owned objects. An error keeps the finalizer and is retried.
async fn cleanup(_obj: &Exporter, _state: &State) -> Result<Action, Error> {
    info!("cleaned up");
    Ok(Action::await_change())
}

/// The `Ready` condition after a reconciliation that ended with `failure`.
fn ready_condition(obj: &Exporter, failure: Option<&Error>) -> Condition {
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
