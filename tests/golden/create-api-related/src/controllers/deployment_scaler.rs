//! The controller `deployment-scaler` of `Deployment` (`apps/v1`), a kind Kubernetes defines:
//! the project has no types and no CRD for it, only this controller on k8s-openapi's type.
//!
//! Each reconciliation gets a Deployment from the controller's watch cache and hands it to
//! [`apply`], which you complete; the objects it owns or watches come from watch caches
//! too. The scaffold writes nothing, so it sends no request but one, to hand an object over
//! to another replica when the manager is sharded (`--shards`).

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::ResourceExt;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};

use kube::runtime::{WatchStreamExt, watcher};
use rsop_runtime::Context;
use rsop_runtime::controller::cache::{self, Index};
use rsop_runtime::controller::watch::{self, CachesReady, first_list};
use rsop_runtime::controller::{can_list, log_result};
use tracing::{debug, instrument};

/// The controller's name in metrics and logs.
const CONTROLLER_NAME: &str = "deployment-scaler";

/// Why a reconciliation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the Kubernetes API failed.
    #[error("{}", rsop_runtime::controller::api_error_message(.0))]
    Kube(#[from] kube::Error),
}

/// The watch caches of the kinds this controller owns or watches: a reconciliation reads
/// them instead of listing, so finding what changed costs no request.
struct Caches {
    /// Whether every cache below has had its first list.
    ready: CachesReady,
    /// The HorizontalPodAutoscalers that Deployments may own, as their watch last saw them.
    horizontal_pod_autoscalers: Store<HorizontalPodAutoscaler>,
    /// The same HorizontalPodAutoscalers by the UID of their controller.
    horizontal_pod_autoscalers_by_owner: Index<HorizontalPodAutoscaler, String>,
    /// The Pods that Deployments may relate to, as their watch last saw them.
    pods: Store<Pod>,
    /// The same Pods by [`relation_of_pod`].
    pods_by_relation: Index<Pod, String>,
    /// The Nodes that Deployments may relate to, as their watch last saw them.
    nodes: Store<Node>,
    /// The same Nodes by [`relation_of_node`].
    nodes_by_relation: Index<Node, String>,
}

/// The controller's cache of Deployments, and the index the changes of Pods and Nodes are mapped
/// through.
#[derive(Clone)]
struct Objects {
    store: Store<Deployment>,
    by_name: Index<Deployment, String>,
}

/// What every reconciliation of this controller shares. TODO(user): keep the controller's
/// `Reconciler` here to write with (`Reconciler::apply`, server-side apply of what the Deployment
/// calls for).
struct State {
    caches: Caches,
}

// The requests this controller sends, and no more: `rsop manifests --rbac=check` finds every call
// in the code and names the marker a new one needs.
// +rsop:rbac:groups=apps,resources=deployments,verbs=list;watch
// +rsop:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=list;watch
// +rsop:rbac:groups=core,resources=pods,verbs=list;watch
// +rsop:rbac:groups=core,resources=nodes,verbs=list;watch

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
    let objects_by_name = Index::new(|obj: &Deployment| Some(obj.name_any()));
    let (horizontal_pod_autoscalers, horizontal_pod_autoscalers_writer) = reflector::store();
    let horizontal_pod_autoscalers_by_owner = Index::new(cache::controller_uid);
    let (pods, pods_writer) = reflector::store();
    let pods_by_relation = Index::new(relation_of_pod);
    let (nodes, nodes_writer) = reflector::store();
    let nodes_by_relation = Index::new(relation_of_node);
    // Owner references route the changes of owned HorizontalPodAutoscalers to their Deployment.
    let horizontal_pod_autoscaler_events = watch::resilient(watcher(
        ctx.api::<HorizontalPodAutoscaler>(),
        watcher::Config::default(),
    ));
    let horizontal_pod_autoscaler_events =
        horizontal_pod_autoscalers_by_owner.follow(horizontal_pod_autoscaler_events);
    let horizontal_pod_autoscaler_events = cache::fill(
        horizontal_pod_autoscaler_events,
        horizontal_pod_autoscalers_writer,
    )
    .touched_objects();
    // Pods are not owned: `objects_for_pod` maps each change to the Deployments to reconcile.
    // TODO(user): watch only the Pods that can matter, with a label selector in
    // `watcher::Config`: the cache holds every one the manager may see.
    let pod_events = watch::resilient(watcher(ctx.api::<Pod>(), watcher::Config::default()));
    let pod_events = pods_by_relation.follow(pod_events);
    let pod_events = cache::fill(pod_events, pods_writer).touched_objects();
    // Nodes are not owned: `objects_for_node` maps each change to the Deployments to reconcile.
    // TODO(user): watch only the Nodes that can matter, with a label selector in
    // `watcher::Config`: the cache holds every one the manager may see.
    let node_events = watch::resilient(watcher(
        Api::<Node>::all(ctx.client.clone()),
        watcher::Config::default(),
    ));
    let node_events = nodes_by_relation.follow(node_events);
    let node_events = cache::fill(node_events, nodes_writer).touched_objects();
    let ready = CachesReady::new(
        [
            first_list(&horizontal_pod_autoscalers),
            first_list(&pods),
            first_list(&nodes),
        ],
        ctx.shutdown_signal(),
    );
    let objects_for_pods = Objects {
        store: objects.clone(),
        by_name: objects_by_name.clone(),
    };
    let objects_for_nodes = Objects {
        store: objects.clone(),
        by_name: objects_by_name.clone(),
    };

    let reconciler = ctx.reconciler::<Deployment>(CONTROLLER_NAME);
    let state = Arc::new(State {
        caches: Caches {
            ready,
            horizontal_pod_autoscalers,
            horizontal_pod_autoscalers_by_owner,
            pods,
            pods_by_relation,
            nodes,
            nodes_by_relation,
        },
    });
    let object_events = watch::resilient(watcher(api, ctx.sharded(watcher::Config::default())));
    let object_events = cache::fill(objects_by_name.follow(object_events), objects_writer);
    // It ends at shutdown, with the cache it fills: see `Context::until_shutdown`.
    let object_events = ctx.until_shutdown(object_events).touched_objects();
    Controller::for_stream(object_events, objects)
        .owns_stream(horizontal_pod_autoscaler_events)
        .watches_stream(pod_events, move |pod| {
            objects_for_pod(&objects_for_pods, &pod)
        })
        .watches_stream(node_events, move |node| {
            objects_for_node(&objects_for_nodes, &node)
        })
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
async fn apply(obj: &Deployment, state: &State) -> Result<Action, Error> {
    // A Deployment being deleted is left to its owners and the garbage collector.
    if obj.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    // The caches start empty: wait for their first list, so that an object not listed yet is not
    // taken for a missing one. If the manager stops first, the next one reconciles `obj`.
    if !state.caches.ready.wait().await {
        return Ok(Action::await_change());
    }
    let horizontal_pod_autoscalers = owned_horizontal_pod_autoscalers(obj, &state.caches);
    let pods = selected_pods(obj, &state.caches);
    let nodes = selected_nodes(obj, &state.caches);
    // TODO(user): bring the related objects in line with `obj`.
    // Give what it creates `obj.controller_owner_ref(&())` in `metadata.ownerReferences`: its
    // changes then come back here, `owned_horizontal_pod_autoscalers` and the like find it, and the
    // garbage collector deletes it with `obj`.
    debug!(
        horizontal_pod_autoscalers = horizontal_pod_autoscalers.len(),
        pods = pods.len(),
        nodes = nodes.len(),
        "related objects in the caches"
    );
    // Changes to the Deployment and its related objects trigger the next reconciliation. TODO(user):
    // return `Action::requeue(...)` instead if what you reconcile can change without a watch event.
    Ok(Action::await_change())
}

/// The HorizontalPodAutoscalers in the cache that `obj` controls: those whose controller owner reference is
/// `obj.controller_owner_ref(&())`, as the ones it creates must have.
fn owned_horizontal_pod_autoscalers(
    obj: &Deployment,
    caches: &Caches,
) -> Vec<Arc<HorizontalPodAutoscaler>> {
    let Some(uid) = obj.uid() else {
        return Vec::new();
    };
    caches
        .horizontal_pod_autoscalers_by_owner
        .get(&uid)
        .iter()
        .filter_map(|horizontal_pod_autoscaler| {
            caches
                .horizontal_pod_autoscalers
                .get(horizontal_pod_autoscaler)
        })
        .collect()
}

/// The label that relates Pods and Nodes to Deployments in the scaffold: its value is
/// the name of the Deployment.
const RELATION_LABEL: &str = "example.com/deployment-scaler";

/// The name of the Deployments `pod` may relate to: what both caches are indexed by, so that
/// a change of either finds the other without a scan. [`selects_pod`] then decides.
///
/// TODO(user): say which Pods relate to which Deployments, here and in
/// [`selects_pod`]. The scaffold relates those labelled [`RELATION_LABEL`] with the name
/// of the Deployment, in its namespace.
fn relation_of_pod(pod: &Pod) -> Option<String> {
    pod.labels().get(RELATION_LABEL).cloned()
}

/// Whether `obj` relates to `pod`, one of the Pods whose relation names it: a change
/// of the Pod then reconciles `obj`, and [`selected_pods`] hands the Pod to its
/// reconciliation.
fn selects_pod(obj: &Deployment, pod: &Pod) -> bool {
    pod.namespace() == obj.namespace()
        && relation_of_pod(pod).is_some_and(|name| name == obj.name_any())
}

/// The Deployments to reconcile when `pod` changes: those in the controller's cache that
/// select it.
fn objects_for_pod(objects: &Objects, pod: &Pod) -> Vec<ObjectRef<Deployment>> {
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
fn selected_pods(obj: &Deployment, caches: &Caches) -> Vec<Arc<Pod>> {
    caches
        .pods_by_relation
        .get(&obj.name_any())
        .iter()
        .filter_map(|pod| caches.pods.get(pod))
        .filter(|pod| selects_pod(obj, pod))
        .collect()
}

/// The name of the Deployments `node` may relate to: what both caches are indexed by, so that
/// a change of either finds the other without a scan. [`selects_node`] then decides.
///
/// TODO(user): say which Nodes relate to which Deployments, here and in
/// [`selects_node`]. The scaffold relates those labelled [`RELATION_LABEL`] with the name
/// of the Deployment.
fn relation_of_node(node: &Node) -> Option<String> {
    node.labels().get(RELATION_LABEL).cloned()
}

/// Whether `obj` relates to `node`, one of the Nodes whose relation names it: a change
/// of the Node then reconciles `obj`, and [`selected_nodes`] hands the Node to its
/// reconciliation.
fn selects_node(obj: &Deployment, node: &Node) -> bool {
    relation_of_node(node).is_some_and(|name| name == obj.name_any())
}

/// The Deployments to reconcile when `node` changes: those in the controller's cache that
/// select it.
fn objects_for_node(objects: &Objects, node: &Node) -> Vec<ObjectRef<Deployment>> {
    let Some(name) = relation_of_node(node) else {
        return Vec::new();
    };
    objects
        .by_name
        .get(&name)
        .iter()
        .filter_map(|obj| objects.store.get(obj))
        .filter(|obj| selects_node(obj, node))
        .map(|obj| ObjectRef::from(&*obj))
        .collect()
}

/// The Nodes in the cache that `obj` selects.
fn selected_nodes(obj: &Deployment, caches: &Caches) -> Vec<Arc<Node>> {
    caches
        .nodes_by_relation
        .get(&obj.name_any())
        .iter()
        .filter_map(|node| caches.nodes.get(node))
        .filter(|node| selects_node(obj, node))
        .collect()
}

#[cfg(test)]
mod tests;
