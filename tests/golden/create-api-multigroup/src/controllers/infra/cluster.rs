//! The controller of `Cluster` (`infra.example.com/v1`).
//!
//! Each reconciliation makes sure the object carries the operator's finalizer, brings the cluster to
//! what its spec asks for, and reports the outcome in the `Ready` condition, written through the
//! status subresource with server-side apply and announced with an event when it changes. Deletion
//! waits for [`cleanup`], then the finalizer is removed.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{ListParams, Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Action, Config, Controller};
use kube::runtime::events::{EventType, Recorder, Reporter};
use kube::runtime::finalizer::{self, Event as Finalizer, finalizer};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde_json::json;
use tracing::{error, info, instrument, warn};

use crate::api::infra::v1::Cluster;
use crate::api::infra::v1::ClusterStatus;
use crate::controllers::backoff::Backoff;
use crate::controllers::cache;
use crate::controllers::conditions::{self, Change};
use crate::controllers::watch;
use crate::controllers::{Deadline, TimedOut, log_result, reconcile_result};
use crate::manager::context::Context;
use crate::manager::metrics::{ControllerMetrics, ReconcileResult};
use crate::manager::shard::{self, Sharder};

/// The controller's name in metrics and logs.
const CONTROLLER_NAME: &str = "cluster";
/// The finalizer that holds a deleted Cluster until [`cleanup`] has run.
///
/// It is for what owner references cannot clean up, such as state outside the cluster, and costs
/// a request when an object is created and another when it is deleted. If [`cleanup`] has nothing
/// to do, because everything a Cluster makes is owned by it, remove the finalizer and let the
/// garbage collector do the deleting, as the controllers `rsop create api --image` writes do.
pub const FINALIZER: &str = "infra.example.com/finalizer";
/// The server-side apply field manager of everything this controller writes.
const FIELD_MANAGER: &str = "platform-operator";
/// The `reportingController` of the events this controller publishes.
const EVENT_REPORTER: &str = "cluster-controller";

/// The condition that tells whether the latest spec has been reconciled.
pub const READY: &str = "Ready";

/// Why a reconciliation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the Kubernetes API failed.
    #[error("{}", crate::controllers::api_error_message(.0))]
    Kube(#[from] kube::Error),
    /// Adding or removing the finalizer failed, or the reconciliation it wrapped.
    #[error(transparent)]
    Finalizer(#[from] Box<finalizer::Error<Error>>),
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
    backoff: Backoff<Cluster>,
}

impl State {
    fn new(client: Client, metrics: ControllerMetrics) -> Self {
        Self {
            reporter: Reporter::from(EVENT_REPORTER),
            client,
            metrics,
            backoff: Backoff::default(),
        }
    }
}

// The requests this controller sends, and no more, each marker next to its calls: `rsop manifests
// --rbac=check` finds every call in the code and names the marker a new one needs.
// +rsop:rbac:groups=infra.example.com,resources=clusters,verbs=list;watch

/// Runs the controller until the manager shuts down.
pub async fn run(ctx: Arc<Context>) {
    // A cluster-scoped kind: every object, whatever `--namespace` says.
    let api = Api::<Cluster>::all(ctx.client.clone());
    // Fail fast, with a message that says why, rather than retry a watch that cannot work.
    if let Err(err) = api.list_metadata(&ListParams::default().limit(1)).await {
        error!(
            error = %err,
            "cannot list Cluster objects: is the CRD installed (`make install`) and is the manager allowed to list them?"
        );
        return;
    }
    let metrics = ctx.controller_metrics(CONTROLLER_NAME);
    let deadline = Deadline::new(ctx.reconcile_timeout, metrics.clone());
    let state = Arc::new(State::new(ctx.client.clone(), metrics));
    let (reader, writer) = reflector::store();
    let objects = watch::resilient(watcher(api, ctx.sharded(watcher::Config::default())));
    let objects = cache::fill(objects, writer).touched_objects();
    Controller::for_stream(objects, reader)
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

/// Reconciles one Cluster, recording the outcome in the controller metrics.
#[instrument(skip_all, fields(namespace = obj.namespace(), name = obj.name_any()))]
async fn reconcile(obj: Arc<Cluster>, state: Arc<State>) -> Result<Action, Error> {
    let started = Instant::now();
    let object = ObjectRef::from(&*obj);
    let result = if shard::is_drained(&*obj) {
        hand_over(&obj, &state).await
    } else {
        apply_or_cleanup(obj, &state).await
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

/// Gives `obj` up to the shard the sharder moves it to (see `manager::shard`).
async fn hand_over(obj: &Cluster, state: &State) -> Result<Action, Error> {
    let api: Api<Cluster> = Api::all(state.client.clone());
    let (params, patch) = (PatchParams::default(), shard::hand_over(obj));
    match api.patch_metadata(&obj.name_any(), &params, &patch).await {
        Ok(_) => Ok(Action::await_change()),
        // The object changed since this copy was cached: the change brings a reconciliation.
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(Action::await_change()),
        Err(err) => Err(err.into()),
    }
}

/// Adds the Clusters to `sharder`, which spreads them over the replicas when the manager is
/// sharded (see `manager::shard`): only their metadata is read.
pub fn sharded(sharder: Sharder, ctx: &Context) -> Sharder {
    let api = Api::<PartialObjectMeta<Cluster>>::all(ctx.client.clone());
    sharder.cluster_kind(api)
}

// `finalizer` adds and removes the finalizer with a patch, and `hand_over` removes the shard labels.
// +rsop:rbac:groups=infra.example.com,resources=clusters,verbs=patch
/// Adds the finalizer to a new object, applies a live one, and cleans up a deleted one.
async fn apply_or_cleanup(obj: Arc<Cluster>, state: &State) -> Result<Action, Error> {
    let api = Api::all(state.client.clone());
    finalizer(&api, FINALIZER, obj, |event| async {
        match event {
            Finalizer::Apply(obj) => apply(&obj, state).await,
            Finalizer::Cleanup(obj) => cleanup(&obj, state).await,
        }
    })
    .await
    .map_err(|err| Error::Finalizer(Box::new(err)))
}

/// Brings the cluster to what `obj` asks for and reports the outcome in its status.
async fn apply(obj: &Cluster, state: &State) -> Result<Action, Error> {
    let synced = sync(obj, state).await;
    let status = ClusterStatus {
        conditions: vec![ready_condition(obj, synced.as_ref().err())],
        observed_generation: obj.metadata.generation,
    };
    let api = Api::all(state.client.clone());
    write_status(obj, status, &api, state).await?;
    // Changes to the Cluster trigger the next reconciliation. TODO(user): return
    // `Action::requeue(...)` instead if the state you reconcile can change without a watch event.
    synced.map(|()| Action::await_change())
}

/// Makes the cluster match `obj.spec`.
///
/// TODO(user): create or update what a Cluster stands for, with server-side apply under
/// [`FIELD_MANAGER`] so that every reconciliation converges, and add the RBAC markers above `run`
/// for what it touches. An error is reported in the `Ready` condition and retried with backoff.
async fn sync(_obj: &Cluster, _state: &State) -> Result<(), Error> {
    Ok(())
}

/// Releases what a deleted Cluster holds; the finalizer goes once this succeeds.
///
/// TODO(user): release what lives outside the cluster or is not owned through owner references;
/// the garbage collector deletes owned objects. An error keeps the finalizer and is retried.
async fn cleanup(_obj: &Cluster, _state: &State) -> Result<Action, Error> {
    info!("cleaned up");
    Ok(Action::await_change())
}

/// The `Ready` condition after a reconciliation that ended with `failure`.
fn ready_condition(obj: &Cluster, failure: Option<&Error>) -> Condition {
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

// +rsop:rbac:groups=infra.example.com,resources=clusters/status,verbs=patch
// +rsop:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
/// Writes `status` to `obj` unless it is already there, then publishes one event per condition
/// transition.
async fn write_status(
    obj: &Cluster,
    mut status: ClusterStatus,
    api: &Api<Cluster>,
    state: &State,
) -> Result<(), Error> {
    let current = obj.status.clone().unwrap_or_default();
    let mut changed = status.observed_generation != current.observed_generation;
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
        "apiVersion": Cluster::api_version(&()),
        "kind": Cluster::kind(&()),
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
async fn publish_transitions(state: &State, obj: &Cluster, transitions: &[Condition]) {
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
fn error_policy(obj: Arc<Cluster>, _err: &Error, state: Arc<State>) -> Action {
    Action::requeue(state.backoff.failed(ObjectRef::from(&*obj)))
}

#[cfg(test)]
mod tests {
    use http::{Method, StatusCode};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;
    use serde_json::Value;

    use super::*;
    use crate::api::infra::v1::ClusterSpec;
    use crate::controllers::testing::{ApiServer, drained, finished, mock_client};
    use crate::manager::metrics::Metrics;

    /// Where the client reads and writes the test object.
    fn url() -> String {
        let collection = Cluster::url_path(&(), None);
        format!("{collection}/test")
    }

    /// Where the controller applies the test object's status.
    fn status_url() -> String {
        format!("{}/status?&force=true&fieldManager={FIELD_MANAGER}", url())
    }
    const EVENTS_URL: &str = "/apis/events.k8s.io/v1/namespaces/default/events?";

    /// An error a reconciliation can end with.
    fn failure() -> Error {
        Error::Finalizer(Box::new(finalizer::Error::UnnamedObject))
    }

    /// A Cluster as the API server returns it, without finalizer or status.
    fn object() -> Cluster {
        let mut obj = Cluster::new(
            "test",
            ClusterSpec {
                foo: None,
                count: 1,
            },
        );
        obj.metadata.uid = Some("6ac0d01a-8fda-4b94-a8ec-6b8e0e4a39f2".into());
        obj.metadata.generation = Some(1);
        obj
    }

    fn with_finalizer(mut obj: Cluster) -> Cluster {
        obj.metadata.finalizers = Some(vec![FINALIZER.into()]);
        obj
    }

    fn ready_since(obj: &Cluster, seconds: i64) -> ClusterStatus {
        ClusterStatus {
            conditions: vec![Condition {
                last_transition_time: Time(Timestamp::from_second(seconds).unwrap()),
                ..ready_condition(obj, None)
            }],
            observed_generation: obj.metadata.generation,
        }
    }

    fn state() -> (Arc<State>, ApiServer) {
        let (state, server, _) = state_with_metrics();
        (state, server)
    }

    fn state_with_metrics() -> (Arc<State>, ApiServer, Metrics) {
        let (client, server) = mock_client();
        let metrics = Metrics::new();
        let state = State::new(client, metrics.controller(CONTROLLER_NAME));
        (Arc::new(state), server, metrics)
    }

    /// Runs `reconcile` on its own task, so the test can play the API server meanwhile.
    fn spawn_reconcile(
        obj: Cluster,
        state: &Arc<State>,
    ) -> tokio::task::JoinHandle<Result<Action, Error>> {
        tokio::spawn(reconcile(Arc::new(obj), state.clone()))
    }

    /// Drops the state, and with it every client, then checks the script is complete.
    async fn finish(state: Arc<State>, server: ApiServer) {
        drop(state);
        server.assert_no_more_requests().await;
    }

    #[test]
    fn ready_condition_reports_success_and_failure() {
        let obj = object();
        let ready = ready_condition(&obj, None);
        assert_eq!(
            (
                ready.type_.as_str(),
                ready.status.as_str(),
                ready.reason.as_str()
            ),
            ("Ready", "True", "Reconciled")
        );
        assert_eq!(ready.observed_generation, Some(1));
        assert_eq!(event_type(&ready), EventType::Normal);

        let failed = ready_condition(&obj, Some(&failure()));
        assert_eq!(
            (
                failed.status.as_str(),
                failed.reason.as_str(),
                failed.message.as_str()
            ),
            ("False", "ReconcileFailed", failure().to_string().as_str())
        );
        assert_eq!(event_type(&failed), EventType::Warning);
    }

    #[tokio::test]
    async fn error_policy_backs_off_until_a_success() {
        let (state, server) = state();
        let mut obj = with_finalizer(object());
        let err = failure();
        let first = error_policy(Arc::new(obj.clone()), &err, state.clone());
        let second = error_policy(Arc::new(obj.clone()), &err, state.clone());
        assert_ne!(first, second);

        obj.status = Some(ready_since(&obj, 0));
        finished(spawn_reconcile(obj.clone(), &state))
            .await
            .unwrap();
        assert_eq!(error_policy(Arc::new(obj), &err, state.clone()), first);
        finish(state, server).await;
    }

    #[tokio::test]
    async fn first_reconcile_adds_the_finalizer() {
        let (state, mut server) = state();
        let obj = object();
        let reconciling = spawn_reconcile(obj.clone(), &state);

        let request = server.expect(Method::PATCH, &format!("{}?", url())).await;
        assert_eq!(
            request.content_type.as_deref(),
            Some("application/json-patch+json")
        );
        assert_eq!(
            request.body,
            json!([
                { "op": "test", "path": "/metadata/finalizers", "value": null },
                { "op": "add", "path": "/metadata/finalizers", "value": [FINALIZER] },
            ])
        );
        request.respond(StatusCode::OK, &with_finalizer(obj));

        // The patch triggers a watch event, which brings the next reconciliation.
        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn reconcile_applies_the_ready_status_and_announces_it() {
        let (state, mut server) = state();
        let obj = with_finalizer(object());
        let reconciling = spawn_reconcile(obj.clone(), &state);

        let request = server.expect(Method::PATCH, &status_url()).await;
        assert_eq!(
            request.content_type.as_deref(),
            Some("application/apply-patch+yaml")
        );
        let condition = &request.body["status"]["conditions"][0];
        assert_eq!(
            request.body,
            json!({
                "apiVersion": "infra.example.com/v1",
                "kind": "Cluster",
                "status": {
                    "conditions": [{
                        "type": "Ready",
                        "status": "True",
                        "reason": "Reconciled",
                        "message": "The latest spec is reconciled",
                        "observedGeneration": 1,
                        "lastTransitionTime": condition["lastTransitionTime"],
                    }],
                    "observedGeneration": 1,
                },
            })
        );
        assert!(condition["lastTransitionTime"].is_string());
        let mut stored = obj.clone();
        stored.status = Some(serde_json::from_value(request.body["status"].clone()).unwrap());
        request.respond(StatusCode::OK, &stored);

        let request = server.expect(Method::POST, EVENTS_URL).await;
        let event = &request.body;
        assert_eq!(event["type"], "Normal");
        assert_eq!(event["reason"], "Reconciled");
        assert_eq!(
            event["note"],
            "Ready is True: The latest spec is reconciled"
        );
        assert_eq!(event["reportingController"], EVENT_REPORTER);
        assert_eq!(event["regarding"]["kind"], "Cluster");
        assert_eq!(event["regarding"]["name"], "test");
        assert_eq!(
            event["regarding"]["uid"],
            obj.metadata.uid.as_deref().unwrap()
        );
        let body = event.clone();
        request.respond(StatusCode::CREATED, &body);

        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    /// One new Cluster from creation to steady state, every request counted (events aside).
    #[tokio::test]
    async fn a_new_object_reaches_steady_state_in_two_requests() {
        let (state, mut server) = state();
        let mut requests = 0;
        let obj = object();

        let reconciling = spawn_reconcile(obj.clone(), &state);
        let request = server.expect(Method::PATCH, &format!("{}?", url())).await;
        requests += 1;
        let obj = with_finalizer(obj);
        request.respond(StatusCode::OK, &obj);
        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());

        // The finalizer's watch event brings the reconciliation that writes the status.
        let reconciling = spawn_reconcile(obj.clone(), &state);
        let request = server.expect(Method::PATCH, &status_url()).await;
        requests += 1;
        let mut stored = obj.clone();
        stored.status = Some(serde_json::from_value(request.body["status"].clone()).unwrap());
        request.respond(StatusCode::OK, &stored);
        let request = server.expect(Method::POST, EVENTS_URL).await;
        let body = request.body.clone();
        request.respond(StatusCode::CREATED, &body);
        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        assert_eq!(requests, 2, "requests from creation to steady state");

        // The status's watch event, or a resync, finds nothing to change and sends nothing.
        let reconciling = spawn_reconcile(stored, &state);
        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn reconciled_object_needs_no_request() {
        let (state, server) = state();
        let mut obj = with_finalizer(object());
        obj.status = Some(ready_since(&obj, 1_700_000_000));
        let action = finished(spawn_reconcile(obj, &state)).await.unwrap();
        assert_eq!(action, Action::await_change());
        finish(state, server).await;
    }

    /// A Cluster the sharder moves to another replica is handed over, and nothing else is done
    /// with it here: its shard and drain labels are removed, at the version this replica saw.
    #[tokio::test]
    async fn drained_object_is_handed_over() {
        let (state, mut server) = state();
        let reconciling = spawn_reconcile(drained(with_finalizer(object())), &state);
        server.expect_hand_over(&url()).await;
        let action = finished(reconciling).await.unwrap();
        assert_eq!(action, Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn new_generation_updates_the_status_without_an_event() {
        let (state, mut server) = state();
        let mut obj = with_finalizer(object());
        obj.status = Some(ready_since(&obj, 1_700_000_000));
        obj.metadata.generation = Some(2);
        let reconciling = spawn_reconcile(obj.clone(), &state);

        let request = server.expect(Method::PATCH, &status_url()).await;
        let status = &request.body["status"];
        assert_eq!(status["observedGeneration"], 2);
        assert_eq!(status["conditions"][0]["observedGeneration"], 2);
        // Still Ready since the same moment: no transition.
        assert_eq!(
            status["conditions"][0]["lastTransitionTime"],
            "2023-11-14T22:13:20Z"
        );
        request.respond(StatusCode::OK, &obj);

        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[tokio::test]
    async fn failed_status_write_fails_the_reconciliation() {
        let (state, mut server) = state();
        let obj = with_finalizer(object());
        let reconciling = spawn_reconcile(obj, &state);

        server
            .expect(Method::PATCH, &status_url())
            .await
            .respond_error(StatusCode::FORBIDDEN, "Forbidden", "status is forbidden");

        let err = finished(reconciling).await.unwrap_err();
        assert!(err.to_string().contains("status is forbidden"), "{err}");
        finish(state, server).await;
    }

    #[tokio::test]
    async fn outcomes_are_counted_in_the_metrics() {
        let (state, mut server, metrics) = state_with_metrics();
        let mut obj = with_finalizer(object());
        obj.status = Some(ready_since(&obj, 0));
        finished(spawn_reconcile(obj.clone(), &state))
            .await
            .unwrap();

        obj.metadata.generation = Some(2);
        let reconciling = spawn_reconcile(obj, &state);
        server
            .expect(Method::PATCH, &status_url())
            .await
            .respond_error(StatusCode::CONFLICT, "Conflict", "try again");
        finished(reconciling).await.unwrap_err();

        let text = metrics.encode().unwrap();
        for series in [
            r#"controller_runtime_reconcile_total{controller="cluster",result="success"} 1"#,
            r#"controller_runtime_reconcile_total{controller="cluster",result="error"} 1"#,
            r#"controller_runtime_reconcile_errors_total{controller="cluster"} 1"#,
            r#"controller_runtime_reconcile_time_seconds_count{controller="cluster"} 2"#,
        ] {
            assert!(text.contains(series), "{series} missing in:\n{text}");
        }
        finish(state, server).await;
    }

    #[tokio::test]
    async fn deleted_object_is_cleaned_up_and_released() {
        let (state, mut server) = state();
        let mut obj = with_finalizer(object());
        obj.metadata.deletion_timestamp =
            Some(Time(Timestamp::from_second(1_700_000_000).unwrap()));
        let reconciling = spawn_reconcile(obj.clone(), &state);

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

        assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
        finish(state, server).await;
    }

    #[test]
    fn status_serializes_in_camel_case_without_empty_fields() {
        let empty = serde_json::to_value(ClusterStatus::default()).unwrap();
        assert_eq!(empty, json!({}));
        let obj = object();
        let status = serde_json::to_value(ready_since(&obj, 0)).unwrap();
        assert_eq!(status["observedGeneration"], 1);
        assert_eq!(
            status["conditions"][0]["lastTransitionTime"],
            "1970-01-01T00:00:00Z"
        );
        assert!(matches!(status, Value::Object(ref fields) if fields.len() == 2));
    }
}
