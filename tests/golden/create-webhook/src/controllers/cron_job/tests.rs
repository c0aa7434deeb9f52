//! The CronJob controller's tests, on kube-rs's mock client (`rsop_runtime::testing`): they
//! answer the controller's requests as the API server would, and run without a cluster.

use http::{Method, StatusCode};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::Resource;
use rsop_runtime::testing::{self, ApiServer, finished, mock_client};
use serde_json::{Value, json};

use super::*;
use crate::api::v1::CronJobSpec;

/// Where the client reads and writes the test object.
fn url() -> String {
    let collection = CronJob::url_path(&(), Some("default"));
    format!("{collection}/test")
}

/// Where the controller applies the test object's status.
fn status_url(state: &State) -> String {
    let manager = state.reconciler.field_manager();
    format!("{}/status?&force=true&fieldManager={manager}", url())
}
const EVENTS_URL: &str = "/apis/events.k8s.io/v1/namespaces/default/events?";

/// An error a reconciliation can end with.
fn failure() -> Error {
    Error::Finalizer(Box::new(finalizer::Error::UnnamedObject))
}

/// A CronJob as the API server returns it, without finalizer or status.
fn object() -> CronJob {
    // Read from JSON as the API server sends it, so that a field added to the spec (with a
    // default, or optional) needs no change here.
    let spec: CronJobSpec = serde_json::from_value(json!({ "count": 1 })).unwrap();
    let mut obj = CronJob::new("test", spec);
    obj.metadata.namespace = Some("default".into());
    obj.metadata.uid = Some("6ac0d01a-8fda-4b94-a8ec-6b8e0e4a39f2".into());
    obj.metadata.generation = Some(1);
    obj
}

fn with_finalizer(mut obj: CronJob) -> CronJob {
    obj.metadata.finalizers = Some(vec![FINALIZER.into()]);
    obj
}

fn ready_since(obj: &CronJob, seconds: i64) -> CronJobStatus {
    CronJobStatus {
        conditions: vec![Condition {
            last_transition_time: Time(Timestamp::from_second(seconds).unwrap()),
            ..ready_condition(obj, None)
        }],
        observed_generation: obj.metadata.generation,
    }
}

/// The controller's state on a mock API server that authorizes as `config/rbac/` does.
fn state() -> (Arc<State>, ApiServer) {
    let (client, server) = mock_client();
    let state = State {
        reconciler: testing::context(client).reconciler(CONTROLLER_NAME),
    };
    (Arc::new(state), server)
}

/// A reconciliation running on its own task.
type Reconciling = tokio::task::JoinHandle<Result<Action, Error>>;

/// Runs `reconcile` on its own task, so the test can play the API server meanwhile.
fn spawn_reconcile(obj: CronJob, state: &Arc<State>) -> Reconciling {
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

    let request = server.expect(Method::PATCH, &status_url(&state)).await;
    assert_eq!(
        request.content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    let condition = &request.body["status"]["conditions"][0];
    assert_eq!(
        request.body,
        json!({
            "apiVersion": "batch.example.com/v1",
            "kind": "CronJob",
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
    let reporter = format!("{CONTROLLER_NAME}-controller");
    assert_eq!(event["reportingController"], reporter);
    assert_eq!(event["regarding"]["kind"], "CronJob");
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

/// One new CronJob from creation to steady state, every request counted (events aside).
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
    let request = server.expect(Method::PATCH, &status_url(&state)).await;
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

#[tokio::test]
async fn new_generation_updates_the_status_without_an_event() {
    let (state, mut server) = state();
    let mut obj = with_finalizer(object());
    obj.status = Some(ready_since(&obj, 1_700_000_000));
    obj.metadata.generation = Some(2);
    let reconciling = spawn_reconcile(obj.clone(), &state);

    let request = server.expect(Method::PATCH, &status_url(&state)).await;
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
        .expect(Method::PATCH, &status_url(&state))
        .await
        .respond_error(StatusCode::FORBIDDEN, "Forbidden", "status is forbidden");

    let err = finished(reconciling).await.unwrap_err();
    assert!(err.to_string().contains("status is forbidden"), "{err}");
    finish(state, server).await;
}

#[tokio::test]
async fn deleted_object_is_cleaned_up_and_released() {
    let (state, mut server) = state();
    let mut obj = with_finalizer(object());
    obj.metadata.deletion_timestamp = Some(Time(Timestamp::from_second(1_700_000_000).unwrap()));
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
    let empty = serde_json::to_value(CronJobStatus::default()).unwrap();
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
