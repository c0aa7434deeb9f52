//! The Deployment controller's tests, on kube-rs's mock client (`crate::manager::testing`):
//! they answer the controller's requests as the API server would, and run without a cluster.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::Resource;

use super::*;
use crate::manager::metrics::Metrics;
use crate::manager::testing::{ApiServer, drained, finished, mock_client};

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
    obj.metadata.deletion_timestamp = Some(Time(Timestamp::from_second(1_700_000_000).unwrap()));
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
