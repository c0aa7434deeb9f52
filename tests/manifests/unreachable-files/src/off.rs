use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Only with the `off` feature, which is not a default one.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Optional", namespaced)]
pub struct OptionalSpec {
    pub level: u8,
}
