//! Two versions of a kind, neither marked with `storage`: the crdgen
//! binary merges them and stores `v2`, as projects did before kube-derive
//! had the key.

pub mod v1 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// The first version.
    #[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
    #[kube(group = "shop.example.com", version = "v1", kind = "Widget", namespaced)]
    pub struct WidgetSpec {
        pub size: i32,
    }
}

pub mod v2 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// The second version.
    #[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
    #[kube(group = "shop.example.com", version = "v2", kind = "Widget", namespaced)]
    pub struct WidgetSpec {
        pub size: i32,
        pub color: Option<String>,
    }
}
