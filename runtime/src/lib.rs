//! The manager of a [kube-rs](https://kube.rs) operator: what controller-runtime is to a Go
//! operator, for the `Controller` of kube-runtime.
//!
//! kube-runtime runs one controller. An operator in production needs more around it, and this
//! crate holds that, so that the operator's own code is its types, its reconcile functions and its
//! webhooks:
//!
//! - a [`Manager`] with kubebuilder's [`Flags`] (`--leader-elect`, `--metrics-bind-address`,
//!   `--health-probe-bind-address`, `--namespace`, ...), logging, `/healthz` and `/readyz`
//!   probes, graceful shutdown that drains the reconciliations in flight on SIGTERM;
//! - [`leader`] election through a `coordination.k8s.io` Lease, with client-go's algorithm, that
//!   releases the Lease on shutdown so that a standby takes over at once;
//! - [`metrics`] under controller-runtime's names (so its dashboards and alerts work unchanged),
//!   served over HTTPS with the requests authenticated and authorized against the API server;
//! - sharding over replicas (`--shards`, feature `sharding`), each replica reconciling its share;
//! - the plumbing of a controller ([`controller`]): watch caches that restart their watch,
//!   indexes, per-object backoff, a deadline per reconciliation, status conditions written with
//!   server-side apply and announced with events, reconcile metrics;
//! - a webhook server (feature `webhook`): defaulting, validating and conversion webhooks as plain
//!   functions on typed objects, over TLS with certificate reload;
//! - for tests: a scripted API server on kube's mock client (feature `testing`), and a control
//!   plane of etcd and kube-apiserver started from `KUBEBUILDER_ASSETS` with no Go toolchain
//!   (feature `envtest`).
//!
//! An existing operator keeps its `Controller::new(..).run(..)`: it runs it in a function the
//! manager starts, with the [`Context`] the manager hands it.
//!
//! ```no_run
//! use std::process::ExitCode;
//! use std::sync::Arc;
//!
//! use futures::StreamExt;
//! use k8s_openapi::api::apps::v1::Deployment;
//! use kube::runtime::controller::{Action, Controller};
//! use kube::runtime::watcher;
//! use rsop_runtime::{Context, Flags, Manager};
//!
//! async fn reconcile(_: Arc<Deployment>, _: Arc<()>) -> Result<Action, kube::Error> {
//!     Ok(Action::await_change())
//! }
//!
//! async fn deployments(ctx: Arc<Context>) {
//!     Controller::new(ctx.api::<Deployment>(), watcher::Config::default())
//!         // Reconciliations in flight finish before the manager releases the Lease and exits.
//!         .graceful_shutdown_on(ctx.shutdown_signal())
//!         .run(reconcile, |_, _, _| Action::await_change(), Arc::new(()))
//!         .for_each(|_| async {})
//!         .await;
//! }
//!
//! #[tokio::main]
//! async fn main() -> ExitCode {
//!     Manager::new("deployment-operator", "example.com")
//!         .controller(deployments)
//!         // `--leader-elect`, `--metrics-bind-address`, ... from the command line.
//!         .run(Flags::parse_args())
//!         .await
//! }
//! ```
//!
//! `rsop init` scaffolds a whole project on this crate; see the
//! [rsop documentation](https://github.com/rsop-dev/rsop) for that, and `docs/runtime.md` there
//! for bringing the crate to an operator rsop did not make.
//!
//! # Features
//!
//! | Feature | What it adds |
//! |---|---|
//! | `sharding` | `--shards`, [`Manager::shard`] and the `shard` module |
//! | `webhook` | the webhook server, [`Manager::webhooks`] and the `webhook` module |
//! | `testing` | the `testing` module: kube's mock client as a scripted API server |
//! | `envtest` | the `envtest` module: etcd and kube-apiserver for tests |
//! | `e2e` | the `e2e` module: the checks of an end-to-end suite |
//!
//! k8s-openapi needs the final crate to choose a Kubernetes version (`v1_34`, say); this crate
//! chooses none.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod auth;
pub mod context;
pub mod controller;
#[cfg(feature = "e2e")]
pub mod e2e;
#[cfg(feature = "envtest")]
pub mod envtest;
pub mod flags;
pub mod leader;
pub mod logging;
pub mod manager;
pub mod metrics;
pub mod server;
#[cfg(feature = "sharding")]
pub mod shard;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tls;
#[cfg(feature = "webhook")]
pub mod webhook;

pub use context::{Context, Shutdown};
pub use controller::Reconciler;
pub use flags::Flags;
pub use manager::Manager;
