//! The manager's HTTP endpoints: health probes and metrics.
//!
//! `/healthz` answers as long as the process can serve HTTP, which is all a liveness probe should
//! check: restarting the pod cures nothing else. `/readyz` turns ready once the manager has started
//! up, that is, its controllers are running or it stands by for leadership, and unready again when
//! shutdown begins. Standbys count as ready so that a Deployment with several replicas can finish a
//! rolling update; controller-runtime's default ping check behaves the same way.
//!
//! ```
//! use rsop_runtime::server::{Readiness, health_router};
//!
//! let readiness = Readiness::default();
//! // Served on `--health-probe-bind-address`; `/readyz` answers 200 once the manager sets it.
//! let _router = health_router(readiness.clone());
//! assert!(!readiness.get());
//! readiness.set(true);
//! assert!(readiness.get());
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tracing::error;

use crate::auth::{KubeAuth, require_authorization};
use crate::metrics::{self, Metrics};

/// The servers the manager runs, each named for the logs.
pub(crate) type Servers = JoinSet<(&'static str, std::io::Result<()>)>;

/// Readiness reported by `/readyz`.
#[derive(Clone, Debug, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// Sets whether the manager is ready.
    pub fn set(&self, ready: bool) {
        self.0.store(ready, Ordering::Release);
    }

    /// Whether the manager is ready.
    pub fn get(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// Routes of the health probe server.
pub fn health_router(readiness: Readiness) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(readiness)
}

async fn healthz() -> &'static str {
    "ok"
}

async fn readyz(State(readiness): State<Readiness>) -> Response {
    if readiness.get() {
        "ok".into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready").into_response()
    }
}

/// Routes of the metrics server; with `auth`, every request must pass [`require_authorization`].
pub fn metrics_router(metrics: Arc<Metrics>, auth: Option<KubeAuth>) -> Router {
    let router = Router::new()
        .route("/metrics", get(serve_metrics))
        .with_state(metrics);
    match auth {
        Some(auth) => router.layer(axum::middleware::from_fn_with_state(
            auth,
            require_authorization,
        )),
        None => router,
    }
}

async fn serve_metrics(State(metrics): State<Arc<Metrics>>) -> Response {
    match metrics.encode() {
        Ok(body) => ([(header::CONTENT_TYPE, metrics::CONTENT_TYPE)], body).into_response(),
        Err(err) => {
            error!(error = %err, "failed to encode metrics");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// Binds `addr`, naming the server in the error so that a port clash is easy to diagnose.
pub async fn bind(addr: SocketAddr, server: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .with_context(|| format!("failed to bind the {server} server to {addr}"))
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt as _;

    use super::*;
    use crate::auth::tests::FakeApiServer;
    use crate::tls::tests::{client_trusting, https_get, pem_pair};
    use crate::tls::{CERT_FILE, KEY_FILE, TlsListener, server_config};

    async fn get_path(router: Router, path: &str) -> (StatusCode, String, Option<String>) {
        let request = Request::get(path).body(Body::empty()).unwrap();
        let response = router.oneshot(request).await.unwrap();
        let status = response.status();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap().to_owned());
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        (
            status,
            String::from_utf8(body.to_vec()).unwrap(),
            content_type,
        )
    }

    #[tokio::test]
    async fn healthz_is_always_ok() {
        let (status, body, _) = get_path(health_router(Readiness::default()), "/healthz").await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "ok"));
    }

    #[tokio::test]
    async fn readyz_follows_readiness() {
        let readiness = Readiness::default();
        let router = health_router(readiness.clone());
        let (status, _, _) = get_path(router.clone(), "/readyz").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        readiness.set(true);
        let (status, _, _) = get_path(router.clone(), "/readyz").await;
        assert_eq!(status, StatusCode::OK);
        readiness.set(false);
        let (status, _, _) = get_path(router, "/readyz").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    }

    #[tokio::test]
    async fn unknown_paths_are_not_found() {
        let (status, _, _) = get_path(health_router(Readiness::default()), "/metrics").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn insecure_metrics_are_openmetrics_text() {
        let metrics = Arc::new(Metrics::new());
        metrics.controller("memcached");
        let (status, body, content_type) =
            get_path(metrics_router(metrics, None), "/metrics").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(content_type.as_deref(), Some(metrics::CONTENT_TYPE));
        assert!(body.contains("controller_runtime_reconcile_total{controller=\"memcached\""));
        assert!(body.ends_with("# EOF\n"));
    }

    /// The whole secure path: TLS, TokenReview, SubjectAccessReview, then the metrics.
    #[tokio::test]
    async fn secure_metrics_require_an_authorized_token() {
        let dir = std::env::temp_dir().join(format!("secure-metrics-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (cert, key) = pem_pair();
        std::fs::write(dir.join(CERT_FILE), &cert).unwrap();
        std::fs::write(dir.join(KEY_FILE), &key).unwrap();

        let fake = FakeApiServer {
            valid_token: "prometheus-token",
            allowed: true,
            ..FakeApiServer::default()
        };
        let router = metrics_router(Arc::new(Metrics::new()), Some(KubeAuth::new(fake.client())));
        let tcp = bind("127.0.0.1:0".parse().unwrap(), "metrics")
            .await
            .unwrap();
        let listener = TlsListener::new(tcp, server_config(Some(&dir)).await.unwrap()).unwrap();
        let addr = axum::serve::Listener::local_addr(&listener).unwrap();
        let server = tokio::spawn(async move { axum::serve(listener, router).await });
        let client = client_trusting(&cert);

        let anonymous = https_get(&client, addr, "/metrics", None).await.unwrap();
        assert!(anonymous.starts_with("HTTP/1.1 401"), "{anonymous}");
        let stranger = https_get(&client, addr, "/metrics", Some("Bearer forged"))
            .await
            .unwrap();
        assert!(stranger.starts_with("HTTP/1.1 401"), "{stranger}");
        let scraper = https_get(&client, addr, "/metrics", Some("Bearer prometheus-token"))
            .await
            .unwrap();
        assert!(scraper.starts_with("HTTP/1.1 200"), "{scraper}");
        assert!(scraper.contains("# EOF"), "{scraper}");

        server.abort();
        std::fs::remove_dir_all(dir).unwrap();
    }
}
