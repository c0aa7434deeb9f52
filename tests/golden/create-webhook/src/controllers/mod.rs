//! The controllers, one module per kind, each registered with the manager in `src/main.rs`
//! by its `run` function.

pub mod cron_job;
pub mod memcached;
// +rsop:scaffold:controller-modules
