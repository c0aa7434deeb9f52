use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A backup of a volume.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "backup.example.com", version = "v1", kind = "Backup", namespaced)]
pub struct BackupSpec {
    /// The claim to back up.
    pub claim: String,
}

/// Where a restore reads from: a spec that is an enum.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "backup.example.com", version = "v1", kind = "Restore", namespaced)]
#[serde(rename_all = "camelCase")]
pub enum RestoreSpec {
    /// From a backup of this namespace.
    FromBackup { name: String },
    /// From a URL.
    FromUrl(String),
}

/// A kind the crdgen does not print (its CRD is kept by hand), in the
/// group of kinds it does: an API group is one project's, so it is owned.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "backup.example.com", version = "v1", kind = "Schedule", namespaced)]
pub struct ScheduleSpec {
    /// A cron expression.
    pub cron: String,
}
