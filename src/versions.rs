//! The versions a generated project builds on: the one place they are set.
//! Templates read them through [`context`]; `rsop version` prints them.

use serde::Serialize;

/// kube-rs: client, runtime and derive.
pub const KUBE: &str = "5.0.0";
/// k8s-openapi, the Kubernetes API types kube-rs is built on.
pub const K8S_OPENAPI: &str = "0.29.0";
/// The Kubernetes API version the generated project compiles against.
pub const KUBERNETES: &str = "1.34";
/// schemars, which kube-derive uses to make CRD schemas.
pub const SCHEMARS: &str = "1.2.0";
/// The Rust toolchain of the generated project's Dockerfile and CI.
pub const RUST: &str = "1.95";

/// Every version a template may need, keyed by the name templates use.
#[derive(Debug, Serialize)]
pub struct Versions {
    pub kube: &'static str,
    pub k8s_openapi: &'static str,
    /// The k8s-openapi feature that selects the Kubernetes version.
    pub k8s_openapi_feature: String,
    pub schemars: &'static str,
    pub rust: &'static str,
}

/// The versions, as the templates see them.
pub fn context() -> Versions {
    Versions {
        kube: KUBE,
        k8s_openapi: K8S_OPENAPI,
        k8s_openapi_feature: format!("v{}", KUBERNETES.replace('.', "_")),
        schemars: SCHEMARS,
        rust: RUST,
    }
}
