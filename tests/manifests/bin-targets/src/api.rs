use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A cache in front of a service.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "cache.example.com", version = "v1", kind = "Cache", namespaced)]
pub struct CacheSpec {
    /// Its size in MiB.
    pub size_mib: u32,
}
