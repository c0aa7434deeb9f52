//! `rsop generate`: packaging derived from the project's `config/`, each
//! piece rendered by the real kustomize and written through the same
//! all-or-nothing writer with the same modes as `rsop manifests`.
//!
//! - `installer`: `dist/install.yaml`, everything `config/default` renders;
//! - `kustomize manifests`: the `ClusterServiceVersion` base the user edits;
//! - `bundle`: an OLM bundle, byte-stable from run to run;
//! - `helm`: a Helm chart made from the same rendered objects.

pub mod bundle;
pub mod csv;
pub mod helm;
pub mod kustomize;
pub mod webhooks;

use std::path::Path;

use serde_yaml_ng::{Mapping, Value};

use crate::output::FileChange;
use crate::yaml::get_str;
use crate::{Error, Result};

/// Where `generate installer` writes.
pub const INSTALLER: &str = "dist/install.yaml";

/// `dist/install.yaml`: `config/default` as kustomize renders it, with the
/// manager's image set to `image` when given.
pub fn installer(root: &Path, image: Option<&str>) -> Result<Vec<FileChange>> {
    let rendered = kustomize::render(root, "config/default", image)?;
    changes(root, vec![(INSTALLER.to_string(), rendered)])
}

/// The changes that bring `files` (relative paths and texts) to the disk.
pub fn changes(root: &Path, files: Vec<(String, String)>) -> Result<Vec<FileChange>> {
    let files = files.into_iter().map(|(p, t)| (p.into(), t)).collect();
    crate::manifests::changes(files, root)
}

/// The mapping at `path`, made (as empty mappings) where it is missing.
pub fn mapping_at<'a>(value: &'a mut Value, path: &[&str]) -> &'a mut Mapping {
    let mut current = value;
    for key in path {
        current = as_mapping(current)
            .entry((*key).into())
            .or_insert(Value::Null);
    }
    as_mapping(current)
}

/// `value` as a mapping, replacing whatever else it held.
fn as_mapping(value: &mut Value) -> &mut Mapping {
    if !value.is_mapping() {
        *value = Value::Mapping(Mapping::new());
    }
    match value {
        Value::Mapping(map) => map,
        _ => unreachable!("made a mapping above"),
    }
}

/// The sequence under `key` of `map`, replacing whatever else it held.
pub fn sequence_at<'a>(map: &'a mut Mapping, key: &str) -> &'a mut Vec<Value> {
    let value = map.entry(key.into()).or_insert(Value::Null);
    if !value.is_sequence() {
        *value = Value::Sequence(Vec::new());
    }
    match value {
        Value::Sequence(items) => items,
        _ => unreachable!("made a sequence above"),
    }
}

/// `kind` of a Kubernetes object.
pub fn kind(object: &Value) -> &str {
    get_str(object, &["kind"]).unwrap_or_default()
}

/// `metadata.name` of a Kubernetes object.
pub fn name(object: &Value) -> &str {
    get_str(object, &["metadata", "name"]).unwrap_or_default()
}

/// One YAML document as rsop writes it.
pub fn to_yaml(value: &Value, path: &str) -> Result<String> {
    crate::yaml::to_string(value).map_err(|e| Error::Parse {
        path: path.into(),
        help: None,
        source: Box::new(e),
    })
}
