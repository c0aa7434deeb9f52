//! The `Memcached` kind: a Deployment of the `memcached:1.6.26-alpine` image, run and kept in shape
//! by the operator.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of a Memcached.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
// Clippy takes printer columns that share a key and value, such as two `type_ = "integer"`, for a
// duplicated attribute: https://github.com/rust-lang/rust-clippy/issues/13238.
#[allow(clippy::duplicated_attributes)]
#[kube(
    group = "cache.example.com",
    version = "v1alpha1",
    kind = "Memcached",
    namespaced,
    status = "MemcachedStatus",
    doc = "A Memcached: pods of a container image, run by a Deployment the operator owns.",
    printcolumn(
        name = "Size",
        type_ = "integer",
        description = "Number of pods asked for",
        json_path = ".spec.size"
    ),
    printcolumn(
        name = "Ready",
        type_ = "integer",
        description = "Number of pods ready",
        json_path = ".status.readyReplicas"
    ),
    printcolumn(
        name = "Available",
        type_ = "string",
        description = "Whether every pod asked for is ready",
        json_path = r#".status.conditions[?(@.type=="Available")].status"#
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedSpec {
    /// Number of pods to run, from 0 to 10.
    #[schemars(range(min = 0, max = 10))]
    pub size: i32,

    /// Container image the pods run.
    #[serde(default = "default_image")]
    // An image reference is never empty and never holds whitespace: refused at admission rather
    // than left to fail in the pods.
    #[schemars(length(min = 1), regex(pattern = r"^\S+$"))]
    pub image: String,

    /// Port the container listens on, declared on the pods when set.
    #[serde(
        default = "default_container_port",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(min = 1, max = 65535))]
    pub container_port: Option<i32>,
}

fn default_image() -> String {
    "memcached:1.6.26-alpine".into()
}

fn default_container_port() -> Option<i32> {
    Some(11211)
}

/// The observed state of a Memcached, written by the operator.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedStatus {
    /// The latest observations of the Memcached's state, one per type: `Available` when every pod
    /// asked for is ready, `Progressing` while the Deployment rolls out or scales, and `Degraded`
    /// when it cannot make progress or cannot be applied.
    // A map keyed by type lets other field managers own conditions of their own types under
    // server-side apply, as kubebuilder's `+listType=map` does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,

    /// Number of pods of the Deployment that are ready.
    #[serde(default)]
    pub ready_replicas: i32,

    /// Names of the pods of this Memcached, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pod_names: Vec<String>,

    /// The `metadata.generation` this status was computed for; lower than the object's generation
    /// while the operator has not yet caught up with a change of spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
