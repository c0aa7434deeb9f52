//! What the tests of controllers share: a namespace per test, the controllers running on the
//! control plane as the manager runs them, and waits on what they do.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::core::ObjectMeta;
use kube::runtime::wait::{Condition, await_condition};
use kube::{Client, Resource, ResourceExt as _};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{ControlPlane, Result, crate_dir};
use crate::context::{Context, Shutdown};
use crate::manager::{Controllers, supervise};
use crate::metrics::Metrics;

/// How long a test waits for the controllers to bring an object where it should be.
pub const SETTLE: Duration = Duration::from_secs(30);

/// A client of the control plane, and a namespace of the calling test's own, named after the
/// `controller` and the `test`.
pub async fn test_namespace(
    plane: &ControlPlane,
    controller: &str,
    test: &str,
) -> Result<(Client, String)> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let client = plane.client().await?;
    // A namespace's name is a DNS label of at most 63 characters, which the names of the test's
    // objects, made from it, must fit in too.
    let prefix: String = controller.chars().take(20).collect();
    let name = format!("{prefix}-{test}-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await?;
    Ok((client, name))
}

/// Controllers run as the manager runs them: by [`Controllers`] and [`supervise`], with metrics.
#[derive(Debug)]
pub struct TestManager {
    /// The metrics the controllers record, as the manager's `/metrics` would serve them.
    pub metrics: Arc<Metrics>,
    shutdown: Shutdown,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl TestManager {
    /// Runs the controllers `start` starts, watching `namespace` (`None` for all).
    pub fn start(client: Client, namespace: Option<&str>, start: fn(&mut Controllers)) -> Self {
        let shutdown = Shutdown::new();
        let metrics = Arc::new(Metrics::new());
        let ctx = Context::new(
            client,
            metrics.clone(),
            namespace.map(str::to_owned),
            4,
            shutdown.clone(),
        );
        let signal = shutdown.clone();
        let task = tokio::spawn(async move {
            let mut controllers = Controllers::new(Arc::new(ctx));
            start(&mut controllers);
            supervise(&mut controllers, &signal, None, Duration::from_secs(10)).await
        });
        TestManager {
            metrics,
            shutdown,
            task,
        }
    }

    /// Signals the shutdown and waits for the controllers to drain: how the manager ended, and how
    /// long the drain took.
    pub async fn stop(self) -> (anyhow::Result<()>, Duration) {
        let started = Instant::now();
        self.shutdown.trigger();
        let result = match self.task.await {
            Ok(result) => result,
            Err(err) => Err(anyhow::anyhow!("the manager's task failed: {err}")),
        };
        (result, started.elapsed())
    }

    /// The reconciliations of `controller` that succeeded so far.
    pub fn reconciled(&self, controller: &str) -> u64 {
        let label = format!("controller=\"{controller}\"");
        let labels = [label.as_str(), "result=\"success\""];
        counted(&self.metrics, "controller_runtime_reconcile_total", &labels)
    }
}

/// The sum of the counters of the metric `family` in `metrics` whose series have every one of
/// `labels` (`name="value"`).
pub fn counted(metrics: &Metrics, family: &str, labels: &[&str]) -> u64 {
    let text = metrics.encode().unwrap_or_default();
    text.lines()
        .filter_map(|line| line.strip_prefix(family)?.strip_prefix('{'))
        .filter(|series| labels.iter().all(|label| series.contains(label)))
        .filter_map(|series| series.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// Waits until `condition` holds for the object `name` of `api`, failing after [`SETTLE`] with
/// `what` was awaited and the object as it last was.
pub async fn wait_for<K>(
    api: &Api<K>,
    name: &str,
    what: &str,
    condition: impl Condition<K>,
) -> Result<K>
where
    K: Clone + Debug + Send + DeserializeOwned + Resource + 'static,
{
    match tokio::time::timeout(SETTLE, await_condition(api.clone(), name, condition)).await {
        Ok(Ok(Some(object))) => Ok(object),
        Ok(Ok(None)) => Err(format!("{name} is gone, waiting for {what}").into()),
        Ok(Err(err)) => Err(format!("waiting for {what} of {name}: {err}").into()),
        Err(_) => {
            let last = api.get_opt(name).await?;
            Err(
                format!("{name} did not reach {what} within {SETTLE:?}; it is now {last:#?}")
                    .into(),
            )
        }
    }
}

/// Waits until the object `name` of `api` is gone.
pub async fn wait_gone<K>(api: &Api<K>, name: &str) -> Result<()>
where
    K: Clone + Debug + Send + DeserializeOwned + Resource + 'static,
{
    let gone = |object: Option<&K>| object.is_none();
    match tokio::time::timeout(SETTLE, await_condition(api.clone(), name, gone)).await {
        Ok(result) => result.map(drop).map_err(Into::into),
        Err(_) => {
            let last = api.get_opt(name).await?;
            Err(format!("{name} was not deleted within {SETTLE:?}; it is now {last:#?}").into())
        }
    }
}

/// The resourceVersion of each object of `api`, by name: what changes with every write.
pub async fn versions<K>(api: &Api<K>) -> Result<BTreeMap<String, Option<String>>>
where
    K: Clone + Debug + DeserializeOwned + Resource,
{
    let list = api.list(&ListParams::default()).await?;
    Ok(list
        .items
        .into_iter()
        .map(|object| (object.name_any(), object.meta().resource_version.clone()))
        .collect())
}

/// Deletes the objects `names` of `api` and waits until they are gone, their finalizers removed by
/// a running controller.
pub async fn delete_all<K>(api: &Api<K>, names: impl IntoIterator<Item = String>) -> Result<()>
where
    K: Clone + Debug + Send + DeserializeOwned + Resource + 'static,
{
    let names: Vec<String> = names.into_iter().collect();
    for name in &names {
        api.delete(name, &DeleteParams::default()).await?;
    }
    for name in &names {
        wait_gone(api, name).await?;
    }
    Ok(())
}

/// Whether the controller's status describes `object`'s latest spec: its `observedGeneration`
/// is the object's generation.
pub fn observed<K: Resource + Serialize>(object: &K) -> bool {
    let observed = serde_json::to_value(object)
        .ok()
        .and_then(|value| value.pointer("/status/observedGeneration")?.as_i64());
    observed.is_some() && observed == object.meta().generation
}

/// Whether `object`'s status has the condition `type_` with `status` (`"True"`, `"False"`),
/// whatever the Rust type of its status.
pub fn has_condition(object: &impl Serialize, type_: &str, status: &str) -> bool {
    let Ok(value) = serde_json::to_value(object) else {
        return false;
    };
    value
        .pointer("/status/conditions")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c["type"] == type_ && c["status"] == status)
        })
}

/// The kind's sample in `config/samples`, named `name`. The tests make their objects of it, so
/// that they keep working as the kind changes, as long as its sample stays valid.
pub fn sample<K>(name: &str) -> Result<K>
where
    K: Resource<DynamicType = ()> + DeserializeOwned,
{
    let dir = crate_dir().join("config/samples");
    let mut files = std::fs::read_dir(&dir)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<std::io::Result<Vec<_>>>()?;
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path)?;
        let Ok(value) = serde_yaml_ng::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        if value["kind"] == *K::kind(&()) && value["apiVersion"] == *K::api_version(&()) {
            let mut object: K = serde_json::from_value(value)
                .map_err(|err| format!("{}: {err}", path.display()))?;
            object.meta_mut().name = Some(name.to_owned());
            return Ok(object);
        }
    }
    Err(format!("no {} sample in {}", K::kind(&()), dir.display()).into())
}
