//! Stage 3: the documents. [`crd`] assembles each kind's versions into a
//! CRD (versions merged as [`merge_crds`] calls decide); [`rbac`] and
//! [`webhook`] turn comment markers (their shared syntax: [`markers`]) into
//! `role.yaml` and the webhooks' `manifests.yaml`.

pub mod crd;
pub mod markers;
pub mod merge_crds;
pub mod rbac;
pub mod webhook;
