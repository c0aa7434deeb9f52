//! Watches that recover from an API server outage as soon as the API server is back.
//!
//! `Controller::new` and `Controller::owns` put one backoff on all of a controller's watches
//! together: client-go's reflector backoff, 0.8 s doubling to 30 s and reset only after two quiet
//! minutes. After an API server restart every watch receives `410 Gone` (its resource version has
//! expired), which is the normal signal to list again, and that shared backoff turned those
//! signals into up to a minute and more of stalled watches. [`resilient`] gives each watch a
//! backoff of its own, re-lists at once after a 410, and resets the delay on the first event that
//! gets through, so a controller catches up within [`MAX_DELAY`] of the API server's return.
//!
//! [`CachesReady`] tells reconciliations when the caches they read have had their first list.
//!
//! ```no_run
//! use futures::StreamExt;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::Api;
//! use kube::runtime::{reflector, watcher};
//! use rsop_runtime::controller::{cache, watch};
//!
//! # async fn run(api: Api<ConfigMap>, stop: impl std::future::Future<Output = ()> + Send + 'static) {
//! let (store, writer) = reflector::store();
//! let events = cache::fill(watch::resilient(watcher(api, watcher::Config::default())), writer);
//! let ready = watch::CachesReady::new([watch::first_list(&store)], stop);
//! tokio::spawn(events.for_each(|_| async {}));
//! // In a reconciliation: read the cache once it has had its first list.
//! if ready.wait().await {
//!     let _configs = store.state();
//! }
//! # }
//! ```

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hash};
use std::time::Duration;

use futures::future::{self, BoxFuture, FutureExt, Shared};
use futures::{Stream, StreamExt, stream};
use kube::Resource;
use kube::runtime::reflector::Store;
use kube::runtime::watcher::{self, Event};
use tracing::{debug, warn};

use crate::controller::backoff;

/// Delay before the first retry of a failed watch; it doubles with each further failure.
const BASE_DELAY: Duration = Duration::from_millis(500);
/// Longest delay between retries: the most a watch lags behind an API server that is back.
pub const MAX_DELAY: Duration = Duration::from_secs(4);

/// `watch` (a `watcher` or `metadata_watcher` stream) with its own backoff, for a controller's
/// trigger streams. Errors are logged here and never reach the controller, whose shared backoff
/// would otherwise pause its other watches too.
pub fn resilient<T: Send + 'static>(
    watch: impl Stream<Item = watcher::Result<Event<T>>> + Send + 'static,
) -> impl Stream<Item = watcher::Result<Event<T>>> + Send {
    // Whether the last list followed an expiry and the watch started from it has neither
    // delivered an event nor failed since: an expiry then is no longer the normal signal but a
    // loop, and backs off like any error.
    let relisted = false;
    let state = (watch.boxed(), WatchBackoff::default(), relisted);
    stream::unfold(state, |(mut watch, mut backoff, mut relisted)| async move {
        loop {
            match watch.next().await? {
                // The watcher has already gone back to listing: waiting would only delay that.
                Err(watcher::Error::WatchError(status)) if status.code == 410 && !relisted => {
                    debug!("watch expired, listing again");
                    relisted = true;
                }
                Err(err) => {
                    if !matches!(&err, watcher::Error::WatchError(status) if status.code == 410) {
                        relisted = false;
                    }
                    let delay = backoff.next_delay();
                    warn!(error = %err, retry_in = ?delay, "watch failed");
                    tokio::time::sleep(delay).await;
                }
                Ok(event) => {
                    match event {
                        // `Init` only announces a list, which may still fail.
                        Event::Init => {}
                        Event::InitApply(_) | Event::InitDone => backoff.reset(),
                        Event::Apply(_) | Event::Delete(_) => {
                            backoff.reset();
                            relisted = false;
                        }
                    }
                    return Some((Ok(event), (watch, backoff, relisted)));
                }
            }
        }
    })
}

/// Whether a controller's watch caches have had their first list, for any number of
/// reconciliations to wait on at once.
///
/// A reconciliation that reads a cache before its first list would take an object not listed yet
/// for a missing one, so it waits. kube-runtime 5.0's `Store::wait_until_ready` cannot be that
/// wait: it polls one shared oneshot receiver, which keeps the waker of the last task that polled
/// it only, so of the reconciliations waiting together (all of them, when objects already exist at
/// start-up) one is woken and the others wait forever, each holding a concurrency slot. Here each
/// store's `wait_until_ready` is awaited by one shared future, polled by one task at a time with a
/// waker that wakes every task waiting on [`CachesReady::wait`]. Once kube-runtime wakes every
/// waiter itself, reconciliations can await `wait_until_ready` directly.
#[derive(Clone)]
pub struct CachesReady(Shared<BoxFuture<'static, bool>>);

impl std::fmt::Debug for CachesReady {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachesReady")
            .field("ready", &self.0.peek().copied())
            .finish()
    }
}

impl CachesReady {
    /// Ready once every one of `caches` (from [`first_list`]) is, or never, if `stop` (the manager's
    /// shutdown signal) fires first.
    pub fn new(
        caches: impl IntoIterator<Item = BoxFuture<'static, bool>>,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        let listed = future::join_all(caches).map(|ready| ready.into_iter().all(|r| r));
        let ready = async move {
            tokio::select! {
                ready = listed => ready,
                () = stop => false,
            }
        };
        Self(ready.boxed().shared())
    }

    /// Resolves once every cache has had its first list, with `true`; with `false` when one never
    /// will because the manager is stopping, and the reconciliation should end without acting.
    pub async fn wait(&self) -> bool {
        self.0.clone().await
    }
}

/// The first list of `store`'s watch, for [`CachesReady::new`]: `false` when its watch is gone.
pub fn first_list<K>(store: &Store<K>) -> BoxFuture<'static, bool>
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + Hash + Clone + Send + Sync,
{
    let store = store.clone();
    async move { store.wait_until_ready().await.is_ok() }.boxed()
}

/// Exponential backoff of one watch, from [`BASE_DELAY`] to [`MAX_DELAY`], each delay stretched by
/// up to a quarter at random so that the watches of many operators do not return to a recovering
/// API server in step.
#[derive(Debug, Default)]
pub struct WatchBackoff {
    failures: u32,
}

impl WatchBackoff {
    /// Counts one more failure and returns how long to wait before retrying.
    pub fn next_delay(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        let delay = backoff::exponential(BASE_DELAY, MAX_DELAY, self.failures);
        // RandomState's keys come from the OS's randomness: enough for jitter, without a
        // dependency on a random number crate.
        let random = RandomState::new().hash_one(self.failures) % 1024;
        let jitter = u32::try_from(random).unwrap_or(0);
        delay + delay / 4 * jitter / 1024
    }

    /// Starts over from [`BASE_DELAY`].
    pub fn reset(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use http::{Method, StatusCode};
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use kube::Api;
    use kube::runtime::reflector;
    use kube::runtime::watcher::watcher;
    use serde_json::json;
    use tokio::sync::mpsc;
    use tokio::time::Instant;

    use super::*;
    use crate::testing::{ApiServer, Request, mock_client_without_rbac};

    /// `n` tasks that wait on `ready` together, as reconciliations of objects listed at start-up do.
    fn waiters(ready: &CachesReady, n: usize) -> Vec<tokio::task::JoinHandle<bool>> {
        (0..n)
            .map(|_| {
                let ready = ready.clone();
                tokio::spawn(async move { ready.wait().await })
            })
            .collect()
    }

    /// Lets every spawned task run until it waits.
    async fn settle() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    #[tokio::test(start_paused = true)]
    async fn every_waiter_is_woken_when_the_caches_are_listed() {
        let (config_maps, mut config_maps_writer) = reflector::store::<ConfigMap>();
        let (secrets, mut secrets_writer) = reflector::store::<Secret>();
        let ready = CachesReady::new(
            [first_list(&config_maps), first_list(&secrets)],
            std::future::pending(),
        );
        let waiting = waiters(&ready, 20);
        settle().await;
        for task in &waiting {
            assert!(!task.is_finished(), "ready before the first list");
        }
        // One cache listed is not enough.
        config_maps_writer.apply_watcher_event(&Event::Init);
        config_maps_writer.apply_watcher_event(&Event::InitDone);
        settle().await;
        assert!(waiting.iter().all(|task| !task.is_finished()));

        secrets_writer.apply_watcher_event(&Event::Init);
        secrets_writer.apply_watcher_event(&Event::InitDone);
        for task in waiting {
            let woken = tokio::time::timeout(Duration::from_secs(1), task).await;
            assert!(woken.expect("a waiter was never woken").unwrap());
        }
        // Later reconciliations find the caches ready at once.
        assert!(ready.wait().await);
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_releases_every_waiter() {
        let (config_maps, _writer) = reflector::store::<ConfigMap>();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let ready = CachesReady::new([first_list(&config_maps)], async {
            let _ = stopped.await;
        });
        let waiting = waiters(&ready, 5);
        settle().await;
        stop.send(()).unwrap();
        for task in waiting {
            let woken = tokio::time::timeout(Duration::from_secs(1), task).await;
            assert!(!woken.expect("a waiter was never woken").unwrap());
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_cache_whose_watch_is_gone_is_never_ready() {
        let (config_maps, writer) = reflector::store::<ConfigMap>();
        let ready = CachesReady::new([first_list(&config_maps)], std::future::pending());
        let waiting = waiters(&ready, 3);
        settle().await;
        drop(writer);
        for task in waiting {
            assert!(!task.await.unwrap());
        }
    }

    fn in_range(delay: Duration, base: Duration) -> bool {
        delay >= base && delay <= base + base / 4
    }

    #[test]
    fn delays_double_to_the_cap_with_jitter_and_reset() {
        let mut backoff = WatchBackoff::default();
        let bases = [500, 1000, 2000, 4000, 4000, 4000].map(Duration::from_millis);
        for base in bases {
            let delay = backoff.next_delay();
            assert!(in_range(delay, base), "{delay:?} for {base:?}");
        }
        backoff.reset();
        assert!(in_range(backoff.next_delay(), BASE_DELAY));
    }

    /// Runs a resilient watch of ConfigMaps, sending the name of every object it yields.
    fn watch_config_maps() -> (ApiServer, mpsc::UnboundedReceiver<String>) {
        let (client, server) = mock_client_without_rbac();
        let api: Api<ConfigMap> = Api::namespaced(client, "default");
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut events = std::pin::pin!(resilient(watcher(api, watcher::Config::default())));
            while let Some(event) = events.next().await {
                if let Ok(Event::InitApply(object) | Event::Apply(object)) = event
                    && tx.send(object.metadata.name.unwrap_or_default()).is_err()
                {
                    break;
                }
            }
        });
        (server, rx)
    }

    async fn expect_list(server: &mut ApiServer) -> Request {
        let request = server.next_request().await;
        assert_eq!(request.method, Method::GET);
        assert!(!request.uri.contains("watch=true"), "{}", request.uri);
        request
    }

    fn list(version: &str, names: &[&str]) -> serde_json::Value {
        let items: Vec<_> = names
            .iter()
            .map(|name| json!({"metadata": {"name": name, "namespace": "default", "resourceVersion": version}}))
            .collect();
        json!({"apiVersion": "v1", "kind": "ConfigMapList",
               "metadata": {"resourceVersion": version}, "items": items})
    }

    /// A watch answered with one `410 Gone` event, as after an API server restart.
    fn expired() -> String {
        let status = json!({"type": "ERROR", "object": {"apiVersion": "v1", "kind": "Status",
            "status": "Failure", "reason": "Expired", "code": 410,
            "message": "too old resource version: 1 (5)"}});
        format!("{status}\n")
    }

    #[tokio::test(start_paused = true)]
    async fn an_expired_watch_lists_again_at_once() {
        let (mut server, mut names) = watch_config_maps();
        expect_list(&mut server)
            .await
            .respond(StatusCode::OK, &list("1", &["a"]));
        assert_eq!(names.recv().await.unwrap(), "a");

        let watch = server.next_request().await;
        assert!(watch.uri.contains("watch=true"), "{}", watch.uri);
        let expired_at = Instant::now();
        watch.respond_raw(StatusCode::OK, expired());

        expect_list(&mut server)
            .await
            .respond(StatusCode::OK, &list("5", &["b"]));
        assert_eq!(names.recv().await.unwrap(), "b");
        assert_eq!(expired_at.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn an_expiry_right_after_a_list_backs_off() {
        let (mut server, mut names) = watch_config_maps();
        for version in ["1", "2"] {
            expect_list(&mut server)
                .await
                .respond(StatusCode::OK, &list(version, &["a"]));
            assert_eq!(names.recv().await.unwrap(), "a");
            let watch = server.next_request().await;
            watch.respond_raw(StatusCode::OK, expired());
        }
        // The second expiry came with no watch event since the first: the list waits.
        let expired_at = Instant::now();
        let request = expect_list(&mut server).await;
        let waited = expired_at.elapsed();
        assert!(in_range(waited, BASE_DELAY), "{waited:?}");
        drop(request);
    }

    #[tokio::test(start_paused = true)]
    async fn failures_back_off_and_the_first_success_resets_the_delay() {
        let (mut server, mut names) = watch_config_maps();
        let mut delays = Vec::new();
        let mut last = Instant::now();
        for _ in 0..5 {
            let request = expect_list(&mut server).await;
            delays.push(last.elapsed());
            last = Instant::now();
            request.respond_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailable",
                "down",
            );
        }
        let request = expect_list(&mut server).await;
        delays.push(last.elapsed());
        request.respond(StatusCode::OK, &list("1", &["a"]));
        assert_eq!(names.recv().await.unwrap(), "a");
        // The watch that follows fails once: the delay starts over.
        let watch = server.next_request().await;
        last = Instant::now();
        watch.respond_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            "down",
        );
        let request = server.next_request().await;
        let after_reset = last.elapsed();
        drop(request);

        assert_eq!(delays[0], Duration::ZERO);
        let bases = [500, 1000, 2000, 4000, 4000].map(Duration::from_millis);
        for (delay, base) in delays[1..].iter().zip(bases) {
            assert!(in_range(*delay, base), "{delays:?}");
        }
        assert!(in_range(after_reset, BASE_DELAY), "{after_reset:?}");
    }

    /// The API server goes away for 10 s and comes back with every resource version expired: the
    /// watch must see new objects within [`MAX_DELAY`] (and its jitter) of the return, after every
    /// outage alike.
    #[tokio::test(start_paused = true)]
    async fn catches_up_within_the_maximum_delay_after_each_outage() {
        let (mut server, mut names) = watch_config_maps();
        expect_list(&mut server)
            .await
            .respond(StatusCode::OK, &list("1", &["before"]));
        assert_eq!(names.recv().await.unwrap(), "before");

        let mut catch_up = Vec::new();
        for outage in 0..3 {
            let back_at = Instant::now() + Duration::from_secs(10);
            // The open watch breaks; reconnections fail until the API server is back.
            let mut request = server.next_request().await;
            request.respond_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailable",
                "down",
            );
            loop {
                request = server.next_request().await;
                if Instant::now() >= back_at {
                    break;
                }
                request.respond_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "ServiceUnavailable",
                    "down",
                );
            }
            // The first request after the return resumes the old watch, which has expired.
            let name = format!("after-{outage}");
            if request.uri.contains("watch=true") {
                request.respond_raw(StatusCode::OK, expired());
                request = expect_list(&mut server).await;
            }
            request.respond(StatusCode::OK, &list(&format!("{}", 10 + outage), &[&name]));
            assert_eq!(names.recv().await.unwrap(), name);
            catch_up.push(Instant::now() - back_at);
        }
        for delay in &catch_up {
            assert!(*delay <= MAX_DELAY + MAX_DELAY / 4, "{catch_up:?}");
        }
        println!("time from the end of each outage to the next event: {catch_up:?}");
    }
}
