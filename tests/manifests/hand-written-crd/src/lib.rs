//! One kind derived, one whose CRD the crate writes by hand.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::{ApiResource, CustomResourceExt};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An app.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "a.example.com", version = "v1", kind = "App", namespaced)]
pub struct AppSpec {
    pub size: i32,
}

/// A kind kept from before the crate derived its kinds: its CRD is YAML.
pub struct Legacy;

impl CustomResourceExt for Legacy {
    fn crd() -> CustomResourceDefinition {
        serde_yaml::from_str(include_str!("legacy.yaml")).expect("the CRD is valid YAML")
    }

    fn crd_name() -> &'static str {
        "legacies.a.example.com"
    }

    fn api_resource() -> ApiResource {
        ApiResource::erase::<App>(&())
    }

    fn shortnames() -> &'static [&'static str] {
        &[]
    }
}
