//! The Memcached controller's tests, on kube-rs's mock client (`rsop_runtime::testing`): they
//! answer the controller's requests as the API server would, and run without a cluster.

use http::{Method, StatusCode};
use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::core::PartialObjectMetaExt;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher::Event;
use rsop_runtime::controller::stamped;
use rsop_runtime::testing::{self, ApiServer, finished, mock_client};
use serde_json::json;
use tokio::task::JoinHandle;

use super::*;
use crate::api::v1alpha1::MemcachedSpec;

/// Where the client reads and writes the test object.
fn url() -> String {
    let collection = Memcached::url_path(&(), Some("default"));
    format!("{collection}/test")
}

/// The field manager of what the controller applies.
const FIELD_MANAGER: &str = "manager";

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
    let state = State {
        reconciler: testing::context(client).reconciler(CONTROLLER_NAME),
        caches_ready: CachesReady::new(
            [first_list(&deployments_reader), first_list(&pods_reader)],
            std::future::pending(),
        ),
        deployments: deployments_reader,
        pods_by_instance: Index::new(pod_instance),
    };
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
        (MANAGED_BY_LABEL.to_owned(), MANAGED_BY.to_owned()),
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
