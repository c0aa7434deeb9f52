//! The tls-operator manager as a library, so that the controllers and their tests can reach
//! everything the `manager` binary wires together.
//!
//! Start with [`manager::run`]; a controller receives a [`context::Context`].

pub mod auth;
pub mod cli;
pub mod context;
pub mod leader;
pub mod logging;
pub mod manager;
pub mod metrics;
pub mod server;
pub mod tls;

pub mod api;
pub mod controllers;
pub mod external;
// +rsop:scaffold:modules
