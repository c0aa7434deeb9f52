//! The Memcached controller's tests, on kube-rs's mock client (`crate::manager::testing`):
//! they answer the controller's requests as the API server would, and run without a cluster.

use std::time::Duration;

use http::{Method, StatusCode};
use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, Time};
use k8s_openapi::jiff::Timestamp;
use kube::core::PartialObjectMetaExt;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher::Event;
use tokio::task::JoinHandle;

use super::*;
use crate::api::v1alpha1::MemcachedSpec;
use crate::manager::context::Shutdown;
use crate::manager::metrics::Metrics;
use crate::manager::testing::{ApiServer, Request, drained, finished, mock_client};
use crate::manager::{Controllers, supervise};

/// Where the client reads and writes the test object.
fn url() -> String {
    let collection = Memcached::url_path(&(), Some("default"));
    format!("{collection}/test")
}

/// Where the controller applies the test object's Deployment.
fn apply_url() -> String {
    format!("{DEPLOYMENT_URL}?&force=true&fieldManager={FIELD_MANAGER}")
}

/// Where the controller applies the test object's status.
fn status_url() -> String {
    format!("{}/status?&force=true&fieldManager={FIELD_MANAGER}", url())
}
const DEPLOYMENT_URL: &str = "/apis/apps/v1/namespaces/default/deployments/test";
const EVENTS_URL: &str = "/apis/events.k8s.io/v1/namespaces/default/events?";
const UID: &str = "6ac0d01a-8fda-4b94-a8ec-6b8e0e4a39f2";
/// The namespace the manager watches: all of them.
const WATCH_NAMESPACE: Option<&str> = None;

/// A new Memcached of 3 pods as the API server returns it: no status yet.
fn object() -> Memcached {
    let spec: MemcachedSpec = serde_json::from_value(json!({ "size": 3 })).unwrap();
    let mut obj = Memcached::new("test", spec);
    obj.metadata.namespace = Some("default".into());
    obj.metadata.uid = Some(UID.into());
    obj.metadata.generation = Some(1);
    obj
}

fn owner(obj: &Memcached) -> OwnerReference {
    obj.controller_owner_ref(&()).unwrap()
}

/// The Deployment of `obj` as the Deployment controller reports it.
fn deployment(obj: &Memcached, status: DeploymentStatus) -> Deployment {
    let mut deployment = stamped(desired_deployment(obj, owner(obj)));
    deployment.metadata.generation = Some(1);
    deployment.status = Some(status);
    deployment
}

fn rolled_out(pods: i32) -> DeploymentStatus {
    DeploymentStatus {
        observed_generation: Some(1),
        replicas: Some(pods),
        updated_replicas: Some(pods),
        ready_replicas: Some(pods),
        available_replicas: Some(pods),
        ..DeploymentStatus::default()
    }
}

fn deployment_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
) -> DeploymentCondition {
    DeploymentCondition {
        type_: type_.into(),
        status: status.into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        ..DeploymentCondition::default()
    }
}

/// `(type, status, reason)` of each condition, for compact assertions.
fn summary(conditions: &[Condition]) -> Vec<(&str, &str, &str)> {
    conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.status.as_str(), c.reason.as_str()))
        .collect()
}

/// The controller's state on a mock API server, with the writers that fill its caches as its
/// watches would.
struct Fixture {
    state: Arc<State>,
    server: ApiServer,
    deployments: Writer<Deployment>,
    pods: Writer<PartialObjectMeta<Pod>>,
}

fn fixture() -> Fixture {
    let (client, server) = mock_client();
    let (deployments_reader, mut deployments) = reflector::store();
    let (pods_reader, mut pods) = reflector::store();
    // Both caches have had their first list.
    deployments.apply_watcher_event(&Event::Init);
    deployments.apply_watcher_event(&Event::InitDone);
    pods.apply_watcher_event(&Event::Init);
    pods.apply_watcher_event(&Event::InitDone);
    let metrics = Metrics::new().controller(CONTROLLER_NAME);
    let state = State::new(
        client,
        metrics,
        deployments_reader,
        pods_reader,
        Index::new(pod_instance),
        std::future::pending(),
    );
    Fixture {
        state: Arc::new(state),
        server,
        deployments,
        pods,
    }
}

impl Fixture {
    /// The Deployment watch sees `deployment`.
    fn deployment_seen(&mut self, deployment: Deployment) {
        self.deployments
            .apply_watcher_event(&Event::Apply(deployment));
    }

    /// The pod watch sees a pod of `obj` called `name`.
    fn pod_seen(&mut self, obj: &Memcached, name: &str) {
        let pod = ObjectMeta {
            name: Some(name.into()),
            namespace: obj.metadata.namespace.clone(),
            labels: Some(labels(obj)),
            ..ObjectMeta::default()
        }
        .into_response_partial();
        let event = Event::Apply(pod);
        self.pods.apply_watcher_event(&event);
        self.state.pods_by_instance.apply(&event);
    }

    /// Runs `reconcile` on its own task, so the test can play the API server meanwhile.
    fn spawn_reconcile(&self, obj: &Memcached) -> JoinHandle<Result<Action, Error>> {
        tokio::spawn(reconcile(Arc::new(obj.clone()), self.state.clone()))
    }

    /// Expects the status of `obj` to be applied and answers it; returns `obj` as now stored.
    async fn answer_status(&mut self, obj: &Memcached) -> Memcached {
        let request = self.server.expect(Method::PATCH, &status_url()).await;
        assert_eq!(request.body["kind"], "Memcached");
        let mut stored = obj.clone();
        stored.status = Some(serde_json::from_value(request.body["status"].clone()).unwrap());
        request.respond(StatusCode::OK, &stored);
        stored
    }

    /// Drops the state, and with it every client, then checks the script is complete.
    async fn finish(self) {
        drop(self.state);
        self.server.assert_no_more_requests().await;
    }
}

/// Answers the event for each `(type, reason)`, in order.
async fn answer_events(server: &mut ApiServer, expected: &[(&str, &str)]) {
    for (type_, reason) in expected {
        let request = server.expect(Method::POST, EVENTS_URL).await;
        assert_eq!(
            (&request.body["type"], &request.body["reason"]),
            (&json!(type_), &json!(reason))
        );
        assert_eq!(request.body["regarding"]["uid"], UID);
        let body = request.body.clone();
        request.respond(StatusCode::CREATED, &body);
    }
}

#[test]
fn image_defaults_to_the_scaffolded_one() {
    let obj = object();
    let scaffolded = "memcached:1.6.26-alpine";
    assert_eq!(obj.spec.image, scaffolded);
    assert_eq!(obj.spec.container_port, Some(11211));
    let spec = serde_json::to_value(&obj.spec).unwrap();
    assert_eq!(spec["size"], 3);
    assert_eq!(spec["image"], obj.spec.image);
    assert_eq!(spec["containerPort"], 11211);
}

#[test]
fn desired_deployment_runs_the_image_at_the_asked_size() {
    let obj = object();
    let deployment = desired_deployment(&obj, owner(&obj));
    let expected_labels = BTreeMap::from([
        (NAME_LABEL.to_owned(), APP_NAME.to_owned()),
        ("app.kubernetes.io/instance".to_owned(), "test".to_owned()),
        (MANAGED_BY_LABEL.to_owned(), FIELD_MANAGER.to_owned()),
    ]);
    assert_eq!(deployment.metadata.name.as_deref(), Some("test"));
    assert_eq!(deployment.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(deployment.metadata.labels.as_ref(), Some(&expected_labels));
    let owners = deployment.metadata.owner_references.as_deref().unwrap();
    assert_eq!(owners.len(), 1);
    assert_eq!(
        (
            owners[0].kind.as_str(),
            owners[0].uid.as_str(),
            owners[0].controller
        ),
        ("Memcached", UID, Some(true))
    );

    let spec = deployment.spec.unwrap();
    assert_eq!(spec.replicas, Some(3));
    let selector = spec.selector.match_labels.unwrap();
    assert_eq!(
        selector.len(),
        2,
        "the selector must not hold mutable labels"
    );
    assert!(
        selector
            .iter()
            .all(|(k, v)| expected_labels.get(k) == Some(v))
    );
    let template = spec.template;
    assert_eq!(template.metadata.unwrap().labels, Some(expected_labels));
    let pod = template.spec.unwrap();
    assert_eq!(pod.containers.len(), 1);
    let container = &pod.containers[0];
    assert_eq!(container.name, "memcached");
    assert_eq!(container.image.as_ref(), Some(&obj.spec.image));
    assert!(container.ports.is_some());
}

#[test]
fn desired_deployment_follows_the_spec() {
    let mut obj = object();
    obj.spec.size = 0;
    obj.spec.image = "registry.example.com/memcached:1.6".into();
    obj.spec.container_port = Some(11211);
    let pod = desired_deployment(&obj, owner(&obj)).spec.unwrap();
    assert_eq!(pod.replicas, Some(0));
    let container = &pod.template.spec.unwrap().containers[0];
    assert_eq!(
        container.image.as_deref(),
        Some("registry.example.com/memcached:1.6")
    );
    assert_eq!(
        serde_json::to_value(&container.ports).unwrap(),
        json!([{ "containerPort": 11211, "protocol": "TCP" }])
    );
}

#[test]
fn desired_deployment_meets_the_restricted_pod_security_standard() {
    let obj = object();
    let pod = desired_deployment(&obj, owner(&obj))
        .spec
        .unwrap()
        .template
        .spec
        .unwrap();
    assert_eq!(
        serde_json::to_value(&pod.security_context).unwrap(),
        json!({
            "runAsNonRoot": true,
            "runAsUser": 1001,
            "seccompProfile": { "type": "RuntimeDefault" },
        })
    );
    assert_eq!(
        serde_json::to_value(&pod.containers[0].security_context).unwrap(),
        json!({
            "allowPrivilegeEscalation": false,
            "capabilities": { "drop": ["ALL"] },
        })
    );
}

#[test]
fn rolled_out_deployment_is_available() {
    let obj = object();
    let conditions = deployment_conditions(&obj, &deployment(&obj, rolled_out(3)));
    assert_eq!(
        summary(&conditions),
        [
            ("Available", "True", "PodsReady"),
            ("Progressing", "False", "RolloutComplete"),
            ("Degraded", "False", "Healthy"),
        ]
    );
    assert_eq!(conditions[0].message, "3 of 3 pods are ready");
    assert!(conditions.iter().all(|c| c.observed_generation == Some(1)));
}

#[test]
fn rolling_deployment_is_progressing() {
    let obj = object();
    let status = DeploymentStatus {
        ready_replicas: Some(1),
        updated_replicas: Some(2),
        ..rolled_out(3)
    };
    let conditions = deployment_conditions(&obj, &deployment(&obj, status));
    assert_eq!(
        summary(&conditions),
        [
            ("Available", "False", "PodsNotReady"),
            ("Progressing", "True", "RollingOut"),
            ("Degraded", "False", "Healthy"),
        ]
    );
    assert_eq!(
        conditions[1].message,
        "2 of 3 pods are up to date, 1 ready, 3 in all"
    );

    // Counts from before the Deployment controller saw the latest spec prove nothing.
    let mut stale = deployment(&obj, rolled_out(3));
    stale.metadata.generation = Some(2);
    let conditions = deployment_conditions(&obj, &stale);
    assert_eq!(conditions[1].status, "True");
}

#[test]
fn stuck_or_failing_deployment_is_degraded() {
    let obj = object();
    let stuck = DeploymentStatus {
        ready_replicas: Some(0),
        conditions: Some(vec![deployment_condition(
            "Progressing",
            "False",
            "ProgressDeadlineExceeded",
            "ReplicaSet \"test-5d4f\" has timed out progressing.",
        )]),
        ..rolled_out(3)
    };
    let conditions = deployment_conditions(&obj, &deployment(&obj, stuck));
    assert_eq!(
        summary(&conditions)[2],
        ("Degraded", "True", "ProgressDeadlineExceeded")
    );
    assert_eq!(
        conditions[2].message,
        "ReplicaSet \"test-5d4f\" has timed out progressing."
    );
    assert_eq!(event_type(&conditions[2]), EventType::Warning);

    let failing = DeploymentStatus {
        conditions: Some(vec![
            deployment_condition("Progressing", "True", "ReplicaSetUpdated", ""),
            deployment_condition("ReplicaFailure", "True", "FailedCreate", "exceeded quota"),
        ]),
        ..DeploymentStatus::default()
    };
    let conditions = deployment_conditions(&obj, &deployment(&obj, failing));
    assert_eq!(
        summary(&conditions)[2],
        ("Degraded", "True", "FailedCreate")
    );
}

#[test]
fn scaled_to_zero_is_not_available_but_rolled_out() {
    let mut obj = object();
    obj.spec.size = 0;
    let conditions = deployment_conditions(&obj, &deployment(&obj, rolled_out(0)));
    assert_eq!(
        summary(&conditions),
        [
            ("Available", "False", "ScaledToZero"),
            ("Progressing", "False", "RolloutComplete"),
            ("Degraded", "False", "Healthy"),
        ]
    );
}

#[test]
fn failed_apply_keeps_what_was_observed() {
    let obj = object();
    let before = deployment_conditions(&obj, &deployment(&obj, rolled_out(3)));
    let err = Error::MissingMetadata("uid");
    let after = apply_failed_conditions(&before, &err, obj.metadata.generation);
    assert_eq!(after[..2], before[..2]);
    assert_eq!(
        summary(&after)[2],
        ("Degraded", "True", "DeploymentNotApplied")
    );
    assert_eq!(
        after[2].message,
        "Cannot apply the Deployment: the object has no metadata.uid"
    );

    // Nothing observed yet: nothing to keep.
    assert_eq!(
        summary(&apply_failed_conditions(&[], &err, obj.metadata.generation)),
        [("Degraded", "True", "DeploymentNotApplied")]
    );
}

#[test]
fn only_degradation_is_a_warning() {
    let obj = object();
    let status = DeploymentStatus {
        ready_replicas: Some(0),
        ..rolled_out(3)
    };
    for condition in deployment_conditions(&obj, &deployment(&obj, status)) {
        assert_eq!(event_type(&condition), EventType::Normal, "{condition:?}");
    }
}

#[tokio::test]
async fn a_failing_object_is_retried_with_growing_delays() {
    let state = fixture().state;
    let obj = Arc::new(object());
    let err = Error::MissingMetadata("uid");
    let delays: Vec<Action> = (0..3)
        .map(|_| error_policy(obj.clone(), &err, state.clone()))
        .collect();
    let growing = [500, 1000, 2000].map(|ms| Action::requeue(std::time::Duration::from_millis(ms)));
    assert_eq!(delays, growing);
}

/// A Deployment of `obj` on its way: `updated` pods up to date, `ready` of them ready.
fn rolling(pods: i32, updated: i32, ready: i32) -> DeploymentStatus {
    DeploymentStatus {
        observed_generation: Some(1),
        replicas: Some(pods),
        updated_replicas: Some(updated),
        ready_replicas: Some(ready),
        ..DeploymentStatus::default()
    }
}

/// One new Memcached from creation to steady state, every request counted: the Deployment is
/// applied once, the status written when it changed, and nothing is read from the API server.
#[tokio::test]
async fn a_new_object_reaches_steady_state_in_four_requests() {
    let mut f = fixture();
    let mut requests = 0;
    let mut obj = object();

    // Nothing is cached yet: the Deployment is applied, the first status written.
    let reconciling = f.spawn_reconcile(&obj);
    let request = f.server.expect(Method::PATCH, &apply_url()).await;
    assert_eq!(
        request.content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    let desired = stamped(desired_deployment(&obj, owner(&obj)));
    assert_eq!(request.body, serde_json::to_value(desired).unwrap());
    request.respond(
        StatusCode::OK,
        &deployment(&obj, DeploymentStatus::default()),
    );
    obj = f.answer_status(&obj).await;
    requests += 2;
    let status = obj.status.clone().unwrap();
    assert_eq!(
        summary(&status.conditions),
        [
            ("Available", "False", "PodsNotReady"),
            ("Progressing", "True", "RollingOut"),
            ("Degraded", "False", "Healthy"),
        ]
    );
    answer_events(
        &mut f.server,
        &[
            ("Normal", "PodsNotReady"),
            ("Normal", "RollingOut"),
            ("Normal", "Healthy"),
        ],
    )
    .await;
    assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());

    // The Deployment controller creates the pods: the watches fill the caches. The counts
    // change, no condition does, so the status is written and nothing announced.
    f.deployment_seen(deployment(&obj, rolling(3, 3, 0)));
    for pod in ["test-c", "test-a", "test-b"] {
        f.pod_seen(&obj, pod);
    }
    let reconciling = f.spawn_reconcile(&obj);
    obj = f.answer_status(&obj).await;
    requests += 1;
    let status = obj.status.clone().unwrap();
    assert_eq!(status.pod_names, ["test-a", "test-b", "test-c"]);
    assert_eq!(status.ready_replicas, 0);
    assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());

    // The pods are ready.
    f.deployment_seen(deployment(&obj, rolled_out(3)));
    let reconciling = f.spawn_reconcile(&obj);
    obj = f.answer_status(&obj).await;
    requests += 1;
    let status = obj.status.clone().unwrap();
    assert_eq!(status.ready_replicas, 3);
    assert_eq!(
        summary(&status.conditions),
        [
            ("Available", "True", "PodsReady"),
            ("Progressing", "False", "RolloutComplete"),
            ("Degraded", "False", "Healthy"),
        ]
    );
    answer_events(
        &mut f.server,
        &[("Normal", "PodsReady"), ("Normal", "RolloutComplete")],
    )
    .await;
    assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
    assert_eq!(requests, 4, "requests from creation to steady state");

    // A resync that finds nothing to change sends nothing.
    let reconciling = f.spawn_reconcile(&obj);
    assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
    f.finish().await;
}

/// Scaling: the spec asks for 5 pods; the cached Deployment runs 3, so it is applied again.
#[tokio::test]
async fn scaling_applies_the_deployment_once_and_reports_the_rollout() {
    let mut f = fixture();
    let mut obj = object();
    let running = deployment(&obj, rolled_out(3));
    obj.status = Some(MemcachedStatus {
        conditions: deployment_conditions(&obj, &running),
        ready_replicas: 3,
        pod_names: vec!["test-a".into(), "test-b".into(), "test-c".into()],
        observed_generation: Some(1),
    });
    f.deployment_seen(running);
    for pod in ["test-a", "test-b", "test-c"] {
        f.pod_seen(&obj, pod);
    }
    obj.spec.size = 5;
    obj.metadata.generation = Some(2);

    let reconciling = f.spawn_reconcile(&obj);
    let request = f.server.expect(Method::PATCH, &apply_url()).await;
    assert_eq!(request.body["spec"]["replicas"], 5);
    let mut scaled = deployment(&obj, rolling(3, 3, 3));
    scaled.metadata.generation = Some(2);
    request.respond(StatusCode::OK, &scaled);
    obj = f.answer_status(&obj).await;
    let status = obj.status.clone().unwrap();
    assert_eq!(
        summary(&status.conditions)[..2],
        [
            ("Available", "False", "PodsNotReady"),
            ("Progressing", "True", "RollingOut"),
        ]
    );
    answer_events(
        &mut f.server,
        &[("Normal", "PodsNotReady"), ("Normal", "RollingOut")],
    )
    .await;
    assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());

    // Once the cache has the scaled Deployment, reconciling sends nothing.
    f.deployment_seen(scaled);
    let reconciling = f.spawn_reconcile(&obj);
    assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
    f.finish().await;
}

/// Someone ran `kubectl scale` on the Deployment: the cache shows it, and it is taken back.
#[tokio::test]
async fn a_changed_deployment_is_applied_again() {
    let mut f = fixture();
    let mut obj = object();
    let mut drifted = deployment(&obj, rolled_out(3));
    drifted.spec.as_mut().unwrap().replicas = Some(1);
    f.deployment_seen(drifted);
    obj.status = Some(MemcachedStatus::default());

    let reconciling = f.spawn_reconcile(&obj);
    let request = f.server.expect(Method::PATCH, &apply_url()).await;
    assert_eq!(request.body["spec"]["replicas"], 3);
    request.respond(StatusCode::OK, &deployment(&obj, rolled_out(3)));
    f.answer_status(&obj).await;
    answer_events(
        &mut f.server,
        &[
            ("Normal", "PodsReady"),
            ("Normal", "RolloutComplete"),
            ("Normal", "Healthy"),
        ],
    )
    .await;
    assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
    f.finish().await;
}

#[test]
fn defaulted_fields_do_not_count_as_changes() {
    let obj = object();
    let desired = stamped(desired_deployment(&obj, owner(&obj)));
    let mut stored = deployment(&obj, rolled_out(3));
    let spec = stored.spec.as_mut().unwrap();
    spec.revision_history_limit = Some(10);
    let pod = spec.template.spec.as_mut().unwrap();
    pod.containers[0].termination_message_path = Some("/dev/termination-log".into());
    assert!(is_applied(&desired, &stored));

    let mut scaled = stored.clone();
    scaled.spec.as_mut().unwrap().replicas = Some(1);
    assert!(!is_applied(&desired, &scaled));
}

#[test]
fn a_field_no_longer_desired_counts_as_a_change() {
    let mut obj = object();
    obj.spec.container_port = Some(8080);
    let running = deployment(&obj, rolled_out(3));
    let desired = stamped(desired_deployment(&obj, owner(&obj)));
    assert!(is_applied(&desired, &running));
    // Without a port the desired Deployment is a subset of the running one: only the hash
    // tells them apart.
    obj.spec.container_port = None;
    let desired = stamped(desired_deployment(&obj, owner(&obj)));
    assert!(!is_applied(&desired, &running));
}

/// A start-up with 10,000 Deployments reads them in pages of 500, each continuing the last, so
/// no response holds them all, and the cache holds every one, without its managed fields, once
/// the last page is in.
#[tokio::test]
async fn a_start_up_list_of_ten_thousand_deployments_is_paged_into_a_lean_cache() {
    const OBJECTS: usize = 10_000;
    const PAGE: usize = 500;
    let (client, mut server) = mock_client();
    let api = match WATCH_NAMESPACE {
        Some(namespace) => Api::namespaced(client, namespace),
        None => Api::all(client),
    };
    let (store, writer) = reflector::store::<Deployment>();
    let events = cache::fill(watcher(api, managed_by_this_operator()), writer);
    let listed = tokio::spawn(async move {
        let mut events = std::pin::pin!(events);
        while let Some(event) = events.next().await {
            if matches!(event, Ok(Event::InitDone)) {
                break;
            }
        }
    });
    let path = Deployment::url_path(&(), WATCH_NAMESPACE);
    for page in 0..OBJECTS / PAGE {
        let request = server.next_request().await;
        let (request_path, query) = request.uri.split_once('?').unwrap();
        let params: Vec<&str> = query.split('&').collect();
        assert_eq!(request_path, path);
        assert!(params.contains(&"limit=500"), "{}", request.uri);
        let continued = params.iter().any(|p| p.starts_with("continue="));
        if page == 0 {
            assert!(!continued, "{}", request.uri);
        } else {
            assert!(
                params.contains(&format!("continue=page-{page}").as_str()),
                "{}",
                request.uri
            );
        }
        let items: Vec<Value> = (page * PAGE..(page + 1) * PAGE)
            .map(|i| {
                let mut deployment = deployment(&object(), rolled_out(1));
                deployment.metadata.name = Some(format!("deployment-{i}"));
                deployment.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
                    manager: Some("kube-controller-manager".into()),
                    operation: Some("Update".into()),
                    ..ManagedFieldsEntry::default()
                }]);
                serde_json::to_value(deployment).unwrap()
            })
            .collect();
        let next = if page + 1 < OBJECTS / PAGE {
            format!("page-{}", page + 1)
        } else {
            String::new()
        };
        let list = json!({
            "apiVersion": "apps/v1",
            "kind": "DeploymentList",
            "metadata": {"resourceVersion": "1", "continue": next},
            "items": items,
        });
        request.respond(StatusCode::OK, &list);
    }
    finished(listed).await;
    let cached = store.state();
    assert_eq!(cached.len(), OBJECTS);
    assert!(cached.iter().all(|d| d.metadata.managed_fields.is_none()));
}

#[test]
fn pods_are_mapped_to_their_object_by_the_instance_label() {
    let owners = Index::new(object_instance);
    let obj = object();
    let mut long = object();
    long.metadata.name = Some("a".repeat(253));
    for o in [&obj, &long] {
        owners.apply(&Event::Apply(o.clone()));
    }
    let pod = |obj: &Memcached| {
        ObjectMeta {
            namespace: Some("default".into()),
            labels: Some(labels(obj)),
            ..ObjectMeta::default()
        }
        .into_response_partial::<Pod>()
    };
    assert_eq!(
        owner_of_pod(&owners, &pod(&obj)),
        Some(ObjectRef::from(&obj))
    );
    assert_eq!(
        owner_of_pod(&owners, &pod(&long)),
        Some(ObjectRef::from(&long))
    );
    assert_eq!(owner_of_pod(&owners, &PartialObjectMeta::default()), None);
}

type Owners = Index<Memcached, Instance>;

/// Fills the caches of `f` and `owners` as a steady cluster of `objects` Memcacheds would, each
/// with its rolled out Deployment and 3 pods, and returns one of them, `test`, as the API server
/// has it: with the status its reconciliation writes.
fn steady_cluster(f: &mut Fixture, owners: &Owners, objects: usize) -> Memcached {
    let mut cached = |obj: &Memcached| {
        f.deployment_seen(deployment(obj, rolled_out(3)));
        for pod in 0..3 {
            f.pod_seen(obj, &format!("{}-{pod}", obj.name_any()));
        }
        owners.apply(&Event::Apply(obj.clone()));
    };
    for i in 1..objects {
        let mut other = object();
        other.metadata.name = Some(format!("other-{i}"));
        cached(&other);
    }
    let mut obj = object();
    cached(&obj);
    obj.status = Some(MemcachedStatus {
        conditions: deployment_conditions(&obj, &deployment(&obj, rolled_out(3))),
        ready_replicas: 3,
        pod_names: pod_names(&obj, &f.state.pods_by_instance),
        observed_generation: obj.metadata.generation,
    });
    obj
}

/// A reconciliation that finds nothing to change, and a pod event routed to its Memcached, do
/// the same work with 10 objects in the caches as with 1,000: every lookup is by name or through
/// an index, never a scan. The work counted is what they allocate on their thread, which does
/// not depend on the machine and which a scan multiplies; the test shows that on a scan of the
/// Deployment cache.
#[test]
fn a_reconciliation_and_a_pod_event_cost_the_same_with_10_or_1000_objects_cached() {
    let work = |objects: usize| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _entered = runtime.enter();
        let mut f = fixture();
        let owners = Index::new(object_instance);
        let obj = Arc::new(steady_cluster(&mut f, &owners, objects));
        let pod = ObjectMeta {
            name: Some("test-0".into()),
            namespace: obj.metadata.namespace.clone(),
            labels: Some(labels(&obj)),
            ..ObjectMeta::default()
        }
        .into_response_partial::<Pod>();
        let event = Event::Apply(pod.clone());

        let reconciliation = || {
            let action = runtime.block_on(reconcile(obj.clone(), f.state.clone()));
            assert_eq!(action.unwrap(), Action::await_change());
        };
        let pod_event = || {
            f.state.pods_by_instance.apply(&event);
            let owner = owner_of_pod(&owners, &pod);
            assert_eq!(owner, Some(ObjectRef::from(&*obj)));
        };
        // The first of each also does what is done once, such as the wait for the caches.
        reconciliation();
        pod_event();
        let reconciliation = allocation_counter::measure(reconciliation);
        let pod_event = allocation_counter::measure(pod_event);
        let scan = allocation_counter::measure(|| {
            std::hint::black_box(f.state.deployments.state());
        });
        // Nothing was sent either.
        runtime.block_on(f.finish());
        (
            (reconciliation.count_total, reconciliation.bytes_total),
            (pod_event.count_total, pod_event.bytes_total),
            scan.bytes_total,
        )
    };
    let (few, many) = (work(10), work(1_000));
    assert_eq!(few.0, many.0, "allocations and bytes of one reconciliation");
    assert_eq!(few.1, many.1, "allocations and bytes of one pod event");
    assert!(
        many.2 > 50 * few.2,
        "a scan of the cache counts as work: {} bytes with 10 objects, {} with 1,000",
        few.2,
        many.2
    );
}

#[test]
fn instance_labels_fit_a_label_value_and_stay_distinct() {
    let label = |name: &str| {
        let mut obj = object();
        obj.metadata.name = Some(name.into());
        instance_label(&obj)
    };
    assert_eq!(label("test"), "test");
    let exactly = "a".repeat(63);
    assert_eq!(label(&exactly), exactly);
    let long = format!("{}-x", "a".repeat(250));
    let other = format!("{}-y", "a".repeat(250));
    for name in [&long, &other] {
        let value = label(name);
        assert!(value.len() <= 63, "{value}");
        assert!(
            value.chars().next().unwrap().is_ascii_alphanumeric(),
            "{value}"
        );
        assert!(
            value.chars().last().unwrap().is_ascii_alphanumeric(),
            "{value}"
        );
        assert_eq!(value, label(name), "stable");
    }
    assert_ne!(label(&long), label(&other));
    // A name cut right after a dash keeps the label's last character alphanumeric.
    let dashed = format!("{}-{}", "a".repeat(51), "b".repeat(100));
    assert!(label(&dashed).starts_with(&format!("{}-", "a".repeat(51))));
}

#[tokio::test]
async fn rejected_deployment_is_reported_as_degraded() {
    let Fixture {
        state, mut server, ..
    } = fixture();
    let obj = object();
    let reconciling = tokio::spawn(reconcile(Arc::new(obj.clone()), state.clone()));

    server
        .expect(Method::PATCH, &apply_url())
        .await
        .respond_error(
            StatusCode::FORBIDDEN,
            "Forbidden",
            "deployments.apps \"test\" is forbidden",
        );

    let request = server.expect(Method::PATCH, &status_url()).await;
    let status = &request.body["status"];
    assert_eq!(
        status["conditions"],
        json!([{
            "type": "Degraded",
            "status": "True",
            "reason": "DeploymentNotApplied",
            "message": "Cannot apply the Deployment: deployments.apps \"test\" is forbidden",
            "observedGeneration": 1,
            "lastTransitionTime": status["conditions"][0]["lastTransitionTime"],
        }])
    );
    assert_eq!(status["readyReplicas"], 0);
    let body = obj.clone();
    request.respond(StatusCode::OK, &body);
    answer_events(&mut server, &[("Warning", "DeploymentNotApplied")]).await;

    let err = finished(reconciling).await.unwrap_err();
    assert!(err.to_string().contains("is forbidden"), "{err}");
    drop(state);
    server.assert_no_more_requests().await;
}

/// A Memcached the sharder moves to another replica is handed over, and nothing else is done
/// with it here: its shard and drain labels are removed, at the version this replica saw.
#[tokio::test]
async fn a_drained_memcached_is_handed_over() {
    let mut f = fixture();
    let reconciling = f.spawn_reconcile(&drained(object()));
    f.server.expect_hand_over(&url()).await;
    assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
    f.finish().await;
}

/// A Memcached being deleted: the garbage collector deletes its Deployment, nothing to send.
#[tokio::test]
async fn a_deleted_memcached_is_left_to_the_garbage_collector() {
    let f = fixture();
    let mut obj = object();
    obj.metadata.deletion_timestamp = Some(Time(Timestamp::from_second(1_700_000_000).unwrap()));
    let reconciling = f.spawn_reconcile(&obj);
    assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
    f.finish().await;
}

/// The API server of a cluster that holds [`Cluster::OBJECTS`] Memcacheds before the controller
/// starts, as on every restart, upgrade and failover of the operator, with the controller
/// running on it through the manager's own supervision.
struct Cluster {
    server: ApiServer,
    shutdown: Shutdown,
    /// Open watches: held open and silent, as nothing changes meanwhile.
    watches: Vec<Request>,
    /// How often each object's Deployment was applied, by name.
    applied: BTreeMap<String, usize>,
    statuses: usize,
    events: usize,
}

impl Cluster {
    const OBJECTS: usize = 20;
    /// The events of a new object: one per condition.
    const EVENTS_PER_OBJECT: usize = 3;

    /// Starts the controller, as the manager does, on a mock API server; the task returns what
    /// the manager's supervision does.
    fn start() -> (Self, JoinHandle<anyhow::Result<()>>) {
        let (client, server) = mock_client();
        let shutdown = Shutdown::new();
        let namespace = WATCH_NAMESPACE.map(str::to_owned);
        let ctx = Context::new(
            client,
            Arc::new(Metrics::new()),
            namespace,
            10,
            shutdown.clone(),
        );
        let stop = shutdown.clone();
        let supervisor = tokio::spawn(async move {
            let mut controllers = Controllers::new(Arc::new(ctx));
            controllers.start(run);
            supervise(&mut controllers, &stop, None, Duration::from_secs(30)).await
        });
        let cluster = Self {
            server,
            shutdown,
            watches: Vec::new(),
            applied: BTreeMap::new(),
            statuses: 0,
            events: 0,
        };
        (cluster, supervisor)
    }

    /// The objects in the cluster, as the API server lists them.
    fn objects() -> Vec<Memcached> {
        (0..Self::OBJECTS)
            .map(|i| {
                let mut obj = object();
                obj.metadata.name = Some(format!("object-{i:02}"));
                obj.metadata.uid = Some(format!("uid-{i:02}"));
                obj.metadata.resource_version = Some("1".into());
                obj
            })
            .collect()
    }

    /// Answers requests until the Memcacheds are listed and both caches have asked for their
    /// first list, which is returned unanswered: the reconciliations of the listed objects then
    /// start before the caches are filled, as they do when the object list comes back first.
    async fn list_objects_before_the_caches(&mut self) -> Vec<Request> {
        let objects = Memcached::url_path(&(), WATCH_NAMESPACE);
        let caches = [
            Deployment::url_path(&(), WATCH_NAMESPACE),
            Pod::url_path(&(), WATCH_NAMESPACE),
        ];
        let mut first_lists = Vec::new();
        let mut listed = false;
        while !listed || first_lists.len() < 2 {
            let request = self.server.next_request().await;
            let (path, query) = request.uri.split_once('?').unwrap_or((&request.uri, ""));
            let params: Vec<&str> = query.split('&').collect();
            if params.contains(&"watch=true") {
                self.watches.push(request);
            } else if path == objects && params.contains(&"limit=1") {
                // The check that the CRD is installed.
                request.respond(StatusCode::OK, &list("meta.k8s.io/v1", &[]));
            } else if path == objects {
                let items = serde_json::to_value(Self::objects()).unwrap();
                let items = items.as_array().unwrap();
                let api_version = Memcached::api_version(&());
                request.respond(StatusCode::OK, &list(&api_version, items));
                listed = true;
            } else if caches.iter().any(|cache| cache == path) {
                first_lists.push(request);
            } else {
                panic!("unexpected request: {} {}", request.method, request.uri);
            }
        }
        first_lists
    }

    /// Lets the reconciliations of the listed objects reach their wait for the caches, then
    /// answers the caches' first lists: the cluster has no Deployment and no pod yet.
    async fn fill_the_caches(caches: Vec<Request>) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        for request in caches {
            request.respond(StatusCode::OK, &list("meta.k8s.io/v1", &[]));
        }
    }

    /// Answers a request of a reconciliation, or holds a watch open.
    fn answer(&mut self, request: Request) {
        let status_suffix = format!("/status?&force=true&fieldManager={FIELD_MANAGER}");
        let (path, _) = request.uri.split_once('?').unwrap_or((&request.uri, ""));
        if request.uri.contains("watch=true") {
            self.watches.push(request);
        } else if request.method == Method::PATCH
            && let Some(name) = path.strip_prefix("/apis/apps/v1/namespaces/default/deployments/")
        {
            *self.applied.entry(name.to_owned()).or_default() += 1;
            let body = request.body.clone();
            request.respond(StatusCode::OK, &body);
        } else if request.method == Method::PATCH && request.uri.ends_with(&status_suffix) {
            self.statuses += 1;
            let name = path.trim_end_matches("/status").rsplit('/').next().unwrap();
            let mut stored = object();
            stored.metadata.name = Some(name.to_owned());
            stored.status = Some(serde_json::from_value(request.body["status"].clone()).unwrap());
            request.respond(StatusCode::OK, &stored);
        } else if request.method == Method::POST && request.uri == EVENTS_URL {
            self.events += 1;
            let body = request.body.clone();
            request.respond(StatusCode::CREATED, &body);
        } else {
            panic!("unexpected request: {} {}", request.method, request.uri);
        }
    }

    /// Whether every object has been reconciled to its status and events.
    fn all_reconciled(&self) -> bool {
        self.statuses == Self::OBJECTS && self.events == Self::OBJECTS * Self::EVENTS_PER_OBJECT
    }
}

/// A list response of `api_version` holding `items`.
fn list(api_version: &str, items: &[Value]) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": "List",
        "metadata": {"resourceVersion": "1"},
        "items": items,
    })
}

/// Objects that exist when the controller starts are each reconciled exactly once to their
/// Deployment, although every reconciliation waits for the caches at the same time.
#[tokio::test(start_paused = true)]
async fn objects_present_at_start_up_are_each_reconciled_once() {
    let (mut cluster, supervisor) = Cluster::start();
    let caches = cluster.list_objects_before_the_caches().await;
    Cluster::fill_the_caches(caches).await;
    while !cluster.all_reconciled() {
        let request = cluster.server.next_request().await;
        cluster.answer(request);
    }
    let names: Vec<String> = Cluster::objects()
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    assert_eq!(cluster.applied.keys().cloned().collect::<Vec<_>>(), names);
    assert!(
        cluster.applied.values().all(|&n| n == 1),
        "{:?}",
        cluster.applied
    );

    // Nothing changes in the cluster, so the controller sends nothing more.
    let quiet = tokio::time::timeout(Duration::from_secs(5), cluster.server.next_request());
    if let Ok(request) = quiet.await {
        panic!("unexpected request: {} {}", request.method, request.uri);
    }
    cluster.shutdown.trigger();
    let stopped = tokio::time::timeout(Duration::from_secs(1), supervisor).await;
    stopped.expect("the manager did not stop").unwrap().unwrap();
}

/// SIGTERM while the reconciliations of objects present at start-up are in flight: they finish,
/// and the manager stops cleanly within a second of the last one.
#[tokio::test(start_paused = true)]
async fn shutdown_waits_for_in_flight_reconciliations_only() {
    let (mut cluster, mut supervisor) = Cluster::start();
    let caches = cluster.list_objects_before_the_caches().await;
    Cluster::fill_the_caches(caches).await;
    // Every concurrency slot holds a reconciliation waiting for its Deployment to be applied.
    let mut in_flight = Vec::new();
    while in_flight.len() < 10 {
        let request = cluster.server.next_request().await;
        if request.method == Method::PATCH {
            in_flight.push(request);
        } else {
            cluster.answer(request);
        }
    }
    cluster.shutdown.trigger();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !supervisor.is_finished(),
        "stopped before the reconciliations finished"
    );

    for request in in_flight {
        cluster.answer(request);
    }
    let mut last_answer = Instant::now();
    let stopped = loop {
        tokio::select! {
            stopped = &mut supervisor => break stopped,
            // Every client is gone once the controller has stopped.
            Some(request) = cluster.server.next_request_if_any() => {
                cluster.answer(request);
                last_answer = Instant::now();
            }
        }
    };
    stopped.unwrap().expect("the manager stops cleanly");
    assert!(
        cluster.statuses >= 10,
        "{} statuses written",
        cluster.statuses
    );
    let waited = last_answer.elapsed();
    assert!(
        waited <= Duration::from_secs(1),
        "stopped {waited:?} after the last answer"
    );
}
