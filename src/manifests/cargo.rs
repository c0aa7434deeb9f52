//! `rsop manifests --cargo`: the exact fallback. A throwaway `crdgen`
//! program, written outside the user's tree, depends on the project as a
//! library and prints what `K::crd()` returns for every kind rsop found;
//! rsop then writes those schemas through the same writer and modes.
//!
//! It compiles the project, so it takes as long as a build; it exists for
//! the constructs static derivation refuses (a hand-written `JsonSchema`,
//! `schema_with`, foreign types).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::crd::Version;
use crate::versions;
use crate::{Error, Result};

/// The package name and library name of the project, from Cargo.toml.
#[derive(Debug, Clone)]
pub struct Package {
    pub name: String,
    pub lib: String,
    /// `package.version`, when it is a plain string.
    pub version: Option<String>,
}

/// Builds and runs the crdgen program; returns each version's
/// `openAPIV3Schema`, keyed like [`Version::key`].
pub fn schemas(
    root: &Path,
    package: &Package,
    versions: &[Version],
) -> Result<BTreeMap<String, Value>> {
    let dir = crdgen_dir(root);
    std::fs::create_dir_all(dir.join("src")).map_err(|e| Error::io("create directory", &dir, e))?;
    let root_abs = std::fs::canonicalize(root).map_err(|e| Error::io("resolve", root, e))?;
    let manifest = format!(
        "# Written by `rsop manifests --cargo`; safe to delete.\n\
         [package]\nname = \"rsop-crdgen\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n{} = {{ path = {} }}\n\
         kube = {{ version = \"{}\", default-features = false, features = [\"derive\"] }}\n\
         serde_json = \"1.0\"\n\n[workspace]\n",
        package.name,
        toml_edit::Value::from(root_abs.display().to_string()),
        versions::KUBE
    );
    let mut main = String::from(
        "//! Written by `rsop manifests --cargo`: prints each kind's `crd()`.\n\
         use kube::CustomResourceExt;\n\nfn main() {\n    let mut crds = serde_json::Map::new();\n",
    );
    for v in versions {
        let _ = writeln!(
            main,
            "    crds.insert({:?}.into(), serde_json::to_value({}::{}::crd()).unwrap());",
            v.key(),
            package.lib,
            v.root_path
        );
    }
    main.push_str("    println!(\"{}\", serde_json::Value::Object(crds));\n}\n");
    write(&dir.join("Cargo.toml"), &manifest)?;
    write(&dir.join("src/main.rs"), &main)?;
    // The project's lock file pins the same dependency versions it builds with.
    if let Ok(lock) = std::fs::read_to_string(root.join("Cargo.lock")) {
        write(&dir.join("Cargo.lock"), &lock)?;
    }

    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root_abs.join("target"), PathBuf::from);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .args(["run", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .map_err(|e| Error::io("run", "cargo", e))?;
    if !output.status.success() {
        return Err(Error::User {
            message: format!(
                "building the crdgen program against the project failed:\n{}",
                String::from_utf8_lossy(&output.stderr).trim_end()
            ),
            help: Some(
                "`--cargo` needs the project to compile, and every CustomResource type to be \
                 reachable from the library root through public modules"
                    .into(),
            ),
        });
    }
    let crds: BTreeMap<String, Value> =
        serde_json::from_slice(&output.stdout).map_err(|e| Error::Parse {
            path: dir.join("src/main.rs"),
            help: Some(
                "the crdgen program printed something other than JSON; rerun to see its output"
                    .into(),
            ),
            source: Box::new(e),
        })?;
    Ok(crds
        .into_iter()
        .map(|(key, crd)| {
            let schema = crd["spec"]["versions"][0]["schema"].clone();
            (key, schema)
        })
        .collect())
}

/// A per-project directory under the system's temporary directory, kept
/// between runs so that rebuilds are incremental.
fn crdgen_dir(root: &Path) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::fs::canonicalize(root)
        .unwrap_or_else(|_| root.to_path_buf())
        .hash(&mut hasher);
    std::env::temp_dir().join(format!("rsop-crdgen-{:016x}", hasher.finish()))
}

fn write(path: &Path, text: &str) -> Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(()); // keep the mtime, so cargo does not rebuild for nothing
    }
    std::fs::write(path, text).map_err(|e| Error::io("write", path, e))
}
