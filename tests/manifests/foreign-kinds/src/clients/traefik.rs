use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "traefik.io", version = "v1alpha1", kind = "IngressRoute", namespaced)]
pub struct IngressRouteSpec {
    pub entry_points: Vec<String>,
}

/// Disabled schema: the CRD is Knative's.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug)]
#[kube(group = "serving.knative.dev", version = "v1", kind = "Service", namespaced, schema = "disabled")]
pub struct ServiceSpec {
    pub template: serde_json::Value,
}
