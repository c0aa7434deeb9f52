use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Compiled with the default features.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Extra", namespaced)]
pub struct ExtraSpec {
    pub level: u8,
}
