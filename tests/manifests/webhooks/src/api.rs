use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// CronJobSpec is the desired state of a CronJob.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "batch.example.com", version = "v1", kind = "CronJob", namespaced)]
pub struct CronJobSpec {
    /// The schedule, in cron format.
    pub schedule: String,
}
