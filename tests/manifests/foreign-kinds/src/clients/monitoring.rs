//! The parts of the Prometheus Operator's PodMonitor this operator writes.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "monitoring.coreos.com", version = "v1", kind = "PodMonitor", namespaced)]
#[serde(rename_all = "camelCase")]
pub struct PodMonitorSpec {
    pub job_label: Option<String>,
}
