use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Reached through `#[path]`.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Widget", namespaced)]
pub struct WidgetSpec {
    pub color: String,
}
