//! Two versions of one kind in sibling modules, merged into one CRD.

pub mod v1 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// The stored version.
    #[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
    #[kube(group = "cache.example.com", version = "v1", kind = "Memcached", namespaced, shortname = "mc")]
    pub struct MemcachedSpec {
        pub size: i32,
        pub image: String,
    }
}

pub mod v1alpha1 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// The first version, still served.
    #[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
    #[kube(group = "cache.example.com", version = "v1alpha1", kind = "Memcached", namespaced, shortname = "mc", storage = false, deprecated = "use cache.example.com/v1")]
    pub struct MemcachedSpec {
        pub size: i32,
    }
}
