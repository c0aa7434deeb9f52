//! `rsop generate helm`: a Helm chart made from the objects `config/default`
//! renders, so the chart and `config/` cannot disagree.
//!
//! Each rendered object becomes one template. Its content stays as
//! kustomize rendered it, apart from the parts a chart user sets:
//! names take the release's prefix, namespaces the release's namespace,
//! labels Helm's standard set, and the manager's Deployment reads image,
//! replicas, resources, flags and scheduling from values. The `ServiceMonitor`
//! and `NetworkPolicy` come from `config/prometheus` and
//! `config/network-policy`, behind values that are off by default.
//!
//! The templates, helpers, NOTES.txt, .helmignore and values.schema.json
//! are rsop's and rewritten on every run; Chart.yaml and values.yaml are the
//! user's once written, and only `--force` writes them again.

mod holes;
mod webhooks;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use heck::ToSnakeCase;
use serde_json::json;
use serde_yaml_ng::{Mapping, Value};

use self::holes::{Holes, block, nindent};
use self::webhooks::Webhooks;
use super::{kind, kustomize, name};
use crate::output::{Disk, FileChange};
use crate::project::Project;
use crate::templates::Templates;
use crate::yaml::{get, get_str};
use crate::{Error, Result};

/// Where the chart goes unless `--output-dir` says otherwise.
pub const DEFAULT_OUTPUT_DIR: &str = "dist/chart";

const DEFAULT_DIR: &str = "config/default";
/// Kustomizations outside `config/default` whose objects the chart offers
/// behind a value.
/// Kustomizations outside `config/default` whose objects the chart offers,
/// each behind the condition that turns its objects on.
const OPTIONAL_DIRS: [(&str, &str); 2] = [
    (
        "config/prometheus",
        "and .Values.metrics.enabled .Values.serviceMonitor.enabled",
    ),
    (
        "config/network-policy",
        "and .Values.metrics.enabled .Values.networkPolicy.enabled",
    ),
];

/// The first line of every template rsop writes: a template comment, so it
/// renders to nothing, which also marks the file as rsop's to replace or
/// remove.
const HEADER: &str = "{{- /* Written by `rsop generate helm` from config/: change config/ and run it again. */ -}}\n";
const HELPERS: &str = include_str!("_helpers.tpl");
const NOTES: &str = include_str!("NOTES.txt");
const HELMIGNORE: &str = include_str!("helmignore");
/// The chart's name in the helper templates above.
const CHART_PLACEHOLDER: &str = "%CHART%";

/// Labels the chart's helpers set; kustomize's values of them are dropped.
const HELM_LABELS: [&str; 5] = [
    "app.kubernetes.io/name",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
    "app.kubernetes.io/managed-by",
    "helm.sh/chart",
];

/// The manager's flags the chart sets from values.
const METRICS_BIND_FLAG: &str = "--metrics-bind-address";
const METRICS_SECURE_FLAG: &str = "--metrics-secure";
const LEADER_ELECT_FLAG: &str = "--leader-elect";
/// The manager's default metrics address when no flag sets one.
const DEFAULT_METRICS_PORT: u16 = 8443;

/// Environment variables the manager reads, with the value that sets each.
const ENV_VALUES: [(&str, &str); 3] = [
    ("WATCH_NAMESPACE", "watchNamespace"),
    ("LOG_LEVEL", "log.level"),
    ("LOG_FORMAT", "log.format"),
];

/// What `generate helm` was asked for.
#[derive(Debug, Clone)]
pub struct HelmOptions {
    /// The chart's directory, relative to the project root.
    pub output_dir: PathBuf,
    /// Write Chart.yaml and values.yaml even when they exist.
    pub force: bool,
    /// The manager's image, for a new values.yaml.
    pub image: Option<String>,
}

/// The chart's files as changes to the disk.
/// The chart's files as changes to the disk, and notes for the user.
#[derive(Debug)]
pub struct Planned {
    pub changes: Vec<FileChange>,
    /// What the user should know, such as an `--img` that a kept
    /// values.yaml overrides.
    pub notes: Vec<String>,
}

/// The chart's files as changes to the disk.
pub fn plan(root: &Path, project: &Project, opts: &HelmOptions) -> Result<Planned> {
    // Each kustomize run is a process of its own; run them side by side.
    let (rendered, optional) = std::thread::scope(|scope| {
        let optional: Vec<_> = OPTIONAL_DIRS
            .into_iter()
            .filter(|(dir, _)| root.join(dir).join("kustomization.yaml").is_file())
            .map(|dir| {
                (
                    dir,
                    scope.spawn(move || kustomize::render(root, dir.0, None)),
                )
            })
            .collect();
        let rendered = kustomize::render(root, DEFAULT_DIR, opts.image.as_deref());
        let optional: Vec<_> = optional
            .into_iter()
            .map(|(dir, handle)| {
                (
                    dir,
                    handle
                        .join()
                        .unwrap_or_else(|e| std::panic::resume_unwind(e)),
                )
            })
            .collect();
        (rendered, optional)
    });
    let mut objects = kustomize::documents(&rendered?, DEFAULT_DIR)?;
    join_flag_values(&mut objects);
    let mut conditions = vec![None; objects.len()];
    let prefix = name_prefix(root)?;
    for ((dir, condition), rendered) in optional {
        for mut object in kustomize::documents(&rendered?, dir)? {
            // config/default prefixes the names of what it includes.
            let full = format!("{prefix}{}", name(&object));
            if objects
                .iter()
                .any(|o| kind(o) == kind(&object) && name(o) == full)
            {
                continue;
            }
            super::mapping_at(&mut object, &["metadata"]).insert("name".into(), full.into());
            objects.push(object);
            conditions.push(Some(condition));
        }
    }

    let chart = Chart::new(project, prefix, &objects)?;
    let out = |file: &str| opts.output_dir.join(file).display().to_string();
    let mut files = Vec::new();
    for (object, condition) in objects.into_iter().zip(conditions) {
        if let Some((path, text)) = chart.template(object, condition)? {
            files.push((out(&format!("templates/{path}")), format!("{HEADER}{text}")));
        }
    }
    files.push((
        out("templates/_helpers.tpl"),
        format!("{HEADER}{}", chart.fill(HELPERS)),
    ));
    files.push((
        out("templates/NOTES.txt"),
        format!("{HEADER}{}", chart.notes(project)),
    ));
    files.push((out(".helmignore"), HELMIGNORE.to_string()));

    // Chart.yaml and values.yaml: the user's once they exist.
    let disk = Disk::new(root);
    let templates = Templates::load_dirs(&["helm/"])?;
    // What rsop would write, made only when needed (it reads Cargo.toml).
    let mut context = None;
    let mut fresh = |template: &str| -> Result<String> {
        let ctx = match context.take() {
            Some(ctx) => ctx,
            None => chart.context(root, project)?,
        };
        let text = templates.render(template, &ctx);
        context = Some(ctx);
        text
    };
    let mut user_files = Vec::new();
    for (file, template) in [
        ("Chart.yaml", "helm/Chart.yaml.tera"),
        ("values.yaml", "helm/values.yaml.tera"),
    ] {
        let path = out(file);
        let text = match disk.read(Path::new(&path))? {
            Some(text) if !opts.force => text,
            _ => fresh(template)?,
        };
        user_files.push((path, text));
    }
    let mut notes = Vec::new();
    if let Some(image) = &opts.image {
        let written = fresh("helm/values.yaml.tera")?;
        let image_of = |text: &str| {
            let values: Value = serde_yaml_ng::from_str(text).unwrap_or_default();
            (
                values["image"]["repository"].clone(),
                values["image"]["tag"].clone(),
            )
        };
        if image_of(&written) != image_of(&user_files[1].1) {
            notes.push(format!(
                "note: {} is yours and keeps its image; --img {image} changes only a new one. \
                 Set image.repository and image.tag there, or pass them to helm with --set.",
                user_files[1].0
            ));
        }
    }
    let values_path = &user_files[1].0;
    let values: Value = serde_yaml_ng::from_str(&user_files[1].1).map_err(|e| Error::Parse {
        path: values_path.into(),
        help: Some("fix the YAML, or run again with --force to write the chart's defaults".into()),
        source: Box::new(e),
    })?;
    files.push((
        out("values.schema.json"),
        values_schema(&chart.defaults, &chart.webhooks, &values),
    ));
    files.extend(user_files);
    files.sort();
    let mut changes = super::changes(root, files)?;
    changes.extend(stale_templates(root, &opts.output_dir, &changes)?);
    Ok(Planned { changes, notes })
}

/// The templates rsop wrote on an earlier run that this run does not make
/// (a kind or an object gone from `config/`), to remove. Templates without
/// rsop's header are the user's and never touched.
fn stale_templates(root: &Path, output_dir: &Path, made: &[FileChange]) -> Result<Vec<FileChange>> {
    let chart = root.join(output_dir);
    let made: BTreeSet<&Path> = made.iter().map(|c| c.path.as_path()).collect();
    let mut stale = Vec::new();
    for entry in walkdir::WalkDir::new(chart.join("templates")).sort_by_file_name() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e)
                if e.io_error()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound) =>
            {
                break;
            }
            Err(e) => return Err(Error::io("read", chart.join("templates"), e.into())),
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let path = output_dir.join(entry.path().strip_prefix(&chart).unwrap_or(entry.path()));
        if made.contains(path.as_path()) {
            continue;
        }
        // Not UTF-8: not a template rsop wrote.
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        if text.starts_with(HEADER) {
            stale.push(FileChange {
                path,
                before: Some(text),
                after: String::new(),
                remove: true,
            });
        }
    }
    Ok(stale)
}

/// Rewrites the manager's `--metrics-bind-address ADDR` (two arguments) as
/// `--metrics-bind-address=ADDR`, the one form the chart's flags replace.
fn join_flag_values(objects: &mut [Value]) {
    for object in objects.iter_mut().filter(|o| kind(o) == "Deployment") {
        let containers = object
            .get_mut("spec")
            .and_then(|s| s.get_mut("template"))
            .and_then(|t| t.get_mut("spec"))
            .and_then(|s| s.get_mut("containers"))
            .and_then(Value::as_sequence_mut);
        for container in containers.into_iter().flatten() {
            if get_str(container, &["name"]) != Some("manager") {
                continue;
            }
            let Some(args) = container.get_mut("args").and_then(Value::as_sequence_mut) else {
                continue;
            };
            let mut joined: Vec<Value> = Vec::with_capacity(args.len());
            let mut pending = false;
            for arg in args.drain(..) {
                match (pending, arg.as_str()) {
                    (true, Some(value)) if !value.starts_with('-') => {
                        if let Some(Value::String(flag)) = joined.last_mut() {
                            flag.push('=');
                            flag.push_str(value);
                        }
                        pending = false;
                    }
                    (_, text) => {
                        pending = text == Some(METRICS_BIND_FLAG);
                        joined.push(arg);
                    }
                }
            }
            *args = joined;
        }
    }
}

/// `namePrefix` of `config/default`, which every object's name starts with.
fn name_prefix(root: &Path) -> Result<String> {
    let path = root.join(DEFAULT_DIR).join("kustomization.yaml");
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io("read", &path, e))?;
    let kustomization: Value = serde_yaml_ng::from_str(&text).map_err(|e| Error::Parse {
        path: path.clone(),
        help: None,
        source: Box::new(e),
    })?;
    Ok(get_str(&kustomization, &["namePrefix"])
        .unwrap_or_default()
        .to_string())
}

/// The values the manager's Deployment renders with, which a new
/// values.yaml starts from: with them, the chart renders what
/// `config/default` renders.
#[derive(Debug, Default)]
struct Defaults {
    image: String,
    pull_policy: String,
    replicas: u64,
    resources: Value,
    leader_election: bool,
    metrics_enabled: bool,
    metrics_port: u16,
    metrics_secure: bool,
    /// The values of [`ENV_VALUES`] the chart offers (not those the
    /// manifests set from the pod, such as a namespaced project's
    /// `WATCH_NAMESPACE`), with their defaults.
    env: Vec<(&'static str, String)>,
    affinity: Value,
    node_selector: Value,
    tolerations: Value,
    image_pull_secrets: Value,
    priority_class_name: String,
}

/// What the templates are made with.
struct Chart {
    /// The chart's name, which prefixes its helper templates.
    name: String,
    /// `config/default`'s `namePrefix`.
    prefix: String,
    /// The manager Deployment's name.
    manager: String,
    /// The manager's service account.
    service_account: String,
    /// The metrics port's name in the Deployment, Service and `ServiceMonitor`.
    metrics_port_name: Option<String>,
    /// The webhook Service, certificates and port.
    webhooks: Webhooks,
    defaults: Defaults,
}

impl Chart {
    fn new(project: &Project, prefix: String, objects: &[Value]) -> Result<Self> {
        let deployments: Vec<&Value> = objects.iter().filter(|o| kind(o) == "Deployment").collect();
        let wanted = format!("{prefix}controller-manager");
        let manager = match deployments.iter().find(|d| name(d) == wanted) {
            Some(d) => *d,
            None if deployments.len() == 1 => deployments[0],
            None => {
                return Err(Error::user_with_help(
                    format!(
                        "`{DEFAULT_DIR}` renders {} Deployments and none is named `{wanted}`",
                        deployments.len()
                    ),
                    "keep the manager's Deployment in config/manager, named controller-manager",
                ));
            }
        };
        let pod = get(manager, &["spec", "template", "spec"]).unwrap_or(&Value::Null);
        let container = manager_container(pod).ok_or_else(|| {
            Error::user_with_help(
                format!("the Deployment `{}` has no containers", name(manager)),
                "keep the manager container in config/manager/manager.yaml",
            )
        })?;
        let args: Vec<&str> = container
            .get("args")
            .and_then(Value::as_sequence)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let flag = |name: &str| {
            args.iter().rev().find_map(|a| {
                if *a == name {
                    Some("true")
                } else {
                    a.strip_prefix(name)?.strip_prefix('=')
                }
            })
        };
        let bind = flag(METRICS_BIND_FLAG).unwrap_or(":8443");
        // "0" turns metrics off; the port is then the manager's default,
        // for when values turn them on.
        let metrics_port = bind
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .filter(|p| *p != 0)
            .unwrap_or(DEFAULT_METRICS_PORT);
        let metrics_port_name = container
            .get("ports")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
            .find(|p| p.get("containerPort").and_then(Value::as_u64) == Some(metrics_port.into()))
            .and_then(|p| get_str(p, &["name"]))
            .map(str::to_string);
        let env = container.get("env").and_then(Value::as_sequence);
        let env_entry = |var: &str| {
            env.into_iter()
                .flatten()
                .find(|e| get_str(e, &["name"]) == Some(var))
        };
        let defaults = Defaults {
            image: get_str(container, &["image"])
                .unwrap_or_default()
                .to_string(),
            pull_policy: get_str(container, &["imagePullPolicy"])
                .unwrap_or_default()
                .to_string(),
            replicas: get(manager, &["spec", "replicas"])
                .and_then(Value::as_u64)
                .unwrap_or(1),
            resources: container
                .get("resources")
                .cloned()
                .unwrap_or_else(empty_map),
            leader_election: flag(LEADER_ELECT_FLAG).is_some_and(is_true),
            metrics_enabled: bind != "0",
            metrics_port,
            metrics_secure: flag(METRICS_SECURE_FLAG).is_none_or(is_true),
            env: ENV_VALUES
                .iter()
                .filter_map(|(var, value)| match env_entry(var) {
                    None => Some((*value, String::new())),
                    Some(e) if e.get("valueFrom").is_none() => Some((
                        *value,
                        get_str(e, &["value"]).unwrap_or_default().to_string(),
                    )),
                    Some(_) => None,
                })
                .collect(),
            affinity: pod.get("affinity").cloned().unwrap_or_else(empty_map),
            node_selector: pod.get("nodeSelector").cloned().unwrap_or_else(empty_map),
            tolerations: pod
                .get("tolerations")
                .cloned()
                .unwrap_or(Value::Sequence(Vec::new())),
            image_pull_secrets: pod
                .get("imagePullSecrets")
                .cloned()
                .unwrap_or(Value::Sequence(Vec::new())),
            priority_class_name: get_str(pod, &["priorityClassName"])
                .unwrap_or_default()
                .to_string(),
        };
        Ok(Chart {
            name: project.project_name.clone(),
            manager: name(manager).to_string(),
            service_account: get_str(pod, &["serviceAccountName"])
                .unwrap_or("default")
                .to_string(),
            prefix,
            metrics_port_name,
            webhooks: Webhooks::of(objects),
            defaults,
        })
    }

    /// `{{ include "<chart>.<helper>" . }}`
    fn include(&self, helper: &str) -> String {
        format!("{{{{ include \"{}.{helper}\" . }}}}", self.name)
    }

    /// The helpers' text with the chart's name in it.
    fn fill(&self, text: &str) -> String {
        let account = self
            .service_account
            .strip_prefix(&self.prefix)
            .unwrap_or(&self.service_account);
        text.replace(CHART_PLACEHOLDER, &self.name)
            .replace("%SERVICE_ACCOUNT%", account)
    }

    /// `name` with the release's prefix in place of kustomize's.
    fn name(&self, holes: &mut Holes, name: &str) -> Option<String> {
        let rest = name
            .strip_prefix(&self.prefix)
            .filter(|_| !self.prefix.is_empty())?;
        Some(format!("{}-{rest}", holes.inline(self.include("fullname"))))
    }

    /// [`Self::name`] for a Service, whose name is a DNS label: at most 63
    /// characters, which a long release name would exceed.
    fn label_name(&self, holes: &mut Holes, name: &str) -> Option<String> {
        let rest = name
            .strip_prefix(&self.prefix)
            .filter(|_| !self.prefix.is_empty())?;
        Some(holes.inline(format!(
            "{{{{ printf \"%s-{rest}\" (include \"{}.fullname\" .) | trunc 63 | trimSuffix \"-\" }}}}",
            self.name
        )))
    }

    /// The template of one rendered object: its path under templates/ and
    /// its text, or `None` for an object the chart leaves to Helm.
    fn template(
        &self,
        mut object: Value,
        optional: Option<&str>,
    ) -> Result<Option<(String, String)>> {
        let kind = kind(&object).to_string();
        let name = name(&object).to_string();
        let suffix = name.strip_prefix(&self.prefix).unwrap_or(&name).to_string();
        let mut holes = Holes::default();
        let webhook = self.webhook_template(&mut holes, &mut object, &suffix);
        let (path, condition) = match kind.as_str() {
            _ if webhook.is_some() => webhook
                .map(|(path, condition)| (path, Some(condition)))
                .unwrap_or_default(),
            // The release's namespace: `helm install --create-namespace`.
            "Namespace" => return Ok(None),
            "CustomResourceDefinition" => {
                if !self.crd_webhooks(&mut holes, &mut object, ".Values.crds.keep") {
                    keep_crd(&mut holes, &mut object);
                }
                let group = get_str(&object, &["spec", "group"]).unwrap_or_default();
                let plural = get_str(&object, &["spec", "names", "plural"]).unwrap_or(&name);
                (
                    format!("crd/{group}_{plural}.yaml"),
                    Some(".Values.crds.install"),
                )
            }
            "Deployment" if name == self.manager => {
                self.manager(&mut holes, &mut object);
                ("manager.yaml".to_string(), None)
            }
            "ServiceAccount" if name == self.service_account => {
                self.service_account(&mut holes, &mut object);
                (
                    "serviceaccount.yaml".to_string(),
                    Some(".Values.serviceAccount.create"),
                )
            }
            "Service" if suffix.ends_with("metrics-service") => {
                self.metrics_service(&mut holes, &mut object);
                (
                    "metrics/service.yaml".to_string(),
                    Some(".Values.metrics.enabled"),
                )
            }
            "ServiceMonitor" => {
                self.service_monitor(&mut holes, &mut object);
                (
                    "metrics/servicemonitor.yaml".to_string(),
                    Some("and .Values.metrics.enabled .Values.serviceMonitor.enabled"),
                )
            }
            "NetworkPolicy" if suffix == "allow-metrics-traffic" => {
                self.network_policy(&mut holes, &mut object);
                (
                    "metrics/networkpolicy.yaml".to_string(),
                    Some("and .Values.metrics.enabled .Values.networkPolicy.enabled"),
                )
            }
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding" => {
                self.binding(&mut holes, &mut object);
                (format!("rbac/{suffix}.yaml"), None)
            }
            other => (format!("{}-{suffix}.yaml", other.to_lowercase()), None),
        };
        // Whatever else the optional kustomizations hold is behind their
        // condition too.
        let condition = condition.or(optional);
        let is_manager_account = kind == "ServiceAccount" && name == self.service_account;
        self.metadata(&mut holes, &mut object, !is_manager_account);
        let text = holes.render(&object, &path)?;
        let text = match condition {
            Some(condition) => format!("{{{{- if {condition} }}}}\n{text}{{{{- end }}}}\n"),
            None => text,
        };
        Ok(Some((path, text)))
    }

    /// Name, namespace and labels of any object.
    fn metadata(&self, holes: &mut Holes, object: &mut Value, rename: bool) {
        let is_crd = kind(object) == "CustomResourceDefinition";
        let is_service = kind(object) == "Service";
        let metadata = super::mapping_at(object, &["metadata"]);
        if rename && !is_crd {
            let renamed = metadata.get("name").and_then(Value::as_str).and_then(|n| {
                if is_service {
                    self.label_name(holes, n)
                } else {
                    self.name(holes, n)
                }
            });
            if let Some(renamed) = renamed {
                metadata.insert("name".into(), renamed.into());
            }
        }
        if metadata.contains_key("namespace") {
            metadata.insert(
                "namespace".into(),
                holes.inline("{{ .Release.Namespace }}").into(),
            );
        }
        let labels = metadata
            .shift_remove("labels")
            .and_then(|l| l.as_mapping().cloned())
            .unwrap_or_default();
        let helper = format!("include \"{}.labels\" .", self.name);
        let labels = with_helm_labels(holes, labels, &helper);
        insert_sorted(metadata, "labels", "labels".into(), Value::Mapping(labels));
    }

    /// A selector's labels, with Helm's selector labels in place of
    /// kustomize's `app.kubernetes.io/name`.
    fn selector(&self, holes: &mut Holes, selector: &mut Value) {
        let Some(map) = selector.as_mapping() else {
            return;
        };
        if !map.contains_key("app.kubernetes.io/name") {
            return;
        }
        let helper = format!("include \"{}.selectorLabels\" .", self.name);
        *selector = Value::Mapping(with_helm_labels(holes, map.clone(), &helper));
    }

    fn service_account(&self, holes: &mut Holes, account: &mut Value) {
        let metadata = super::mapping_at(account, &["metadata"]);
        metadata.insert(
            "name".into(),
            holes.inline(self.include("serviceAccountName")).into(),
        );
        let annotations = optional_key(
            holes,
            "annotations",
            ".Values.serviceAccount.annotations",
            Shape::Yaml,
        );
        insert_sorted(metadata, "annotations", annotations, Value::Null);
    }

    fn binding(&self, holes: &mut Holes, binding: &mut Value) {
        if let Some(role) = get_str(binding, &["roleRef", "name"]).map(str::to_string)
            && let Some(renamed) = self.name(holes, &role)
        {
            super::mapping_at(binding, &["roleRef"]).insert("name".into(), renamed.into());
        }
        let Some(subjects) = binding.get_mut("subjects").and_then(Value::as_sequence_mut) else {
            return;
        };
        for subject in subjects {
            let Some(subject) = subject.as_mapping_mut() else {
                continue;
            };
            let name = subject
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let is_account = subject.get("kind").and_then(Value::as_str) == Some("ServiceAccount");
            let renamed = if is_account && name == self.service_account {
                Some(holes.inline(self.include("serviceAccountName")))
            } else {
                self.name(holes, name)
            };
            if let Some(renamed) = renamed {
                subject.insert("name".into(), renamed.into());
            }
            if subject.contains_key("namespace") {
                subject.insert(
                    "namespace".into(),
                    holes.inline("{{ .Release.Namespace }}").into(),
                );
            }
        }
    }

    fn is_metrics_port(&self, port: &Value, number_key: &str) -> bool {
        let number = port.get(number_key).and_then(Value::as_u64);
        let named = get_str(port, &[number_key]);
        number == Some(self.defaults.metrics_port.into())
            || (named.is_some() && named == self.metrics_port_name.as_deref())
    }

    fn metrics_service(&self, holes: &mut Holes, service: &mut Value) {
        let ports = service
            .get_mut("spec")
            .and_then(|s| s.get_mut("ports"))
            .and_then(Value::as_sequence_mut);
        for port in ports.into_iter().flatten() {
            if self.is_metrics_port(port, "targetPort")
                && let Some(port) = port.as_mapping_mut()
            {
                metrics_port(holes, port, &["port", "targetPort"]);
            }
        }
        if let Some(selector) = service.get_mut("spec").and_then(|s| s.get_mut("selector")) {
            self.selector(holes, selector);
        }
    }

    fn service_monitor(&self, holes: &mut Holes, monitor: &mut Value) {
        let endpoints = monitor
            .get_mut("spec")
            .and_then(|s| s.get_mut("endpoints"))
            .and_then(Value::as_sequence_mut);
        for endpoint in endpoints.into_iter().flatten() {
            let Some(endpoint) = endpoint.as_mapping_mut() else {
                continue;
            };
            let port = endpoint.get("port").and_then(Value::as_str);
            if port.is_none() || port != self.metrics_port_name.as_deref() {
                continue;
            }
            endpoint.insert("port".into(), holes.inline(SCHEME).into());
            endpoint.insert("scheme".into(), holes.inline(SCHEME).into());
            // The token and TLS settings only apply to the HTTPS endpoint.
            let mut secure = Mapping::new();
            for key in ["bearerTokenFile", "authorization", "tlsConfig"] {
                if let Some(value) = endpoint.shift_remove(key) {
                    secure.insert(key.into(), value);
                }
            }
            if !secure.is_empty() {
                let lines = yaml_lines(&Value::Mapping(secure));
                endpoint.insert(
                    holes.lines(move |_| block("if", ".Values.metrics.secure", lines.clone())),
                    Value::Null,
                );
            }
        }
        if let Some(selector) = monitor
            .get_mut("spec")
            .and_then(|s| s.get_mut("selector"))
            .and_then(|s| s.get_mut("matchLabels"))
        {
            self.selector(holes, selector);
        }
    }

    fn network_policy(&self, holes: &mut Holes, policy: &mut Value) {
        let rules = policy
            .get_mut("spec")
            .and_then(|s| s.get_mut("ingress"))
            .and_then(Value::as_sequence_mut);
        for rule in rules.into_iter().flatten() {
            let ports = rule.get_mut("ports").and_then(Value::as_sequence_mut);
            for port in ports.into_iter().flatten() {
                if self.is_metrics_port(port, "port")
                    && let Some(port) = port.as_mapping_mut()
                {
                    metrics_port(holes, port, &["port"]);
                }
            }
        }
        if let Some(selector) = policy
            .get_mut("spec")
            .and_then(|s| s.get_mut("podSelector"))
            .and_then(|s| s.get_mut("matchLabels"))
        {
            self.selector(holes, selector);
        }
    }

    fn manager(&self, holes: &mut Holes, deployment: &mut Value) {
        let spec = super::mapping_at(deployment, &["spec"]);
        spec.insert(
            "replicas".into(),
            holes.inline("{{ .Values.replicas }}").into(),
        );
        if let Some(selector) = spec
            .get_mut("selector")
            .and_then(|s| s.get_mut("matchLabels"))
        {
            self.selector(holes, selector);
        }

        let template = super::mapping_at(deployment, &["spec", "template", "metadata"]);
        with_value(
            holes,
            template,
            "annotations",
            ".Values.podAnnotations",
            &[],
        );
        if let Some(labels) = template.get_mut("labels") {
            self.selector(holes, labels);
        }
        with_value(
            holes,
            template,
            "labels",
            ".Values.podLabels",
            &["app.kubernetes.io/name", "app.kubernetes.io/instance"],
        );

        let pod = super::mapping_at(deployment, &["spec", "template", "spec"]);
        pod.insert(
            "serviceAccountName".into(),
            holes.inline(self.include("serviceAccountName")).into(),
        );
        for (key, value, template) in [
            ("affinity", ".Values.affinity", Shape::Yaml),
            ("imagePullSecrets", ".Values.imagePullSecrets", Shape::Yaml),
            ("nodeSelector", ".Values.nodeSelector", Shape::Yaml),
            (
                "priorityClassName",
                ".Values.priorityClassName",
                Shape::Scalar,
            ),
            ("tolerations", ".Values.tolerations", Shape::Yaml),
        ] {
            pod.shift_remove(key);
            let hole = optional_key(holes, key, value, template);
            insert_sorted(pod, key, hole, Value::Null);
        }
        let containers = pod.get_mut("containers").and_then(Value::as_sequence_mut);
        let Some(container) = containers.and_then(|c| {
            let index = manager_index(c);
            c.get_mut(index)
        }) else {
            return;
        };
        let Some(container) = container.as_mapping_mut() else {
            return;
        };
        self.manager_container(holes, container);
        let index = pod
            .get("containers")
            .and_then(Value::as_sequence)
            .map_or(0, |c| manager_index(c));
        self.manager_webhooks(holes, pod, index);
    }

    fn manager_container(&self, holes: &mut Holes, container: &mut Mapping) {
        container.insert("image".into(), holes.inline(IMAGE).into());
        container.shift_remove("imagePullPolicy");
        let pull = optional_key(
            holes,
            "imagePullPolicy",
            ".Values.image.pullPolicy",
            Shape::Scalar,
        );
        insert_sorted(container, "imagePullPolicy", pull, Value::Null);

        // Flags: metrics and leader election from values, the rest as they are.
        let metrics = holes.lines(|_| {
            let mut lines = vec![
                "{{- if .Values.metrics.enabled }}".to_string(),
                format!("- {METRICS_BIND_FLAG}=:{{{{ .Values.metrics.port }}}}"),
                "{{- else }}".to_string(),
                format!("- {METRICS_BIND_FLAG}=0"),
                "{{- end }}".to_string(),
            ];
            lines.extend(block(
                "if",
                "not .Values.metrics.secure",
                vec![format!("- {METRICS_SECURE_FLAG}=false")],
            ));
            lines
        });
        let leader = holes.lines(|_| {
            block(
                "if",
                ".Values.leaderElection.enabled",
                vec![format!("- {LEADER_ELECT_FLAG}")],
            )
        });
        // Each flag's block where the flag was; a missing metrics flag
        // first, a missing leader election flag after it.
        let args = super::sequence_at(container, "args");
        let (mut metrics, mut leader) = (Some(metrics), Some(leader));
        let mut placed = Vec::with_capacity(args.len() + 2);
        for arg in args.drain(..) {
            let flag = arg
                .as_str()
                .map(|a| a.split_once('=').map_or(a, |(f, _)| f));
            match flag {
                Some(METRICS_BIND_FLAG) => placed.extend(metrics.take()),
                Some(LEADER_ELECT_FLAG) => placed.extend(leader.take()),
                Some(METRICS_SECURE_FLAG) => {}
                _ => placed.push(arg),
            }
        }
        let metrics_at = match metrics {
            Some(hole) => {
                placed.insert(0, hole);
                0
            }
            None => placed
                .iter()
                .position(|a| a.as_str().is_some_and(holes::is_token))
                .unwrap_or(0),
        };
        if let Some(hole) = leader {
            placed.insert(metrics_at + 1, hole);
        }
        *args = placed;

        // The environment the manager reads its settings from.
        let env = super::sequence_at(container, "env");
        for (var, value) in ENV_VALUES {
            let offered = self.defaults.env.iter().any(|(v, _)| *v == value);
            if !offered {
                continue;
            }
            env.retain(|e| get_str(e, &["name"]) != Some(var));
            env.push(holes.lines(move |_| {
                block(
                    "with",
                    &format!(".Values.{value}"),
                    vec![
                        format!("- name: {var}"),
                        "  value: {{ . | quote }}".to_string(),
                    ],
                )
            }));
        }

        // The metrics port, declared only when metrics are served.
        if let Some(ports) = container.get_mut("ports").and_then(Value::as_sequence_mut)
            && let Some(index) = ports
                .iter()
                .position(|p| self.is_metrics_port(p, "containerPort"))
        {
            let mut port = ports[index].as_mapping().cloned().unwrap_or_default();
            metrics_port(holes, &mut port, &["containerPort"]);
            let port_lines = yaml_lines(&Value::Sequence(vec![Value::Mapping(port)]));
            ports[index] =
                holes.lines(move |_| block("if", ".Values.metrics.enabled", port_lines.clone()));
        }

        let resources = holes.lines(|c| vec![nindent("toYaml .Values.resources", c)]);
        let mut map = Mapping::new();
        map.insert(resources, Value::Null);
        container.insert("resources".into(), Value::Mapping(map));
    }

    /// NOTES.txt, shown after `helm install` and `helm upgrade`.
    fn notes(&self, project: &Project) -> String {
        let mut kinds: Vec<String> = project
            .resources
            .iter()
            .filter(|r| r.api)
            .map(|r| format!("{}.{}", r.plural, project_group(project, &r.group)))
            .collect();
        kinds.sort();
        kinds.dedup();
        let manager = self
            .manager
            .strip_prefix(&self.prefix)
            .unwrap_or(&self.manager);
        let kinds = if kinds.is_empty() {
            String::new()
        } else {
            let list = kinds
                .iter()
                .map(|k| format!("\n  kubectl get {k} --all-namespaces"))
                .collect::<Vec<_>>()
                .concat();
            format!("\nThe objects it manages:\n{list}\n")
        };
        self.fill(NOTES)
            .replace("%MANAGER%", manager)
            .replace("%KINDS%\n", &kinds)
    }

    /// The context of Chart.yaml and values.yaml.
    fn context(&self, root: &Path, project: &Project) -> Result<tera::Context> {
        let d = &self.defaults;
        let (repository, tag) = kustomize::split_image(&d.image);
        let (tag, digest) = match tag {
            Some(t) if t.starts_with("sha256:") => ("", t),
            Some(t) => (t, ""),
            None => ("", ""),
        };
        let version = crate::manifests::package(root)?
            .version
            .unwrap_or_else(|| "0.1.0".to_string());
        let mut ctx = tera::Context::new();
        ctx.insert("project_name", &project.project_name);
        ctx.insert("version", &version);
        ctx.insert("image_repository", repository);
        ctx.insert("image_tag", tag);
        ctx.insert("image_digest", digest);
        ctx.insert("pull_policy", &d.pull_policy);
        ctx.insert("replicas", &d.replicas);
        ctx.insert("resources", &block_value(&d.resources));
        ctx.insert("leader_election", &d.leader_election);
        ctx.insert("metrics_enabled", &d.metrics_enabled);
        ctx.insert("metrics_port", &d.metrics_port);
        ctx.insert("metrics_secure", &d.metrics_secure);
        ctx.insert("webhooks", &self.webhooks.any());
        ctx.insert("cert_manager", &self.webhooks.cert_manager);
        for (value, default) in &d.env {
            ctx.insert(value.replace('.', "_").to_snake_case(), default);
        }
        ctx.insert("affinity", &block_value(&d.affinity));
        ctx.insert("node_selector", &block_value(&d.node_selector));
        ctx.insert("tolerations", &block_value(&d.tolerations));
        ctx.insert("image_pull_secrets", &block_value(&d.image_pull_secrets));
        ctx.insert("priority_class_name", &d.priority_class_name);
        Ok(ctx)
    }
}

/// The image from values: a digest when set, else the tag, else the chart's
/// appVersion.
const IMAGE: &str = "\"{{ .Values.image.repository }}{{ with .Values.image.digest }}@{{ . }}{{ else }}:{{ .Values.image.tag | default $.Chart.AppVersion }}{{ end }}\"";
/// The metrics endpoint's scheme, which also names its port.
const SCHEME: &str = "{{ ternary \"https\" \"http\" .Values.metrics.secure }}";
/// How an optional key's value is written.
#[derive(Clone, Copy)]
enum Shape {
    /// YAML lines under the key (a mapping or a sequence).
    Yaml,
    /// A scalar after the key.
    Scalar,
}

/// The keep annotation on a CRD, on by default: deleting a CRD deletes
/// every object of its kind, so `helm uninstall` leaves CRDs in place.
fn keep_crd(holes: &mut Holes, crd: &mut Value) {
    const KEEP: &str = "helm.sh/resource-policy: keep";
    let metadata = super::mapping_at(crd, &["metadata"]);
    if let Some(annotations) = metadata
        .get_mut("annotations")
        .and_then(Value::as_mapping_mut)
    {
        let entry = holes.lines(|_| block("if", ".Values.crds.keep", vec![KEEP.into()]));
        annotations.insert(entry, Value::Null);
    } else {
        let entry = holes.lines(|_| {
            let body = vec!["annotations:".into(), format!("  {KEEP}")];
            block("if", ".Values.crds.keep", body)
        });
        insert_sorted(metadata, "annotations", entry, Value::Null);
    }
}

/// The port entries (container, Service) of the metrics endpoint:
/// number and name from values.
fn metrics_port(holes: &mut Holes, port: &mut Mapping, keys: &[&str]) {
    for key in keys {
        port.insert(
            (*key).into(),
            holes.inline("{{ .Values.metrics.port }}").into(),
        );
    }
    if port.contains_key("name") {
        port.insert("name".into(), holes.inline(SCHEME).into());
    }
}

/// A key present only when `value` is set.
fn optional_key(holes: &mut Holes, key: &str, value: &str, shape: Shape) -> Value {
    let key = key.to_string();
    let value = value.to_string();
    holes.lines(move |c| {
        let body = match shape {
            Shape::Yaml => vec![
                format!("{key}:"),
                format!("  {}", nindent("toYaml .", c + 2)),
            ],
            Shape::Scalar => vec![format!("{key}: {{{{ . | quote }}}}")],
        };
        block("with", &value, body)
    })
}

/// Adds the entries of `value` (a mapping of labels or annotations) to the
/// mapping under `key`, which is made when missing.
/// Keys the mapping holds already, and `reserved` ones, are left out of
/// `value`: a key twice is invalid YAML, and a changed selector label
/// would orphan the Pods.
fn with_value(
    holes: &mut Holes,
    map: &mut Mapping,
    key: &str,
    value: &'static str,
    reserved: &[&str],
) {
    let mut taken: Vec<String> = reserved.iter().map(|k| format!("{k:?}")).collect();
    if let Some(entries) = map.get(key).and_then(Value::as_mapping) {
        taken.extend(
            entries
                .keys()
                .filter_map(Value::as_str)
                .filter(|k| !holes::is_token(k))
                .map(|k| format!("{k:?}")),
        );
    }
    let value = if taken.is_empty() {
        value.to_string()
    } else {
        format!("(omit {value} {})", taken.join(" "))
    };
    if let Some(entries) = map.get_mut(key).and_then(Value::as_mapping_mut) {
        let lines = move |c: usize| block("with", &value, vec![nindent("toYaml .", c)]);
        entries.insert(holes.lines(lines), Value::Null);
    } else {
        let hole = optional_key(holes, key, &value, Shape::Yaml);
        insert_sorted(map, key, hole, Value::Null);
    }
}

/// `labels` without kustomize's values of [`HELM_LABELS`], led by the
/// lines of `helper`.
fn with_helm_labels(holes: &mut Holes, labels: Mapping, helper: &str) -> Mapping {
    let helper = helper.to_string();
    let mut out = Mapping::new();
    out.insert(holes.lines(move |c| vec![nindent(&helper, c)]), Value::Null);
    for (key, value) in labels {
        if !key.as_str().is_some_and(|k| HELM_LABELS.contains(&k)) {
            out.insert(key, value);
        }
    }
    out
}

/// Inserts `key: value` before the first key that sorts after `sort_as`,
/// as kustomize orders keys.
fn insert_sorted(map: &mut Mapping, sort_as: &str, key: Value, value: Value) {
    let entries = std::mem::take(map);
    let mut placed = false;
    for (k, v) in entries {
        if !placed
            && k.as_str()
                .is_some_and(|k| k > sort_as && !holes::is_token(k))
        {
            map.insert(key.clone(), value.clone());
            placed = true;
        }
        map.insert(k, v);
    }
    if !placed {
        map.insert(key, value);
    }
}

/// The manager's container: the one named `manager`, else the first.
fn manager_container(pod: &Value) -> Option<&Value> {
    let containers = pod.get("containers")?.as_sequence()?;
    containers.get(manager_index(containers))
}

/// The index of the manager's container in `containers`.
fn manager_index(containers: &[Value]) -> usize {
    containers
        .iter()
        .position(|c| get_str(c, &["name"]) == Some("manager"))
        .unwrap_or(0)
}

fn is_true(value: &str) -> bool {
    matches!(value, "true" | "1" | "yes" | "on")
}

fn empty_map() -> Value {
    Value::Mapping(Mapping::new())
}

/// The YAML lines of `value`, with template actions escaped.
fn yaml_lines(value: &Value) -> Vec<String> {
    holes::escape(&crate::yaml::to_string(value).unwrap_or_default())
        .lines()
        .map(str::to_string)
        .collect()
}

/// A value for values.yaml after its key: ` {}` or ` []` when empty, else
/// its YAML on the following lines, indented under the key.
fn block_value(value: &Value) -> String {
    let empty = match value {
        Value::Mapping(m) => m.is_empty().then_some(" {}"),
        Value::Sequence(s) => s.is_empty().then_some(" []"),
        Value::Null => Some(" {}"),
        _ => None,
    };
    if let Some(empty) = empty {
        return empty.to_string();
    }
    let yaml = crate::yaml::to_string(value).unwrap_or_default();
    let mut out = String::new();
    for line in yaml.lines() {
        out.push_str("\n  ");
        out.push_str(line);
    }
    out
}

/// The API group of `group` in `project`: `group.domain`, or the domain
/// for an empty group.
fn project_group(project: &Project, group: &str) -> String {
    if group.is_empty() {
        project.domain.clone()
    } else {
        format!("{group}.{}", project.domain)
    }
}

/// values.schema.json: the type of every value the templates read, so that
/// `helm install` rejects a misspelt key or a wrong type before rendering.
/// Top-level keys the user added to values.yaml are allowed as they are.
fn values_schema(defaults: &Defaults, webhooks: &Webhooks, values: &Value) -> String {
    let string = json!({"type": "string"});
    let object = json!({"type": "object"});
    let array = json!({"type": "array"});
    let labels = json!({"type": "object", "additionalProperties": {"type": "string"}});
    let mut properties = serde_json::Map::new();
    let mut add = |key: &str, schema: serde_json::Value| {
        properties.insert(key.to_string(), schema);
    };
    // Helm gives a subchart `global`, and the parent's condition as
    // `enabled`.
    add("global", object.clone());
    add("enabled", json!({"type": "boolean"}));
    add("nameOverride", string.clone());
    add("fullnameOverride", string.clone());
    add(
        "image",
        strict_object(&json!({
            "repository": {"type": "string", "minLength": 1},
            "tag": string,
            "digest": {"type": "string", "pattern": "^(sha256:[0-9a-f]{64})?$"},
            "pullPolicy": {"enum": ["", "Always", "IfNotPresent", "Never"]},
        })),
    );
    add(
        "imagePullSecrets",
        json!({"type": "array", "items": strict_object(&json!({"name": {"type": "string"}}))}),
    );
    add("replicas", json!({"type": "integer", "minimum": 0}));
    add("resources", object.clone());
    add(
        "leaderElection",
        strict_object(&json!({"enabled": {"type": "boolean"}})),
    );
    let env: BTreeSet<&str> = defaults.env.iter().map(|(k, _)| *k).collect();
    if env.contains("watchNamespace") {
        add("watchNamespace", string.clone());
    }
    let mut log = serde_json::Map::new();
    if env.contains("log.level") {
        log.insert("level".into(), string.clone());
    }
    if env.contains("log.format") {
        log.insert("format".into(), json!({"enum": ["", "text", "json"]}));
    }
    if !log.is_empty() {
        add("log", strict_object(&serde_json::Value::Object(log)));
    }
    add(
        "metrics",
        strict_object(&json!({
            "enabled": {"type": "boolean"},
            "port": {"type": "integer", "minimum": 1, "maximum": 65535},
            "secure": {"type": "boolean"},
        })),
    );
    add(
        "serviceMonitor",
        strict_object(&json!({"enabled": {"type": "boolean"}})),
    );
    add(
        "networkPolicy",
        strict_object(&json!({"enabled": {"type": "boolean"}})),
    );
    if webhooks.any() {
        add(
            "webhook",
            strict_object(&json!({"enabled": {"type": "boolean"}})),
        );
    }
    if webhooks.cert_manager {
        add(
            "certManager",
            strict_object(&json!({"enabled": {"type": "boolean"}})),
        );
    }
    add(
        "crds",
        strict_object(&json!({
            "install": {"type": "boolean"},
            "keep": {"type": "boolean"},
        })),
    );
    add(
        "serviceAccount",
        strict_object(&json!({
            "create": {"type": "boolean"},
            "name": string,
            "annotations": labels,
        })),
    );
    add("podAnnotations", labels.clone());
    add("podLabels", labels);
    add(
        "nodeSelector",
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
    );
    add("tolerations", array);
    add("affinity", object);
    add("priorityClassName", string);
    // The groups of values the templates read through.
    let required: Vec<String> = properties
        .iter()
        .filter(|(_, schema)| schema.get("required").is_some())
        .map(|(key, _)| key.clone())
        .collect();
    // What the user added for templates of their own.
    if let Some(values) = values.as_mapping() {
        for key in values.keys().filter_map(Value::as_str) {
            if !properties.contains_key(key) {
                properties.insert(key.to_string(), json!({}));
            }
        }
    }
    let schema = json!({
        "$schema": "https://json-schema.org/draft-07/schema#",
        "title": "Values",
        "type": "object",
        "required": required,
        "properties": properties,
        "additionalProperties": false,
    });
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// An object schema that allows only `properties`, and requires each:
/// the templates read them all, and a values.yaml that lacks one (written
/// by an older rsop, say) then fails with the key's name rather than with a
/// template error.
fn strict_object(properties: &serde_json::Value) -> serde_json::Value {
    let required: Vec<&String> = properties
        .as_object()
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}
