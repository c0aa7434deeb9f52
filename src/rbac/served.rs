//! What the API server serves, to hold a shipped rule's groups and
//! resources against: Kubernetes' own resources (every one k8s-openapi
//! types, in any Kubernetes minor it covers) and their subresources, the
//! project's CRDs, and the kinds its code names. A rule that names nothing
//! served grants nothing, and says so with the name it likely meant.

use std::collections::{BTreeMap, BTreeSet};

use crate::manifests::diagnostics::did_you_mean;
use crate::project::names;

use super::shipped::Rule;

/// `group  plural  kind  namespaced  first  last`, written by
/// `scripts/k8s-resources.py`.
const RESOURCES: &str = include_str!("../../data/k8s-openapi/resources.tsv");

/// The subresources of Kubernetes' resources, which k8s-openapi does not
/// type. Every resource has `finalizers` too: the admission check of an
/// owner reference that blocks its owner's deletion asks for it.
const SUBRESOURCES: &[(&str, &[&str])] = &[
    (
        "pods",
        &[
            "status",
            "log",
            "exec",
            "attach",
            "portforward",
            "proxy",
            "eviction",
            "binding",
            "ephemeralcontainers",
            "resize",
        ],
    ),
    // The kubelet authorizes its own API as subresources of its node.
    (
        "nodes",
        &[
            "status",
            "proxy",
            "metrics",
            "stats",
            "log",
            "spec",
            "configz",
            "healthz",
            "pods",
            "checkpoint",
        ],
    ),
    ("services", &["status", "proxy"]),
    ("namespaces", &["status", "finalize"]),
    ("deployments", &["status", "scale", "rollback"]),
    ("replicasets", &["status", "scale"]),
    ("statefulsets", &["status", "scale"]),
    ("replicationcontrollers", &["status", "scale"]),
    ("serviceaccounts", &["token"]),
    ("certificatesigningrequests", &["status", "approval"]),
];

/// Subresources every kind may have: its status (a CRD's too), its scale (a
/// CRD's), and the finalizers an owner reference asks for.
const ANY: &[&str] = &["status", "scale", "finalizers"];

/// The API the rules are held against.
#[derive(Debug, Default)]
pub struct Served {
    /// Group -> its resources' plurals -> their subresources.
    groups: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
    /// Groups only partly known (another project's, named by the code):
    /// a resource of theirs not seen is not judged.
    partial: BTreeSet<String>,
    /// Kubernetes' own groups, whose subresources are known; another API's
    /// may serve any (`routes/custom-host` of `OpenShift`).
    kubernetes: BTreeSet<String>,
    /// Kubernetes' lower-case kind names, by group: `configmap` ->
    /// `configmaps`.
    singular: BTreeMap<(String, String), String>,
}

impl Served {
    /// Kubernetes' resources, and `own` (group, plural): the project's
    /// CRDs and kinds; `named`: the kinds its code requests, of groups
    /// that may serve more.
    pub fn new<'a>(
        own: impl IntoIterator<Item = (&'a str, &'a str)>,
        named: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Served {
        let mut served = Served::default();
        for line in RESOURCES.lines().filter(|l| !l.starts_with('#')) {
            let fields: Vec<&str> = line.split('\t').collect();
            let [group, plural, kind, ..] = fields.as_slice() else {
                continue;
            };
            let subresources = SUBRESOURCES
                .iter()
                .find(|(r, _)| r == plural)
                .map(|(_, subs)| subs.iter().map(|s| (*s).to_string()).collect())
                .unwrap_or_default();
            served.add(group, plural, subresources);
            served.kubernetes.insert((*group).to_string());
            served.singular.insert(
                ((*group).to_string(), kind.to_ascii_lowercase()),
                (*plural).to_string(),
            );
        }
        for (group, plural) in own {
            served.add(group, plural, BTreeSet::new());
        }
        for (group, plural) in named {
            let plural = plural.split('/').next().unwrap_or(plural);
            if !served.groups.contains_key(group) {
                served.partial.insert(group.to_string());
            }
            served.add(group, plural, BTreeSet::new());
        }
        served
    }

    fn add(&mut self, group: &str, plural: &str, subresources: BTreeSet<String>) {
        self.groups
            .entry(group.to_string())
            .or_default()
            .entry(plural.to_string())
            .or_default()
            .extend(subresources);
    }

    /// What a rule names that nothing serves, each with the name it likely
    /// meant: a resource none of its groups serves. (A rule of several
    /// groups and resources grants each pair; those that exist are enough.)
    pub fn unserved(&self, rule: &Rule) -> Vec<(String, Option<String>)> {
        let mut out = Vec::new();
        if !rule.rule.urls.is_empty() || rule.rule.groups.iter().any(|g| g == "*") {
            return out;
        }
        for resource in &rule.rule.resources {
            let problems: Vec<Option<(String, Option<String>)>> = rule
                .rule
                .groups
                .iter()
                .map(|group| self.unserved_resource(group, resource))
                .collect();
            if problems.iter().any(Option::is_none) {
                continue;
            }
            // The problem that knows what was meant, else the first.
            let mut problems = problems.into_iter().flatten();
            let first = problems.next();
            if let Some(problem) = problems
                .find(|(_, meant)| meant.is_some())
                .filter(|_| first.as_ref().is_some_and(|(_, m)| m.is_none()))
                .or(first)
            {
                out.push(problem);
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// `resource` of `group`, if nothing serves it: what is wrong, and
    /// what it likely meant.
    pub fn unserved_resource(
        &self,
        group: &str,
        resource: &str,
    ) -> Option<(String, Option<String>)> {
        let (base, sub) = match resource.split_once('/') {
            Some((base, sub)) => (base, Some(sub)),
            None => (resource, None),
        };
        let shown_group = |g: &str| {
            if g.is_empty() {
                "the core group (\"\")".to_string()
            } else {
                format!("the group `{g}`")
            }
        };
        let Some(resources) = self.groups.get(group) else {
            // A group nothing here serves: a typo of one that serves the
            // resource, or another project's API, which is not judged.
            let serving: Vec<&str> = self
                .groups
                .iter()
                .filter(|(_, r)| base == "*" || r.contains_key(base))
                .map(|(g, _)| g.as_str())
                .collect();
            let meant = if group == "core" && serving.contains(&"") {
                Some("")
            } else {
                did_you_mean(group, &serving)
            }?;
            return Some((
                format!(
                    "`{resource}` of {}: no API serves that group",
                    shown_group(group)
                ),
                Some(format!("apiGroups: [\"{meant}\"]")),
            ));
        };
        if base != "*" && !resources.contains_key(base) {
            if self.partial.contains(group) {
                return None;
            }
            let plural = self
                .singular
                .get(&(group.to_string(), base.to_ascii_lowercase()))
                .cloned()
                .or_else(|| {
                    let plural = names::to_plural(&base.to_ascii_lowercase());
                    resources.contains_key(&plural).then_some(plural)
                });
            let elsewhere = || {
                self.groups
                    .iter()
                    .find(|(_, r)| r.contains_key(base))
                    .map(|(g, _)| format!("apiGroups: [\"{g}\"]"))
            };
            let candidates: Vec<&str> = resources.keys().map(String::as_str).collect();
            let meant = plural
                .map(|p| match sub {
                    Some(sub) => format!("`{p}/{sub}`"),
                    None => format!("`{p}`"),
                })
                .or_else(elsewhere)
                .or_else(|| {
                    did_you_mean(base, &candidates).map(|c| match sub {
                        Some(sub) => format!("`{c}/{sub}`"),
                        None => format!("`{c}`"),
                    })
                });
            return Some((
                format!("`{resource}`: {} serves no `{base}`", shown_group(group)),
                meant,
            ));
        }
        let sub = sub?;
        if sub == "*" || ANY.contains(&sub) || !self.kubernetes.contains(group) {
            return None;
        }
        let known: BTreeSet<&str> = if base == "*" {
            resources.values().flatten().map(String::as_str).collect()
        } else {
            resources[base].iter().map(String::as_str).collect()
        };
        if known.contains(sub) {
            return None;
        }
        let candidates: Vec<&str> = known.iter().copied().chain(ANY.iter().copied()).collect();
        Some((
            format!("`{resource}`: `{base}` has no subresource `{sub}`"),
            did_you_mean(sub, &candidates).map(|c| format!("`{base}/{c}`")),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifests::diagnostics::Location;
    use crate::manifests::emit::rbac::RbacRule;

    fn rule(groups: &[&str], resources: &[&str]) -> Rule {
        Rule {
            rule: RbacRule {
                groups: groups.iter().map(ToString::to_string).collect(),
                resources: resources.iter().map(ToString::to_string).collect(),
                resource_names: Vec::new(),
                urls: Vec::new(),
                verbs: vec!["get".into()],
                namespace: None,
            },
            location: Location::new(std::path::Path::new("role.yaml"), 1, 1),
        }
    }

    #[test]
    fn a_rule_naming_nothing_served_says_what_it_meant() {
        let served = Served::new(
            [("ship.example.com", "frigates")],
            [("cert-manager.io", "certificates")],
        );
        let problems = |groups: &[&str], resources: &[&str]| {
            served
                .unserved(&rule(groups, resources))
                .into_iter()
                .map(|(what, meant)| format!("{what} | {}", meant.unwrap_or_default()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            problems(&[""], &["configmap", "Secret", "pods/logs", "deployments"]),
            [
                "`Secret`: the core group (\"\") serves no `Secret` | `secrets`",
                "`configmap`: the core group (\"\") serves no `configmap` | `configmaps`",
                "`deployments`: the core group (\"\") serves no `deployments` | apiGroups: [\"apps\"]",
                "`pods/logs`: `pods` has no subresource `logs` | `pods/log`",
            ]
        );
        assert_eq!(
            problems(&["core"], &["pods"]),
            ["`pods` of the group `core`: no API serves that group | apiGroups: [\"\"]"]
        );
        assert_eq!(
            problems(&["apps"], &["deployment/status"]),
            ["`deployment/status`: the group `apps` serves no `deployment` | `deployments/status`"]
        );
        assert_eq!(
            problems(&["ship.example.com"], &["frigate", "frigates/status"]),
            ["`frigate`: the group `ship.example.com` serves no `frigate` | `frigates`"]
        );
        // A misspelt resource keeps its subresource in what it meant.
        assert_eq!(
            problems(&["ship.example.com"], &["frigtaes/status"]),
            [
                "`frigtaes/status`: the group `ship.example.com` serves no `frigtaes` | `frigates/status`"
            ]
        );
        // Served, or another project's API that is not known whole.
        assert!(
            problems(
                &[""],
                &["*", "pods/exec", "pods/status", "services/finalizers"]
            )
            .is_empty()
        );
        assert!(problems(&["apps"], &["deployments/scale", "*/scale", "*/status"]).is_empty());
        assert!(problems(&["cert-manager.io"], &["issuers", "certificates"]).is_empty());
        assert!(problems(&["route.openshift.io"], &["routes/custom-host"]).is_empty());
        assert!(problems(&["monitoring.coreos.com"], &["servicemonitors"]).is_empty());
        assert!(problems(&["*"], &["anything"]).is_empty());
        // Each pair of a rule of several groups is granted; one that exists
        // is enough.
        assert!(problems(&["", "apps"], &["pods", "deployments", "pods/log"]).is_empty());
        assert_eq!(
            problems(&["", "app"], &["pods", "deployments"]),
            [
                "`deployments`: the core group (\"\") serves no `deployments` | apiGroups: [\"apps\"]"
            ]
        );
    }
}
