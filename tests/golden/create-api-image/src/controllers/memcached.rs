//! The controller of `Memcached` (`cache.example.com/v1alpha1`).
//!
//! A Memcached stands for a Deployment of its image. Each reconciliation applies the Deployment
//! that [`desired_deployment`] derives from the spec, with server-side apply, which also restores it
//! after someone changed or deleted it: the controller watches the Deployments it owns. It then
//! reports what the Deployment shows in the `Available`, `Progressing` and `Degraded` conditions,
//! the number of ready pods and their names, through the status subresource, and announces each
//! condition transition with an event. Deleting a Memcached deletes its Deployment before the
//! finalizer goes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, Pod, PodSecurityContext, PodSpec, PodTemplateSpec,
    SeccompProfile, SecurityContext,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, OwnerReference};
use kube::api::{DeleteParams, ListParams, ObjectMeta, Patch, PatchParams};
use kube::core::Selector;
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
use crate::context::Context;
use crate::controllers::backoff::Backoff;
use crate::controllers::conditions::{self, Change};
use crate::controllers::watch;
use crate::controllers::{log_result, reconcile_result};
use crate::metrics::{ControllerMetrics, ReconcileResult};

/// The controller's name in metrics and logs.
const CONTROLLER_NAME: &str = "memcached";
/// The finalizer that holds a deleted Memcached until [`cleanup`] has run.
pub const FINALIZER: &str = "cache.example.com/finalizer";
/// The operator's name: the server-side apply field manager of everything this controller writes,
/// and the `app.kubernetes.io/managed-by` label of what it creates.
const FIELD_MANAGER: &str = "memcached-operator";
/// The `reportingController` of the events this controller publishes.
const EVENT_REPORTER: &str = "memcached-controller";

/// The application the pods run: their container's name and `app.kubernetes.io/name`.
const APP_NAME: &str = "memcached";
/// The user the container runs as, a non-root one as the restricted Pod Security Standard wants.
const RUN_AS_USER: i64 = 1001;

const NAME_LABEL: &str = "app.kubernetes.io/name";
const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";

/// The condition that is `True` when every pod asked for is ready.
pub const AVAILABLE: &str = "Available";
/// The condition that is `True` while the Deployment rolls out or scales.
pub const PROGRESSING: &str = "Progressing";
/// The condition that is `True` when the Deployment cannot make progress or cannot be applied.
pub const DEGRADED: &str = "Degraded";

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
}

/// What every reconciliation of this controller shares.
struct State {
    client: Client,
    recorder: Recorder,
    metrics: ControllerMetrics,
    backoff: Backoff<Memcached>,
}

impl State {
    fn new(client: Client, metrics: ControllerMetrics) -> Self {
        Self {
            recorder: Recorder::new(client.clone(), Reporter::from(EVENT_REPORTER)),
            client,
            metrics,
            backoff: Backoff::default(),
        }
    }
}

// +rsop:rbac:groups=cache.example.com,resources=memcacheds,verbs=get;list;watch;create;update;patch;delete
// +rsop:rbac:groups=cache.example.com,resources=memcacheds/status,verbs=get;update;patch
// +rsop:rbac:groups=cache.example.com,resources=memcacheds/finalizers,verbs=update
// +rsop:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +rsop:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +rsop:rbac:groups=core,resources=pods,verbs=get;list;watch

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
    // Only the Deployments this operator manages are watched, which keeps the cache small on
    // clusters with many Deployments; owner references route their changes to their Memcached.
    let owned = watcher::Config::default().labels(&format!("{MANAGED_BY_LABEL}={FIELD_MANAGER}"));
    let state = Arc::new(State::new(
        ctx.client.clone(),
        ctx.controller_metrics(CONTROLLER_NAME),
    ));
    let (reader, writer) = reflector::store();
    let objects = watch::resilient(watcher(api, watcher::Config::default()))
        .reflect(writer)
        .touched_objects();
    let deployments = watch::resilient(watcher(ctx.api::<Deployment>(), owned)).touched_objects();
    Controller::for_stream(objects, reader)
        .owns_stream(deployments)
        .with_config(Config::default().concurrency(ctx.max_concurrent_reconciles))
        .graceful_shutdown_on(ctx.shutdown_signal())
        .run(reconcile, error_policy, state)
        .for_each(log_result)
        .await;
}

/// Reconciles one Memcached, recording the outcome in the controller metrics.
#[instrument(skip_all, fields(namespace = obj.namespace(), name = obj.name_any()))]
async fn reconcile(obj: Arc<Memcached>, state: Arc<State>) -> Result<Action, Error> {
    let started = Instant::now();
    let object = ObjectRef::from(&*obj);
    let result = apply_or_cleanup(obj, &state).await;
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

/// Adds the finalizer to a new object, applies a live one, and cleans up a deleted one.
async fn apply_or_cleanup(obj: Arc<Memcached>, state: &State) -> Result<Action, Error> {
    let ns = obj.namespace().ok_or(Error::MissingMetadata("namespace"))?;
    let api = Api::namespaced(state.client.clone(), &ns);
    finalizer(&api, FINALIZER, obj, |event| async {
        match event {
            Finalizer::Apply(obj) => apply(&obj, &ns, state).await,
            Finalizer::Cleanup(obj) => cleanup(&obj, &ns, state).await,
        }
    })
    .await
    .map_err(|err| Error::Finalizer(Box::new(err)))
}

/// Applies the Deployment of `obj` and reports its state in the status.
async fn apply(obj: &Memcached, ns: &str, state: &State) -> Result<Action, Error> {
    let current = obj.status.clone().unwrap_or_default();
    let owner = obj
        .controller_owner_ref(&())
        .ok_or(Error::MissingMetadata("uid"))?;
    let (status, failure) = match apply_deployment(obj, owner, ns, state).await {
        Ok(deployment) => {
            let pods = Api::namespaced(state.client.clone(), ns);
            let status = MemcachedStatus {
                conditions: deployment_conditions(obj, &deployment),
                ready_replicas: ready_replicas(&deployment),
                pod_names: pod_names(obj, &pods).await?,
                observed_generation: obj.metadata.generation,
            };
            (status, None)
        }
        Err(err) => {
            let status = MemcachedStatus {
                conditions: apply_failed_conditions(
                    &current.conditions,
                    &err,
                    obj.metadata.generation,
                ),
                observed_generation: obj.metadata.generation,
                ..current
            };
            (status, Some(err))
        }
    };
    let api = Api::namespaced(state.client.clone(), ns);
    write_status(obj, status, &api, state).await?;
    // The Deployment's changes, its status included, trigger the next reconciliation.
    failure.map_or(Ok(Action::await_change()), Err)
}

/// Applies the Deployment [`desired_deployment`] derives from `obj` and returns it as stored.
///
/// `force` takes back the fields someone else changed since, such as the replicas after a
/// `kubectl scale`, so the Deployment always ends up as the spec says. Fields this controller does
/// not set stay as others left them.
async fn apply_deployment(
    obj: &Memcached,
    owner: OwnerReference,
    ns: &str,
    state: &State,
) -> Result<Deployment, Error> {
    let deployments: Api<Deployment> = Api::namespaced(state.client.clone(), ns);
    let deployment = deployments
        .patch(
            &obj.name_any(),
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(desired_deployment(obj, owner)),
        )
        .await?;
    Ok(deployment)
}

/// The Deployment that runs `obj`, owned by `owner` (the controller reference to `obj`).
///
/// TODO(user): add what your pods need, such as resources, probes, volumes or arguments.
fn desired_deployment(obj: &Memcached, owner: OwnerReference) -> Deployment {
    let labels = labels(obj);
    Deployment {
        metadata: ObjectMeta {
            name: obj.metadata.name.clone(),
            namespace: obj.metadata.namespace.clone(),
            labels: Some(labels.clone()),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(obj.spec.size),
            selector: LabelSelector {
                match_labels: Some(selector_labels(obj)),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    // The restricted Pod Security Standard, so the pods run in namespaces that
                    // enforce it.
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        run_as_user: Some(RUN_AS_USER),
                        seccomp_profile: Some(SeccompProfile {
                            type_: "RuntimeDefault".into(),
                            ..SeccompProfile::default()
                        }),
                        ..PodSecurityContext::default()
                    }),
                    containers: vec![Container {
                        name: APP_NAME.into(),
                        image: Some(obj.spec.image.clone()),
                        image_pull_policy: Some("IfNotPresent".into()),
                        command: Some(vec![
                            "memcached".into(),
                            "-m=64".into(),
                            "-o".into(),
                            "modern".into(),
                            "-v".into(),
                        ]),
                        ports: obj.spec.container_port.map(|port| {
                            vec![ContainerPort {
                                container_port: port,
                                protocol: Some("TCP".into()),
                                ..ContainerPort::default()
                            }]
                        }),
                        security_context: Some(SecurityContext {
                            allow_privilege_escalation: Some(false),
                            capabilities: Some(Capabilities {
                                drop: Some(vec!["ALL".into()]),
                                ..Capabilities::default()
                            }),
                            ..SecurityContext::default()
                        }),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

/// The labels that select the pods of `obj`; a Deployment's selector cannot change, so neither may
/// these.
fn selector_labels(obj: &Memcached) -> BTreeMap<String, String> {
    BTreeMap::from([
        (NAME_LABEL.to_owned(), APP_NAME.to_owned()),
        (INSTANCE_LABEL.to_owned(), obj.name_any()),
    ])
}

/// The labels of the Deployment of `obj` and of its pods.
fn labels(obj: &Memcached) -> BTreeMap<String, String> {
    let mut labels = selector_labels(obj);
    labels.insert(MANAGED_BY_LABEL.to_owned(), FIELD_MANAGER.to_owned());
    labels
}

/// The names of the pods of `obj`, sorted so that the status changes only when they do.
async fn pod_names(obj: &Memcached, pods: &Api<Pod>) -> Result<Vec<String>, Error> {
    let selector: Selector = selector_labels(obj).into_iter().collect();
    // Names are all the status needs, so only metadata is fetched.
    let list = pods
        .list_metadata(&ListParams::default().labels_from(&selector))
        .await?;
    let mut names: Vec<String> = list
        .items
        .into_iter()
        .filter_map(|pod| pod.metadata.name)
        .collect();
    names.sort();
    Ok(names)
}

/// The pods of `deployment` that are ready, as the Deployment controller last counted them.
fn ready_replicas(deployment: &Deployment) -> i32 {
    deployment
        .status
        .as_ref()
        .and_then(|status| status.ready_replicas)
        .unwrap_or(0)
}

/// The conditions of `obj`, given its Deployment as the API server returned it.
fn deployment_conditions(obj: &Memcached, deployment: &Deployment) -> Vec<Condition> {
    let generation = obj.metadata.generation;
    let wanted = obj.spec.size;
    let status = deployment.status.clone().unwrap_or_default();
    let ready = status.ready_replicas.unwrap_or(0);
    let updated = status.updated_replicas.unwrap_or(0);
    let total = status.replicas.unwrap_or(0);
    let deployment_condition = |type_: &str, value: &str| {
        status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == type_ && c.status == value)
    };

    let available = if wanted == 0 {
        conditions::new(
            AVAILABLE,
            false,
            "ScaledToZero",
            "No pod is asked for",
            generation,
        )
    } else {
        let message = format!("{ready} of {wanted} pods are ready");
        if ready >= wanted {
            conditions::new(AVAILABLE, true, "PodsReady", message, generation)
        } else {
            conditions::new(AVAILABLE, false, "PodsNotReady", message, generation)
        }
    };

    // Until the Deployment controller has seen the latest Deployment spec, its counts describe the
    // previous one.
    let seen = status.observed_generation.is_some()
        && status.observed_generation >= deployment.metadata.generation;
    let progressing = if seen && updated == wanted && total == wanted && ready == wanted {
        let message = format!("{wanted} up-to-date pods are ready");
        conditions::new(PROGRESSING, false, "RolloutComplete", message, generation)
    } else {
        let message =
            format!("{updated} of {wanted} pods are up to date, {ready} ready, {total} in all");
        conditions::new(PROGRESSING, true, "RollingOut", message, generation)
    };

    // The Deployment controller gives up on a rollout after `progressDeadlineSeconds` (10 minutes by
    // default), e.g. when the image cannot be pulled or the pods keep crashing, and reports at once
    // pods it cannot create, e.g. when a quota or an admission policy rejects them.
    let failure = deployment_condition("ReplicaFailure", "True")
        .or_else(|| deployment_condition("Progressing", "False"));
    let degraded = match failure {
        Some(failure) => conditions::new(
            DEGRADED,
            true,
            failure.reason.as_deref().unwrap_or("DeploymentFailed"),
            failure.message.clone().unwrap_or_default(),
            generation,
        ),
        None => conditions::new(
            DEGRADED,
            false,
            "Healthy",
            "The Deployment makes progress",
            generation,
        ),
    };
    vec![available, progressing, degraded]
}

/// The conditions of `obj` after its Deployment could not be applied: `Degraded` with the error,
/// and `Available` and `Progressing` as they were, since the Deployment stayed as it was.
fn apply_failed_conditions(
    current: &[Condition],
    err: &Error,
    generation: Option<i64>,
) -> Vec<Condition> {
    let mut conditions: Vec<Condition> = [AVAILABLE, PROGRESSING]
        .into_iter()
        .filter_map(|type_| conditions::find(current, type_).cloned())
        .collect();
    conditions.push(conditions::new(
        DEGRADED,
        true,
        "DeploymentNotApplied",
        format!("Cannot apply the Deployment: {err}"),
        generation,
    ));
    conditions
}

/// The event type announcing a transition of `condition`: a warning when it tells of degradation.
///
/// Pods that are not ready yet during a rollout are expected, so losing `Available` alone is not
/// worth a warning; a rollout that stays stuck shows as `Degraded`.
fn event_type(condition: &Condition) -> EventType {
    if condition.type_ == DEGRADED && condition.status == "True" {
        EventType::Warning
    } else {
        EventType::Normal
    }
}

/// Writes `status` to `obj` unless it is already there, then publishes one event per condition
/// transition.
async fn write_status(
    obj: &Memcached,
    mut status: MemcachedStatus,
    api: &Api<Memcached>,
    state: &State,
) -> Result<(), Error> {
    let current = obj.status.clone().unwrap_or_default();
    let mut changed = (
        status.ready_replicas,
        &status.pod_names,
        status.observed_generation,
    ) != (
        current.ready_replicas,
        &current.pod_names,
        current.observed_generation,
    );
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
    // recorded; losing one is harmless, so a failure is only logged.
    let reference = obj.object_ref(&());
    for condition in &transitions {
        let event = conditions::transition_event(condition, event_type(condition));
        if let Err(err) = state.recorder.publish(&event, &reference).await {
            warn!(error = %err, reason = event.reason, "failed to publish an event");
        }
    }
    Ok(())
}

/// Deletes the Deployment of a deleted Memcached; the finalizer goes once this succeeds.
///
/// The garbage collector would delete the Deployment too, through its owner reference, but only
/// after the Memcached is gone; deleting it here first means a Memcached re-created under the same
/// name never meets the old Deployment.
async fn cleanup(obj: &Memcached, ns: &str, state: &State) -> Result<Action, Error> {
    // TODO(user): release what lives outside the cluster, too.
    let deployments: Api<Deployment> = Api::namespaced(state.client.clone(), ns);
    match deployments
        .delete(&obj.name_any(), &DeleteParams::default())
        .await
    {
        Ok(_) => info!("deleted the Deployment"),
        Err(kube::Error::Api(status)) if status.is_not_found() => {}
        Err(err) => return Err(err.into()),
    }
    Ok(Action::await_change())
}

/// Schedules the retry of a failed reconciliation with a per-object exponential backoff.
fn error_policy(obj: Arc<Memcached>, _err: &Error, state: Arc<State>) -> Action {
    Action::requeue(state.backoff.failed(ObjectRef::from(&*obj)))
}

#[cfg(test)]
mod tests {
    use http::{Method, StatusCode};
    use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;
    use serde_json::Value;

    use super::*;
    use crate::api::v1alpha1::MemcachedSpec;
    use crate::controllers::testing::{ApiServer, finished, mock_client};
    use crate::metrics::Metrics;

    /// Where the client reads and writes the test object.
    fn url() -> String {
        let collection = Memcached::url_path(&(), Some("default"));
        format!("{collection}/test")
    }

    /// Where the controller applies the test object's status.
    fn status_url() -> String {
        format!("{}/status?&force=true&fieldManager={FIELD_MANAGER}", url())
    }
    const DEPLOYMENT_URL: &str = "/apis/apps/v1/namespaces/default/deployments/test";
    const EVENTS_URL: &str = "/apis/events.k8s.io/v1/namespaces/default/events?";
    /// The pods of the test object, listed by their selector labels.
    const PODS_URL: &str = "/api/v1/namespaces/default/pods?&labelSelector=app.kubernetes.io%2Finstance%3Dtest%2Capp.kubernetes.io%2Fname%3D";
    const UID: &str = "6ac0d01a-8fda-4b94-a8ec-6b8e0e4a39f2";

    /// A Memcached of 3 pods as the API server returns it, with its finalizer and no status.
    fn object() -> Memcached {
        let spec: MemcachedSpec = serde_json::from_value(json!({ "size": 3 })).unwrap();
        let mut obj = Memcached::new("test", spec);
        obj.metadata.namespace = Some("default".into());
        obj.metadata.uid = Some(UID.into());
        obj.metadata.generation = Some(1);
        obj.metadata.finalizers = Some(vec![FINALIZER.into()]);
        obj
    }

    fn owner(obj: &Memcached) -> OwnerReference {
        obj.controller_owner_ref(&()).unwrap()
    }

    /// The Deployment of `obj` as the Deployment controller reports it.
    fn deployment(obj: &Memcached, status: DeploymentStatus) -> Deployment {
        let mut deployment = desired_deployment(obj, owner(obj));
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

    fn state() -> (Arc<State>, ApiServer) {
        let (client, server) = mock_client();
        let state = State::new(client, Metrics::new().controller(CONTROLLER_NAME));
        (Arc::new(state), server)
    }

    /// Runs `reconcile` on its own task, so the test can play the API server meanwhile.
    fn spawn_reconcile(
        obj: Memcached,
        state: &Arc<State>,
    ) -> tokio::task::JoinHandle<Result<Action, Error>> {
        tokio::spawn(reconcile(Arc::new(obj), state.clone()))
    }

    /// Drops the state, and with it every client, then checks the script is complete.
    async fn finish(state: Arc<State>, server: ApiServer) {
        drop(state);
        server.assert_no_more_requests().await;
    }

    /// Answers the metadata-only list of the pods of `test` with `names`.
    async fn answer_pods(server: &mut ApiServer, names: &[&str]) {
        let items: Vec<Value> = names
            .iter()
            .map(|name| json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": name } }))
            .collect();
        server
            .expect(Method::GET, &format!("{PODS_URL}{APP_NAME}"))
            .await
            .respond(
                StatusCode::OK,
                &json!({
                    "apiVersion": "meta.k8s.io/v1",
                    "kind": "PartialObjectMetadataList",
                    "metadata": { "resourceVersion": "1" },
                    "items": items,
                }),
            );
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
        let (state, _server) = state();
        let obj = Arc::new(object());
        let err = Error::MissingMetadata("uid");
        let delays: Vec<Action> = (0..3)
            .map(|_| error_policy(obj.clone(), &err, state.clone()))
            .collect();
        let growing =
            [500, 1000, 2000].map(|ms| Action::requeue(std::time::Duration::from_millis(ms)));
        assert_eq!(delays, growing);
    }

    #[tokio::test]
    async fn first_reconcile_adds_the_finalizer() {
        let (state, mut server) = state();
        let mut obj = object();
        obj.metadata.finalizers = None;
        let reconciling = spawn_reconcile(obj.clone(), &state);

        let request = server.expect(Method::PATCH, &format!("{}?", url())).await;
        assert_eq!(
            request.body,
            json!([
                { "op": "test", "path": "/metadata/finalizers", "value": null },
                { "op": "add", "path": "/metadata/finalizers", "value": [FINALIZER] },
            ])
        );
        request.respond(StatusCode::OK, &object());

        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn reconcile_applies_the_deployment_and_reports_it() {
        let (state, mut server) = state();
        let obj = object();
        let reconciling = spawn_reconcile(obj.clone(), &state);

        let request = server
            .expect(
                Method::PATCH,
                &format!("{DEPLOYMENT_URL}?&force=true&fieldManager={FIELD_MANAGER}"),
            )
            .await;
        assert_eq!(
            request.content_type.as_deref(),
            Some("application/apply-patch+yaml")
        );
        let desired = serde_json::to_value(desired_deployment(&obj, owner(&obj))).unwrap();
        assert_eq!(request.body, desired);
        assert_eq!(request.body["apiVersion"], "apps/v1");
        assert_eq!(request.body["kind"], "Deployment");
        request.respond(StatusCode::OK, &deployment(&obj, rolled_out(3)));

        answer_pods(&mut server, &["test-b", "test-a", "test-c"]).await;

        let request = server.expect(Method::PATCH, &status_url()).await;
        let status = &request.body["status"];
        assert_eq!(request.body["kind"], "Memcached");
        assert_eq!(status["readyReplicas"], 3);
        assert_eq!(status["podNames"], json!(["test-a", "test-b", "test-c"]));
        assert_eq!(status["observedGeneration"], 1);
        let conditions: Vec<Condition> =
            serde_json::from_value(status["conditions"].clone()).unwrap();
        assert_eq!(
            summary(&conditions),
            [
                ("Available", "True", "PodsReady"),
                ("Progressing", "False", "RolloutComplete"),
                ("Degraded", "False", "Healthy"),
            ]
        );
        let mut stored = obj.clone();
        stored.status = Some(serde_json::from_value(status.clone()).unwrap());
        request.respond(StatusCode::OK, &stored);

        answer_events(
            &mut server,
            &[
                ("Normal", "PodsReady"),
                ("Normal", "RolloutComplete"),
                ("Normal", "Healthy"),
            ],
        )
        .await;

        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());

        // Reconciling again with nothing changed re-applies the Deployment, to undo any drift, and
        // writes nothing else.
        let reconciling = spawn_reconcile(stored.clone(), &state);
        server
            .expect(
                Method::PATCH,
                &format!("{DEPLOYMENT_URL}?&force=true&fieldManager={FIELD_MANAGER}"),
            )
            .await
            .respond(StatusCode::OK, &deployment(&obj, rolled_out(3)));
        answer_pods(&mut server, &["test-a", "test-b", "test-c"]).await;
        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn rejected_deployment_is_reported_as_degraded() {
        let (state, mut server) = state();
        let obj = object();
        let reconciling = spawn_reconcile(obj.clone(), &state);

        server
            .expect(
                Method::PATCH,
                &format!("{DEPLOYMENT_URL}?&force=true&fieldManager={FIELD_MANAGER}"),
            )
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
        finish(state, server).await;
    }

    /// A Memcached being deleted.
    fn deleted() -> Memcached {
        let mut obj = object();
        obj.metadata.deletion_timestamp =
            Some(Time(Timestamp::from_second(1_700_000_000).unwrap()));
        obj
    }

    /// Expects the removal of the finalizer from `obj`, and answers it.
    async fn answer_finalizer_removal(server: &mut ApiServer, mut obj: Memcached) {
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
    }

    #[tokio::test]
    async fn deleted_memcached_deletes_its_deployment_then_is_released() {
        let (state, mut server) = state();
        let obj = deleted();
        let reconciling = spawn_reconcile(obj.clone(), &state);

        server
            .expect(Method::DELETE, &format!("{DEPLOYMENT_URL}?"))
            .await
            .respond(StatusCode::OK, &deployment(&obj, rolled_out(3)));
        answer_finalizer_removal(&mut server, obj).await;

        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn deleted_memcached_without_deployment_is_released() {
        let (state, mut server) = state();
        let obj = deleted();
        let reconciling = spawn_reconcile(obj.clone(), &state);

        server
            .expect(Method::DELETE, &format!("{DEPLOYMENT_URL}?"))
            .await
            .respond_error(
                StatusCode::NOT_FOUND,
                "NotFound",
                "deployments.apps \"test\" not found",
            );
        answer_finalizer_removal(&mut server, obj).await;

        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn failed_deletion_keeps_the_finalizer() {
        let (state, mut server) = state();
        let mut obj = object();
        obj.metadata.deletion_timestamp =
            Some(Time(Timestamp::from_second(1_700_000_000).unwrap()));
        let reconciling = spawn_reconcile(obj, &state);

        server
            .expect(Method::DELETE, &format!("{DEPLOYMENT_URL}?"))
            .await
            .respond_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalError",
                "etcd is down",
            );

        let err = finished(reconciling).await.unwrap_err();
        assert!(err.to_string().contains("etcd is down"), "{err}");
        finish(state, server).await;
    }
}
