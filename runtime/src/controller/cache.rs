//! What the watch caches hold, and lookups into them that cost what they find, not what the cache
//! holds.
//!
//! A reflector `Store` finds an object by name in O(1) and anything else by a scan of every object
//! it holds. A controller that scans on each reconciliation or event does O(N) work each time and
//! O(N²) in all as its objects grow, where controller-runtime answers from an index. An [`Index`]
//! is such an index: the objects of each key (the pods of an instance, the objects of an owner),
//! kept from the same watch events as the store it goes with.
//!
//! [`fill`] is the other half of a cache's cost: what each cached object holds.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kube::ResourceExt;
//! use kube::runtime::reflector::ObjectRef;
//! use kube::runtime::watcher::Event;
//! use rsop_runtime::controller::cache::Index;
//!
//! // The pods of each `app` label, kept up to date by the pods' watch events (`Index::follow`).
//! let by_app = Index::new(|pod: &Pod| pod.labels().get("app").cloned());
//! let mut pod = Pod::default();
//! pod.metadata.name = Some("web-0".into());
//! pod.metadata.namespace = Some("default".into());
//! pod.metadata.labels = Some([("app".to_owned(), "web".to_owned())].into());
//! by_app.apply(&Event::Apply(pod.clone()));
//! assert_eq!(by_app.get(&"web".to_owned()), [ObjectRef::from(&pod)]);
//! ```

use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::{Arc, PoisonError, RwLock};

use futures::{Stream, StreamExt};
use kube::Resource;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::{ObjectRef, ObjectRefExtra};
use kube::runtime::watcher::{self, Event};

/// The objects of each key of a watch cache, for a key function of the object.
pub struct Index<K: Resource, Key> {
    key: fn(&K) -> Option<Key>,
    entries: Arc<RwLock<Listed<K, Key>>>,
}

impl<K: Resource, Key> std::fmt::Debug for Index<K, Key> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index").finish_non_exhaustive()
    }
}

impl<K: Resource, Key> Clone for Index<K, Key> {
    fn clone(&self) -> Self {
        Self {
            key: self.key,
            entries: Arc::clone(&self.entries),
        }
    }
}

/// The entries as of the last event, and those of a list under way, which replace them once it is
/// complete, as the store's objects do.
struct Listed<K: Resource, Key> {
    current: Entries<K, Key>,
    listing: Option<Entries<K, Key>>,
}

struct Entries<K: Resource, Key> {
    by_key: HashMap<Key, HashSet<ObjectRef<K>>>,
    /// The key of each object, to move it when its key changes.
    key_of: HashMap<ObjectRef<K>, Key>,
}

impl<K: Resource, Key> Default for Entries<K, Key> {
    fn default() -> Self {
        Self {
            by_key: HashMap::new(),
            key_of: HashMap::new(),
        }
    }
}

impl<K, Key> Entries<K, Key>
where
    K: Resource,
    K::DynamicType: Eq + Hash + Clone,
    Key: Eq + Hash + Clone,
{
    fn insert(&mut self, object: ObjectRef<K>, key: Option<Key>) {
        self.remove(&object);
        if let Some(key) = key {
            self.by_key
                .entry(key.clone())
                .or_default()
                .insert(object.clone());
            self.key_of.insert(object, key);
        }
    }

    fn remove(&mut self, object: &ObjectRef<K>) {
        if let Some(key) = self.key_of.remove(object)
            && let Some(objects) = self.by_key.get_mut(&key)
        {
            objects.remove(object);
            if objects.is_empty() {
                self.by_key.remove(&key);
            }
        }
    }
}

impl<K, Key> Index<K, Key>
where
    K: Resource,
    K::DynamicType: Default + Eq + Hash + Clone,
    Key: Eq + Hash + Clone,
{
    /// An empty index of the objects by `key`; an object whose key is `None` is not indexed.
    pub fn new(key: fn(&K) -> Option<Key>) -> Self {
        Self {
            key,
            entries: Arc::new(RwLock::new(Listed {
                current: Entries::default(),
                listing: None,
            })),
        }
    }

    /// The objects whose key is `key`, in no particular order.
    pub fn get(&self, key: &Key) -> Vec<ObjectRef<K>> {
        // A panic while the lock was held cannot leave the maps half updated: each update is
        // made of infallible steps.
        let entries = self.entries.read().unwrap_or_else(PoisonError::into_inner);
        entries
            .current
            .by_key
            .get(key)
            .map(|objects| objects.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Takes one watch event into the index.
    pub fn apply(&self, event: &Event<K>) {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        match event {
            Event::Apply(object) => entries
                .current
                .insert(reference(object), (self.key)(object)),
            Event::Delete(object) => entries.current.remove(&reference(object)),
            Event::Init => entries.listing = Some(Entries::default()),
            Event::InitApply(object) => {
                if let Some(listing) = &mut entries.listing {
                    listing.insert(reference(object), (self.key)(object));
                }
            }
            Event::InitDone => {
                if let Some(listing) = entries.listing.take() {
                    entries.current = listing;
                }
            }
        }
    }

    /// `events` with each event taken into the index on its way to the store. The index takes it
    /// first, so that a reconciliation woken by the store's first list finds the index complete.
    pub fn follow<S>(
        &self,
        events: S,
    ) -> impl Stream<Item = watcher::Result<Event<K>>> + use<K, Key, S>
    where
        S: Stream<Item = watcher::Result<Event<K>>>,
    {
        let index = self.clone();
        events.inspect(move |event| {
            if let Ok(event) = event {
                index.apply(event);
            }
        })
    }
}

/// The UID of `object`'s controller, from its owner references: what the caches of owned objects
/// are indexed by.
pub fn controller_uid<K: Resource>(object: &K) -> Option<String> {
    object
        .meta()
        .owner_references
        .iter()
        .flatten()
        .find(|owner| owner.controller == Some(true))
        .map(|owner| owner.uid.clone())
}

/// The reference to `object` an index keeps: its namespace and name only. `ObjectRef::from` also
/// copies the resource version and UID, which an index held twice per object would pay for and
/// never read (references compare by namespace and name alone).
fn reference<K>(object: &K) -> ObjectRef<K>
where
    K: Resource,
    K::DynamicType: Default,
{
    let mut reference = ObjectRef::from(object);
    reference.extra = ObjectRefExtra::default();
    reference
}

/// Drops from `object`, before it is cached, what this operator never reads: its `managedFields`,
/// the field ownership records of server-side apply. They are most of the size of an object that
/// several managers write (a Deployment: this operator, the Deployment controller, `kubectl
/// scale`), and the cache would hold them for every object it watches.
pub fn lean<K: Resource>(object: &mut K) {
    object.meta_mut().managed_fields = None;
}

/// `events` taken into the cache `writer` fills, each object made [`lean`] first: how every watch
/// cache of the controllers is filled.
pub fn fill<K, S>(events: S, writer: Writer<K>) -> impl Stream<Item = watcher::Result<Event<K>>>
where
    K: Resource + Clone,
    K::DynamicType: Eq + Hash + Clone,
    S: Stream<Item = watcher::Result<Event<K>>>,
{
    events.modify(lean::<K>).reflect(writer)
}

#[cfg(test)]
mod tests {
    use futures::stream;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
    use kube::ResourceExt;
    use kube::api::ObjectMeta;
    use kube::runtime::reflector;

    use super::*;

    fn config_map(name: &str, app: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                labels: Some([("app".to_owned(), app.to_owned())].into()),
                managed_fields: Some(vec![ManagedFieldsEntry {
                    manager: Some("kubectl".into()),
                    ..ManagedFieldsEntry::default()
                }]),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    fn by_app() -> Index<ConfigMap, String> {
        Index::new(|cm| cm.labels().get("app").cloned())
    }

    fn names(refs: Vec<ObjectRef<ConfigMap>>) -> Vec<String> {
        let mut names: Vec<String> = refs.into_iter().map(|r| r.name).collect();
        names.sort();
        names
    }

    #[tokio::test]
    async fn the_cache_holds_objects_without_their_managed_fields() {
        let (store, writer) = reflector::store();
        let events = stream::iter([
            Ok(Event::Init),
            Ok(Event::InitApply(config_map("a", "web"))),
            Ok(Event::InitDone),
            Ok(Event::Apply(config_map("b", "web"))),
        ]);
        let passed: Vec<_> = fill(events, writer).collect().await;
        assert_eq!(passed.len(), 4);
        let cached = store.state();
        assert_eq!(cached.len(), 2);
        for cm in cached {
            assert_eq!(cm.metadata.managed_fields, None, "{}", cm.name_any());
            assert_eq!(cm.labels().get("app").map(String::as_str), Some("web"));
        }
    }

    #[test]
    fn an_object_moves_with_its_key_and_leaves_when_deleted() {
        let index = by_app();
        let mut a = config_map("a", "web");
        a.metadata.uid = Some("0b6bd2f4-0000-4000-8000-000000000001".into());
        a.metadata.resource_version = Some("42".into());
        index.apply(&Event::Apply(a));
        // The index keeps namespace and name only.
        let [kept] = index.get(&"web".into()).try_into().unwrap();
        assert_eq!((kept.extra.uid, kept.extra.resource_version), (None, None));
        index.apply(&Event::Apply(config_map("b", "web")));
        index.apply(&Event::Apply(config_map("c", "db")));
        assert_eq!(names(index.get(&"web".into())), ["a", "b"]);
        index.apply(&Event::Apply(config_map("b", "db")));
        assert_eq!(names(index.get(&"web".into())), ["a"]);
        assert_eq!(names(index.get(&"db".into())), ["b", "c"]);
        index.apply(&Event::Delete(config_map("c", "db")));
        assert_eq!(names(index.get(&"db".into())), ["b"]);
        // An object without a key is in no entry.
        let mut unlabelled = config_map("a", "web");
        unlabelled.metadata.labels = None;
        index.apply(&Event::Apply(unlabelled));
        assert!(index.get(&"web".into()).is_empty());
    }

    #[test]
    fn a_list_replaces_the_entries_once_it_is_complete() {
        let index = by_app();
        index.apply(&Event::Apply(config_map("gone", "web")));
        index.apply(&Event::Init);
        index.apply(&Event::InitApply(config_map("new", "web")));
        // Until the list is complete, lookups see the entries as they were.
        assert_eq!(names(index.get(&"web".into())), ["gone"]);
        index.apply(&Event::InitDone);
        assert_eq!(names(index.get(&"web".into())), ["new"]);
    }

    #[tokio::test]
    async fn follow_takes_each_event_of_the_stream() {
        let index = by_app();
        let events = stream::iter([
            Ok(Event::Apply(config_map("a", "web"))),
            Err(watcher::Error::NoResourceVersion),
            Ok(Event::Apply(config_map("b", "web"))),
        ]);
        let passed: Vec<_> = index.follow(events).collect().await;
        assert_eq!(passed.len(), 3);
        assert_eq!(names(index.get(&"web".into())), ["a", "b"]);
    }

    /// A start-up with 10,000 objects reads them in pages of 500, each continuing the last, so no
    /// response holds them all, and the cache holds every one, without its managed fields, once the
    /// last page is in.
    #[tokio::test]
    async fn a_start_up_list_of_ten_thousand_objects_is_paged_into_a_lean_cache() {
        use futures::StreamExt;
        use http::StatusCode;
        use kube::Api;
        use kube::runtime::watcher::watcher;
        use serde_json::json;

        use crate::testing::{finished, mock_client_without_rbac};

        const OBJECTS: usize = 10_000;
        const PAGE: usize = 500;
        let (client, mut server) = mock_client_without_rbac();
        let api: Api<ConfigMap> = Api::namespaced(client, "default");
        let (store, writer) = reflector::store::<ConfigMap>();
        let events = fill(watcher(api, watcher::Config::default()), writer);
        let listed = tokio::spawn(async move {
            let mut events = std::pin::pin!(events);
            while let Some(event) = events.next().await {
                if matches!(event, Ok(Event::InitDone)) {
                    break;
                }
            }
        });
        for page in 0..OBJECTS / PAGE {
            let request = server.next_request().await;
            let (path, query) = request.uri.split_once('?').unwrap();
            let params: Vec<&str> = query.split('&').collect();
            assert_eq!(path, "/api/v1/namespaces/default/configmaps");
            assert!(params.contains(&"limit=500"), "{}", request.uri);
            let continued = params.iter().any(|p| p.starts_with("continue="));
            assert_eq!(continued, page > 0, "{}", request.uri);
            if page > 0 {
                let token = format!("continue=page-{page}");
                assert!(params.contains(&token.as_str()), "{}", request.uri);
            }
            let items: Vec<serde_json::Value> = (page * PAGE..(page + 1) * PAGE)
                .map(|i| serde_json::to_value(config_map(&format!("config-{i}"), "web")).unwrap())
                .collect();
            let next = if page + 1 < OBJECTS / PAGE {
                format!("page-{}", page + 1)
            } else {
                String::new()
            };
            let list = json!({
                "apiVersion": "v1",
                "kind": "ConfigMapList",
                "metadata": {"resourceVersion": "1", "continue": next},
                "items": items,
            });
            request.respond(StatusCode::OK, &list);
        }
        finished(listed).await;
        let cached = store.state();
        assert_eq!(cached.len(), OBJECTS);
        assert!(cached.iter().all(|c| c.metadata.managed_fields.is_none()));
    }
}
