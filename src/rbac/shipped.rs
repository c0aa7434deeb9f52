//! The RBAC a project ships, wherever it keeps it: plain YAML files (a
//! kustomize layout, `deploy/`, an installer), and Helm charts, rendered
//! with their default values by a `helm` on PATH, or else read from their
//! templates with each `{{ .. }}` action kept as an opaque name.
//!
//! Read are the roles and their rules, the bindings that give them to
//! service accounts, and the workloads that run a program under an account,
//! each with the file and line it is at.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::images::{self, Dockerfile};
use crate::manifests::diagnostics::Location;
use crate::manifests::emit::rbac::RbacRule;
use crate::{Error, Result};

/// A `Role` or `ClusterRole`.
#[derive(Debug, Clone)]
pub struct Role {
    pub name: String,
    pub cluster: bool,
    pub rules: Vec<Rule>,
    pub location: Location,
    /// Where the role was found: the chart, or the file.
    pub origin: PathBuf,
    pub labels: BTreeMap<String, String>,
    /// An aggregated cluster role's `clusterRoleSelectors`: its rules are
    /// those of the cluster roles whose labels match one.
    pub selectors: Vec<BTreeMap<String, String>>,
    /// It aggregates roles by labels no shipped cluster role carries (a
    /// chart's helper rsop cannot expand without helm): what it grants is
    /// not known.
    pub unknown: bool,
}

/// One rule of a role, where it is written.
#[derive(Debug, Clone)]
pub struct Rule {
    pub rule: RbacRule,
    pub location: Location,
}

impl Role {
    /// `Role` or `ClusterRole`.
    pub fn kind(&self) -> &'static str {
        if self.cluster { "ClusterRole" } else { "Role" }
    }
}

/// A `RoleBinding` or `ClusterRoleBinding`.
#[derive(Debug, Clone)]
pub struct Binding {
    /// The role it binds, and whether that is a `ClusterRole`.
    pub role: String,
    pub role_cluster: bool,
    /// A `ClusterRoleBinding`: the grant spans the cluster.
    pub cluster: bool,
    /// The service accounts it binds the role to.
    pub accounts: Vec<String>,
    pub origin: PathBuf,
}

/// A workload that runs containers under a service account.
#[derive(Debug, Clone)]
pub struct Workload {
    pub kind: String,
    pub name: String,
    pub account: String,
    pub containers: Vec<Container>,
    pub location: Location,
    pub origin: PathBuf,
}

#[derive(Debug, Clone)]
pub struct Container {
    pub name: String,
    pub image: String,
    pub command: Vec<String>,
    pub args: Vec<String>,
    /// Its environment as `$NAME=value` (a value set from elsewhere,
    /// `valueFrom`, as `$NAME`): a program may choose its mode by it.
    pub env: Vec<String>,
}

/// Everything found.
#[derive(Debug, Default)]
pub struct Shipped {
    pub roles: Vec<Role>,
    pub bindings: Vec<Binding>,
    pub workloads: Vec<Workload>,
    /// How each chart was read, and what could not be.
    pub notes: Vec<String>,
    /// The CRDs it ships: group and plural.
    pub crds: Vec<(String, String)>,
    /// The kinds those CRDs declare, for code that names a kind whose
    /// type rsop cannot read (kopium's, generated into `OUT_DIR` by a
    /// build script from these files).
    pub crd_kinds: Vec<crate::calls::OwnKind>,
    /// The Dockerfiles the repository builds its images from.
    pub dockerfiles: Vec<Dockerfile>,
    /// The text of its build files (Makefile, CI workflows), which tag
    /// the images it builds.
    pub build_text: String,
    /// The names the project goes by: its folder, its packages and
    /// repository, its charts.
    pub names: BTreeSet<String>,
    /// The owners of its repository, as its manifests' `repository`
    /// names it (`mpwsh` of `https://github.com/mpwsh/kubetailor`).
    pub owners: BTreeSet<String>,
    /// Kustomize's image rewrites (`images: [{name, newName}]`): the image
    /// a placeholder like `controller` is deployed as.
    pub renamed: Vec<(String, String)>,
}

impl Shipped {
    /// Adds the build file at `path` to [`Shipped::build_text`], without
    /// its comment lines (`# pause pods` names no image it builds).
    fn add_build_file(&mut self, path: &Path) {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
            self.build_text.push_str(line);
            self.build_text.push('\n');
        }
    }
}

/// Directories never searched: build output, dependencies, and the
/// objects of tests (a Deployment in a test of an admission policy runs
/// nothing of the project's).
const SKIPPED: &[&str] = &[
    "target",
    "node_modules",
    "vendor",
    "test",
    "tests",
    "e2e",
    "testdata",
    "fixtures",
];

/// The names of test folders, which a folder's name may hold as a word.
const TEST_FOLDERS: &[&str] = &["test", "tests", "e2e", "testdata", "fixtures"];

/// The kinds read; other documents are passed over.
const READ: &[&str] = &[
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Job",
    "CronJob",
    "Pod",
    "CustomResourceDefinition",
];

/// The files and folders under `root`, `max_depth` deep, in name order,
/// leaving out hidden folders and those named in `skipped`.
pub(crate) fn searched(
    root: &Path,
    max_depth: usize,
    skipped: &'static [&'static str],
) -> impl Iterator<Item = walkdir::DirEntry> {
    walkdir::WalkDir::new(root)
        .max_depth(max_depth)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(move |e| {
            let name = e.file_name().to_string_lossy();
            // `e2e-tests` is a folder of tests as `tests` is; not every
            // skipped name is a word of others (`target-allocator`).
            let skip = || {
                skipped.contains(&name.as_ref())
                    || name
                        .split(['-', '_'])
                        .any(|word| skipped.contains(&word) && TEST_FOLDERS.contains(&word))
            };
            e.depth() == 0 || !(e.file_type().is_dir() && (name.starts_with('.') || skip()))
        })
        .filter_map(std::result::Result::ok)
}

/// Finds what the project under `root` ships. `helm` renders charts when
/// given.
pub fn find(root: &Path, helm: Option<&Path>) -> Result<Shipped> {
    let mut shipped = Shipped::default();
    let mut charts = Vec::new();
    let mut files = Vec::new();
    // The files kustomizations patch their resources with: parts of
    // another object, not objects of their own.
    let mut patches: Vec<PathBuf> = Vec::new();
    let mut rust = Vec::new();
    for entry in searched(root, usize::MAX, SKIPPED) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy();
        if entry.file_type().is_file() && path.extension().is_some_and(|e| e == "rs") {
            rust.push(path.to_path_buf());
            continue;
        }
        if entry.file_type().is_file() && Dockerfile::named(&name) {
            let shown = path.strip_prefix(root).unwrap_or(path);
            let text = std::fs::read_to_string(path).unwrap_or_default();
            match Dockerfile::read(&text, shown) {
                Ok(dockerfile) => shipped.dockerfiles.extend(dockerfile),
                Err(complaint) => shipped.notes.push(complaint),
            }
            continue;
        }
        if entry.file_type().is_file() && images::is_build_file(path) {
            shipped.add_build_file(path);
        }
        if entry.file_type().is_file()
            && matches!(
                name.as_ref(),
                "kustomization.yaml" | "kustomization.yml" | "Kustomization"
            )
        {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            if let Ok(kustomization) = serde_yaml_ng::from_str::<Value>(&text) {
                for image in kustomization
                    .get("images")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let (Some(from), Some(to)) = (
                        image.get("name").and_then(Value::as_str),
                        image.get("newName").and_then(Value::as_str),
                    ) {
                        shipped.renamed.push((from.to_string(), to.to_string()));
                    }
                }
                let dir = path.parent().unwrap_or(root);
                let listed = ["patchesStrategicMerge", "patches", "patchesJson6902"]
                    .iter()
                    .filter_map(|key| kustomization.get(*key)?.as_array())
                    .flatten()
                    .filter_map(|patch| patch.as_str().or_else(|| patch.get("path")?.as_str()));
                patches.extend(listed.map(|file| crate::paths::lexical(&dir.join(file))));
            }
        }
        if entry.file_type().is_file() && entry.file_name() == "Cargo.toml" {
            let manifest = std::fs::read_to_string(path)
                .ok()
                .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok());
            let package = manifest.as_ref().and_then(|m| {
                m.get("package")
                    .or_else(|| m.get("workspace")?.get("package"))
            });
            let field = |key: &str| package.and_then(|p| p.get(key)).and_then(|v| v.as_str());
            // The repository without `.git`, from its last segment back.
            let trimmed = |value: &str| {
                value
                    .trim_end_matches(['/', '.'])
                    .trim_end_matches(".git")
                    .to_string()
            };
            // The project's own name: its root manifest's package (a member
            // crate's name, `metrics`, names no image).
            let root_manifest =
                entry.depth() == 1 || (entry.depth() == 2 && !root.join("Cargo.toml").is_file());
            if root_manifest && let Some(name) = field("name") {
                let last = trimmed(name);
                shipped
                    .names
                    .insert(last.rsplit('/').next().unwrap_or(&last).to_string());
            }
            // Any member's `repository` is the project's: its name, and
            // the owner its images may be pushed under.
            if let Some(repository) = field("repository") {
                let repository = trimmed(repository);
                let mut segments = repository.rsplit('/');
                if let Some(name) = segments.next() {
                    shipped.names.insert(name.to_string());
                }
                if let Some(owner) = segments.next().filter(|o| !o.contains(['.', ':'])) {
                    shipped.owners.insert(owner.to_string());
                }
            }
        }
        if entry.file_type().is_file() && entry.file_name() == "Chart.yaml" {
            charts.push(path.parent().unwrap_or(root).to_path_buf());
        } else if entry.file_type().is_file()
            && path.extension().is_some_and(|e| e == "yaml" || e == "yml")
        {
            files.push(path.to_path_buf());
        }
    }
    // The workflows that build and push the images, in a folder the walk
    // above passes over.
    for dir in [".github/workflows", ".gitlab"] {
        for entry in walkdir::WalkDir::new(root.join(dir))
            .sort_by_file_name()
            .into_iter()
            .filter_map(std::result::Result::ok)
            .filter(|e| e.file_type().is_file() && images::is_build_file(e.path()))
        {
            shipped.add_build_file(entry.path());
        }
    }
    if let Some(folder) = std::fs::canonicalize(root)
        .ok()
        .and_then(|r| r.file_name().map(|n| n.to_string_lossy().to_string()))
    {
        shipped.names.insert(folder);
    }
    for chart in &charts {
        if let Some(name) = chart.file_name() {
            shipped.names.insert(name.to_string_lossy().to_string());
        }
    }
    // A chart's files are the chart's to render.
    // (Aggregation is resolved once every role is read, at the end.)
    files.retain(|f| !charts.iter().any(|c| f.starts_with(c)));
    files.retain(|f| !patches.contains(&crate::paths::lexical(f)));
    let rendered = rendered_by_code(&files, &rust);
    files.retain(|f| !rendered.contains(f));
    let relative = |path: &Path| path.strip_prefix(root).unwrap_or(path).to_path_buf();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if !mentions_read_kind(&text) {
            continue;
        }
        let shown = relative(&path);
        let templated = text.contains("{{");
        let text = if templated {
            detemplate(&text, &Value::Null)
        } else {
            text
        };
        let source = if templated {
            Source::Template
        } else {
            Source::Strict
        };
        read_stream(
            &text,
            &shown,
            &shown,
            source,
            &mut shipped,
            &mut Counter::default(),
        )?;
    }
    for chart in charts {
        let shown = relative(&chart);
        match helm {
            Some(helm) => {
                if !render_chart(helm, root, &chart, &shown, &mut shipped)? {
                    read_chart_templates(&chart, &shown, &mut shipped, false)?;
                }
            }
            None => read_chart_templates(&chart, &shown, &mut shipped, true)?,
        }
    }
    aggregate(&mut shipped.roles);
    builtin(&mut shipped);
    Ok(shipped)
}

/// The templates outside a Helm chart (files with `{{ .. }}` actions)
/// that the crate's code names in string literals, by their file name
/// (`include_str!("../templates/job.yaml")`) or by their stem and folder
/// (`"zk-statefulset"` and `"./templates/{}"` for handlebars): the operator
/// renders them into objects it makes, so they deploy nothing of their
/// own.
fn rendered_by_code(files: &[PathBuf], rust: &[PathBuf]) -> HashSet<PathBuf> {
    let templates: Vec<&PathBuf> = files
        .iter()
        .filter(|f| {
            std::fs::read_to_string(f).is_ok_and(|t| t.contains("{{") && mentions_read_kind(&t))
        })
        .collect();
    if templates.is_empty() {
        return HashSet::new();
    }
    let mut literals = HashSet::new();
    for file in rust {
        let Some(tokens) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.parse::<proc_macro2::TokenStream>().ok())
        else {
            continue;
        };
        string_literals(tokens, &mut literals);
    }
    // Folder names the code writes in a path (`"./templates/{}"`).
    let folders: HashSet<&str> = literals
        .iter()
        .flat_map(|l| {
            let mut segments: Vec<&str> = l.split('/').collect();
            segments.pop();
            segments
        })
        .collect();
    templates
        .into_iter()
        .filter(|f| {
            let name = f.file_name().map(|n| n.to_string_lossy().to_string());
            let stem = f.file_stem().map(|n| n.to_string_lossy().to_string());
            let folder = f
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().to_string());
            // The file by its name, or by its stem where the code also
            // names its folder: a word such as `"controller"` alone is not
            // a template's name.
            literals.iter().any(|l: &String| {
                let last = l.rsplit('/').next().unwrap_or(l);
                Some(last) == name.as_deref()
                    || (Some(last) == stem.as_deref()
                        && folder.as_deref().is_some_and(|f| folders.contains(f)))
            })
        })
        .cloned()
        .collect()
}

/// The values of the string literals among `tokens`.
fn string_literals(tokens: proc_macro2::TokenStream, out: &mut HashSet<String>) {
    for tree in tokens {
        match tree {
            proc_macro2::TokenTree::Group(g) => string_literals(g.stream(), out),
            proc_macro2::TokenTree::Literal(l) => {
                if let Ok(lit) = syn::parse_str::<syn::LitStr>(&l.to_string()) {
                    out.insert(lit.value());
                }
            }
            _ => {}
        }
    }
}

/// Gives each aggregated cluster role the rules of the cluster roles its
/// selectors match, as the API server's controller does; one whose
/// selectors match none grants what is not known.
fn aggregate(roles: &mut [Role]) {
    let matches = |selector: &BTreeMap<String, String>, role: &Role| {
        !selector.is_empty() && selector.iter().all(|(k, v)| role.labels.get(k) == Some(v))
    };
    for i in 0..roles.len() {
        if roles[i].selectors.is_empty() {
            continue;
        }
        let gathered: Vec<Rule> = roles
            .iter()
            .enumerate()
            .filter(|(j, r)| {
                *j != i && r.cluster && roles[i].selectors.iter().any(|s| matches(s, r))
            })
            .flat_map(|(_, r)| r.rules.clone())
            .collect();
        roles[i].unknown = gathered.is_empty();
        roles[i].rules.extend(gathered);
    }
}

/// The cluster roles every cluster has that a binding names and the
/// project does not ship: `cluster-admin` grants everything; what the
/// others grant (`admin`, `edit`, `view`, `system:*`) depends on the
/// cluster's aggregation, so it is not known.
fn builtin(shipped: &mut Shipped) {
    let mut added: Vec<Role> = Vec::new();
    for binding in shipped.bindings.iter().filter(|b| b.role_cluster) {
        let known = |name: &str| {
            shipped
                .roles
                .iter()
                .chain(&added)
                .any(|r| r.cluster && r.name == name)
        };
        let name = binding.role.as_str();
        let everything = name == "cluster-admin";
        if known(name)
            || !(everything
                || matches!(name, "admin" | "edit" | "view")
                || name.starts_with("system:"))
        {
            continue;
        }
        let all = || vec!["*".to_string()];
        added.push(Role {
            name: name.to_string(),
            cluster: true,
            rules: if everything {
                vec![Rule {
                    rule: RbacRule {
                        groups: all(),
                        resources: all(),
                        resource_names: Vec::new(),
                        urls: Vec::new(),
                        verbs: all(),
                        namespace: None,
                    },
                    location: Location::new(&binding.origin, 1, 1),
                }]
            } else {
                Vec::new()
            },
            location: Location::new(&binding.origin, 1, 1),
            origin: binding.origin.clone(),
            labels: BTreeMap::new(),
            selectors: Vec::new(),
            unknown: !everything,
        });
    }
    shipped.roles.extend(added);
}

/// Whether a file may hold a document of a kind that is read.
fn mentions_read_kind(text: &str) -> bool {
    text.lines().any(|line| {
        line.trim_start()
            .strip_prefix("kind:")
            .is_some_and(|kind| READ.contains(&kind.trim().trim_matches(['"', '\''])))
    })
}

/// The documents of a YAML stream, each with the line it starts on.
fn documents(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut start = 1;
    for (i, line) in text.lines().enumerate() {
        let is_separator = line == "---" || line.starts_with("--- ") || line.starts_with("---\t");
        if is_separator {
            out.push((start, std::mem::take(&mut current)));
            start = i + 2;
        } else if let Some(rest) = line.strip_prefix("---")
            && rest.starts_with(|c: char| c.is_ascii_alphabetic())
        {
            // `---kind: Role`: a template's `---` whose line break a `{{-`
            // trimmed. Helm splits its manifests there all the same.
            out.push((start, std::mem::take(&mut current)));
            start = i + 1;
            current.push_str(rest);
            current.push('\n');
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    out.push((start, current));
    out
}

/// Counts of documents of each kind, and of `rules:` keys, seen so far in
/// each template file: the `n`th role rendered from a template is the one
/// written `n`th in it.
#[derive(Debug, Default)]
struct Counter {
    seen: HashMap<(PathBuf, String), usize>,
    /// The project root, which rendered files' paths are relative to.
    root: PathBuf,
    /// Each template's text, read once for all the objects it renders.
    templates: HashMap<PathBuf, String>,
}

impl Counter {
    fn template(&mut self, file: &Path) -> &str {
        self.templates
            .entry(file.to_path_buf())
            .or_insert_with(|| std::fs::read_to_string(self.root.join(file)).unwrap_or_default())
    }

    fn next(&mut self, file: &Path, what: &str) -> usize {
        let n = self
            .seen
            .entry((file.to_path_buf(), what.to_string()))
            .or_default();
        *n += 1;
        *n - 1
    }
}

/// How a stream of documents relates to the file it is shown as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The file's text, line for line: a document that does not parse is
    /// an error.
    Strict,
    /// A template with its actions replaced, line for line.
    Template,
    /// What helm rendered from the file: lines are looked up in the
    /// template, by the order of the documents.
    Rendered,
}

/// Reads the documents of `text`, which `file` holds or came from.
fn read_stream(
    text: &str,
    file: &Path,
    origin: &Path,
    source: Source,
    shipped: &mut Shipped,
    counter: &mut Counter,
) -> Result<()> {
    for (start, document) in documents(text) {
        if document.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_yaml_ng::from_str(&document) {
            Ok(v) => v,
            Err(e) => {
                if source == Source::Strict && mentions_read_kind(&document) {
                    let line = e.location().map_or(start, |l| start + l.line() - 1);
                    let at = Location::new(file, line, e.location().map_or(1, |l| l.column()));
                    return Err(Error::user_with_help(
                        format!("{at}: this RBAC file is not valid YAML: {e}"),
                        "fix the YAML (kubectl refuses it too); rsop checks nothing until it parses",
                    ));
                }
                // A template read without helm: what it holds is not checked,
                // and says so.
                if source == Source::Template && mentions_read_kind(&document) {
                    let line = e.location().map_or(start, |l| start + l.line() - 1);
                    shipped.notes.push(format!(
                        "{}:{line}: rsop cannot read this template without helm ({e}), so the roles and workloads in it are not checked; put helm on PATH",
                        file.display()
                    ));
                }
                continue;
            }
        };
        read_object(
            &value, &document, start, file, origin, source, shipped, counter,
        );
    }
    Ok(())
}

/// The variables the container's program finds set, as `$NAME=value`:
/// its `env`, a value set from elsewhere (`valueFrom`) as `$NAME`, every
/// variable a config map or secret may give (`envFrom`) as `$*`, and those
/// the kubelet sets in every container.
fn environment(container: &Value) -> Vec<String> {
    let mut out: Vec<String> = container
        .get("env")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|var| {
            let name = var.get("name")?.as_str()?;
            Some(match var.get("value") {
                Some(value) => format!("${name}={}", scalar(value)),
                None => format!("${name}"),
            })
        })
        .collect();
    if container
        .get("envFrom")
        .and_then(Value::as_array)
        .is_some_and(|from| !from.is_empty())
    {
        out.push("$*".to_string());
    }
    out.extend(
        [
            "KUBERNETES_SERVICE_HOST",
            "KUBERNETES_SERVICE_PORT",
            "KUBERNETES_PORT",
            "HOSTNAME",
        ]
        .iter()
        .map(|name| format!("${name}")),
    );
    out
}

/// A YAML scalar as the text a program reads from its environment.
fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

fn str_at<'v>(value: &'v Value, path: &[&str]) -> Option<&'v str> {
    let mut v = value;
    for key in path {
        v = v.get(key)?;
    }
    v.as_str()
}

/// The line of each item of the `n`th `rules:` list of `text`.
fn rule_lines(text: &str, n: usize) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let Some(key) = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("rules:"))
        .map(|(i, _)| i)
        .nth(n)
    else {
        return Vec::new();
    };
    let key_indent = indent(lines[key]);
    let mut items = Vec::new();
    let mut item_indent = None;
    for (i, line) in lines.iter().enumerate().skip(key + 1) {
        let trimmed = line.trim_start();
        // Comments and template actions (`{{- if .. }}`) hold no rule.
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with("{{") {
            continue;
        }
        let at = indent(line);
        let is_item = trimmed.starts_with("- ") || trimmed == "-";
        match item_indent {
            None if is_item && at >= key_indent => {
                item_indent = Some(at);
                items.push(i + 1);
            }
            Some(at_items) if is_item && at == at_items => items.push(i + 1),
            Some(at_items) if at > at_items => {}
            _ => break,
        }
    }
    items
}

/// The line of the `n`th `kind: <kind>` of `text`.
fn kind_line(text: &str, kind: &str, n: usize) -> Option<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            l.trim_start()
                .strip_prefix("kind:")
                .is_some_and(|k| k.trim().trim_matches(['"', '\'']) == kind)
        })
        .nth(n)
        .map(|(i, _)| i + 1)
}

#[allow(clippy::too_many_arguments)]
fn read_object(
    value: &Value,
    document: &str,
    start: usize,
    file: &Path,
    origin: &Path,
    source: Source,
    shipped: &mut Shipped,
    counter: &mut Counter,
) {
    let Some(kind) = value.get("kind").and_then(Value::as_str) else {
        return;
    };
    // Names a template writes with an action are shown as that action.
    let name = restore(str_at(value, &["metadata", "name"]).unwrap_or_default());
    // Rendered documents are looked up in their template, by order.
    let (source_text, base, nth_kind, nth_rules) = if source == Source::Rendered {
        let nth_kind = counter.next(file, kind);
        let nth_rules = if value.get("rules").is_some() {
            counter.next(file, "rules:")
        } else {
            0
        };
        (counter.template(file), 1, nth_kind, nth_rules)
    } else {
        (document, start, 0, 0)
    };
    let location = Location::new(
        file,
        kind_line(source_text, kind, nth_kind).map_or(base, |l| base + l - 1),
        1,
    );
    match kind {
        "Role" | "ClusterRole" => {
            let lines = rule_lines(source_text, nth_rules);
            let rules = value
                .get("rules")
                .and_then(Value::as_array)
                .map(|rules| {
                    rules
                        .iter()
                        .enumerate()
                        .map(|(i, r)| Rule {
                            rule: RbacRule {
                                groups: strings(r.get("apiGroups").unwrap_or(&Value::Null)),
                                resources: strings(r.get("resources").unwrap_or(&Value::Null)),
                                resource_names: strings(
                                    r.get("resourceNames").unwrap_or(&Value::Null),
                                ),
                                urls: strings(r.get("nonResourceURLs").unwrap_or(&Value::Null)),
                                verbs: strings(r.get("verbs").unwrap_or(&Value::Null)),
                                namespace: (kind == "Role").then(String::new),
                            },
                            location: Location::new(
                                file,
                                lines.get(i).map_or(location.line, |l| base + l - 1),
                                1,
                            ),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let labels = |v: Option<&Value>| -> BTreeMap<String, String> {
                v.and_then(Value::as_object)
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| (restore(k), restore(v.as_str().unwrap_or_default())))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let selectors = value
                .pointer("/aggregationRule/clusterRoleSelectors")
                .and_then(Value::as_array)
                .map(|selectors| {
                    selectors
                        .iter()
                        .map(|s| labels(s.get("matchLabels")))
                        .collect()
                })
                .unwrap_or_default();
            shipped.roles.push(Role {
                name,
                cluster: kind == "ClusterRole",
                rules,
                location,
                origin: origin.to_path_buf(),
                labels: labels(value.pointer("/metadata/labels")),
                selectors,
                unknown: false,
            });
        }
        "CustomResourceDefinition" => {
            if let (Some(group), Some(plural)) = (
                str_at(value, &["spec", "group"]),
                str_at(value, &["spec", "names", "plural"]),
            ) {
                shipped.crds.push((restore(group), restore(plural)));
                if let Some(kind) = str_at(value, &["spec", "names", "kind"]) {
                    shipped.crd_kinds.push(crate::calls::OwnKind {
                        kind: restore(kind),
                        group: restore(group),
                        plural: restore(plural),
                        namespaced: str_at(value, &["spec", "scope"]) != Some("Cluster"),
                        root: None,
                        declared_in: None,
                        foreign: true,
                    });
                }
            }
        }
        "RoleBinding" | "ClusterRoleBinding" => {
            let accounts = value
                .get("subjects")
                .and_then(Value::as_array)
                .map(|subjects| {
                    subjects
                        .iter()
                        .filter(|s| s.get("kind").and_then(Value::as_str) == Some("ServiceAccount"))
                        .filter_map(|s| s.get("name").and_then(Value::as_str).map(restore))
                        .collect()
                })
                .unwrap_or_default();
            shipped.bindings.push(Binding {
                role: restore(str_at(value, &["roleRef", "name"]).unwrap_or_default()),
                role_cluster: str_at(value, &["roleRef", "kind"]) == Some("ClusterRole"),
                cluster: kind == "ClusterRoleBinding",
                accounts,
                origin: origin.to_path_buf(),
            });
        }
        _ => {
            let pod = match kind {
                "Pod" => value.get("spec"),
                "CronJob" => value.pointer("/spec/jobTemplate/spec/template/spec"),
                _ => value.pointer("/spec/template/spec"),
            };
            let Some(pod) = pod else { return };
            let account = pod
                .get("serviceAccountName")
                .or_else(|| pod.get("serviceAccount"))
                .and_then(Value::as_str)
                .map_or_else(|| "default".to_string(), restore);
            let containers = ["initContainers", "containers"]
                .iter()
                .filter_map(|key| pod.get(key).and_then(Value::as_array))
                .flatten()
                .map(|c| Container {
                    name: c
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    image: c
                        .get("image")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    command: strings(c.get("command").unwrap_or(&Value::Null)),
                    args: strings(c.get("args").unwrap_or(&Value::Null)),
                    env: environment(c),
                })
                .collect();
            shipped.workloads.push(Workload {
                kind: kind.to_string(),
                name,
                account,
                containers,
                location,
                origin: origin.to_path_buf(),
            });
        }
    }
}

/// `helm template` of the chart with its default values; `false` (and a
/// note) when it does not render.
fn render_chart(
    helm: &Path,
    root: &Path,
    chart: &Path,
    shown: &Path,
    shipped: &mut Shipped,
) -> Result<bool> {
    let template = |values: &[String]| {
        Command::new(helm)
            .args(["template", "rsop-rbac"])
            .arg(chart)
            .args(["--namespace", "default"])
            .args(values.iter().flat_map(|v| ["--set-string", v.as_str()]))
            .output()
            .map_err(|e| Error::io("run", helm, e))
    };
    let mut output = template(&[])?;
    // Values a chart marks `required` and leaves out of its defaults stop
    // the render before any role is written: a placeholder for each lets
    // the roles and workloads render (names, accounts and rules seldom
    // come from such values).
    let required = if output.status.success() {
        Vec::new()
    } else {
        required_values(chart)
    };
    if !required.is_empty() {
        let placeholders: Vec<String> = required
            .iter()
            .map(|path| format!("{path}=rsop-placeholder"))
            .collect();
        let retried = template(&placeholders)?;
        if retried.status.success() {
            shipped.notes.push(format!(
                "the Helm chart `{}` requires values its defaults leave out ({}): rendered with a placeholder for each",
                shown.display(),
                required.join(", ")
            ));
            output = retried;
        }
    }
    if !output.status.success() {
        // The rest is checked all the same, the chart read as written.
        let stderr = String::from_utf8_lossy(&output.stderr);
        shipped.notes.push(format!(
            "the Helm chart `{}` does not render with its default values ({}): read its templates as written instead; fix the chart (`helm template` shows the same error)",
            shown.display(),
            stderr.split_whitespace().collect::<Vec<_>>().join(" ")
        ));
        return Ok(false);
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut counter = Counter {
        root: root.to_path_buf(),
        ..Counter::default()
    };
    // Each rendered document names its template (`# Source:
    // chart/templates/x.yaml`); one that does not follows the one before it
    // from the same file.
    let mut file = None;
    for (_, document) in documents(&text) {
        if let Some(source) = document
            .lines()
            .find_map(|l| l.strip_prefix("# Source: "))
            .and_then(|s| s.split_once('/'))
        {
            file = Some(shown.join(source.1.trim()));
        }
        let Some(file) = &file else { continue };
        read_stream(
            &document,
            file,
            shown,
            Source::Rendered,
            shipped,
            &mut counter,
        )?;
    }
    shipped.notes.push(format!(
        "read the Helm chart `{}` as `{} template` renders it with its default values",
        shown.display(),
        helm.display()
    ));
    Ok(true)
}

/// The values the templates of `chart` pass to `required`
/// (`{{ required "msg" .Values.auth.secret }}`,
/// `{{ .Values.url | required "msg" }}`), as dotted paths, in name order.
fn required_values(chart: &Path) -> Vec<String> {
    let mut out = BTreeSet::new();
    for entry in walkdir::WalkDir::new(chart.join("templates"))
        .into_iter()
        .filter_map(std::result::Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        let mut rest = text.as_str();
        while let Some(start) = rest.find("{{") {
            let action = &rest[start + 2..];
            let end = action.find("}}").unwrap_or(action.len());
            let (action, after) = action.split_at(end);
            rest = after;
            let words: Vec<&str> = action
                .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '|'))
                .filter(|w| !w.is_empty())
                .collect();
            if !words.contains(&"required") {
                continue;
            }
            for word in words {
                let path = word.trim_start_matches('$').strip_prefix(".Values.");
                if let Some(path) = path.filter(|p| {
                    p.split('.').all(|k| {
                        !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    })
                }) {
                    out.insert(path.to_string());
                }
            }
        }
    }
    out.into_iter().collect()
}

/// Without helm: the chart's templates, each action kept as an opaque name
/// (so that a role and its binding, which name it by the same action, still
/// meet), conditions taken as true.
fn read_chart_templates(
    chart: &Path,
    shown: &Path,
    shipped: &mut Shipped,
    no_helm: bool,
) -> Result<()> {
    // The default values, for the actions that only read one.
    let values: Value = std::fs::read_to_string(chart.join("values.yaml"))
        .ok()
        .and_then(|t| serde_yaml_ng::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let dir = chart.join("templates");
    let mut templates: Vec<PathBuf> = walkdir::WalkDir::new(&dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(std::result::Result::ok)
        .map(walkdir::DirEntry::into_path)
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    templates.sort();
    for template in templates {
        let Ok(text) = std::fs::read_to_string(&template) else {
            continue;
        };
        if !mentions_read_kind(&text) {
            continue;
        }
        let file = shown.join(template.strip_prefix(chart).unwrap_or(&template));
        let text = detemplate(&text, &values);
        read_stream(
            &text,
            &file,
            shown,
            Source::Template,
            shipped,
            &mut Counter::default(),
        )?;
    }
    if !no_helm {
        return Ok(());
    }
    shipped.notes.push(format!(
        "no `helm` on PATH: read the templates of the Helm chart `{}` as written, every \
         condition taken as true and rules written by `toYaml` left out; put helm on PATH to \
         check what the chart renders",
        shown.display()
    ));
    Ok(())
}

/// A template with each line that holds only actions blanked, each action
/// that reads a default value (`{{ .Values.image.repository }}`) replaced
/// by it, and each other action by a name made of its text.
fn detemplate(text: &str, values: &Value) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut rest = line;
        let mut kept = String::new();
        let mut only_actions = true;
        while let Some(open) = rest.find("{{") {
            let Some(close) = rest[open..].find("}}") else {
                break;
            };
            let before = &rest[..open];
            if !before.trim().is_empty() {
                only_actions = false;
            }
            kept.push_str(before);
            let action = &rest[open + 2..open + close];
            match default_value(action, values) {
                Some(value) => kept.push_str(&value),
                None => kept.push_str(&opaque(action)),
            }
            rest = &rest[open + close + 2..];
        }
        // A YAML comment after the actions is no content.
        if !rest.trim().is_empty() && !rest.trim_start().starts_with('#') {
            only_actions = false;
        }
        kept.push_str(rest);
        if only_actions && line.contains("{{") {
            out.push('\n');
        } else {
            out.push_str(&kept);
            out.push('\n');
        }
    }
    out
}

/// The default value an action reads, when it reads one scalar
/// (`.Values.image.tag`, also piped through `quote` or `default`).
fn default_value(action: &str, values: &Value) -> Option<String> {
    let inner = action.trim().trim_matches('-').trim();
    let (path, _pipes) = inner.split_once('|').unwrap_or((inner, ""));
    let keys = path.trim().strip_prefix(".Values.")?;
    let mut value = values;
    for key in keys.split('.') {
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        value = value.get(key)?;
    }
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A name for a template action that YAML reads as plain text: the same
/// action gives the same name, and [`restore`] gives the action back.
fn opaque(action: &str) -> String {
    use std::fmt::Write as _;
    let inner = action.trim().trim_matches('-').trim();
    let mut name = String::from("tplx");
    for byte in inner.bytes() {
        let _ = write!(name, "{byte:02x}");
    }
    name.push('x');
    name
}

/// `text` with each name [`opaque`] made shown as its action again.
pub fn restore(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("tplx") {
        let tail = &rest[start + 4..];
        let hex_len = tail
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(tail.len());
        let decoded: Option<Vec<u8>> = (hex_len % 2 == 0 && tail[hex_len..].starts_with('x'))
            .then(|| {
                (0..hex_len)
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&tail[i..i + 2], 16).ok())
                    .collect()
            })
            .flatten();
        if let Some(action) = decoded.and_then(|bytes| String::from_utf8(bytes).ok()) {
            out.push_str(&rest[..start]);
            out.push_str("{{ ");
            out.push_str(&action);
            out.push_str(" }}");
            rest = &tail[hex_len + 1..];
        } else {
            out.push_str(&rest[..start + 4]);
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files the workloads found are in.
    fn workload_files(shipped: &Shipped) -> Vec<String> {
        shipped
            .workloads
            .iter()
            .map(|w| w.location.file.display().to_string())
            .collect()
    }

    #[test]
    fn a_folder_of_tests_is_passed_over_by_a_word_of_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let daemonset = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: collector}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: acme/collector, envFrom: [{configMapRef: {name: c}}]}]\n";
        for folder in ["e2e-tests", "target-allocator", "deploy"] {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
            std::fs::write(dir.path().join(folder).join("collector.yaml"), daemonset).unwrap();
        }
        let shipped = find(dir.path(), None).unwrap();
        let found = workload_files(&shipped);
        assert_eq!(
            found,
            ["deploy/collector.yaml", "target-allocator/collector.yaml"]
        );
        // Its environment: what `envFrom` may give, and what the kubelet sets.
        let env = &shipped.workloads[0].containers[0].env;
        assert!(env.contains(&"$*".to_string()), "{env:?}");
        assert!(
            env.contains(&"$KUBERNETES_SERVICE_HOST".to_string()),
            "{env:?}"
        );
    }

    #[test]
    fn a_file_a_kustomization_patches_with_is_no_object_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let daemonset = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: speaker}\nspec:\n  template:\n    spec:\n      serviceAccountName: speaker\n      containers: [{name: speaker, image: acme/speaker}]\n";
        write("base/speaker.yaml", daemonset);
        write(
            "cni/speaker-patch.yaml",
            &daemonset.replace("acme/speaker", "acme/fib"),
        );
        write(
            "cni/kustomization.yaml",
            "resources: [../base]\npatches:\n  - path: speaker-patch.yaml\n",
        );
        let shipped = find(dir.path(), None).unwrap();
        let found = workload_files(&shipped);
        assert_eq!(found, ["base/speaker.yaml"]);
    }

    #[test]
    fn rules_are_found_at_their_lines() {
        let text = "kind: ClusterRole\nrules:\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [get]\n# note\n- apiGroups: [apps]\n  resources:\n  - deployments\n  verbs: [list]\n";
        assert_eq!(rule_lines(text, 0), vec![3, 7]);
        let nested = "kind: Role\nrules:\n  - apiGroups: [\"\"]\n    verbs: [get]\n  - apiGroups: [apps]\nmetadata:\n  name: x\n";
        assert_eq!(rule_lines(nested, 0), vec![3, 5]);
    }

    #[test]
    fn template_actions_become_names_and_action_lines_go() {
        let text = "{{- if .Values.rbac.create }}\nkind: Role\nmetadata:\n  name: {{ include \"op.fullname\" . }}-manager\n  labels:\n    {{- include \"op.labels\" . | nindent 4 }}\n{{- end }}\n";
        let plain = detemplate(text, &Value::Null);
        assert!(
            plain.starts_with("\nkind: Role\nmetadata:\n  name: tplx"),
            "{plain}"
        );
        assert!(plain.ends_with("x-manager\n  labels:\n\n\n"), "{plain}");
        let value: Value = serde_yaml_ng::from_str(&plain).unwrap();
        assert_eq!(
            restore(value["metadata"]["name"].as_str().unwrap()),
            "{{ include \"op.fullname\" . }}-manager"
        );
    }

    #[test]
    fn an_action_line_with_a_comment_goes_too() {
        let text = "args:\n  - run\n  {{- if .Values.debug }} # deprecated: use env\n  - --debug\n  {{- end }}\n";
        let plain = detemplate(text, &Value::Null);
        let value: Value = serde_yaml_ng::from_str(&plain).unwrap();
        assert_eq!(value["args"], serde_json::json!(["run", "--debug"]));
    }

    #[test]
    fn a_template_that_cannot_be_read_without_helm_says_so() {
        let mut shipped = Shipped::default();
        let text = "kind: Deployment\nspec:\n  template: [a\n";
        read_stream(
            text,
            Path::new("charts/op/templates/deployment.yaml"),
            Path::new("charts/op"),
            Source::Template,
            &mut shipped,
            &mut Counter::default(),
        )
        .unwrap();
        assert_eq!(shipped.notes.len(), 1, "{:?}", shipped.notes);
        assert!(
            shipped.notes[0].starts_with("charts/op/templates/deployment.yaml:"),
            "{}",
            shipped.notes[0]
        );
        assert!(
            shipped.notes[0]
                .ends_with("so the roles and workloads in it are not checked; put helm on PATH")
        );
    }

    #[test]
    fn an_aggregated_cluster_role_grants_the_rules_of_those_it_selects() {
        let text = r#"
kind: ClusterRole
metadata: {name: op}
aggregationRule:
  clusterRoleSelectors:
    - matchLabels: {example.com/aggregate-to-op: "true"}
---
kind: ClusterRole
metadata: {name: op-widgets, labels: {example.com/aggregate-to-op: "true"}}
rules:
  - {apiGroups: [example.com], resources: [widgets], verbs: [list, watch]}
---
kind: ClusterRole
metadata: {name: viewer}
aggregationRule:
  clusterRoleSelectors:
    - matchLabels: {example.com/aggregate-to-viewer: "true"}
"#;
        let mut shipped = Shipped::default();
        read_stream(
            text,
            Path::new("rbac.yaml"),
            Path::new("rbac.yaml"),
            Source::Strict,
            &mut shipped,
            &mut Counter::default(),
        )
        .unwrap();
        aggregate(&mut shipped.roles);
        let op = &shipped.roles[0];
        assert_eq!(op.rules.len(), 1);
        assert_eq!(op.rules[0].rule.resources, ["widgets"]);
        assert!(!op.unknown);
        // Selectors no shipped role matches: its grants are not known.
        assert!(shipped.roles[2].rules.is_empty() && shipped.roles[2].unknown);
    }

    #[test]
    fn documents_keep_their_first_line() {
        let docs = documents("a: 1\n---\nb: 2\nc: 3\n--- # x\nd: 4\n");
        let starts: Vec<usize> = docs.iter().map(|(s, _)| *s).collect();
        assert_eq!(starts, vec![1, 3, 6]);
    }

    #[test]
    fn a_separator_a_template_trimmed_still_splits() {
        let docs = documents("a: 1\n---kind: Role\nb: 2\n");
        assert_eq!(
            docs,
            [
                (1, "a: 1\n".to_string()),
                (2, "kind: Role\nb: 2\n".to_string())
            ]
        );
    }
}
