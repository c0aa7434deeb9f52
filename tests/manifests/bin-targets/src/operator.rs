//! The operator: its kinds are in the binary's own modules.

// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch

mod api;

fn main() {}
