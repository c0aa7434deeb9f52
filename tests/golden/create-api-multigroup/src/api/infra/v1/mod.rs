//! The `infra.example.com/v1` API, one module per kind.

pub mod cluster;
// +rsop:scaffold:kinds

pub use cluster::*;
// +rsop:scaffold:kind-exports
