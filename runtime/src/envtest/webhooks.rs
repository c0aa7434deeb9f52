//! A project's webhooks served to the API server of a [`ControlPlane`] as the manager serves them:
//! over HTTPS, with a certificate of the control plane's CA, and registered from the project's
//! `config/webhook/manifests.yaml` with the server's address in place of the manager's Service.

use std::time::{Duration, Instant};

use k8s_openapi::ByteString;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use kube::{Client, Resource};
use serde::Deserialize as _;
use serde_json::json;

use super::{ControlPlane, Result, counted, crate_dir};
use crate::metrics::Metrics;
use crate::tls::{self, CertFiles, TlsListener};
use crate::webhook::Webhooks;

/// The label that sends a test's objects, and only them, to the test's webhook server.
pub const LABEL: &str = "envtest/test";

/// How long the API server gets to call a webhook newly registered.
const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);

/// The webhook server of one test, registered for the objects labelled [`LABEL`] with its name.
#[derive(Debug)]
pub struct Served {
    test: String,
    metrics: Metrics,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Served {
    /// Serves `webhooks` for the objects of the test `test`, which [`Served::label`] marks, as
    /// `config/webhook/manifests.yaml` registers them.
    pub async fn start(
        plane: &ControlPlane,
        client: &Client,
        test: &str,
        webhooks: Webhooks,
    ) -> Result<Self> {
        let dir = plane.serving_cert(&format!("webhook-{test}"))?;
        let certs = CertFiles {
            cert: dir.join("cert.pem"),
            key: dir.join("key.pem"),
        };
        let config = tls::config(Some(certs), false, "webhook").await?;
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let url = format!("https://127.0.0.1:{}", listener.local_addr()?.port());
        let metrics = Metrics::new();
        let router = webhooks.router(metrics.webhooks.clone());
        let serve = axum::serve(TlsListener::new(listener, config)?, router);
        let server = tokio::spawn(async move { serve.await });
        let manifests = crate_dir().join("config/webhook/manifests.yaml");
        let text = std::fs::read_to_string(&manifests)?;
        let ca_bundle = serde_json::to_value(ByteString(plane.ca_pem().into_bytes()))?;
        for document in serde_yaml_ng::Deserializer::from_str(&text) {
            let mut config = serde_json::Value::deserialize(document)?;
            let kind = match config["kind"].as_str() {
                Some(
                    kind @ ("MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration"),
                ) => kind.to_owned(),
                _ => continue,
            };
            for webhook in config["webhooks"].as_array_mut().into_iter().flatten() {
                let path = webhook["clientConfig"]["service"]["path"]
                    .as_str()
                    .unwrap_or("");
                webhook["clientConfig"] =
                    json!({ "url": format!("{url}{path}"), "caBundle": ca_bundle });
                webhook["objectSelector"] = json!({ "matchLabels": { LABEL: test } });
            }
            let name = config["metadata"]["name"].as_str().unwrap_or("webhooks");
            config["metadata"]["name"] = format!("{test}-{name}").into();
            let gvk = GroupVersionKind::gvk("admissionregistration.k8s.io", "v1", &kind);
            let api = Api::<DynamicObject>::all_with(client.clone(), &ApiResource::from_gvk(&gvk));
            api.create(&PostParams::default(), &serde_json::from_value(config)?)
                .await?;
        }
        Ok(Served {
            test: test.to_owned(),
            metrics,
            server,
        })
    }

    /// Labels `object` as the test's, for its webhooks.
    pub fn label<K: Resource>(&self, object: &mut K) {
        object
            .meta_mut()
            .labels
            .get_or_insert_with(Default::default)
            .insert(LABEL.to_owned(), self.test.clone());
    }

    /// The reviews the server has answered.
    pub fn reviews(&self) -> u64 {
        counted(
            &self.metrics,
            "controller_runtime_webhook_requests_total",
            &[],
        )
    }

    /// Makes the request `attempt` until the API server sends a review for it, as it does once it
    /// has read the webhook configurations: the request's answer, or an error after
    /// [`REVIEW_TIMEOUT`].
    pub async fn reviewed<T, F, R>(&self, mut attempt: F) -> Result<kube::Result<T>>
    where
        F: FnMut() -> R,
        R: Future<Output = kube::Result<T>>,
    {
        let started = Instant::now();
        loop {
            let before = self.reviews();
            let answer = attempt().await;
            if self.reviews() > before {
                return Ok(answer);
            }
            if started.elapsed() > REVIEW_TIMEOUT {
                return Err(
                    format!("the API server sent no review within {REVIEW_TIMEOUT:?}").into(),
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
