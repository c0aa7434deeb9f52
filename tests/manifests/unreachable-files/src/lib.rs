//! Only the modules declared here, under the cfg of a normal build, are
//! compiled: the stale and test-only files beside them must not be read.

pub mod api;
#[cfg(feature = "extra")]
pub mod extra;
#[cfg(feature = "off")]
mod off;
#[cfg(test)]
mod tests;
#[path = "generated/widgets.rs"]
pub mod widgets;

/// A kind of the tests only, inline: a normal build leaves it out.
#[cfg(test)]
mod inline_tests {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
    #[kube(group = "shop.example.com", version = "v1", kind = "Widget", namespaced)]
    pub struct WidgetSpec {
        pub in_tests: bool,
    }
}

/// A kind behind a feature that is off: left out too.
#[cfg(feature = "off")]
#[derive(kube::CustomResource, serde::Deserialize, serde::Serialize, Clone, Debug, schemars::JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Disabled", namespaced)]
pub struct DisabledSpec {
    pub never: bool,
}
