//! The checks against a recorded API server: the requests they send a cluster get the answers a
//! cluster gives, so that a plain `cargo test` proves what the checks conclude from those answers.
//! Time is paused, so that polling costs nothing.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use http::{Method, StatusCode};
use kube::Client;
use kube::api::{ApiResource, GroupVersionKind};
use kube::client::Body;
use serde_json::{Value, json};
use tower_test::mock;

use crate::e2e::{self as checks, Deployed};
use crate::metrics::Metrics;

const NAMESPACE: &str = "p1-system";
const SAMPLES_NAMESPACE: &str = "default";
const PREFIX: &str = "p1-";

/// The operator the recorded cluster runs.
fn deployed() -> Deployed {
    Deployed::new("p1")
}

/// Requests with `method` whose path and query start with `path` get the `answers` in turn, and
/// the last one from then on. An answer that is a JSON string is sent as plain text.
struct Route {
    method: Method,
    path: String,
    answers: VecDeque<(StatusCode, Value)>,
}

fn route<const N: usize>(method: Method, path: &str, answers: [Value; N]) -> Route {
    Route {
        method,
        path: path.to_owned(),
        answers: answers.into_iter().map(|a| (StatusCode::OK, a)).collect(),
    }
}

/// An API error, as the API server sends it.
fn status(code: StatusCode, reason: &str, message: &str) -> (StatusCode, Value) {
    let status = json!({
        "apiVersion": "v1",
        "kind": "Status",
        "status": "Failure",
        "code": code.as_u16(),
        "reason": reason,
        "message": message,
    });
    (code, status)
}

/// What a request no route matches gets.
fn not_found(uri: &str) -> (StatusCode, Value) {
    status(
        StatusCode::NOT_FOUND,
        "NotFound",
        &format!("{uri} not found"),
    )
}

/// A route answering with an API error.
fn failing(method: Method, path: &str, code: StatusCode, reason: &str, message: &str) -> Route {
    Route {
        method,
        path: path.to_owned(),
        answers: VecDeque::from([status(code, reason, message)]),
    }
}

/// A request the client sent.
#[derive(Debug)]
struct Sent {
    method: Method,
    /// Path and query.
    uri: String,
    body: Value,
}

type Log = Arc<Mutex<Vec<Sent>>>;

/// A client whose requests get the answers of the first route they match (404 when none does),
/// and the log of the requests it sent.
fn recorded(mut routes: Vec<Route>) -> (Client, Log) {
    let (service, mut handle) = mock::pair::<http::Request<Body>, http::Response<Body>>();
    let log = Log::default();
    let sent = Arc::clone(&log);
    tokio::spawn(async move {
        while let Some((request, respond)) = handle.next_request().await {
            let (parts, body) = request.into_parts();
            let bytes = body.collect_bytes().await.expect("request body");
            let uri = parts.uri.to_string();
            let found = routes
                .iter_mut()
                .find(|r| r.method == parts.method && uri.starts_with(&r.path));
            let (status, answer) = match found {
                Some(route) if route.answers.len() > 1 => route.answers.pop_front(),
                Some(route) => route.answers.front().cloned(),
                None => None,
            }
            .unwrap_or_else(|| not_found(&uri));
            sent.lock().unwrap().push(Sent {
                method: parts.method,
                uri,
                body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            });
            let text = match answer {
                Value::String(text) => text,
                json => json.to_string(),
            };
            let response = http::Response::builder()
                .status(status)
                .body(Body::from(text.into_bytes()))
                .expect("a response");
            respond.send_response(response);
        }
    });
    (Client::new(service, "default"), log)
}

/// The requests in `log` with `method` whose path and query start with `path`.
fn sent<'a>(log: &'a [Sent], method: &Method, path: &str) -> Vec<&'a Sent> {
    log.iter()
        .filter(|s| s.method == method && s.uri.starts_with(path))
        .collect()
}

fn pod(name: &str, phase: &str, ready: bool) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "status": {
            "phase": phase,
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}],
        },
    })
}

fn pods(items: &[Value]) -> Value {
    json!({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": items})
}

#[tokio::test(start_paused = true)]
async fn the_manager_check_waits_for_one_ready_pod() {
    let list = format!("/api/v1/namespaces/{NAMESPACE}/pods?");
    let (client, log) = recorded(vec![route(
        Method::GET,
        &list,
        [
            pods(&[]),
            pods(&[pod("old", "Running", true), pod("new", "Running", false)]),
            pods(&[pod("new", "Pending", false)]),
            pods(&[pod("new", "Running", true)]),
        ],
    )]);
    let found = deployed().manager_pod(&client).await.unwrap();
    assert_eq!(found.metadata.name.as_deref(), Some("new"));
    let log = log.lock().unwrap();
    let lists = sent(&log, &Method::GET, &list);
    assert_eq!(lists.len(), 4);
    assert!(
        lists[0]
            .uri
            .contains("labelSelector=control-plane%3Dcontroller-manager")
    );
}

#[tokio::test(start_paused = true)]
async fn the_manager_check_gives_up_saying_what_it_saw() {
    let list = format!("/api/v1/namespaces/{NAMESPACE}/pods?");
    let (client, _) = recorded(vec![route(
        Method::GET,
        &list,
        [pods(&[pod("manager", "Pending", false)])],
    )]);
    let failure = format!("{:?}", deployed().manager_pod(&client).await.unwrap_err());
    assert!(failure.contains("gave up"), "{failure}");
    assert!(
        failure.contains("Pod manager is Pending, not ready"),
        "{failure}"
    );
}

/// The routes of a scrape whose curl Pod ends in `phase` and prints `logs`.
fn scrape(phase: &str, logs: &str) -> Vec<Route> {
    let account = format!("{PREFIX}controller-manager");
    let pod_path = format!("/api/v1/namespaces/{NAMESPACE}/pods/curl-metrics-x7k2p");
    vec![
        route(
            Method::PATCH,
            &format!("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{PREFIX}metrics-e2e?"),
            [json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": format!("{PREFIX}metrics-e2e")},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": format!("{PREFIX}metrics-reader"),
                },
            })],
        ),
        route(
            Method::POST,
            &format!("/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{account}/token?"),
            [json!({
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "metadata": {"name": account},
                "spec": {"audiences": []},
                "status": {"token": "recorded-token", "expirationTimestamp": "2030-01-01T00:00:00Z"},
            })],
        ),
        route(
            Method::POST,
            &format!("/api/v1/namespaces/{NAMESPACE}/pods?"),
            [pod("curl-metrics-x7k2p", "Pending", false)],
        ),
        route(Method::GET, &format!("{pod_path}/log"), [Value::from(logs)]),
        route(
            Method::GET,
            &pod_path,
            [
                pod("curl-metrics-x7k2p", "Pending", false),
                pod("curl-metrics-x7k2p", "Running", true),
                pod("curl-metrics-x7k2p", phase, false),
            ],
        ),
        route(
            Method::DELETE,
            &pod_path,
            [pod("curl-metrics-x7k2p", phase, false)],
        ),
    ]
}

/// The scrape of a cluster is what the manager's own registry renders: the check reads it from
/// a Pod that sends the manager's ServiceAccount token to the metrics Service, and cleans up.
#[tokio::test(start_paused = true)]
async fn the_metrics_check_scrapes_from_a_pod_with_the_readers_token() {
    let rendered = Metrics::new().encode().unwrap();
    let (client, log) = recorded(scrape("Succeeded", &rendered));

    let text = deployed().scrape_metrics(&client).await.unwrap();
    assert_eq!(text, rendered);
    // The process's figures come from `/proc`, as they do in the manager's container.
    #[cfg(target_os = "linux")]
    assert!(
        checks::metric_families(&text).contains(&checks::PROCESS_FAMILY),
        "{text}"
    );

    let log = log.lock().unwrap();
    let binding = &sent(&log, &Method::PATCH, "/apis/rbac.authorization.k8s.io/")[0].body;
    assert_eq!(
        binding["subjects"][0]["name"],
        format!("{PREFIX}controller-manager")
    );
    assert_eq!(binding["subjects"][0]["namespace"], NAMESPACE);
    let curl = &sent(
        &log,
        &Method::POST,
        &format!("/api/v1/namespaces/{NAMESPACE}/pods?"),
    )[0];
    let args = &curl.body["spec"]["containers"][0]["args"];
    let args: Vec<&str> = args
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        args.contains(&"Authorization: Bearer recorded-token"),
        "{args:?}"
    );
    let url =
        format!("https://{PREFIX}controller-manager-metrics-service.{NAMESPACE}.svc:8443/metrics");
    assert_eq!(args.last(), Some(&url.as_str()));
    assert_eq!(sent(&log, &Method::DELETE, "/api/v1/").len(), 1);
}

#[tokio::test(start_paused = true)]
async fn the_metrics_check_fails_with_what_curl_printed() {
    let refused = "curl: (22) The requested URL returned error: 403";
    let (client, _) = recorded(scrape("Failed", refused));
    let failure = format!(
        "{:?}",
        deployed().scrape_metrics(&client).await.unwrap_err()
    );
    assert!(failure.contains(refused), "{failure}");
}

/// A sample is read from YAML into the JSON the API takes.
#[test]
fn a_sample_reads_from_yaml() {
    let path = std::env::temp_dir().join(format!("e2e-sample-{}.yaml", std::process::id()));
    let yaml = "apiVersion: example.com/v1\nkind: Widget\nspec:\n  count: 1\n";
    std::fs::write(&path, yaml).unwrap();
    let sample = checks::read_sample(path.to_str().unwrap());
    std::fs::remove_file(&path).unwrap();
    let expected = json!({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"count": 1}});
    assert_eq!(sample.unwrap(), expected);
}

fn widgets() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Widget"),
        "widgets",
    )
}

fn widget(generation: i64, status: Value) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "widget-sample", "namespace": SAMPLES_NAMESPACE, "generation": generation},
        "spec": {"count": 1},
        "status": status,
    })
}

fn ready(status: &str, generation: i64, message: &str) -> Value {
    json!({"conditions": [{
        "type": "Ready",
        "status": status,
        "reason": "Reconciling",
        "message": message,
        "observedGeneration": generation,
    }]})
}

/// The sample is applied by the tests' field manager, and the check waits for the condition of
/// the generation it applied, not an older one.
#[tokio::test(start_paused = true)]
async fn the_sample_check_waits_for_the_condition_of_the_applied_generation() {
    let path = format!("/apis/example.com/v1/namespaces/{SAMPLES_NAMESPACE}/widgets/widget-sample");
    let (client, log) = recorded(vec![
        route(Method::PATCH, &path, [widget(2, json!({}))]),
        route(
            Method::GET,
            &path,
            [
                widget(2, json!({})),
                widget(2, ready("True", 1, "ready as of generation 1")),
                widget(2, ready("False", 2, "rolling out")),
                widget(2, ready("True", 2, "ready")),
            ],
        ),
    ]);
    let sample = widget(1, Value::Null);
    let api = deployed().api(&client, &widgets(), true);
    checks::reconciles(&api, &sample, "Ready").await.unwrap();

    let log = log.lock().unwrap();
    let applied = sent(&log, &Method::PATCH, &path);
    assert!(
        applied[0].uri.contains("fieldManager=e2e"),
        "{}",
        applied[0].uri
    );
    assert_eq!(applied[0].body["metadata"]["name"], "widget-sample");
    assert_eq!(sent(&log, &Method::GET, &path).len(), 4);
}

#[tokio::test(start_paused = true)]
async fn the_sample_check_fails_with_the_conditions_message() {
    let path = format!("/apis/example.com/v1/namespaces/{SAMPLES_NAMESPACE}/widgets/widget-sample");
    let (client, _) = recorded(vec![
        route(Method::PATCH, &path, [widget(1, json!({}))]),
        route(
            Method::GET,
            &path,
            [widget(1, ready("False", 1, "image pull failed"))],
        ),
    ]);
    let api = deployed().api(&client, &widgets(), true);
    let failure = checks::reconciles(&api, &widget(1, Value::Null), "Ready").await;
    let failure = format!("{:?}", failure.unwrap_err());
    assert!(failure.contains("image pull failed"), "{failure}");
}

fn webhooks(kind: &str, path: &str, ca_bundle: Option<&str>) -> Value {
    let mut config =
        json!({"service": {"name": "webhook-service", "namespace": NAMESPACE, "path": path}});
    if let Some(ca_bundle) = ca_bundle {
        config["caBundle"] = json!(ca_bundle);
    }
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": "webhooks"},
        "webhooks": [{
            "name": "vwidget.kb.io",
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "clientConfig": config,
        }],
    })
}

#[tokio::test(start_paused = true)]
async fn the_ca_bundle_check_waits_for_the_injector() {
    let validating = format!(
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{PREFIX}validating-webhook-configuration"
    );
    let (client, log) = recorded(vec![route(
        Method::GET,
        &validating,
        [
            webhooks("ValidatingWebhookConfiguration", "/validate-widget", None),
            webhooks(
                "ValidatingWebhookConfiguration",
                "/validate-widget",
                Some("Y2E="),
            ),
        ],
    )]);
    deployed()
        .ca_bundles_injected(&client, "/validate-widget")
        .await
        .unwrap();
    assert_eq!(
        sent(&log.lock().unwrap(), &Method::GET, &validating).len(),
        2
    );

    let failure = deployed()
        .ca_bundles_injected(&client, "/mutate-widget")
        .await
        .unwrap_err();
    assert!(
        format!("{failure:?}").contains("no webhook serves it"),
        "{failure:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_conversion_check_reads_the_crds_ca_bundle() {
    let crd = |ca_bundle: Value| {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"kind": "Widget", "plural": "widgets"},
                "scope": "Namespaced",
                "versions": [],
                "conversion": {"strategy": "Webhook", "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"caBundle": ca_bundle, "service": {"name": "webhook-service", "namespace": NAMESPACE}},
                }},
            },
        })
    };
    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com";
    let (client, _) = recorded(vec![route(
        Method::GET,
        path,
        [crd(Value::Null), crd(json!("Y2E="))],
    )]);
    checks::conversion_ca_bundle_injected(&client, "widgets.example.com")
        .await
        .unwrap();
}

/// A dry-run create gives the object as the webhooks made it, or the denial's message.
#[tokio::test(start_paused = true)]
async fn a_dry_run_create_gives_the_defaults_or_the_denial() {
    let path = format!("/apis/example.com/v1/namespaces/{SAMPLES_NAMESPACE}/widgets?");
    let denial =
        "admission webhook \"vwidget.kb.io\" denied the request: spec.foo must not be empty";
    let mut defaulted = widget(1, Value::Null);
    defaulted["spec"]["foo"] = json!("widget");
    let (client, log) = recorded(vec![route(Method::POST, &path, [defaulted.clone()])]);
    let api = deployed().api(&client, &widgets(), true);
    let created = checks::dry_run_create(&api, &widget(1, Value::Null))
        .await
        .unwrap();
    assert_eq!(created["spec"]["foo"], "widget");
    assert!(
        sent(&log.lock().unwrap(), &Method::POST, &path)[0]
            .uri
            .contains("dryRun=All")
    );

    let (client, _) = recorded(vec![failing(
        Method::POST,
        &path,
        StatusCode::FORBIDDEN,
        "Forbidden",
        denial,
    )]);
    let api = deployed().api(&client, &widgets(), true);
    let refused = checks::dry_run_create(&api, &widget(1, Value::Null)).await;
    assert_eq!(refused.unwrap_err(), denial);
}
