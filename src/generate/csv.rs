//! `rsop generate kustomize manifests`: `config/manifests/`, the base
//! `ClusterServiceVersion` the user edits (display name, description, icon,
//! maintainers, ...) and the kustomization `generate bundle` renders.
//!
//! The base is the user's file once written. A re-run reads it back, keeps
//! every field as it is and only adds an owned-CRD entry for each kind
//! version it does not list yet; when nothing is missing, the file's text is
//! left byte for byte.

use std::path::Path;

use heck::ToTitleCase;
use serde_yaml_ng::{Mapping, Value};

use super::{kind, to_yaml};
use crate::output::{Disk, FileChange};
use crate::project::Project;
use crate::yaml::{get, get_str};
use crate::{Error, Result};

pub const MANIFESTS_DIR: &str = "config/manifests";
const CRD_DIR: &str = "config/crd/bases";

/// The base CSV's path for `project`.
pub fn base_path(project: &Project) -> String {
    format!(
        "{MANIFESTS_DIR}/bases/{}.clusterserviceversion.yaml",
        project.project_name
    )
}

/// The changes `generate kustomize manifests` makes.
pub fn plan(root: &Path, project: &Project) -> Result<Vec<FileChange>> {
    let disk = Disk::new(root);
    let crds = read_crds(root)?;
    let owned: Vec<Value> = crds.iter().flat_map(owned_entries).collect();

    let base = base_path(project);
    let before = disk.read(Path::new(&base))?;
    let after = match &before {
        None => to_yaml(&new_base(project, owned), &base)?,
        Some(text) => {
            let mut csv: Value = serde_yaml_ng::from_str(text).map_err(|e| Error::Parse {
                path: base.clone().into(),
                help: Some("fix the YAML, or delete the file to have rsop write it again".into()),
                source: Box::new(e),
            })?;
            if add_missing_owned(&mut csv, owned) == 0 {
                text.clone()
            } else {
                to_yaml(&csv, &base)?
            }
        }
    };

    let kustomization = format!("{MANIFESTS_DIR}/kustomization.yaml");
    let kustomization_before = disk.read(Path::new(&kustomization))?;
    let kustomization_after = kustomization_before
        .clone()
        .unwrap_or_else(|| kustomization_text(project));
    Ok(vec![
        FileChange {
            path: kustomization.into(),
            before: kustomization_before,
            after: kustomization_after,
            remove: false,
        },
        FileChange {
            path: base.into(),
            before,
            after,
            remove: false,
        },
    ])
}

fn kustomization_text(project: &Project) -> String {
    format!(
        "# What `rsop generate bundle` renders: the ClusterServiceVersion base, the operator as\n\
         # config/default installs it, and the samples, which become the CSV's alm-examples.\n\
         apiVersion: kustomize.config.k8s.io/v1beta1\n\
         kind: Kustomization\n\
         resources:\n\
         - bases/{}.clusterserviceversion.yaml\n\
         - ../default\n\
         - ../samples\n",
        project.project_name
    )
}

/// The CRDs `rsop manifests` wrote, in file name order.
pub fn read_crds(root: &Path) -> Result<Vec<Value>> {
    let dir = root.join(CRD_DIR);
    let mut paths: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io("read directory", &dir, e)),
    };
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
            serde_yaml_ng::from_str(&text).map_err(|e| Error::Parse {
                path: path.clone(),
                help: Some("run `rsop manifests` to write the CRDs again".into()),
                source: Box::new(e),
            })
        })
        .collect()
}

/// One owned-CRD entry per served version of `crd`, with descriptors for
/// the top-level fields of spec and status taken from the schema, whose
/// descriptions are the types' doc comments.
pub fn owned_entries(crd: &Value) -> Vec<Value> {
    let crd_name = get_str(crd, &["metadata", "name"]).unwrap_or_default();
    let kind_name = get_str(crd, &["spec", "names", "kind"]).unwrap_or_default();
    let versions = get(crd, &["spec", "versions"])
        .and_then(Value::as_sequence)
        .cloned()
        .unwrap_or_default();
    versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false))
        .map(|version| {
            let schema = get(version, &["schema", "openAPIV3Schema"]);
            let mut entry = Mapping::new();
            if let Some(description) = schema.and_then(|s| get_str(s, &["description"])) {
                entry.insert("description".into(), first_paragraph(description).into());
            }
            entry.insert("displayName".into(), kind_name.to_title_case().into());
            entry.insert("kind".into(), kind_name.into());
            entry.insert("name".into(), crd_name.into());
            for (part, key) in [("spec", "specDescriptors"), ("status", "statusDescriptors")] {
                let descriptors = schema
                    .and_then(|s| get(s, &["properties", part, "properties"]))
                    .and_then(Value::as_mapping)
                    .map(|fields| descriptors(part, fields))
                    .unwrap_or_default();
                if !descriptors.is_empty() {
                    entry.insert(key.into(), Value::Sequence(descriptors));
                }
            }
            entry.insert(
                "version".into(),
                version.get("name").cloned().unwrap_or_default(),
            );
            Value::Mapping(entry)
        })
        .collect()
}

fn descriptors(part: &str, fields: &Mapping) -> Vec<Value> {
    fields
        .iter()
        .filter_map(|(field, schema)| {
            let field = field.as_str()?;
            let mut d = Mapping::new();
            if let Some(description) = get_str(schema, &["description"]) {
                d.insert("description".into(), first_paragraph(description).into());
            }
            d.insert("displayName".into(), field.to_title_case().into());
            d.insert("path".into(), field.into());
            let ty = get_str(schema, &["type"]);
            // The UI hints OLM consoles know for the fields every rsop kind has.
            let hint = match (part, field, ty) {
                ("spec", "size" | "replicas", Some("integer")) => {
                    Some("urn:alm:descriptor:com.tectonic.ui:podCount")
                }
                ("status", "conditions", Some("array")) => {
                    Some("urn:alm:descriptor:io.kubernetes.conditions")
                }
                _ => None,
            };
            if let Some(hint) = hint {
                d.insert("x-descriptors".into(), Value::Sequence(vec![hint.into()]));
            }
            Some(Value::Mapping(d))
        })
        .collect()
}

fn first_paragraph(text: &str) -> String {
    text.split("\n\n").next().unwrap_or(text).replace('\n', " ")
}

/// Adds the entries of `owned` that `csv` lacks (by CRD name and version);
/// returns how many it added.
pub fn add_missing_owned(csv: &mut Value, owned: Vec<Value>) -> usize {
    let list = super::sequence_at(
        super::mapping_at(csv, &["spec", "customresourcedefinitions"]),
        "owned",
    );
    let key = |v: &Value| {
        (
            get_str(v, &["name"]).map(str::to_owned),
            get_str(v, &["version"]).map(str::to_owned),
        )
    };
    let mut added = 0;
    for entry in owned {
        if !list.iter().any(|e| key(e) == key(&entry)) {
            list.push(entry);
            added += 1;
        }
    }
    added
}

/// A new base: what OLM requires, with placeholders that tell the user
/// what to fill in.
fn new_base(project: &Project, owned: Vec<Value>) -> Value {
    let name = &project.project_name;
    let display = name.to_title_case();
    let yaml = format!(
        r#"apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  annotations:
    alm-examples: "[]"
    capabilities: Basic Install
  name: {name}.v0.0.0
spec:
  apiservicedefinitions: {{}}
  customresourcedefinitions:
    owned: []
  description: "TODO(user): what {display} does, in Markdown; OperatorHub shows it on the operator's page."
  displayName: {display}
  icon:
  - base64data: ""
    mediatype: ""
  install:
    spec:
      deployments: []
    strategy: deployment
  installModes:
  - supported: {own}
    type: OwnNamespace
  - supported: false
    type: SingleNamespace
  - supported: false
    type: MultiNamespace
  - supported: {all}
    type: AllNamespaces
  keywords:
  - {name}
  links:
  - name: {display}
    url: https://{name}.{domain}
  maintainers:
  - email: maintainer@{domain}
    name: TODO(user)
  maturity: alpha
  provider:
    name: TODO(user)
    url: https://{domain}
  version: 0.0.0
"#,
        domain = project.domain,
        // A namespaced manager watches only its own namespace.
        own = project.namespaced,
        all = !project.namespaced,
    );
    let mut csv: Value = serde_yaml_ng::from_str(&yaml).expect("the built-in base CSV is YAML");
    add_missing_owned(&mut csv, owned);
    debug_assert_eq!(kind(&csv), "ClusterServiceVersion");
    csv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd() -> Value {
        serde_yaml_ng::from_str(
            r"
metadata:
  name: memcacheds.cache.example.com
spec:
  names:
    kind: Memcached
  versions:
  - name: v1alpha1
    served: true
    schema:
      openAPIV3Schema:
        description: |-
          A Memcached: pods.

          More text.
        properties:
          spec:
            properties:
              containerPort:
                description: Port the container listens on.
                type: integer
              size:
                type: integer
          status:
            properties:
              conditions:
                type: array
",
        )
        .unwrap()
    }

    #[test]
    fn owned_entries_carry_descriptors_from_the_schema() {
        let owned = owned_entries(&crd());
        let text = crate::yaml::to_string(&owned).unwrap();
        assert_eq!(
            text,
            "\
- description: 'A Memcached: pods.'
  displayName: Memcached
  kind: Memcached
  name: memcacheds.cache.example.com
  specDescriptors:
  - description: Port the container listens on.
    displayName: Container Port
    path: containerPort
  - displayName: Size
    path: size
    x-descriptors:
    - urn:alm:descriptor:com.tectonic.ui:podCount
  statusDescriptors:
  - displayName: Conditions
    path: conditions
    x-descriptors:
    - urn:alm:descriptor:io.kubernetes.conditions
  version: v1alpha1
"
        );
    }

    #[test]
    fn re_adding_keeps_user_entries() {
        let mut csv = Value::Mapping(Mapping::new());
        assert_eq!(add_missing_owned(&mut csv, owned_entries(&crd())), 1);
        let list = get(&csv, &["spec", "customresourcedefinitions", "owned"]).unwrap();
        let mut edited = list.clone();
        edited[0]["displayName"] = "Cache".into();
        csv["spec"]["customresourcedefinitions"]["owned"] = edited;
        assert_eq!(add_missing_owned(&mut csv, owned_entries(&crd())), 0);
        assert_eq!(
            get_str(&csv, &["spec", "customresourcedefinitions", "owned"]).map(str::to_owned),
            None
        );
        assert_eq!(
            csv["spec"]["customresourcedefinitions"]["owned"][0]["displayName"],
            Value::from("Cache")
        );
    }
}
