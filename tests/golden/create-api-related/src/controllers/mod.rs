//! The controllers, one module per kind, each registered with the manager in `src/main.rs`
//! by its `run` function.

pub mod deployment;
pub mod deployment_scaler;
pub mod exporter;
// +rsop:scaffold:controller-modules
