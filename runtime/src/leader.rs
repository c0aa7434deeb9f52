//! Leader election over a `coordination.k8s.io/v1` Lease, with client-go's algorithm.
//!
//! A replica runs its controllers only while it holds the Lease. Every retry period a standby reads
//! the Lease and takes it when it is free: released by its holder (no `holderIdentity`), or not
//! renewed for a whole lease duration. The leader renews it every retry period, and once it has not
//! managed to for a whole renew deadline it must stop, because a standby may take the Lease soon
//! after and two leaders would fight over the same objects. On a clean shutdown the leader releases
//! the Lease, so a standby takes over within one retry period instead of one lease duration.
//!
//! Expiry is judged by when this replica last saw the Lease change on its own clock, never by the
//! `renewTime` written by another machine, so clock skew between nodes cannot cut a lease short.
//! Writes replace the Lease at the `resourceVersion` that was read, so two replicas racing for a
//! free Lease cannot both win.
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use rsop_runtime::leader::{LeaderElector, Timing};
//! use rsop_runtime::metrics::Metrics;
//!
//! # async fn lead(client: kube::Client) {
//! let elector = LeaderElector::new(client, "my-operator.example.com", "operators", Timing::default(), Arc::new(Metrics::new()));
//! elector.acquire().await;
//! // ... lead until `elector.lost()` resolves, or shut down and give the Lease back:
//! elector.release().await;
//! # }
//! ```

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::metrics::Metrics;

/// Namespace the pod runs in, as Kubernetes mounts it with the service account token.
const SERVICE_ACCOUNT_NAMESPACE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// Timing of the election, controller-runtime's `LeaseDuration`, `RenewDeadline` and `RetryPeriod`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// How long a standby waits, after it last saw the Lease renewed, before taking it over.
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives leadership up.
    pub renew_deadline: Duration,
    /// How often the leader renews and a standby tries to take the Lease.
    pub retry_period: Duration,
}

impl Default for Timing {
    /// controller-runtime's defaults: the leader survives an API server outage of up to 10 s, a
    /// crashed leader is replaced within 15 s, a released Lease is taken within 2 s.
    fn default() -> Self {
        Self {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

impl Timing {
    /// Checks the rules client-go enforces: the leader must give up before a standby can take
    /// over, and must get more than one try at renewing within the deadline.
    pub fn validate(self) -> anyhow::Result<Self> {
        if self.retry_period.is_zero() {
            anyhow::bail!("the leader election retry period must be positive");
        }
        // The Lease records its duration in whole seconds.
        if self.lease_duration.subsec_nanos() != 0 || self.lease_duration.is_zero() {
            anyhow::bail!(
                "the leader election lease duration ({:?}) must be a whole number of seconds",
                self.lease_duration
            );
        }
        if self.renew_deadline >= self.lease_duration {
            anyhow::bail!(
                "the leader election renew deadline ({:?}) must be shorter than the lease duration ({:?})",
                self.renew_deadline,
                self.lease_duration
            );
        }
        if self.renew_deadline <= self.retry_period {
            anyhow::bail!(
                "the leader election renew deadline ({:?}) must be longer than the retry period ({:?})",
                self.renew_deadline,
                self.retry_period
            );
        }
        Ok(self)
    }
}

/// The Lease as this replica last saw it, and when it saw it change.
#[derive(Debug)]
struct Observed {
    lease: Lease,
    at: Instant,
}

/// This replica's participation in leader election.
#[derive(Debug)]
pub struct LeaderElector {
    api: Api<Lease>,
    name: String,
    identity: String,
    timing: Timing,
    metrics: Arc<Metrics>,
    observed: Mutex<Option<Observed>>,
}

impl LeaderElector {
    /// Joins the election for the Lease `name` in `namespace`; nothing is sent until
    /// [`LeaderElector::acquire`].
    pub fn new(
        client: Client,
        name: &str,
        namespace: &str,
        timing: Timing,
        metrics: Arc<Metrics>,
    ) -> Self {
        let identity = identity();
        metrics.set_leader(name, false);
        info!(lease = %format!("{namespace}/{name}"), %identity, "joined leader election");
        Self {
            api: Api::namespaced(client, namespace),
            name: name.to_owned(),
            identity,
            timing,
            metrics,
            observed: Mutex::new(None),
        }
    }

    /// Resolves once this replica holds the Lease, trying every retry period. API errors are
    /// logged and retried, as controller-runtime does, rather than crashing the pod on a transient
    /// outage; a lasting one, such as missing RBAC permissions, keeps being logged.
    pub async fn acquire(&self) {
        loop {
            match self.try_acquire_or_renew().await {
                Ok(true) => break,
                Ok(false) => debug!(lease = %self.name, "the Lease is held by another replica"),
                Err(err) => {
                    warn!(error = format!("{err:#}"), lease = %self.name, "failed to acquire the leader Lease, retrying")
                }
            }
            tokio::time::sleep(self.timing.retry_period).await;
        }
        self.metrics.set_leader(&self.name, true);
        info!(lease = %self.name, identity = %self.identity, "acquired leadership");
    }

    /// Resolves once this replica holds the Lease of one of `electors`, with its index, trying
    /// them every retry period, each round in turn from a different first one in every replica, so
    /// that replicas starting together do not all race for the same Lease.
    pub async fn acquire_any(electors: &[Self]) -> usize {
        let Some(first) = electors.first() else {
            return std::future::pending().await;
        };
        let start = usize::try_from(RandomState::new().hash_one(&first.identity)).unwrap_or(0);
        loop {
            for offset in 0..electors.len() {
                let index = (start + offset) % electors.len();
                let elector = &electors[index];
                match elector.try_acquire_or_renew().await {
                    Ok(true) => {
                        elector.metrics.set_leader(&elector.name, true);
                        info!(lease = %elector.name, identity = %elector.identity, "acquired the Lease");
                        return index;
                    }
                    Ok(false) => {}
                    Err(err) => {
                        warn!(error = format!("{err:#}"), lease = %elector.name, "failed to acquire the Lease, retrying")
                    }
                }
            }
            debug!("every Lease is held by another replica");
            tokio::time::sleep(first.timing.retry_period).await;
        }
    }

    /// Keeps renewing the Lease every retry period; resolves, with the reason, once leadership is
    /// lost. Only call it while leading: the Lease is renewed only while this future is polled.
    pub async fn lost(&self) -> anyhow::Error {
        let mut renewed = Instant::now();
        let reason = loop {
            tokio::time::sleep(self.timing.retry_period).await;
            let deadline = renewed + self.timing.renew_deadline;
            // A request that hangs must not carry the leader past its deadline.
            let attempt = tokio::time::timeout_at(deadline, self.try_acquire_or_renew()).await;
            match attempt {
                Ok(Ok(true)) => renewed = Instant::now(),
                Ok(Ok(false)) => break anyhow!("another replica holds the Lease"),
                Ok(Err(err)) if Instant::now() < deadline => {
                    warn!(error = format!("{err:#}"), lease = %self.name, "failed to renew the leader Lease, retrying");
                }
                Ok(Err(err)) => break err.context("failed to renew the Lease in time"),
                Err(_) => break anyhow!("failed to renew the Lease in time"),
            }
        };
        self.metrics.set_leader(&self.name, false);
        reason.context(format!("leader election lost for Lease {}", self.name))
    }

    /// Gives the Lease up, if this replica holds it, so that a standby takes over within its retry
    /// period instead of waiting for the Lease to expire.
    pub async fn release(&self) {
        self.metrics.set_leader(&self.name, false);
        match self.try_release().await {
            Ok(true) => info!(lease = %self.name, "released leadership"),
            Ok(false) => {}
            Err(err) => {
                warn!(error = format!("{err:#}"), lease = %self.name, "failed to release the leader Lease")
            }
        }
    }

    async fn try_release(&self) -> anyhow::Result<bool> {
        let Some(mut lease) = self.api.get_opt(&self.name).await? else {
            return Ok(false);
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return Ok(false);
        }
        *spec = released(spec);
        self.api
            .replace(&self.name, &PostParams::default(), &lease)
            .await?;
        Ok(true)
    }

    /// One round of client-go's `tryAcquireOrRenew`: `Ok(true)` when this replica holds the Lease
    /// afterwards, `Ok(false)` when another one does.
    async fn try_acquire_or_renew(&self) -> anyhow::Result<bool> {
        let lease_seconds = i32::try_from(self.timing.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let current = self.api.get_opt(&self.name).await?;
        // Observed once the answer is in: a slow read must not make the holder's last renewal
        // look older than it is.
        let now = Instant::now();
        let wall = MicroTime(Timestamp::now());
        let Some(current) = current else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.identity.clone()),
                    lease_duration_seconds: Some(lease_seconds),
                    acquire_time: Some(wall.clone()),
                    renew_time: Some(wall),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(created) => {
                    self.observe(created, now);
                    Ok(true)
                }
                // Another replica created it first.
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(err) => Err(err).context("failed to create the Lease"),
            };
        };

        let spec = current.spec.clone().unwrap_or_default();
        let observed_at = self.observe(current.clone(), now);
        let holder = spec.holder_identity.as_deref().filter(|h| !h.is_empty());
        let held_by_me = holder == Some(self.identity.as_str());
        if let Some(holder) = holder
            && !held_by_me
        {
            let duration = spec
                .lease_duration_seconds
                .and_then(|s| u64::try_from(s).ok())
                .map_or(self.timing.lease_duration, Duration::from_secs);
            if now < observed_at + duration {
                debug!(%holder, "the Lease is held and still valid");
                return Ok(false);
            }
        }

        let mut lease = current;
        lease.spec = Some(LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(lease_seconds),
            acquire_time: if held_by_me {
                spec.acquire_time
            } else {
                Some(wall.clone())
            },
            renew_time: Some(wall),
            lease_transitions: if held_by_me || holder.is_none() {
                spec.lease_transitions
            } else {
                Some(spec.lease_transitions.unwrap_or(0).saturating_add(1))
            },
            ..spec
        });
        // The resourceVersion read above makes this a compare-and-swap.
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(written) => {
                self.observe(written, now);
                Ok(true)
            }
            // Someone wrote the Lease since it was read: another replica took a free Lease, or,
            // for the holder, a write raced with its own renewal, which the next round retries.
            Err(kube::Error::Api(status)) if status.code == 409 && !held_by_me => Ok(false),
            Err(err) => Err(err).context("failed to update the Lease"),
        }
    }

    /// Records `lease` as seen at `now` and returns when it was first seen in this state: the time
    /// its holder last renewed it, as far as this replica can tell.
    fn observe(&self, lease: Lease, now: Instant) -> Instant {
        let mut observed = self.observed.lock().unwrap_or_else(PoisonError::into_inner);
        match observed.as_ref() {
            Some(last) if last.lease.spec == lease.spec => last.at,
            _ => {
                *observed = Some(Observed { lease, at: now });
                now
            }
        }
    }
}

/// `spec` released, as client-go releases a Lease: no holder, and a one-second duration for
/// clients that ignore an empty holder and wait for expiry instead.
pub(crate) fn released(spec: &LeaseSpec) -> LeaseSpec {
    let now = MicroTime(Timestamp::now());
    LeaseSpec {
        holder_identity: None,
        lease_duration_seconds: Some(1),
        acquire_time: Some(now.clone()),
        renew_time: Some(now),
        lease_transitions: spec.lease_transitions,
        ..LeaseSpec::default()
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
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use axum::body::Body;
    use axum::http::{Method, Request, Response};
    use serde_json::{Value, json};

    use super::*;

    const LEASE_PATH: &str = "/apis/coordination.k8s.io/v1/namespaces/ops/leases";

    /// The Lease API as the API server serves it: get, create, and replace with a
    /// `resourceVersion` precondition.
    #[derive(Clone, Default)]
    struct FakeLeases {
        lease: Arc<Mutex<Option<Value>>>,
        broken: Arc<AtomicBool>,
        /// Writes that cleared the holder, i.e. releases.
        releases: Arc<AtomicUsize>,
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
            let named = path
                .strip_prefix(LEASE_PATH)
                .and_then(|p| p.strip_prefix('/'));
            match (method.as_str(), named, lease.as_mut()) {
                ("POST", None, None) => {
                    let mut created: Value = serde_json::from_slice(body).unwrap();
                    created["metadata"]["resourceVersion"] = json!("1");
                    *lease = Some(created.clone());
                    (201, created)
                }
                ("POST", None, Some(_)) => (409, status(409, "AlreadyExists")),
                ("GET" | "PUT", Some(_), None) => (404, status(404, "NotFound")),
                ("GET", Some(_), Some(current)) => (200, current.clone()),
                ("PUT", Some(_), Some(current)) => {
                    let mut written: Value = serde_json::from_slice(body).unwrap();
                    let version = &current["metadata"]["resourceVersion"];
                    if written["metadata"]["resourceVersion"] != *version {
                        return (409, status(409, "Conflict"));
                    }
                    let next = version.as_str().unwrap().parse::<u64>().unwrap() + 1;
                    written["metadata"]["resourceVersion"] = json!(next.to_string());
                    if written["spec"]["holderIdentity"].is_null() {
                        self.releases.fetch_add(1, Ordering::SeqCst);
                    }
                    *current = written.clone();
                    (200, written)
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

        /// Another replica renews the Lease, as its holder.
        fn renew_as(&self, holder: &str) {
            let mut lease = self.lease.lock().unwrap();
            let lease = lease.as_mut().unwrap();
            lease["spec"]["holderIdentity"] = json!(holder);
            lease["spec"]["renewTime"] = json!(Timestamp::now().to_string());
            let version = lease["metadata"]["resourceVersion"].as_str().unwrap();
            let next = version.parse::<u64>().unwrap() + 1;
            lease["metadata"]["resourceVersion"] = json!(next.to_string());
        }
    }

    fn elector(fake: &FakeLeases, metrics: &Arc<Metrics>) -> LeaderElector {
        LeaderElector::new(
            fake.client(),
            "demo",
            "ops",
            Timing::default(),
            metrics.clone(),
        )
    }

    fn is_leader_metric(metrics: &Metrics) -> bool {
        let text = metrics.encode().unwrap();
        text.contains("leader_election_master_status{name=\"demo\"} 1")
    }

    #[test]
    fn defaults_are_controller_runtimes_and_valid() {
        let timing = Timing::default().validate().unwrap();
        assert_eq!(timing.lease_duration, Duration::from_secs(15));
        assert_eq!(timing.renew_deadline, Duration::from_secs(10));
        assert_eq!(timing.retry_period, Duration::from_secs(2));
        let bad = Timing {
            renew_deadline: Duration::from_secs(15),
            ..Timing::default()
        };
        assert!(bad.validate().is_err());
        let bad = Timing {
            retry_period: Duration::from_secs(10),
            ..Timing::default()
        };
        assert!(bad.validate().is_err());
        let bad = Timing {
            lease_duration: Duration::from_millis(15_500),
            ..Timing::default()
        };
        assert!(bad.validate().is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn acquires_and_releases_the_lease() {
        let fake = FakeLeases::default();
        let metrics = Arc::new(Metrics::new());
        let elector = elector(&fake, &metrics);
        elector.acquire().await;
        assert_eq!(fake.holder().as_deref(), Some(elector.identity.as_str()));
        assert!(is_leader_metric(&metrics));

        elector.release().await;
        assert_eq!(fake.holder(), None);
        assert_eq!(fake.releases.load(Ordering::SeqCst), 1);
        assert!(!is_leader_metric(&metrics));
    }

    #[tokio::test(start_paused = true)]
    async fn a_standby_takes_a_released_lease_within_the_retry_period() {
        let fake = FakeLeases::default();
        let metrics = Arc::new(Metrics::new());
        let leader = elector(&fake, &metrics);
        leader.acquire().await;
        let standby = elector(&fake, &metrics);
        let waiting = tokio::spawn(async move {
            standby.acquire().await;
            standby
        });
        // The standby keeps trying while the leader holds and renews the Lease.
        tokio::select! {
            err = leader.lost() => panic!("the leader lost the Lease: {err:#}"),
            () = tokio::time::sleep(Duration::from_secs(61)) => {}
        }
        assert!(!waiting.is_finished());

        leader.release().await;
        let released = Instant::now();
        let standby = tokio::time::timeout(Duration::from_secs(2), waiting)
            .await
            .expect("the standby did not take the released Lease within 2 s")
            .unwrap();
        assert!(released.elapsed() <= Duration::from_secs(2));
        assert_eq!(fake.holder().as_deref(), Some(standby.identity.as_str()));
    }

    #[tokio::test(start_paused = true)]
    async fn a_standby_takes_over_a_lease_left_to_expire() {
        let fake = FakeLeases::default();
        let metrics = Arc::new(Metrics::new());
        elector(&fake, &metrics).acquire().await;
        // The leader crashes: nobody renews any more.
        let standby = elector(&fake, &metrics);
        let started = Instant::now();
        standby.acquire().await;
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(15) && waited <= Duration::from_secs(17),
            "{waited:?}"
        );
        assert_eq!(fake.holder().as_deref(), Some(standby.identity.as_str()));
        let lease = fake.lease.lock().unwrap().clone().unwrap();
        assert_eq!(lease["spec"]["leaseTransitions"], json!(1));
    }

    #[tokio::test(start_paused = true)]
    async fn keeps_the_lease_while_renewals_succeed() {
        let fake = FakeLeases::default();
        let elector = elector(&fake, &Arc::new(Metrics::new()));
        elector.acquire().await;
        let lost = tokio::time::timeout(Duration::from_secs(120), elector.lost()).await;
        assert!(lost.is_err(), "lost leadership: {:#}", lost.unwrap());
        assert_eq!(fake.holder().as_deref(), Some(elector.identity.as_str()));
    }

    #[tokio::test(start_paused = true)]
    async fn losing_the_lease_to_another_replica_is_detected() {
        let fake = FakeLeases::default();
        let metrics = Arc::new(Metrics::new());
        let elector = elector(&fake, &metrics);
        elector.acquire().await;
        fake.renew_as("other");

        let err = tokio::time::timeout(Duration::from_secs(5), elector.lost())
            .await
            .expect("loss not detected");
        assert!(format!("{err:#}").contains("another replica"), "{err:#}");
        assert!(!is_leader_metric(&metrics));
    }

    #[tokio::test(start_paused = true)]
    async fn an_outage_shorter_than_the_renew_deadline_is_ridden_out() {
        let fake = FakeLeases::default();
        let elector = elector(&fake, &Arc::new(Metrics::new()));
        elector.acquire().await;
        let outage = async {
            fake.broken.store(true, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(7)).await;
            fake.broken.store(false, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(60)).await;
        };
        tokio::select! {
            err = elector.lost() => panic!("lost leadership: {err:#}"),
            () = outage => {}
        }
        assert_eq!(fake.holder().as_deref(), Some(elector.identity.as_str()));
    }

    #[tokio::test(start_paused = true)]
    async fn failing_renewals_lose_leadership_before_a_standby_could_take_over() {
        let fake = FakeLeases::default();
        let elector = elector(&fake, &Arc::new(Metrics::new()));
        elector.acquire().await;
        fake.broken.store(true, Ordering::SeqCst);

        let started = Instant::now();
        let err = elector.lost().await;
        assert!(format!("{err:#}").contains("failed to renew"), "{err:#}");
        // The last renewal happened when the outage started; a standby could take over 15 s later.
        assert!(
            started.elapsed() <= Duration::from_secs(10),
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
