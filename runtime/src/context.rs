//! What the manager hands to every controller.
//!
//! A controller is an `async fn run(ctx: Arc<Context>)` that builds a kube-runtime `Controller` and
//! drives it until [`Context::shutdown_signal`] fires. Everything a controller needs from the process
//! (the client, the metrics, the flags that shape it) comes through here, so a controller module never
//! reads flags or globals itself and can be tested with a mock client.
//!
//! ```
//! use std::sync::Arc;
//!
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use rsop_runtime::metrics::Metrics;
//! # #[cfg(feature = "testing")]
//! use rsop_runtime::testing::offline_client;
//! use rsop_runtime::{Context, Shutdown};
//!
//! # #[cfg(not(feature = "testing"))]
//! # fn main() {}
//! # #[cfg(feature = "testing")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let shutdown = Shutdown::new();
//! let ctx = Context::new(offline_client(), Arc::new(Metrics::new()), Some("team-a".into()), 4, shutdown.clone());
//! // `--namespace=team-a`: the controllers' `Api`s are of that namespace.
//! assert_eq!(ctx.api::<ConfigMap>().resource_url(), "/api/v1/namespaces/team-a/configmaps");
//! shutdown.trigger();
//! ctx.shutdown_signal().await;
//! assert!(ctx.is_shutting_down());
//! # }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{self, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt as _, Stream, StreamExt as _};
use k8s_openapi::NamespaceResourceScope;
use kube::runtime::watcher;
use kube::{Api, Client, Resource};
use tokio::sync::watch;

use crate::metrics::{ControllerMetrics, Metrics};
#[cfg(feature = "sharding")]
use crate::shard::Sharding;

/// Shared state of the controllers.
#[derive(Clone)]
pub struct Context {
    /// Client for the Kubernetes API, authenticated as the manager's service account.
    pub client: Client,
    /// The operator's name: the field manager of what its controllers apply.
    pub name: String,
    /// The manager's metrics; see [`Context::controller_metrics`].
    pub metrics: Arc<Metrics>,
    /// Namespace to watch, `None` meaning all namespaces (`--namespace` / `WATCH_NAMESPACE`).
    pub namespace: Option<String>,
    /// Limit for `kube::runtime::controller::Config::concurrency` (`--max-concurrent-reconciles`).
    pub max_concurrent_reconciles: u16,
    /// How long one reconciliation may run (`--reconcile-timeout`), `None` for no limit.
    pub reconcile_timeout: Option<Duration>,
    /// The shard this replica works on when the manager is sharded (`--shards`), else `None`.
    #[cfg(feature = "sharding")]
    pub sharding: Option<Sharding>,
    shutdown: Shutdown,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("name", &self.name)
            .field("namespace", &self.namespace)
            .field("max_concurrent_reconciles", &self.max_concurrent_reconciles)
            .field("reconcile_timeout", &self.reconcile_timeout)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// Bundles the shared state; `shutdown` is the signal controllers drain on.
    pub fn new(
        client: Client,
        metrics: Arc<Metrics>,
        namespace: Option<String>,
        max_concurrent_reconciles: u16,
        shutdown: Shutdown,
    ) -> Self {
        Self {
            client,
            name: "manager".to_owned(),
            metrics,
            namespace,
            max_concurrent_reconciles,
            reconcile_timeout: None,
            #[cfg(feature = "sharding")]
            sharding: None,
            shutdown,
        }
    }

    /// Names the operator (`manager` by default): the field manager of what its controllers apply.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets how long one reconciliation may run; zero means no limit.
    #[must_use]
    pub fn with_reconcile_timeout(mut self, timeout: Duration) -> Self {
        self.reconcile_timeout = Some(timeout).filter(|t| !t.is_zero());
        self
    }

    /// Makes the controllers work on the objects of one shard; see [`Context::sharded`].
    #[cfg(feature = "sharding")]
    #[must_use]
    pub fn with_sharding(mut self, sharding: Sharding) -> Self {
        self.sharding = Some(sharding);
        self
    }

    /// `config` narrowed to the objects of this replica's shard when the manager is sharded, and
    /// left as it is otherwise: the watch of a controller's objects, and of what it creates for
    /// them, which carries their shard label.
    #[cfg_attr(not(feature = "sharding"), expect(unused_mut))]
    pub fn sharded(&self, mut config: watcher::Config) -> watcher::Config {
        #[cfg(feature = "sharding")]
        if let Some(sharding) = &self.sharding {
            let shard = sharding.labels.selector(&sharding.shard);
            config.label_selector = Some(match config.label_selector.take() {
                Some(selector) => format!("{selector},{shard}"),
                None => shard,
            });
        }
        config
    }

    /// An `Api` for a namespaced kind, scoped to the watched namespace or to the whole cluster.
    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        match &self.namespace {
            Some(namespace) => Api::namespaced(self.client.clone(), namespace),
            None => Api::all(self.client.clone()),
        }
    }

    /// The reconcile metrics of the controller called `name`.
    pub fn controller_metrics(&self, name: &str) -> ControllerMetrics {
        self.metrics
            .set_max_concurrent_reconciles(name, self.max_concurrent_reconciles);
        self.metrics.controller(name)
    }

    /// `stream` until the manager starts shutting down, when it ends and is dropped, and with it the
    /// cache writer it feeds, whether or not anyone polls it any more. Give it the stream of a
    /// controller's own objects (`Controller::for_stream`): kube-runtime holds the reconciliations
    /// until that cache has had its first list, and its graceful shutdown stops polling the stream
    /// without dropping it, so a manager told to stop before the first list would otherwise wait
    /// for that list until `--graceful-shutdown-timeout` ends it. Once the writer is gone, the
    /// held runner ends too, with no reconciliation started.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    ///
    /// use futures::StreamExt as _;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::runtime::controller::{Action, Controller};
    /// use kube::runtime::{reflector, watcher, WatchStreamExt as _};
    /// use rsop_runtime::Context;
    ///
    /// async fn run(ctx: Arc<Context>) {
    ///     let (reader, writer) = reflector::store();
    ///     let objects = reflector(writer, watcher(ctx.api::<ConfigMap>(), watcher::Config::default()));
    ///     Controller::for_stream(ctx.until_shutdown(objects).applied_objects(), reader)
    ///         .graceful_shutdown_on(ctx.shutdown_signal())
    ///         .run(
    ///             |_, _| async { Ok::<_, kube::Error>(Action::await_change()) },
    ///             |_, _, _| Action::await_change(),
    ///             Arc::new(()),
    ///         )
    ///         .for_each(|_| async {})
    ///         .await;
    /// }
    /// ```
    pub fn until_shutdown<S>(&self, stream: S) -> impl Stream<Item = S::Item> + Send + use<S>
    where
        S: Stream + Send + 'static,
        S::Item: Send,
    {
        let slot = Arc::new(Mutex::new(Some(stream.boxed())));
        let dropper = Arc::downgrade(&slot);
        let signal = self.shutdown_signal();
        tokio::spawn(async move {
            signal.await;
            if let Some(slot) = dropper.upgrade() {
                let stream = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
                drop(stream);
            }
        });
        UntilShutdown {
            slot,
            signal: self.shutdown_signal().boxed(),
        }
    }

    /// Whether the manager has started shutting down: a controller that returns now is draining.
    pub fn is_shutting_down(&self) -> bool {
        self.shutdown.is_triggered()
    }

    /// Resolves when the manager starts shutting down; pass it to
    /// `Controller::graceful_shutdown_on` so that in-flight reconciliations finish first.
    pub fn shutdown_signal(&self) -> impl Future<Output = ()> + Send + Sync + 'static {
        self.shutdown.signalled()
    }
}

/// The stream of [`Context::until_shutdown`]: gone once the manager shuts down, when it is polled
/// or, if no one polls it any more, by the task that waits for the shutdown.
struct UntilShutdown<T> {
    slot: Arc<Mutex<Option<BoxStream<'static, T>>>>,
    signal: BoxFuture<'static, ()>,
}

impl<T> Stream for UntilShutdown<T> {
    type Item = T;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut task::Context<'_>) -> Poll<Option<T>> {
        let shut_down = self.signal.poll_unpin(cx).is_ready();
        // Only this stream and the shutdown's task take the lock, the task once.
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        if shut_down {
            drop(slot.take());
        }
        match slot.as_mut() {
            Some(stream) => stream.poll_next_unpin(cx),
            None => Poll::Ready(None),
        }
    }
}

/// A one-shot, cloneable shutdown switch.
#[derive(Clone, Debug)]
pub struct Shutdown(Arc<watch::Sender<bool>>);

impl Default for Shutdown {
    fn default() -> Self {
        Self::new()
    }
}

impl Shutdown {
    /// A switch that has not been triggered.
    pub fn new() -> Self {
        Self(Arc::new(watch::Sender::new(false)))
    }

    /// Starts the shutdown; triggering again has no further effect.
    pub fn trigger(&self) {
        self.0.send_replace(true);
    }

    /// Whether [`Shutdown::trigger`] has been called.
    pub fn is_triggered(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once triggered, immediately if it already was.
    pub fn signalled(&self) -> impl Future<Output = ()> + Send + Sync + 'static {
        let mut rx = self.0.subscribe();
        async move {
            // An error means every sender is gone: no one can trigger any more, and the process
            // is going away, so treating it as a shutdown is the only safe reading.
            let _ = rx.wait_for(|triggered| *triggered).await;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    /// A client whose requests are never answered; enough to build `Api`s.
    pub(crate) fn offline_client() -> Client {
        let service = tower::service_fn(|_req: axum::http::Request<kube::client::Body>| {
            std::future::pending::<Result<axum::http::Response<axum::body::Body>, std::io::Error>>()
        });
        Client::new(service, "default")
    }

    fn context(namespace: Option<&str>) -> Context {
        Context::new(
            offline_client(),
            Arc::new(Metrics::new()),
            namespace.map(str::to_owned),
            1,
            Shutdown::new(),
        )
    }

    #[tokio::test]
    async fn api_is_scoped_to_the_watched_namespace() {
        let api = context(Some("team-a")).api::<ConfigMap>();
        assert_eq!(api.resource_url(), "/api/v1/namespaces/team-a/configmaps");
        let api = context(None).api::<ConfigMap>();
        assert_eq!(api.resource_url(), "/api/v1/configmaps");
    }

    #[cfg(feature = "sharding")]
    #[tokio::test]
    async fn a_sharded_replica_watches_its_shard_only() {
        use crate::shard::{Leases, ShardLabels};

        let config = watcher::Config::default().labels("app=memcached");
        let unsharded = context(None).sharded(config.clone());
        assert_eq!(unsharded.label_selector.as_deref(), Some("app=memcached"));
        assert_eq!(
            context(None)
                .sharded(watcher::Config::default())
                .label_selector,
            None
        );

        let leases = Leases {
            shards: 3,
            namespace: "default".into(),
            leader: "test".into(),
            timing: crate::leader::Timing::default(),
        };
        let sharded = context(None).with_sharding(Sharding {
            shard: "2".into(),
            leases,
            labels: ShardLabels::new("test", "example.com"),
        });
        let selector = "app=memcached,shard.example.com/test=2".to_owned();
        assert_eq!(sharded.sharded(config).label_selector, Some(selector));
        let selector = "shard.example.com/test=2".to_owned();
        let all = sharded.sharded(watcher::Config::default());
        assert_eq!(all.label_selector, Some(selector));
    }

    /// A stream cut by the shutdown is dropped, and the cache writer it held with it: the store's
    /// readiness resolves (with an error) instead of never.
    #[tokio::test]
    async fn a_stream_ends_and_is_dropped_at_shutdown() {
        use kube::runtime::reflector;

        let shutdown = Shutdown::new();
        let ctx = Context::new(offline_client(), Arc::default(), None, 1, shutdown.clone());
        let (store, writer) = reflector::store::<ConfigMap>();
        // A watch that never lists, holding the writer.
        let never = futures::stream::pending::<()>().map(move |()| writer.as_reader());
        let mut cut = Box::pin(ctx.until_shutdown(never));
        let polled = tokio::time::timeout(Duration::from_millis(20), cut.next()).await;
        assert!(polled.is_err(), "the stream ends only at shutdown");
        shutdown.trigger();
        assert!(cut.next().await.is_none());
        let ready = tokio::time::timeout(Duration::from_secs(1), store.wait_until_ready()).await;
        assert!(matches!(ready, Ok(Err(_))), "the writer is gone");

        // As kube-runtime stops it: no longer polled once the shutdown comes.
        let shutdown = Shutdown::new();
        let ctx = Context::new(offline_client(), Arc::default(), None, 1, shutdown.clone());
        let (store, writer) = reflector::store::<ConfigMap>();
        let never = futures::stream::pending::<()>().map(move |()| writer.as_reader());
        let mut cut = Box::pin(ctx.until_shutdown(never));
        let polled = tokio::time::timeout(Duration::from_millis(20), cut.next()).await;
        assert!(polled.is_err());
        shutdown.trigger();
        let ready = tokio::time::timeout(Duration::from_secs(1), store.wait_until_ready()).await;
        assert!(matches!(ready, Ok(Err(_))), "the writer is gone, unpolled");
    }

    #[tokio::test]
    async fn shutdown_signal_fires_for_every_waiter() {
        let shutdown = Shutdown::new();
        let ctx = Context::new(offline_client(), Arc::default(), None, 1, shutdown.clone());
        let early = tokio::spawn(ctx.shutdown_signal());
        assert!(!shutdown.is_triggered());
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!early.is_finished());

        shutdown.trigger();
        assert!(shutdown.is_triggered());
        tokio::time::timeout(Duration::from_secs(1), early)
            .await
            .unwrap()
            .unwrap();
        // A waiter that subscribes after the fact must not hang.
        tokio::time::timeout(Duration::from_secs(1), ctx.shutdown_signal())
            .await
            .unwrap();
    }
}
