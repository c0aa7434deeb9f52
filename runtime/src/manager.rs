//! The manager: what controller-runtime's `ctrl.Manager` does for a Go operator.
//!
//! A [`Manager`] is given the operator's controllers (and, with the `webhook` feature, its
//! webhooks), then run with the [`Flags`] of the command line. It connects to the cluster, serves
//! the health probes and the metrics, takes part in leader election when asked to, runs the
//! controllers while it leads, and shuts everything down in order on SIGTERM or Ctrl-C: readiness
//! drops, controllers finish their in-flight reconciliations, the Lease is released, and the servers
//! stop last so that probes and scrapes keep working meanwhile. The process exits 0 after such a
//! drain. Only a real failure ends the run with an error, so that the process exits non-zero and
//! Kubernetes restarts the pod: lost leadership, a controller or server that stops before the
//! shutdown signal, or a drain that outlasts `--graceful-shutdown-timeout`. A second signal exits
//! at once, non-zero.
//!
//! A controller is an `async fn(Arc<Context>)` that drives a kube-runtime `Controller` until
//! [`Context::shutdown_signal`] fires:
//!
//! ```no_run
//! use std::process::ExitCode;
//! use std::sync::Arc;
//!
//! use futures::StreamExt;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::runtime::controller::{Action, Controller};
//! use kube::runtime::watcher;
//! use rsop_runtime::{Context, Flags, Manager};
//!
//! async fn reconcile(_: Arc<ConfigMap>, _: Arc<()>) -> Result<Action, kube::Error> {
//!     Ok(Action::await_change())
//! }
//!
//! async fn run(ctx: Arc<Context>) {
//!     Controller::new(ctx.api::<ConfigMap>(), watcher::Config::default())
//!         .graceful_shutdown_on(ctx.shutdown_signal())
//!         .run(reconcile, |_, _, _| Action::await_change(), Arc::new(()))
//!         .for_each(|_| async {})
//!         .await;
//! }
//!
//! #[tokio::main]
//! async fn main() -> ExitCode {
//!     Manager::new("configmap-operator", "example.com")
//!         .controller(run)
//!         .run(Flags::parse_args())
//!         .await
//! }
//! ```

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use clap::Parser as _;
use kube::Client;
use kube::client::ClientBuilder;
use tokio::task::{Id, JoinSet};
use tracing::{error, info, warn};

use crate::auth::KubeAuth;
use crate::context::{Context, Shutdown};
use crate::flags::Flags;
use crate::leader::{self, LeaderElector};
use crate::logging;
use crate::metrics::Metrics;
use crate::server::{self, Readiness, Servers};
#[cfg(feature = "sharding")]
use crate::shard::{Leases, ShardLabels, ShardScope, Sharder, Sharding};
use crate::tls::{self, TlsListener};
#[cfg(feature = "webhook")]
use crate::webhook::Webhooks;

/// How long the servers get to answer the requests they are handling when the manager stops.
pub const SERVER_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(3);
/// How long the manager tries to release the leader Lease after the drain. An API server that does
/// not answer in time cannot keep the pod past its grace period: the Lease then expires, as after a
/// crash.
pub const LEASE_RELEASE_TIMEOUT: Duration = Duration::from_secs(2);

/// Starts one controller in a [`Controllers`] set.
type Start = Box<dyn FnOnce(&mut Controllers) + Send>;

/// Adds one kind to the sharder.
#[cfg(feature = "sharding")]
type ShardKind = Box<dyn Fn(Sharder, &Context) -> Sharder + Send + Sync>;

/// An operator's controllers and webhooks, run with the manager's flags.
pub struct Manager {
    name: String,
    domain: String,
    controllers: Vec<Start>,
    #[cfg(feature = "sharding")]
    sharded: Vec<ShardKind>,
    #[cfg(feature = "webhook")]
    webhooks: Webhooks,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("name", &self.name)
            .field("domain", &self.domain)
            .field("controllers", &self.controllers.len())
            .finish_non_exhaustive()
    }
}

impl Flags {
    /// The flags of the process's command line; prints the help or an error and exits on a bad
    /// one, as clap does.
    pub fn parse_args() -> Self {
        Self::parse()
    }
}

impl Manager {
    /// The manager of the operator `name` (a DNS label, such as `memcached-operator`), whose API
    /// groups are under `domain` (such as `example.com`). They name what the operator owns in the
    /// cluster: the leader election Lease is `<name>.<domain>` unless `--leader-election-id` says
    /// otherwise, and the shard labels are `shard.<domain>/<name>` and `drain.<domain>/<name>`.
    pub fn new(name: impl Into<String>, domain: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            domain: domain.into(),
            controllers: Vec::new(),
            #[cfg(feature = "sharding")]
            sharded: Vec::new(),
            #[cfg(feature = "webhook")]
            webhooks: Webhooks::default(),
        }
    }

    /// Runs `controller` while this replica leads (or works on a shard).
    ///
    /// A controller must run until [`Context::shutdown_signal`] fires and return once it has
    /// drained; returning earlier is a failure of the whole manager.
    #[must_use]
    pub fn controller<F, Fut>(mut self, controller: F) -> Self
    where
        F: FnOnce(Arc<Context>) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.controllers
            .push(Box::new(move |controllers| controllers.start(controller)));
        self
    }

    /// Spreads the objects of `K` over the replicas when the manager is sharded (`--shards`): the
    /// leader labels each with its shard, and every replica watches its own. Only their metadata
    /// is read. Register the kind of every controller whose watches go through
    /// [`Context::sharded`].
    #[cfg(feature = "sharding")]
    #[must_use]
    pub fn shard<K>(mut self) -> Self
    where
        K: kube::Resource<DynamicType = ()>
            + Clone
            + std::fmt::Debug
            + Send
            + Sync
            + serde::de::DeserializeOwned
            + 'static,
        K::Scope: ShardScope,
    {
        self.sharded.push(Box::new(|sharder, ctx| {
            K::Scope::add::<K>(sharder, ctx.client.clone(), ctx.namespace.as_deref())
        }));
        self
    }

    /// Serves `webhooks` (each replica, leader or not) on `--webhook-port`.
    #[cfg(feature = "webhook")]
    #[must_use]
    pub fn webhooks(mut self, webhooks: Webhooks) -> Self {
        self.webhooks.extend(webhooks);
        self
    }

    /// Sets up logging from `flags` (unless the program already has), runs the manager until it
    /// is told to stop or fails, and returns the process's exit code: success after a clean
    /// shutdown, failure with the error logged otherwise.
    pub async fn run(self, flags: Flags) -> ExitCode {
        if !tracing::dispatcher::has_been_set()
            && let Err(err) = logging::init(flags.log_format, &flags.log_level)
        {
            eprintln!("error: {}", logging::error_chain(&err));
            return ExitCode::FAILURE;
        }
        match self.try_run(flags).await {
            Ok(()) => {
                info!("manager stopped");
                ExitCode::SUCCESS
            }
            Err(err) => {
                error!(error = logging::error_chain(&err), "manager failed");
                ExitCode::FAILURE
            }
        }
    }

    /// Runs the manager until it is told to stop, or fails; logging is the caller's.
    pub async fn try_run(
        #[cfg_attr(not(feature = "webhook"), expect(unused_mut))] mut self,
        flags: Flags,
    ) -> anyhow::Result<()> {
        let shutdown = Shutdown::new();
        tokio::spawn(handle_signals(shutdown.clone()));

        let metrics = Arc::new(Metrics::new());
        let client = client(&metrics).await?;
        let readiness = Readiness::default();
        let stop_servers = Shutdown::new();
        let mut servers =
            start_servers(&flags, &client, &metrics, &readiness, &stop_servers).await?;
        #[cfg(feature = "webhook")]
        if !self.webhooks.is_empty() {
            let webhooks = std::mem::take(&mut self.webhooks).router(metrics.webhooks.clone());
            crate::webhook::start(&flags.webhook, webhooks, &stop_servers, &mut servers).await?;
        }

        let result = tokio::select! {
            result = self.lead_and_run(&flags, client, metrics, &readiness, &shutdown) => result,
            err = server_failure(&mut servers) => Err(err),
        };

        readiness.set(false);
        stop_servers.trigger();
        let stopped = async { while servers.join_next().await.is_some() {} };
        if tokio::time::timeout(SERVER_SHUTDOWN_TIMEOUT, stopped)
            .await
            .is_err()
        {
            warn!("servers did not stop in time");
        }
        result
    }

    /// The leader election Lease's name: the flag's, or `<name>.<domain>`.
    fn leader_election_id(&self, flags: &Flags) -> String {
        flags
            .leader_election_id
            .clone()
            .filter(|id| !id.trim().is_empty())
            .unwrap_or_else(|| format!("{}.{}", self.name, self.domain))
    }

    /// Takes the lead if configured to, or a shard of the work, then runs the controllers until
    /// shutdown.
    async fn lead_and_run(
        self,
        flags: &Flags,
        client: Client,
        metrics: Arc<Metrics>,
        readiness: &Readiness,
        shutdown: &Shutdown,
    ) -> anyhow::Result<()> {
        let lease_namespace = flags
            .lease_namespace()
            .map_or_else(|| leader::default_namespace(&client), str::to_owned);
        let leader_election_id = self.leader_election_id(flags);
        #[cfg_attr(not(feature = "sharding"), expect(unused_mut))]
        let mut ctx = Context::new(
            client.clone(),
            metrics.clone(),
            flags.watch_namespace().map(str::to_owned),
            flags.max_concurrent_reconciles,
            shutdown.clone(),
        )
        .with_name(self.name.clone())
        .with_reconcile_timeout(flags.reconcile_timeout);
        // The Lease this replica works under: the leader's, or its shard's.
        #[cfg(feature = "sharding")]
        let sharded = flags.shards > 1;
        #[cfg(not(feature = "sharding"))]
        let sharded = false;
        let elector = if sharded {
            #[cfg(feature = "sharding")]
            {
                if !flags.leader_elect {
                    anyhow::bail!(
                        "--shards={} needs --leader-elect: the leader assigns the objects to the shards",
                        flags.shards
                    );
                }
                let leases = Leases {
                    shards: flags.shards,
                    namespace: lease_namespace,
                    leader: leader_election_id,
                    timing: flags.leader_election_timing()?,
                };
                let labels = ShardLabels::new(&self.name, &self.domain);
                let Some((elector, sharding)) =
                    take_shard(leases, labels, &ctx, readiness, shutdown).await
                else {
                    return Ok(());
                };
                ctx = ctx.with_sharding(sharding);
                Some(elector)
            }
            #[cfg(not(feature = "sharding"))]
            unreachable!("sharding is a feature of its own")
        } else if flags.leader_elect {
            let elector = LeaderElector::new(
                client,
                &leader_election_id,
                &lease_namespace,
                flags.leader_election_timing()?,
                metrics,
            );
            // A standby is ready too, see the `server` module.
            readiness.set(true);
            info!("waiting to become the leader");
            if or_shutdown(shutdown, elector.acquire()).await.is_none() {
                // The signal may have cut short an attempt that took the Lease: give it back if so.
                elector.release().await;
                return Ok(());
            }
            Some(elector)
        } else {
            None
        };

        let mut controllers = Controllers::new(Arc::new(ctx));
        let empty = self.controllers.is_empty();
        for start in self.controllers {
            start(&mut controllers);
        }
        if empty {
            info!("no controllers are registered yet; serving probes and metrics only");
        } else if sharded {
            #[cfg(feature = "sharding")]
            {
                let kinds = self.sharded;
                controllers.start_named("sharder", move |ctx| async move {
                    let mut sharder = Sharder::new(
                        ctx.client.clone(),
                        ctx.metrics.clone(),
                        ctx.sharding.clone(),
                        ctx.shutdown_signal(),
                    );
                    for kind in &kinds {
                        sharder = kind(sharder, &ctx);
                    }
                    sharder.run().await;
                });
            }
        }
        readiness.set(true);
        let result = supervise(
            &mut controllers,
            shutdown,
            elector.as_ref(),
            flags.graceful_shutdown_timeout,
        )
        .await;
        readiness.set(false);
        result
    }
}

/// The Kubernetes client, configured as kubectl would be, with its requests counted in `metrics`.
async fn client(metrics: &Metrics) -> anyhow::Result<Client> {
    let config = kube::Config::infer().await.context(
        "failed to configure the Kubernetes client from KUBECONFIG, ~/.kube/config or the in-cluster service account",
    )?;
    let host = config
        .cluster_url
        .authority()
        .map_or_else(String::new, ToString::to_string);
    let client = ClientBuilder::try_from(config)
        .context("failed to set up the Kubernetes client")?
        .with_layer(&metrics.count_client_requests(&host))
        .build();
    Ok(client)
}

/// Takes a free one of the shard `leases` for this replica, waiting, ready, as a standby of leader
/// election does while all are held. Returns the elector that holds it and what the controllers
/// are to know of it, or `None` if the manager stops first.
#[cfg(feature = "sharding")]
pub(crate) async fn take_shard(
    leases: Leases,
    labels: ShardLabels,
    ctx: &Context,
    readiness: &Readiness,
    shutdown: &Shutdown,
) -> Option<(LeaderElector, Sharding)> {
    let mut electors = leases.shard_electors(&ctx.client, &ctx.metrics);
    readiness.set(true);
    info!(shards = leases.shards, "waiting for a free shard");
    let Some(index) = or_shutdown(shutdown, LeaderElector::acquire_any(&electors)).await else {
        // The signal may have cut short an attempt that took a Lease.
        for elector in &electors {
            elector.release().await;
        }
        return None;
    };
    info!(shard = index, "working on a shard");
    let elector = electors.swap_remove(index);
    let shard = index.to_string();
    Some((
        elector,
        Sharding {
            shard,
            leases,
            labels,
        },
    ))
}

/// Runs the controllers until the shutdown signal or a failure, then drains them and releases the
/// Lease. `Ok` means a clean stop: the signal came first and every controller drained in time.
/// Tests run their controllers through it, as the manager does.
pub async fn supervise(
    controllers: &mut Controllers,
    shutdown: &Shutdown,
    elector: Option<&LeaderElector>,
    timeout: Duration,
) -> anyhow::Result<()> {
    // One renewal loop across both phases: a new one would restart the renew deadline, and a
    // leader whose renewals were already failing could drain past the time a standby may take over.
    let lost = leadership_lost(elector);
    tokio::pin!(lost);
    let failure = tokio::select! {
        () = shutdown.signalled() => None,
        err = &mut lost => return Err(err),
        err = controllers.failure() => Some(err),
    };

    // After a controller failure the others are stopped the same way as on a signal.
    shutdown.trigger();
    info!("stopping controllers");
    let drained = tokio::select! {
        drained = controllers.drain(timeout) => drained,
        err = &mut lost => return Err(err),
    };
    if let Some(elector) = elector
        && tokio::time::timeout(LEASE_RELEASE_TIMEOUT, elector.release())
            .await
            .is_err()
    {
        warn!("the leader Lease was not released in time; a standby takes over once it expires");
    }
    match (failure, drained) {
        (Some(err), _) => Err(err),
        (None, Err(err)) => Err(err),
        (None, Ok(())) => Ok(()),
    }
}

/// Binds the enabled servers and starts serving; binding errors are returned at once.
async fn start_servers(
    flags: &Flags,
    client: &Client,
    metrics: &Arc<Metrics>,
    readiness: &Readiness,
    stop: &Shutdown,
) -> anyhow::Result<Servers> {
    let mut servers = Servers::new();
    if let Some(addr) = flags.health_probe_bind_address.socket_addr() {
        let listener = server::bind(addr, "health probe").await?;
        info!(address = %listener.local_addr()?, "serving health probes");
        let serve = axum::serve(listener, server::health_router(readiness.clone()))
            .with_graceful_shutdown(stop.signalled());
        servers.spawn(async move { ("health probe", serve.await) });
    }

    let Some(addr) = flags.metrics_bind_address.socket_addr() else {
        info!("metrics are disabled");
        return Ok(servers);
    };
    let listener = server::bind(addr, "metrics").await?;
    let address = listener.local_addr()?;
    if flags.metrics_secure {
        let config = tls::server_config(flags.metrics_cert_path.as_deref()).await?;
        let router = server::metrics_router(metrics.clone(), Some(KubeAuth::new(client.clone())));
        let serve = axum::serve(TlsListener::new(listener, config)?, router)
            .with_graceful_shutdown(stop.signalled());
        info!(%address, "serving metrics over HTTPS with authentication and authorization");
        servers.spawn(async move { ("metrics", serve.await) });
    } else {
        if flags.metrics_cert_path.is_some() {
            warn!("--metrics-cert-path is ignored because --metrics-secure=false");
        }
        let serve = axum::serve(listener, server::metrics_router(metrics.clone(), None))
            .with_graceful_shutdown(stop.signalled());
        info!(%address, "serving metrics over plain HTTP");
        servers.spawn(async move { ("metrics", serve.await) });
    }
    Ok(servers)
}

/// Resolves when a server stops before being told to, which is always a failure.
async fn server_failure(servers: &mut Servers) -> anyhow::Error {
    match servers.join_next().await {
        None => std::future::pending().await,
        Some(Ok((name, Ok(())))) => anyhow!("the {name} server stopped unexpectedly"),
        Some(Ok((name, Err(err)))) => anyhow!(err).context(format!("the {name} server failed")),
        Some(Err(err)) => anyhow!(err).context("a server task failed"),
    }
}

/// Runs `future` unless shutdown comes first, in which case it is dropped and `None` returned.
async fn or_shutdown<T>(shutdown: &Shutdown, future: impl Future<Output = T>) -> Option<T> {
    tokio::select! {
        () = shutdown.signalled() => None,
        output = future => Some(output),
    }
}

/// Resolves if leadership is lost; never without leader election.
async fn leadership_lost(elector: Option<&LeaderElector>) -> anyhow::Error {
    match elector {
        Some(elector) => elector.lost().await,
        None => std::future::pending().await,
    }
}

/// Triggers `shutdown` on SIGTERM or Ctrl-C; a second signal exits at once, as with
/// controller-runtime, for when a graceful shutdown hangs.
async fn handle_signals(shutdown: Shutdown) {
    if let Err(err) = shutdown_signal().await {
        error!(error = %err, "cannot listen for shutdown signals");
        return;
    }
    info!("shutdown signal received, stopping gracefully");
    shutdown.trigger();
    if shutdown_signal().await.is_ok() {
        error!("second shutdown signal received, exiting immediately");
        std::process::exit(1);
    }
}

#[cfg(unix)]
async fn shutdown_signal() -> io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result,
        _ = terminate.recv() => Ok(()),
    }
}

#[cfg(not(unix))]
async fn shutdown_signal() -> io::Result<()> {
    tokio::signal::ctrl_c().await
}

/// The running controllers, each on its own task.
pub struct Controllers {
    ctx: Arc<Context>,
    tasks: JoinSet<()>,
    names: HashMap<Id, &'static str>,
}

impl std::fmt::Debug for Controllers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&str> = self.names.values().copied().collect();
        names.sort_unstable();
        f.debug_struct("Controllers")
            .field("running", &names)
            .finish_non_exhaustive()
    }
}

impl Controllers {
    /// An empty set whose controllers will receive `ctx`.
    pub fn new(ctx: Arc<Context>) -> Self {
        Self {
            ctx,
            tasks: JoinSet::new(),
            names: HashMap::new(),
        }
    }

    /// Starts `controller`, named in logs by the path of its function.
    ///
    /// A controller must run until [`Context::shutdown_signal`] fires and return once it has
    /// drained; returning earlier is treated as a failure of the whole manager.
    pub fn start<F, Fut>(&mut self, controller: F)
    where
        F: FnOnce(Arc<Context>) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        // The function's path names the controller in logs without asking callers for a name.
        self.start_named(std::any::type_name::<F>(), controller);
    }

    /// Starts `controller`, called `name` in logs.
    pub fn start_named<F, Fut>(&mut self, name: &'static str, controller: F)
    where
        F: FnOnce(Arc<Context>) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let task = self.tasks.spawn(controller(self.ctx.clone()));
        self.names.insert(task.id(), name);
        info!(controller = name, "started controller");
    }

    /// Whether no controller has been started.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Resolves when a controller stops before shutdown, which is a failure; never if none runs.
    ///
    /// A controller returns when the shutdown signal tells it to drain, and the task that waits
    /// for the signal may learn of it later than this one learns of the return: a return after the
    /// signal is the drain asked for, never a failure, whichever is seen first.
    async fn failure(&mut self) -> anyhow::Error {
        loop {
            match self.tasks.join_next_with_id().await {
                None => std::future::pending().await,
                Some(Ok((id, ()))) if self.ctx.is_shutting_down() => {
                    let name = self.names.remove(&id).unwrap_or("unknown");
                    info!(controller = name, "controller stopped");
                }
                Some(Ok((id, ()))) => {
                    return anyhow!("controller {} stopped unexpectedly", self.name(id));
                }
                Some(Err(err)) if err.is_panic() => {
                    return anyhow!("controller {} panicked", self.name(err.id()));
                }
                Some(Err(err)) => {
                    return anyhow!("controller {} was cancelled", self.name(err.id()));
                }
            }
        }
    }

    /// Waits for the controllers to drain, aborting those still running after `timeout`, which is
    /// an error: their in-flight work was cut short.
    async fn drain(&mut self, timeout: Duration) -> anyhow::Result<()> {
        let Self { tasks, names, .. } = self;
        let all_stopped = async {
            while let Some(result) = tasks.join_next_with_id().await {
                let id = match &result {
                    Ok((id, ())) => *id,
                    Err(err) => err.id(),
                };
                let name = names.remove(&id).unwrap_or("unknown");
                if let Err(err) = result
                    && err.is_panic()
                {
                    error!(controller = name, "controller panicked while stopping");
                }
            }
        };
        if tokio::time::timeout(timeout, all_stopped).await.is_err() {
            let mut remaining: Vec<&str> = names.values().copied().collect();
            remaining.sort_unstable();
            tasks.shutdown().await;
            return Err(anyhow!(
                "{} controller(s) did not stop within --graceful-shutdown-timeout ({timeout:?}) and were aborted: {}",
                remaining.len(),
                remaining.join(", ")
            ));
        }
        Ok(())
    }

    fn name(&self, id: Id) -> &'static str {
        self.names.get(&id).copied().unwrap_or("unknown")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::context::tests::offline_client;

    fn controllers(shutdown: &Shutdown) -> Controllers {
        let ctx = Context::new(offline_client(), Arc::default(), None, 1, shutdown.clone());
        Controllers::new(Arc::new(ctx))
    }

    /// What a real controller does: run until the shutdown signal, then return.
    async fn well_behaved(ctx: Arc<Context>) {
        ctx.shutdown_signal().await;
    }

    async fn quits_early(_: Arc<Context>) {}

    async fn hangs(_: Arc<Context>) {
        std::future::pending::<()>().await;
    }

    async fn panics(_: Arc<Context>) {
        panic!("reconciler bug");
    }

    /// Without leader election no one would assign the objects to the shards.
    #[cfg(feature = "sharding")]
    #[tokio::test]
    async fn shards_need_leader_election() {
        let flags = Flags::try_parse_from(["manager", "--shards=3"]).unwrap();
        let err = Manager::new("test", "example.com")
            .lead_and_run(
                &flags,
                offline_client(),
                Arc::default(),
                &Readiness::default(),
                &Shutdown::new(),
            )
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("--shards=3 needs --leader-elect"),
            "{err}"
        );
        assert!(Flags::try_parse_from(["manager", "--shards=0"]).is_err());
    }

    #[test]
    fn the_lease_is_named_after_the_operator_unless_the_flag_says_otherwise() {
        let manager = Manager::new("memcached-operator", "example.com");
        let flags = Flags::try_parse_from(["manager"]).unwrap();
        assert_eq!(
            manager.leader_election_id(&flags),
            "memcached-operator.example.com"
        );
        let flags = Flags::try_parse_from(["manager", "--leader-election-id=mine"]).unwrap();
        assert_eq!(manager.leader_election_id(&flags), "mine");
    }

    #[tokio::test]
    async fn no_controller_never_fails() {
        let mut set = controllers(&Shutdown::new());
        assert!(set.is_empty());
        let failure = tokio::time::timeout(Duration::from_millis(50), set.failure()).await;
        assert!(failure.is_err());
    }

    #[tokio::test]
    async fn controllers_drain_on_shutdown() {
        let shutdown = Shutdown::new();
        let mut set = controllers(&shutdown);
        set.start(well_behaved);
        set.start(well_behaved);
        assert!(!set.is_empty());
        assert!(
            tokio::time::timeout(Duration::from_millis(50), set.failure())
                .await
                .is_err()
        );

        shutdown.trigger();
        tokio::time::timeout(Duration::from_secs(1), set.drain(Duration::from_secs(5)))
            .await
            .unwrap()
            .unwrap();
        assert!(set.tasks.is_empty());
    }

    #[tokio::test]
    async fn a_controller_that_stops_early_is_a_failure_naming_it() {
        let mut set = controllers(&Shutdown::new());
        set.start(well_behaved);
        set.start(quits_early);
        let err = set.failure().await.to_string();
        assert!(
            err.contains("quits_early") && err.contains("stopped unexpectedly"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_panicking_controller_is_a_failure() {
        let mut set = controllers(&Shutdown::new());
        set.start(panics);
        let err = set.failure().await.to_string();
        assert!(err.contains("panics") && err.contains("panicked"), "{err}");
    }

    #[tokio::test(start_paused = true)]
    async fn stuck_controllers_are_aborted_after_the_timeout() {
        let shutdown = Shutdown::new();
        let mut set = controllers(&shutdown);
        set.start(hangs);
        set.start(well_behaved);
        shutdown.trigger();
        let err = set.drain(Duration::from_secs(30)).await.unwrap_err();
        assert!(
            err.to_string().contains("1 controller(s) did not stop"),
            "{err}"
        );
        assert!(set.tasks.is_empty());
    }

    /// A reconciliation that is in flight when the signal comes: it finishes, then the controller
    /// returns, as kube-runtime's `graceful_shutdown_on` does.
    async fn drains_in_flight_work(ctx: Arc<Context>, finished: Arc<AtomicUsize>) {
        ctx.shutdown_signal().await;
        tokio::time::sleep(Duration::from_millis(1)).await;
        finished.fetch_add(1, Ordering::SeqCst);
    }

    /// The race of a real stop: the signal reaches the controllers, which return at once, and the
    /// manager, on other threads at the same time. Every run must end cleanly, after the drain.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_shutdown_signal_during_reconciliations_is_a_clean_stop_every_time() {
        const RUNS: usize = 50;
        let finished = Arc::new(AtomicUsize::new(0));
        let mut clean = 0;
        for _ in 0..RUNS {
            let shutdown = Shutdown::new();
            let mut set = controllers(&shutdown);
            set.start(well_behaved);
            set.start(well_behaved);
            let counter = finished.clone();
            set.start(move |ctx| drains_in_flight_work(ctx, counter));
            let signal = shutdown.clone();
            tokio::spawn(async move { signal.trigger() });
            let stopped = supervise(&mut set, &shutdown, None, Duration::from_secs(30)).await;
            if stopped.is_ok() && set.tasks.is_empty() {
                clean += 1;
            }
        }
        assert_eq!(clean, RUNS, "clean stops out of {RUNS}");
        assert_eq!(finished.load(Ordering::SeqCst), RUNS);
    }

    #[tokio::test(start_paused = true)]
    async fn a_controller_that_returns_before_the_signal_fails_the_manager() {
        let shutdown = Shutdown::new();
        let mut set = controllers(&shutdown);
        set.start(well_behaved);
        set.start(quits_early);
        let err = supervise(&mut set, &shutdown, None, Duration::from_secs(30))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("stopped unexpectedly"), "{err}");
        // The others were still told to stop, and drained.
        assert!(shutdown.is_triggered());
        assert!(set.tasks.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_drain_that_outlasts_the_timeout_fails_the_manager() {
        let shutdown = Shutdown::new();
        let mut set = controllers(&shutdown);
        set.start(hangs);
        shutdown.trigger();
        let started = tokio::time::Instant::now();
        let err = supervise(&mut set, &shutdown, None, Duration::from_secs(30))
            .await
            .unwrap_err();
        assert_eq!(started.elapsed(), Duration::from_secs(30));
        assert!(err.to_string().contains("did not stop"), "{err}");
    }
}
