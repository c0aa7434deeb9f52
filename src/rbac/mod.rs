//! `rsop rbac`: the roles a project ships, checked against the requests its
//! code makes, in any kube-rs operator.
//!
//! The roles come from wherever the project keeps them ([`shipped`]); the
//! requests from its sources, per binary and mode ([`program`]), with
//! no CRD derived. Each workload that runs one of the project's programs is
//! checked against the roles bound to its service account: a request no
//! bound rule grants is an error at the call, naming the role to change
//! and the rule to add; a rule no request of the programs bound to it needs
//! is a warning at the rule (least privilege); a call whose kind the code
//! does not show is listed as not checked, every one of them.

pub mod program;
pub mod report;
pub mod shipped;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use crate::Result;
use crate::calls::{Call, Unchecked, method_requests};
use crate::manifests::check::rbac_check;
use crate::manifests::diagnostics::Location;
use program::{Binary, Package, Words};
use shipped::{Role, Shipped, Workload};

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// One finding of the check.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    pub severity: Severity,
    /// Where to act: the call, or the rule.
    pub location: Option<Location>,
    pub message: String,
    pub help: Option<String>,
    /// The kind of finding, for code scanning (`ungranted-request`, ...).
    pub rule: &'static str,
}

/// What the check found.
#[derive(Debug, Default)]
pub struct Report {
    pub findings: Vec<Finding>,
    /// Each program checked: (binary, subcommand, workload, calls checked,
    /// calls not checked).
    pub checked: Vec<Checked>,
    /// How the roles were read (a chart rendered, or read as written).
    pub notes: Vec<String>,
}

/// One program checked against one workload's roles.
#[derive(Debug, Clone)]
pub struct Checked {
    pub program: String,
    pub workload: String,
    pub calls: usize,
    pub unchecked: usize,
    /// Calls in code a normal build leaves out (a feature off by default).
    pub gated: usize,
}

impl Report {
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }
}

/// Checks the project under `root`; `helm` renders its charts.
pub fn check_project(root: &Path, helm: Option<&Path>) -> Result<Report> {
    let shipped = shipped::find(root, helm)?;
    let packages = program::packages(root)?;
    let mut report = check(&packages, &shipped);
    report.notes = shipped.notes;
    Ok(report)
}

/// A program: a binary, and the words it is run with.
struct Run<'p> {
    package: &'p Package,
    binary: &'p Binary,
    words: Words,
    /// The words that choose its modes (`serve`, `--mode=controller`).
    modes: Vec<String>,
}

impl Run<'_> {
    fn name(&self) -> String {
        if self.modes.is_empty() {
            format!("`{}`", self.binary.name)
        } else {
            format!("`{} {}`", self.binary.name, self.modes.join(" "))
        }
    }
}

/// The program a workload's containers run, if one of them runs one of the
/// project's binaries: by the command's file name, an argument, or the
/// image's name; in a project with one binary that makes requests, any
/// workload whose account is given a role runs it.
fn runs<'p>(workload: &Workload, packages: &'p [Package], roles: &[(&Role, bool)]) -> Vec<Run<'p>> {
    let all: Vec<(&Package, &Binary)> = packages
        .iter()
        .flat_map(|p| p.binaries.iter().map(move |b| (p, b)))
        .collect();
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    let mut out = Vec::new();
    for container in &workload.containers {
        let words: Vec<String> = container
            .command
            .iter()
            .chain(&container.args)
            .map(|w| base(w))
            .collect();
        let image = base(container.image.split(['@']).next().unwrap_or_default());
        let image = image.split(':').next().unwrap_or_default().to_string();
        // `5-spot` is the image of the binary `5spot`.
        let letters = |s: &str| {
            s.chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
                .to_ascii_lowercase()
        };
        // An image named for the project around the binary
        // (`uniskai-agent` for `agent`) runs it when no other binary's name
        // fits and its roles grant that binary's own requests.
        let around = || {
            let mut fits = all.iter().filter(|(_, b)| {
                image.ends_with(&format!("-{}", b.name))
                    || image.starts_with(&format!("{}-", b.name))
            });
            match (fits.next(), fits.next()) {
                (Some(only), None) if grants_its_own(only.0, only.1, roles) => Some(only),
                _ => None,
            }
        };
        let found = all
            .iter()
            .find(|(_, b)| words.contains(&b.name))
            .or_else(|| {
                all.iter()
                    .find(|(_, b)| letters(&image) == letters(&b.name))
            })
            .or_else(around)
            .or_else(|| {
                // Binaries that make no request (a crdgen, a docs tool) run
                // under no role.
                // A binary whose `main` does not parse may make any; a
                // kubectl plugin runs with its user's credentials.
                if all.iter().any(|(_, b)| !b.parsed) {
                    return None;
                }
                let mut requesting = all.iter().filter(|(p, b)| {
                    let (calls, unchecked) = p.requests(b, None);
                    !b.name.starts_with("kubectl-") && (!calls.is_empty() || !unchecked.is_empty())
                });
                match (requesting.next(), requesting.next()) {
                    (Some(only), None) if grants_its_own(only.0, only.1, roles) => Some(only),
                    _ => None,
                }
            });
        let Some((package, binary)) = found else {
            continue;
        };
        let words = Words::new(container.command.iter().chain(&container.args));
        let modes = words.choosing(&binary.modes);
        out.push(Run {
            package,
            binary,
            words,
            modes,
        });
    }
    out
}

/// Whether `roles` grant `binary` some request on a kind of a custom API
/// group (the project's own, or another project's it works with), or,
/// when it makes none, any request: a role made for the program, not for
/// another operator a repository happens to deploy beside it.
fn grants_its_own(package: &Package, binary: &Binary, roles: &[(&Role, bool)]) -> bool {
    let (calls, _) = package.requests(binary, None);
    let custom = |c: &&Call| c.group.contains('.') && !c.group.ends_with(".k8s.io");
    let own: Vec<&Call> = calls.iter().copied().filter(custom).collect();
    let wanted = if own.is_empty() { calls } else { own };
    wanted.iter().any(|c| granted(c, roles))
}

/// How close two places are: the folders they share.
fn affinity(a: &Path, b: &Path) -> usize {
    let dir = |p: &Path| {
        if p.extension().is_some() {
            p.parent().unwrap_or(Path::new("")).to_path_buf()
        } else {
            p.to_path_buf()
        }
    };
    let (a, b) = (dir(a), dir(b));
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .count()
        + usize::from(a == b) * 100
}

/// The roles bound to `workload`'s account, from the copies nearest to it
/// (a chart's own, before the same role in an installer elsewhere), each
/// with whether its binding spans the cluster.
fn bound_roles<'s>(workload: &Workload, shipped: &'s Shipped) -> Vec<(&'s Role, bool)> {
    let bindings: Vec<&shipped::Binding> = shipped
        .bindings
        .iter()
        .filter(|b| b.accounts.contains(&workload.account))
        .collect();
    let best = bindings
        .iter()
        .map(|b| affinity(&b.origin, &workload.origin))
        .max();
    let mut out = Vec::new();
    for binding in bindings
        .iter()
        .filter(|b| Some(affinity(&b.origin, &workload.origin)) == best)
    {
        let roles: Vec<&Role> = shipped
            .roles
            .iter()
            .filter(|r| r.name == binding.role && r.cluster == binding.role_cluster)
            .collect();
        let nearest = roles
            .iter()
            .map(|r| affinity(&r.origin, &binding.origin))
            .max();
        for role in roles
            .into_iter()
            .filter(|r| Some(affinity(&r.origin, &binding.origin)) == nearest)
        {
            out.push((role, binding.cluster));
        }
    }
    out
}

fn describe(call: &Call) -> String {
    if call.group.is_empty() {
        format!("`{}`", call.resource)
    } else {
        format!("`{}` of `{}`", call.resource, call.group)
    }
}

/// Whether the bound roles grant `call`. A `RoleBinding` grants requests
/// in its namespace only; events a `Recorder` writes in each object's
/// namespace are taken as granted by either.
fn granted(call: &Call, roles: &[(&Role, bool)]) -> bool {
    roles.iter().any(|(role, cluster_wide)| {
        (*cluster_wide || !call.cluster)
            && role
                .rules
                .iter()
                .any(|r| rbac_check::grants(&r.rule, &call.group, &call.resource, call.verb))
    })
}

/// The rule to add for `call`, as the YAML of a role.
fn rule_yaml(call: &Call) -> String {
    format!(
        "{{apiGroups: [\"{}\"], resources: [\"{}\"], verbs: [\"{}\"]}}",
        call.group, call.resource, call.verb
    )
}

/// The fix for an ungranted call: the verb added to a rule of the bound
/// roles that names the resource already, else a rule added to the role
/// that should hold it.
fn help_for(call: &Call, roles: &[(&Role, bool)], workload: &Workload) -> String {
    for (role, cluster_wide) in roles {
        if call.cluster && !cluster_wide {
            continue;
        }
        if let Some(rule) = role.rules.iter().find(|r| {
            r.rule.groups.contains(&call.group) && r.rule.resources.contains(&call.resource)
        }) {
            return format!(
                "add `{}` to the verbs of the rule at {}",
                call.verb, rule.location
            );
        }
    }
    // The role to grow: the widest grant, then the one with the most rules
    // (the manager's role, not its leader-election one).
    let target = roles
        .iter()
        .filter(|(r, wide)| !call.cluster || (*wide && r.cluster))
        .max_by_key(|(r, wide)| (*wide, r.cluster, r.rules.len()))
        .map(|(r, _)| *r);
    match target {
        Some(role) => format!(
            "add the rule `{}` to the {} `{}` at {}",
            rule_yaml(call),
            if role.cluster { "ClusterRole" } else { "Role" },
            role.name,
            role.location
        ),
        None if call.cluster => format!(
            "bind a ClusterRole with the rule `{}` to ServiceAccount `{}` with a ClusterRoleBinding",
            rule_yaml(call),
            workload.account
        ),
        None => format!(
            "bind a role with the rule `{}` to ServiceAccount `{}`",
            rule_yaml(call),
            workload.account
        ),
    }
}

/// The verbs a call whose kind is not shown would send (`api.patch`:
/// `patch`).
fn verbs_of(unchecked: &Unchecked) -> &'static [&'static str] {
    let method = unchecked.via.rsplit('.').next().unwrap_or_default();
    method_requests(method).map_or(&[], |(verbs, _)| verbs)
}

/// What the programs bound to a role need: their calls, and the verbs of
/// their calls whose kind is not shown.
type Needs = (Vec<Call>, HashSet<&'static str>);

/// Checks every workload that runs a program of `packages` against its
/// roles.
pub fn check(packages: &[Package], shipped: &Shipped) -> Report {
    let mut report = Report::default();
    let mut findings: BTreeSet<Finding> = BTreeSet::new();
    // Per role (by its place): the calls of the programs bound to it, and
    // the verbs of their unchecked calls.
    let mut role_calls: BTreeMap<(PathBuf, usize), Needs> = BTreeMap::new();
    let mut untied: Vec<String> = Vec::new();
    let mut checked_roles: Vec<&Role> = Vec::new();
    let mut tied_accounts: HashSet<&str> = HashSet::new();
    for workload in &shipped.workloads {
        let roles = bound_roles(workload, shipped);
        let runs = runs(workload, packages, &roles);
        if runs.is_empty() {
            if !roles.is_empty() {
                untied.push(format!(
                    "{} `{}` ({})",
                    workload.kind, workload.name, workload.location
                ));
            }
            continue;
        }
        tied_accounts.insert(&workload.account);
        for run in runs {
            let (calls, unchecked) = run.package.requests(run.binary, Some(&run.words));
            report.checked.push(Checked {
                program: run.name(),
                workload: format!("{} `{}`", workload.kind, workload.name),
                calls: calls.iter().filter(|c| c.gated.is_none()).count(),
                unchecked: unchecked.iter().filter(|u| u.gated.is_none()).count(),
                gated: calls.iter().filter(|c| c.gated.is_some()).count()
                    + unchecked.iter().filter(|u| u.gated.is_some()).count(),
            });
            for call in calls.iter().filter(|c| !c.optional) {
                // The default build does not send it; a build that enables
                // the feature does, so a rule for it is not unused either.
                if let Some(predicate) = &call.gated {
                    findings.insert(Finding {
                        severity: Severity::Note,
                        location: Some(call.location.clone()),
                        message: format!(
                            "`{}` of {} sends `{}` on {} only in a build with `cfg({})`, which a normal build leaves out: not checked",
                            call.via,
                            run.name(),
                            call.verb,
                            describe(call),
                            predicate
                        ),
                        help: None,
                        rule: "gated-request",
                    });
                    continue;
                }
                // Another cluster's role governs a request sent there.
                if call.remote {
                    findings.insert(Finding {
                        severity: Severity::Note,
                        location: Some(call.location.clone()),
                        message: format!(
                            "`{}` of {} sends `{}` on {} with a client of another cluster (built from a kubeconfig), which the roles of ServiceAccount `{}` do not govern: not checked",
                            call.via,
                            run.name(),
                            call.verb,
                            describe(call),
                            workload.account
                        ),
                        help: None,
                        rule: "remote-request",
                    });
                    continue;
                }
                if granted(call, &roles) {
                    continue;
                }
                // An owner reference that blocks its owner's deletion needs
                // this only where the OwnerReferencesPermissionEnforcement
                // admission plugin runs (OpenShift, some hardened clusters).
                let owner_reference = call.via.ends_with(".controller_owner_ref");
                findings.insert(Finding {
                    severity: if owner_reference {
                        Severity::Warning
                    } else {
                        Severity::Error
                    },
                    location: Some(call.location.clone()),
                    message: format!(
                        "`{}` sends `{}` on {}{}, which no role bound to ServiceAccount `{}` grants ({} {} `{}` runs {} under it){}",
                        call.via,
                        call.verb,
                        describe(call),
                        if call.cluster { " across the cluster" } else { "" },
                        workload.account,
                        workload.location,
                        workload.kind,
                        workload.name,
                        run.name(),
                        if owner_reference {
                            "; the owner reference blocks its owner's deletion, which clusters \
                             with the OwnerReferencesPermissionEnforcement admission plugin \
                             (OpenShift) refuse without it"
                        } else {
                            ""
                        },
                    ),
                    help: Some(help_for(call, &roles, workload)),
                    rule: "ungranted-request",
                });
            }
            for u in &unchecked {
                findings.insert(Finding {
                    severity: Severity::Note,
                    location: Some(u.location.clone()),
                    message: match &u.gated {
                        None => format!(
                            "`{}` of {} is not checked: {}",
                            u.via,
                            run.name(),
                            u.unknown.clause()
                        ),
                        Some(predicate) => format!(
                            "`{}` of {} is not checked: {}, and only a build with `cfg({})` makes it",
                            u.via,
                            run.name(),
                            u.unknown.clause(),
                            predicate
                        ),
                    },
                    help: Some(u.unknown.help().into()),
                    rule: "unchecked-call",
                });
            }
            // A program that makes no request rsop can follow says nothing
            // of which rules its roles need.
            let followed = !calls.is_empty();
            for (role, _) in roles.iter().filter(|_| followed) {
                let entry = role_calls
                    .entry((role.location.file.clone(), role.location.line))
                    .or_default();
                entry
                    .0
                    .extend(calls.iter().filter(|c| !c.remote).map(|c| (*c).clone()));
                entry
                    .1
                    .extend(unchecked.iter().flat_map(|u| verbs_of(u).iter().copied()));
                if !checked_roles.iter().any(|r| std::ptr::eq(*r, *role)) {
                    checked_roles.push(role);
                }
            }
        }
    }
    // A rule no program bound to the role needs; a role also bound to an
    // account no checked program runs under is left alone.
    for role in checked_roles {
        let shared = shipped.bindings.iter().any(|b| {
            b.role == role.name
                && b.role_cluster == role.cluster
                && b.accounts
                    .iter()
                    .any(|a| !tied_accounts.contains(a.as_str()))
        });
        if shared {
            continue;
        }
        let Some((calls, unchecked_verbs)) =
            role_calls.get(&(role.location.file.clone(), role.location.line))
        else {
            continue;
        };
        for rule in &role.rules {
            let unneeded: Vec<String> = rbac_check::unneeded(&rule.rule, calls)
                .into_iter()
                .filter(|item| {
                    !unchecked_verbs
                        .iter()
                        .any(|v| item.starts_with(&format!("`{v}` ")))
                })
                .collect();
            if unneeded.is_empty() {
                continue;
            }
            findings.insert(Finding {
                severity: Severity::Warning,
                location: Some(rule.location.clone()),
                message: format!(
                    "this rule of the {} `{}` grants {} that no request of the programs bound to it needs",
                    if role.cluster { "ClusterRole" } else { "Role" },
                    role.name,
                    unneeded.join(", ")
                ),
                help: Some("remove what no call needs (least privilege)".into()),
                rule: "unused-rule",
            });
        }
    }
    for package in packages {
        for why in package.unparsed() {
            findings.insert(Finding {
                severity: Severity::Note,
                location: None,
                message: format!(
                    "not checked: a file does not parse, so its requests are not known: {why}"
                ),
                help: None,
                rule: "unchecked-call",
            });
        }
    }
    if !untied.is_empty() {
        findings.insert(Finding {
            severity: Severity::Note,
            location: None,
            message: format!(
                "not checked: {} run{} none of the crate's binaries by its command, arguments or image: {}",
                untied.len(),
                if untied.len() == 1 { "s" } else { "" },
                untied.join(", ")
            ),
            help: None,
            rule: "untied-workload",
        });
    }
    report.findings = findings.into_iter().collect();
    report
}

/// The `helm` program on PATH, if any.
pub fn helm_on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("helm"))
        .find(|candidate| candidate.is_file())
}
