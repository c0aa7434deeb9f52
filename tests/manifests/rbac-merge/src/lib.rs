//! RBAC markers spread over files, in both spellings, to be merged and sorted.

pub mod controllers;

// +rsop:rbac:groups=apps,resources=deployments,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=create;update;patch;delete
// +rsop:rbac:groups="",resources=events,verbs=create;patch
