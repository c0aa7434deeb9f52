//! The controllers, one module per kind (grouped by API group), each registered with the manager in `src/main.rs`
//! by its `run` function.

pub mod apps;
pub mod infra;
// +rsop:scaffold:controller-modules
