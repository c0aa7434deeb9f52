//! The versions a generated project builds on: the one place they are set.
//! Templates read them through [`context`]; `rsop version` prints the main
//! ones.

use std::collections::BTreeMap;

use serde::Serialize;

/// kube-rs: client, runtime and derive.
pub const KUBE: &str = "5.0";
/// k8s-openapi, the Kubernetes API types kube-rs is built on.
pub const K8S_OPENAPI: &str = "0.29";
/// The Kubernetes API version the generated project compiles against.
pub const KUBERNETES: &str = "1.34";
/// schemars, which kube-derive uses to make CRD schemas.
pub const SCHEMARS: &str = "1.2";
/// rsop-runtime, the manager a generated project is built on: released with rsop, at rsop's
/// version.
pub const RSOP_RUNTIME: &str = env!("CARGO_PKG_VERSION");
/// The Rust toolchain image of the generated project's Dockerfile.
pub const RUST: &str = "1.95";

/// Every crate a generated project may depend on, with the version
/// requirement written to its Cargo.toml.
const CRATES: &[(&str, &str)] = &[
    ("clap", "4.6"),
    ("futures", "0.3"),
    ("http", "1.3"),
    ("k8s-openapi", K8S_OPENAPI),
    ("kube", KUBE),
    ("rsop-runtime", RSOP_RUNTIME),
    ("schemars", SCHEMARS),
    ("serde", "1.0"),
    ("serde_json", "1.0"),
    ("thiserror", "2.0"),
    ("tokio", "1.48"),
    ("tracing", "0.1"),
];

/// The version requirement of one crate of the generated project.
///
/// # Panics
/// When `name` is not in the table: a bug in rsop's scaffolding code.
pub fn crate_version(name: &str) -> &'static str {
    CRATES.iter().find(|(n, _)| *n == name).map_or_else(
        || panic!("no pinned version for crate `{name}`"),
        |(_, v)| *v,
    )
}

/// Every version a template may need.
#[derive(Debug, Serialize)]
pub struct Versions {
    /// Crate name -> version requirement.
    pub crates: BTreeMap<&'static str, &'static str>,
    /// The k8s-openapi feature that selects the Kubernetes version.
    pub k8s_openapi_feature: String,
    /// The Kubernetes release the project compiles against, and its API server tests run on.
    pub kubernetes: &'static str,
    pub rust: &'static str,
    /// The rsop release that scaffolds (PROJECT's `cliVersion`), which the
    /// project's Makefile, CI and dev container install.
    pub rsop: &'static str,
}

/// The versions, as the templates see them.
pub fn context() -> Versions {
    Versions {
        crates: CRATES.iter().copied().collect(),
        k8s_openapi_feature: format!("v{}", KUBERNETES.replace('.', "_")),
        kubernetes: KUBERNETES,
        rust: RUST,
        rsop: crate::project::CLI_VERSION,
    }
}
