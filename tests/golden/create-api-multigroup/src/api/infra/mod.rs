//! The `infra.example.com` API group, one module per version.

pub mod v1;
// +rsop:scaffold:api-modules
