//! The `cert-manager.io` API group, defined by another project: one module per version.

pub mod v1;
// +rsop:scaffold:api-modules
