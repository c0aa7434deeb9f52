//! Client types of kinds other projects install, written by hand with the
//! fields this operator reads.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The part of a Gateway API HTTPRoute this operator reads.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "gateway.networking.k8s.io",
    version = "v1",
    kind = "HTTPRoute",
    root = "HttpRoute",
    namespaced
)]
pub struct HttpRouteSpec {
    pub hostnames: Option<Vec<String>>,
}

/// Another project's sandbox, as far as this operator needs it.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "agents.x-k8s.io", version = "v1alpha1", kind = "Sandbox", namespaced)]
pub struct SandboxSpec {
    pub image: String,
}
