//! Where the gadget used to live: no `mod` declares this file any more.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Gadget", namespaced)]
pub struct GadgetSpec {
    pub name: String,
}
