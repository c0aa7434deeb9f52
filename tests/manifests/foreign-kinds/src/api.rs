use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A backup of a volume, taken through the VolumeSnapshot API.
// +kubebuilder:rbac:groups=snapshot.storage.k8s.io,resources=volumesnapshots,verbs=get;list;watch;create
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "backup.example.com", version = "v1", kind = "Backup", namespaced)]
pub struct BackupSpec {
    /// The claim to snapshot.
    pub claim: String,
}
