//! Keys and values that YAML 1.1 readers (PyYAML, go-yaml v2) take for
//! booleans, nulls, numbers, dates, merge keys or `=` when written plain:
//! rsop must quote every one, and leave multi-line text a block scalar.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A filter on labels.
///
/// Its operator is one of: =, y, no, on, ~, <<.
// +rsop:rbac:groups=yaml.example.com,resources=filters,verbs=get;list
// +rsop:rbac:groups=yaml.example.com,resources=filters,resourceNames=on;y,verbs=update
// +rsop:webhook:path=/validate-yaml-example-com-v1-filter,mutating=false,failurePolicy=fail,sideEffects=None,groups=yaml.example.com,resources=on;y;no,verbs=create,versions=n;off,name=vfilter.yaml.example.com,admissionReviewVersions=v1
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "yaml.example.com",
    version = "v1",
    kind = "Filter",
    namespaced,
    shortname = "y",
    category = "on"
)]
pub struct FilterSpec {
    pub operator: Operator,
    /// A key YAML 1.1 reads as `true`.
    #[serde(rename = "on")]
    pub on_key: Option<String>,
    /// A key YAML 1.1 reads as `false`.
    #[serde(rename = "n")]
    pub n_key: Option<i32>,
    /// The merge key of YAML 1.1.
    #[serde(rename = "<<")]
    pub merge: Option<bool>,
    #[schemars(range(max = 1e16))]
    pub limit: f64,
}

#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]
pub enum Operator {
    #[serde(rename = "=")]
    Equals,
    #[serde(rename = "y")]
    Y,
    #[serde(rename = "no")]
    No,
    #[serde(rename = "on")]
    On,
    #[serde(rename = "~")]
    Tilde,
    #[serde(rename = "<<")]
    Merge,
    #[serde(rename = "OFF")]
    Off,
    #[serde(rename = "1:20")]
    Sexagesimal,
    #[serde(rename = "0755")]
    Octal,
    #[serde(rename = "1_000")]
    Thousand,
    #[serde(rename = "0x1F")]
    Hex,
    #[serde(rename = ".inf")]
    Infinity,
    #[serde(rename = "2001-12-14")]
    Date,
    #[serde(rename = "plain")]
    Plain,
}
