//! What a controller's reconcile function is run with: the plumbing kube-runtime leaves to each
//! controller, as controller-runtime provides it to a Go one.
//!
//! A [`Reconciler`] (from [`Context::reconciler`]) wraps the reconcile function given to
//! `Controller::run`: each reconciliation gets a time limit (`--reconcile-timeout`), is counted in
//! controller-runtime's reconcile metrics, and a failed one is retried with a per-object exponential
//! backoff; in a sharded manager, an object the sharder moves away is handed over before the
//! reconcile function would see it. The reconcile function itself writes its status through
//! [`Reconciler::write_status`] (server-side apply, only when it changed, an event per condition
//! transition) and what it owns through [`Reconciler::apply`] (server-side apply, only when the
//! watch cache shows a difference).
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use futures::StreamExt;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::runtime::controller::{Action, Controller};
//! use kube::runtime::watcher;
//! use rsop_runtime::controller::log_result;
//! use rsop_runtime::{Context, Reconciler};
//!
//! #[derive(Debug, thiserror::Error)]
//! #[error("the settings are invalid")]
//! struct Invalid;
//!
//! async fn reconcile(obj: Arc<ConfigMap>, _: Arc<Reconciler<ConfigMap>>) -> Result<Action, Invalid> {
//!     Ok(Action::await_change())
//! }
//!
//! async fn run(ctx: Arc<Context>) {
//!     let reconciler = ctx.reconciler::<ConfigMap>("settings");
//!     Controller::new(ctx.api::<ConfigMap>(), ctx.sharded(watcher::Config::default()))
//!         .with_config(ctx.controller_config())
//!         .graceful_shutdown_on(ctx.shutdown_signal())
//!         .run(reconciler.wrap(reconcile), reconciler.error_policy(), Arc::new(reconciler.clone()))
//!         .for_each(log_result)
//!         .await;
//! }
//! ```

pub mod backoff;
pub mod cache;
pub mod conditions;
pub mod watch;

use std::fmt::{Debug, Display};
use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt as _;
use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::api::{ListParams, Patch, PatchParams};
use kube::core::object::HasStatus;
use kube::runtime::controller::{self, Action};
use kube::runtime::events::{EventType, Recorder, Reporter};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tracing::{debug, error, warn};

use crate::context::Context;
use crate::logging::error_chain;
use crate::metrics::{ControllerMetrics, ReconcileResult};

/// The annotation [`Reconciler::apply`] stamps an object with: a hash of what it applied last.
pub const APPLIED_HASH_ANNOTATION: &str = "rsop.dev/applied-hash";

/// Why a reconciliation failed: the reconcile function's error `E`, or what the [`Reconciler`]
/// around it met.
#[derive(Debug, thiserror::Error)]
pub enum Error<E: std::error::Error + 'static> {
    /// The reconcile function failed.
    #[error(transparent)]
    Reconcile(E),
    /// The reconciliation ran longer than `--reconcile-timeout` and was cancelled.
    #[error(transparent)]
    TimedOut(#[from] TimedOut),
    /// The object could not be handed over to the shard the sharder moves it to.
    #[error("cannot hand the object over to another shard: {}", api_error_message(.0))]
    HandOver(#[source] kube::Error),
}

/// A reconciliation cancelled because it ran longer than `--reconcile-timeout`.
#[derive(Debug, thiserror::Error)]
#[error("the reconciliation did not finish within {0:?} (--reconcile-timeout) and was cancelled")]
pub struct TimedOut(pub Duration);

/// The scope of a kind: which `Api` reaches its objects.
///
/// Implemented for k8s-openapi's two scopes, so that code generic over a kind works whatever its
/// scope.
pub trait ObjectScope {
    /// The `Api` of the objects of `K` in `namespace`; all of them when `None`, as for a kind of
    /// the cluster scope always.
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default;
}

impl ObjectScope for NamespaceResourceScope {
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default,
    {
        match namespace {
            Some(namespace) => Api::namespaced(client, namespace),
            None => Api::all(client),
        }
    }
}

impl ObjectScope for ClusterResourceScope {
    fn api<K>(client: Client, _: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default,
    {
        Api::all(client)
    }
}

/// The `Api` that reaches `obj`, whatever the scope of its kind.
pub fn object_api<K>(client: Client, obj: &K) -> Api<K>
where
    K: Resource,
    K::DynamicType: Default,
    K::Scope: ObjectScope,
{
    K::Scope::api(client, obj.meta().namespace.as_deref())
}

impl Context {
    /// The [`Reconciler`] of a controller of `K` called `name` in metrics, logs and events (its
    /// events come from `<name>-controller`).
    pub fn reconciler<K>(&self, name: &str) -> Reconciler<K>
    where
        K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::DynamicType: Default + Eq + Hash + Clone,
    {
        let metrics = self.controller_metrics(name);
        Reconciler(Arc::new(Shared {
            client: self.client.clone(),
            field_manager: self.name.clone(),
            reporter: Reporter::from(format!("{name}-controller")),
            deadline: Deadline::new(self.reconcile_timeout, metrics.clone()),
            metrics,
            backoff: backoff::Backoff::default(),
            #[cfg(feature = "sharding")]
            shard_labels: self.sharding.as_ref().map(|s| s.labels.clone()),
        }))
    }

    /// kube-runtime's controller configuration with the manager's `--max-concurrent-reconciles`.
    pub fn controller_config(&self) -> controller::Config {
        controller::Config::default().concurrency(self.max_concurrent_reconciles)
    }
}

/// What every reconciliation of one controller shares; see the [module](self) documentation.
///
/// Cloning it is cheap: the clones share their backoff and metrics.
pub struct Reconciler<K: Resource>(Arc<Shared<K>>)
where
    K::DynamicType: Eq + Hash;

struct Shared<K: Resource>
where
    K::DynamicType: Eq + Hash,
{
    client: Client,
    field_manager: String,
    reporter: Reporter,
    metrics: ControllerMetrics,
    backoff: backoff::Backoff<K>,
    deadline: Deadline,
    #[cfg(feature = "sharding")]
    shard_labels: Option<crate::shard::ShardLabels>,
}

impl<K: Resource> Clone for Reconciler<K>
where
    K::DynamicType: Eq + Hash,
{
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<K: Resource> Debug for Reconciler<K>
where
    K::DynamicType: Eq + Hash,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconciler")
            .field("field_manager", &self.0.field_manager)
            .field("reporter", &self.0.reporter)
            .finish_non_exhaustive()
    }
}

impl<K> Reconciler<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    /// The client of the manager, authenticated as its service account.
    pub fn client(&self) -> &Client {
        &self.0.client
    }

    /// The server-side apply field manager of what the controller writes: the operator's name.
    pub fn field_manager(&self) -> &str {
        &self.0.field_manager
    }

    /// The controller's reconcile metrics.
    pub fn metrics(&self) -> &ControllerMetrics {
        &self.0.metrics
    }

    /// `reconcile` as `Controller::run` is to call it: within `--reconcile-timeout`, counted in the
    /// reconcile metrics, its object's failures forgotten on success, and (in a sharded manager)
    /// an object the sharder moves away handed over instead of reconciled.
    pub fn wrap<S, E, F, Fut>(
        &self,
        reconcile: F,
    ) -> impl FnMut(Arc<K>, Arc<S>) -> BoxFuture<'static, Result<Action, Error<E>>> + Send + 'static
    where
        S: Send + Sync + 'static,
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<S>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        K::Scope: ObjectScope,
    {
        let this = self.clone();
        let reconcile = Arc::new(reconcile);
        move |obj, state| {
            let object = ObjectRef::from(&*obj);
            let inner = this.clone();
            let reference = object.clone();
            let reconcile = Arc::clone(&reconcile);
            let reconciliation = async move {
                let started = Instant::now();
                let result = inner.hand_over_or(obj, state, &*reconcile).await;
                let outcome = match &result {
                    Ok(action) => {
                        inner.0.backoff.succeeded(&reference);
                        reconcile_result(action)
                    }
                    Err(_) => ReconcileResult::Error,
                };
                inner.0.metrics.observe(outcome, started.elapsed());
                result
            };
            this.0.deadline.bound(object, reconciliation).boxed()
        }
    }

    /// Hands `obj` over when the sharder moves it away, or reconciles it.
    async fn hand_over_or<S, E, F, Fut>(
        &self,
        obj: Arc<K>,
        state: Arc<S>,
        reconcile: &F,
    ) -> Result<Action, Error<E>>
    where
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<S>) -> Fut,
        Fut: Future<Output = Result<Action, E>>,
        K::Scope: ObjectScope,
    {
        #[cfg(feature = "sharding")]
        if let Some(labels) = &self.0.shard_labels
            && labels.is_drained(&*obj)
        {
            let api: Api<K> = object_api(self.0.client.clone(), &*obj);
            let patch = labels.hand_over(&*obj);
            return match api
                .patch_metadata(&obj.name_any(), &PatchParams::default(), &patch)
                .await
            {
                Ok(_) => Ok(Action::await_change()),
                // The object changed since this copy was cached: the change brings a
                // reconciliation.
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(Action::await_change()),
                Err(err) => Err(Error::HandOver(err)),
            };
        }
        reconcile(obj, state).await.map_err(Error::Reconcile)
    }

    /// The error policy to give `Controller::run` with [`Reconciler::wrap`]: the object is
    /// retried after a delay that doubles with each consecutive failure, from 500 ms to 5 minutes.
    pub fn error_policy<S, E>(
        &self,
    ) -> impl Fn(Arc<K>, &Error<E>, Arc<S>) -> Action + Send + 'static
    where
        E: std::error::Error + 'static,
    {
        let this = self.clone();
        move |obj, _, _| Action::requeue(this.0.backoff.failed(ObjectRef::from(&*obj)))
    }

    /// `error_policy`, the controller's own, as `Controller::run` is to call it with
    /// [`Reconciler::wrap`]: it decides on the failures of the reconcile function, and the
    /// reconciler's backoff on the rest (a reconciliation cut short by `--reconcile-timeout`, a
    /// hand-over that failed).
    pub fn error_policy_with<S, E, P>(
        &self,
        error_policy: P,
    ) -> impl Fn(Arc<K>, &Error<E>, Arc<S>) -> Action + Send + 'static
    where
        E: std::error::Error + 'static,
        P: Fn(Arc<K>, &E, Arc<S>) -> Action + Send + 'static,
    {
        let this = self.clone();
        move |obj, err, state| match err {
            Error::Reconcile(err) => error_policy(obj, err, state),
            Error::TimedOut(_) | Error::HandOver(_) => {
                Action::requeue(this.0.backoff.failed(ObjectRef::from(&*obj)))
            }
        }
    }

    /// Writes `status` to `obj` unless it is already there, then publishes an event for each
    /// condition that `status` changes the status or reason of (`event_type` tells whether it is a
    /// warning).
    ///
    /// A condition that keeps its status keeps its `lastTransitionTime`, as apimachinery's
    /// `meta.SetStatusCondition` does, so that a reconciliation which finds nothing new writes
    /// nothing. The status is written with server-side apply of the status alone: only the fields
    /// it sets are sent, so conditions other field managers own stay theirs, and `force` wins
    /// conflicts over fields someone else wrote, as the controller is the authority on its status.
    /// Events come after the status is stored, so they never announce a state that was not
    /// recorded; losing one is harmless, so a failure to publish is only logged.
    pub async fn write_status(
        &self,
        obj: &K,
        status: &K::Status,
        event_type: fn(&Condition) -> EventType,
    ) -> kube::Result<()>
    where
        K: HasStatus,
        K::Status: Serialize,
        K::Scope: ObjectScope,
    {
        let current = obj
            .status()
            .and_then(|status| serde_json::to_value(status).ok())
            .unwrap_or(Value::Null);
        let mut desired = serde_json::to_value(status).map_err(kube::Error::SerdeError)?;
        let transitions =
            conditions::carry_over(&current["conditions"], &mut desired["conditions"]);
        if desired == current {
            return Ok(());
        }
        let patch = json!({
            "apiVersion": K::api_version(&K::DynamicType::default()),
            "kind": K::kind(&K::DynamicType::default()),
            "status": desired,
        });
        let api: Api<K> = object_api(self.0.client.clone(), obj);
        api.patch_status(
            &obj.name_any(),
            &PatchParams::apply(&self.0.field_manager).force(),
            &Patch::Apply(&patch),
        )
        .await?;
        self.publish(obj, &transitions, event_type).await;
        Ok(())
    }

    /// Publishes an event for each condition of `transitions`.
    ///
    /// Each call has a `Recorder` of its own. kube's `Recorder` keeps every event it published for
    /// six minutes, to count an event that repeats into a series, and looks through all of them on
    /// every publish: shared by the controller, it would make each event cost more, and the manager
    /// hold more, with every object (30,000 events kept at a start-up of 10,000 objects). A
    /// transition is published once, so there is no series to count.
    async fn publish(
        &self,
        obj: &K,
        transitions: &[Condition],
        event_type: fn(&Condition) -> EventType,
    ) {
        if transitions.is_empty() {
            return;
        }
        let recorder = Recorder::new(self.0.client.clone(), self.0.reporter.clone());
        let reference = obj.object_ref(&K::DynamicType::default());
        for condition in transitions {
            let event = conditions::transition_event(condition, event_type(condition));
            if let Err(err) = recorder.publish(&event, &reference).await {
                warn!(error = %err, reason = event.reason, "failed to publish an event");
            }
        }
    }

    /// Applies `desired`, an object `owner` owns, with server-side apply, unless `cached` (its copy
    /// in the controller's watch cache) shows it applied already; returns the object as it now
    /// stands.
    ///
    /// `desired` is stamped with a hash of its content ([`APPLIED_HASH_ANNOTATION`]): comparing with
    /// the cache tells whether someone changed a field the controller sets, but not whether the
    /// controller stopped setting one (the ports once a port is removed from the spec, say); a new
    /// hash tells that. In a sharded manager, `desired` gets the shard label of `owner`, so that it
    /// is in the same replica's caches. Set its owner reference yourself
    /// (`owner.controller_owner_ref(&())`).
    pub async fn apply<D>(
        &self,
        owner: &K,
        #[cfg_attr(not(feature = "sharding"), expect(unused_mut))] mut desired: D,
        cached: Option<Arc<D>>,
    ) -> kube::Result<Arc<D>>
    where
        D: Resource + Serialize + DeserializeOwned + Clone + Debug,
        D::DynamicType: Default,
        D::Scope: ObjectScope,
    {
        #[cfg(feature = "sharding")]
        if let Some((label, shard)) = self
            .0
            .shard_labels
            .as_ref()
            .and_then(|labels| labels.owner_shard(owner))
        {
            desired.labels_mut().insert(label, shard);
        }
        #[cfg(not(feature = "sharding"))]
        let _ = owner;
        let desired = stamped(desired);
        if let Some(cached) = cached
            && is_applied(&desired, &cached)
        {
            return Ok(cached);
        }
        let api: Api<D> = object_api(self.0.client.clone(), &desired);
        let applied = api
            .patch(
                &desired.name_any(),
                &PatchParams::apply(&self.0.field_manager).force(),
                &Patch::Apply(&desired),
            )
            .await?;
        Ok(Arc::new(applied))
    }
}

/// `object` with the hash of its content in [`APPLIED_HASH_ANNOTATION`]: what [`Reconciler::apply`]
/// sends (in a sharded manager, with the owner's shard label too), for tests to compare with.
pub fn stamped<D: Resource + Serialize>(mut object: D) -> D {
    // Serializing an API type cannot fail; an empty hash input would only cost an extra apply.
    let content = serde_json::to_vec(&object).unwrap_or_default();
    let hash = format!("{:016x}", fnv1a(&content));
    object
        .annotations_mut()
        .insert(APPLIED_HASH_ANNOTATION.to_owned(), hash);
    object
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
pub fn is_applied<D: Serialize>(desired: &D, actual: &D) -> bool {
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

/// `value` as a label value, which may have up to 63 characters where an object name may have
/// 253: a longer one is cut to its first 52 and a hash of the whole. The hash never changes between
/// reconciliations or versions of the operator, as a Deployment's selector cannot.
pub fn label_value(value: &str) -> String {
    const MAX_LEN: usize = 63;
    if value.len() <= MAX_LEN {
        return value.to_owned();
    }
    let hash = fnv1a(value.as_bytes());
    // Object names are ASCII, so any byte index is a character boundary, but a value may not be:
    // cut at the last boundary. A label value must start and end with an alphanumeric character.
    let mut end = MAX_LEN - 11;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    let prefix = value[..end].trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    format!("{prefix}-{:010x}", hash & 0xff_ffff_ffff)
}

/// Lists one object of `api`'s kind, and says why in the log when that fails: a controller whose
/// kind cannot be listed (the CRD not installed, or the role not allowing it) would only retry a
/// watch that cannot work. `false` means the controller should return.
pub async fn can_list<K>(api: &Api<K>) -> bool
where
    K: Resource + Clone + DeserializeOwned + Debug,
    K::DynamicType: Default,
{
    match api.list_metadata(&ListParams::default().limit(1)).await {
        Ok(_) => true,
        Err(err) => {
            let kind = K::kind(&K::DynamicType::default()).into_owned();
            error!(
                error = %err,
                "cannot list {kind} objects: is the CRD installed (`make install`) and is the manager allowed to list them?"
            );
            false
        }
    }
}

/// The time limit of a controller's reconciliations (`--reconcile-timeout`).
///
/// kube-runtime runs at most `--max-concurrent-reconciles` reconciliations at a time and has no
/// limit of its own on how long one takes: a reconciliation that never finishes (a wait that is
/// never woken, a call to a service that never answers) would hold its slot for good, and stall
/// the shutdown's drain. Past the limit it is cancelled at its current `.await`, a warning names the
/// object, `controller_runtime_reconcile_timeouts_total` counts it, and the controller's error
/// policy retries it with backoff. A reconciliation must therefore be safe to cut short at any
/// `.await`, which one that converges with server-side apply is.
///
/// Every reconciliation it runs also counts as a worker in use until it ends or is cancelled, for
/// `controller_runtime_active_workers` and the `workqueue_*` series of the work.
#[derive(Clone, Debug)]
pub struct Deadline {
    timeout: Option<Duration>,
    metrics: ControllerMetrics,
}

impl Deadline {
    /// The limit `timeout` (`None` for none), recorded in the controller's `metrics`.
    pub fn new(timeout: Option<Duration>, metrics: ControllerMetrics) -> Self {
        Self { timeout, metrics }
    }

    /// Runs `reconciliation` of `object` within the limit.
    pub fn bound<E, O, R>(
        &self,
        object: O,
        reconciliation: R,
    ) -> impl Future<Output = Result<Action, E>> + Send + use<E, O, R>
    where
        E: From<TimedOut>,
        O: Display + Send + 'static,
        R: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let Self { timeout, metrics } = self.clone();
        async move {
            // A worker is in use until the reconciliation ends, or is cancelled here or by the
            // manager's shutdown.
            let _work = metrics.start_work();
            let Some(timeout) = timeout else {
                return reconciliation.await;
            };
            let started = Instant::now();
            match tokio::time::timeout(timeout, reconciliation).await {
                Ok(result) => result,
                Err(_) => {
                    warn!(%object, ?timeout, "reconciliation cancelled: it ran longer than --reconcile-timeout");
                    metrics.timed_out(started.elapsed());
                    Err(TimedOut(timeout).into())
                }
            }
        }
    }
}

/// What a failed API request tells a user reading a condition: the API server's own message when it
/// answered, the client's description otherwise. Logs get the whole error through its source.
pub fn api_error_message(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) if !status.message.is_empty() => status.message.clone(),
        other => other.to_string(),
    }
}

/// The metrics label of a successful reconciliation that returned `action`.
pub fn reconcile_result(action: &Action) -> ReconcileResult {
    if *action == Action::await_change() {
        ReconcileResult::Success
    } else if *action == Action::requeue(Duration::ZERO) {
        ReconcileResult::Requeue
    } else {
        ReconcileResult::RequeueAfter
    }
}

/// Logs what a controller's stream yields: reconciliations, their failures and watch errors. Give
/// it to the `for_each` of `Controller::run`'s stream.
pub async fn log_result<K, E>(
    result: Result<(ObjectRef<K>, Action), controller::Error<E, watcher::Error>>,
) where
    K: Resource,
    K::DynamicType: Debug,
    E: std::error::Error + Send + Sync + 'static,
{
    match result {
        Ok((object, _)) => debug!(%object, "reconciled"),
        Err(controller::Error::ReconcilerFailed(err, object)) => {
            warn!(%object, error = error_chain(&err.into()), "reconcile failed");
        }
        // A change of a deleted object raced with its deletion: nothing to do.
        Err(controller::Error::ObjectNotFound(object)) => debug!(%object, "object is gone"),
        // The manager stopped before the controller's cache had its first list (see
        // `Context::until_shutdown`): no reconciliation had started.
        Err(controller::Error::RunnerError(err)) => {
            debug!(error = %err, "stopped before the first list of the controller's objects");
        }
        Err(err) => warn!(error = error_chain(&err.into()), "controller error"),
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod deadline_tests {
    use kube::core::Status;

    use super::*;
    use crate::metrics::Metrics;

    #[derive(Debug, thiserror::Error)]
    #[error(transparent)]
    struct Failed(#[from] TimedOut);

    #[tokio::test(start_paused = true)]
    async fn a_reconciliation_past_the_deadline_is_cancelled_and_counted() {
        let metrics = Metrics::new();
        let deadline = Deadline::new(
            Some(Duration::from_secs(60)),
            metrics.controller("memcached"),
        );
        let hangs = std::future::pending::<Result<Action, Failed>>();
        let started = tokio::time::Instant::now();
        let err = deadline.bound("memcached/a", hangs).await.unwrap_err();
        assert_eq!(started.elapsed(), Duration::from_secs(60));
        assert!(err.to_string().contains("--reconcile-timeout"), "{err}");
        let text = metrics.encode().unwrap();
        let series = "controller_runtime_reconcile_timeouts_total{controller=\"memcached\"} 1";
        assert!(text.contains(series), "{text}");

        // A reconciliation within the limit, or with none, is left alone.
        let quick = async { Ok::<_, Failed>(Action::await_change()) };
        assert!(deadline.bound("memcached/b", quick).await.is_ok());
        let unbounded = Deadline::new(None, metrics.controller("memcached"));
        let slow = async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<_, Failed>(Action::await_change())
        };
        assert!(unbounded.bound("memcached/c", slow).await.is_ok());
    }

    #[test]
    fn api_errors_are_told_by_the_api_server_message() {
        let status = Status::failure("memcacheds.cache.example.com is forbidden", "Forbidden");
        assert_eq!(
            api_error_message(&kube::Error::Api(Box::new(status))),
            "memcacheds.cache.example.com is forbidden"
        );
        let err = kube::Error::LinesCodecMaxLineLengthExceeded;
        assert_eq!(api_error_message(&err), err.to_string());
    }

    #[test]
    fn reconcile_result_follows_the_action() {
        assert_eq!(
            reconcile_result(&Action::await_change()),
            ReconcileResult::Success
        );
        assert_eq!(
            reconcile_result(&Action::requeue(Duration::ZERO)),
            ReconcileResult::Requeue
        );
        assert_eq!(
            reconcile_result(&Action::requeue(Duration::from_secs(1))),
            ReconcileResult::RequeueAfter
        );
    }

    #[test]
    fn long_label_values_are_cut_with_a_stable_hash() {
        assert_eq!(label_value("short"), "short");
        let long = format!("{}-{}", "a".repeat(60), "b".repeat(30));
        let value = label_value(&long);
        assert_eq!(value.len(), 63);
        assert!(value.starts_with(&"a".repeat(51)), "{value}");
        // The hash of the whole name, the same in every version of the operator.
        assert_eq!(value, label_value(&long));
        assert_ne!(value, label_value(&format!("{long}c")));
        // A value must end in an alphanumeric character before the hash.
        let dashes = format!("{}{}", "a".repeat(50), "-".repeat(40));
        assert!(label_value(&dashes).starts_with(&format!("{}-", "a".repeat(50))));
    }
}
