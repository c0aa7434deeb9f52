//! The kinds Kubernetes itself defines that `create api --resource=false`,
//! `--owns` and `--watches` accept: their API group and version, plural,
//! scope and where k8s-openapi (the version rsop pins) has their Rust type.
//! A controller on one of them has no types and no CRD in the project.

use crate::manifests::diagnostics::did_you_mean;
use crate::project::names;
use crate::{Error, Result};

/// A kind of the Kubernetes API, as k8s-openapi types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct K8sKind {
    /// The API group, `core` for the legacy group (`apiVersion: v1`), as
    /// kubebuilder names it.
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
}

const fn kind(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
) -> K8sKind {
    K8sKind {
        group,
        version,
        kind,
        plural,
        namespaced,
    }
}

/// The kinds an operator commonly reconciles, owns or watches, all in
/// k8s-openapi's `api` module for the pinned Kubernetes version.
pub const KINDS: &[K8sKind] = &[
    kind("core", "v1", "ConfigMap", "configmaps", true),
    kind("core", "v1", "Endpoints", "endpoints", true),
    kind("core", "v1", "LimitRange", "limitranges", true),
    kind("core", "v1", "Namespace", "namespaces", false),
    kind("core", "v1", "Node", "nodes", false),
    kind("core", "v1", "PersistentVolume", "persistentvolumes", false),
    kind(
        "core",
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        true,
    ),
    kind("core", "v1", "Pod", "pods", true),
    kind("core", "v1", "PodTemplate", "podtemplates", true),
    kind(
        "core",
        "v1",
        "ReplicationController",
        "replicationcontrollers",
        true,
    ),
    kind("core", "v1", "ResourceQuota", "resourcequotas", true),
    kind("core", "v1", "Secret", "secrets", true),
    kind("core", "v1", "Service", "services", true),
    kind("core", "v1", "ServiceAccount", "serviceaccounts", true),
    kind(
        "apps",
        "v1",
        "ControllerRevision",
        "controllerrevisions",
        true,
    ),
    kind("apps", "v1", "DaemonSet", "daemonsets", true),
    kind("apps", "v1", "Deployment", "deployments", true),
    kind("apps", "v1", "ReplicaSet", "replicasets", true),
    kind("apps", "v1", "StatefulSet", "statefulsets", true),
    kind(
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
    ),
    kind("batch", "v1", "CronJob", "cronjobs", true),
    kind("batch", "v1", "Job", "jobs", true),
    kind("coordination.k8s.io", "v1", "Lease", "leases", true),
    kind(
        "discovery.k8s.io",
        "v1",
        "EndpointSlice",
        "endpointslices",
        true,
    ),
    kind("networking.k8s.io", "v1", "Ingress", "ingresses", true),
    kind(
        "networking.k8s.io",
        "v1",
        "IngressClass",
        "ingressclasses",
        false,
    ),
    kind(
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        "networkpolicies",
        true,
    ),
    kind(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
    ),
    kind(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        false,
    ),
    kind(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
    ),
    kind("rbac.authorization.k8s.io", "v1", "Role", "roles", true),
    kind(
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
        true,
    ),
    kind(
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        false,
    ),
    kind(
        "storage.k8s.io",
        "v1",
        "StorageClass",
        "storageclasses",
        false,
    ),
];

impl K8sKind {
    /// The Rust module of the type: `k8s_openapi::api::apps::v1`.
    pub fn module(&self) -> String {
        let first = self.group.split('.').next().unwrap_or(self.group);
        format!("k8s_openapi::api::{first}::{}", self.version)
    }

    /// The type's path: `k8s_openapi::api::apps::v1::Deployment`.
    pub fn rust_path(&self) -> String {
        format!("{}::{}", self.module(), self.kind)
    }

    /// `apiVersion`: `v1` for the core group, else `<group>/<version>`.
    pub fn api_version(&self) -> String {
        names::api_version(self.group, self.version)
    }

    /// How `--owns` and `--watches` spell it: `apps/v1/Deployment`, `v1/Pod`.
    pub fn reference(&self) -> String {
        format!("{}/{}", self.api_version(), self.kind)
    }
}

/// Whether `group` is one of the Kubernetes groups of [`KINDS`].
pub fn is_k8s_group(group: &str) -> bool {
    group.is_empty() || KINDS.iter().any(|k| k.group == group)
}

/// The Kubernetes kind `group`/`version`/`kind` (`group` empty or `core`
/// for the legacy group), if k8s-openapi has it.
pub fn find(group: &str, version: &str, kind: &str) -> Option<&'static K8sKind> {
    let group = if group.is_empty() { "core" } else { group };
    KINDS
        .iter()
        .find(|k| k.group == group && k.version == version && k.kind == kind)
}

/// The error for a kind of a Kubernetes group that [`KINDS`] lacks, with
/// the closest kind as help. `what` names it in the message.
pub fn unknown(what: &str, group: &str, version: &str, kind: &str) -> Error {
    let shown = names::api_version(group, version);
    let message = format!("{what}: Kubernetes has no kind `{kind}` in `{shown}`");
    // The same kind in another group or version first, then a near spelling.
    if let Some(other) = KINDS.iter().find(|k| k.kind == kind) {
        return Error::user_with_help(
            message,
            format!(
                "did you mean `{}`? `{kind}` is in group `{}`, version `{}`",
                other.reference(),
                other.group,
                other.version
            ),
        );
    }
    let names: Vec<&str> = KINDS.iter().map(|k| k.kind).collect();
    let close = did_you_mean(kind, &names).and_then(|close| KINDS.iter().find(|k| k.kind == close));
    let help = match close {
        Some(k) => format!("did you mean `{}` (`{}`)?", k.kind, k.reference()),
        None => format!("rsop knows these Kubernetes kinds: {}", names.join(", ")),
    };
    Error::user_with_help(message, help)
}

/// Parses an `--owns` / `--watches` reference: `group/version/Kind`, or
/// `version/Kind` for the core group. Returns (group, version, kind).
pub fn parse_reference(flag: &str, value: &str) -> Result<(String, String, String)> {
    let parts: Vec<&str> = value.split('/').collect();
    let (group, version, kind) = match parts.as_slice() {
        [version, kind] => ("core", *version, *kind),
        [group, version, kind] => (*group, *version, *kind),
        _ => {
            return Err(Error::user_with_help(
                format!("invalid `--{flag}` value `{value}`: expected `group/version/Kind`"),
                "name a kind as `apps/v1/Deployment`, or `v1/Pod` for the core group",
            ));
        }
    };
    if group.is_empty() || version.is_empty() || kind.is_empty() {
        return Err(Error::user_with_help(
            format!("invalid `--{flag}` value `{value}`: it has an empty part"),
            "name a kind as `apps/v1/Deployment`, or `v1/Pod` for the core group",
        ));
    }
    Ok((group.to_string(), version.to_string(), kind.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_unique_and_their_plurals_lowercase() {
        for (i, k) in KINDS.iter().enumerate() {
            assert!(
                KINDS[i + 1..].iter().all(|o| o.kind != k.kind),
                "{} twice",
                k.kind
            );
            assert_eq!(k.plural, k.plural.to_ascii_lowercase());
        }
    }

    #[test]
    fn paths_and_references() {
        let d = find("apps", "v1", "Deployment").unwrap();
        assert_eq!(d.rust_path(), "k8s_openapi::api::apps::v1::Deployment");
        assert_eq!(d.reference(), "apps/v1/Deployment");
        let i = find("networking.k8s.io", "v1", "Ingress").unwrap();
        assert_eq!(i.rust_path(), "k8s_openapi::api::networking::v1::Ingress");
        let p = find("", "v1", "Pod").unwrap();
        assert_eq!(p.rust_path(), "k8s_openapi::api::core::v1::Pod");
        assert_eq!(p.reference(), "v1/Pod");
        assert!(find("apps", "v1beta1", "Deployment").is_none());
    }

    #[test]
    fn unknown_kinds_get_a_suggestion() {
        let err = unknown("unknown kind", "apps", "v1", "Deploymnt");
        assert_eq!(
            err.help(),
            Some("did you mean `Deployment` (`apps/v1/Deployment`)?")
        );
        let err = unknown("unknown kind", "core", "v1", "Deployment");
        assert!(
            err.help().unwrap().contains("`apps/v1/Deployment`"),
            "{err}"
        );
    }

    #[test]
    fn references_parse() {
        assert_eq!(
            parse_reference("owns", "apps/v1/Deployment").unwrap(),
            ("apps".into(), "v1".into(), "Deployment".into())
        );
        assert_eq!(
            parse_reference("owns", "v1/Pod").unwrap(),
            ("core".into(), "v1".into(), "Pod".into())
        );
        assert!(parse_reference("owns", "Pod").is_err());
        assert!(parse_reference("owns", "a/b/c/d").is_err());
        assert!(parse_reference("owns", "/v1/Pod").is_err());
    }
}
