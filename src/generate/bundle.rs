//! `rsop generate bundle`: an OLM bundle built from what kustomize renders
//! for `config/manifests` (the CSV base, `config/default`, the samples).
//!
//! The manager's Deployment becomes the CSV's install strategy, the roles
//! bound to its service account become `permissions` (namespaced) and
//! `clusterPermissions`, the samples become `alm-examples`; CRDs and the
//! objects OLM accepts beside a CSV are written as files of their own. OLM
//! creates the namespace and the service account itself, so those are left
//! out. Nothing in the output depends on the clock: a second run writes the
//! same bytes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_yaml_ng::{Mapping, Value};

use super::csv::{self, MANIFESTS_DIR};
use super::{get, get_str, kind, kustomize, name, to_yaml};
use crate::output::FileChange;
use crate::project::Project;
use crate::{Error, Result};

/// Kinds OLM installs from a bundle beside the CSV and the CRDs.
const SUPPORTED_KINDS: &[&str] = &[
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "ConsoleCLIDownload",
    "ConsoleLink",
    "ConsoleQuickStart",
    "ConsoleYAMLSample",
    "PodDisruptionBudget",
    "PriorityClass",
    "PrometheusRule",
    "Role",
    "RoleBinding",
    "Secret",
    "Service",
    "ServiceAccount",
    "ServiceMonitor",
    "VerticalPodAutoscaler",
];

/// Validated input of `rsop generate bundle`.
#[derive(Debug, Clone)]
pub struct BundleOptions {
    pub version: semver::Version,
    pub channels: Vec<String>,
    pub default_channel: Option<String>,
    pub package: String,
    pub image: Option<String>,
}

impl BundleOptions {
    /// Checks the flags; the version defaults to the Cargo package's and
    /// the package name to the project's.
    pub fn new(
        root: &Path,
        project: &Project,
        version: Option<&str>,
        channels: &[String],
        default_channel: Option<&str>,
        package: Option<&str>,
        image: Option<&str>,
    ) -> Result<Self> {
        let (version, origin) = match version {
            Some(v) => (v.to_string(), "--version"),
            None => (cargo_version(root)?, "Cargo.toml's package.version"),
        };
        let version = semver::Version::parse(version.trim_start_matches('v')).map_err(|e| {
            Error::user_with_help(
                format!("invalid bundle version `{version}` ({origin}): {e}"),
                "use a semantic version such as `0.1.0` or `1.2.3-rc.1`",
            )
        })?;
        let channels: Vec<String> = if channels.is_empty() {
            vec!["alpha".to_string()]
        } else {
            channels.to_vec()
        };
        for channel in &channels {
            if channel.is_empty()
                || !channel
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
            {
                return Err(Error::user_with_help(
                    format!("invalid channel `{channel}`"),
                    "channels are names such as `alpha`, `stable` or `stable-v1`, separated by commas",
                ));
            }
        }
        let default_channel = match default_channel {
            Some(d) if !channels.iter().any(|c| c == d) => {
                return Err(Error::user_with_help(
                    format!(
                        "the default channel `{d}` is not one of the channels ({})",
                        channels.join(", ")
                    ),
                    format!(
                        "add it to `--channels`, or pick one of {}",
                        channels.join(", ")
                    ),
                ));
            }
            Some(d) => Some(d.to_string()),
            // One channel is the default one.
            None if channels.len() == 1 => Some(channels[0].clone()),
            None => None,
        };
        let package = package.unwrap_or(&project.project_name).to_string();
        crate::project::names::validate_dns1123_label("package name", &package)?;
        Ok(BundleOptions {
            version,
            channels,
            default_channel,
            package,
            image: image.map(str::to_string),
        })
    }
}

fn cargo_version(root: &Path) -> Result<String> {
    crate::manifests::package(root)?.version.ok_or_else(|| {
        Error::user_with_help(
            "Cargo.toml has no `package.version` to version the bundle with",
            "pass `--version X.Y.Z`",
        )
    })
}

/// The files of the bundle.
pub fn plan(root: &Path, project: &Project, opts: &BundleOptions) -> Result<Vec<FileChange>> {
    let base = csv::base_path(project);
    if !root.join(&base).is_file() {
        return Err(Error::user_with_help(
            format!(
                "the bundle needs the ClusterServiceVersion base `{base}`, which does not exist"
            ),
            "run `rsop generate kustomize manifests` first, then fill in its TODOs",
        ));
    }
    let rendered = kustomize::render(root, MANIFESTS_DIR, opts.image.as_deref())?;
    let objects = kustomize::documents(&rendered, MANIFESTS_DIR)?;
    let bundle = Bundle::from_objects(objects)?;
    super::changes(root, bundle.files(opts)?)
}

/// The rendered objects, sorted into what goes where.
struct Bundle {
    csv: Value,
    crds: Vec<Value>,
    deployments: Vec<Value>,
    /// Service account name -> rules of its cluster-wide bindings.
    cluster_permissions: BTreeMap<String, Vec<Value>>,
    /// Service account name -> rules of its namespaced bindings.
    permissions: BTreeMap<String, Vec<Value>>,
    /// Objects written as files of their own.
    others: Vec<Value>,
    /// Custom resources of the bundle's own CRDs.
    samples: Vec<Value>,
}

impl Bundle {
    fn from_objects(objects: Vec<Value>) -> Result<Self> {
        let mut csvs = Vec::new();
        let mut crds = Vec::new();
        let mut deployments = Vec::new();
        let mut rest = Vec::new();
        for object in objects {
            match kind(&object) {
                "ClusterServiceVersion" => csvs.push(object),
                "CustomResourceDefinition" => crds.push(object),
                "Deployment" => deployments.push(object),
                // OLM makes the install namespace itself.
                "Namespace" => {}
                _ => rest.push(object),
            }
        }
        let csv = match csvs.len() {
            1 => csvs.remove(0),
            n => {
                return Err(Error::user_with_help(
                    format!("`{MANIFESTS_DIR}` renders {n} ClusterServiceVersions, not one"),
                    "keep exactly one CSV base in config/manifests",
                ));
            }
        };
        if deployments.is_empty() {
            return Err(Error::user_with_help(
                format!("`{MANIFESTS_DIR}` renders no Deployment to install"),
                "keep `../default` in config/manifests/kustomization.yaml",
            ));
        }
        let accounts: Vec<String> = deployments
            .iter()
            .map(|d| {
                get_str(d, &["spec", "template", "spec", "serviceAccountName"])
                    .unwrap_or("default")
                    .to_string()
            })
            .collect();
        let owned_groups: Vec<(String, String)> = crds
            .iter()
            .map(|crd| {
                (
                    get_str(crd, &["spec", "group"])
                        .unwrap_or_default()
                        .to_string(),
                    get_str(crd, &["spec", "names", "kind"])
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect();

        let role_rules = |kind_name: &str, role: &str, rest: &[Value]| -> Option<Vec<Value>> {
            rest.iter()
                .find(|o| kind(o) == kind_name && name(o) == role)
                .map(|o| {
                    o.get("rules")
                        .and_then(Value::as_sequence)
                        .cloned()
                        .unwrap_or_default()
                })
        };
        let mut cluster_permissions: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let mut permissions: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let mut consumed: Vec<(String, String)> = Vec::new();
        for binding in &rest {
            let binding_kind = kind(binding);
            if binding_kind != "ClusterRoleBinding" && binding_kind != "RoleBinding" {
                continue;
            }
            let subjects = binding
                .get("subjects")
                .and_then(Value::as_sequence)
                .cloned()
                .unwrap_or_default();
            let Some(account) = subjects.iter().find_map(|s| {
                (get_str(s, &["kind"]) == Some("ServiceAccount"))
                    .then(|| get_str(s, &["name"]).unwrap_or_default().to_string())
                    .filter(|n| accounts.contains(n))
            }) else {
                continue;
            };
            let role_kind = get_str(binding, &["roleRef", "kind"]).unwrap_or_default();
            let role_name = get_str(binding, &["roleRef", "name"]).unwrap_or_default();
            let Some(rules) = role_rules(role_kind, role_name, &rest) else {
                continue;
            };
            let target = if binding_kind == "ClusterRoleBinding" {
                &mut cluster_permissions
            } else {
                &mut permissions
            };
            target.entry(account).or_default().extend(rules);
            consumed.push((binding_kind.to_string(), name(binding).to_string()));
            consumed.push((role_kind.to_string(), role_name.to_string()));
        }

        let mut others = Vec::new();
        let mut samples = Vec::new();
        for object in rest {
            let object_kind = kind(&object).to_string();
            let group = get_str(&object, &["apiVersion"])
                .and_then(|v| v.rsplit_once('/').map(|(g, _)| g.to_string()))
                .unwrap_or_default();
            if owned_groups
                .iter()
                .any(|(g, k)| *g == group && *k == object_kind)
            {
                samples.push(object);
                continue;
            }
            let key = (object_kind.clone(), name(&object).to_string());
            if consumed.contains(&key)
                || (object_kind == "ServiceAccount" && accounts.contains(&key.1))
            {
                continue;
            }
            if !SUPPORTED_KINDS.contains(&object_kind.as_str()) {
                return Err(Error::user_with_help(
                    format!(
                        "an OLM bundle cannot carry the {object_kind} `{}` that `{MANIFESTS_DIR}` renders",
                        key.1
                    ),
                    format!(
                        "OLM installs only {} beside the CSV; leave it out of config/default or ship it separately",
                        SUPPORTED_KINDS.join(", ")
                    ),
                ));
            }
            others.push(object);
        }
        Ok(Bundle {
            csv,
            crds,
            deployments,
            cluster_permissions,
            permissions,
            others,
            samples,
        })
    }

    /// The CSV with everything the bundle knows filled in.
    fn csv(&self, opts: &BundleOptions) -> Result<Value> {
        let mut csv = self.csv.clone();
        let metadata = super::mapping_at(&mut csv, &["metadata"]);
        metadata.insert(
            "name".into(),
            format!("{}.v{}", opts.package, opts.version).into(),
        );
        metadata.remove("namespace");
        let examples = serde_json::to_string_pretty(
            &self.samples.iter().map(strip_namespace).collect::<Vec<_>>(),
        )
        .map_err(|e| Error::user(format!("cannot write the samples as JSON: {e}")))?;
        let annotations = super::mapping_at(&mut csv, &["metadata", "annotations"]);
        annotations.insert("alm-examples".into(), examples.into());
        annotations.insert(
            "operators.operatorframework.io/builder".into(),
            format!("rsop-v{}", env!("CARGO_PKG_VERSION")).into(),
        );

        let owned = self.crds.iter().flat_map(csv::owned_entries).collect();
        csv::add_missing_owned(&mut csv, owned);

        let permissions = |by_account: &BTreeMap<String, Vec<Value>>| -> Value {
            Value::Sequence(
                by_account
                    .iter()
                    .map(|(account, rules)| {
                        let mut entry = Mapping::new();
                        entry.insert("rules".into(), Value::Sequence(rules.clone()));
                        entry.insert("serviceAccountName".into(), account.as_str().into());
                        Value::Mapping(entry)
                    })
                    .collect(),
            )
        };
        let mut install_spec = Mapping::new();
        if !self.cluster_permissions.is_empty() {
            install_spec.insert(
                "clusterPermissions".into(),
                permissions(&self.cluster_permissions),
            );
        }
        install_spec.insert(
            "deployments".into(),
            Value::Sequence(self.deployments.iter().map(deployment_spec).collect()),
        );
        if !self.permissions.is_empty() {
            install_spec.insert("permissions".into(), permissions(&self.permissions));
        }
        let mut install = Mapping::new();
        install.insert("spec".into(), Value::Mapping(install_spec));
        install.insert("strategy".into(), "deployment".into());

        let spec = super::mapping_at(&mut csv, &["spec"]);
        spec.insert("install".into(), Value::Mapping(install));
        spec.insert("relatedImages".into(), self.related_images());
        spec.insert("version".into(), opts.version.to_string().into());
        Ok(csv)
    }

    /// Every container image of the Deployments, by container name.
    fn related_images(&self) -> Value {
        let mut images: Vec<(String, String)> = Vec::new();
        for deployment in &self.deployments {
            let containers = get(deployment, &["spec", "template", "spec", "containers"])
                .and_then(Value::as_sequence)
                .cloned()
                .unwrap_or_default();
            for container in containers {
                if let (Some(n), Some(i)) = (
                    get_str(&container, &["name"]),
                    get_str(&container, &["image"]),
                ) && !images.iter().any(|(_, image)| image == i)
                {
                    images.push((n.to_string(), i.to_string()));
                }
            }
        }
        Value::Sequence(
            images
                .into_iter()
                .map(|(n, i)| {
                    let mut entry = Mapping::new();
                    entry.insert("image".into(), i.into());
                    entry.insert("name".into(), n.into());
                    Value::Mapping(entry)
                })
                .collect(),
        )
    }

    fn files(&self, opts: &BundleOptions) -> Result<Vec<(String, String)>> {
        let mut files = Vec::new();
        let csv_path = format!(
            "bundle/manifests/{}.clusterserviceversion.yaml",
            opts.package
        );
        files.push((csv_path.clone(), to_yaml(&self.csv(opts)?, &csv_path)?));
        for crd in &self.crds {
            // operator-sdk's file names: `<group>_<plural>.yaml`.
            let file = match name(crd).split_once('.') {
                Some((plural, group)) => format!("{group}_{plural}"),
                None => name(crd).to_string(),
            };
            let path = format!("bundle/manifests/{file}.yaml");
            files.push((path.clone(), to_yaml(crd, &path)?));
        }
        for object in &self.others {
            let api_version = get_str(object, &["apiVersion"])
                .unwrap_or_default()
                .replace('/', "_");
            let path = format!(
                "bundle/manifests/{}_{api_version}_{}.yaml",
                name(object),
                kind(object).to_ascii_lowercase()
            );
            files.push((path.clone(), to_yaml(&strip_namespace(object), &path)?));
        }
        let labels = Self::labels(opts);
        let mut annotations = String::from("annotations:\n");
        for (key, value) in &labels {
            let _ = writeln!(annotations, "  {key}: {value}");
        }
        files.push(("bundle/metadata/annotations.yaml".into(), annotations));
        let mut dockerfile = String::from(
            "# The bundle image OLM pulls: `make bundle-build bundle-push`.\nFROM scratch\n\n",
        );
        for (key, value) in &labels {
            let _ = writeln!(dockerfile, "LABEL {key}={value}");
        }
        dockerfile
            .push_str("\nCOPY bundle/manifests /manifests/\nCOPY bundle/metadata /metadata/\n");
        files.push(("bundle.Dockerfile".into(), dockerfile));
        files.sort();
        Ok(files)
    }

    /// The annotations of `bundle/metadata/annotations.yaml`, which the
    /// bundle image also carries as labels.
    fn labels(opts: &BundleOptions) -> Vec<(&'static str, String)> {
        let mut labels = vec![
            (
                "operators.operatorframework.io.bundle.mediatype.v1",
                "registry+v1".to_string(),
            ),
            (
                "operators.operatorframework.io.bundle.manifests.v1",
                "manifests/".to_string(),
            ),
            (
                "operators.operatorframework.io.bundle.metadata.v1",
                "metadata/".to_string(),
            ),
            (
                "operators.operatorframework.io.bundle.package.v1",
                opts.package.clone(),
            ),
            (
                "operators.operatorframework.io.bundle.channels.v1",
                opts.channels.join(","),
            ),
        ];
        if let Some(default) = &opts.default_channel {
            labels.push((
                "operators.operatorframework.io.bundle.channel.default.v1",
                default.clone(),
            ));
        }
        labels
    }
}

/// A CSV deployment entry: the Deployment's name, labels and spec.
fn deployment_spec(deployment: &Value) -> Value {
    let mut entry = Mapping::new();
    if let Some(labels) = get(deployment, &["metadata", "labels"]) {
        entry.insert("label".into(), labels.clone());
    }
    entry.insert("name".into(), name(deployment).into());
    entry.insert(
        "spec".into(),
        deployment.get("spec").cloned().unwrap_or_default(),
    );
    Value::Mapping(entry)
}

/// `object` without `metadata.namespace`: OLM installs into the namespace
/// the operator group picks.
fn strip_namespace(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_mapping_mut) {
        metadata.remove("namespace");
    }
    object
}
