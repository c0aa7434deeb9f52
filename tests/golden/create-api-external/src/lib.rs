//! The tls-operator manager as a library, so that the controllers and their tests can reach
//! everything the `manager` binary wires together.
//!
//! Start with [`manager::run`]; a controller receives a [`manager::context::Context`].

pub mod manager;

pub mod api;
pub mod controllers;
pub mod external;
// +rsop:scaffold:modules
