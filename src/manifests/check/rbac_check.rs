//! The manager's role checked against the requests its code makes
//! ([`crate::calls`]): a request no rule grants is a problem at the call, with the
//! marker to add; a marker that grants what no call needs is a warning at
//! the marker (least privilege), unless it ends in `// rsop:keep`.
//!
//! What grants a request: the rules of the RBAC markers, and the rules of
//! the static roles under `config/rbac/` that a binding gives to the
//! manager's service account (the leader-election and metrics-auth roles
//! kubebuilder's layout keeps as YAML). `role.yaml`, which the markers make,
//! is left out: it is what is being checked.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::calls::{Analysis, Call, Unknown};
use crate::manifests::diagnostics::{Diagnostic, Location};
use crate::manifests::emit::rbac::RbacRule;

/// What `rsop manifests` does with the calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The role is made from the markers alone; the calls are not read.
    Markers,
    /// A call no rule grants is an error; nothing is written.
    Check,
    /// A call no rule grants is a warning.
    Warn,
    /// The role is made from the calls and the markers together.
    Infer,
}

/// A marker's rule and where it is.
#[derive(Debug, Clone)]
pub struct Marked {
    pub location: Location,
    pub rule: RbacRule,
    /// The marker ends in `// rsop:keep`: the code needs it indirectly.
    pub keep: bool,
}

/// What the check found.
#[derive(Debug, Default)]
pub struct Findings {
    /// Calls no rule grants, as problems at the call.
    pub ungranted: Vec<Diagnostic>,
    /// Warnings: markers that grant what no call needs, and (in `warn`
    /// mode) the ungranted calls.
    pub warnings: Vec<String>,
    /// The one note of the calls whose kind the sources do not show.
    pub unchecked: Option<String>,
}

/// The marker suffix that keeps a rule no call needs.
pub const KEEP: &str = "// rsop:keep";

/// The lines of `text` whose RBAC marker ends in [`KEEP`], with the suffix
/// blanked (columns kept), so that the marker parses as written.
pub fn strip_keep(text: &str) -> (std::borrow::Cow<'_, str>, BTreeSet<usize>) {
    if !text.contains(KEEP) {
        return (std::borrow::Cow::Borrowed(text), BTreeSet::new());
    }
    let mut kept = BTreeSet::new();
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let body = line.trim_end_matches(['\n', '\r']);
        let is_marker = body.contains("+rsop:rbac") || body.contains("+kubebuilder:rbac");
        match body.rfind(KEEP) {
            Some(cut) if is_marker && body[cut + KEEP.len()..].trim().is_empty() => {
                out.push_str(&body[..cut]);
                out.push_str(&" ".repeat(body.len() - cut));
                out.push_str(&line[body.len()..]);
                kept.insert(i + 1);
            }
            _ => out.push_str(line),
        }
    }
    (std::borrow::Cow::Owned(out), kept)
}

/// Whether `rule` grants `call`; `of_role` says the rule is a `Role`'s. A
/// `Role` grants requests in its namespace only: never one across the
/// cluster, and in a project that watches the whole cluster (`!namespaced`)
/// not one made in the namespace of whichever object it is about.
fn grants_call(rule: &RbacRule, of_role: bool, call: &Call, namespaced: bool) -> bool {
    let in_role = !call.cluster && (namespaced || !call.objects_namespace);
    (in_role || !of_role) && grants(rule, &call.group, &call.resource, call.verb)
}

/// Whether `rule` is a `Role`'s: it has a namespace.
fn is_role(rule: &RbacRule) -> bool {
    rule.namespace.is_some()
}

/// Whether `rule` grants `verb` on `resource` of `group`.
pub(crate) fn grants(rule: &RbacRule, group: &str, resource: &str, verb: &str) -> bool {
    let any = |list: &[String], value: &str| list.iter().any(|v| v == "*" || v == value);
    let resource_ok = rule.resources.iter().any(|r| {
        r == "*"
            || r == resource
            || resource
                .split_once('/')
                .is_some_and(|(base, _)| r == &format!("{base}/*"))
    });
    rule.urls.is_empty() && any(&rule.groups, group) && resource_ok && any(&rule.verbs, verb)
}

/// The marker line that grants a call, ready to paste.
fn marker_for(call: &Call) -> String {
    format!(
        "// +rsop:rbac:groups={},resources={},verbs={}",
        if call.group.is_empty() {
            "core"
        } else {
            &call.group
        },
        call.resource,
        call.verb
    )
}

/// Checks the calls against the rules of the markers and of `bound`, the
/// static roles given to the manager. In a namespaced project
/// (`namespaced`), the markers make a `Role`: no marker can grant a request
/// across the cluster, and `infer` cannot either.
pub fn check(
    analysis: &Analysis,
    marked: &[Marked],
    bound: &[RbacRule],
    mode: Mode,
    namespaced: bool,
) -> Findings {
    let mut findings = Findings::default();
    // In a namespaced project every marker goes to the project's Role.
    let granted = |call: &Call| {
        marked.iter().any(|m| {
            let of_role = namespaced || is_role(&m.rule);
            grants_call(&m.rule, of_role, call, namespaced)
        }) || bound
            .iter()
            .any(|rule| grants_call(rule, is_role(rule), call, namespaced))
    };
    let mut reported = BTreeSet::new();
    // A request to another cluster (a client built from a kubeconfig the
    // code reads) is that cluster's to authorize; one made only under a
    // `cfg` a normal build leaves out is not the built operator's.
    for call in analysis
        .calls
        .iter()
        .filter(|c| !c.remote && c.gated.is_none())
    {
        // In a namespaced project, neither a marker nor `infer` can grant a
        // request across the cluster: only a ClusterRole can.
        let beyond_role = namespaced && call.cluster;
        if call.optional
            || (mode == Mode::Infer && !beyond_role)
            || granted(call)
            || !reported.insert((&call.group, &call.resource, call.verb, &call.location))
        {
            continue;
        }
        let resource = if call.group.is_empty() {
            format!("`{}`", call.resource)
        } else {
            format!("`{}` of `{}`", call.resource, call.group)
        };
        let (message, help) = if beyond_role {
            (
                format!(
                    "`{}` sends `{}` on {resource} across the cluster, which the Role of a \
                     namespaced project cannot grant",
                    call.via, call.verb
                ),
                "make the `Api` with `Api::namespaced` (the manager's `ctx.api()`), or, for a \
                 cluster-scoped kind, bind a ClusterRole to the manager's ServiceAccount under \
                 config/rbac/"
                    .to_string(),
            )
        } else {
            (
                format!(
                    "`{}` sends `{}` on {resource}, which no RBAC rule grants",
                    call.via, call.verb
                ),
                format!("add the marker `{}`", marker_for(call)),
            )
        };
        match mode {
            Mode::Check | Mode::Infer => findings
                .ungranted
                .push(Diagnostic::new(call.location.clone(), message).with_help(help)),
            Mode::Warn => findings
                .warnings
                .push(format!("{}: {message}; {help}", call.location)),
            Mode::Markers => {}
        }
    }
    if matches!(mode, Mode::Check | Mode::Warn) {
        for m in marked.iter().filter(|m| !m.keep) {
            let unneeded = unneeded(&m.rule, &analysis.calls);
            if !unneeded.is_empty() {
                findings.warnings.push(format!(
                    "{}: this RBAC marker grants {} that no call of the code needs; \
                     narrow it, or end it with `{KEEP}` if the code needs it another way",
                    m.location,
                    unneeded.join(", ")
                ));
            }
        }
    }
    if !analysis.unchecked.is_empty() {
        let places: Vec<String> = analysis
            .unchecked
            .iter()
            .take(5)
            .map(|u| match u.unknown {
                Unknown::Kind => format!("`{}` at {}", u.via, u.location),
                other => format!("`{}` at {} ({})", u.via, u.location, other.clause()),
            })
            .collect();
        let rest = analysis.unchecked.len().saturating_sub(places.len());
        findings.unchecked = Some(format!(
            "note: not checked against the role: {} call{} whose kind the sources do not show: {}{}",
            analysis.unchecked.len(),
            if analysis.unchecked.len() == 1 {
                ""
            } else {
                "s"
            },
            places.join(", "),
            if rest > 0 {
                format!(" and {rest} more")
            } else {
                String::new()
            }
        ));
    }
    findings
}

/// What a rule grants that no call needs, as `verb resource` items; a rule
/// with a wildcard or resource names is taken as meant.
pub(crate) fn unneeded(rule: &RbacRule, calls: &[Call]) -> Vec<String> {
    unneeded_unless(rule, calls, |_, _, _| false)
}

/// As [`unneeded`], leaving out what `needed` says may be needed all the
/// same (group, resource, verb).
pub(crate) fn unneeded_unless(
    rule: &RbacRule,
    calls: &[Call],
    needed: impl Fn(&str, &str, &str) -> bool,
) -> Vec<String> {
    let wild = |list: &[String]| list.iter().any(|v| v == "*" || v.ends_with("/*"));
    if !rule.urls.is_empty()
        || !rule.resource_names.is_empty()
        || wild(&rule.groups)
        || wild(&rule.resources)
        || wild(&rule.verbs)
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    for group in &rule.groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let needed = needed(group, resource, verb)
                    || calls
                        .iter()
                        .any(|c| &c.group == group && &c.resource == resource && c.verb == verb);
                // A rule over several groups says which one it means.
                let of_group = match group.as_str() {
                    _ if rule.groups.len() < 2 => String::new(),
                    "" => " of the core group".to_string(),
                    group => format!(" of `{group}`"),
                };
                if !needed {
                    out.push(format!("`{verb}` on `{resource}`{of_group}"));
                }
            }
        }
    }
    out
}

/// The rules a call analysis infers: one per (group, resource), with the
/// verbs the calls send, less what `bound` grants already.
pub fn inferred_rules(calls: &[Call], bound: &[RbacRule], namespaced: bool) -> Vec<RbacRule> {
    let mut by_resource: std::collections::BTreeMap<(String, String), BTreeSet<&str>> =
        std::collections::BTreeMap::new();
    for call in calls.iter().filter(|c| !c.remote && c.gated.is_none()) {
        // What the static roles grant stays theirs.
        if bound
            .iter()
            .any(|rule| grants_call(rule, is_role(rule), call, namespaced))
        {
            continue;
        }
        by_resource
            .entry((call.group.clone(), call.resource.clone()))
            .or_default()
            .insert(call.verb);
    }
    by_resource
        .into_iter()
        .map(|((group, resource), verbs)| RbacRule {
            groups: vec![group],
            resources: vec![resource],
            resource_names: Vec::new(),
            urls: Vec::new(),
            verbs: verbs.into_iter().map(str::to_string).collect(),
            namespace: None,
        })
        .collect()
}

#[derive(Deserialize)]
struct Object {
    kind: Option<String>,
    metadata: Option<Metadata>,
    #[serde(default)]
    rules: Vec<YamlRule>,
    #[serde(rename = "roleRef")]
    role_ref: Option<RoleRef>,
    #[serde(default)]
    subjects: Vec<Subject>,
}

#[derive(Deserialize)]
struct Metadata {
    name: Option<String>,
    namespace: Option<String>,
}

#[derive(Deserialize)]
struct RoleRef {
    name: String,
}

#[derive(Deserialize)]
struct Subject {
    kind: String,
    name: String,
}

#[derive(Deserialize)]
struct YamlRule {
    #[serde(default, rename = "apiGroups")]
    api_groups: Vec<String>,
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default, rename = "resourceNames")]
    resource_names: Vec<String>,
    #[serde(default)]
    verbs: Vec<String>,
}

/// The rules of the roles under `dir` (other than `role.yaml`) that a
/// binding there gives to the manager's service account
/// (`controller-manager`). Files that do not parse are left out: kustomize
/// reports them.
pub fn bound_rules(root: &Path, dir: &Path) -> Vec<RbacRule> {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "yaml")
                && p.file_name().is_some_and(|n| n != "role.yaml")
        })
        .collect();
    paths.sort();
    // Each role's name, namespace (`Some` for a `Role`) and rules.
    let mut roles: Vec<(String, Option<String>, Vec<YamlRule>)> = Vec::new();
    let mut bound: BTreeSet<String> = BTreeSet::new();
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for document in serde_yaml_ng::Deserializer::from_str(&text) {
            let Ok(object) = Object::deserialize(document) else {
                continue;
            };
            match object.kind.as_deref() {
                Some(kind @ ("Role" | "ClusterRole")) => {
                    let namespaced = kind == "Role";
                    if let Some(Metadata {
                        name: Some(name),
                        namespace,
                    }) = object.metadata
                    {
                        let namespace = namespaced.then(|| namespace.unwrap_or_default());
                        roles.push((name, namespace, object.rules));
                    }
                }
                Some("RoleBinding" | "ClusterRoleBinding") => {
                    if object
                        .subjects
                        .iter()
                        .any(|s| s.kind == "ServiceAccount" && s.name == "controller-manager")
                        && let Some(role) = object.role_ref
                    {
                        bound.insert(role.name);
                    }
                }
                _ => {}
            }
        }
    }
    roles
        .into_iter()
        .filter(|(name, _, _)| bound.contains(name))
        .flat_map(|(_, namespace, rules)| {
            rules.into_iter().map(move |r| RbacRule {
                groups: r.api_groups,
                resources: r.resources,
                resource_names: r.resource_names,
                urls: Vec::new(),
                verbs: r.verbs,
                namespace: namespace.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::manifests::emit::rbac::tests::rule;

    fn call(group: &str, resource: &str, verb: &'static str, line: usize) -> Call {
        Call {
            group: group.into(),
            resource: resource.into(),
            verb,
            cluster: false,
            objects_namespace: false,
            location: Location::new("src/controller.rs", line, 5),
            function: "reconcile".into(),
            via: "api.patch".into(),
            optional: false,
            remote: false,
            site: None,
            gated: None,
            through: Vec::new(),
        }
    }

    #[test]
    fn an_ungranted_call_is_an_error_with_the_marker_to_add() {
        let analysis = Analysis {
            calls: vec![
                call("apps", "deployments", "patch", 12),
                call("", "pods", "list", 14),
            ],
            unchecked: Vec::new(),
            kinds: Vec::new(),
            owner_references: false,
        };
        let marked = vec![Marked {
            location: Location::new("src/controller.rs", 3, 4),
            rule: rule(&["apps"], &["deployments"], &["get", "patch", "delete"]),
            keep: false,
        }];
        let findings = check(
            &analysis,
            &marked,
            &[rule(&[""], &["pods"], &["list"])],
            Mode::Check,
            false,
        );
        assert!(findings.ungranted.is_empty(), "{:?}", findings.ungranted);
        assert_eq!(
            findings.warnings,
            vec![
                "src/controller.rs:3:4: this RBAC marker grants `get` on `deployments`, `delete` on `deployments` that no call of the code needs; narrow it, or end it with `// rsop:keep` if the code needs it another way"
            ]
        );
        let findings = check(&analysis, &[], &[], Mode::Check, false);
        assert_eq!(findings.ungranted.len(), 2);
        assert_eq!(
            findings.ungranted[0].help.as_deref(),
            Some("add the marker `// +rsop:rbac:groups=apps,resources=deployments,verbs=patch`")
        );
    }

    #[test]
    fn a_role_grants_no_request_across_the_cluster() {
        let nodes = Call {
            cluster: true,
            ..call("", "nodes", "list", 7)
        };
        let pods = call("", "pods", "list", 9);
        let analysis = Analysis {
            calls: vec![nodes.clone(), pods],
            unchecked: Vec::new(),
            kinds: Vec::new(),
            owner_references: false,
        };
        let marker = |namespace: Option<&str>| Marked {
            location: Location::new("src/controller.rs", 3, 4),
            rule: RbacRule {
                namespace: namespace.map(str::to_string),
                ..rule(&[""], &["nodes", "pods"], &["list"])
            },
            keep: false,
        };
        // A ClusterRole's rule grants both.
        let findings = check(&analysis, &[marker(None)], &[], Mode::Check, false);
        assert!(findings.ungranted.is_empty(), "{:?}", findings.ungranted);
        // A Role's rule grants the namespaced list only; a namespaced
        // project says why no marker can help, in `infer` too.
        for mode in [Mode::Check, Mode::Infer] {
            let findings = check(&analysis, &[marker(Some("system"))], &[], mode, true);
            let [problem] = findings.ungranted.as_slice() else {
                panic!("{:?}", findings.ungranted);
            };
            assert_eq!(problem.location.line, 7);
            assert!(
                problem.message.contains("across the cluster"),
                "{}",
                problem.message
            );
            assert!(
                problem.help.as_deref().unwrap().contains("Api::namespaced"),
                "{problem:?}"
            );
        }
        // The inferred rules leave what a bound Role grants to it only for
        // namespaced requests.
        let bound = RbacRule {
            namespace: Some("system".into()),
            ..rule(&[""], &["nodes"], &["list"])
        };
        let inferred = inferred_rules(&[nodes], std::slice::from_ref(&bound), false);
        assert_eq!(inferred.len(), 1, "{inferred:?}");
        // A Recorder's events go to each object's namespace: a Role in the
        // manager's grants them only in a namespaced project.
        let events = Call {
            objects_namespace: true,
            ..call("events.k8s.io", "events", "create", 11)
        };
        let role_events = RbacRule {
            namespace: Some("system".into()),
            ..rule(&["events.k8s.io"], &["events"], &["create"])
        };
        for (namespaced, inferred) in [(false, 1), (true, 0)] {
            let rules = inferred_rules(
                std::slice::from_ref(&events),
                std::slice::from_ref(&role_events),
                namespaced,
            );
            assert_eq!(rules.len(), inferred, "{rules:?}");
        }
    }

    #[test]
    fn keep_blanks_the_suffix_and_remembers_the_line() {
        let text =
            "fn a() {}\n// +rsop:rbac:groups=apps,resources=deployments,verbs=get // rsop:keep\n";
        let (stripped, kept) = strip_keep(text);
        assert_eq!(kept.into_iter().collect::<Vec<_>>(), vec![2]);
        assert!(
            stripped.contains("verbs=get             \n"),
            "{stripped:?}"
        );
    }
}
