use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A test fixture: compiled by `cargo test` only.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Gadget", namespaced)]
pub struct GadgetSpec {
    pub fixture: bool,
}
