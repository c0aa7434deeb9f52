//! The `Frontend` kind.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// TODO(user): replace the example fields with the desired state of a Frontend, then run
// `rsop manifests` to regenerate the CRD. Every field needs a doc comment: it is the description
// users read in `kubectl explain frontend.spec`.

/// The desired state of a Frontend.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
// Clippy takes printer columns that share a key and value, such as two `type_ = "integer"`, for a
// duplicated attribute: https://github.com/rust-lang/rust-clippy/issues/13238.
#[allow(clippy::duplicated_attributes)]
#[kube(
    group = "tls.example.com",
    version = "v1alpha1",
    kind = "Frontend",
    namespaced,
    status = "FrontendStatus",
    doc = "A Frontend: its desired state in spec, and what the operator observed in status.",
    printcolumn(
        name = "Ready",
        type_ = "string",
        description = "Whether the operator has reconciled the latest spec",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct FrontendSpec {
    /// An example optional field: free-form text, left out when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,

    /// An example bounded field: a number from 0 to 10, 0 when left out.
    #[serde(default)]
    #[schemars(range(min = 0, max = 10))]
    pub count: i32,
}

/// The observed state of a Frontend, written by the operator.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FrontendStatus {
    /// The latest observations of the Frontend's state, one per type. `Ready` is `True` once the
    /// operator has reconciled the current spec, `False` with the reason when it could not.
    // A map keyed by type lets other field managers own conditions of their own types under
    // server-side apply, as kubebuilder's `+listType=map` does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,

    /// The `metadata.generation` this status was computed for; lower than the object's generation
    /// while the operator has not yet caught up with a change of spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
