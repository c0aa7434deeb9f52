//! The Deployment controller's tests, on kube-rs's mock client (`rsop_runtime::testing`): they
//! answer the controller's requests as the API server would, and run without a cluster.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use rsop_runtime::testing::{ApiServer, finished, mock_client};

use super::*;

/// A Deployment as the API server returns it.
fn object() -> Deployment {
    let mut obj = Deployment::default();
    obj.metadata.name = Some("test".into());
    obj.metadata.namespace = Some("default".into());
    obj.metadata.uid = Some("6ac0d01a-8fda-4b94-a8ec-6b8e0e4a39f2".into());
    obj.metadata.generation = Some(1);
    obj
}

/// The controller's state, and the mock API server its client would reach.
fn state() -> (Arc<State>, ApiServer) {
    let (_client, server) = mock_client();
    let state = State {};
    (Arc::new(state), server)
}

/// Drops the state, and with it every client, then checks the script is complete.
async fn finish(state: Arc<State>, server: ApiServer) {
    drop(state);
    server.assert_no_more_requests().await;
}

#[tokio::test]
async fn reconcile_sends_no_request() {
    let (state, server) = state();
    let reconciling = tokio::spawn(reconcile(Arc::new(object()), state.clone()));
    assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
    finish(state, server).await;
}

#[tokio::test]
async fn a_deleted_deployment_is_left_alone() {
    let (state, server) = state();
    let mut obj = object();
    obj.metadata.deletion_timestamp = Some(Time(Timestamp::from_second(1_700_000_000).unwrap()));
    let reconciling = tokio::spawn(reconcile(Arc::new(obj), state.clone()));
    assert_eq!(finished(reconciling).await.unwrap(), Action::await_change());
    finish(state, server).await;
}
