//! The Deployment controller's tests, on kube-rs's mock client (`rsop_runtime::testing`): they
//! answer the controller's requests as the API server would, and run without a cluster.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::Resource;
use rsop_runtime::testing::{ApiServer, finished, mock_client};

use super::*;

/// A Deployment as the API server returns it.
fn object() -> Deployment {
    let mut obj = Deployment::default();
    obj.metadata.name = Some("test".into());
    obj.metadata.namespace = Some("default".into());
    obj.metadata.uid = Some("6ac0d01a-8fda-4b94-a8ec-6b8e0e4a39f2".into());
    obj.metadata.generation = Some(1);
    obj
}

/// The controller's state, and the mock API server its client would reach.
fn state() -> (Arc<State>, ApiServer) {
    let (_client, server) = mock_client();
    let state = State { caches: caches() };
    (Arc::new(state), server)
}

/// Drops the state, and with it every client, then checks the script is complete.
async fn finish(state: Arc<State>, server: ApiServer) {
    drop(state);
    server.assert_no_more_requests().await;
}

/// The names of `objects`, to compare them with those expected.
fn names<K: kube::Resource>(objects: &[Arc<K>]) -> Vec<String> {
    objects.iter().map(|o| o.name_any()).collect()
}

/// Empty caches, ready as after a first list that found nothing.
fn caches() -> Caches {
    Caches {
        ready: CachesReady::new([], std::future::pending()),
        horizontal_pod_autoscalers: reflector::store().0,
        horizontal_pod_autoscalers_by_owner: Index::new(cache::controller_uid),
        pods: reflector::store().0,
        pods_by_relation: Index::new(relation_of_pod),
        nodes: reflector::store().0,
        nodes_by_relation: Index::new(relation_of_node),
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
fn owned_horizontal_pod_autoscalers_are_found_by_their_owner_reference() {
    let obj = object();
    let mut owned = HorizontalPodAutoscaler::default();
    owned.metadata.name = Some("owned".into());
    owned.metadata.namespace = Some("default".into());
    owned.metadata.owner_references = Some(vec![obj.controller_owner_ref(&()).unwrap()]);
    let mut stranger = owned.clone();
    stranger.metadata.name = Some("stranger".into());
    stranger.metadata.owner_references = None;
    let mut caches = caches();
    caches.horizontal_pod_autoscalers = cached(
        &[&owned, &stranger],
        &caches.horizontal_pod_autoscalers_by_owner,
    );
    assert_eq!(
        names(&owned_horizontal_pod_autoscalers(&obj, &caches)),
        ["owned"]
    );
}

#[test]
fn pods_are_mapped_to_the_objects_that_select_them() {
    let obj = object();
    let mut other = object();
    other.metadata.name = Some("other".into());
    let by_name = Index::new(|obj: &Deployment| Some(obj.name_any()));
    let objects = Objects {
        store: cached(&[&obj, &other], &by_name),
        by_name,
    };
    let mut pod = Pod::default();
    pod.metadata.name = Some("related".into());
    pod.metadata.namespace = Some("default".into());
    assert!(objects_for_pod(&objects, &pod).is_empty());

    pod.metadata.labels = Some([(RELATION_LABEL.to_owned(), obj.name_any())].into());
    assert_eq!(objects_for_pod(&objects, &pod), vec![ObjectRef::from(&obj)]);
    let mut elsewhere = pod.clone();
    elsewhere.metadata.namespace = Some("elsewhere".into());
    assert!(objects_for_pod(&objects, &elsewhere).is_empty());

    let mut caches = caches();
    caches.pods = cached(&[&pod], &caches.pods_by_relation);
    assert_eq!(names(&selected_pods(&obj, &caches)), ["related"]);
    assert!(selected_pods(&other, &caches).is_empty());
}

#[test]
fn nodes_are_mapped_to_the_objects_that_select_them() {
    let obj = object();
    let mut other = object();
    other.metadata.name = Some("other".into());
    let by_name = Index::new(|obj: &Deployment| Some(obj.name_any()));
    let objects = Objects {
        store: cached(&[&obj, &other], &by_name),
        by_name,
    };
    let mut node = Node::default();
    node.metadata.name = Some("related".into());
    assert!(objects_for_node(&objects, &node).is_empty());

    node.metadata.labels = Some([(RELATION_LABEL.to_owned(), obj.name_any())].into());
    assert_eq!(
        objects_for_node(&objects, &node),
        vec![ObjectRef::from(&obj)]
    );

    let mut caches = caches();
    caches.nodes = cached(&[&node], &caches.nodes_by_relation);
    assert_eq!(names(&selected_nodes(&obj, &caches)), ["related"]);
    assert!(selected_nodes(&other, &caches).is_empty());
}

#[tokio::test]
async fn reconcile_sends_no_request() {
    let (state, server) = state();
    let reconciling = tokio::spawn(reconcile(Arc::new(object()), state.clone()));
    assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
    finish(state, server).await;
}

#[tokio::test]
async fn a_deleted_deployment_is_left_alone() {
    let (state, server) = state();
    let mut obj = object();
    obj.metadata.deletion_timestamp = Some(Time(Timestamp::from_second(1_700_000_000).unwrap()));
    let reconciling = tokio::spawn(reconcile(Arc::new(obj), state.clone()));
    assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
    finish(state, server).await;
}
