//! A scripted Kubernetes API server for reconcile tests, on tower-test's mock service as in
//! kube-rs's own controller examples.
//!
//! A test runs the reconciler on a task, then answers each request it expects with
//! [`ApiServer::expect`] and [`Request::respond`], checking method, URL and body on the way. Running
//! out of the script hangs nothing: `expect` gives up after half a minute, and
//! [`ApiServer::assert_no_more_requests`] checks that nothing was left unanswered.
//!
//! The server of [`mock_client`] also authorizes every request as the cluster would: against the
//! roles that the crate's `config/rbac/` binds to the manager's ServiceAccount
//! (`controller-manager`), read when the test runs. A request the role does not grant fails the
//! test with the marker to add, so the reconcile tests prove that the role `rsop manifests` writes
//! is enough for the code.
//!
//! ```
//! use http::{Method, StatusCode};
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::Api;
//! use rsop_runtime::testing::{finished, mock_client_without_rbac};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (client, mut server) = mock_client_without_rbac();
//! let get = tokio::spawn(async move {
//!     Api::<ConfigMap>::namespaced(client, "default").get("settings").await
//! });
//! let request = server.expect(Method::GET, "/api/v1/namespaces/default/configmaps/settings").await;
//! request.respond(StatusCode::OK, &ConfigMap::default());
//! assert!(finished(get).await.is_ok());
//! server.assert_no_more_requests().await;
//! # }
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::LazyLock;
use std::time::Duration;

use http::{Method, StatusCode};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use kube::Client;
#[cfg(feature = "sharding")]
use kube::Resource;
use kube::client::Body;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
#[cfg(feature = "sharding")]
use serde_json::json;
use tower_test::mock::{self, Handle, SendResponse};

use crate::context::{Context, Shutdown};
use crate::metrics::Metrics;

/// How long a test waits for a request it expects. Well beyond the longest retry delay of a
/// watch (`watch::MAX_DELAY` with its jitter): on paused time, where waiting costs nothing, a
/// retry that is due must never be taken for a request that will not come.
const TIMEOUT: Duration = Duration::from_secs(30);

type MockHandle = Handle<http::Request<Body>, http::Response<Body>>;

/// A client whose requests reach the returned [`ApiServer`], with `default` as its namespace,
/// authorized as the manager's ServiceAccount by the roles of `config/rbac/` in the directory of
/// the crate under test (`CARGO_MANIFEST_DIR`).
///
/// # Panics
/// When `config/rbac/` cannot be read, which fails the test.
pub fn mock_client() -> (Client, ApiServer) {
    static ROLE: LazyLock<ManagerRole> = LazyLock::new(|| {
        let crate_dir =
            std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(PathBuf::new, PathBuf::from);
        ManagerRole::read(&crate_dir.join("config/rbac"))
    });
    let (client, mut server) = mock_client_without_rbac();
    server.role = Some(&ROLE);
    (client, server)
}

/// A [`mock_client`] that authorizes nothing, for tests of code that works on kinds of the test's
/// choosing.
pub fn mock_client_without_rbac() -> (Client, ApiServer) {
    let (service, handle) = mock::pair::<http::Request<Body>, http::Response<Body>>();
    let server = ApiServer { handle, role: None };
    (Client::new(service, "default"), server)
}

/// A client whose requests are never answered: enough to build `Api`s and contexts that a test
/// does not expect to send anything.
pub fn offline_client() -> Client {
    let service = tower::service_fn(|_: http::Request<Body>| {
        std::future::pending::<Result<http::Response<Body>, std::io::Error>>()
    });
    Client::new(service, "default")
}

/// A [`Context`] on `client` as the manager makes one with its default flags (all namespaces, one
/// reconciliation at a time, no time limit), for tests of controllers: `context(client)
/// .reconciler::<K>("name")` gives what a controller's reconcile function is run with.
pub fn context(client: Client) -> Context {
    Context::new(client, Arc::new(Metrics::new()), None, 1, Shutdown::new())
}

/// The output of `task`, failing the test if it does not finish in time, which is what a
/// reconciler waiting for the answer to a request the test did not expect does.
///
/// # Panics
/// When the task does not finish in time, or panics.
pub async fn finished<T>(task: tokio::task::JoinHandle<T>) -> T {
    tokio::time::timeout(TIMEOUT, task)
        .await
        .expect("the task did not finish: is it waiting for an unexpected request?")
        .expect("the task panicked")
}

/// `obj` as the sharder of an operator with the shard `labels` leaves it when it moves it off
/// shard 1, seen at version 42.
#[cfg(feature = "sharding")]
pub fn drained<K: Resource>(mut obj: K, labels: &crate::shard::ShardLabels) -> K {
    let meta = obj.meta_mut();
    meta.resource_version = Some("42".into());
    meta.labels = Some(
        [(&labels.shard, "1"), (&labels.drain, "true")]
            .map(|(key, value)| (key.clone(), value.to_owned()))
            .into(),
    );
    obj
}

/// The server side of [`mock_client`].
pub struct ApiServer {
    handle: MockHandle,
    /// The role requests are authorized against, if any.
    role: Option<&'static ManagerRole>,
}

impl std::fmt::Debug for ApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiServer")
            .field("authorizes", &self.role.is_some())
            .finish_non_exhaustive()
    }
}

/// One request the client sent, waiting for its response.
#[derive(Debug)]
pub struct Request {
    /// The HTTP method.
    pub method: Method,
    /// Path and query, e.g. `/api/v1/namespaces/default/pods?labelSelector=...`.
    pub uri: String,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// The JSON body, `Value::Null` when there is none.
    pub body: Value,
    send: SendResponse<http::Response<Body>>,
}

impl ApiServer {
    /// The next request, whatever it is, failing the test if none comes in time.
    ///
    /// # Panics
    /// When no request comes in time.
    pub async fn next_request(&mut self) -> Request {
        self.next_request_if_any()
            .await
            .expect("the client was dropped before sending the expected request")
    }

    /// The next request, or `None` once every client is gone; fails the test if neither comes in
    /// time.
    pub async fn next_request_if_any(&mut self) -> Option<Request> {
        let (request, send) = tokio::time::timeout(TIMEOUT, self.handle.next_request())
            .await
            .expect("timed out waiting for a request")?;
        let (parts, body) = request.into_parts();
        if let Some(role) = self.role {
            role.authorize(&parts.method, &parts.uri);
        }
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

    /// Expects the hand-over of an object made [`drained`] whose URL is `url`: a merge patch that
    /// removes its shard and drain labels at the version it was seen, which is answered.
    #[cfg(feature = "sharding")]
    pub async fn expect_hand_over(&mut self, url: &str, labels: &crate::shard::ShardLabels) {
        let request = self.expect(Method::PATCH, &format!("{url}?")).await;
        let labels = json!({ (labels.shard.as_str()): null, (labels.drain.as_str()): null });
        let patch = json!({ "metadata": { "resourceVersion": "42", "labels": labels } });
        assert_eq!(request.body, patch);
        let merge_patch = Some("application/merge-patch+json");
        assert_eq!(request.content_type.as_deref(), merge_patch);
        let handed_over = json!({ "metadata": { "name": "test", "resourceVersion": "43" } });
        request.respond(StatusCode::OK, &handed_over);
    }

    /// Fails unless every client is gone without sending anything else.
    pub async fn assert_no_more_requests(mut self) {
        let next = tokio::time::timeout(TIMEOUT, self.handle.next_request())
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

/// The rules of every Role and ClusterRole that a binding gives to the manager's ServiceAccount.
struct ManagerRole {
    /// Each rule, with whether it comes from a ClusterRole: a Role's rules grant requests in a
    /// namespace only.
    rules: Vec<(PolicyRule, bool)>,
}

impl ManagerRole {
    fn read(dir: &Path) -> Self {
        fn typed<T: DeserializeOwned>(value: Value) -> T {
            serde_json::from_value(value).expect("RBAC object")
        }
        fn to_manager(subjects: Option<&Vec<Subject>>) -> bool {
            subjects
                .into_iter()
                .flatten()
                .any(|s| s.kind == "ServiceAccount" && s.name == "controller-manager")
        }
        let mut roles: Vec<(String, String, Vec<PolicyRule>)> = Vec::new();
        let mut bound: Vec<RoleRef> = Vec::new();
        let entries = std::fs::read_dir(dir).unwrap_or_else(|err| {
            panic!(
                "cannot read the manager's roles in {}: {err}",
                dir.display()
            )
        });
        for entry in entries {
            let path = entry.expect("config/rbac/ entry").path();
            if path.extension().is_none_or(|e| e != "yaml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("RBAC file");
            for document in serde_yaml_ng::Deserializer::from_str(&text) {
                let value = Value::deserialize(document)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                match value["kind"].as_str() {
                    Some("ClusterRole") => {
                        let role: ClusterRole = typed(value);
                        let name = role.metadata.name.unwrap_or_default();
                        roles.push(("ClusterRole".into(), name, role.rules.unwrap_or_default()));
                    }
                    Some("Role") => {
                        let role: Role = typed(value);
                        let name = role.metadata.name.unwrap_or_default();
                        roles.push(("Role".into(), name, role.rules.unwrap_or_default()));
                    }
                    Some("ClusterRoleBinding") => {
                        let binding: ClusterRoleBinding = typed(value);
                        if to_manager(binding.subjects.as_ref()) {
                            bound.push(binding.role_ref);
                        }
                    }
                    Some("RoleBinding") => {
                        let binding: RoleBinding = typed(value);
                        if to_manager(binding.subjects.as_ref()) {
                            bound.push(binding.role_ref);
                        }
                    }
                    _ => {}
                }
            }
        }
        let rules = roles
            .into_iter()
            .filter(|(kind, name, _)| bound.iter().any(|r| r.kind == *kind && r.name == *name))
            .flat_map(|(kind, _, rules)| {
                let cluster = kind == "ClusterRole";
                rules.into_iter().map(move |rule| (rule, cluster))
            })
            .collect();
        ManagerRole { rules }
    }

    /// Fails the test unless a rule grants the request, as the API server's RBAC authorizer
    /// would answer `403 Forbidden`.
    fn authorize(&self, method: &Method, uri: &http::Uri) {
        let Some(request) = Attributes::of(method, uri) else {
            panic!("not a Kubernetes API request: {method} {uri}");
        };
        if !self
            .rules
            .iter()
            .any(|(rule, cluster)| request.granted_by(rule, *cluster))
        {
            let group = if request.group.is_empty() {
                "core"
            } else {
                request.group
            };
            panic!(
                "forbidden: {method} {uri} is `{}` on `{}` in API group `{group}`{}, which no role \
                 bound to the manager's ServiceAccount in config/rbac/ grants; add \
                 `// +rsop:rbac:groups={group},resources={},verbs={}` next to the call and run \
                 `rsop manifests`",
                request.verb,
                request.resource,
                if request.namespaced {
                    ""
                } else {
                    " across the cluster"
                },
                request.resource,
                request.verb,
            );
        }
    }
}

/// A request as the API server's authorizer sees it.
struct Attributes<'a> {
    verb: &'static str,
    group: &'a str,
    /// The resource, with its subresource (`pods/eviction`).
    resource: String,
    name: Option<&'a str>,
    namespaced: bool,
}

impl<'a> Attributes<'a> {
    /// Reads `/api/v1/...` and `/apis/<group>/<version>/...` paths.
    fn of(method: &Method, uri: &'a http::Uri) -> Option<Self> {
        let segments: Vec<&str> = uri.path().trim_start_matches('/').split('/').collect();
        let (group, rest) = match segments.as_slice() {
            ["api", _, rest @ ..] => ("", rest),
            ["apis", group, _, rest @ ..] => (*group, rest),
            _ => return None,
        };
        let (namespaced, rest) = match rest {
            ["namespaces", _, rest @ ..] if !rest.is_empty() => (true, rest),
            _ => (false, rest),
        };
        let (resource, name) = match rest {
            [resource] => ((*resource).to_owned(), None),
            [resource, name] => ((*resource).to_owned(), Some(*name)),
            [resource, name, subresource] => (format!("{resource}/{subresource}"), Some(*name)),
            _ => return None,
        };
        let watch = uri
            .query()
            .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
        let verb = match (method, name) {
            (&Method::GET, Some(_)) => "get",
            (&Method::GET, None) if watch => "watch",
            (&Method::GET, None) => "list",
            (&Method::POST, _) => "create",
            (&Method::PUT, _) => "update",
            (&Method::PATCH, _) => "patch",
            (&Method::DELETE, Some(_)) => "delete",
            (&Method::DELETE, None) => "deletecollection",
            _ => return None,
        };
        Some(Attributes {
            verb,
            group,
            resource,
            name,
            namespaced,
        })
    }

    /// Whether `rule` grants this request, by Kubernetes' RBAC rules: `*` matches any group,
    /// resource or verb, `*/<subresource>` that subresource of any resource, and resource names
    /// limit the rule to the objects they name.
    fn granted_by(&self, rule: &PolicyRule, cluster_role: bool) -> bool {
        let has = |list: &Option<Vec<String>>, value: &str| {
            list.iter().flatten().any(|v| v == "*" || v == value)
        };
        let resource = rule.resources.iter().flatten().any(|r| {
            r == "*"
                || *r == self.resource
                || self
                    .resource
                    .split_once('/')
                    .is_some_and(|(_, sub)| r.strip_prefix("*/") == Some(sub))
        });
        let names = rule.resource_names.as_deref().unwrap_or_default();
        (cluster_role || self.namespaced)
            && rule.verbs.iter().any(|v| v == "*" || v == self.verb)
            && has(&rule.api_groups, self.group)
            && resource
            && (names.is_empty() || self.name.is_some_and(|n| names.iter().any(|m| m == n)))
    }
}
