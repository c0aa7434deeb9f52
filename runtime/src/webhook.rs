//! The webhook server: the admission webhooks (defaulting and validation) and the conversion
//! webhook the API server calls over HTTPS, as controller-runtime's webhook server does for a Go
//! operator.
//!
//! The functions you write in `src/webhooks/` take and return typed objects; this module speaks the
//! wire protocol around them. It decodes the `AdmissionReview` or `ConversionReview`, calls your
//! function, and answers with kube's response types: a JSON patch computed from the defaulted
//! object, a denial with your message, or the converted objects. Every webhook runs on every
//! replica, leader or not, because the API server calls whichever pod the Service picks.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use rsop_runtime::webhook::{Denial, Validation, Validator, Webhooks};
//!
//! fn default(config: &mut ConfigMap) {
//!     config.data.get_or_insert_with(Default::default);
//! }
//!
//! fn validate(config: &ConfigMap) -> Validation {
//!     match &config.data {
//!         Some(data) if data.contains_key("") => Err(Denial::new("a key must not be empty")),
//!         _ => Ok(Vec::new()),
//!     }
//! }
//!
//! let mut webhooks = Webhooks::default();
//! webhooks.defaulting("/mutate--v1-configmap", default);
//! webhooks.validating(
//!     "/validate--v1-configmap",
//!     Validator { create: validate, update: |_, new| validate(new), delete: |_| Ok(Vec::new()) },
//! );
//! // `Manager::webhooks(webhooks)` serves them on `--webhook-port`.
//! assert!(!webhooks.is_empty());
//! ```

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use base64::Engine as _;
use kube::Resource;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use kube::core::{DynamicObject, Status};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tracing::{info, warn};

use crate::context::Shutdown;
use crate::flags::WebhookFlags;
use crate::metrics::WebhookMetrics;
use crate::server::{self, Servers};
use crate::tls::{self, CertFiles, TlsListener};

/// The path of the conversion webhook, shared by every kind; kubebuilder's CRD patches name it.
pub const CONVERSION_PATH: &str = "/convert";

/// What a validation function decides: the object is allowed, with warnings the client prints
/// (often none), or it is denied.
pub type Validation = Result<Warnings, Denial>;

/// Warnings returned to the client with an allowed request, such as a deprecated field in use.
/// Kubernetes asks to keep each under 120 characters.
pub type Warnings = Vec<String>;

/// A request turned down: the API server refuses it with this message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// Why, as `kubectl` shows it.
    pub message: String,
}

impl Denial {
    /// A denial with the message the user sees, such as `spec.size must be at least 1`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Denial {}

/// The validation functions of one kind, one per operation the API server may send.
#[derive(Debug)]
pub struct Validator<K> {
    /// Validates a new object.
    pub create: fn(&K) -> Validation,
    /// Validates a change: the old object, then the new one.
    pub update: fn(&K, &K) -> Validation,
    /// Validates a deletion of the object.
    pub delete: fn(&K) -> Validation,
}

/// Turns a request body into a response body.
type Handler = Arc<dyn Fn(&[u8]) -> Value + Send + Sync>;

/// Every webhook the server answers: admission webhooks by path, conversions by group and kind.
#[derive(Default)]
pub struct Webhooks {
    admission: Vec<(&'static str, Handler)>,
    conversions: HashMap<(String, String), Arc<dyn Convert>>,
}

impl fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let paths: Vec<&str> = self.admission.iter().map(|(path, _)| *path).collect();
        let kinds: Vec<&(String, String)> = self.conversions.keys().collect();
        f.debug_struct("Webhooks")
            .field("admission", &paths)
            .field("conversions", &kinds)
            .finish()
    }
}

impl Webhooks {
    /// Whether no webhook is registered.
    pub fn is_empty(&self) -> bool {
        self.admission.is_empty() && self.conversions.is_empty()
    }

    /// Adds every webhook of `other`.
    pub fn extend(&mut self, other: Webhooks) {
        self.admission.extend(other.admission);
        self.conversions.extend(other.conversions);
    }

    /// Serves `default` at `path` as a mutating webhook: the response patches the object into what
    /// `default` makes of it.
    pub fn defaulting<K>(&mut self, path: &'static str, default: fn(&mut K)) -> &mut Self
    where
        K: Resource + Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        let handler = move |body: &[u8]| admit::<K>(body, |request| defaulted(request, default));
        self.admission.push((path, Arc::new(handler)));
        self
    }

    /// Serves `validator` at `path` as a validating webhook.
    pub fn validating<K>(&mut self, path: &'static str, validator: Validator<K>) -> &mut Self
    where
        K: Resource + Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        let handler = move |body: &[u8]| admit::<K>(body, |request| validated(request, &validator));
        self.admission.push((path, Arc::new(handler)));
        self
    }

    /// Serves the conversions of one kind at [`CONVERSION_PATH`].
    pub fn conversion<H>(&mut self, hub: Hub<H>) -> &mut Self
    where
        H: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        let key = (H::group(&()).into_owned(), H::kind(&()).into_owned());
        self.conversions.insert(key, Arc::new(hub));
        self
    }

    /// The server's routes, each recording its requests in `metrics`.
    pub fn router(self, metrics: WebhookMetrics) -> Router {
        let mut router = Router::new();
        for (path, handler) in self.admission {
            router = router.route(
                path,
                post(serve).with_state((path, handler, metrics.clone())),
            );
        }
        if !self.conversions.is_empty() {
            let conversions = Arc::new(self.conversions);
            let handler: Handler = Arc::new(move |body: &[u8]| convert(body, &conversions));
            router = router.route(
                CONVERSION_PATH,
                post(serve).with_state((CONVERSION_PATH, handler, metrics)),
            );
        }
        router
    }
}

/// Binds the webhook server and serves `router` over HTTPS until `stop` is triggered.
pub(crate) async fn start(
    flags: &WebhookFlags,
    router: Router,
    stop: &Shutdown,
    servers: &mut Servers,
) -> anyhow::Result<()> {
    let certs = CertFiles {
        cert: flags.webhook_cert_path.join(&flags.webhook_cert_name),
        key: flags.webhook_cert_path.join(&flags.webhook_cert_key),
    };
    // Unlike the metrics endpoint there is no self-signed fallback: the API server only calls a
    // webhook whose certificate it trusts, so a missing certificate is a deployment error.
    let config = tls::config(Some(certs), flags.enable_http2, "webhook").await?;
    let addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), flags.webhook_port);
    let listener = server::bind(addr, "webhook").await?;
    let address = listener.local_addr()?;
    let serve = axum::serve(TlsListener::new(listener, config)?, router)
        .with_graceful_shutdown(stop.signalled());
    info!(%address, "serving webhooks over HTTPS");
    servers.spawn(async move { ("webhook", serve.await) });
    Ok(())
}

type Route = (&'static str, Handler, WebhookMetrics);

/// Answers one review, timing it. A review always gets HTTP 200: the outcome, denial or error, is
/// in the body, where the API server reads it.
async fn serve(State((path, handler, metrics)): State<Route>, body: Bytes) -> Response {
    let response = metrics.time(path, || handler(&body));
    let code = StatusCode::OK;
    metrics.count(path, code.as_u16());
    let body = serde_json::to_vec(&response).unwrap_or_default();
    (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Decodes an AdmissionReview of `K`, answers it with `decide`, and encodes the response.
fn admit<K>(body: &[u8], decide: impl FnOnce(AdmissionRequest<K>) -> AdmissionResponse) -> Value
where
    K: Resource + DeserializeOwned,
{
    let response = match serde_json::from_slice::<AdmissionReview<K>>(body) {
        Ok(review) => match TryInto::<AdmissionRequest<K>>::try_into(review) {
            Ok(request) => decide(request),
            Err(err) => AdmissionResponse::invalid(err),
        },
        Err(err) => {
            warn!(error = %err, "undecodable AdmissionReview");
            // The request ID is still needed for the API server to match the answer.
            let uid = request_uid(body);
            let mut response =
                AdmissionResponse::invalid(format!("cannot decode the object: {err}"));
            response.uid = uid;
            response
        }
    };
    review_json(response.into_review())
}

/// The `request.uid` of a review that could not be decoded as a whole.
fn request_uid(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|review| review["request"]["uid"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The review as JSON, with the patch in base64 as the API server expects `[]byte` fields (kube
/// serializes the bytes as a list of numbers).
fn review_json(review: AdmissionReview<DynamicObject>) -> Value {
    let patch = review.response.as_ref().and_then(|r| r.patch.clone());
    let mut json = serde_json::to_value(review).unwrap_or_default();
    if let Some(patch) = patch {
        json["response"]["patch"] =
            Value::String(base64::engine::general_purpose::STANDARD.encode(patch));
    }
    json
}

/// Applies `default` to the request's object, answering with the JSON patch that turns the object
/// the API server sent into the defaulted one.
fn defaulted<K>(request: AdmissionRequest<K>, default: fn(&mut K)) -> AdmissionResponse
where
    K: Resource + Serialize,
{
    let response = AdmissionResponse::from(&request);
    // A DELETE carries no new object: there is nothing to default.
    let Some(mut object) = request.object else {
        return response;
    };
    let Ok(before) = serde_json::to_value(&object) else {
        return response.deny("cannot encode the object");
    };
    default(&mut object);
    let after = match serde_json::to_value(&object) {
        Ok(after) => after,
        Err(err) => return response.deny(format!("cannot encode the defaulted object: {err}")),
    };
    // The diff is taken between the decoded object and the defaulted one, so the patch holds only
    // what `default` changed, never a field this version of the type does not know.
    let patch = json_patch::diff(&before, &after);
    if patch.0.is_empty() {
        return response;
    }
    match response.clone().with_patch(patch) {
        Ok(patched) => patched,
        Err(err) => response.deny(format!("cannot encode the patch: {err}")),
    }
}

/// Calls the validation function for the request's operation.
fn validated<K>(request: AdmissionRequest<K>, validator: &Validator<K>) -> AdmissionResponse
where
    K: Resource,
{
    let mut response = AdmissionResponse::from(&request);
    let verdict = match (&request.operation, &request.object, &request.old_object) {
        (Operation::Create, Some(object), _) => (validator.create)(object),
        (Operation::Update, Some(new), Some(old)) => (validator.update)(old, new),
        // The object being deleted is the old one.
        (Operation::Delete, _, Some(old)) => (validator.delete)(old),
        (Operation::Connect, ..) => Ok(Warnings::new()),
        (operation, ..) => {
            return response.deny(format!("a {operation:?} request without its object"));
        }
    };
    match verdict {
        Ok(warnings) => {
            if !warnings.is_empty() {
                response.warnings = Some(warnings);
            }
            response
        }
        Err(denial) => {
            // Reported like controller-runtime's denials: 403 Forbidden, with the message.
            response = response.deny(denial.message);
            response.result.code = StatusCode::FORBIDDEN.as_u16();
            response.result.reason = "Forbidden".to_owned();
            response
        }
    }
}

/// The conversions of one kind through its hub, the storage version: every other version (a
/// spoke) converts to the hub and back with the `TryFrom` impls you write.
pub struct Hub<H> {
    to_hub: HashMap<String, ToHub<H>>,
    from_hub: HashMap<String, FromHub<H>>,
}

impl<H> fmt::Debug for Hub<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut spokes: Vec<&String> = self.to_hub.keys().collect();
        spokes.sort();
        f.debug_struct("Hub").field("spokes", &spokes).finish()
    }
}

type ToHub<H> = Box<dyn Fn(Value) -> Result<H, String> + Send + Sync>;
type FromHub<H> = Box<dyn Fn(H) -> Result<Value, String> + Send + Sync>;

impl<H> Default for Hub<H>
where
    H: Resource<DynamicType = ()> + Serialize + DeserializeOwned + 'static,
{
    fn default() -> Self {
        Self::new()
    }
}

impl<H> Hub<H>
where
    H: Resource<DynamicType = ()> + Serialize + DeserializeOwned + 'static,
{
    /// The hub alone: objects of its own version pass through it unchanged.
    pub fn new() -> Self {
        let version = H::version(&()).into_owned();
        let mut to_hub: HashMap<String, ToHub<H>> = HashMap::new();
        to_hub.insert(version.clone(), Box::new(|value| decode::<H>(value)));
        let mut from_hub: HashMap<String, FromHub<H>> = HashMap::new();
        from_hub.insert(version, Box::new(|hub| encode(&hub)));
        Self { to_hub, from_hub }
    }

    /// Adds the spoke `S`, another version of the kind, converted with `H::try_from(S)` and
    /// `S::try_from(H)` (a `From` impl gives its `TryFrom` for free).
    #[must_use]
    pub fn spoke<S>(mut self) -> Self
    where
        S: Resource<DynamicType = ()> + Serialize + DeserializeOwned + TryFrom<H> + 'static,
        H: TryFrom<S>,
        <H as TryFrom<S>>::Error: fmt::Display,
        <S as TryFrom<H>>::Error: fmt::Display,
    {
        let version = S::version(&()).into_owned();
        self.to_hub.insert(
            version.clone(),
            Box::new(|value| H::try_from(decode::<S>(value)?).map_err(|err| err.to_string())),
        );
        self.from_hub.insert(
            version,
            Box::new(|hub| encode(&S::try_from(hub).map_err(|err| err.to_string())?)),
        );
        self
    }
}

fn decode<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|err| format!("cannot decode the object: {err}"))
}

fn encode<T: Serialize>(object: &T) -> Result<Value, String> {
    serde_json::to_value(object).map_err(|err| format!("cannot encode the object: {err}"))
}

/// A kind's conversions, whatever its hub type.
trait Convert: Send + Sync {
    fn convert(&self, object: Value, from: &str, to: &str) -> Result<Value, String>;
}

impl<H> Convert for Hub<H>
where
    H: Send + Sync,
{
    fn convert(&self, object: Value, from: &str, to: &str) -> Result<Value, String> {
        let to_hub = self
            .to_hub
            .get(from)
            .ok_or_else(|| format!("no conversion from version {from}"))?;
        let from_hub = self
            .from_hub
            .get(to)
            .ok_or_else(|| format!("no conversion to version {to}"))?;
        from_hub(to_hub(object)?)
    }
}

/// Answers a ConversionReview: every object, or none, converted to the desired version.
fn convert(body: &[u8], conversions: &HashMap<(String, String), Arc<dyn Convert>>) -> Value {
    let request = match serde_json::from_slice::<ConversionReview>(body)
        .map_err(|err| err.to_string())
        .and_then(|review| ConversionRequest::try_from(review).map_err(|err| err.to_string()))
    {
        Ok(request) => request,
        Err(err) => {
            warn!(error = %err, "undecodable ConversionReview");
            let status = Status::failure(&format!("cannot decode the review: {err}"), "BadRequest");
            return serde_json::to_value(ConversionResponse::invalid(status).into_review())
                .unwrap_or_default();
        }
    };
    let desired = request.desired_api_version.clone();
    let converted: Result<Vec<Value>, String> = request
        .objects
        .iter()
        .map(|object| convert_one(object.clone(), &desired, conversions))
        .collect();
    let response = ConversionResponse::for_request(request);
    let response = match converted {
        Ok(objects) => response.success(objects),
        Err(err) => {
            warn!(error = %err, %desired, "conversion failed");
            response.failure(Status::failure(&err, "ConversionFailed"))
        }
    };
    serde_json::to_value(response.into_review()).unwrap_or_default()
}

fn convert_one(
    object: Value,
    desired: &str,
    conversions: &HashMap<(String, String), Arc<dyn Convert>>,
) -> Result<Value, String> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default().to_owned();
    let kind = object["kind"].as_str().unwrap_or_default().to_owned();
    if api_version == desired {
        return Ok(object);
    }
    let (group, from) = api_version
        .rsplit_once('/')
        .ok_or_else(|| format!("`{api_version}` has no group"))?;
    let to = desired
        .strip_prefix(group)
        .and_then(|rest| rest.strip_prefix('/'))
        .ok_or_else(|| format!("cannot convert {api_version} to another group: {desired}"))?;
    let conversion = conversions
        .get(&(group.to_owned(), kind.clone()))
        .ok_or_else(|| format!("no conversion for {kind} of {group}"))?;
    conversion.convert(object, from, to)
}

/// Helpers for the webhooks' tests: reviews as the API server sends them, sent through the router.
#[cfg(any(test, feature = "testing"))]
pub mod testing {
    use axum::body::Body;
    use axum::http::Request;
    use prometheus_client::registry::Registry;
    use serde_json::json;
    use tower::ServiceExt as _;

    use super::*;

    /// An AdmissionReview of `operation` (`CREATE`, `UPDATE`, `DELETE`) on `object`.
    pub fn admission_review(operation: &str, object: &Value, old_object: Option<&Value>) -> Value {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let kind = json!({"group": group, "version": version, "kind": object["kind"]});
        let (object, old_object) = match operation {
            "DELETE" => (Value::Null, old_object.unwrap_or(object).clone()),
            _ => (object.clone(), old_object.cloned().unwrap_or(Value::Null)),
        };
        json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                "kind": kind,
                "resource": {"group": group, "version": version, "resource": "objects"},
                "name": "example",
                "namespace": "default",
                "operation": operation,
                "userInfo": {"username": "admin"},
                "object": object,
                "oldObject": old_object,
                "dryRun": false,
            }
        })
    }

    /// A ConversionReview asking for `objects` in `desired_api_version`.
    pub fn conversion_review(desired_api_version: &str, objects: &[Value]) -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {
                "uid": "0000-conversion",
                "desiredAPIVersion": desired_api_version,
                "objects": objects,
            }
        })
    }

    /// Posts `review` to `path` of the server `webhooks` make, and returns the response body.
    pub async fn post_review(webhooks: Webhooks, path: &str, review: &Value) -> Value {
        let mut registry = Registry::default();
        let router = webhooks.router(WebhookMetrics::register(&mut registry));
        let request = Request::post(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(review.to_string()))
            .unwrap();
        let response = router.oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// `object` with the response's base64 JSON patch applied, as the API server applies it.
    pub fn apply_patch(object: &Value, review_response: &Value) -> Value {
        let mut patched = object.clone();
        let Some(patch) = review_response["response"]["patch"].as_str() else {
            return patched;
        };
        assert_eq!(review_response["response"]["patchType"], "JSONPatch");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(patch)
            .unwrap();
        let patch: json_patch::Patch = serde_json::from_slice(&bytes).unwrap();
        json_patch::patch(&mut patched, &patch).unwrap();
        patched
    }

    #[tokio::test]
    async fn an_undecodable_review_is_answered_with_its_uid() {
        let mut webhooks = Webhooks::default();
        webhooks.validating(
            "/validate",
            Validator::<k8s_openapi::api::core::v1::ConfigMap> {
                create: |_| Ok(Warnings::new()),
                update: |_, _| Ok(Warnings::new()),
                delete: |_| Ok(Warnings::new()),
            },
        );
        let mut review = admission_review(
            "CREATE",
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
            None,
        );
        review["request"]["object"]["data"] = json!(42);
        let response = post_review(webhooks, "/validate", &review).await;
        assert_eq!(
            response["response"]["uid"],
            "705ab4f5-6393-11e8-b7cc-42010a800002"
        );
        assert_eq!(response["response"]["allowed"], false);
    }

    #[tokio::test]
    async fn requests_are_counted_and_timed_by_webhook() {
        let mut registry = Registry::default();
        let metrics = WebhookMetrics::register(&mut registry);
        let mut webhooks = Webhooks::default();
        webhooks.defaulting(
            "/default",
            |_: &mut k8s_openapi::api::core::v1::ConfigMap| {},
        );
        let router = webhooks.router(metrics);
        let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
        let request = Request::post("/default")
            .body(Body::from(
                admission_review("CREATE", &object, None).to_string(),
            ))
            .unwrap();
        router.oneshot(request).await.unwrap();
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for expected in [
            r#"controller_runtime_webhook_requests_total{webhook="/default",code="200"} 1"#,
            r#"controller_runtime_webhook_latency_seconds_count{webhook="/default"} 1"#,
            r#"controller_runtime_webhook_requests_in_flight{webhook="/default"} 0"#,
        ] {
            assert!(text.contains(expected), "{expected}:\n{text}");
        }
        let rendered: std::collections::BTreeSet<&str> = text
            .lines()
            .filter(|line| !line.starts_with('#'))
            .filter_map(|line| line.split(['{', ' ']).next())
            .collect();
        let listed = crate::metrics::WEBHOOK_SERIES.iter().copied().collect();
        assert_eq!(rendered, listed, "{text}");
    }

    #[tokio::test]
    async fn http2_is_offered_only_when_enabled() {
        let offered = |http2| async move { tls::config(None, http2, "test").await.unwrap() };
        assert_eq!(offered(false).await.alpn_protocols, [b"http/1.1".to_vec()]);
        assert_eq!(
            offered(true).await.alpn_protocols,
            [b"h2".to_vec(), b"http/1.1".to_vec()]
        );
    }

    #[test]
    fn a_kind_without_conversions_fails_the_review_with_a_reason() {
        let object = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {}});
        let review = conversion_review("example.com/v2", &[object]);
        let response = convert(review.to_string().as_bytes(), &HashMap::new());
        assert_eq!(response["response"]["uid"], "0000-conversion");
        assert_eq!(response["response"]["result"]["status"], "Failure");
        assert_eq!(
            response["response"]["result"]["message"],
            "no conversion for Widget of example.com"
        );
    }
}
