//! Kubernetes authentication and authorization of metrics requests.
//!
//! This is the Rust counterpart of controller-runtime's `filters.WithAuthenticationAndAuthorization`
//! that kubebuilder projects put in front of `/metrics`: the caller's bearer token is checked with a
//! `TokenReview`, then a `SubjectAccessReview` asks whether that user may `get` the request path as a
//! non-resource URL. Prometheus therefore needs a ClusterRole granting `get` on `/metrics`, and the
//! manager needs `create` on `tokenreviews` and `subjectaccessreviews`. The status codes match the Go
//! filter: 401 when the caller is unknown, 403 when it is not allowed, 500 when the review itself
//! could not be made.
//!
//! ```
//! use axum::http::{HeaderMap, HeaderValue, header};
//! use rsop_runtime::auth::bearer_token;
//!
//! let mut headers = HeaderMap::new();
//! headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer abc"));
//! assert_eq!(bearer_token(&headers), Some("abc"));
//! ```

use std::collections::BTreeMap;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};
use tracing::{debug, error};

/// Asks the API server who a caller is and what it may do.
#[derive(Clone)]
pub struct KubeAuth {
    client: Client,
}

impl std::fmt::Debug for KubeAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeAuth").finish_non_exhaustive()
    }
}

/// The authenticated identity a `TokenReview` returned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct User {
    /// User name, e.g. `system:serviceaccount:monitoring:prometheus-k8s`.
    pub name: String,
    /// Unique ID of the user, if the authenticator provides one.
    pub uid: Option<String>,
    /// Groups the user belongs to.
    pub groups: Vec<String>,
    /// Extra attributes the authenticator attached, needed for an exact authorization decision.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl KubeAuth {
    /// Reviews requests through `client`.
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// Validates `token`, returning the user it belongs to, or `None` if the API server rejects it.
    pub async fn authenticate(&self, token: &str) -> kube::Result<Option<User>> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: Some(token.to_owned()),
                ..TokenReviewSpec::default()
            },
            ..TokenReview::default()
        };
        let review = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await?;
        let Some(status) = review.status else {
            return Ok(None);
        };
        if let Some(reason) = status.error.filter(|e| !e.is_empty()) {
            debug!(%reason, "token review rejected the token");
        }
        if status.authenticated != Some(true) {
            return Ok(None);
        }
        Ok(status.user.and_then(|user| {
            Some(User {
                name: user.username.filter(|name| !name.is_empty())?,
                uid: user.uid,
                groups: user.groups.unwrap_or_default(),
                extra: user.extra.unwrap_or_default(),
            })
        }))
    }

    /// Whether `user` may perform `verb` on the non-resource URL `path`.
    pub async fn authorize(&self, user: &User, verb: &str, path: &str) -> kube::Result<bool> {
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(user.name.clone()),
                uid: user.uid.clone(),
                groups: Some(user.groups.clone()),
                extra: Some(user.extra.clone()),
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_owned()),
                    verb: Some(verb.to_owned()),
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        let review = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await?;
        let status = review.status.unwrap_or_default();
        if !status.allowed {
            debug!(
                user = %user.name,
                reason = status.reason.unwrap_or_default(),
                "access to metrics denied"
            );
        }
        Ok(status.allowed && status.denied != Some(true))
    }
}

/// The token of an `Authorization: Bearer <token>` header, as Kubernetes' bearer token
/// authenticator reads it: scheme case-insensitive, exactly one non-empty token.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    let valid = scheme.eq_ignore_ascii_case("bearer")
        && !token.is_empty()
        && !token.contains(char::is_whitespace);
    valid.then_some(token)
}

/// Axum middleware that lets a request through only if the caller is authenticated and authorized.
pub async fn require_authorization(
    State(auth): State<KubeAuth>,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = bearer_token(request.headers()) else {
        return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response();
    };
    let user = match auth.authenticate(token).await {
        Ok(Some(user)) => user,
        Ok(None) => return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response(),
        Err(err) => {
            error!(error = %err, "authentication of a metrics request failed");
            return (StatusCode::UNAUTHORIZED, "Authentication failed").into_response();
        }
    };
    let verb = request.method().as_str().to_ascii_lowercase();
    match auth.authorize(&user, &verb, request.uri().path()).await {
        Ok(true) => next.run(request).await,
        Ok(false) => (
            StatusCode::FORBIDDEN,
            format!("Authorization denied for user {}", user.name),
        )
            .into_response(),
        Err(err) => {
            error!(error = %err, user = %user.name, "authorization of a metrics request failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Authorization for user {} failed", user.name),
            )
                .into_response()
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::{Arc, Mutex};

    use axum::body::Body;
    use axum::http::{HeaderValue, Method, Request};
    use serde_json::{Value, json};

    use super::*;

    fn headers(authorization: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(authorization).unwrap(),
        );
        headers
    }

    #[test]
    fn bearer_token_is_extracted() {
        assert_eq!(bearer_token(&headers("Bearer abc.def")), Some("abc.def"));
        assert_eq!(bearer_token(&headers("bearer  abc ")), Some("abc"));
        assert_eq!(bearer_token(&headers("BEARER abc")), Some("abc"));
    }

    #[test]
    fn malformed_authorization_headers_are_ignored() {
        assert_eq!(bearer_token(&HeaderMap::new()), None);
        for bad in [
            "Basic dXNlcjpwYXNz",
            "Bearer",
            "Bearer ",
            "Bearer a b",
            "Bearerabc",
            "abc",
        ] {
            assert_eq!(bearer_token(&headers(bad)), None, "{bad:?}");
        }
    }

    /// A fake API server answering TokenReviews and SubjectAccessReviews, recording what it got.
    #[derive(Clone, Default)]
    pub(crate) struct FakeApiServer {
        /// Token that authenticates as `system:serviceaccount:monitoring:prometheus`.
        pub valid_token: &'static str,
        /// Whether that user may get `/metrics`.
        pub allowed: bool,
        /// An API path that answers 500, to simulate an unavailable API server.
        pub failing: Option<&'static str>,
        /// Bodies of the requests received, in order.
        pub requests: Arc<Mutex<Vec<(String, Value)>>>,
    }

    impl FakeApiServer {
        pub(crate) fn client(&self) -> Client {
            let fake = self.clone();
            let service = tower::service_fn(move |req: Request<kube::client::Body>| {
                let fake = fake.clone();
                async move {
                    let path = req.uri().path().to_owned();
                    let body = req.into_body().collect_bytes().await?;
                    let review: Value = serde_json::from_slice(&body)?;
                    fake.requests
                        .lock()
                        .unwrap()
                        .push((path.clone(), review.clone()));
                    if fake.failing == Some(path.as_str()) {
                        let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                            "message": "etcdserver: request timed out", "reason": "InternalError", "code": 500});
                        return Ok::<_, Box<dyn std::error::Error + Send + Sync>>(
                            axum::http::Response::builder()
                                .status(500)
                                .body(Body::from(status.to_string()))?,
                        );
                    }
                    let status = match path.as_str() {
                        "/apis/authentication.k8s.io/v1/tokenreviews" => {
                            if review["spec"]["token"] == fake.valid_token {
                                json!({"authenticated": true, "user": {
                                    "username": "system:serviceaccount:monitoring:prometheus",
                                    "uid": "42",
                                    "groups": ["system:serviceaccounts"],
                                }})
                            } else {
                                json!({"authenticated": false, "error": "invalid token"})
                            }
                        }
                        _ => json!({"allowed": fake.allowed}),
                    };
                    let mut answer = review;
                    answer["status"] = status;
                    Ok(axum::http::Response::new(Body::from(answer.to_string())))
                }
            });
            Client::new(service, "default")
        }
    }

    fn metrics_request(authorization: Option<&str>) -> Request<Body> {
        let mut request = Request::builder().method(Method::GET).uri("/metrics");
        if let Some(value) = authorization {
            request = request.header(header::AUTHORIZATION, value);
        }
        request.body(Body::empty()).unwrap()
    }

    async fn call(fake: &FakeApiServer, authorization: Option<&str>) -> (StatusCode, String) {
        use tower::ServiceExt as _;
        let router = axum::Router::new()
            .route("/metrics", axum::routing::get(|| async { "secret" }))
            .layer(axum::middleware::from_fn_with_state(
                KubeAuth::new(fake.client()),
                require_authorization,
            ));
        let response = router
            .oneshot(metrics_request(authorization))
            .await
            .unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn missing_token_is_unauthorized_without_calling_the_api() {
        let fake = FakeApiServer::default();
        assert_eq!(call(&fake, None).await.0, StatusCode::UNAUTHORIZED);
        assert_eq!(
            call(&fake, Some("Basic x")).await.0,
            StatusCode::UNAUTHORIZED
        );
        assert!(fake.requests.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn unknown_token_is_unauthorized() {
        let fake = FakeApiServer {
            valid_token: "good",
            allowed: true,
            ..FakeApiServer::default()
        };
        let (status, _) = call(&fake, Some("Bearer bad")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(fake.requests.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn authenticated_but_not_allowed_is_forbidden() {
        let fake = FakeApiServer {
            valid_token: "good",
            allowed: false,
            ..FakeApiServer::default()
        };
        let (status, body) = call(&fake, Some("Bearer good")).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert!(body.contains("system:serviceaccount:monitoring:prometheus"));
    }

    #[tokio::test]
    async fn allowed_user_gets_through_and_reviews_carry_the_identity() {
        let fake = FakeApiServer {
            valid_token: "good",
            allowed: true,
            ..FakeApiServer::default()
        };
        assert_eq!(
            call(&fake, Some("Bearer good")).await,
            (StatusCode::OK, "secret".to_owned())
        );
        let requests = fake.requests.lock().unwrap();
        let (path, sar) = &requests[1];
        assert_eq!(path, "/apis/authorization.k8s.io/v1/subjectaccessreviews");
        assert_eq!(
            sar["spec"]["user"],
            "system:serviceaccount:monitoring:prometheus"
        );
        assert_eq!(sar["spec"]["uid"], "42");
        assert_eq!(sar["spec"]["groups"], json!(["system:serviceaccounts"]));
        assert_eq!(
            sar["spec"]["nonResourceAttributes"],
            json!({"path": "/metrics", "verb": "get"})
        );
    }

    #[tokio::test]
    async fn failed_token_review_is_unauthorized() {
        let fake = FakeApiServer {
            valid_token: "good",
            allowed: true,
            failing: Some("/apis/authentication.k8s.io/v1/tokenreviews"),
            ..FakeApiServer::default()
        };
        let (status, body) = call(&fake, Some("Bearer good")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(body, "Authentication failed");
    }

    #[tokio::test]
    async fn failed_access_review_is_an_internal_error() {
        let fake = FakeApiServer {
            valid_token: "good",
            allowed: true,
            failing: Some("/apis/authorization.k8s.io/v1/subjectaccessreviews"),
            ..FakeApiServer::default()
        };
        let (status, _) = call(&fake, Some("Bearer good")).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    }
}
