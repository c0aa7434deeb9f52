//! Which k8s-openapi the project builds with: the version from Cargo.lock
//! and the Kubernetes version feature (`v1_XX`, `earliest`, `latest`) from
//! the workspace's Cargo.toml files, so that the schemas rsop inlines for
//! embedded k8s-openapi types are the ones the project's own build would
//! give. A version or feature rsop has no schemas for is an [`Unsupported`],
//! never a silent substitute: the caller reports it, or takes the schemas
//! from a cargo build instead.

use std::fmt;
use std::path::{Path, PathBuf};

use toml_edit::{Document, Item};

use crate::manifests::derive::schema::k8s::{self, Table};
use crate::manifests::derive::schema::model::{self, KubeCore, Model, Schemars};
use crate::manifests::diagnostics::{Diagnostic, Location};
use crate::{Error, Result};

const CRATE: &str = "k8s-openapi";

/// Why rsop has no schemas for the project's k8s-openapi.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    pub reason: Reason,
    /// Where the version or the feature is written.
    pub location: Location,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// Cargo.lock's k8s-openapi is a release rsop has no schemas for.
    Version { version: String },
    /// Cargo.lock's k8s-openapi is a git checkout, not a release: its
    /// schemas may be any commit's.
    Unreleased { version: String, source: String },
    /// No manifest enables a Kubernetes version feature on it.
    NoFeature { version: String },
    /// The feature is not one this release has.
    Feature { version: String, feature: String },
    /// Features for two Kubernetes versions: k8s-openapi refuses to build.
    SeveralFeatures {
        version: String,
        features: Vec<String>,
    },
    /// Cargo.lock has several k8s-openapi releases and none is the
    /// package's own dependency.
    SeveralVersions { versions: Vec<String> },
}

impl Unsupported {
    pub fn message(&self) -> String {
        match &self.reason {
            Reason::Version { version } => format!(
                "k8s-openapi {version} is not supported statically; rsop has {}",
                supported_versions()
            ),
            Reason::Unreleased { version, source } => format!(
                "k8s-openapi {version} comes from {}, not from a release: rsop has the schemas of releases only",
                describe_source(source)
            ),
            Reason::NoFeature { version } => format!(
                "no Cargo.toml of the project enables a Kubernetes version feature (`v1_XX`, `earliest`, `latest`) on k8s-openapi {version}"
            ),
            Reason::Feature { version, feature } => format!(
                "k8s-openapi {version} has no Kubernetes version feature `{feature}`; it has {}",
                k8s::known()
                    .filter(|k| k.k8s_openapi == version)
                    .map(|k| format!("`{}`", k.feature))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Reason::SeveralFeatures { version, features } => format!(
                "k8s-openapi {version} gets the features {}, which select different Kubernetes versions; k8s-openapi builds with exactly one",
                features
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Reason::SeveralVersions { versions } => format!(
                "Cargo.lock has k8s-openapi {} and the package depends on none of them directly",
                versions.join(" and ")
            ),
        }
    }

    pub fn help(&self) -> String {
        match &self.reason {
            Reason::Version { .. } => "move to a k8s-openapi release rsop has".into(),
            Reason::Unreleased { .. } => {
                "depend on a crates.io release of k8s-openapi to derive the kinds statically".into()
            }
            Reason::NoFeature { version } => {
                // The newest Kubernetes of that very release, so that the
                // example builds as written.
                let newest = k8s::known()
                    .filter(|k| k.k8s_openapi == version)
                    .map(|k| k.feature)
                    .last();
                let (version, feature) =
                    newest.map_or(("0.29", "v1_34"), |f| (version.as_str(), f));
                format!(
                    "enable one on the k8s-openapi dependency, e.g. `k8s-openapi = {{ version = \"{version}\", features = [\"{feature}\"] }}`"
                )
            }
            Reason::Feature { .. } => "use one of the features the release has".into(),
            Reason::SeveralFeatures { .. } => {
                "keep one Kubernetes version feature in the workspace".into()
            }
            Reason::SeveralVersions { .. } => {
                "add k8s-openapi to the package's [dependencies] with the version kube uses".into()
            }
        }
    }

    /// Whether the project's own build can still give the schemas: every
    /// case but two version features, which k8s-openapi itself refuses.
    pub fn build_can_decide(&self) -> bool {
        !matches!(self.reason, Reason::SeveralFeatures { .. })
    }

    /// The problem as a diagnostic, for the run's report.
    pub fn diagnostic(&self) -> Diagnostic {
        Diagnostic::new(self.location.clone(), self.message()).with_help(self.help())
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Unsupported {}

/// "0.26.0, 0.26.1, ... and 0.29.0".
fn supported_versions() -> String {
    let mut versions: Vec<&str> = k8s::known().map(|k| k.k8s_openapi).collect();
    versions.dedup();
    match versions.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => versions.join(""),
    }
}

/// What the project's lock file decides for `rsop manifests`.
#[derive(Debug)]
pub struct Selection {
    /// The k8s-openapi schema table, or why rsop has none for what the
    /// project uses.
    pub table: std::result::Result<Table, Unsupported>,
    /// The major version of kube-derive (the highest, if there are
    /// several), whose `#[kube(...)]` grammar applies; `None` without a
    /// lock or kube-derive.
    pub kube_derive: Option<crate::manifests::derive::schema::KubeDerive>,
    /// The schemars and kube-core releases the derivation follows, or a
    /// note (at the release in Cargo.lock) that rsop has no model of one:
    /// the kinds are then built.
    pub model: std::result::Result<Model, Diagnostic>,
    /// Whether the project's kube-derive writes a CRD's empty lists (see
    /// [`Model::empty_lists`]), known also for releases rsop has no model
    /// of: their schemas are built, the rest of the CRD is still read.
    pub empty_lists: bool,
    /// Without a Cargo.lock: the note that says which releases rsop
    /// assumed.
    pub assumed: Option<String>,
}

/// The schema table and kube-derive release of the project at `root` (the
/// package's directory), from one reading of its Cargo.lock.
///
/// The error is a Cargo.lock or Cargo.toml that cannot be read.
pub fn select(root: &Path) -> Result<Selection> {
    // Absolute, to look for the workspace above the package; locations are
    // then shown relative to the package, as the sources' are.
    let abs = std::fs::canonicalize(root).map_err(|e| Error::io("resolve", root, e))?;
    let mut selection = select_in(&abs)?;
    if let Err(u) = &mut selection.table
        && let Some(relative) = pathdiff::diff_paths(&u.location.file, &abs)
    {
        u.location.file = relative;
    }
    if let Err(d) = &mut selection.model
        && let Some(relative) = pathdiff::diff_paths(&d.location.file, &abs)
    {
        d.location.file = relative;
    }
    Ok(selection)
}

fn select_in(root: &Path) -> Result<Selection> {
    let workspace = Workspace::find(root)?;
    let lock_path = workspace.root.join("Cargo.lock");
    let lock = match std::fs::read_to_string(&lock_path) {
        Ok(text) => text,
        // Without Cargo.lock the releases are not decided yet: cargo picks
        // them at the first build, which writes the lock.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return select_without_lock(&workspace);
        }
        Err(e) => return Err(Error::io("read", &lock_path, e)),
    };
    let doc = parse(&lock, &lock_path)?;
    let kube_derive = doc
        .get("package")
        .and_then(Item::as_array_of_tables)
        .into_iter()
        .flat_map(|a| a.iter())
        .filter(|p| name_of(p) == "kube-derive")
        .filter_map(|p| model::release(p.get("version")?.as_str()?))
        .max();
    Ok(Selection {
        table: table_in(&workspace, &doc, &lock, &lock_path)?,
        kube_derive,
        model: model_in(&doc, &lock, &lock_path),
        empty_lists: doc
            .get("package")
            .and_then(Item::as_array_of_tables)
            .into_iter()
            .flat_map(|a| a.iter())
            .filter(|p| name_of(p) == "kube-derive")
            .filter_map(|p| p.get("version")?.as_str())
            .max_by_key(|v| model::release(v))
            .is_some_and(model::writes_empty_lists),
        assumed: None,
    })
}

fn table_in(
    workspace: &Workspace,
    doc: &Document<String>,
    lock: &str,
    lock_path: &Path,
) -> Result<std::result::Result<Table, Unsupported>> {
    let package = workspace.package_name()?;
    let locked = match locked_version(doc, lock, lock_path, package.as_deref()) {
        Some(Ok(locked)) => locked,
        Some(Err(unsupported)) => return Ok(Err(unsupported)),
        // No k8s-openapi in the build: no type can embed one, so the table
        // is never consulted; the pinned one keeps messages meaningful.
        None => return Ok(Ok(Table::pinned())),
    };
    table_for(workspace, locked)
}

/// The table of k8s-openapi `locked`, under the Kubernetes version feature
/// the workspace's manifests enable on it.
fn table_for(
    workspace: &Workspace,
    locked: Locked,
) -> Result<std::result::Result<Table, Unsupported>> {
    let version = locked.version.clone();
    if let Some(source) = locked.unreleased {
        return Ok(Err(Unsupported {
            reason: Reason::Unreleased { version, source },
            location: locked.location,
        }));
    }
    let Some(known) = k8s::known().find(|k| k.k8s_openapi == version) else {
        return Ok(Err(Unsupported {
            reason: Reason::Version { version },
            location: locked.location,
        }));
    };

    let mut found = workspace.features(&version)?;
    if let Ok(value) = std::env::var("K8S_OPENAPI_ENABLED_VERSION")
        && let Some(minor) = value.strip_prefix("1.")
    {
        // k8s-openapi's build script reads this too, as another feature.
        found.push(Feature {
            name: format!("v1_{minor}"),
            location: locked.location.clone(),
            dev: false,
        });
    }
    // Dev-dependency features count only when no normal dependency sets
    // one: a library keeps its feature there, as k8s-openapi advises.
    if found.iter().any(|f| !f.dev) {
        found.retain(|f| !f.dev);
    }
    let mut resolved: Vec<(String, &Feature)> = Vec::new();
    for f in &found {
        let feature = match f.name.as_str() {
            // Releases before 0.19 have no such feature (`-` in the data).
            "earliest" if known.earliest != "-" => known.earliest.to_string(),
            "latest" if known.latest != "-" => known.latest.to_string(),
            other => other.to_string(),
        };
        if !resolved.iter().any(|(r, _)| *r == feature) {
            resolved.push((feature, f));
        }
    }
    match resolved.as_slice() {
        [] => Ok(Err(Unsupported {
            reason: Reason::NoFeature { version },
            location: locked.location,
        })),
        [(feature, f)] => Ok(Table::find(&version, feature).ok_or_else(|| Unsupported {
            reason: Reason::Feature {
                version,
                feature: f.name.clone(),
            },
            location: f.location.clone(),
        })),
        [.., (_, last)] => Ok(Err(Unsupported {
            reason: Reason::SeveralFeatures {
                version,
                features: resolved.iter().map(|(_, f)| f.name.clone()).collect(),
            },
            location: last.location.clone(),
        })),
    }
}

/// The kube releases rsop has a model of (see [`crate::manifests::derive::schema::model`]).
const KUBE_RELEASES: &[&str] = &[
    "0.70.0", "0.71.0", "0.72.0", "0.73.0", "0.73.1", "0.74.0", "0.75.0", "0.76.0", "0.77.0",
    "0.78.0", "0.79.0", "0.80.0", "0.81.0", "0.82.0", "0.82.1", "0.82.2", "0.83.0", "0.84.0",
    "0.85.0", "0.86.0", "0.87.1", "0.87.2", "0.88.0", "0.88.1", "0.89.0", "0.90.0", "0.91.0",
    "0.92.0", "0.92.1", "0.93.0", "0.93.1", "0.94.0", "0.94.1", "0.94.2", "0.95.0", "0.96.0",
    "0.97.0", "0.98.0", "0.99.0", "1.0.0", "1.1.0", "2.0.0", "2.0.1", "3.0.0", "3.0.1", "3.1.0",
    "4.0.0", "4.2.0", "5.0.0",
];
/// The schemars releases rsop has a model of.
const SCHEMARS_RELEASES: &[&str] = &[
    "0.8.6", "0.8.7", "0.8.8", "0.8.10", "0.8.11", "0.8.12", "0.8.13", "0.8.15", "0.8.16",
    "0.8.17", "0.8.19", "0.8.20", "0.8.21", "0.8.22", "1.0.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4",
    "1.1.0", "1.2.0", "1.2.1", "1.2.2", "1.2.3",
];

/// What cargo would lock for a project that has no Cargo.lock yet: for
/// k8s-openapi, kube and schemars, the newest release rsop knows that every
/// requirement of the workspace's manifests allows, with the features they
/// enable. `assumed` says which releases these are.
fn select_without_lock(workspace: &Workspace) -> Result<Selection> {
    let manifest = workspace.package.join("Cargo.toml");
    let at = Location::new(&manifest, 1, 1);
    let mut assumed = Vec::new();

    let k8s_requirements = workspace.requirements(&[CRATE])?;
    let mut k8s_releases: Vec<&str> = k8s::known().map(|k| k.k8s_openapi).collect();
    k8s_releases.dedup();
    let table = if k8s_requirements.is_empty() {
        Ok(Table::pinned())
    } else if let Some(version) = newest(&k8s_releases, &k8s_requirements) {
        let table = table_for(
            workspace,
            Locked {
                version: version.to_string(),
                location: at.clone(),
                unreleased: None,
            },
        )?;
        assumed.push(format!("k8s-openapi {version}"));
        table
    } else {
        Err(Unsupported {
            reason: Reason::Version {
                version: k8s_requirements.join(", "),
            },
            location: at.clone(),
        })
    };

    let kube_requirements = workspace.requirements(&["kube", "kube-derive", "kube-core"])?;
    let mut kube_derive = None;
    let mut model = Ok(Model::default());
    if !kube_requirements.is_empty() {
        match newest(KUBE_RELEASES, &kube_requirements) {
            Some(version) => {
                kube_derive = model::release(version);
                assumed.push(format!("kube {version}"));
                if let Ok(line) = KubeCore::of(version) {
                    model = Ok(Model {
                        kube_core: line,
                        empty_lists: model::writes_empty_lists(version),
                        ..Model::default()
                    });
                }
            }
            None => {
                model = Err(Diagnostic::new(
                    at.clone(),
                    format!(
                        "rsop has no model of the kube release `{}` allows: it derives CRDs statically for kube 0.70 to 5.0",
                        kube_requirements.join(", ")
                    ),
                )
                .with_help("the kinds are built with cargo; `--static` refuses them")
                .needs_code());
            }
        }
    }
    let schemars_requirements = workspace.requirements(&["schemars"])?;
    // kube 0.70 to 1.1 derive with their kube-core's schemars 0.8, whatever
    // else the project requires.
    if let Ok(m) = &mut model
        && m.kube_core.is_legacy()
    {
        m.schemars = Schemars::V0_8;
    } else if let Ok(m) = &mut model
        && !schemars_requirements.is_empty()
    {
        match newest(SCHEMARS_RELEASES, &schemars_requirements) {
            Some(version) => {
                assumed.push(format!("schemars {version}"));
                if let Ok(line) = Schemars::of(version) {
                    m.schemars = line;
                }
            }
            None => {
                model = Err(Diagnostic::new(
                    at.clone(),
                    format!(
                        "rsop has no model of the schemars release `{}` allows: it derives CRDs statically for schemars 0.8 and 1.0 to 1.2",
                        schemars_requirements.join(", ")
                    ),
                )
                .with_help("the kinds are built with cargo; `--static` refuses them")
                .needs_code());
            }
        }
    }
    // Known whatever the model: before kube 4.2 unless the requirements
    // allow it (an unmodelled `kube = "1"` still writes them).
    let empty_lists = match newest(KUBE_RELEASES, &kube_requirements) {
        Some(version) => model::writes_empty_lists(version),
        None => {
            !kube_requirements.is_empty()
                && newest(&["4.2.0", "5.0.0"], &kube_requirements).is_none()
        }
    };
    Ok(Selection {
        table,
        kube_derive,
        model,
        empty_lists,
        assumed: (!assumed.is_empty()).then(|| {
            format!(
                "note: no Cargo.lock yet: rsop assumed {}, the newest releases it knows that Cargo.toml allows; `cargo generate-lockfile` pins them",
                assumed.join(", ")
            )
        }),
    })
}

/// The newest of `releases` that every requirement allows.
fn newest<'a>(releases: &[&'a str], requirements: &[String]) -> Option<&'a str> {
    let requirements: Vec<semver::VersionReq> = requirements
        .iter()
        .filter_map(|r| semver::VersionReq::parse(r).ok())
        .collect();
    releases
        .iter()
        .filter_map(|r| Some((semver::Version::parse(r).ok()?, *r)))
        .filter(|(v, _)| requirements.iter().all(|req| req.matches(v)))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, r)| r)
}

/// The model of the kube-core and schemars releases in the lock (the
/// newest where one is absent). With several schemars releases, the one
/// kube-core depends on counts.
fn model_in(
    doc: &Document<String>,
    text: &str,
    path: &Path,
) -> std::result::Result<Model, Diagnostic> {
    let packages: Vec<&toml_edit::Table> = doc
        .get("package")
        .and_then(Item::as_array_of_tables)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let releases = |name: &str| -> Vec<(&str, Location)> {
        packages
            .iter()
            .filter(|p| name_of(p) == name)
            .filter_map(|p| {
                let item = p.get("version")?;
                let at = Location::at_offset(path, text, item.span().map_or(0, |s| s.start));
                Some((item.as_str()?, at))
            })
            .collect()
    };
    let unmodelled = |u: model::Unmodelled, at: Location| {
        Diagnostic::new(at, u.to_string())
            .with_help("the kinds are built with cargo; `--static` refuses them")
            .needs_code()
    };
    // A git checkout is some commit, whatever version it says: its
    // transforms may be those of no release.
    for name in ["kube-core", "schemars"] {
        if let Some((p, source)) = packages
            .iter()
            .filter(|p| name_of(p) == name)
            .find_map(|p| Some((p, unreleased(p)?)))
        {
            let version = p.get("version").and_then(Item::as_str).unwrap_or("?");
            let at = p.get("version").map_or(Location::new(path, 1, 1), |item| {
                Location::at_offset(path, text, item.span().map_or(0, |s| s.start))
            });
            return Err(Diagnostic::new(
                at,
                format!(
                    "rsop has no model of {name} {version} from {}: it derives CRDs statically for releases of kube 0.70 to 5.0 and schemars 0.8 and 1.0 to 1.2",
                    describe_source(&source)
                ),
            )
            .with_help("the kinds are built with cargo; `--static` refuses them")
            .needs_code());
        }
    }
    let mut out = Model::default();
    let kube_core = releases("kube-core");
    // The highest, as for kube-derive: the one the operator's kinds use.
    if let Some((version, at)) = kube_core
        .iter()
        .max_by_key(|(v, _)| model::release(v))
        .cloned()
    {
        out.kube_core = KubeCore::of(version).map_err(|u| unmodelled(u, at))?;
        out.empty_lists = model::writes_empty_lists(version);
    }
    let schemars = releases("schemars");
    let chosen = match schemars.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        several => {
            let wanted = packages
                .iter()
                .filter(|p| name_of(p) == "kube-core")
                .filter_map(|p| p.get("dependencies").and_then(Item::as_array))
                .flat_map(|a| a.iter().filter_map(|d| d.as_str()))
                .find_map(|d| d.strip_prefix("schemars ")?.split_whitespace().next());
            wanted
                .and_then(|w| several.iter().find(|(v, _)| *v == w))
                .or_else(|| several.iter().max_by_key(|(v, _)| model::release(v)))
                .cloned()
        }
    };
    if let Some((version, at)) = chosen {
        out.schemars = Schemars::of(version).map_err(|u| unmodelled(u, at))?;
    }
    // kube 0.70 to 1.1 derive with their kube-core's schemars 0.8.
    if out.kube_core.is_legacy() {
        out.schemars = Schemars::V0_8;
    }
    Ok(out)
}

/// The k8s-openapi release in Cargo.lock and where it is written.
#[derive(Debug)]
struct Locked {
    version: String,
    location: Location,
    /// The lock's `source` when it is a git checkout.
    unreleased: Option<String>,
}

/// The k8s-openapi release the package builds with, `None` when there is
/// none in the lock. With several (a dependency on another line), the
/// package's own dependency decides, else kube's.
fn locked_version(
    doc: &Document<String>,
    text: &str,
    path: &Path,
    package: Option<&str>,
) -> Option<std::result::Result<Locked, Unsupported>> {
    let packages: Vec<&toml_edit::Table> = doc
        .get("package")
        .and_then(Item::as_array_of_tables)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let mut candidates: Vec<Locked> = packages
        .iter()
        .filter(|p| name_of(p) == CRATE)
        .filter_map(|p| {
            let item = p.get("version")?;
            Some(Locked {
                version: item.as_str()?.to_string(),
                location: Location::at_offset(path, text, item.span().map_or(0, |s| s.start)),
                unreleased: unreleased(p),
            })
        })
        .collect();
    if candidates.len() <= 1 {
        return candidates.pop().map(Ok);
    }
    // The lock writes `"k8s-openapi 0.29.0"` in a package's dependencies
    // when several releases are present.
    let dependency_of = |name: &str| -> Option<String> {
        packages
            .iter()
            .filter(|p| name_of(p) == name)
            .filter_map(|p| p.get("dependencies").and_then(Item::as_array))
            .flat_map(|a| a.iter().filter_map(|d| d.as_str()))
            .find_map(|d| d.strip_prefix("k8s-openapi ")?.split_whitespace().next())
            .map(str::to_string)
    };
    let chosen = package
        .and_then(dependency_of)
        .or_else(|| dependency_of("kube-core"));
    if let Some(i) = chosen.and_then(|v| candidates.iter().position(|c| c.version == v)) {
        return Some(Ok(candidates.swap_remove(i)));
    }
    Some(Err(Unsupported {
        reason: Reason::SeveralVersions {
            versions: candidates.iter().map(|c| c.version.clone()).collect(),
        },
        location: candidates.swap_remove(0).location,
    }))
}

/// A lock entry's source when it is a git checkout, not a registry's
/// release: `git+https://..?rev=..#<commit>`. (A path dependency has no
/// source; it is taken at its version.)
fn unreleased(p: &toml_edit::Table) -> Option<String> {
    p.get("source")
        .and_then(Item::as_str)
        .filter(|source| source.starts_with("git+"))
        .map(str::to_string)
}

/// `git (https://github.com/a/b.git, e9a9eaf)` for a lock's git source.
fn describe_source(source: &str) -> String {
    match source.strip_prefix("git+") {
        Some(git) => {
            let (url, commit) = git.split_once('#').unwrap_or((git, ""));
            let url = url.split('?').next().unwrap_or(url);
            let commit: String = commit.chars().take(7).collect();
            if commit.is_empty() {
                format!("git ({url})")
            } else {
                format!("git ({url}, {commit})")
            }
        }
        None => source.to_string(),
    }
}

fn name_of(p: &toml_edit::Table) -> &str {
    p.get("name").and_then(Item::as_str).unwrap_or_default()
}

/// A feature set on k8s-openapi somewhere in the workspace.
#[derive(Debug, Clone)]
struct Feature {
    name: String,
    location: Location,
    /// Set on a dev-dependency.
    dev: bool,
}

/// The manifests whose dependencies decide k8s-openapi's features.
#[derive(Debug)]
struct Workspace {
    /// Where Cargo.lock is: the nearest ancestor with `[workspace]`, else
    /// the package's directory.
    root: PathBuf,
    package: PathBuf,
}

impl Workspace {
    fn find(package: &Path) -> Result<Workspace> {
        for dir in package.ancestors() {
            let manifest = dir.join("Cargo.toml");
            let Ok(text) = std::fs::read_to_string(&manifest) else {
                continue;
            };
            if parse(&text, &manifest)?.contains_key("workspace") {
                return Ok(Workspace {
                    root: dir.to_path_buf(),
                    package: package.to_path_buf(),
                });
            }
        }
        Ok(Workspace {
            root: package.to_path_buf(),
            package: package.to_path_buf(),
        })
    }

    fn package_name(&self) -> Result<Option<String>> {
        let path = self.package.join("Cargo.toml");
        let text = read(&path)?;
        Ok(parse(&text, &path)?
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(Item::as_str)
            .map(str::to_string))
    }

    /// The package's, the workspace root's and every member's Cargo.toml.
    fn manifests(&self, root_doc: &Document<String>) -> Vec<PathBuf> {
        let mut dirs = vec![self.package.clone(), self.root.clone()];
        let list = |key: &str| -> Vec<String> {
            root_doc
                .get("workspace")
                .and_then(|w| w.get(key))
                .and_then(Item::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let excluded: Vec<PathBuf> = list("exclude").iter().map(|e| self.root.join(e)).collect();
        for pattern in list("members") {
            for dir in glob_dirs(&self.root, &pattern) {
                if !excluded.contains(&dir) {
                    dirs.push(dir);
                }
            }
        }
        let mut manifests: Vec<PathBuf> = Vec::new();
        for dir in dirs {
            let manifest = dir.join("Cargo.toml");
            let key = std::fs::canonicalize(&manifest).unwrap_or_else(|_| manifest.clone());
            if manifest.is_file()
                && !manifests
                    .iter()
                    .any(|m| std::fs::canonicalize(m).unwrap_or_else(|_| m.clone()) == key)
            {
                manifests.push(manifest);
            }
        }
        manifests
    }

    /// The root manifest's path, text and document (empty when the
    /// workspace root has no Cargo.toml).
    fn root_manifest(&self) -> Result<(PathBuf, String, Document<String>)> {
        let root_path = self.root.join("Cargo.toml");
        let root_text = if root_path.is_file() {
            read(&root_path)?
        } else {
            String::new()
        };
        let root_doc = parse(&root_text, &root_path)?;
        Ok((root_path, root_text, root_doc))
    }

    /// The version requirements the workspace's manifests (the package's,
    /// the root's and the members') put on any of `crates`, workspace
    /// inheritance followed.
    fn requirements(&self, crates: &[&str]) -> Result<Vec<String>> {
        let (_, _, root_doc) = self.root_manifest()?;
        let mut out = Vec::new();
        for path in self.manifests(&root_doc) {
            let text = read(&path)?;
            let doc = parse(&text, &path)?;
            for (table, _) in dependency_tables(&doc) {
                let Some(deps) = table.as_table_like() else {
                    continue;
                };
                for (key, dep) in deps.iter() {
                    let name = dep.get("package").and_then(Item::as_str).unwrap_or(key);
                    if !crates.contains(&name) {
                        continue;
                    }
                    let inherited = (dep.get("workspace").and_then(Item::as_bool) == Some(true))
                        .then(|| {
                            root_doc
                                .get("workspace")
                                .and_then(|w| w.get("dependencies"))
                                .and_then(|d| d.get(key))
                        })
                        .flatten();
                    let requirement = [Some(dep), inherited].into_iter().flatten().find_map(|d| {
                        d.as_str()
                            .or_else(|| d.get("version").and_then(Item::as_str))
                    });
                    if let Some(r) = requirement
                        && !out.iter().any(|o| o == r)
                    {
                        out.push(r.to_string());
                    }
                }
            }
        }
        Ok(out)
    }

    /// Every feature the workspace's manifests set on a k8s-openapi
    /// dependency that `version` satisfies.
    fn features(&self, version: &str) -> Result<Vec<Feature>> {
        let (root_path, root_text, root_doc) = self.root_manifest()?;
        let version = semver::Version::parse(version).ok();
        let mut found = Vec::new();
        for path in self.manifests(&root_doc) {
            let text = read(&path)?;
            let doc = parse(&text, &path)?;
            let file = File {
                text: &text,
                path: &path,
            };
            let root_file = File {
                text: &root_text,
                path: &root_path,
            };
            for (table, dev) in dependency_tables(&doc) {
                let Some(deps) = table.as_table_like() else {
                    continue;
                };
                for (key, dep) in deps.iter() {
                    if !is_k8s_openapi(key, dep) {
                        continue;
                    }
                    let mut sources = vec![(dep, file)];
                    if dep.get("workspace").and_then(Item::as_bool) == Some(true)
                        && let Some(inherited) = root_doc
                            .get("workspace")
                            .and_then(|w| w.get("dependencies"))
                            .and_then(|d| d.get(key))
                    {
                        sources.push((inherited, root_file));
                    }
                    // A dependency on another k8s-openapi line does not
                    // set features on this one.
                    let requirement = sources
                        .iter()
                        .find_map(|(d, _)| d.get("version").and_then(Item::as_str))
                        .or_else(|| sources.iter().find_map(|(d, _)| d.as_str()));
                    if let (Some(req), Some(v)) = (requirement, &version)
                        && let Ok(req) = semver::VersionReq::parse(req)
                        && !req.matches(v)
                    {
                        continue;
                    }
                    for (d, f) in sources {
                        found.extend(feature_list(d.get("features"), f, dev));
                    }
                    found.extend(default_features(&doc, key, file, dev));
                }
            }
        }
        Ok(found)
    }
}

/// A manifest's text and path, for locations.
#[derive(Debug, Clone, Copy)]
struct File<'a> {
    text: &'a str,
    path: &'a Path,
}

/// `[dependencies]`, `[build-dependencies]`, `[dev-dependencies]` and their
/// `[target.'cfg(..)'.*]` forms, each with whether it is for dev builds.
fn dependency_tables(doc: &Document<String>) -> Vec<(&Item, bool)> {
    fn push<'a>(t: &'a toml_edit::Table, tables: &mut Vec<(&'a Item, bool)>) {
        for (key, dev) in [
            ("dependencies", false),
            ("build-dependencies", false),
            ("dev-dependencies", true),
        ] {
            if let Some(item) = t.get(key) {
                tables.push((item, dev));
            }
        }
    }
    let mut tables = Vec::new();
    let doc = doc.as_table();
    push(doc, &mut tables);
    if let Some(targets) = doc.get("target").and_then(Item::as_table) {
        for (_, target) in targets {
            if let Some(t) = target.as_table() {
                push(t, &mut tables);
            }
        }
    }
    tables
}

fn is_k8s_openapi(key: &str, dep: &Item) -> bool {
    match dep.get("package").and_then(Item::as_str) {
        Some(package) => package == CRATE,
        None => key == CRATE,
    }
}

fn feature_list(item: Option<&Item>, file: File<'_>, dev: bool) -> Vec<Feature> {
    item.and_then(Item::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| {
                    let name = v.as_str()?;
                    is_version_feature(name).then(|| Feature {
                        name: name.to_string(),
                        location: Location::at_offset(
                            file.path,
                            file.text,
                            v.span().map_or(0, |s| s.start),
                        ),
                        dev,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Features the package's own default features turn on in the dependency
/// (`default = ["k8s"]`, `k8s = ["k8s-openapi/latest"]`).
fn default_features(
    doc: &Document<String>,
    dep_key: &str,
    file: File<'_>,
    dev: bool,
) -> Vec<Feature> {
    let Some(features) = doc.get("features").and_then(Item::as_table_like) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut queue = vec!["default".to_string()];
    while let Some(name) = queue.pop() {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        let Some(list) = features.get(&name).and_then(Item::as_array) else {
            continue;
        };
        for v in list {
            let Some(entry) = v.as_str() else { continue };
            match entry.split_once('/') {
                Some((dep, feature))
                    if dep.trim_end_matches('?') == dep_key && is_version_feature(feature) =>
                {
                    found.push(Feature {
                        name: feature.to_string(),
                        location: Location::at_offset(
                            file.path,
                            file.text,
                            v.span().map_or(0, |s| s.start),
                        ),
                        dev,
                    });
                }
                Some(_) => {}
                None => queue.push(entry.to_string()),
            }
        }
    }
    found
}

fn is_version_feature(name: &str) -> bool {
    matches!(name, "earliest" | "latest")
        || name
            .strip_prefix("v1_")
            .is_some_and(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
}

/// The directories a `members` pattern names (`*` and `?` in any segment).
fn glob_dirs(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut dirs = vec![root.to_path_buf()];
    for segment in pattern.split('/').filter(|s| !s.is_empty() && *s != ".") {
        if segment.contains(['*', '?']) {
            let mut next = Vec::new();
            for dir in &dirs {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                let mut children: Vec<PathBuf> = entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| {
                        p.is_dir()
                            && p.file_name()
                                .and_then(|n| n.to_str())
                                .is_some_and(|n| wildcard(segment, n))
                    })
                    .collect();
                children.sort();
                next.extend(children);
            }
            dirs = next;
        } else {
            for dir in &mut dirs {
                dir.push(segment);
            }
        }
    }
    dirs
}

fn wildcard(pattern: &str, name: &str) -> bool {
    match (pattern.chars().next(), name.chars().next()) {
        (None, None) => true,
        (Some('*'), _) => {
            wildcard(&pattern[1..], name)
                || name
                    .chars()
                    .next()
                    .is_some_and(|c| wildcard(pattern, &name[c.len_utf8()..]))
        }
        (Some('?'), Some(c)) => wildcard(&pattern[1..], &name[c.len_utf8()..]),
        (Some(p), Some(c)) if p == c => wildcard(&pattern[p.len_utf8()..], &name[c.len_utf8()..]),
        _ => false,
    }
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))
}

fn parse(text: &str, path: &Path) -> Result<Document<String>> {
    Document::parse(text.to_string()).map_err(|e| Error::Parse {
        path: path.to_path_buf(),
        help: Some("fix the TOML syntax error".into()),
        source: Box::new(e),
    })
}

/// The 1-based line and column of byte `offset` in `text`.
#[cfg(test)]
mod tests {
    use super::*;

    /// A project tree from (relative path, text) pairs.
    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    /// A Cargo.lock with the operator package and the given k8s-openapi
    /// releases; `direct` is the one the operator depends on.
    fn lock(releases: &[&str], direct: Option<&str>) -> String {
        let dependency = match (releases, direct) {
            (_, Some(v)) => format!("\"k8s-openapi {v}\", "),
            ([_], None) => "\"k8s-openapi\", ".into(),
            _ => String::new(),
        };
        let releases = releases
            .iter()
            .map(|r| format!("[[package]]\nname = \"k8s-openapi\"\nversion = \"{r}\"\n"))
            .collect::<Vec<_>>()
            .join("\n");
        format!(
            "version = 4\n\n[[package]]\nname = \"op\"\nversion = \"0.1.0\"\ndependencies = [{dependency}\"kube\"]\n\n{releases}"
        )
    }

    fn manifest(dependencies: &str) -> String {
        format!(
            "[package]\nname = \"op\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\nkube = \"5\"\n{dependencies}\n"
        )
    }

    fn selected(dir: &tempfile::TempDir) -> (&'static str, &'static str) {
        selected_at(dir.path())
    }

    fn selected_at(root: &Path) -> (&'static str, &'static str) {
        let table = select(root).unwrap().table.unwrap();
        (table.k8s_openapi(), table.feature())
    }

    fn unsupported(root: &Path) -> Unsupported {
        select(root).unwrap().table.unwrap_err()
    }

    const V1_34: &str = r#"k8s-openapi = { version = "0.29", features = ["v1_34"] }"#;

    /// Before the first build, the releases are what cargo would lock:
    /// the newest rsop knows that Cargo.toml allows, features included
    /// (`latest` is not the pinned Kubernetes version), and a note says so.
    #[test]
    fn without_a_lock_the_newest_allowed_releases_are_assumed() {
        let dir = tree(&[(
            "Cargo.toml",
            &manifest(r#"k8s-openapi = { version = "0.29", features = ["latest"] }"#),
        )]);
        assert_eq!(selected(&dir), ("0.29.0", "v1_37"));
        let selection = select(dir.path()).unwrap();
        assert_eq!(
            selection.assumed.as_deref(),
            Some(
                "note: no Cargo.lock yet: rsop assumed k8s-openapi 0.29.0, kube 5.0.0, the newest releases it knows that Cargo.toml allows; `cargo generate-lockfile` pins them"
            )
        );
        assert_eq!(selection.kube_derive, Some((5, 0, 0)));

        let dir = tree(&[(
            "Cargo.toml",
            &manifest(
                r#"k8s-openapi = { version = "0.26", features = ["earliest"] }
schemars = "1.0"
"#,
            )
            .replace(
                "kube = \"5\"",
                "kube = { version = \"2.0\", features = [\"derive\"] }",
            ),
        )]);
        let selection = select(dir.path()).unwrap();
        let table = selection.table.unwrap();
        assert_eq!(table.k8s_openapi(), "0.26.1");
        assert_eq!(selection.kube_derive, Some((2, 0, 1)));
        assert_eq!(
            selection.model.unwrap(),
            Model {
                kube_core: KubeCore::V2_0,
                schemars: Schemars::V1_2,
                empty_lists: true,
            }
        );

        let dir = tree(&[(
            "Cargo.toml",
            &manifest(r#"k8s-openapi = { version = "0.30", features = ["latest"] }"#),
        )]);
        assert!(matches!(
            unsupported(dir.path()).reason,
            Reason::Version { .. }
        ));
    }

    /// Whether the CRD carries its empty lists follows kube-derive's
    /// release, also one rsop has no model of (its schemas are built, its
    /// names are still read).
    #[test]
    fn empty_lists_follow_kube_derive_even_unmodelled() {
        for (version, expected) in [("0.69.1", true), ("3.1.0", true), ("4.2.0", false)] {
            let lock = format!(
                "version = 4\n\n[[package]]\nname = \"kube-core\"\nversion = \"{version}\"\n\n\
                 [[package]]\nname = \"kube-derive\"\nversion = \"{version}\"\n"
            );
            let dir = tree(&[("Cargo.toml", &manifest("")), ("Cargo.lock", &lock)]);
            let selection = select(dir.path()).unwrap();
            assert_eq!(selection.empty_lists, expected, "{version}");
            assert_eq!(selection.model.is_ok(), version != "0.69.1", "{version}");
        }
    }

    #[test]
    fn without_k8s_openapi_the_pinned_release_is_used() {
        let dir = tree(&[
            ("Cargo.toml", &manifest("")),
            ("Cargo.lock", &lock(&[], None)),
        ]);
        assert_eq!(selected(&dir), ("0.29.0", "v1_34"));
    }

    #[test]
    fn the_locked_release_and_the_feature_are_used() {
        for (release, feature, expected) in [
            ("0.29.0", "v1_36", "v1_36"),
            ("0.29.0", "latest", "v1_37"),
            ("0.29.0", "earliest", "v1_33"),
            ("0.28.0", "latest", "v1_36"),
            ("0.28.0", "earliest", "v1_32"),
            ("0.26.0", "latest", "v1_34"),
            ("0.26.1", "v1_31", "v1_31"),
            ("0.18.0", "v1_26", "v1_26"),
            ("0.14.0", "v1_16", "v1_16"),
        ] {
            let dependency =
                format!(r#"k8s-openapi = {{ version = "{release}", features = ["{feature}"] }}"#);
            let dir = tree(&[
                ("Cargo.toml", &manifest(&dependency)),
                ("Cargo.lock", &lock(&[release], None)),
            ]);
            assert_eq!(selected(&dir), (release, expected), "{release} {feature}");
        }
    }

    #[test]
    fn a_renamed_dependency_and_a_table_dependency_count() {
        let dir = tree(&[
            (
                "Cargo.toml",
                &manifest(
                    "\n[target.'cfg(unix)'.dependencies.k8s]\npackage = \"k8s-openapi\"\nversion = \"0.29\"\nfeatures = [\"v1_35\"]\n",
                ),
            ),
            ("Cargo.lock", &lock(&["0.29.0"], None)),
        ]);
        assert_eq!(selected(&dir), ("0.29.0", "v1_35"));
    }

    #[test]
    fn a_default_package_feature_counts() {
        let dir = tree(&[
            (
                "Cargo.toml",
                &format!(
                    "{}\n[features]\ndefault = [\"k8s\"]\nk8s = [\"k8s-openapi/latest\"]\nother = [\"k8s-openapi/v1_33\"]\n",
                    manifest(r#"k8s-openapi = "0.29""#)
                ),
            ),
            ("Cargo.lock", &lock(&["0.29.0"], None)),
        ]);
        assert_eq!(selected(&dir), ("0.29.0", "v1_37"));
    }

    #[test]
    fn workspace_dependencies_are_inherited() {
        let root = "[workspace]\nmembers = [\"crates/*\"]\n\n[workspace.dependencies]\nk8s-openapi = { version = \"0.29\", features = [\"v1_35\"] }\n";
        let dir = tree(&[
            ("Cargo.toml", root),
            ("Cargo.lock", &lock(&["0.29.0"], None)),
            (
                "crates/op/Cargo.toml",
                &manifest("k8s-openapi = { workspace = true }"),
            ),
            ("crates/op/src/lib.rs", ""),
        ]);
        assert_eq!(
            selected_at(&dir.path().join("crates/op")),
            ("0.29.0", "v1_35")
        );

        // Features added on the member's side join the inherited ones.
        let root = "[workspace]\nmembers = [\"crates/op\"]\n\n[workspace.dependencies]\nk8s-openapi = \"0.29\"\n";
        let dir = tree(&[
            ("Cargo.toml", root),
            ("Cargo.lock", &lock(&["0.29.0"], None)),
            (
                "crates/op/Cargo.toml",
                &manifest(r#"k8s-openapi = { workspace = true, features = ["latest"] }"#),
            ),
        ]);
        assert_eq!(
            selected_at(&dir.path().join("crates/op")),
            ("0.29.0", "v1_37")
        );
    }

    /// The operator crate depends on k8s-openapi only through kube; the
    /// binary next to it sets the feature, as k8s-openapi asks.
    #[test]
    fn the_feature_is_found_in_another_member() {
        let bin = "[package]\nname = \"bin\"\nversion = \"0.1.0\"\n\n[dependencies]\nk8s-openapi = { version = \"0.28.0\", features = [\"v1_33\"] }\n";
        let dir = tree(&[
            ("Cargo.toml", "[workspace]\nmembers = [\"op\", \"bin\"]\n"),
            ("Cargo.lock", &lock(&["0.28.0"], None)),
            ("op/Cargo.toml", &manifest("")),
            ("bin/Cargo.toml", bin),
        ]);
        assert_eq!(selected_at(&dir.path().join("op")), ("0.28.0", "v1_33"));
    }

    #[test]
    fn a_dev_dependency_counts_only_alone() {
        let dev = |normal: &str| {
            format!(
                "{}\n[dev-dependencies]\nk8s-openapi = {{ version = \"0.29\", features = [\"v1_33\"] }}\n",
                manifest(normal)
            )
        };
        let dir = tree(&[
            ("Cargo.toml", &dev(V1_34)),
            ("Cargo.lock", &lock(&["0.29.0"], None)),
        ]);
        assert_eq!(selected(&dir), ("0.29.0", "v1_34"));
        let dir = tree(&[
            ("Cargo.toml", &dev("")),
            ("Cargo.lock", &lock(&["0.29.0"], None)),
        ]);
        assert_eq!(selected(&dir), ("0.29.0", "v1_33"));
    }

    #[test]
    fn with_several_releases_the_package_dependency_decides() {
        let dependencies = r#"k8s-openapi = { version = "0.28", features = ["v1_36"] }
old = { package = "k8s-openapi", version = "0.26", features = ["v1_30"] }"#;
        let dir = tree(&[
            ("Cargo.toml", &manifest(dependencies)),
            ("Cargo.lock", &lock(&["0.26.1", "0.28.0"], Some("0.28.0"))),
        ]);
        assert_eq!(selected(&dir), ("0.28.0", "v1_36"));

        let dir = tree(&[
            ("Cargo.toml", &manifest(V1_34)),
            ("Cargo.lock", &lock(&["0.26.1", "0.29.0"], None)),
        ]);
        let u = unsupported(dir.path());
        assert_eq!(
            u.reason,
            Reason::SeveralVersions {
                versions: vec!["0.26.1".into(), "0.29.0".into()]
            }
        );
    }

    #[test]
    fn an_unknown_release_names_itself_and_the_fallback() {
        let dir = tree(&[
            (
                "Cargo.toml",
                &manifest(r#"k8s-openapi = { version = "0.13", features = ["v1_22"] }"#),
            ),
            ("Cargo.lock", &lock(&["0.13.1"], None)),
        ]);
        let u = unsupported(dir.path());
        assert_eq!(
            u.reason,
            Reason::Version {
                version: "0.13.1".into()
            }
        );
        let d = u.diagnostic();
        assert_eq!(
            d.message,
            "k8s-openapi 0.13.1 is not supported statically; rsop has 0.14.0, 0.15.0, 0.16.0, 0.17.0, 0.18.0, 0.19.0, 0.20.0, 0.21.0, 0.21.1, 0.22.0, 0.23.0, 0.24.0, 0.25.0, 0.26.0, 0.26.1, 0.27.0, 0.27.1, 0.28.0 and 0.29.0"
        );
        assert!(
            d.help
                .unwrap()
                .contains("move to a k8s-openapi release rsop has")
        );
        // At the version line of the k8s-openapi package in Cargo.lock.
        assert_eq!(d.location.file, Path::new("Cargo.lock"));
        assert_eq!((d.location.line, d.location.column), (10, 11));

        // A member's lock is the workspace's, shown from the member.
        let dir = tree(&[
            ("Cargo.toml", "[workspace]\nmembers = [\"crates/op\"]\n"),
            ("Cargo.lock", &lock(&["0.13.1"], None)),
            ("crates/op/Cargo.toml", &manifest(V1_34)),
        ]);
        let u = unsupported(&dir.path().join("crates/op"));
        assert_eq!(u.location.file, Path::new("../../Cargo.lock"));
    }

    #[test]
    fn no_feature_or_two_features_are_refused() {
        let dir = tree(&[
            ("Cargo.toml", &manifest(r#"k8s-openapi = "0.29""#)),
            ("Cargo.lock", &lock(&["0.29.0"], None)),
        ]);
        let u = unsupported(dir.path());
        assert_eq!(
            u.reason,
            Reason::NoFeature {
                version: "0.29.0".into()
            }
        );

        let two = r#"k8s-openapi = { version = "0.29", features = ["v1_34", "latest"] }"#;
        let dir = tree(&[
            ("Cargo.toml", &manifest(two)),
            ("Cargo.lock", &lock(&["0.29.0"], None)),
        ]);
        let u = unsupported(dir.path());
        assert_eq!(
            u.reason,
            Reason::SeveralFeatures {
                version: "0.29.0".into(),
                features: vec!["v1_34".into(), "latest".into()]
            }
        );
        assert_eq!(u.location.file, Path::new("Cargo.toml"));
        assert_eq!(u.location.line, 8);

        // `latest` and the version it stands for are one feature.
        let same = r#"k8s-openapi = { version = "0.29", features = ["v1_37", "latest"] }"#;
        let dir = tree(&[
            ("Cargo.toml", &manifest(same)),
            ("Cargo.lock", &lock(&["0.29.0"], None)),
        ]);
        assert_eq!(selected(&dir), ("0.29.0", "v1_37"));

        let missing = r#"k8s-openapi = { version = "0.29", features = ["v1_30"] }"#;
        let dir = tree(&[
            ("Cargo.toml", &manifest(missing)),
            ("Cargo.lock", &lock(&["0.29.0"], None)),
        ]);
        assert!(unsupported(dir.path()).message().starts_with(
            "k8s-openapi 0.29.0 has no Kubernetes version feature `v1_30`; it has `v1_33`"
        ));

        // Releases before 0.19 have no `latest`; the help names their
        // newest feature.
        let old = r#"k8s-openapi = { version = "0.18", features = ["latest"] }"#;
        let dir = tree(&[
            ("Cargo.toml", &manifest(old)),
            ("Cargo.lock", &lock(&["0.18.0"], None)),
        ]);
        assert_eq!(
            unsupported(dir.path()).message(),
            "k8s-openapi 0.18.0 has no Kubernetes version feature `latest`; it has `v1_20`, `v1_21`, `v1_22`, `v1_23`, `v1_24`, `v1_25`, `v1_26`"
        );
        let none = r#"k8s-openapi = "0.18""#;
        let dir = tree(&[
            ("Cargo.toml", &manifest(none)),
            ("Cargo.lock", &lock(&["0.18.0"], None)),
        ]);
        assert!(
            unsupported(dir.path())
                .help()
                .contains(r#"`k8s-openapi = { version = "0.18.0", features = ["v1_26"] }`"#)
        );
    }

    /// A git checkout of k8s-openapi, kube-core or schemars is no release,
    /// whatever version its manifest says: never modelled by its number.
    #[test]
    fn git_checkouts_are_not_taken_for_releases() {
        let git = "source = \"git+https://github.com/kube-rs/kube.git?rev=06e843b#06e843bf026d0838dca159433e8af8268b6cc0bf\"\n";
        let text = format!(
            "version = 4\n\n[[package]]\nname = \"kube-core\"\nversion = \"1.1.0\"\n{git}\n\
             [[package]]\nname = \"op\"\nversion = \"0.1.0\"\n"
        );
        let dir = tree(&[("Cargo.toml", &manifest("")), ("Cargo.lock", &text)]);
        let model = select(dir.path()).unwrap().model.unwrap_err();
        assert_eq!(
            model.message,
            "rsop has no model of kube-core 1.1.0 from git (https://github.com/kube-rs/kube.git, 06e843b): it derives CRDs statically for releases of kube 0.70 to 5.0 and schemars 0.8 and 1.0 to 1.2"
        );
        assert!(model.needs_code);

        let lock = lock(&["0.25.0"], None).replace(
            "name = \"k8s-openapi\"\nversion = \"0.25.0\"\n",
            "name = \"k8s-openapi\"\nversion = \"0.25.0\"\nsource = \"git+https://github.com/Arnavion/k8s-openapi.git?rev=e9a9eaf#e9a9eaf672cf700ee78bd6f267fefc5efa571c7a\"\n",
        );
        let dir = tree(&[
            (
                "Cargo.toml",
                &manifest(
                    r#"k8s-openapi = { git = "https://github.com/Arnavion/k8s-openapi.git", rev = "e9a9eaf", features = ["latest"] }"#,
                ),
            ),
            ("Cargo.lock", &lock),
        ]);
        let u = unsupported(dir.path());
        assert_eq!(
            u.message(),
            "k8s-openapi 0.25.0 comes from git (https://github.com/Arnavion/k8s-openapi.git, e9a9eaf), not from a release: rsop has the schemas of releases only"
        );
        assert!(u.build_can_decide());
    }

    #[test]
    fn wildcards_match_like_cargo() {
        assert!(wildcard("*", "op"));
        assert!(wildcard("op-*", "op-bin"));
        assert!(!wildcard("op-*", "bin"));
        assert!(wildcard("o?", "op"));
    }
}
