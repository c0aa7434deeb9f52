//! Conversion between the versions of `Memcached`. `v1alpha1`, the storage version, is the hub:
//! every other version (a spoke) converts to it and back, so each new version needs one pair of
//! conversions rather than one per other version. The API server calls the conversion webhook
//! whenever a client reads or writes a version other than the one it stores.

use rsop_runtime::webhook::{Hub, Webhooks};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::api::{v1, v1alpha1};

/// Registers the kind's conversions with the server's conversion endpoint.
pub fn register(webhooks: &mut Webhooks) {
    webhooks.conversion(Hub::<v1alpha1::Memcached>::new().spoke::<v1::Memcached>());
}

impl TryFrom<v1::Memcached> for v1alpha1::Memcached {
    type Error = serde_json::Error;

    /// From the spoke `v1` to the hub.
    fn try_from(spoke: v1::Memcached) -> Result<Self, Self::Error> {
        // TODO(user): both versions have the same fields so far, so spec and status carry over
        // through their JSON form. Map the fields by hand once the versions differ.
        Ok(Self {
            metadata: spoke.metadata,
            spec: same_fields(spoke.spec)?,
            status: spoke.status.map(same_fields).transpose()?,
        })
    }
}

impl TryFrom<v1alpha1::Memcached> for v1::Memcached {
    type Error = serde_json::Error;

    /// From the hub to the spoke `v1`.
    fn try_from(hub: v1alpha1::Memcached) -> Result<Self, Self::Error> {
        // TODO(user): the reverse of the conversion above. A field only the hub has can be kept
        // in an annotation, so that a round trip through this version loses nothing.
        Ok(Self {
            metadata: hub.metadata,
            spec: same_fields(hub.spec)?,
            status: hub.status.map(same_fields).transpose()?,
        })
    }
}

/// Moves a value into the type of the same shape in another version, through its JSON form.
fn same_fields<T: Serialize, U: DeserializeOwned>(value: T) -> Result<U, serde_json::Error> {
    serde_json::from_value(serde_json::to_value(value)?)
}

#[cfg(test)]
mod tests {
    use rsop_runtime::webhook::CONVERSION_PATH;
    use rsop_runtime::webhook::testing::{conversion_review, post_review};
    use serde_json::{Value, json};

    use super::*;

    /// A Memcached of `version` as the API server stores it.
    fn object(version: &str) -> Value {
        json!({
            "apiVersion": format!("cache.example.com/{version}"),
            "kind": "Memcached",
            "metadata": {
                "name": "example",
                "namespace": "default",
                "uid": "c2d1f2a4-4b53-4b8e-9e8f-1f0c6a1d2e3f",
                "resourceVersion": "42",
                "generation": 2,
            },
            "spec": {"foo": "bar", "count": 1},
        })
    }

    fn webhooks() -> Webhooks {
        let mut webhooks = Webhooks::default();
        register(&mut webhooks);
        webhooks
    }

    #[test]
    fn v1_converts_to_the_hub_and_back_unchanged() {
        let spoke: v1::Memcached = serde_json::from_value(object("v1")).unwrap();
        let hub = v1alpha1::Memcached::try_from(spoke.clone()).unwrap();
        let back = v1::Memcached::try_from(hub).unwrap();
        assert_eq!(
            serde_json::to_value(back).unwrap(),
            serde_json::to_value(spoke).unwrap()
        );
    }

    /// Through the server, as the API server asks: `v1` to the hub, then back.
    #[tokio::test]
    async fn the_server_converts_v1_to_the_hub_and_back_unchanged() {
        let sent = object("v1");
        let review = conversion_review("cache.example.com/v1alpha1", std::slice::from_ref(&sent));
        let to_hub = post_review(webhooks(), CONVERSION_PATH, &review).await;
        assert_eq!(
            to_hub["response"]["result"]["status"], "Success",
            "{to_hub}"
        );
        assert_eq!(to_hub["response"]["uid"], review["request"]["uid"]);
        let hub = &to_hub["response"]["convertedObjects"][0];
        assert_eq!(hub["apiVersion"], "cache.example.com/v1alpha1");
        assert_eq!(hub["metadata"], sent["metadata"]);

        let review = conversion_review("cache.example.com/v1", std::slice::from_ref(hub));
        let back = post_review(webhooks(), CONVERSION_PATH, &review).await;
        // What the server returns is the object as the spoke's type writes it.
        let spoke: v1::Memcached = serde_json::from_value(sent).unwrap();
        assert_eq!(
            back["response"]["convertedObjects"][0],
            serde_json::to_value(spoke).unwrap()
        );
    }
}
