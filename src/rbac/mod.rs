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

pub mod images;
pub mod program;
pub mod report;
pub mod served;
pub mod shipped;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use crate::Result;
use crate::calls::{Call, Unchecked, Unknown, method_requests};
use crate::manifests::check::rbac_check;
use crate::manifests::diagnostics::Location;
use program::{Binary, Package, Words};
use served::Served;
use shipped::{Container, Role, Shipped, Workload};

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
    let packages = program::packages(root, &shipped.crd_kinds)?;
    let mut report = check(&packages, &shipped);
    report.notes = shipped.notes;
    for (lock, version) in old_kube(root, &packages) {
        report.notes.push(format!(
            "{} locks kube {version}: rsop reads the kube-rs API from release 0.70 on, and requests made with an older one (`Api::v1Deployment`, `RawApi`, `Informer`) are not checked",
            lock.display()
        ));
    }
    Ok(report)
}

/// Whether the sources under `dir` write kube's API of before `Api<K>`
/// was typed (`Api::v1Deployment`, `RawApi`, `Informer::raw`).
fn uses_old_api(dir: &Path) -> bool {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| e.file_name() != "target")
        .filter_map(std::result::Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .any(|text| {
            ["RawApi", "Api::v1", "Informer::raw", "Reflector::raw"]
                .iter()
                .any(|n| text.contains(n))
        })
}

/// The Cargo.locks of `packages` that lock a kube release older than 0.70
/// and use its untyped API, with that release.
fn old_kube(root: &Path, packages: &[Package]) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for package in packages {
        // The lock of the package's folder or the nearest above it.
        let Some(lock) = package
            .dir
            .ancestors()
            .map(|dir| dir.join("Cargo.lock"))
            .find(|lock| root.join(lock).is_file())
        else {
            continue;
        };
        if !seen.insert(lock.clone()) {
            continue;
        }
        let Some(doc) = std::fs::read_to_string(root.join(&lock))
            .ok()
            .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok())
        else {
            continue;
        };
        let versions = doc
            .get("package")
            .and_then(|p| p.as_array_of_tables())
            .into_iter()
            .flatten()
            .filter(|p| {
                matches!(
                    p.get("name").and_then(|n| n.as_str()),
                    Some("kube" | "kube-client")
                )
            })
            .filter_map(|p| p.get("version")?.as_str().map(str::to_string));
        let old = versions.into_iter().find(|version| {
            let mut parts = version.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
            parts.next() == Some(0) && parts.next().is_some_and(|minor| minor < 70)
        });
        // The sources are read only for a lock that names an old release.
        if let Some(version) = old
            && uses_old_api(&root.join(&package.dir))
        {
            out.push((lock, version));
        }
    }
    out
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

/// What a workload's containers run.
struct Tied<'p, 'w> {
    runs: Vec<Run<'p>>,
    /// Containers of the project's images whose binary is not known.
    unknown: Vec<&'w Container>,
    /// Containers of other projects' images.
    foreign: Vec<&'w Container>,
}

/// The programs a workload's containers run. A container runs one of the
/// project's binaries named by its command or arguments, or by its image's
/// name (`5-spot` for `5spot`, `uniskai-agent` for `agent`). An image the
/// project builds (named for it, its packages, charts or Dockerfiles, or
/// tagged in its build files) runs the binary its Dockerfile runs, or the
/// one binary that makes requests. Whether its roles grant anything never
/// decides it.
fn runs<'p, 'w>(
    workload: &'w Workload,
    packages: &'p [Package],
    shipped: &Shipped,
) -> Tied<'p, 'w> {
    let all: Vec<(&Package, &Binary)> = packages
        .iter()
        .flat_map(|p| p.binaries.iter().map(move |b| (p, b)))
        .collect();
    let binary = |name: &str| all.iter().find(|(_, b)| b.name == name).copied();
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    // The words of the project's own names and its binaries'.
    let own_words: BTreeSet<String> = shipped
        .names
        .iter()
        .map(String::as_str)
        .chain(all.iter().map(|(_, b)| b.name.as_str()))
        .flat_map(|name| {
            std::iter::once(name.to_string()).chain(name.split(['-', '_']).map(str::to_string))
        })
        .map(|w| images::letters(&w))
        .filter(|w| !w.is_empty())
        .collect();
    let project_word = |w: &str| own_words.contains(&images::letters(w));
    // The one binary that makes requests (a crdgen or a docs tool makes
    // none; a kubectl plugin runs with its user's credentials). A binary
    // whose `main` does not parse may make any.
    let requesting = || {
        if all.iter().any(|(_, b)| !b.parsed) {
            return None;
        }
        let mut requesting = all.iter().filter(|(p, b)| {
            let (calls, unchecked) = p.requests(b, None);
            !b.name.starts_with("kubectl-") && (!calls.is_empty() || !unchecked.is_empty())
        });
        match (requesting.next(), requesting.next()) {
            (Some(only), None) => Some(*only),
            _ => None,
        }
    };
    let mut tied = Tied {
        runs: Vec::new(),
        unknown: Vec::new(),
        foreign: Vec::new(),
    };
    for container in &workload.containers {
        let words: Vec<String> = container
            .command
            .iter()
            .chain(&container.args)
            .map(|w| base(w))
            .collect();
        // The image kustomize deploys in place of a placeholder, and the
        // placeholder: the names of both are the image's.
        let deployed = shipped
            .renamed
            .iter()
            .find(|(from, _)| from == images::repository(&container.image))
            .map_or(container.image.as_str(), |(_, to)| to.as_str());
        let mut image = images::path_names(deployed);
        for name in images::path_names(&container.image) {
            if !image.contains(&name) {
                image.push(name);
            }
        }
        let named = |name: &str| {
            image
                .iter()
                .any(|i| images::same_or_around(i, name, project_word))
        };
        let by_words = all.iter().find(|(_, b)| words.contains(&b.name));
        // The Dockerfiles beside the manifest build what it deploys: when
        // the one built for the image (`mlflow/Dockerfile` for
        // `../mlflow-operator/mlflow`) runs a program that is not the
        // crate's (`mlflow server` from a Python image), the image runs
        // that, though a folder of its path names the crate.
        let beside: Vec<&images::Dockerfile> = shipped
            .dockerfiles
            .iter()
            .filter(|d| d.path.parent() == workload.location.file.parent())
            .collect();
        // Only a Dockerfile built for this image (its folder or suffix is
        // the image's name) says what the image runs.
        let built_beside: Vec<&&images::Dockerfile> = beside
            .iter()
            .filter(|d| {
                d.name
                    .as_deref()
                    .zip(image.first())
                    .is_some_and(|(dockerfile, name)| {
                        images::letters(dockerfile) == images::letters(name)
                    })
            })
            .collect();
        let beside_foreign = !built_beside.is_empty()
            && built_beside
                .iter()
                .all(|d| !d.runs.is_empty() && d.binary(|b| binary(b).is_some()).is_none())
            && !image.first().is_some_and(|name| {
                all.iter()
                    .any(|(_, b)| images::letters(name) == images::letters(&b.name))
            });
        if by_words.is_none() && beside_foreign {
            tied.foreign.push(container);
            continue;
        }
        let by_name = by_words
            .or_else(|| {
                image.iter().find_map(|i| {
                    all.iter()
                        .find(|(_, b)| images::letters(i) == images::letters(&b.name))
                })
            })
            .or_else(|| {
                let mut around = all.iter().filter(|(_, b)| named(&b.name));
                match (around.next(), around.next()) {
                    (Some(only), None) => Some(only),
                    _ => None,
                }
            })
            .copied();
        // An image a chart read without helm names with a template action,
        // or one a variable stands for until deploy time (`${IMAGE}` that
        // envsubst fills), is not known to be another project's.
        let hidden =
            image.iter().all(|n| n.contains("tplx")) || images::is_placeholder(&container.image);
        let built = !image.is_empty()
            && (hidden
                || shipped.names.iter().any(|n| named(n))
                || shipped
                    .dockerfiles
                    .iter()
                    .any(|d| d.name.as_deref().is_some_and(named))
                || tagged(&shipped.build_text, images::repository(deployed))
                // Its path without the registry (`acme/widget`), or a bare
                // name (`widget:dev`) on a line that builds, tags or pushes
                // it (a workflow may run `--image=busybox` of another
                // project); the last segment alone of a longer path is a
                // word a workflow may use for anything (`postgresql`).
                || tagged(&shipped.build_text, &owned_path(deployed)));
        // Pushed under the owner of the project's repository
        // (`mpwsh/kt-operator` of `github.com/mpwsh/kubetailor`), which may
        // own other projects' images too: the project's if a word of its
        // name is a stage of its Dockerfiles or one of its binaries.
        let owned = image
            .get(1)
            .is_some_and(|owner| shipped.owners.contains(*owner));
        let image_words: Vec<String> = image
            .first()
            .map(|name| {
                name.split(['-', '_'])
                    .map(str::to_ascii_lowercase)
                    .collect()
            })
            .unwrap_or_default();
        let found = by_name.or_else(|| {
            if !built && !owned {
                return None;
            }
            // The stage a Dockerfile names for it (`kt-operator` built
            // with `--target operator`).
            let staged: BTreeSet<String> = shipped
                .dockerfiles
                .iter()
                .flat_map(|d| &d.targets)
                .filter(|(stage, _)| image_words.contains(stage))
                .filter_map(|(_, stage)| stage.binary(|b| binary(b).is_some()))
                .collect();
            if let [only] = staged.iter().collect::<Vec<_>>().as_slice() {
                return binary(only);
            }
            if !built {
                return image_words.iter().find_map(|w| binary(w));
            }
            // The Dockerfile built for this image, or the one binary the
            // repository's Dockerfiles run.
            // An image with a Dockerfile of its own runs what that one runs,
            // if it is one of the crate's binaries.
            let of = |d: &images::Dockerfile| d.binary(|b| binary(b).is_some());
            let own: Vec<&images::Dockerfile> = shipped
                .dockerfiles
                .iter()
                .filter(|d| d.name.as_deref().is_some_and(named))
                .collect();
            if !own.is_empty() {
                let runs: BTreeSet<String> = own.iter().copied().filter_map(of).collect();
                return match runs.iter().collect::<Vec<_>>().as_slice() {
                    [only] => binary(only),
                    _ => None,
                };
            }
            // A Dockerfile beside the manifest builds what it deploys
            // (`k8s/controller/Dockerfile` for `k8s/controller/deployment.yaml`).
            let beside: BTreeSet<String> = beside.iter().copied().filter_map(of).collect();
            if let [only] = beside.iter().collect::<Vec<_>>().as_slice() {
                return binary(only);
            }
            let any: BTreeSet<String> = shipped.dockerfiles.iter().filter_map(of).collect();
            match any.iter().collect::<Vec<_>>().as_slice() {
                [only] => binary(only),
                _ => requesting(),
            }
        });
        let Some((package, binary)) = found else {
            if built {
                tied.unknown.push(container);
            } else {
                tied.foreign.push(container);
            }
            continue;
        };
        let words = Words::new(
            container
                .command
                .iter()
                .chain(&container.args)
                .chain(&container.env),
        );
        // A variable of the environment the code tests but whose value
        // changes none of the program's requests (a log level or format)
        // does not name what runs.
        let requests = package.requests(binary, Some(&words));
        let modes = words
            .choosing(&binary.modes)
            .into_iter()
            .filter(|mode| {
                let Some(variable) = mode.strip_prefix('$') else {
                    return true;
                };
                let variable = variable.split_once('=').map_or(variable, |(v, _)| v);
                let without = Words::new(container.command.iter().chain(&container.args).chain(
                    container.env.iter().filter(|e| {
                        let set = e.strip_prefix('$').unwrap_or(e);
                        set.split_once('=').map_or(set, |(v, _)| v) != variable
                    }),
                ));
                package.requests(binary, Some(&without)) != requests
            })
            .collect();
        tied.runs.push(Run {
            package,
            binary,
            words,
            modes,
        });
    }
    tied
}

/// An image's repository path after its registry host: `acme/widget` of
/// `ghcr.io/acme/widget:v1`, `widget` of `widget:dev`.
fn owned_path(image: &str) -> String {
    let mut names = images::path_names(image);
    names.reverse();
    names.join("/")
}

/// A request of a program, as far as whether another program sends it too
/// goes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Sent {
    /// Checked: its group, resource and verb.
    Checked(String, String, &'static str),
    /// Not checked: where it is made.
    Noted(Location),
}

fn sent(call: &Call) -> Sent {
    Sent::Checked(call.group.clone(), call.resource.clone(), call.verb)
}

/// The resources whose objects grant: a program that writes them may grant
/// only what it holds.
const GRANTS: &[&str] = &[
    "roles",
    "clusterroles",
    "rolebindings",
    "clusterrolebindings",
];

/// Whether `text` names `name` whole (not inside a longer name).
fn mentions(text: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let part = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/');
    text.match_indices(name).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(part)
            && !text[at + name.len()..]
                .chars()
                .next()
                .is_some_and(|c| part(c) && c != '.' && c != '/')
    })
}

/// Whether the build files name the image `path` (without its registry):
/// anywhere for a path of several segments (`acme/widget`), and for a bare
/// name (`widget`) on a line that builds, tags or pushes an image
/// (`docker build -t widget:dev .`, `IMG ?= widget:latest`, skaffold's
/// `image: widget`).
fn tagged(build_text: &str, path: &str) -> bool {
    if path.contains('/') {
        return mentions(build_text, path);
    }
    build_text.lines().any(|line| {
        let lower = line.to_ascii_lowercase();
        ["build", "tag", "push", "img", "image:"]
            .iter()
            .any(|word| lower.contains(word))
            && mentions(line, path)
    })
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
fn help_for(call: &Call, roles: &[(&Role, bool)], workload: &Workload, served: &Served) -> String {
    for (role, cluster_wide) in roles {
        if call.cluster && !cluster_wide {
            continue;
        }
        // A rule that meant this resource and named one nothing serves.
        let meant = format!("`{}`", call.resource);
        for rule in role
            .rules
            .iter()
            .filter(|r| r.rule.groups.contains(&call.group))
        {
            for resource in &rule.rule.resources {
                let Some((_, Some(guess))) = served.unserved_resource(&call.group, resource) else {
                    continue;
                };
                if guess == meant {
                    let verb = if rule.rule.verbs.iter().any(|v| v == call.verb || v == "*") {
                        String::new()
                    } else {
                        format!(", and add `{}` to its verbs", call.verb)
                    };
                    return format!(
                        "write `{}` for `{resource}` in the rule at {}{verb}",
                        call.resource, rule.location
                    );
                }
            }
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
            role.kind(),
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
    const WATCH: &[&str] = &["list", "watch"];
    if unchecked.applies {
        return &["patch", "create"];
    }
    match unchecked.via.as_str() {
        "Controller::new"
        | "Controller::owns"
        | "Controller::watches"
        | "watcher"
        | "metadata_watcher"
        | "await_condition"
        | "reflector" => WATCH,
        via => {
            let method = via.rsplit('.').next().unwrap_or_default();
            method_requests(method).map_or(&[], |(verbs, _)| verbs)
        }
    }
}

/// What the programs bound to a role need.
#[derive(Default)]
struct Needs {
    calls: Vec<Call>,
    /// The verbs of calls whose kind is not shown: on any resource.
    verbs: HashSet<&'static str>,
    /// The resources of calls whose verbs are not known (an `Api` method
    /// or another crate's function): any verb on them.
    resources: HashSet<(String, String)>,
    /// Owner references on owners whose kind is not shown: `update` on any
    /// `finalizers`.
    finalizers: bool,
    /// The programs write roles or bindings: the API server lets them
    /// grant only what they hold (or `escalate`, `bind`), so any rule may be
    /// needed.
    escalates: bool,
    /// The programs start pods or Jobs, which may run the crate's other
    /// programs under the same account.
    spawns: bool,
    /// A call that gives a `Client` to another crate's function, which may
    /// send any request: where it is, and the function.
    anything: Option<(Location, String, &'static str)>,
}

impl Needs {
    /// Whether an unused `verb` on `resource` of `group` may be needed all
    /// the same. A role that may `escalate` needs none of its other rules
    /// for the roles its programs write.
    fn shields(&self, group: &str, resource: &str, verb: &str, may_escalate: bool) -> bool {
        (self.escalates && (!may_escalate || matches!(verb, "escalate" | "bind")))
            || self.verbs.contains(verb)
            || self.resources.contains(&(
                group.to_string(),
                resource.split('/').next().unwrap_or(resource).to_string(),
            ))
            || (self.finalizers && verb == "update" && resource.ends_with("/finalizers"))
    }
}

/// Checks every workload that runs a program of `packages` against its
/// roles.
pub fn check(packages: &[Package], shipped: &Shipped) -> Report {
    // What the API serves, to hold the rules against.
    let served = Served::new(
        shipped
            .crds
            .iter()
            .chain(packages.iter().flat_map(|p| &p.analysis.kinds))
            .map(|(g, p)| (g.as_str(), p.as_str())),
        packages
            .iter()
            .flat_map(|p| &p.analysis.calls)
            .map(|c| (c.group.as_str(), c.resource.as_str())),
    );
    let mut report = Report::default();
    let mut findings: BTreeSet<Finding> = BTreeSet::new();
    // Per role (by its place): the calls of the programs bound to it, and
    // the verbs of their unchecked calls.
    let mut role_calls: BTreeMap<(PathBuf, usize), Needs> = BTreeMap::new();
    let mut untied: Vec<String> = Vec::new();
    let mut unresolved: Vec<String> = Vec::new();
    // The binaries workloads run, with the modes they choose.
    let mut ran: BTreeMap<(PathBuf, String), BTreeSet<String>> = BTreeMap::new();
    // Per binary: what the programs the workloads run of it send.
    let mut checked_requests: BTreeMap<(PathBuf, String), BTreeSet<Sent>> = BTreeMap::new();
    let mut checked_roles: Vec<&Role> = Vec::new();
    let mut tied_accounts: HashSet<&str> = HashSet::new();
    // Containers of other projects' images in workloads given a role, and
    // their accounts, whose rules they may need.
    let mut foreign: Vec<String> = Vec::new();
    let mut foreign_accounts: HashSet<&str> = HashSet::new();
    // Roles by their place: those bound to a workload that may run the
    // project's programs, and those bound only to other projects' images
    // (a vendored install of another operator, whose resources are of a
    // release rsop does not know).
    let mut own_roles: HashSet<(PathBuf, usize)> = HashSet::new();
    let mut foreign_roles: HashSet<(PathBuf, usize)> = HashSet::new();
    for workload in &shipped.workloads {
        let roles = bound_roles(workload, shipped);
        let tied = runs(workload, packages, shipped);
        let whose = if tied.runs.is_empty() && tied.unknown.is_empty() && !tied.foreign.is_empty() {
            &mut foreign_roles
        } else {
            &mut own_roles
        };
        whose.extend(
            roles
                .iter()
                .map(|(r, _)| (r.location.file.clone(), r.location.line)),
        );
        // A chart read without helm may name the account in its bindings
        // with a helper rsop cannot expand: which roles it is given is not
        // known, and nothing is asked of them.
        if roles.is_empty()
            && !tied.runs.is_empty()
            && (shipped.bindings.iter().any(|b| {
                b.origin == workload.origin
                    && (b.role.contains("{{") || b.accounts.iter().any(|a| a.contains("{{")))
            }) || shipped
                .roles
                .iter()
                .any(|r| r.origin == workload.origin && r.name.contains("{{")))
        {
            unresolved.push(format!(
                "{} `{}` ({})",
                workload.kind, workload.name, workload.location
            ));
            continue;
        }
        if let Some((role, _)) = roles.iter().find(|(r, _)| r.unknown)
            && !tied.runs.is_empty()
        {
            findings.insert(Finding {
                severity: Severity::Note,
                location: Some(role.location.clone()),
                message: format!(
                    "not checked: what the ClusterRole `{}` grants {} `{}` is not known (the cluster defines it, or it aggregates roles by labels no shipped one carries)",
                    role.name, workload.kind, workload.name
                ),
                help: Some("label the roles it aggregates as its selectors say (with helm on PATH, a chart's helpers are expanded)".into()),
                rule: "untied-workload",
            });
            continue;
        }
        if !roles.is_empty() {
            for container in &tied.foreign {
                foreign.push(shipped::restore(&format!(
                    "container `{}` ({}) of {} `{}`",
                    container.name, container.image, workload.kind, workload.name
                )));
                foreign_accounts.insert(&workload.account);
            }
        }
        if tied.runs.is_empty() {
            if !roles.is_empty() && !tied.unknown.is_empty() {
                untied.push(format!(
                    "{} `{}` ({})",
                    workload.kind, workload.name, workload.location
                ));
            }
            continue;
        }
        tied_accounts.insert(&workload.account);
        for run in tied.runs {
            ran.entry((run.package.dir.clone(), run.binary.name.clone()))
                .or_default()
                .extend(run.modes.iter().cloned());
            let (calls, unchecked) = run.package.requests(run.binary, Some(&run.words));
            let known = checked_requests
                .entry((run.package.dir.clone(), run.binary.name.clone()))
                .or_default();
            known.extend(calls.iter().map(|c| sent(c)));
            known.extend(
                unchecked
                    .iter()
                    .map(|u| u.location.clone())
                    .map(Sent::Noted),
            );
            report.checked.push(Checked {
                program: run.name(),
                workload: format!("{} `{}`", workload.kind, workload.name),
                calls: calls.iter().filter(|c| c.gated.is_none()).count(),
                // One call is one note, whatever it may send.
                unchecked: unchecked
                    .iter()
                    .filter(|u| u.gated.is_none())
                    .map(|u| (&u.location, &u.via))
                    .collect::<BTreeSet<_>>()
                    .len(),
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
                findings.insert(Finding {
                    severity: Severity::Error,
                    location: Some(call.location.clone()),
                    message: format!(
                        "`{}` sends `{}` on {}{}, which no role bound to ServiceAccount `{}` grants ({} {} `{}` runs {} under it)",
                        call.via,
                        call.verb,
                        describe(call),
                        if call.cluster { " across the cluster" } else { "" },
                        workload.account,
                        workload.location,
                        workload.kind,
                        workload.name,
                        run.name(),
                    ),
                    help: Some(help_for(call, &roles, workload, &served)),
                    rule: "ungranted-request",
                });
            }
            // Writing a binding, the API server asks the account to hold
            // what the role it names grants, or `bind` on that role, which
            // rsop cannot see for a role the project does not ship.
            if let Some(binding) = calls.iter().find(|c| {
                c.group == "rbac.authorization.k8s.io"
                    && matches!(c.resource.as_str(), "rolebindings" | "clusterrolebindings")
                    && matches!(c.verb, "create" | "update" | "patch")
                    && !c.optional
                    && !c.remote
                    && c.gated.is_none()
            }) {
                let may_bind = ["roles", "clusterroles"].iter().any(|resource| {
                    roles.iter().any(|(role, _)| {
                        role.rules.iter().any(|r| {
                            rbac_check::grants(
                                &r.rule,
                                "rbac.authorization.k8s.io",
                                resource,
                                "bind",
                            )
                        })
                    })
                });
                if !may_bind {
                    findings.insert(Finding {
                        severity: Severity::Note,
                        location: Some(binding.location.clone()),
                        message: format!(
                            "`{}` of {} writes {}, and no role bound to ServiceAccount `{}` grants `bind` on the roles they name: the API server accepts each only if the account holds every permission its role grants, which is not checked",
                            binding.via,
                            run.name(),
                            binding.resource,
                            workload.account
                        ),
                        help: Some(
                            "grant `bind` on the roles the bindings name (`resourceNames` narrows it), or hold what they grant"
                                .into(),
                        ),
                        rule: "binding-escalation",
                    });
                }
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
                    .calls
                    .extend(calls.iter().filter(|c| !c.remote).map(|c| (*c).clone()));
                for u in &unchecked {
                    match &u.resource {
                        Some(resource) => {
                            entry.resources.insert(resource.clone());
                        }
                        None if u.unknown == Unknown::Client => {
                            entry.anything.get_or_insert_with(|| {
                                (u.location.clone(), u.via.clone(), "is given a `Client`")
                            });
                        }
                        None if u.unknown == Unknown::Crate => {
                            entry.anything.get_or_insert_with(|| {
                                (
                                    u.location.clone(),
                                    u.via.clone(),
                                    "is of a dependency rsop has not read",
                                )
                            });
                        }
                        None if u.unknown == Unknown::Raw => {
                            entry.anything.get_or_insert_with(|| {
                                (
                                    u.location.clone(),
                                    u.via.clone(),
                                    "sends a request built by hand",
                                )
                            });
                        }
                        None => entry.verbs.extend(verbs_of(u).iter().copied()),
                    }
                }
                entry.finalizers |= run.package.analysis.owner_references;
                let writes = |resources: &[&str]| {
                    calls.iter().any(|c| {
                        matches!(c.verb, "create" | "update" | "patch")
                            && resources.contains(&c.resource.as_str())
                    })
                };
                // Also a call rsop cannot read on roles or bindings (another
                // crate's `create_or_update(&roles, ..)`): it may write them.
                entry.escalates |= (calls.iter().any(|c| c.group == "rbac.authorization.k8s.io")
                    && writes(GRANTS))
                    || unchecked.iter().any(|u| {
                        u.resource.as_ref().is_some_and(|(group, resource)| {
                            group == "rbac.authorization.k8s.io"
                                && GRANTS.contains(&resource.as_str())
                        })
                    });
                entry.spawns |= writes(&["pods", "jobs", "cronjobs"]);

                if !checked_roles.iter().any(|r| std::ptr::eq(*r, *role)) {
                    checked_roles.push(role);
                }
            }
        }
    }
    // A program that starts pods or Jobs may run the crate's programs no
    // shipped workload runs (a second binary, a `helper` mode) under its
    // own account: what they request is not unused.
    if role_calls.values().any(|n| n.spawns) {
        let mut unrun: Vec<Call> = Vec::new();
        for package in packages {
            for binary in &package.binaries {
                let programs: Vec<(String, Option<Words>)> =
                    match ran.get(&(package.dir.clone(), binary.name.clone())) {
                        None => vec![(format!("`{}`", binary.name), None)],
                        Some(chosen) => binary
                            .modes
                            .iter()
                            .filter(|m| !chosen.contains(*m))
                            .map(|mode| {
                                (
                                    format!("`{} {mode}`", binary.name),
                                    Some(Words::new([mode])),
                                )
                            })
                            .collect(),
                    };
                let known = checked_requests.get(&(package.dir.clone(), binary.name.clone()));
                for (name, words) in programs {
                    let (calls, unchecked) = package.requests(binary, words.as_ref());
                    // A mode no workload runs that sends what the modes run
                    // send says nothing new.
                    let sent = calls
                        .iter()
                        .map(|c| sent(c))
                        .chain(unchecked.iter().map(|u| Sent::Noted(u.location.clone())))
                        .filter(|s| known.is_none_or(|k| !k.contains(s)))
                        .collect::<BTreeSet<_>>()
                        .len();
                    // What it sends under the account of the Job or Pod
                    // that runs it is checked against no role: said, not
                    // left out in silence.
                    if sent > 0 && !binary.name.starts_with("kubectl-") {
                        findings.insert(Finding {
                            severity: Severity::Note,
                            location: Some(Location::new(&binary.root, 1, 1)),
                            message: format!(
                                "{name} makes {sent} request{} that {} not checked: no workload rsop read runs it, and a program of the project creates Jobs or Pods, which may run it under an account rsop does not see",
                                if sent == 1 { "" } else { "s" },
                                if sent == 1 { "is" } else { "are" },
                            ),
                            help: Some(
                                "ship the workload that runs it (with its ServiceAccount), or check its requests against the account it runs under by hand"
                                    .into(),
                            ),
                            rule: "unrun-program",
                        });
                    }
                    unrun.extend(calls.into_iter().cloned());
                }
            }
        }
        for needs in role_calls.values_mut().filter(|n| n.spawns) {
            needs.calls.extend(unrun.iter().cloned());
        }
    }
    // A rule no program bound to the role needs; a role also bound to an
    // account no checked program runs under, or one a container of another
    // image runs under too, is left alone.
    for role in checked_roles {
        let shared = shipped.bindings.iter().any(|b| {
            b.role == role.name
                && b.role_cluster == role.cluster
                && b.accounts.iter().any(|a| {
                    !tied_accounts.contains(a.as_str()) || foreign_accounts.contains(a.as_str())
                })
        });
        if shared {
            continue;
        }
        let Some(needs) = role_calls.get(&(role.location.file.clone(), role.location.line)) else {
            continue;
        };
        let may_escalate = role.rules.iter().any(|r| {
            r.rule.verbs.iter().any(|v| v == "escalate" || v == "*")
                && r.rule
                    .resources
                    .iter()
                    .any(|x| matches!(x.as_str(), "roles" | "clusterroles" | "*"))
        });
        for rule in &role.rules {
            let unneeded: Vec<String> =
                rbac_check::unneeded_unless(&rule.rule, &needs.calls, |group, resource, verb| {
                    needs.shields(group, resource, verb, may_escalate)
                });
            if unneeded.is_empty() {
                continue;
            }
            // Another crate's function given a `Client` may send any
            // request: what it needs is not known, so nothing is unused.
            if let Some((at, via, why)) = &needs.anything {
                findings.insert(Finding {
                    severity: Severity::Note,
                    location: Some(rule.location.clone()),
                    message: format!(
                        "this rule of the {} `{}` grants {} that no request rsop reads needs; not reported unused, as `{via}` ({at}) {why} and may send any request",
                        role.kind(),
                        role.name,
                        unneeded.join(", ")
                    ),
                    help: Some(
                        "check what that function requests (its documentation names them) before removing the rule"
                            .into(),
                    ),
                    rule: "unused-rule",
                });
                continue;
            }
            findings.insert(Finding {
                severity: Severity::Warning,
                location: Some(rule.location.clone()),
                message: format!(
                    "this rule of the {} `{}` grants {} that no request of the programs bound to it needs",
                    role.kind(),
                    role.name,
                    unneeded.join(", ")
                ),
                help: Some("remove what no call needs (least privilege)".into()),
                rule: "unused-rule",
            });
        }
    }
    // Rules that name nothing the API serves grant nothing.
    for role in &shipped.roles {
        let place = (role.location.file.clone(), role.location.line);
        if foreign_roles.contains(&place) && !own_roles.contains(&place) {
            continue;
        }
        for rule in &role.rules {
            for (what, meant) in served.unserved(rule) {
                findings.insert(Finding {
                    severity: Severity::Error,
                    location: Some(rule.location.clone()),
                    message: format!(
                        "this rule of the {} `{}` names {what}, so it grants nothing",
                        role.kind(),
                        role.name,
                    ),
                    help: Some(match meant {
                        Some(meant) => format!("did you mean {meant}?"),
                        None => "name a resource the API server serves (`kubectl api-resources` lists them)".into(),
                    }),
                    rule: "unserved-resource",
                });
            }
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
                "not checked: {} run{} an image of the project, but neither its command, arguments, image name nor Dockerfile names one of the crate's binaries: {}",
                untied.len(),
                if untied.len() == 1 { "s" } else { "" },
                untied.join(", ")
            ),
            help: None,
            rule: "untied-workload",
        });
    }
    if !unresolved.is_empty() {
        findings.insert(Finding {
            severity: Severity::Note,
            location: None,
            message: format!(
                "not checked: the chart names its ServiceAccount, roles or bindings with template helpers rsop cannot expand without helm, so the roles of {} are not known; put helm on PATH",
                unresolved.join(", ")
            ),
            help: None,
            rule: "untied-workload",
        });
    }
    if !foreign.is_empty() {
        findings.insert(Finding {
            severity: Severity::Note,
            location: None,
            message: format!(
                "not ours: {}: images of other projects, not checked; rules they may need are not reported unused",
                foreign.join(", ")
            ),
            help: None,
            rule: "foreign-container",
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

#[cfg(test)]
mod tests {
    use super::{tagged, verbs_of};
    use crate::calls::{Unchecked, Unknown};
    use crate::manifests::diagnostics::Location;

    /// A server-side apply whose kind rsop cannot tell may create the
    /// object, so no rule's `create` is unused beside it.
    #[test]
    fn an_unchecked_apply_may_patch_and_create() {
        let mut apply = Unchecked {
            location: Location::new(std::path::Path::new("src/route.rs"), 9, 5),
            function: "apply_route".into(),
            via: "api.patch".into(),
            gated: None,
            unknown: Unknown::Kind,
            resource: None,
            dependency: None,
            applies: false,
        };
        assert_eq!(verbs_of(&apply), ["patch"]);
        apply.applies = true;
        assert_eq!(verbs_of(&apply), ["patch", "create"]);
    }

    #[test]
    fn a_bare_image_name_is_the_projects_where_a_build_line_tags_it() {
        let workflow = "kubectl -n soak create deployment synthetic --image=busybox\n";
        assert!(!tagged(workflow, "busybox"));
        assert!(tagged("docker build -t widget:dev .\n", "widget"));
        assert!(tagged("IMG ?= controller:latest\n", "controller"));
        assert!(tagged("  - image: widget\n", "widget"));
        // A path of several segments is the project's wherever it is named.
        assert!(tagged(
            "kind load docker-image acme/widget:dev\n",
            "acme/widget"
        ));
        assert!(!tagged("docker build -t widgets:dev .\n", "widget"));
    }
}
