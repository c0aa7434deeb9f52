//! The `apps.example.com` API group, one module per version.

pub mod v1beta1;
// +rsop:scaffold:api-modules
