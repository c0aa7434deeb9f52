//! The `cache.example.com/v1alpha1` API, one module per kind.

pub mod memcached;
// +rsop:scaffold:kinds

pub use memcached::*;
// +rsop:scaffold:kind-exports
