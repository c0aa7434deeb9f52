//! Leader election over a `coordination.k8s.io/v1` Lease, through kube-lease-manager.
//!
//! The rules are controller-runtime's: a replica runs its controllers only while it holds the
//! Lease, and once it may have lost it (another replica took it, or it could not renew it in time)
//! the process must exit rather than carry on, because two leaders would fight over the same
//! objects. The Lease is released on a clean shutdown so that a standby takes over at once instead
//! of waiting for it to expire.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use kube::Client;
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use tokio::time::Instant;
use tracing::{info, warn};

use crate::metrics::Metrics;

/// Namespace the pod runs in, as Kubernetes mounts it with the service account token.
const SERVICE_ACCOUNT_NAMESPACE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// Timing of the election.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// How long the Lease stays valid without renewal: a crashed leader is replaced after this.
    pub lease_duration_secs: u64,
    /// The leader renews this long before the Lease expires.
    pub grace_secs: u64,
    /// How long renewal may keep failing before leadership counts as lost; shorter than the grace
    /// period, so that the leader stops before any standby can take the Lease over.
    pub renew_deadline: Duration,
    /// Delay between attempts after an API error.
    pub retry_period: Duration,
}

impl Default for Timing {
    /// controller-runtime's defaults: a 15 s Lease renewed every 10 s.
    fn default() -> Self {
        Self {
            lease_duration_secs: 15,
            grace_secs: 5,
            renew_deadline: Duration::from_secs(3),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// This replica's participation in leader election.
#[derive(Debug)]
pub struct LeaderElector {
    lease: LeaseManager,
    name: String,
    identity: String,
    timing: Timing,
    metrics: Arc<Metrics>,
}

impl LeaderElector {
    /// Joins the election for the Lease `name` in `namespace`, creating the Lease if needed.
    ///
    /// API errors are retried until they clear, as controller-runtime does, rather than crashing
    /// the pod on a transient outage; the manager stays unready meanwhile, and a lasting error such
    /// as missing RBAC permissions keeps being logged.
    pub async fn new(
        client: Client,
        name: &str,
        namespace: &str,
        timing: Timing,
        metrics: Arc<Metrics>,
    ) -> Self {
        let identity = identity();
        let lease_ref = format!("{namespace}/{name}");
        let lease = loop {
            let joined = LeaseManagerBuilder::new(client.clone(), name)
                .with_namespace(namespace)
                .with_identity(identity.as_str())
                .with_duration(timing.lease_duration_secs)
                .with_grace(timing.grace_secs)
                .build()
                .await;
            match joined {
                Ok(lease) => break lease,
                Err(err) => {
                    warn!(error = %err, lease = %lease_ref, "failed to join leader election, retrying");
                    tokio::time::sleep(timing.retry_period).await;
                }
            }
        };
        metrics.set_leader(name, false);
        info!(lease = %lease_ref, %identity, "joined leader election");
        Self {
            lease,
            name: name.to_owned(),
            identity,
            timing,
            metrics,
        }
    }

    /// Resolves once this replica holds the Lease; API errors are retried indefinitely.
    pub async fn acquire(&self) {
        loop {
            match self.lease.changed().await {
                Ok(true) => break,
                Ok(false) => {}
                Err(err) => {
                    warn!(error = %err, "leader election failed, retrying");
                    tokio::time::sleep(self.timing.retry_period).await;
                }
            }
        }
        self.metrics.set_leader(&self.name, true);
        info!(lease = %self.name, identity = %self.identity, "acquired leadership");
    }

    /// Keeps renewing the Lease; resolves, with the reason, once leadership is lost.
    ///
    /// Only call this while leading, and keep calling it until the Lease is released: the Lease is
    /// renewed only while this future is polled.
    pub async fn lost(&self) -> anyhow::Error {
        let retry = self.timing.retry_period.min(self.timing.renew_deadline / 4);
        let mut failing_since: Option<Instant> = None;
        let reason = loop {
            let attempt = Instant::now();
            let result = self.lease.changed().await;
            let now = Instant::now();
            match result {
                Ok(true) => {}
                Ok(false) => break anyhow!("another replica holds the Lease"),
                Err(err) => {
                    // `changed()` returns early only on failure: a call that lasted longer than the
                    // deadline renewed the Lease in between, so a new streak of failures starts.
                    if now - attempt >= self.timing.renew_deadline {
                        failing_since = None;
                    }
                    let since = *failing_since.get_or_insert(now);
                    if now - since >= self.timing.renew_deadline {
                        break anyhow!(err).context("failed to renew the Lease in time");
                    }
                    warn!(error = %err, "failed to renew the leader Lease, retrying");
                    tokio::time::sleep(retry).await;
                }
            }
        };
        self.metrics.set_leader(&self.name, false);
        reason.context(format!("leader election lost for Lease {}", self.name))
    }

    /// Gives the Lease up so that a standby can take over without waiting for it to expire.
    pub async fn release(&self) {
        match self.lease.release().await {
            Ok(()) => info!(lease = %self.name, "released leadership"),
            Err(err) => {
                warn!(error = %err, lease = %self.name, "failed to release the leader Lease")
            }
        }
        self.metrics.set_leader(&self.name, false);
    }
}

/// The namespace of the Lease when `--leader-election-namespace` is not given: the pod's own, then
/// the client's default (the kubeconfig context's namespace when running outside a cluster).
pub fn default_namespace(client: &Client) -> String {
    std::fs::read_to_string(SERVICE_ACCOUNT_NAMESPACE)
        .ok()
        .map(|ns| ns.trim().to_owned())
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| client.default_namespace().to_owned())
}

/// A holder identity that is unique per process and still tells an operator which pod leads,
/// in controller-runtime's `<hostname>_<random>` form.
fn identity() -> String {
    let host = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "manager".to_owned());
    // RandomState is seeded from the OS's randomness once per process, which is all the
    // uniqueness needed here, without a dependency on a random number crate.
    let suffix = RandomState::new().hash_one(std::process::id());
    format!("{host}_{suffix:016x}")
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    use axum::body::Body;
    use axum::http::{Method, Request, Response};
    use serde_json::{Value, json};

    use super::*;

    const LEASE_PATH: &str = "/apis/coordination.k8s.io/v1/namespaces/ops/leases";

    /// Just enough of the Lease API for kube-lease-manager: get, create, and patches merged into
    /// `spec`, with `null` deleting a field.
    #[derive(Clone, Default)]
    struct FakeLeases {
        lease: Arc<Mutex<Option<Value>>>,
        broken: Arc<AtomicBool>,
    }

    fn status(code: u16, reason: &str) -> Value {
        json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
               "message": reason, "reason": reason, "code": code})
    }

    impl FakeLeases {
        fn client(&self) -> Client {
            let fake = self.clone();
            let service = tower::service_fn(move |req: Request<kube::client::Body>| {
                let fake = fake.clone();
                async move {
                    let (method, path) = (req.method().clone(), req.uri().path().to_owned());
                    let body = req.into_body().collect_bytes().await?;
                    let (code, answer) = fake.answer(&method, &path, &body);
                    let response = Response::builder()
                        .status(code)
                        .body(Body::from(answer.to_string()))?;
                    Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
                }
            });
            Client::new(service, "default")
        }

        fn answer(&self, method: &Method, path: &str, body: &[u8]) -> (u16, Value) {
            if self.broken.load(Ordering::SeqCst) {
                return (500, status(500, "InternalError"));
            }
            let mut lease = self.lease.lock().unwrap();
            match (method.as_str(), lease.as_mut()) {
                ("POST", None) if path == LEASE_PATH => {
                    let created: Value = serde_json::from_slice(body).unwrap();
                    *lease = Some(created.clone());
                    (201, created)
                }
                ("POST", Some(_)) => (409, status(409, "AlreadyExists")),
                ("GET" | "PATCH", None) => (404, status(404, "NotFound")),
                ("GET", Some(current)) => (200, current.clone()),
                ("PATCH", Some(current)) => {
                    let patch: Value = serde_json::from_slice(body).unwrap();
                    if !current["spec"].is_object() {
                        current["spec"] = json!({});
                    }
                    let spec = current["spec"].as_object_mut().unwrap();
                    for (field, value) in patch["spec"].as_object().unwrap() {
                        if value.is_null() {
                            spec.remove(field);
                        } else {
                            spec.insert(field.clone(), value.clone());
                        }
                    }
                    (200, current.clone())
                }
                _ => (405, status(405, "MethodNotAllowed")),
            }
        }

        fn holder(&self) -> Option<String> {
            let lease = self.lease.lock().unwrap();
            lease.as_ref()?["spec"]["holderIdentity"]
                .as_str()
                .map(str::to_owned)
        }
    }

    /// Seconds are the Lease's resolution, so this is as fast as a real-time test can go.
    fn fast() -> Timing {
        Timing {
            lease_duration_secs: 2,
            grace_secs: 1,
            renew_deadline: Duration::from_millis(500),
            retry_period: Duration::from_millis(100),
        }
    }

    async fn leader(fake: &FakeLeases, metrics: &Arc<Metrics>) -> LeaderElector {
        let elector =
            LeaderElector::new(fake.client(), "demo", "ops", fast(), metrics.clone()).await;
        tokio::time::timeout(Duration::from_secs(5), elector.acquire())
            .await
            .expect("leadership not acquired");
        elector
    }

    fn is_leader_metric(metrics: &Metrics) -> bool {
        let text = metrics.encode().unwrap();
        text.contains("leader_election_master_status{name=\"demo\"} 1")
    }

    #[tokio::test]
    async fn acquires_and_releases_the_lease() {
        let fake = FakeLeases::default();
        let metrics = Arc::new(Metrics::new());
        let elector = leader(&fake, &metrics).await;
        assert_eq!(fake.holder().as_deref(), Some(elector.identity.as_str()));
        assert!(is_leader_metric(&metrics));

        elector.release().await;
        assert_eq!(fake.holder(), None);
        assert!(!is_leader_metric(&metrics));
    }

    #[tokio::test]
    async fn keeps_the_lease_while_renewals_succeed() {
        let fake = FakeLeases::default();
        let elector = leader(&fake, &Arc::new(Metrics::new())).await;
        // Several renewal periods go by without leadership being lost.
        let lost = tokio::time::timeout(Duration::from_millis(2500), elector.lost()).await;
        assert!(lost.is_err(), "lost leadership: {:#}", lost.unwrap());
        assert_eq!(fake.holder().as_deref(), Some(elector.identity.as_str()));
    }

    #[tokio::test]
    async fn losing_the_lease_to_another_replica_is_detected() {
        let fake = FakeLeases::default();
        let metrics = Arc::new(Metrics::new());
        let elector = leader(&fake, &metrics).await;
        fake.lease.lock().unwrap().as_mut().unwrap()["spec"]["holderIdentity"] = json!("other");

        let err = tokio::time::timeout(Duration::from_secs(5), elector.lost())
            .await
            .expect("loss not detected");
        assert!(format!("{err:#}").contains("another replica"), "{err:#}");
        assert!(!is_leader_metric(&metrics));
    }

    #[tokio::test]
    async fn failing_renewals_lose_leadership_before_the_lease_expires() {
        let fake = FakeLeases::default();
        let elector = leader(&fake, &Arc::new(Metrics::new())).await;
        fake.broken.store(true, Ordering::SeqCst);

        let started = Instant::now();
        let err = tokio::time::timeout(Duration::from_secs(5), elector.lost())
            .await
            .expect("loss not detected");
        assert!(format!("{err:#}").contains("failed to renew"), "{err:#}");
        // Renewal starts failing one second in (duration minus grace); the deadline then allows
        // half a second, well before the two-second Lease can expire.
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn identities_are_unique_and_name_the_host() {
        let (a, b) = (identity(), identity());
        assert_ne!(a, b);
        let (host, suffix) = a.rsplit_once('_').unwrap();
        assert!(!host.is_empty());
        assert_eq!(suffix.len(), 16);
        assert!(suffix.chars().all(|c| c.is_ascii_hexdigit()));
    }
}
