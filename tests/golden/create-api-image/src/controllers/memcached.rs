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
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, Pod, PodSecurityContext, PodSpec, PodTemplateSpec,
    SeccompProfile, SecurityContext,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, OwnerReference};
use kube::api::ObjectMeta;
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::EventType;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use rsop_runtime::controller::cache::{self, Index};
use rsop_runtime::controller::watch::{self, CachesReady, first_list};
use rsop_runtime::controller::{can_list, conditions, label_value, log_result};
use rsop_runtime::{Context, Reconciler};
use tracing::instrument;

use crate::api::v1alpha1::Memcached;
use crate::api::v1alpha1::MemcachedStatus;

/// The controller's name in metrics, logs and events.
const CONTROLLER_NAME: &str = "memcached";
/// The operator's name: the `app.kubernetes.io/managed-by` label of what this controller creates,
/// which its watches select.
const MANAGED_BY: &str = "memcached-operator";

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
    #[error("{}", rsop_runtime::controller::api_error_message(.0))]
    Kube(#[from] kube::Error),
    /// The object lacks metadata the API server always sets: it cannot have come from a watch.
    #[error("the object has no metadata.{0}")]
    MissingMetadata(&'static str),
}

/// What every reconciliation of this controller shares.
struct State {
    /// The client, the metrics, the status and Deployment writers.
    reconciler: Reconciler<Memcached>,
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

// The requests this controller sends, and no more, each marker next to its calls: `rsop manifests
// --rbac=check` finds every call in the code and names the marker a new one needs.
// +rsop:rbac:groups=cache.example.com,resources=memcacheds,verbs=list;watch
// +rsop:rbac:groups=apps,resources=deployments,verbs=list;watch
// +rsop:rbac:groups=core,resources=pods,verbs=list;watch

/// Runs the controller until the manager shuts down.
pub async fn run(ctx: Arc<Context>) {
    let api = ctx.api::<Memcached>();
    // Fail fast, with a message that says why, rather than retry a watch that cannot work.
    if !can_list(&api).await {
        return;
    }
    let managed = watcher::Config::default().labels(&format!("{MANAGED_BY_LABEL}={MANAGED_BY}"));
    let (objects, objects_writer) = reflector::store();
    let (deployments, deployments_writer) = reflector::store();
    let (pods, pods_writer) = reflector::store();
    // A pod event finds its Memcached through `owners`, and a reconciliation the pods of its
    // Memcached through `pods_by_instance`: lookups that cost the same with 10 objects or 10,000.
    let owners = Index::new(object_instance);
    let pods_by_instance = Index::new(pod_instance);
    let reconciler = ctx.reconciler::<Memcached>(CONTROLLER_NAME);
    let state = Arc::new(State {
        reconciler: reconciler.clone(),
        caches_ready: CachesReady::new(
            [first_list(&deployments), first_list(&pods)],
            ctx.shutdown_signal(),
        ),
        deployments,
        pods_by_instance: pods_by_instance.clone(),
    });

    // Every cache is filled by pages of a list (kube's watcher asks for 500 objects at a time), so
    // a start-up with thousands of objects never holds them all in one response, and holds them
    // lean (see `cache::fill`). The Memcacheds are kept whole otherwise: the reconciliation reads
    // their spec, status and metadata.
    let object_events = watch::resilient(watcher(api, ctx.sharded(watcher::Config::default())));
    let object_events = cache::fill(owners.follow(object_events), objects_writer);
    // It ends at shutdown, with the cache it fills: see `Context::until_shutdown`.
    let object_events = ctx.until_shutdown(object_events).touched_objects();
    // Owner references route a Deployment's changes to its Memcached. Its spec is compared with the
    // desired one and its status read, so the cache keeps both; the Deployments of a shard's
    // objects carry its label (see `Reconciler::apply`).
    let deployment_events = watcher(ctx.api::<Deployment>(), ctx.sharded(managed.clone()));
    let deployment_events =
        cache::fill(watch::resilient(deployment_events), deployments_writer).touched_objects();
    // Names are all the status needs from a pod, so only their metadata is watched. A pod is
    // owned by a ReplicaSet, not by the Memcached: its instance label leads back to it. Pods carry
    // no shard label, which would roll them out whenever their Memcached moves, so a sharded
    // replica sees every pod of the operator, and `owners` leads those of other shards' objects
    // nowhere.
    let pod_events = watch::resilient(watcher(ctx.api::<PartialObjectMeta<Pod>>(), managed));
    let pod_events =
        cache::fill(pods_by_instance.follow(pod_events), pods_writer).touched_objects();
    Controller::for_stream(object_events, objects)
        .owns_stream(deployment_events)
        .watches_stream(pod_events, move |pod| owner_of_pod(&owners, &pod))
        .with_config(ctx.controller_config())
        .graceful_shutdown_on(ctx.shutdown_signal())
        .run(reconciler.wrap(reconcile), reconciler.error_policy(), state)
        .for_each(log_result)
        .await;
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
    Some((obj.namespace()?, label_value(&obj.name_any())))
}

/// The [`Instance`] of `pod`, if it is a pod of this controller's application.
fn pod_instance(pod: &PartialObjectMeta<Pod>) -> Option<Instance> {
    let labels = pod.labels();
    if labels.get(NAME_LABEL).map(String::as_str) != Some(APP_NAME) {
        return None;
    }
    Some((pod.namespace()?, labels.get(INSTANCE_LABEL)?.clone()))
}

// The reconciler hands an object over to another shard with a patch.
// +rsop:rbac:groups=cache.example.com,resources=memcacheds,verbs=patch
/// Brings the Deployment of `obj` in line with its spec and reports its state in the status.
#[instrument(skip_all, fields(namespace = obj.namespace(), name = obj.name_any()))]
async fn reconcile(obj: Arc<Memcached>, state: Arc<State>) -> Result<Action, Error> {
    // A Memcached being deleted takes its Deployment with it: the garbage collector deletes what
    // it owns.
    if obj.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
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
    let cached = state
        .deployments
        .get(&ObjectRef::new(&obj.name_any()).within(&ns));
    let desired = desired_deployment(&obj, owner);
    let (status, failure) = match state.reconciler.apply(&*obj, desired, cached).await {
        Ok(deployment) => {
            let status = MemcachedStatus {
                conditions: deployment_conditions(&obj, &deployment),
                ready_replicas: ready_replicas(&deployment),
                pod_names: pod_names(&obj, &state.pods_by_instance),
                observed_generation: obj.metadata.generation,
            };
            (status, None)
        }
        Err(err) => {
            let err = Error::from(err);
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
    state
        .reconciler
        .write_status(&*obj, &status, event_type)
        .await?;
    // The Deployment's and the pods' changes trigger the next reconciliation.
    failure.map_or(Ok(Action::await_change()), Err)
}

// `Reconciler::apply` applies the Deployment with server-side apply, which creates it when it is
// not there: `create` as well as `patch`. `force` takes back the fields someone else changed since,
// such as the replicas after a `kubectl scale`.
// +rsop:rbac:groups=apps,resources=deployments,verbs=create;patch
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
        (INSTANCE_LABEL.to_owned(), label_value(&obj.name_any())),
    ])
}

/// The labels of the Deployment of `obj` and of its pods.
fn labels(obj: &Memcached) -> BTreeMap<String, String> {
    let mut labels = selector_labels(obj);
    labels.insert(MANAGED_BY_LABEL.to_owned(), MANAGED_BY.to_owned());
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

// The status is written through the status subresource, and each condition transition announced
// with an event.
// +rsop:rbac:groups=cache.example.com,resources=memcacheds/status,verbs=patch
// +rsop:rbac:groups=events.k8s.io,resources=events,verbs=create

#[cfg(test)]
mod tests;
