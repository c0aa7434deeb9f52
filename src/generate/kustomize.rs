//! Rendering a kustomization with the real kustomize: the standalone
//! `kustomize build`, else the copy built into `kubectl kustomize`.
//!
//! An image override (`--img`) never edits the project's kustomization, as
//! `kustomize edit set image` would: rsop renders a throwaway overlay in a
//! temporary directory that names the project's directory as its base and
//! sets the `controller` image there.

use std::io::ErrorKind;
use std::path::Path;
use std::process::Command;

use serde_yaml_ng::Value;

use crate::{Error, Result};

/// The image name `config/manager/manager.yaml` gives the manager; `--img`
/// replaces it.
pub const MANAGER_IMAGE_NAME: &str = "controller";

/// Renders the kustomization in `root/dir`, with the manager's image set to
/// `image` when given, and returns kustomize's output.
pub fn render(root: &Path, dir: &str, image: Option<&str>) -> Result<String> {
    let target = root.join(dir);
    if !target.join("kustomization.yaml").is_file() {
        return Err(Error::user_with_help(
            format!("`{}` has no kustomization.yaml", target.display()),
            "run rsop at the root of a project made by `rsop init`",
        ));
    }
    let Some(image) = image else {
        return run(&target, dir);
    };
    let overlay = tempfile::Builder::new()
        .prefix("rsop-kustomize-")
        .tempdir()
        .map_err(|e| Error::io("create a directory in", std::env::temp_dir(), e))?;
    // kustomize takes bases by relative path only.
    let base_abs = std::fs::canonicalize(&target).map_err(|e| Error::io("read", &target, e))?;
    let overlay_abs =
        std::fs::canonicalize(overlay.path()).map_err(|e| Error::io("read", overlay.path(), e))?;
    let base = pathdiff::diff_paths(&base_abs, &overlay_abs).unwrap_or(base_abs);
    let (name, tag) = split_image(image);
    let mut entry = serde_yaml_ng::Mapping::new();
    entry.insert("name".into(), MANAGER_IMAGE_NAME.into());
    entry.insert("newName".into(), name.into());
    if let Some(tag) = tag {
        let key = if tag.starts_with("sha256:") {
            "digest"
        } else {
            "newTag"
        };
        entry.insert(key.into(), tag.into());
    }
    let mut kustomization = serde_yaml_ng::Mapping::new();
    kustomization.insert(
        "apiVersion".into(),
        "kustomize.config.k8s.io/v1beta1".into(),
    );
    kustomization.insert("kind".into(), "Kustomization".into());
    kustomization.insert(
        "resources".into(),
        Value::Sequence(vec![base.display().to_string().into()]),
    );
    kustomization.insert(
        "images".into(),
        Value::Sequence(vec![Value::Mapping(entry)]),
    );
    let text = crate::yaml::to_string(&kustomization).map_err(|e| Error::Parse {
        path: overlay.path().join("kustomization.yaml"),
        help: None,
        source: Box::new(e),
    })?;
    let file = overlay.path().join("kustomization.yaml");
    std::fs::write(&file, text).map_err(|e| Error::io("write", &file, e))?;
    run(overlay.path(), dir)
}

/// Splits `registry:5000/name:tag` or `name@sha256:...` into name and tag
/// (or digest); a port is not a tag.
pub fn split_image(image: &str) -> (&str, Option<&str>) {
    if let Some((name, digest)) = image.split_once('@') {
        return (name, Some(digest));
    }
    match image.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => (name, Some(tag)),
        _ => (image, None),
    }
}

/// Runs kustomize on `dir`; `shown` names it in errors.
fn run(dir: &Path, shown: &str) -> Result<String> {
    let attempts: [(&str, &[&str]); 2] = [("kustomize", &["build"]), ("kubectl", &["kustomize"])];
    for (program, args) in attempts {
        let output = match Command::new(program).args(args).arg(dir).output() {
            Ok(output) => output,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io("run", program, e)),
        };
        if !output.status.success() {
            return Err(Error::user_with_help(
                format!(
                    "`{program} {}` failed on `{shown}`:\n{}",
                    args.join(" "),
                    String::from_utf8_lossy(&output.stderr).trim_end()
                ),
                format!("fix `{shown}` until `kubectl kustomize {shown}` renders it"),
            ));
        }
        return String::from_utf8(output.stdout)
            .map_err(|_| Error::user(format!("`{program}` wrote output that is not UTF-8")));
    }
    Err(Error::user_with_help(
        "rendering the manifests needs kustomize, and neither `kustomize` nor `kubectl` is on PATH",
        "install kubectl (its built-in `kubectl kustomize` is enough) or kustomize, then run again",
    ))
}

/// The documents of a multi-document YAML stream, without empty ones.
pub fn documents(text: &str, origin: &str) -> Result<Vec<Value>> {
    use serde::Deserialize;
    let mut docs = Vec::new();
    for doc in serde_yaml_ng::Deserializer::from_str(text) {
        let value = Value::deserialize(doc).map_err(|e| Error::Parse {
            path: origin.into(),
            help: Some("kustomize rendered YAML rsop cannot read".into()),
            source: Box::new(e),
        })?;
        if !value.is_null() {
            docs.push(value);
        }
    }
    Ok(docs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_split_into_name_and_tag() {
        assert_eq!(split_image("quay.io/a/b:v1"), ("quay.io/a/b", Some("v1")));
        assert_eq!(split_image("localhost:5000/b"), ("localhost:5000/b", None));
        assert_eq!(
            split_image("localhost:5000/b:1.2"),
            ("localhost:5000/b", Some("1.2"))
        );
        assert_eq!(split_image("b@sha256:abc"), ("b", Some("sha256:abc")));
        assert_eq!(split_image("controller"), ("controller", None));
    }
}
