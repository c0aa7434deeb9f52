//! Sharding: the objects of the controllers' kinds spread over several replicas (`--shards N`).
//!
//! With leader election alone, one replica reconciles every object and the others wait. With
//! `--shards N` (N > 1) every replica works, each on its share:
//!
//! - There are N shards, each a Lease `<leader-election-id>-shard-<k>` in the leader election
//!   namespace. A replica takes a free one as it would take the leader Lease, renews it as the
//!   leader does, works only while it holds it, and releases it once it has drained on SIGTERM. A
//!   replica that finds no shard free waits as a standby and takes over the first that is.
//! - The leader also runs the sharder ([`Sharder`]): it watches the shard Leases and the objects of
//!   every sharded kind, and labels each object `shard.<domain>/<name>=<k>` ([`ShardLabels`]) with
//!   the live shard that rendezvous hashing of its namespace and name picks. When a shard comes or
//!   goes, only the objects whose pick changes move.
//! - Every replica watches only the objects labelled with its shard ([`Context::sharded`]), and
//!   what it creates for an object carries the object's label ([`ShardLabels::owner_shard`]), so
//!   its caches hold its share alone.
//! - An object leaves a live shard by a handshake, so that two replicas never reconcile it at once:
//!   the sharder labels it `drain.<domain>/<name>`; the replica that has it sees the label in a
//!   reconciliation, which kube-runtime never runs twice at once for one object, and hands it over
//!   by removing both labels ([`ShardLabels::hand_over`], which
//!   [`Reconciler`](crate::controller::Reconciler) does before calling a controller's reconcile
//!   function); only then does the sharder give it its new shard. The objects of a shard whose
//!   Lease was released, or expired on the sharder's clock, move at once: its replica stopped
//!   working before that (see the `leader` module's renew deadline). The sharder frees such a
//!   Lease, so that a replica started later takes it at once.
//!
//! With one shard (`--shards 1`, the default) none of this runs, and no label is read or written.
//!
//! A manager shards the kinds registered with [`Manager::shard`](crate::Manager::shard).
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use rsop_runtime::shard::ShardLabels;
//!
//! let labels = ShardLabels::new("memcached-operator", "example.com");
//! assert_eq!(labels.shard, "shard.example.com/memcached-operator");
//! assert_eq!(labels.selector("2"), "shard.example.com/memcached-operator=2");
//! assert!(!labels.is_drained(&ConfigMap::default()));
//! ```

use std::collections::{BTreeSet, HashMap};
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{FutureExt, Stream, StreamExt, stream};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::api::{Patch, PatchParams, PostParams};
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher;
use kube::{Api, Client, Resource, ResourceExt};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::Instant;
use tracing::{debug, error, info, warn};

use crate::leader::{self, LeaderElector, Timing};
use crate::metrics::Metrics;

/// How many objects the sharder labels at a time.
const CONCURRENT_LABELS: usize = 16;

/// The shard Leases, and the leader Lease whose holder runs the sharder.
#[derive(Clone, Debug)]
pub struct Leases {
    /// How many shards there are (`--shards`).
    pub shards: u16,
    /// The namespace of every Lease.
    pub namespace: String,
    /// The name of the leader Lease, and the prefix of the shards' (`--leader-election-id`).
    pub leader: String,
    /// The timing of every Lease, the leader's flags'.
    pub timing: Timing,
}

impl Leases {
    /// The name of the Lease of shard `shard`.
    pub fn shard(&self, shard: u16) -> String {
        format!("{}-shard-{shard}", self.leader)
    }

    /// An elector for each shard Lease, in shard order.
    pub fn shard_electors(&self, client: &Client, metrics: &Arc<Metrics>) -> Vec<LeaderElector> {
        (0..self.shards)
            .map(|shard| {
                LeaderElector::new(
                    client.clone(),
                    &self.shard(shard),
                    &self.namespace,
                    self.timing,
                    metrics.clone(),
                )
            })
            .collect()
    }
}

/// What a replica of a sharded manager knows of the sharding.
#[derive(Clone, Debug)]
pub struct Sharding {
    /// The shard this replica holds: the value of its objects' shard label.
    pub shard: String,
    /// Every shard's Lease.
    pub leases: Leases,
    /// The labels that assign objects to shards.
    pub labels: ShardLabels,
}

/// The labels of a sharded operator's objects. The operator's name is part of them, so that
/// operators sharding the same kind do not take each other's labels for their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardLabels {
    /// The label that assigns an object to a shard: `shard.<domain>/<name>`.
    pub shard: String,
    /// The label by which the sharder asks a shard to hand an object over: `drain.<domain>/<name>`.
    pub drain: String,
}

impl ShardLabels {
    /// The labels of the operator `name` whose API groups are under `domain`.
    pub fn new(name: &str, domain: &str) -> Self {
        Self {
            shard: format!("shard.{domain}/{name}"),
            drain: format!("drain.{domain}/{name}"),
        }
    }

    /// The label selector of the objects of `shard`.
    pub fn selector(&self, shard: &str) -> String {
        format!("{}={shard}", self.shard)
    }

    /// Whether the sharder asked for `obj` to be handed over to another shard.
    pub fn is_drained<K: Resource>(&self, obj: &K) -> bool {
        obj.labels().contains_key(&self.drain)
    }

    /// The patch that hands `obj` over: both labels removed, at the `resourceVersion` this replica
    /// last saw, so that a reconciliation that still holds an older copy cannot take back an object
    /// that has already moved on (the API server answers 409 Conflict). Send it with
    /// `Api::patch_metadata`; a conflict means the object changed since, and the change brings a
    /// new reconciliation.
    pub fn hand_over<K: Resource>(&self, obj: &K) -> Patch<Value> {
        Patch::Merge(json!({
            "metadata": {
                "resourceVersion": obj.resource_version(),
                "labels": { (self.shard.as_str()): null, (self.drain.as_str()): null },
            },
        }))
    }

    /// The shard label of `owner`, to put on the objects created for it, so that they are in the
    /// same replica's caches; `None` when `owner` has none.
    pub fn owner_shard<K: Resource>(&self, owner: &K) -> Option<(String, String)> {
        owner
            .labels()
            .get(&self.shard)
            .map(|shard| (self.shard.clone(), shard.clone()))
    }
}

/// The scope of a kind the sharder assigns: how it lists the objects and patches one.
///
/// Implemented for k8s-openapi's two scopes; [`Manager::shard`](crate::Manager::shard) picks the
/// one of the kind.
pub trait ShardScope {
    /// Adds the kind `K`, of this scope, to `sharder`: its objects in `namespace`, or in the
    /// whole cluster.
    fn add<K>(sharder: Sharder, client: Client, namespace: Option<&str>) -> Sharder
    where
        K: Resource<DynamicType = (), Scope = Self>
            + Clone
            + Debug
            + Send
            + Sync
            + serde::de::DeserializeOwned
            + 'static;
}

impl ShardScope for NamespaceResourceScope {
    fn add<K>(sharder: Sharder, client: Client, namespace: Option<&str>) -> Sharder
    where
        K: Resource<DynamicType = (), Scope = Self>
            + Clone
            + Debug
            + Send
            + Sync
            + serde::de::DeserializeOwned
            + 'static,
    {
        let api = match namespace {
            Some(namespace) => Api::<PartialObjectMeta<K>>::namespaced(client, namespace),
            None => Api::all(client),
        };
        sharder.namespaced_kind(api)
    }
}

impl ShardScope for ClusterResourceScope {
    fn add<K>(sharder: Sharder, client: Client, _: Option<&str>) -> Sharder
    where
        K: Resource<DynamicType = (), Scope = Self>
            + Clone
            + Debug
            + Send
            + Sync
            + serde::de::DeserializeOwned
            + 'static,
    {
        sharder.cluster_kind(Api::<PartialObjectMeta<K>>::all(client))
    }
}

/// The live shard that rendezvous hashing picks for the object `key` (`namespace/name`): the one
/// whose hash with the key is highest. Adding or removing a shard only moves the objects that it
/// wins or held.
pub fn pick<'a>(live: &'a BTreeSet<String>, key: &str) -> Option<&'a str> {
    live.iter()
        .max_by_key(|shard| score(shard, key))
        .map(String::as_str)
}

/// A hash of `shard` and `key` that is the same in every build and on every replica, unlike std's
/// hashers: FNV-1a, then a finalizer that spreads keys differing in one character over all bits.
fn score(shard: &str, key: &str) -> u64 {
    let bytes = shard.bytes().chain([b'/']).chain(key.bytes());
    let mut hash = bytes.fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    hash ^ (hash >> 33)
}

/// The labels the sharder writes on an object as `live` shards stand, `None` when they are right:
/// a shard for an object that has none or whose shard is gone, a drain request for one that is to
/// move from a live shard. An object being drained is left to its shard until it is handed over.
fn relabel(
    object: &kube::api::ObjectMeta,
    live: &BTreeSet<String>,
    names: &ShardLabels,
) -> Option<Value> {
    let key = format!(
        "{}/{}",
        object.namespace.as_deref().unwrap_or_default(),
        object.name.as_deref().unwrap_or_default()
    );
    let wanted = pick(live, &key)?;
    let labels = object.labels.as_ref();
    let current = labels.and_then(|labels| labels.get(&names.shard));
    let draining = labels.is_some_and(|labels| labels.contains_key(&names.drain));
    let labels = match current {
        Some(shard) if live.contains(shard) => {
            if shard == wanted || draining {
                return None;
            }
            json!({ (names.drain.as_str()): "true" })
        }
        // New, handed over, or of a shard that is gone.
        _ => json!({ (names.shard.as_str()): wanted, (names.drain.as_str()): null }),
    };
    Some(json!({
        "metadata": { "resourceVersion": object.resource_version, "labels": labels },
    }))
}

/// Sends one label patch of the sharder: `(namespace, name, patch)`.
type Labeler = Arc<
    dyn Fn(Option<String>, String, Value) -> BoxFuture<'static, kube::Result<()>> + Send + Sync,
>;

/// The sharder: assigns the objects of the sharded kinds to the live shards, while this replica
/// leads. Add a kind with [`Sharder::namespaced_kind`] or [`Sharder::cluster_kind`], then
/// [`Sharder::run`].
pub struct Sharder {
    client: Client,
    metrics: Arc<Metrics>,
    sharding: Option<Sharding>,
    shutdown: BoxFuture<'static, ()>,
    live: watch::Sender<BTreeSet<String>>,
    kinds: Vec<BoxFuture<'static, ()>>,
}

impl std::fmt::Debug for Sharder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sharder")
            .field("sharding", &self.sharding)
            .field("kinds", &self.kinds.len())
            .finish_non_exhaustive()
    }
}

impl Sharder {
    /// A sharder that labels through `client`, counts in `metrics`, and stops on `shutdown`; it
    /// does nothing without `sharding` (a manager of one shard).
    pub fn new(
        client: Client,
        metrics: Arc<Metrics>,
        sharding: Option<Sharding>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        Self {
            client,
            metrics,
            sharding,
            shutdown: shutdown.boxed(),
            live: watch::Sender::new(BTreeSet::new()),
            kinds: Vec::new(),
        }
    }

    /// Shards the objects of a namespaced kind that `api` lists: only their metadata is read.
    #[must_use]
    pub fn namespaced_kind<K>(mut self, api: Api<PartialObjectMeta<K>>) -> Self
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + Debug
            + Send
            + Sync
            + 'static,
    {
        // Not sharded: every replica's controllers see every object.
        let Some(names) = self.sharding.as_ref().map(|s| s.labels.clone()) else {
            return self;
        };
        let all = api.clone();
        let labeler: Labeler = Arc::new(move |namespace, name, patch| {
            let objects: Api<PartialObjectMeta<K>> = all
                .clone()
                .constrain(namespace.as_deref().unwrap_or_default());
            async move {
                objects
                    .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                    .await
                    .map(drop)
            }
            .boxed()
        });
        // Only names and labels are read: the watch is of metadata alone.
        let events = watcher::watcher(api, watcher::Config::default());
        self.kinds
            .push(assign(events, self.live.subscribe(), labeler, names).boxed());
        self
    }

    /// Shards the objects of a cluster-scoped kind that `api` lists: only their metadata is read.
    #[must_use]
    pub fn cluster_kind<K>(mut self, api: Api<PartialObjectMeta<K>>) -> Self
    where
        K: Resource<DynamicType = (), Scope = ClusterResourceScope>
            + Clone
            + Debug
            + Send
            + Sync
            + 'static,
    {
        let Some(names) = self.sharding.as_ref().map(|s| s.labels.clone()) else {
            return self;
        };
        let all = api.clone();
        let labeler: Labeler = Arc::new(move |_, name, patch| {
            let objects: Api<PartialObjectMeta<K>> = all.clone();
            async move {
                objects
                    .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                    .await
                    .map(drop)
            }
            .boxed()
        });
        // Only names and labels are read: the watch is of metadata alone.
        let events = watcher::watcher(api, watcher::Config::default());
        self.kinds
            .push(assign(events, self.live.subscribe(), labeler, names).boxed());
        self
    }

    /// Waits to lead, then assigns objects until the manager shuts down. Returns early, which the
    /// manager takes for a failure, only when leadership is lost.
    pub async fn run(self) {
        let Self {
            client,
            metrics,
            sharding,
            shutdown,
            live,
            kinds,
        } = self;
        let Some(sharding) = sharding else {
            // Not sharded: every replica's controllers see every object.
            return shutdown.await;
        };
        let leases = sharding.leases;
        let elector = LeaderElector::new(
            client.clone(),
            &leases.leader,
            &leases.namespace,
            leases.timing,
            metrics,
        );
        let mut shutdown = shutdown.shared();
        tokio::select! {
            () = elector.acquire() => {}
            () = shutdown.clone() => {
                // The signal may have cut short an attempt that took the Lease.
                elector.release().await;
                return;
            }
        }
        info!(shards = leases.shards, "assigning objects to the shards");
        let lease_api = Api::namespaced(client, &leases.namespace);
        let assigning = futures::future::join(
            watch_shards(lease_api, &leases, &live),
            futures::future::join_all(kinds),
        );
        tokio::select! {
            () = &mut shutdown => {}
            err = elector.lost() => {
                error!(error = format!("{err:#}"), "the sharder stops");
                return;
            }
            _ = assigning => {}
        }
        elector.release().await;
    }
}

/// Keeps `live` up to date with the shards whose Lease is held: the Lease has a holder, and this
/// replica saw it change less than its duration ago. Like the leader election, it judges by its own
/// clock, never by the times written by other machines.
async fn watch_shards(api: Api<Lease>, leases: &Leases, live: &watch::Sender<BTreeSet<String>>) {
    let names: HashMap<String, String> = (0..leases.shards)
        .map(|shard| (leases.shard(shard), shard.to_string()))
        .collect();
    let (store, writer) = reflector::store::<Lease>();
    // Every event counts, the end of the first list too: the store is complete from then on.
    let events = watcher::watcher(api.clone(), watcher::Config::default())
        .default_backoff()
        .reflect(writer);
    let mut events = std::pin::pin!(events);
    // Each shard Lease as last seen changed, and when.
    let mut seen: HashMap<String, (Option<LeaseSpec>, Instant)> = HashMap::new();
    let mut next_expiry = None;
    loop {
        let expired = async {
            match next_expiry {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            event = events.next() => match event {
                Some(Ok(_)) => {}
                Some(Err(err)) => warn!(error = %err, "watching the shard Leases failed, retrying"),
                None => return,
            },
            () = expired => {}
        }
        let now = Instant::now();
        let mut alive = BTreeSet::new();
        next_expiry = None;
        for (name, shard) in &names {
            let Some(lease) = store.get(&ObjectRef::new(name).within(&leases.namespace)) else {
                continue;
            };
            let spec = lease.spec.clone();
            let at = match seen.get(name) {
                Some((last, at)) if *last == spec => *at,
                _ => {
                    seen.insert(name.clone(), (spec.clone(), now));
                    now
                }
            };
            let spec = spec.unwrap_or_default();
            if spec.holder_identity.as_deref().is_none_or(str::is_empty) {
                continue;
            }
            let duration = spec
                .lease_duration_seconds
                .and_then(|s| u64::try_from(s).ok())
                .map_or(leases.timing.lease_duration, Duration::from_secs);
            let expiry = at + duration;
            if now < expiry {
                alive.insert(shard.clone());
                next_expiry = Some(next_expiry.map_or(expiry, |next: Instant| next.min(expiry)));
            } else {
                free(&api, &lease).await;
            }
        }
        live.send_if_modified(|live| {
            if *live == alive {
                return false;
            }
            info!(shards = ?alive, "the live shards changed");
            *live = alive;
            true
        });
    }
}

/// Frees the shard Lease `lease`, whose holder this replica, the leader, has seen renew it last a
/// lease duration ago or more. The holder stopped working by then (see the `leader` module's renew
/// deadline), but a replica that starts now would have to watch the Lease that long again before
/// taking it, since it too judges by its own clock: freed, the Lease is taken at once, and its
/// objects move to the new holder as soon as its first renewal shows it live. The write is a
/// compare-and-swap on the Lease as seen, so a renewal this replica has not seen yet wins.
async fn free(api: &Api<Lease>, lease: &Lease) {
    let spec = lease.spec.clone().unwrap_or_default();
    let holder = spec.holder_identity.as_deref();
    let mut freed = lease.clone();
    // As its holder would have released it.
    freed.spec = Some(leader::released(&spec));
    let name = lease.name_any();
    match api.replace(&name, &PostParams::default(), &freed).await {
        Ok(_) => info!(lease = %name, ?holder, "freed the shard Lease its holder stopped renewing"),
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(err) => warn!(error = %err, lease = %name, "failed to free an expired shard Lease"),
    }
}

/// Assigns the objects of the watch `events` to the `live` shards through `labeler`: each object when it
/// changes, and all of them when the live shards do, or every so often, which retries what failed.
async fn assign<K>(
    events: impl Stream<Item = watcher::Result<watcher::Event<PartialObjectMeta<K>>>> + Send,
    mut live: watch::Receiver<BTreeSet<String>>,
    labeler: Labeler,
    names: ShardLabels,
) where
    K: Resource + Clone + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    const RESYNC: Duration = Duration::from_secs(30);
    let (store, writer) = reflector::store::<PartialObjectMeta<K>>();
    let events = events.default_backoff().reflect(writer);
    let mut events = std::pin::pin!(events);
    let mut resync = tokio::time::interval(RESYNC);
    loop {
        let changed: Vec<Arc<PartialObjectMeta<K>>> = tokio::select! {
            event = events.next() => match event {
                Some(Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object))) => {
                    vec![Arc::new(object)]
                }
                // The store holds the first list from now on, with what came before the shards
                // were known.
                Some(Ok(watcher::Event::InitDone)) => store.state(),
                Some(Ok(watcher::Event::Init | watcher::Event::Delete(_))) => continue,
                Some(Err(err)) => {
                    warn!(error = %err, "watching the objects to shard failed, retrying");
                    continue;
                }
                None => return,
            },
            changed = live.changed() => {
                if changed.is_err() {
                    return;
                }
                store.state()
            }
            _ = resync.tick() => store.state(),
        };
        let shards = live.borrow().clone();
        let patches: Vec<_> = changed
            .iter()
            .filter_map(|object| {
                let patch = relabel(&object.metadata, &shards, &names)?;
                Some((object.metadata.namespace.clone(), object.name_any(), patch))
            })
            .collect();
        stream::iter(patches)
            .for_each_concurrent(CONCURRENT_LABELS, |(namespace, name, patch)| {
                let labeler = labeler.clone();
                async move {
                    match labeler(namespace.clone(), name.clone(), patch).await {
                        Ok(()) => {}
                        // Changed since it was seen: its change is on the way, and is looked at.
                        Err(kube::Error::Api(status)) if status.code == 409 => {
                            debug!(?namespace, name, "the object changed before it was labelled");
                        }
                        Err(err) => {
                            warn!(error = %err, ?namespace, name, "failed to label an object for its shard")
                        }
                    }
                }
            })
            .await;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::convert::Infallible;
    use std::sync::Mutex;

    use bytes::Bytes;
    use http::{Method, StatusCode};
    use http_body::Frame;
    use http_body_util::combinators::UnsyncBoxBody;
    use http_body_util::{BodyExt, Full, StreamBody};
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::client::Body;
    use kube::runtime::controller::{Action, Controller};
    use tokio::sync::mpsc;
    use tokio::task::JoinHandle;

    use super::*;
    use crate::context::{Context, Shutdown};
    use crate::manager::{Controllers, supervise, take_shard};
    use crate::server::Readiness;

    /// The labels of the tests' operator, `test` of `example.com`.
    const SHARD_LABEL: &str = "shard.example.com/test";
    const DRAIN_LABEL: &str = "drain.example.com/test";

    fn names() -> ShardLabels {
        let names = ShardLabels::new("test", "example.com");
        assert_eq!(
            (names.shard.as_str(), names.drain.as_str()),
            (SHARD_LABEL, DRAIN_LABEL)
        );
        names
    }

    type Response = http::Response<UnsyncBoxBody<Bytes, Infallible>>;

    /// An API server that keeps objects, as far as sharding needs one: objects are created, read,
    /// replaced and merge-patched, with `resourceVersion` preconditions, and listed and watched by
    /// label selector. A watch gets the events a label change makes on it: an object that stops
    /// matching its selector is DELETED from it, one that starts matching ADDED. It logs every
    /// request with the replica that sent it.
    #[derive(Default)]
    struct Cluster {
        state: Mutex<State>,
    }

    #[derive(Default)]
    struct State {
        resource_version: u64,
        /// Every object by resource (`leases`, `configmaps`), namespace and name.
        objects: BTreeMap<(String, String, String), Value>,
        /// Every change: its resource version, resource, the object before and after.
        changes: Vec<(u64, String, Option<Value>, Value)>,
        watches: Vec<Watch>,
        log: Vec<Logged>,
    }

    struct Watch {
        resource: String,
        namespace: Option<String>,
        selector: Vec<(String, String)>,
        events: mpsc::UnboundedSender<Bytes>,
    }

    /// A request as the server saw it.
    #[derive(Clone, Debug)]
    struct Logged {
        replica: usize,
        method: Method,
        resource: String,
        name: Option<String>,
        body: Value,
    }

    /// What a request names: `/api/v1[/namespaces/<ns>]/<resource>[/<name>]`, or the same under
    /// `/apis/<group>/<version>`.
    struct Target {
        resource: String,
        namespace: Option<String>,
        name: Option<String>,
        query: HashMap<String, String>,
    }

    impl Target {
        fn parse(uri: &http::Uri) -> Self {
            let mut segments: Vec<&str> = uri.path().split('/').skip(1).collect();
            let skip = if segments.first() == Some(&"api") {
                2
            } else {
                3
            };
            segments.drain(..skip);
            let namespace = if segments.first() == Some(&"namespaces") && segments.len() > 2 {
                let namespace = segments[1].to_owned();
                segments.drain(..2);
                Some(namespace)
            } else {
                None
            };
            let query = form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
                .into_owned()
                .collect();
            Self {
                resource: segments[0].to_owned(),
                namespace,
                name: segments.get(1).map(|name| (*name).to_owned()),
                query,
            }
        }
    }

    fn matches(object: &Value, namespace: Option<&str>, selector: &[(String, String)]) -> bool {
        namespace.is_none_or(|ns| object["metadata"]["namespace"] == ns)
            && selector
                .iter()
                .all(|(key, value)| object["metadata"]["labels"][key] == value.as_str())
    }

    /// The watch event, if any, that a change from `before` to `after` makes on `watch`.
    fn event(watch: &Watch, before: Option<&Value>, after: &Value) -> Option<Bytes> {
        let ns = watch.namespace.as_deref();
        let was = before.is_some_and(|before| matches(before, ns, &watch.selector));
        let is = matches(after, ns, &watch.selector);
        let kind = match (was, is) {
            (false, true) => "ADDED",
            (true, true) => "MODIFIED",
            (true, false) => "DELETED",
            (false, false) => return None,
        };
        let mut line = serde_json::to_vec(&json!({ "type": kind, "object": after })).unwrap();
        line.push(b'\n');
        Some(Bytes::from(line))
    }

    fn respond(status: StatusCode, body: &Value) -> Response {
        let body = Full::new(Bytes::from(serde_json::to_vec(body).unwrap()));
        http::Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(body.boxed_unsync())
            .unwrap()
    }

    /// An error as the API server reports it; kube-rs reads a 404 by its `NotFound` reason.
    fn failure(code: StatusCode, message: &str) -> Response {
        let reason = match code {
            StatusCode::NOT_FOUND => "NotFound",
            StatusCode::CONFLICT => "Conflict",
            _ => "MethodNotAllowed",
        };
        let status = json!({
            "apiVersion": "v1", "kind": "Status", "status": "Failure", "code": code.as_u16(),
            "reason": reason, "message": message,
        });
        respond(code, &status)
    }

    /// RFC 7386: `patch` merged into `target`, a null removing what it names.
    fn merge(target: &mut Value, patch: &Value) {
        let Value::Object(patch) = patch else {
            *target = patch.clone();
            return;
        };
        if !target.is_object() {
            *target = json!({});
        }
        for (key, value) in patch {
            if value.is_null() {
                target.as_object_mut().unwrap().remove(key);
            } else {
                merge(
                    target
                        .as_object_mut()
                        .unwrap()
                        .entry(key)
                        .or_insert(Value::Null),
                    value,
                );
            }
        }
    }

    impl State {
        /// Stores `object` as the next version, and tells the watches.
        fn write(&mut self, key: (String, String, String), mut object: Value) -> Value {
            self.resource_version += 1;
            object["metadata"]["resourceVersion"] = json!(self.resource_version.to_string());
            let before = self.objects.insert(key.clone(), object.clone());
            for watch in self.watches.iter().filter(|w| w.resource == key.0) {
                if let Some(event) = event(watch, before.as_ref(), &object) {
                    let _ = watch.events.send(event);
                }
            }
            self.changes
                .push((self.resource_version, key.0, before, object.clone()));
            object
        }
    }

    impl Cluster {
        /// A client whose requests the server logs as sent by `replica`.
        fn client(self: &Arc<Self>, replica: usize) -> Client {
            let cluster = Arc::clone(self);
            let service = tower::service_fn(move |request: http::Request<Body>| {
                let cluster = Arc::clone(&cluster);
                async move { Ok::<_, Infallible>(cluster.serve(replica, request).await) }
            });
            Client::new(service, "default")
        }

        fn create(&self, resource: &str, object: Value) {
            let key = (
                resource.to_owned(),
                object["metadata"]["namespace"].as_str().unwrap().to_owned(),
                object["metadata"]["name"].as_str().unwrap().to_owned(),
            );
            self.state.lock().unwrap().write(key, object);
        }

        /// Changes an annotation of every ConfigMap, as their users would, which makes every
        /// replica reconcile its share again.
        fn touch_all(&self) {
            let mut state = self.state.lock().unwrap();
            let keys: Vec<_> = state
                .objects
                .keys()
                .filter(|k| k.0 == "configmaps")
                .cloned()
                .collect();
            for key in keys {
                let mut object = state.objects[&key].clone();
                let touched = &mut object["metadata"]["annotations"]["touched"];
                let count: u64 = touched.as_str().and_then(|n| n.parse().ok()).unwrap_or(0);
                *touched = json!((count + 1).to_string());
                state.write(key, object);
            }
        }

        fn objects(&self, resource: &str) -> Vec<Value> {
            let state = self.state.lock().unwrap();
            state
                .objects
                .iter()
                .filter(|(key, _)| key.0 == resource)
                .map(|(_, object)| object.clone())
                .collect()
        }

        fn log(&self) -> Vec<Logged> {
            self.state.lock().unwrap().log.clone()
        }

        async fn serve(&self, replica: usize, request: http::Request<Body>) -> Response {
            let (parts, body) = request.into_parts();
            let body = body.collect().await.unwrap().to_bytes();
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let target = Target::parse(&parts.uri);
            let mut state = self.state.lock().unwrap();
            state.log.push(Logged {
                replica,
                method: parts.method.clone(),
                resource: target.resource.clone(),
                name: target.name.clone(),
                body: body.clone(),
            });
            let namespace = target.namespace.clone().unwrap_or_default();
            let key = |name: &str| (target.resource.clone(), namespace.clone(), name.to_owned());
            match (parts.method, &target.name) {
                (Method::GET, None) => Self::list_or_watch(&mut state, &target),
                (Method::GET, Some(name)) => match state.objects.get(&key(name)) {
                    Some(object) => respond(StatusCode::OK, object),
                    None => failure(StatusCode::NOT_FOUND, "not found"),
                },
                (Method::POST, None) => {
                    let name = body["metadata"]["name"].as_str().unwrap().to_owned();
                    if state.objects.contains_key(&key(&name)) {
                        return failure(StatusCode::CONFLICT, "already exists");
                    }
                    let mut object = body;
                    object["metadata"]["namespace"] = json!(namespace);
                    let created = state.write(key(&name), object);
                    respond(StatusCode::CREATED, &created)
                }
                (Method::PUT, Some(name)) => {
                    let Some(current) = state.objects.get(&key(name)) else {
                        return failure(StatusCode::NOT_FOUND, "not found");
                    };
                    if current["metadata"]["resourceVersion"] != body["metadata"]["resourceVersion"]
                    {
                        return failure(StatusCode::CONFLICT, "the object has been modified");
                    }
                    let replaced = state.write(key(name), body);
                    respond(StatusCode::OK, &replaced)
                }
                (Method::PATCH, Some(name)) => {
                    let Some(mut object) = state.objects.get(&key(name)).cloned() else {
                        return failure(StatusCode::NOT_FOUND, "not found");
                    };
                    let precondition = &body["metadata"]["resourceVersion"];
                    if !precondition.is_null()
                        && *precondition != object["metadata"]["resourceVersion"]
                    {
                        return failure(StatusCode::CONFLICT, "the object has been modified");
                    }
                    merge(&mut object, &body);
                    let patched = state.write(key(name), object);
                    respond(StatusCode::OK, &patched)
                }
                (method, _) => failure(StatusCode::METHOD_NOT_ALLOWED, method.as_str()),
            }
        }

        fn list_or_watch(state: &mut State, target: &Target) -> Response {
            let selector: Vec<(String, String)> = target
                .query
                .get("labelSelector")
                .map(|selector| {
                    selector
                        .split(',')
                        .filter_map(|term| term.split_once('='))
                        .map(|(key, value)| (key.to_owned(), value.to_owned()))
                        .collect()
                })
                .unwrap_or_default();
            let watch = Watch {
                resource: target.resource.clone(),
                namespace: target.namespace.clone(),
                selector,
                events: mpsc::unbounded_channel().0,
            };
            if target.query.get("watch").map(String::as_str) != Some("true") {
                let items: Vec<&Value> = state
                    .objects
                    .iter()
                    .filter(|(key, object)| {
                        key.0 == target.resource
                            && matches(object, watch.namespace.as_deref(), &watch.selector)
                    })
                    .map(|(_, object)| object)
                    .collect();
                let list = json!({
                    "apiVersion": "v1", "kind": "List",
                    "metadata": { "resourceVersion": state.resource_version.to_string() },
                    "items": items,
                });
                return respond(StatusCode::OK, &list);
            }
            // What changed since the version the watch starts from, then what changes from now.
            let (sender, mut receiver) = mpsc::unbounded_channel();
            let since: u64 = target
                .query
                .get("resourceVersion")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            for (version, resource, before, after) in &state.changes {
                if *version > since
                    && *resource == watch.resource
                    && let Some(event) = event(&watch, before.as_ref(), after)
                {
                    let _ = sender.send(event);
                }
            }
            state.watches.push(Watch {
                events: sender,
                ..watch
            });
            let events = futures::stream::poll_fn(move |cx| {
                receiver
                    .poll_recv(cx)
                    .map(|event| event.map(|event| Ok(Frame::data(event))))
            });
            http::Response::builder()
                .status(StatusCode::OK)
                .header("content-type", "application/json")
                .body(StreamBody::new(events).boxed_unsync())
                .unwrap()
        }
    }

    /// When a replica started or ended a reconciliation of an object.
    #[derive(Clone, Debug)]
    struct Work {
        replica: usize,
        object: String,
        started: bool,
        at: Instant,
    }

    type WorkLog = Arc<Mutex<Vec<Work>>>;

    /// A controller of the ConfigMaps of one shard, as the scaffold's controllers are: it watches
    /// the objects of its shard, and hands over what the sharder drains. A reconciliation is 1.3 s
    /// of work, logged.
    async fn configmaps(ctx: Arc<Context>, replica: usize, work: WorkLog) {
        let api = Api::<ConfigMap>::all(ctx.client.clone());
        let state = Arc::new((ctx.client.clone(), replica, work));
        Controller::new(api, ctx.sharded(watcher::Config::default()))
            .graceful_shutdown_on(ctx.shutdown_signal())
            .run(
                reconcile,
                |_, _, _| Action::requeue(Duration::from_secs(1)),
                state,
            )
            .for_each(|_| async {})
            .await;
    }

    async fn reconcile(
        obj: Arc<ConfigMap>,
        state: Arc<(Client, usize, WorkLog)>,
    ) -> kube::Result<Action> {
        let (client, replica, work) = &*state;
        let name = obj.name_any();
        let names = names();
        if names.is_drained(&*obj) {
            let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
            return match api
                .patch_metadata(&name, &PatchParams::default(), &names.hand_over(&*obj))
                .await
            {
                Ok(_) => Ok(Action::await_change()),
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(Action::await_change()),
                Err(err) => Err(err),
            };
        }
        let log = |started| Work {
            replica: *replica,
            object: name.clone(),
            started,
            at: Instant::now(),
        };
        work.lock().unwrap().push(log(true));
        // Not a whole number of seconds, so that reconciliations do not start and end on the ticks
        // of the Leases' timing, as on a real cluster.
        tokio::time::sleep(Duration::from_millis(1_300)).await;
        work.lock().unwrap().push(log(false));
        Ok(Action::await_change())
    }

    struct Replica {
        shutdown: Shutdown,
        task: JoinHandle<anyhow::Result<()>>,
    }

    /// Starts replica `replica` of a manager of 3 shards with the ConfigMap controller, as the
    /// manager starts its controllers and its sharder.
    fn start(cluster: &Arc<Cluster>, replica: usize, work: &WorkLog) -> Replica {
        let shutdown = Shutdown::new();
        let ctx = Context::new(
            cluster.client(replica),
            Arc::new(Metrics::new()),
            None,
            10,
            shutdown.clone(),
        );
        let leases = Leases {
            shards: 3,
            namespace: "default".into(),
            leader: "test".into(),
            timing: Timing::default(),
        };
        let work = Arc::clone(work);
        let stop = shutdown.clone();
        // What the manager does with `--shards=3`, with this test's controller.
        let task = tokio::spawn(async move {
            let readiness = Readiness::default();
            let Some((elector, sharding)) =
                take_shard(leases, names(), &ctx, &readiness, &stop).await
            else {
                return Ok(());
            };
            let mut controllers = Controllers::new(Arc::new(ctx.with_sharding(sharding)));
            controllers.start(move |ctx| configmaps(ctx, replica, work));
            controllers.start(|ctx| async move {
                let api = Api::<PartialObjectMeta<ConfigMap>>::all(ctx.client.clone());
                Sharder::new(
                    ctx.client.clone(),
                    ctx.metrics.clone(),
                    ctx.sharding.clone(),
                    ctx.shutdown_signal(),
                )
                .namespaced_kind(api)
                .run()
                .await;
            });
            supervise(
                &mut controllers,
                &stop,
                Some(&elector),
                Duration::from_secs(30),
            )
            .await
        });
        Replica { shutdown, task }
    }

    /// Waits, on paused time, until `done` holds, failing after `limit`.
    async fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
        let started = Instant::now();
        while !done() {
            assert!(started.elapsed() < limit, "not within {limit:?}: {what}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The replicas that reconciled each object, from `since` on.
    fn reconciled_by(work: &WorkLog, since: Instant) -> BTreeMap<String, BTreeSet<usize>> {
        let mut by = BTreeMap::<String, BTreeSet<usize>>::new();
        for w in work
            .lock()
            .unwrap()
            .iter()
            .filter(|w| w.started && w.at >= since)
        {
            by.entry(w.object.clone()).or_default().insert(w.replica);
        }
        by
    }

    fn keys() -> Vec<String> {
        (0..1_000).map(|i| format!("default/object-{i}")).collect()
    }

    fn shards(shards: &[&str]) -> BTreeSet<String> {
        shards.iter().map(|shard| (*shard).to_owned()).collect()
    }

    #[test]
    fn rendezvous_hashing_spreads_the_objects_and_moves_only_those_of_a_shard_that_comes_or_goes() {
        let three = shards(&["0", "1", "2"]);
        let two = shards(&["0", "1"]);
        let mut per_shard = HashMap::<&str, usize>::new();
        for key in keys() {
            let with_three = pick(&three, &key).unwrap();
            *per_shard.entry(with_three).or_default() += 1;
            let with_two = pick(&two, &key).unwrap();
            // Shard 2 going away moves its objects only, and shard 2 joining takes only those.
            if with_three == "2" {
                assert_ne!(with_two, "2");
            } else {
                assert_eq!(with_two, with_three, "{key}");
            }
        }
        assert!(
            per_shard.values().all(|n| (250..420).contains(n)),
            "{per_shard:?}"
        );
        assert_eq!(pick(&BTreeSet::new(), "default/object-0"), None);
    }

    fn meta(labels: &[(&str, &str)]) -> kube::api::ObjectMeta {
        kube::api::ObjectMeta {
            name: Some("object-0".into()),
            namespace: Some("default".into()),
            resource_version: Some("7".into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            ..kube::api::ObjectMeta::default()
        }
    }

    #[test]
    fn the_sharder_assigns_drains_and_waits_for_the_hand_over() {
        let live = shards(&["0", "1", "2"]);
        let wanted = pick(&live, "default/object-0").unwrap();
        let other = live.iter().find(|s| *s != wanted).unwrap();
        let assign = json!({
            "metadata": {
                "resourceVersion": "7",
                "labels": { SHARD_LABEL: wanted, DRAIN_LABEL: null },
            },
        });
        // New, handed over, or of a shard that is gone: assigned at once, at the version seen.
        assert_eq!(relabel(&meta(&[]), &live, &names()), Some(assign.clone()));
        assert_eq!(
            relabel(&meta(&[(SHARD_LABEL, "9")]), &live, &names()),
            Some(assign.clone())
        );
        let gone = [(SHARD_LABEL, "9"), (DRAIN_LABEL, "true")];
        assert_eq!(relabel(&meta(&gone), &live, &names()), Some(assign));
        // Where it belongs: left alone.
        assert_eq!(
            relabel(&meta(&[(SHARD_LABEL, wanted)]), &live, &names()),
            None
        );
        // On another live shard: drained, then left to it until it hands the object over.
        let drain = json!({
            "metadata": { "resourceVersion": "7", "labels": { DRAIN_LABEL: "true" } },
        });
        assert_eq!(
            relabel(&meta(&[(SHARD_LABEL, other)]), &live, &names()),
            Some(drain)
        );
        let draining = [(SHARD_LABEL, other.as_str()), (DRAIN_LABEL, "true")];
        assert_eq!(relabel(&meta(&draining), &live, &names()), None);
        // No live shard: nothing to assign to.
        assert_eq!(relabel(&meta(&[]), &BTreeSet::new(), &names()), None);
    }

    #[test]
    fn a_replica_hands_over_at_the_version_it_saw() {
        let obj = ConfigMap {
            metadata: meta(&[(SHARD_LABEL, "1"), (DRAIN_LABEL, "true")]),
            ..ConfigMap::default()
        };
        let names = names();
        assert!(names.is_drained(&obj));
        let Patch::Merge(patch) = names.hand_over(&obj) else {
            panic!("a merge patch");
        };
        assert_eq!(
            patch,
            json!({
                "metadata": {
                    "resourceVersion": "7",
                    "labels": { SHARD_LABEL: null, DRAIN_LABEL: null },
                },
            })
        );
        assert_eq!(
            names.owner_shard(&obj),
            Some((SHARD_LABEL.to_owned(), "1".to_owned()))
        );
        assert_eq!(names.owner_shard(&ConfigMap::default()), None);
    }

    const OBJECTS: usize = 300;

    /// 3 replicas share 300 objects, each reconciled by one replica; one that crashes has its
    /// objects taken over within a lease duration; one that joins then takes its share within 5 s,
    /// handed over by the others; and no object is ever reconciled by two replicas at once.
    #[tokio::test(start_paused = true)]
    async fn three_replicas_share_the_objects_and_hand_them_over() {
        let cluster = Arc::new(Cluster::default());
        for i in 0..OBJECTS {
            let name = format!("object-{i:03}");
            let object = json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": { "name": name, "namespace": "default" },
            });
            cluster.create("configmaps", object);
        }
        let work = WorkLog::default();
        let started = Instant::now();
        let mut replicas: Vec<Replica> = (0..3).map(|r| start(&cluster, r, &work)).collect();

        // Every object is reconciled, by exactly one replica, and each has a share.
        wait_until(Duration::from_secs(60), "every object reconciled", || {
            reconciled_by(&work, started).len() == OBJECTS
        })
        .await;
        let by = reconciled_by(&work, started);
        assert!(by.values().all(|replicas| replicas.len() == 1), "{by:?}");
        for replica in 0..3 {
            let share = by.values().filter(|r| r.contains(&replica)).count();
            assert!(
                share >= OBJECTS / 6,
                "replica {replica} has {share} objects"
            );
        }

        // From now on the objects change every 2 s, so that reconciliations are under way when a
        // replica crashes and when objects move.
        let users = Arc::clone(&cluster);
        let churn = tokio::spawn(async move {
            loop {
                users.touch_all();
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        });

        // A replica that is not the leader crashes: its objects move as soon as its shard Lease
        // expires, without a handshake, since no replica holds it.
        let log = cluster.log();
        let leader = log
            .iter()
            .find(|l| {
                l.method == Method::PATCH
                    && l.resource == "configmaps"
                    && l.body["metadata"]["labels"][SHARD_LABEL].is_string()
            })
            .map(|l| l.replica)
            .expect("the sharder labels the objects");
        let crashed = (0..3).find(|r| *r != leader).unwrap();
        let theirs: BTreeSet<String> = by
            .iter()
            .filter(|(_, r)| r.contains(&crashed))
            .map(|(object, _)| object.clone())
            .collect();
        let crashed_at = Instant::now();
        replicas[crashed].task.abort();
        let lease_duration = Timing::default().lease_duration;
        wait_until(
            lease_duration + Duration::from_secs(2),
            "the crashed replica's objects taken over",
            || {
                let by = reconciled_by(&work, crashed_at);
                theirs
                    .iter()
                    .all(|object| by.get(object).is_some_and(|r| !r.contains(&crashed)))
            },
        )
        .await;
        let taken_over = work
            .lock()
            .unwrap()
            .iter()
            .filter(|w| w.started && w.at > crashed_at && theirs.contains(&w.object))
            .map(|w| w.at)
            .max()
            .unwrap();
        assert!(
            taken_over - crashed_at <= lease_duration,
            "taken over after {:?}",
            taken_over - crashed_at
        );

        // A replica joins: it takes the free shard, and the others hand it its objects. The
        // sharder freed the crashed replica's Lease once it expired, so the new replica does not
        // watch it expire again.
        let joined_at = Instant::now();
        replicas.push(start(&cluster, 3, &work));
        wait_until(
            Duration::from_secs(5),
            "the new replica's first object",
            || {
                reconciled_by(&work, joined_at)
                    .values()
                    .any(|r| r.contains(&3))
            },
        )
        .await;
        wait_until(Duration::from_secs(5), "the new replica's share", || {
            let by = reconciled_by(&work, joined_at);
            by.values().filter(|r| r.contains(&3)).count() >= OBJECTS / 6
        })
        .await;
        // Each object the new replica took was handed over by the replica that had it.
        let handed_over: BTreeSet<String> = cluster
            .log()
            .iter()
            .filter(|l| {
                l.method == Method::PATCH
                    && l.resource == "configmaps"
                    && l.replica != 3
                    && l.body["metadata"]["labels"].get(SHARD_LABEL) == Some(&Value::Null)
            })
            .filter_map(|l| l.name.clone())
            .collect();
        for (object, replicas) in reconciled_by(&work, joined_at) {
            if replicas.contains(&3) {
                assert!(
                    handed_over.contains(&object),
                    "{object} moved without a handshake"
                );
            }
        }

        churn.abort();

        // Never two replicas on one object at once. The crashed replica stopped working when it
        // crashed, in the middle of what it was doing.
        let mut working: HashMap<String, BTreeSet<usize>> = HashMap::new();
        let mut events = work.lock().unwrap().clone();
        // At the same instant, what ends comes before what starts.
        events.sort_by_key(|w| (w.at, w.started));
        let mut crash_seen = false;
        for w in events {
            if !crash_seen && w.at >= crashed_at {
                crash_seen = true;
                for on in working.values_mut() {
                    on.remove(&crashed);
                }
            }
            let on = working.entry(w.object.clone()).or_default();
            if w.started {
                assert!(
                    on.iter().all(|r| *r == w.replica),
                    "{} reconciled by {} while {on:?} work on it",
                    w.object,
                    w.replica
                );
                on.insert(w.replica);
            } else {
                on.remove(&w.replica);
            }
        }

        // The others stop cleanly and give their shards back.
        for (r, replica) in replicas
            .into_iter()
            .enumerate()
            .filter(|(r, _)| *r != crashed)
        {
            replica.shutdown.trigger();
            let stopped = tokio::time::timeout(Duration::from_secs(35), replica.task).await;
            stopped
                .expect("stopped in time")
                .unwrap()
                .unwrap_or_else(|err| panic!("replica {r}: {err:#}"));
        }
        let held: Vec<Value> = cluster
            .objects("leases")
            .into_iter()
            .filter(|lease| lease["spec"]["holderIdentity"].is_string())
            .collect();
        assert!(held.is_empty(), "Leases still held: {held:?}");
    }
}
