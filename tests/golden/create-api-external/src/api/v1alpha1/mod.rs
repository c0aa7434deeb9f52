//! The `tls.example.com/v1alpha1` API, one module per kind.

pub mod backend;
pub mod frontend;
// +rsop:scaffold:kinds

pub use backend::*;
pub use frontend::*;
// +rsop:scaffold:kind-exports
