//! The project's webhooks: the functions that default, validate and convert its objects. The
//! manager serves them over HTTPS (see `rsop_runtime::webhook`); `rsop create webhook` adds each
//! kind's here, and `rsop manifests` reads their `+rsop:webhook` markers.

use rsop_runtime::webhook::Webhooks;

pub mod cron_job;
pub mod memcached_conversion;
pub mod pod;
// +rsop:scaffold:webhook-modules

/// Every webhook the manager serves.
pub fn all() -> Webhooks {
    let mut webhooks = Webhooks::default();
    cron_job::register(&mut webhooks);
    memcached_conversion::register(&mut webhooks);
    pod::register(&mut webhooks);
    // +rsop:scaffold:webhooks
    webhooks
}
