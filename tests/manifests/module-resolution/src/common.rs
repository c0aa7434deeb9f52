use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Shared by several kinds.
#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]
pub struct Shared {
    pub name: String,
}

#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Low,
    High,
}
