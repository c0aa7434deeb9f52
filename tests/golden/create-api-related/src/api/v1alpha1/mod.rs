//! The `monitoring.example.com/v1alpha1` API, one module per kind.

pub mod exporter;
// +rsop:scaffold:kinds

pub use exporter::*;
// +rsop:scaffold:kind-exports
