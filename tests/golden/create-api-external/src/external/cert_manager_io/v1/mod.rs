//! The `cert-manager.io/v1` API, defined by another project: one module per kind.

pub mod certificate;
pub mod issuer;
// +rsop:scaffold:kinds

pub use certificate::*;
pub use issuer::*;
// +rsop:scaffold:kind-exports
