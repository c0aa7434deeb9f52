//! The controller of `Memcached` (`cache.example.com/v1alpha1`).
//!
//! A Memcached stands for a Deployment of its image. Each reconciliation compares the Deployment
//! that [`desired_deployment`] derives from the spec with the one in the controller's cache, and
//! applies it with server-side apply only when they differ, which also restores it after someone
//! changed or deleted it: the controller watches the Deployments it owns. It then reports what
//! the Deployment shows in the `Available`, `Progressing` and `Degraded` conditions, the number of
//! ready pods and their names, through the status subresource when they changed, and announces
//! each condition transition with an event. Everything it reads comes from its watch caches, so a
//! reconciliation that finds nothing to change sends no request at all. The Deployment carries an
//! owner reference, so deleting a Memcached deletes it too, without a finalizer.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, Pod, PodSecurityContext, PodSpec, PodTemplateSpec,
    SeccompProfile, SecurityContext,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, OwnerReference};
use kube::api::{ListParams, ObjectMeta, Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Action, Config, Controller};
use kube::runtime::events::{EventType, Recorder, Reporter};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde_json::{Value, json};
use tracing::{error, instrument, warn};

use crate::api::v1alpha1::Memcached;
use crate::api::v1alpha1::MemcachedStatus;
use crate::controllers::{Deadline, TimedOut, log_result, reconcile_result};
use crate::manager::backoff;
use crate::manager::cache::{self, Index};
use crate::manager::conditions::{self, Change};
use crate::manager::context::Context;
use crate::manager::metrics::{ControllerMetrics, ReconcileResult};
use crate::manager::shard::{self, Sharder};
use crate::manager::watch::{self, CachesReady, first_list};

/// The controller's name in metrics and logs.
const CONTROLLER_NAME: &str = "memcached";
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
/// A hash of the Deployment as last applied. Comparing with the cache tells whether someone changed
/// a field this controller sets, but not whether the controller stopped setting one, such as the
/// ports once `containerPort` is removed from the spec: a new hash tells that.
const HASH_ANNOTATION: &str = "cache.example.com/spec-hash";

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
    /// The Deployments this operator manages, as the watch last saw them.
    deployments: Store<Deployment>,
    /// The pods of those Deployments by [`Instance`], for the pod names in the status.
    pods_by_instance: PodIndex,
    /// Whether both caches have had their first list.
    caches_ready: CachesReady,
}

/// A namespace and an instance label: what relates pods to their Memcached, since their owner is a
/// ReplicaSet.
type Instance = (String, String);

/// The metadata of pods by [`Instance`].
type PodIndex = Index<PartialObjectMeta<Pod>, Instance>;

impl State {
    /// The state of a controller that reads `deployments` and `pods_by_instance` (the index kept
    /// beside the cache `pods`), and stops waiting for their first list when `stop` fires.
    fn new(
        client: Client,
        metrics: ControllerMetrics,
        deployments: Store<Deployment>,
        pods: Store<PartialObjectMeta<Pod>>,
        pods_by_instance: PodIndex,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        let caches_ready = CachesReady::new([first_list(&deployments), first_list(&pods)], stop);
        Self {
            reporter: Reporter::from(EVENT_REPORTER),
            client,
            metrics,
            backoff: backoff::Backoff::default(),
            deployments,
            pods_by_instance,
            caches_ready,
        }
    }
}

// The requests this controller sends, and no more, each marker next to its calls: `rsop manifests
// --rbac=check` finds every call in the code and names the marker a new one needs.
// +rsop:rbac:groups=cache.example.com,resources=memcacheds,verbs=list;watch
// +rsop:rbac:groups=apps,resources=deployments,verbs=list;watch
// +rsop:rbac:groups=core,resources=pods,verbs=list;watch

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
    let managed = managed_by_this_operator();
    let (objects, objects_writer) = reflector::store();
    let (deployments, deployments_writer) = reflector::store();
    let (pods, pods_writer) = reflector::store();
    // A pod event finds its Memcached through `owners`, and a reconciliation the pods of its
    // Memcached through `pods_by_instance`: lookups that cost the same with 10 objects or 10,000.
    let owners = Index::new(object_instance);
    let pods_by_instance = Index::new(pod_instance);
    let metrics = ctx.controller_metrics(CONTROLLER_NAME);
    let deadline = Deadline::new(ctx.reconcile_timeout, metrics.clone());
    let state = Arc::new(State::new(
        ctx.client.clone(),
        metrics,
        deployments,
        pods,
        pods_by_instance.clone(),
        ctx.shutdown_signal(),
    ));

    // Every cache is filled by pages of a list (kube's watcher asks for 500 objects at a time), so
    // a start-up with thousands of objects never holds them all in one response, and holds them
    // lean (see `cache::fill`). The Memcacheds are kept whole otherwise: the reconciliation reads
    // their spec, status and metadata.
    let object_events = watch::resilient(watcher(api, ctx.sharded(watcher::Config::default())));
    let object_events = cache::fill(owners.follow(object_events), objects_writer).touched_objects();
    // Owner references route a Deployment's changes to its Memcached. Its spec is compared with the
    // desired one and its status read, so the cache keeps both.
    let deployment_events = watch::resilient(watcher(
        ctx.api::<Deployment>(),
        ctx.sharded(managed.clone()),
    ));
    let deployment_events = cache::fill(deployment_events, deployments_writer).touched_objects();
    // Names are all the status needs from a pod, so only their metadata is watched. A pod is
    // owned by a ReplicaSet, not by the Memcached: its instance label leads back to it. Pods carry
    // no shard label (see `desired_deployment`), so a sharded replica sees every pod of the
    // operator, and `owners` leads those of other shards' objects nowhere.
    let pod_events = watch::resilient(watcher(ctx.api::<PartialObjectMeta<Pod>>(), managed));
    let pod_events =
        cache::fill(pods_by_instance.follow(pod_events), pods_writer).touched_objects();
    Controller::for_stream(object_events, objects)
        .owns_stream(deployment_events)
        .watches_stream(pod_events, move |pod| owner_of_pod(&owners, &pod))
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

/// The watch of the Deployments and pods this operator manages, and no others, which keeps the
/// caches small on clusters with many of them.
fn managed_by_this_operator() -> watcher::Config {
    watcher::Config::default().labels(&format!("{MANAGED_BY_LABEL}={FIELD_MANAGER}"))
}

/// The Memcached whose pods carry the instance label of `pod`, if it is still there.
fn owner_of_pod(
    owners: &Index<Memcached, Instance>,
    pod_metadata: &PartialObjectMeta<Pod>,
) -> Option<ObjectRef<Memcached>> {
    owners.get(&pod_instance(pod_metadata)?).pop()
}

/// The [`Instance`] of the pods of `obj`.
fn object_instance(obj: &Memcached) -> Option<Instance> {
    Some((obj.namespace()?, instance_label(obj)))
}

/// The [`Instance`] of `pod`, if it is a pod of this controller's application.
fn pod_instance(pod: &PartialObjectMeta<Pod>) -> Option<Instance> {
    let labels = pod.labels();
    if labels.get(NAME_LABEL).map(String::as_str) != Some(APP_NAME) {
        return None;
    }
    Some((pod.namespace()?, labels.get(INSTANCE_LABEL)?.clone()))
}

/// Reconciles one Memcached, recording the outcome in the controller metrics.
#[instrument(skip_all, fields(namespace = obj.namespace(), name = obj.name_any()))]
async fn reconcile(obj: Arc<Memcached>, state: Arc<State>) -> Result<Action, Error> {
    let started = Instant::now();
    let object = ObjectRef::from(&*obj);
    // A Memcached being deleted takes its Deployment with it: the garbage collector deletes what
    // it owns.
    let result = if obj.metadata.deletion_timestamp.is_some() {
        Ok(Action::await_change())
    } else if shard::is_drained(&*obj) {
        hand_over(&obj, &state).await
    } else {
        apply(&obj, &state).await
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

// +rsop:rbac:groups=cache.example.com,resources=memcacheds,verbs=patch
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

// The API server asks for this to set `blockOwnerDeletion` in the Deployment's owner reference.
// +rsop:rbac:groups=cache.example.com,resources=memcacheds/finalizers,verbs=update
/// Brings the Deployment of `obj` in line with its spec and reports its state in the status.
async fn apply(obj: &Memcached, state: &State) -> Result<Action, Error> {
    let ns = obj.namespace().ok_or(Error::MissingMetadata("namespace"))?;
    // The caches start empty: wait for their first list, so that a Deployment not listed yet is
    // not taken for a missing one. If the manager stops first, the next one reconciles `obj`.
    if !state.caches_ready.wait().await {
        return Ok(Action::await_change());
    }
    let current = obj.status.clone().unwrap_or_default();
    let owner = obj
        .controller_owner_ref(&())
        .ok_or(Error::MissingMetadata("uid"))?;
    let (status, failure) = match apply_deployment(obj, owner, &ns, state).await {
        Ok(deployment) => {
            let status = MemcachedStatus {
                conditions: deployment_conditions(obj, &deployment),
                ready_replicas: ready_replicas(&deployment),
                pod_names: pod_names(obj, &state.pods_by_instance),
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
    let api = Api::namespaced(state.client.clone(), &ns);
    write_status(obj, status, &api, state).await?;
    // The Deployment's and the pods' changes trigger the next reconciliation.
    failure.map_or(Ok(Action::await_change()), Err)
}

// Server-side apply creates the Deployment it does not find: `create` as well as `patch`.
// +rsop:rbac:groups=apps,resources=deployments,verbs=create;patch
/// The Deployment of `obj` as it is once it matches [`desired_deployment`]: the cached one when it
/// already does, else the one server-side apply returns.
///
/// `force` takes back the fields someone else changed since, such as the replicas after a
/// `kubectl scale`, so the Deployment always ends up as the spec says. Fields this controller does
/// not set stay as others left them, and are not compared.
async fn apply_deployment(
    obj: &Memcached,
    owner: OwnerReference,
    ns: &str,
    state: &State,
) -> Result<Arc<Deployment>, Error> {
    let desired = stamped(desired_deployment(obj, owner));
    let name = obj.name_any();
    let cached = state.deployments.get(&ObjectRef::new(&name).within(ns));
    if let Some(cached) = cached
        && is_applied(&desired, &cached)
    {
        return Ok(cached);
    }
    let deployments: Api<Deployment> = Api::namespaced(state.client.clone(), ns);
    let deployment = deployments
        .patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(desired),
        )
        .await?;
    Ok(Arc::new(deployment))
}

/// `deployment` with the hash of its content in [`HASH_ANNOTATION`].
fn stamped(mut deployment: Deployment) -> Deployment {
    // Serializing an API type cannot fail; an empty hash input would only cost an extra apply.
    let content = serde_json::to_vec(&deployment).unwrap_or_default();
    let hash = format!("{:016x}", fnv1a(&content));
    deployment
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(HASH_ANNOTATION.to_owned(), hash);
    deployment
}

/// 64-bit FNV-1a: fixed by its definition, so the same in every build and version of the operator,
/// unlike std's hashers.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Whether `actual` holds every field of `desired` with its value, lists element by element: what
/// applying `desired` would not change. Fields the API server defaults are only in `actual`.
fn is_applied(desired: &Deployment, actual: &Deployment) -> bool {
    fn contains(actual: &Value, desired: &Value) -> bool {
        match (actual, desired) {
            (Value::Object(actual), Value::Object(desired)) => desired
                .iter()
                .all(|(key, value)| actual.get(key).is_some_and(|a| contains(a, value))),
            (Value::Array(actual), Value::Array(desired)) => {
                actual.len() == desired.len()
                    && actual.iter().zip(desired).all(|(a, d)| contains(a, d))
            }
            _ => actual == desired,
        }
    }
    match (serde_json::to_value(actual), serde_json::to_value(desired)) {
        (Ok(actual), Ok(desired)) => contains(&actual, &desired),
        _ => false,
    }
}

/// The Deployment that runs `obj`, owned by `owner` (the controller reference to `obj`).
///
/// TODO(user): add what your pods need, such as resources, probes, volumes or arguments.
fn desired_deployment(obj: &Memcached, owner: OwnerReference) -> Deployment {
    let labels = labels(obj);
    // The Deployment is in the caches of the replica whose shard `obj` is in, if sharded; its pods
    // are not labelled with the shard, which would roll them out whenever `obj` moves.
    let deployment_labels = labels.clone().into_iter().chain(shard::owner_shard(obj));
    Deployment {
        metadata: ObjectMeta {
            name: obj.metadata.name.clone(),
            namespace: obj.metadata.namespace.clone(),
            labels: Some(deployment_labels.collect()),
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
        (INSTANCE_LABEL.to_owned(), instance_label(obj)),
    ])
}

/// The `app.kubernetes.io/instance` label of the objects of `obj`: its name, which may have up to
/// 253 characters where a label value may have 63, so a longer one is cut to its first 52 and a
/// hash of the whole. The hash never changes between reconciliations or versions of the operator:
/// a Deployment's selector cannot.
fn instance_label(obj: &Memcached) -> String {
    const MAX_LEN: usize = 63;
    let name = obj.name_any();
    if name.len() <= MAX_LEN {
        return name;
    }
    let hash = fnv1a(name.as_bytes());
    // Object names are ASCII, so any byte index is a character boundary. A label value must
    // start and end with an alphanumeric character.
    let prefix = name[..MAX_LEN - 11].trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    format!("{prefix}-{:010x}", hash & 0xff_ffff_ffff)
}

/// The labels of the Deployment of `obj` and of its pods.
fn labels(obj: &Memcached) -> BTreeMap<String, String> {
    let mut labels = selector_labels(obj);
    labels.insert(MANAGED_BY_LABEL.to_owned(), FIELD_MANAGER.to_owned());
    labels
}

/// The names of the pods of `obj` in the cache, sorted so that the status changes only when they do.
fn pod_names(obj: &Memcached, pods_by_instance: &PodIndex) -> Vec<String> {
    let Some(instance) = object_instance(obj) else {
        return Vec::new();
    };
    let mut names: Vec<String> = pods_by_instance
        .get(&instance)
        .into_iter()
        .map(|pod| pod.name)
        .collect();
    names.sort();
    names
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
