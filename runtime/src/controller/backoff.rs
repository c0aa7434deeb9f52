//! Per-object exponential backoff for retrying failed reconciliations.
//!
//! kube-runtime leaves the retry delay to each controller's error policy and tells it nothing about
//! earlier failures, so the count of consecutive failures is kept here.
//!
//! ```
//! use std::time::Duration;
//!
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::runtime::reflector::ObjectRef;
//! use rsop_runtime::controller::backoff::Backoff;
//!
//! let backoff = Backoff::<ConfigMap>::default();
//! let object = ObjectRef::new("settings").within("default");
//! assert_eq!(backoff.failed(object.clone()), Duration::from_millis(500));
//! assert_eq!(backoff.failed(object.clone()), Duration::from_secs(1));
//! backoff.succeeded(&object);
//! assert_eq!(backoff.failed(object), Duration::from_millis(500));
//! ```

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use kube::runtime::reflector::{Lookup, ObjectRef};

/// Delay before retrying after a first failure; it doubles with each further consecutive failure.
const BASE: Duration = Duration::from_millis(500);
/// Longest delay between retries.
const MAX: Duration = Duration::from_secs(5 * 60);

/// Consecutive failures per object.
///
/// The delay doubles from 500 ms with each consecutive failure, up to 5 minutes, the way
/// controller-runtime's default rate limiter treats Go operators (which starts at 5 ms and caps at
/// 1000 s): a transient conflict is retried almost at once, while an object that keeps failing,
/// usually until someone fixes its spec or the cluster, costs little and still picks up the fix
/// within minutes. Like controller-runtime's, it adds no jitter: retries of different objects
/// spread out on their own, as their failures start at different times.
pub struct Backoff<K: Lookup>
where
    K::DynamicType: Eq + std::hash::Hash,
{
    failures: Mutex<HashMap<ObjectRef<K>, u32>>,
}

impl<K: Lookup> std::fmt::Debug for Backoff<K>
where
    K::DynamicType: Eq + std::hash::Hash,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let failing = self
            .failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("Backoff")
            .field("failing", &failing)
            .finish()
    }
}

impl<K: Lookup> Default for Backoff<K>
where
    K::DynamicType: Eq + std::hash::Hash,
{
    fn default() -> Self {
        Self {
            failures: Mutex::default(),
        }
    }
}

impl<K: Lookup> Backoff<K>
where
    K::DynamicType: Eq + std::hash::Hash,
{
    /// Counts one more failure of `object` and returns how long to wait before retrying it.
    pub fn failed(&self, object: ObjectRef<K>) -> Duration {
        // A panic cannot leave a counter half-updated, so a poisoned map is still sound.
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let count = failures.entry(object).or_default();
        *count = count.saturating_add(1);
        delay(*count)
    }

    /// Forgets the failures of `object`. An object leaves the map only this way, so call it on
    /// every success, which includes the final cleanup of a deleted object.
    pub fn succeeded(&self, object: &ObjectRef<K>) {
        self.failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(object);
    }
}

/// The retry delay after `failures` consecutive failures.
fn delay(failures: u32) -> Duration {
    exponential(BASE, MAX, failures)
}

/// `base` doubled for each failure after the first, up to `max`; `base` for none or one.
pub fn exponential(base: Duration, max: Duration, failures: u32) -> Duration {
    let exponent = failures.saturating_sub(1).min(31);
    base.saturating_mul(1 << exponent).min(max)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    #[test]
    fn delay_doubles_up_to_the_cap() {
        assert_eq!(delay(1), Duration::from_millis(500));
        assert_eq!(delay(2), Duration::from_secs(1));
        assert_eq!(delay(4), Duration::from_secs(4));
        assert_eq!(delay(10), Duration::from_secs(256));
        assert_eq!(delay(11), MAX);
        assert_eq!(delay(u32::MAX), MAX);
    }

    #[test]
    fn failures_are_counted_per_object_until_a_success() {
        let backoff = Backoff::<ConfigMap>::default();
        let a = ObjectRef::new("a").within("default");
        let b = ObjectRef::new("b").within("default");
        let delays: Vec<_> = (0..3).map(|_| backoff.failed(a.clone())).collect();
        assert_eq!(delays, [500, 1000, 2000].map(Duration::from_millis));
        assert_eq!(backoff.failed(b), BASE);

        backoff.succeeded(&a);
        assert_eq!(backoff.failed(a), BASE);
    }
}
