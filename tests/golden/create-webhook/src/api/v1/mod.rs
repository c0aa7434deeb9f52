//! The `batch.example.com/v1` API, one module per kind.

pub mod cron_job;
pub mod memcached;
// +rsop:scaffold:kinds

pub use cron_job::*;
pub use memcached::*;
// +rsop:scaffold:kind-exports
