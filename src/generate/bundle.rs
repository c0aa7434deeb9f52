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
//!
//! Webhooks become the CSV's `webhookdefinitions`, as operator-sdk makes
//! them: OLM creates the webhook configurations, the Service and the serving
//! certificate itself, so those objects, cert-manager's and the CA-injection
//! annotations stay out of the bundle, and the manager's Deployment loses the
//! volume of cert-manager's secret (OLM mounts its own certificate at
//! [`webhooks::OLM_CERT_DIR`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use serde_yaml_ng::{Mapping, Value};

use super::csv::{self, MANIFESTS_DIR};
use super::{kind, kustomize, name, to_yaml, webhooks};
use crate::output::FileChange;
use crate::project::Project;
use crate::yaml::{get, get_str};
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
    /// The CSV's `webhookdefinitions`.
    webhooks: Vec<Value>,
}

impl Bundle {
    fn from_objects(objects: Vec<Value>) -> Result<Self> {
        let mut csvs = Vec::new();
        let mut crds = Vec::new();
        let mut deployments = Vec::new();
        let mut rest = Vec::new();
        let services = webhooks::service_names(&objects);
        let secrets = webhooks::certificate_secrets(&objects);
        let mut configurations = Vec::new();
        let mut webhook_services = Vec::new();
        for mut object in objects {
            // OLM makes the webhook configurations, their Service and the
            // certificates itself.
            if webhooks::is_configuration(&object) {
                configurations.push(object);
                continue;
            }
            if webhooks::is_webhook_service(&object, &services) {
                webhook_services.push(object);
                continue;
            }
            if webhooks::is_cert_manager(&object) {
                continue;
            }
            webhooks::strip_ca_injection(&mut object);
            match kind(&object) {
                "ClusterServiceVersion" => csvs.push(object),
                "CustomResourceDefinition" => crds.push(object),
                "Deployment" => {
                    without_cert_manager_volumes(&mut object, &secrets);
                    deployments.push(object);
                }
                // OLM makes the install namespace itself.
                "Namespace" => {}
                _ => rest.push(object),
            }
        }
        let webhooks =
            webhook_definitions(&configurations, &crds, &webhook_services, &deployments)?;
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
            webhooks,
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
        if !self.webhooks.is_empty() {
            spec.insert(
                "webhookdefinitions".into(),
                Value::Sequence(self.webhooks.clone()),
            );
        }
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

/// The Deployment without the volumes of cert-manager's `secrets` and their
/// mounts: OLM mounts the certificate it issues at
/// [`webhooks::OLM_CERT_DIR`] itself, and a second mount there would make
/// the pod invalid. A flag that named a path in a removed mount now names
/// OLM's directory if it is `--webhook-cert-path`, and is dropped otherwise
/// (the manager then makes its own certificate, as without the flag).
fn without_cert_manager_volumes(deployment: &mut Value, secrets: &BTreeSet<String>) {
    let Some(pod) = deployment
        .get_mut("spec")
        .and_then(|s| s.get_mut("template"))
        .and_then(|t| t.get_mut("spec"))
    else {
        return;
    };
    let (volumes, paths) = webhooks::secret_volumes(pod, secrets);
    if volumes.is_empty() {
        return;
    }
    let Some(pod) = pod.as_mapping_mut() else {
        return;
    };
    let removed =
        |item: &Value| get_str(item, &["name"]).is_some_and(|n| volumes.iter().any(|v| v == n));
    if let Some(list) = pod.get_mut("volumes").and_then(Value::as_sequence_mut) {
        list.retain(|v| !removed(v));
        if list.is_empty() {
            pod.shift_remove("volumes");
        }
    }
    let containers = pod.get_mut("containers").and_then(Value::as_sequence_mut);
    for container in containers.into_iter().flatten() {
        let Some(container) = container.as_mapping_mut() else {
            continue;
        };
        if let Some(mounts) = container
            .get_mut("volumeMounts")
            .and_then(Value::as_sequence_mut)
        {
            mounts.retain(|m| !removed(m));
            if mounts.is_empty() {
                container.shift_remove("volumeMounts");
            }
        }
        if let Some(args) = container.get_mut("args").and_then(Value::as_sequence_mut) {
            args.retain_mut(|arg| {
                let Some(text) = arg.as_str() else {
                    return true;
                };
                if !webhooks::points_into(text, &paths) {
                    return true;
                }
                if text.starts_with("--webhook-cert-path=") {
                    *arg = format!("--webhook-cert-path={}", webhooks::OLM_CERT_DIR).into();
                    return true;
                }
                false
            });
        }
    }
}

/// The CSV's `webhookdefinitions`: one per admission webhook, and one
/// `ConversionWebhook` per service path that CRDs convert through, sorted by
/// `generateName` (operator-sdk's entries).
fn webhook_definitions(
    configurations: &[Value],
    crds: &[Value],
    services: &[Value],
    deployments: &[Value],
) -> Result<Vec<Value>> {
    let mut definitions = Vec::new();
    for configuration in configurations {
        let mutating = kind(configuration) == "MutatingWebhookConfiguration";
        for hook in webhooks::hooks(configuration) {
            let hook_name = get_str(hook, &["name"]).unwrap_or_default();
            let Some(service) = get(hook, &["clientConfig", "service"]) else {
                return Err(Error::user_with_help(
                    format!(
                        "the webhook `{hook_name}` calls a URL; an OLM bundle can only carry webhooks its operator serves"
                    ),
                    "give its marker `path=` instead of `url=`, or ship this webhook outside the bundle",
                ));
            };
            let mut entry = Mapping::new();
            let versions = hook
                .get("admissionReviewVersions")
                .cloned()
                .unwrap_or_else(|| Value::Sequence(vec!["v1beta1".into()]));
            entry.insert("admissionReviewVersions".into(), versions);
            serving(&mut entry, service, services, deployments);
            for key in ["failurePolicy"] {
                if let Some(value) = hook.get(key) {
                    entry.insert(key.into(), value.clone());
                }
            }
            entry.insert("generateName".into(), hook_name.into());
            let mut optional = vec!["matchPolicy", "objectSelector"];
            if mutating {
                optional.push("reinvocationPolicy");
            }
            optional.push("rules");
            for key in optional {
                if let Some(value) = hook.get(key) {
                    entry.insert(key.into(), value.clone());
                }
            }
            entry.insert(
                "sideEffects".into(),
                hook.get("sideEffects").cloned().unwrap_or("None".into()),
            );
            if let Some(value) = hook.get("timeoutSeconds") {
                entry.insert("timeoutSeconds".into(), value.clone());
            }
            entry.insert(
                "type".into(),
                if mutating {
                    "MutatingAdmissionWebhook"
                } else {
                    "ValidatingAdmissionWebhook"
                }
                .into(),
            );
            if let Some(path) = service.get("path") {
                entry.insert("webhookPath".into(), path.clone());
            }
            definitions.push(sorted(entry));
        }
    }
    // CRDs that convert through the same service port and path share one entry.
    let mut conversions: BTreeMap<(String, u64, String), (Vec<String>, &Value)> = BTreeMap::new();
    for crd in crds {
        let Some(webhook) = webhooks::conversion(crd) else {
            continue;
        };
        let Some(service) = get(webhook, &["clientConfig", "service"]) else {
            return Err(Error::user_with_help(
                format!(
                    "the CRD `{}` converts through a URL; an OLM bundle can only carry conversion webhooks its operator serves",
                    name(crd)
                ),
                "point its conversion webhook at the webhook Service, as config/crd/patches/ does",
            ));
        };
        let key = (
            get_str(service, &["name"]).unwrap_or_default().to_string(),
            service.get("port").and_then(Value::as_u64).unwrap_or(443),
            get_str(service, &["path"]).unwrap_or_default().to_string(),
        );
        conversions
            .entry(key)
            .or_insert_with(|| (Vec::new(), webhook))
            .0
            .push(name(crd).to_string());
    }
    for (mut crd_names, webhook) in conversions.into_values() {
        crd_names.sort();
        let service = get(webhook, &["clientConfig", "service"]).unwrap_or(&Value::Null);
        let mut entry = Mapping::new();
        entry.insert(
            "admissionReviewVersions".into(),
            webhook
                .get("conversionReviewVersions")
                .cloned()
                .unwrap_or_else(|| Value::Sequence(vec!["v1".into()])),
        );
        serving(&mut entry, service, services, deployments);
        entry.insert(
            "conversionCRDs".into(),
            Value::Sequence(crd_names.iter().map(|n| n.as_str().into()).collect()),
        );
        let short: String = crd_names
            .iter()
            .map(|n| n.split('.').next().unwrap_or_default())
            .collect();
        entry.insert("generateName".into(), format!("c{short}.kb.io").into());
        entry.insert("sideEffects".into(), "None".into());
        entry.insert("type".into(), "ConversionWebhook".into());
        if let Some(path) = service.get("path") {
            entry.insert("webhookPath".into(), path.clone());
        }
        definitions.push(sorted(entry));
    }
    definitions.sort_by(|a, b| get_str(a, &["generateName"]).cmp(&get_str(b, &["generateName"])));
    Ok(definitions)
}

/// `containerPort`, `deploymentName` and `targetPort` of a webhook served
/// through `service_ref`: the port of the Service it names, and the
/// Deployment whose pods that Service selects (else the Service's name
/// without `-service`, as operator-sdk guesses).
fn serving(entry: &mut Mapping, service_ref: &Value, services: &[Value], deployments: &[Value]) {
    let service_name = get_str(service_ref, &["name"]).unwrap_or_default();
    let port = service_ref
        .get("port")
        .and_then(Value::as_u64)
        .unwrap_or(443);
    let service = services.iter().find(|s| name(s) == service_name);
    if let Some(matched) = service
        .and_then(|s| get(s, &["spec", "ports"]))
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .find(|p| p.get("port").and_then(Value::as_u64) == Some(port))
    {
        entry.insert("containerPort".into(), port.into());
        if let Some(target) = matched.get("targetPort") {
            entry.insert("targetPort".into(), target.clone());
        }
    }
    let selector = service
        .and_then(|s| get(s, &["spec", "selector"]))
        .and_then(Value::as_mapping)
        .filter(|s| !s.is_empty());
    let deployment = selector.and_then(|selector| {
        deployments.iter().find(|d| {
            let labels = get(d, &["spec", "template", "metadata", "labels"]);
            selector
                .iter()
                .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
        })
    });
    let deployment_name = deployment.map_or_else(
        || {
            service_name
                .strip_suffix("-service")
                .unwrap_or(service_name)
                .to_string()
        },
        |d| name(d).to_string(),
    );
    entry.insert("deploymentName".into(), deployment_name.into());
}

/// `entry` with its keys in alphabetical order, as the rest of the CSV.
fn sorted(entry: Mapping) -> Value {
    let mut pairs: Vec<(Value, Value)> = entry.into_iter().collect();
    pairs.sort_by(|a, b| a.0.as_str().cmp(&b.0.as_str()));
    Value::Mapping(pairs.into_iter().collect())
}
