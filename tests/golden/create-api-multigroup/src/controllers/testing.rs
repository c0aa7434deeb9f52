//! A scripted Kubernetes API server for reconcile tests, on tower-test's mock service as in
//! kube-rs's own controller examples.
//!
//! A test runs the reconciler on a task, then answers each request it expects with
//! [`ApiServer::expect`] and [`Request::respond`], checking method, URL and body on the way. Running
//! out of the script hangs nothing: `expect` gives up after half a minute, and
//! [`ApiServer::assert_no_more_requests`] checks that nothing was left unanswered.

use std::time::Duration;

use http::{Method, StatusCode};
use kube::Client;
use kube::client::Body;
use serde::Serialize;
use serde_json::Value;
use tower_test::mock::{self, Handle, SendResponse};

/// How long a test waits for a request it expects. Well beyond the longest retry delay of a
/// watch (`watch::MAX_DELAY` with its jitter): on paused time, where waiting costs nothing, a
/// retry that is due must never be taken for a request that will not come.
const TIMEOUT: Duration = Duration::from_secs(30);

type MockHandle = Handle<http::Request<Body>, http::Response<Body>>;

/// A client whose requests reach the returned [`ApiServer`], with `default` as its namespace.
pub(crate) fn mock_client() -> (Client, ApiServer) {
    let (service, handle) = mock::pair::<http::Request<Body>, http::Response<Body>>();
    (Client::new(service, "default"), ApiServer(handle))
}

/// The output of `task`, failing the test if it does not finish in time, which is what a
/// reconciler waiting for the answer to a request the test did not expect does.
pub(crate) async fn finished<T>(task: tokio::task::JoinHandle<T>) -> T {
    tokio::time::timeout(TIMEOUT, task)
        .await
        .expect("the task did not finish: is it waiting for an unexpected request?")
        .expect("the task panicked")
}

/// The server side of [`mock_client`].
pub(crate) struct ApiServer(MockHandle);

/// One request the client sent, waiting for its response.
pub(crate) struct Request {
    pub method: Method,
    /// Path and query, e.g. `/api/v1/namespaces/default/pods?labelSelector=...`.
    pub uri: String,
    pub content_type: Option<String>,
    /// The JSON body, `Value::Null` when there is none.
    pub body: Value,
    send: SendResponse<http::Response<Body>>,
}

impl ApiServer {
    /// The next request, whatever it is, failing the test if none comes in time.
    pub async fn next_request(&mut self) -> Request {
        self.next_request_if_any()
            .await
            .expect("the client was dropped before sending the expected request")
    }

    /// The next request, or `None` once every client is gone; fails the test if neither comes in
    /// time.
    pub async fn next_request_if_any(&mut self) -> Option<Request> {
        let (request, send) = tokio::time::timeout(TIMEOUT, self.0.next_request())
            .await
            .expect("timed out waiting for a request")?;
        let (parts, body) = request.into_parts();
        let bytes = body.collect_bytes().await.expect("request body");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).expect("request body is JSON")
        };
        Some(Request {
            method: parts.method,
            uri: parts.uri.to_string(),
            content_type: parts
                .headers
                .get(http::header::CONTENT_TYPE)
                .map(|v| v.to_str().expect("content type").to_owned()),
            body,
            send,
        })
    }

    /// The next request, failing the test unless it has `method` and `uri` (path and query).
    pub async fn expect(&mut self, method: Method, uri: &str) -> Request {
        let request = self.next_request().await;
        assert_eq!(
            (&request.method, request.uri.as_str()),
            (&method, uri),
            "unexpected request"
        );
        request
    }

    /// Fails unless every client is gone without sending anything else.
    pub async fn assert_no_more_requests(mut self) {
        let next = tokio::time::timeout(TIMEOUT, self.0.next_request())
            .await
            .expect("a client is still alive; drop it before checking");
        if let Some((request, _)) = next {
            panic!("unexpected request: {} {}", request.method(), request.uri());
        }
    }
}

impl Request {
    /// Answers with `status` and `body` as JSON.
    pub fn respond(self, status: StatusCode, body: &impl Serialize) {
        let body = serde_json::to_string(body).expect("response body");
        self.respond_raw(status, body);
    }

    /// Answers with `body` as it is, e.g. the newline-delimited events of a watch.
    pub fn respond_raw(self, status: StatusCode, body: String) {
        let response = http::Response::builder()
            .status(status)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.into_bytes()))
            .expect("response");
        self.send.send_response(response);
    }

    /// Answers with a Kubernetes `Status` error, as the API server does.
    pub fn respond_error(self, status: StatusCode, reason: &str, message: &str) {
        let body = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Status",
            "status": "Failure",
            "code": status.as_u16(),
            "reason": reason,
            "message": message,
        });
        self.respond(status, &body);
    }
}
