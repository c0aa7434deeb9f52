use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "cert-manager.io", version = "v1", kind = "Certificate", namespaced)]
pub struct CertificateSpec {
    pub secret_name: String,
}
