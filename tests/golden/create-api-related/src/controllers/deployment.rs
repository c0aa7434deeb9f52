//! The controller `deployment` of `Deployment` (`apps/v1`), a kind Kubernetes defines:
//! the project has no types and no CRD for it, only this controller on k8s-openapi's type.
//!
//! Each reconciliation gets a Deployment from the controller's watch cache and hands it to
//! [`apply`], which you complete. The scaffold writes nothing, so it sends no request but one, to hand an object over
//! to another replica when the manager is sharded (`--shards`).

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{ListParams, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Action, Config, Controller};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use tracing::{error, instrument};

use crate::controllers::backoff::Backoff;
use crate::controllers::cache;
use crate::controllers::watch;
use crate::controllers::{Deadline, TimedOut, log_result, reconcile_result};
use crate::manager::context::Context;
use crate::manager::metrics::{ControllerMetrics, ReconcileResult};
use crate::manager::shard::{self, Sharder};

/// The controller's name in metrics and logs.
const CONTROLLER_NAME: &str = "deployment";

/// Why a reconciliation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the Kubernetes API failed.
    #[error("{}", crate::controllers::api_error_message(.0))]
    Kube(#[from] kube::Error),
    /// The reconciliation ran longer than `--reconcile-timeout`.
    #[error(transparent)]
    TimedOut(#[from] TimedOut),
}

/// What every reconciliation of this controller shares.
struct State {
    client: Client,
    metrics: ControllerMetrics,
    backoff: Backoff<Deployment>,
}

impl State {
    fn new(client: Client, metrics: ControllerMetrics) -> Self {
        Self {
            client,
            metrics,
            backoff: Backoff::default(),
        }
    }
}

// The requests this controller sends, and no more: `rsop manifests --rbac=check` finds every call
// in the code and names the marker a new one needs.
// +rsop:rbac:groups=apps,resources=deployments,verbs=list;watch

/// Runs the controller until the manager shuts down.
pub async fn run(ctx: Arc<Context>) {
    let api = ctx.api::<Deployment>();
    // Fail fast, with a message that says why, rather than retry a watch that cannot work.
    if let Err(err) = api.list_metadata(&ListParams::default().limit(1)).await {
        error!(
            error = %err,
            "cannot list Deployment objects: is the manager allowed to list them?"
        );
        return;
    }
    // TODO(user): watch only the Deployment objects this controller is for, with a label or field
    // selector in `watcher::Config`: on a large cluster the cache of every one of them is big.
    let (objects, objects_writer) = reflector::store();

    let metrics = ctx.controller_metrics(CONTROLLER_NAME);
    let deadline = Deadline::new(ctx.reconcile_timeout, metrics.clone());
    let state = Arc::new(State::new(ctx.client.clone(), metrics));
    let object_events = watch::resilient(watcher(api, ctx.sharded(watcher::Config::default())));
    let object_events = cache::fill(object_events, objects_writer).touched_objects();
    Controller::for_stream(object_events, objects)
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

/// Reconciles one Deployment, recording the outcome in the controller metrics.
#[instrument(skip_all, fields(namespace = obj.namespace(), name = obj.name_any()))]
async fn reconcile(obj: Arc<Deployment>, state: Arc<State>) -> Result<Action, Error> {
    let started = Instant::now();
    let object = ObjectRef::from(&*obj);
    let result = if shard::is_drained(&*obj) {
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

// +rsop:rbac:groups=apps,resources=deployments,verbs=patch
/// Gives `obj` up to the shard the sharder moves it to (see `manager::shard`).
async fn hand_over(obj: &Deployment, state: &State) -> Result<Action, Error> {
    // An object of a namespaced kind always has a namespace.
    let ns = obj.namespace().unwrap_or_default();
    let api: Api<Deployment> = Api::namespaced(state.client.clone(), &ns);
    let (params, patch) = (PatchParams::default(), shard::hand_over(obj));
    match api.patch_metadata(&obj.name_any(), &params, &patch).await {
        Ok(_) => Ok(Action::await_change()),
        // The object changed since this copy was cached: the change brings a reconciliation.
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(Action::await_change()),
        Err(err) => Err(err.into()),
    }
}

/// Adds the Deployments to `sharder`, which spreads them over the replicas when the manager is
/// sharded (see `manager::shard`): only their metadata is read.
pub fn sharded(sharder: Sharder, ctx: &Context) -> Sharder {
    sharder.namespaced_kind(ctx.api::<PartialObjectMeta<Deployment>>())
}

/// Brings the cluster to what `obj` calls for.
///
/// TODO(user): do what this controller is for, with server-side apply so that every
/// reconciliation converges, and add RBAC markers above `run` for what it touches. The
/// Deployment is not the operator's: change only what is yours in it, such as an annotation
/// under the project's domain, under a field manager of your own. An error is retried with
/// backoff.
async fn apply(obj: &Deployment, _state: &State) -> Result<Action, Error> {
    // A Deployment being deleted is left to its owners and the garbage collector.
    if obj.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    // Changes to the Deployment trigger the next reconciliation. TODO(user):
    // return `Action::requeue(...)` instead if what you reconcile can change without a watch event.
    Ok(Action::await_change())
}

/// Schedules the retry of a failed reconciliation with a per-object exponential backoff.
fn error_policy(obj: Arc<Deployment>, _err: &Error, state: Arc<State>) -> Action {
    Action::requeue(state.backoff.failed(ObjectRef::from(&*obj)))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;
    use kube::Resource;

    use super::*;
    use crate::controllers::testing::{ApiServer, drained, finished, mock_client};
    use crate::manager::metrics::Metrics;

    /// A Deployment as the API server returns it.
    fn object() -> Deployment {
        let mut obj = Deployment::default();
        obj.metadata.name = Some("test".into());
        obj.metadata.namespace = Some("default".into());
        obj.metadata.uid = Some("6ac0d01a-8fda-4b94-a8ec-6b8e0e4a39f2".into());
        obj.metadata.generation = Some(1);
        obj
    }

    fn state() -> (Arc<State>, ApiServer, Metrics) {
        let (client, server) = mock_client();
        let metrics = Metrics::new();
        let state = State::new(client, metrics.controller(CONTROLLER_NAME));
        (Arc::new(state), server, metrics)
    }

    /// Drops the state, and with it every client, then checks the script is complete.
    async fn finish(state: Arc<State>, server: ApiServer) {
        drop(state);
        server.assert_no_more_requests().await;
    }

    #[tokio::test]
    async fn reconcile_sends_no_request_and_is_counted() {
        let (state, server, metrics) = state();
        let reconciling = tokio::spawn(reconcile(Arc::new(object()), state.clone()));
        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());

        let text = metrics.encode().unwrap();
        let series =
            r#"controller_runtime_reconcile_total{controller="deployment",result="success"} 1"#;
        assert!(text.contains(series), "{series} missing in:\n{text}");
        finish(state, server).await;
    }

    /// A Deployment the sharder moves to another replica is handed over, and nothing else is done
    /// with it here: its shard and drain labels are removed, at the version this replica saw.
    #[tokio::test]
    async fn a_drained_deployment_is_handed_over() {
        let (state, mut server, _) = state();
        let reconciling = tokio::spawn(reconcile(Arc::new(drained(object())), state.clone()));
        let collection = Deployment::url_path(&(), Some("default"));
        server.expect_hand_over(&format!("{collection}/test")).await;
        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn a_deleted_deployment_is_left_alone() {
        let (state, server, _) = state();
        let mut obj = object();
        obj.metadata.deletion_timestamp =
            Some(Time(Timestamp::from_second(1_700_000_000).unwrap()));
        let reconciling = tokio::spawn(reconcile(Arc::new(obj), state.clone()));
        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn error_policy_backs_off_until_a_success() {
        let (state, server, _) = state();
        let obj = Arc::new(object());
        let err = Error::Kube(kube::Error::LinesCodecMaxLineLengthExceeded);
        let first = error_policy(obj.clone(), &err, state.clone());
        let second = error_policy(obj.clone(), &err, state.clone());
        assert_ne!(first, second);

        finished(tokio::spawn(reconcile(obj.clone(), state.clone())))
            .await
            .unwrap();
        assert_eq!(error_policy(obj, &err, state.clone()), first);
        finish(state, server).await;
    }
}
