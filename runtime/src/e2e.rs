//! What the end-to-end tests of an operator check, as functions of a [`Client`] of a cluster where
//! `make deploy` installed it: its manager runs, serves its metrics to an authorized scraper,
//! reconciles the samples, and its webhooks are served. `make test-e2e` runs a project's suite
//! against a Kind cluster; this crate's own tests run the checks against a recorded API server.
//!
//! Each check polls until the cluster gets where it expects or [`TIMEOUT`] passes, and then fails
//! with what it saw last. A suite gets its client from [`cluster`], which skips it unless
//! `RSOP_E2E=1`:
//!
//! ```no_run
//! use rsop_runtime::e2e::{self, Deployed};
//!
//! #[tokio::test]
//! async fn the_manager_runs() -> e2e::Result<()> {
//!     let Some(client) = e2e::cluster().await else {
//!         return Ok(());
//!     };
//!     Deployed::new("memcached-operator").manager_pod(&client).await.map(drop)
//! }
//! ```

#[cfg(test)]
mod recorded;

use std::future::Future;
use std::io::Write as _;
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Pod, ServiceAccount};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, LogParams, Patch, PatchParams,
    PostParams,
};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};

/// The image of the Pod that scrapes the metrics endpoint from inside the cluster.
const CURL_IMAGE: &str = "curlimages/curl:8.11.1";
/// How long a check waits for the cluster: pulling images onto a new Kind node takes most of it.
pub const TIMEOUT: Duration = Duration::from_secs(180);
/// How often a check looks again.
const POLL: Duration = Duration::from_secs(2);
/// The field manager of the objects the tests apply.
const FIELD_MANAGER: &str = "e2e";

/// What a check found, or why it failed.
pub type Result<T, E = Failure> = std::result::Result<T, E>;

/// Why a check failed, shown as it is written when a test returns it.
pub struct Failure(String);

impl std::fmt::Debug for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure(message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Failure(message.to_owned())
    }
}

/// One look at the cluster.
#[derive(Debug)]
pub enum Probe<T> {
    /// Found what the check waits for.
    Done(T),
    /// Not yet, and why: the failure message if it stays so.
    Waiting(String),
}

/// Looks with `probe` every [`POLL`] until it is done, or fails after [`TIMEOUT`] saying what it
/// waited for and what it saw last. An error of `probe` fails at once.
pub async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Probe<T>>>,
{
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let last = match probe().await? {
            Probe::Done(found) => return Ok(found),
            Probe::Waiting(why) => why,
        };
        if tokio::time::Instant::now() >= deadline {
            return Err(format!("{what}: gave up after {TIMEOUT:?}: {last}").into());
        }
        tokio::time::sleep(POLL).await;
    }
}

/// A client of the current kube context, or `None` when `RSOP_E2E` is not `1`; then it says why,
/// once, on stderr.
///
/// # Panics
/// When `RSOP_E2E=1` and the kube context gives no client: the tests cannot run.
pub async fn cluster() -> Option<Client> {
    static SKIPPED: std::sync::Once = std::sync::Once::new();
    if std::env::var_os("RSOP_E2E").is_none_or(|value| value != "1") {
        SKIPPED.call_once(|| {
            // Written to stderr itself: the test harness would capture `eprintln!`.
            let _ = writeln!(
                std::io::stderr(),
                "e2e tests skipped: they need a cluster; `make test-e2e` makes one and runs them \
                 with RSOP_E2E=1"
            );
        });
        return None;
    }
    let client = Client::try_default().await;
    Some(client.expect("a client of the current kube context"))
}

/// What a failed request says, with what it was for.
fn failed(doing: &str) -> impl FnOnce(kube::Error) -> String + '_ {
    move |err| format!("{doing}: {err}")
}

/// An operator as `make deploy` installs it: the namespace of its manager, the prefix
/// `config/default` gives the names of its objects, and the namespace its samples go to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deployed {
    /// The manager's namespace: `<name>-system`.
    pub namespace: String,
    /// The prefix of the names of the manager's objects: `<name>-`.
    pub prefix: String,
    /// Where the samples go: `default` for a manager that watches every namespace.
    pub samples_namespace: String,
}

impl Deployed {
    /// The operator `name` (its project name) as `config/default` installs it, watching every
    /// namespace.
    pub fn new(name: &str) -> Self {
        Self {
            namespace: format!("{name}-system"),
            prefix: format!("{name}-"),
            samples_namespace: "default".to_owned(),
        }
    }

    /// The samples go to the manager's own namespace, the only one a namespaced manager watches.
    #[must_use]
    pub fn samples_in_its_namespace(mut self) -> Self {
        self.samples_namespace.clone_from(&self.namespace);
        self
    }

    /// The manager's Pod, once it is the only one and ready.
    pub async fn manager_pod(&self, client: &Client) -> Result<Pod> {
        let namespace = self.namespace.as_str();
        let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
        let params = ListParams::default().labels("control-plane=controller-manager");
        eventually("the manager's Pod to be ready", || async {
            let list = pods.list(&params).await;
            let list = list.map_err(failed("list the manager's Pods"))?;
            Ok(match list.items.as_slice() {
                [pod] if is_ready(pod) => Probe::Done(pod.clone()),
                [pod] => Probe::Waiting(format!(
                    "Pod {} is {}, not ready",
                    pod.name_any(),
                    phase(pod).unwrap_or("without a phase")
                )),
                [] => Probe::Waiting(format!("no Pod in {namespace}: did `make deploy` run?")),
                pods => Probe::Waiting(format!("{} Pods, waiting for one", pods.len())),
            })
        })
        .await
    }

    /// The text of the manager's `/metrics`, scraped as Prometheus would: from a Pod in the cluster,
    /// over HTTPS, with the token of a ServiceAccount bound to the metrics reader's ClusterRole (the
    /// manager's own, bound by this check).
    pub async fn scrape_metrics(&self, client: &Client) -> Result<String> {
        let namespace = self.namespace.as_str();
        let prefix = self.prefix.as_str();
        let account = format!("{prefix}controller-manager");
        let binding: ClusterRoleBinding = serde_json::from_value(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": format!("{prefix}metrics-e2e")},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": format!("{prefix}metrics-reader"),
            },
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        }))
        .map_err(|e| e.to_string())?;
        Api::<ClusterRoleBinding>::all(client.clone())
            .patch(
                &binding.name_any(),
                &PatchParams::apply(FIELD_MANAGER),
                &Patch::Apply(&binding),
            )
            .await
            .map_err(failed("bind the metrics reader's ClusterRole"))?;

        let request = TokenRequest {
            spec: TokenRequestSpec {
                expiration_seconds: Some(600),
                ..TokenRequestSpec::default()
            },
            ..TokenRequest::default()
        };
        let token = Api::<ServiceAccount>::namespaced(client.clone(), namespace)
            .create_token_request(&account, &PostParams::default(), &request)
            .await
            .map_err(failed("request a token of the manager's ServiceAccount"))?
            .status
            .map(|s| s.token)
            .ok_or("the TokenRequest came back without a token")?;

        let url = format!(
            "https://{prefix}controller-manager-metrics-service.{namespace}.svc:8443/metrics"
        );
        let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
        let curl = pods
            .create(&PostParams::default(), &curl_pod(&token, &url)?)
            .await
            .map_err(failed("create the Pod that scrapes the metrics"))?
            .name_any();
        let phase = eventually("the scraping Pod to finish", || async {
            let pod = pods
                .get(&curl)
                .await
                .map_err(failed("read the scraping Pod"))?;
            Ok(match phase(&pod) {
                Some(done @ ("Succeeded" | "Failed")) => Probe::Done(done.to_owned()),
                other => Probe::Waiting(format!("it is {}", other.unwrap_or("pending"))),
            })
        })
        .await?;
        let logs = pods.logs(&curl, &LogParams::default()).await;
        let logs = logs.map_err(failed("read the scraping Pod's logs"))?;
        // Left behind when deleting fails: the next run makes a Pod of another name.
        let _ = pods.delete(&curl, &DeleteParams::default()).await;
        if phase == "Failed" {
            return Err(format!("curl {url} failed:\n{logs}").into());
        }
        Ok(logs)
    }

    /// The API of the kind `resource` in the namespace of the samples, or across the cluster.
    pub fn api(
        &self,
        client: &Client,
        resource: &ApiResource,
        namespaced: bool,
    ) -> Api<DynamicObject> {
        if namespaced {
            Api::namespaced_with(client.clone(), &self.samples_namespace, resource)
        } else {
            Api::all_with(client.clone(), resource)
        }
    }

    /// Checks that the webhooks serving `path` (in the project's mutating and validating webhook
    /// configurations) have a CA bundle: cert-manager's injector has put in the webhook server's.
    pub async fn ca_bundles_injected(&self, client: &Client, path: &str) -> Result<()> {
        let prefix = self.prefix.as_str();
        let mutating = Api::<MutatingWebhookConfiguration>::all(client.clone());
        let validating = Api::<ValidatingWebhookConfiguration>::all(client.clone());
        eventually(&format!("the CA bundle of {path}"), || async {
            let mut found = Vec::new();
            let name = format!("{prefix}mutating-webhook-configuration");
            if let Some(config) = mutating
                .get_opt(&name)
                .await
                .map_err(failed("read webhooks"))?
            {
                found.extend(
                    config
                        .webhooks
                        .into_iter()
                        .flatten()
                        .map(|w| w.client_config),
                );
            }
            let name = format!("{prefix}validating-webhook-configuration");
            if let Some(config) = validating
                .get_opt(&name)
                .await
                .map_err(failed("read webhooks"))?
            {
                found.extend(
                    config
                        .webhooks
                        .into_iter()
                        .flatten()
                        .map(|w| w.client_config),
                );
            }
            let serving: Vec<_> = found
                .into_iter()
                .filter(|c| c.service.as_ref().and_then(|s| s.path.as_deref()) == Some(path))
                .collect();
            Ok(if serving.is_empty() {
                Probe::Waiting("no webhook serves it: did `make deploy` run?".to_owned())
            } else if serving.iter().all(|c| c.ca_bundle.is_some()) {
                Probe::Done(())
            } else {
                Probe::Waiting("a webhook has no CA bundle yet".to_owned())
            })
        })
        .await
    }
}

fn phase(pod: &Pod) -> Option<&str> {
    pod.status.as_ref()?.phase.as_deref()
}

fn is_ready(pod: &Pod) -> bool {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions.is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// A Pod that prints what `url` answers, passing the restricted Pod Security Standard the
/// manager's namespace enforces.
fn curl_pod(token: &str, url: &str) -> Result<Pod> {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "curl-metrics-"},
        "spec": {
            "restartPolicy": "Never",
            "securityContext": {
                "runAsNonRoot": true,
                "runAsUser": 1000,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [{
                "name": "curl",
                "image": CURL_IMAGE,
                // The manager's certificate is its own or cert-manager's, which curl cannot check.
                "args": [
                    "--silent", "--show-error", "--fail", "--insecure",
                    "--header", format!("Authorization: Bearer {token}"),
                    url,
                ],
                "securityContext": {
                    "allowPrivilegeEscalation": false,
                    "readOnlyRootFilesystem": true,
                    "capabilities": {"drop": ["ALL"]},
                },
            }],
        },
    }))
    .map_err(|e| e.to_string().into())
}

/// A family the manager serves from its start, whatever its controllers: the start time of its
/// process, read from Linux's `/proc`.
pub const PROCESS_FAMILY: &str = "process_start_time_seconds";

/// The metric families in a scrape, from its `# TYPE` lines.
pub fn metric_families(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|line| line.strip_prefix("# TYPE ")?.split(' ').next())
        .collect()
}

/// A sample of `config/samples/` (a path from the project's root, or an absolute one), read when
/// the test runs.
pub fn read_sample(path: &str) -> Result<Value> {
    let crate_dir = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let full = std::path::Path::new(&crate_dir).join(path);
    let text = std::fs::read_to_string(&full).map_err(|e| format!("read {path}: {e}"))?;
    serde_yaml_ng::from_str(&text).map_err(|e| format!("{path}: {e}").into())
}

/// Applies `sample` and waits until the manager has set its condition `condition` to `True` for
/// the generation applied.
pub async fn reconciles(api: &Api<DynamicObject>, sample: &Value, condition: &str) -> Result<()> {
    let object: DynamicObject =
        serde_json::from_value(sample.clone()).map_err(|e| e.to_string())?;
    let name = object.name_any();
    let applied = api
        .patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER),
            &Patch::Apply(&object),
        )
        .await
        .map_err(failed("apply the sample"))?;
    let generation = applied.metadata.generation;
    let what = format!("{name} to be {condition}");
    eventually(&what, || async {
        let object = api.get(&name).await.map_err(failed("read the sample"))?;
        let status = &object.data["status"];
        let found = status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == condition);
        Ok(match found {
            Some(c) if c["status"] == "True" && observed(c, status) >= generation => {
                Probe::Done(())
            }
            Some(c) => Probe::Waiting(format!(
                "{condition} is {} ({}: {})",
                c["status"], c["reason"], c["message"]
            )),
            None => Probe::Waiting(format!("no {condition} condition yet: {status}")),
        })
    })
    .await
}

/// The generation a condition was computed for: its own, or else its status's.
fn observed(condition: &Value, status: &Value) -> Option<i64> {
    condition["observedGeneration"]
        .as_i64()
        .or_else(|| status["observedGeneration"].as_i64())
}

/// Checks that the conversion webhook of the CRD `name` has a CA bundle.
pub async fn conversion_ca_bundle_injected(client: &Client, name: &str) -> Result<()> {
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    eventually(&format!("the CA bundle of {name}'s conversion"), || async {
        let crd = crds.get(name).await.map_err(failed("read the CRD"))?;
        let config = crd.spec.conversion.and_then(|c| c.webhook?.client_config);
        Ok(match config {
            Some(config) if config.ca_bundle.is_some() => Probe::Done(()),
            Some(_) => Probe::Waiting("no CA bundle yet".to_owned()),
            None => Probe::Waiting("no conversion webhook: did `make install` run?".to_owned()),
        })
    })
    .await
}

/// What the API server answers to creating `object` (on a dry run, so nothing is stored):
/// the object as the webhooks made it, or the message of the one that denied it.
pub async fn dry_run_create(api: &Api<DynamicObject>, object: &Value) -> Result<Value, String> {
    let object: DynamicObject =
        serde_json::from_value(object.clone()).map_err(|e| e.to_string())?;
    let params = PostParams {
        dry_run: true,
        field_manager: Some(FIELD_MANAGER.to_owned()),
    };
    match api.create(&params, &object).await {
        Ok(created) => serde_json::to_value(created).map_err(|e| e.to_string()),
        Err(kube::Error::Api(status)) => Err(status.message),
        Err(err) => Err(format!("create {}: {err}", object.name_any())),
    }
}
