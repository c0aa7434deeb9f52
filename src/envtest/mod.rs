//! `rsop envtest`: the kube-apiserver, etcd and kubectl binaries a
//! generated project's API server tests run, got from the release index
//! kubebuilder's `setup-envtest` reads and cached where it caches them, so
//! that the two tools share one store.
//!
//! The index is a YAML map of Kubernetes releases to archives
//! (`envtest-v1.34.1-linux-amd64.tar.gz`), each with its SHA-512 digest and
//! the URL it is served from. The store holds one folder per release and
//! platform, `<store>/k8s/1.34.1-linux-amd64/`, with the three binaries.
//!
//! An archive is written to a temporary file in the store, checked against
//! its digest, unpacked into a temporary folder beside its final place and
//! renamed into it only when whole: an interrupted or corrupt download
//! leaves nothing a later run could take for a cached release.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha512};

use crate::{Error, Result};

/// The index setup-envtest reads by default.
pub const DEFAULT_INDEX: &str =
    "https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml";

/// The binaries a release folder holds; a folder without the first two is
/// not a usable release.
const BINARIES: [&str; 3] = ["kube-apiserver", "etcd", "kubectl"];

/// Whether `folder` holds a usable release: kube-apiserver and etcd (with
/// `.exe` on Windows).
fn complete(folder: &Path) -> bool {
    BINARIES[..2].iter().all(|b| {
        folder
            .join(format!("{b}{}", std::env::consts::EXE_SUFFIX))
            .is_file()
    })
}

/// An operating system and architecture, as Go names them (`linux`,
/// `amd64`), which is how the index and the store name them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Platform {
    pub os: String,
    pub arch: String,
}

impl Platform {
    /// The platform rsop runs on.
    pub fn current() -> Self {
        let os = match std::env::consts::OS {
            "macos" => "darwin",
            other => other,
        };
        let arch = match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            "powerpc64" => "ppc64le",
            other => other,
        };
        Platform {
            os: os.to_string(),
            arch: arch.to_string(),
        }
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.os, self.arch)
    }
}

/// Which releases a command asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// The newest release.
    Latest,
    /// The newest release of a minor version (`1.34`, `1.34.x`).
    Minor(u64, u64),
    /// One release (`1.34.1`).
    Exact(semver::Version),
}

impl Selector {
    /// Reads a version as setup-envtest's users write it: `latest`,
    /// `1.34`, `1.34.x`, `1.34.*`, `1.34.1`, each with or without a
    /// leading `v`.
    pub fn parse(text: Option<&str>) -> Result<Self> {
        let Some(text) = text
            .map(str::trim)
            .filter(|t| !t.is_empty() && *t != "latest")
        else {
            return Ok(Selector::Latest);
        };
        let bare = text.strip_prefix('v').unwrap_or(text);
        let parts: Vec<&str> = bare.split('.').collect();
        let number = |s: &str| s.parse::<u64>().ok();
        let refused = || {
            Error::user_with_help(
                format!("`{text}` is not a Kubernetes version"),
                "write `latest`, a minor release (`1.34` or `1.34.x`) or a release (`1.34.1`)",
            )
        };
        match parts.as_slice() {
            [major, minor] => Ok(Selector::Minor(
                number(major).ok_or_else(refused)?,
                number(minor).ok_or_else(refused)?,
            )),
            [major, minor, "x" | "*"] => Ok(Selector::Minor(
                number(major).ok_or_else(refused)?,
                number(minor).ok_or_else(refused)?,
            )),
            [_, _, _] => semver::Version::parse(bare)
                .map(Selector::Exact)
                .map_err(|_| refused()),
            _ => Err(refused()),
        }
    }

    pub fn matches(&self, version: &semver::Version) -> bool {
        match self {
            Selector::Latest => version.pre.is_empty(),
            Selector::Minor(major, minor) => {
                version.major == *major && version.minor == *minor && version.pre.is_empty()
            }
            Selector::Exact(exact) => version == exact,
        }
    }
}

/// One archive of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archive {
    pub version: semver::Version,
    pub platform: Platform,
    pub name: String,
    /// Hex SHA-512 of the archive.
    pub sha512: String,
    pub url: String,
}

/// The index as it is written.
#[derive(Debug, Deserialize)]
struct IndexFile {
    releases: BTreeMap<String, BTreeMap<String, IndexEntry>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct IndexEntry {
    hash: String,
    self_link: String,
}

/// Reads the archives of an index's text, newest release first. Archives
/// whose names do not follow `envtest-v<version>-<os>-<arch>.tar.gz` are
/// passed over.
pub fn parse_index(text: &str, url: &str) -> Result<Vec<Archive>> {
    let index: IndexFile = serde_yaml_ng::from_str(text).map_err(|e| {
        Error::user_with_help(
            format!("the envtest index at {url} is not an index of envtest releases: {e}"),
            "pass the URL of an index in setup-envtest's format with --index",
        )
    })?;
    let mut archives: Vec<Archive> = index
        .releases
        .into_values()
        .flatten()
        // A digest that is not 128 hex digits can match no download.
        .filter(|(_, entry)| {
            entry.hash.len() == 128 && entry.hash.bytes().all(|b| b.is_ascii_hexdigit())
        })
        .filter_map(|(name, entry)| {
            let (version, platform) = archive_name(&name)?;
            Some(Archive {
                version,
                platform,
                sha512: entry.hash.to_ascii_lowercase(),
                url: entry.self_link,
                name,
            })
        })
        .collect();
    archives.sort_by(|a, b| b.version.cmp(&a.version).then(a.platform.cmp(&b.platform)));
    Ok(archives)
}

/// `envtest-v1.34.1-linux-amd64.tar.gz`: its release and platform.
fn archive_name(name: &str) -> Option<(semver::Version, Platform)> {
    let rest = name.strip_prefix("envtest-v")?.strip_suffix(".tar.gz")?;
    folder_name(rest)
}

/// `1.34.1-linux-amd64`: its release and platform.
fn folder_name(name: &str) -> Option<(semver::Version, Platform)> {
    let mut parts = name.rsplitn(3, '-');
    let arch = parts.next()?;
    let os = parts.next()?;
    let version = semver::Version::parse(parts.next()?).ok()?;
    Some((
        version,
        Platform {
            os: os.to_string(),
            arch: arch.to_string(),
        },
    ))
}

/// Where setup-envtest keeps its binaries: `$XDG_DATA_HOME` (or
/// `~/.local/share`) `/kubebuilder-envtest` on Linux,
/// `~/Library/Application Support/io.kubebuilder.envtest` on macOS.
pub fn default_store() -> Result<PathBuf> {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    let missing = || {
        Error::user_with_help(
            "cannot tell where to cache the envtest binaries: `HOME` is not set",
            "pass a folder with --bin-dir",
        )
    };
    if cfg!(target_os = "macos") {
        return Ok(home()
            .ok_or_else(missing)?
            .join("Library/Application Support/io.kubebuilder.envtest"));
    }
    if cfg!(windows) {
        return std::env::var_os("LocalAppData")
            .map(|d| PathBuf::from(d).join("kubebuilder-envtest"))
            .ok_or_else(|| {
                Error::user_with_help(
                    "cannot tell where to cache the envtest binaries: `LocalAppData` is not set",
                    "pass a folder with --bin-dir",
                )
            });
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".local/share")))
        .ok_or_else(missing)?;
    Ok(data.join("kubebuilder-envtest"))
}

/// A release in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub version: semver::Version,
    pub platform: Platform,
    pub path: PathBuf,
}

/// The releases the store at `store` holds, newest first.
pub fn installed(store: &Path) -> Vec<Installed> {
    let Ok(entries) = std::fs::read_dir(store.join("k8s")) else {
        return Vec::new();
    };
    let mut found: Vec<Installed> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name();
            let (version, platform) = folder_name(name.to_str()?)?;
            let path = entry.path();
            complete(&path).then_some(Installed {
                version,
                platform,
                path,
            })
        })
        .collect();
    found.sort_by(|a, b| b.version.cmp(&a.version).then(a.platform.cmp(&b.platform)));
    found
}

/// Fetches the index at `url`.
pub fn fetch_index(url: &str) -> Result<Vec<Archive>> {
    let mut body = String::new();
    get(url)?
        .into_body()
        .into_reader()
        .read_to_string(&mut body)
        .map_err(|e| network(url, &e.to_string()))?;
    parse_index(&body, url)
}

fn get(url: &str) -> Result<ureq::http::Response<ureq::Body>> {
    ureq::get(url)
        .call()
        .map_err(|e| network(url, &e.to_string()))
}

fn network(url: &str, why: &str) -> Error {
    Error::user_with_help(
        format!("cannot download {url}: {why}"),
        "check the network (and any proxy), or pass -i to use only the binaries already cached",
    )
}

/// Downloads `archive` into the store at `store`, checking its digest, and
/// returns the folder of its binaries. Nothing is left in the store unless
/// the whole archive arrived, matched its digest and unpacked.
pub fn download(archive: &Archive, store: &Path) -> Result<PathBuf> {
    let base = store.join("k8s");
    std::fs::create_dir_all(&base).map_err(|e| Error::io("create", &base, e))?;
    let mut file = tempfile::Builder::new()
        .prefix(".download-")
        .tempfile_in(&base)
        .map_err(|e| Error::io("create a temporary file in", &base, e))?;
    let response = get(&archive.url)?;
    let mut reader = response.into_body().into_reader();
    let mut hasher = Sha512::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = reader.read(&mut buffer).map_err(|e| {
            Error::user_with_help(
                format!(
                    "the download of {} from {} was cut off: {e}; nothing was cached",
                    archive.name, archive.url
                ),
                "run the command again",
            )
        })?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        file.write_all(&buffer[..read])
            .map_err(|e| Error::io("write", file.path(), e))?;
    }
    let digest = hasher
        .finalize()
        .iter()
        .fold(String::with_capacity(128), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        });
    if digest != archive.sha512 {
        return Err(Error::user_with_help(
            format!(
                "{} from {} does not match the SHA-512 digest the index gives it; nothing was cached",
                archive.name, archive.url
            ),
            format!(
                "the index says {}…, the download is {}…; download it again, and if it still differs, report it to the index's owner",
                &archive.sha512[..16],
                &digest[..16]
            ),
        ));
    }
    let unpacked = tempfile::Builder::new()
        .prefix(".unpack-")
        .tempdir_in(&base)
        .map_err(|e| Error::io("create a temporary folder in", &base, e))?;
    unpack(file.path(), unpacked.path(), &archive.name)?;
    let target = base.join(format!(
        "{}-{}-{}",
        archive.version, archive.platform.os, archive.platform.arch
    ));
    // Another run (a parallel CI job) may have cached it meanwhile, and may
    // be using it: a whole release is never replaced.
    if complete(&target) {
        return Ok(target);
    }
    if target.exists() {
        // A folder without its binaries: an interrupted older tool's.
        std::fs::remove_dir_all(&target).map_err(|e| Error::io("remove", &target, e))?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Readable by all, as setup-envtest leaves it, not a temporary
        // folder's owner-only mode.
        std::fs::set_permissions(unpacked.path(), std::fs::Permissions::from_mode(0o755))
            .map_err(|e| Error::io("set the mode of", unpacked.path(), e))?;
    }
    let kept = unpacked.keep();
    if let Err(e) = std::fs::rename(&kept, &target) {
        let _ = std::fs::remove_dir_all(&kept);
        if !complete(&target) {
            return Err(Error::io("move the unpacked binaries to", &target, e));
        }
    }
    Ok(target)
}

/// Writes the regular files of the `.tar.gz` at `archive` into `into`, by
/// their file names (the archive's folders, `controller-tools/envtest/`,
/// are dropped), readable and executable by all.
fn unpack(archive: &Path, into: &Path, name: &str) -> Result<()> {
    let bad = |why: String| {
        Error::user_with_help(
            format!("{name} is not a .tar.gz of envtest binaries: {why}; nothing was cached"),
            "check the index's URL for it",
        )
    };
    let file = std::fs::File::open(archive).map_err(|e| Error::io("open", archive, e))?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let entries = tar.entries().map_err(|e| bad(e.to_string()))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| bad(e.to_string()))?;
        if entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        let path = entry.path().map_err(|e| bad(e.to_string()))?;
        let Some(file_name) = path.file_name().map(ToOwned::to_owned) else {
            continue;
        };
        let out_path = into.join(file_name);
        let mut out =
            std::fs::File::create(&out_path).map_err(|e| Error::io("create", &out_path, e))?;
        std::io::copy(&mut entry, &mut out).map_err(|e| bad(e.to_string()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&out_path, std::fs::Permissions::from_mode(0o555))
                .map_err(|e| Error::io("make executable", &out_path, e))?;
        }
    }
    if !complete(into) {
        return Err(bad("it lacks kube-apiserver or etcd".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_as_setup_envtest_reads_them() {
        let v = |s: &str| semver::Version::parse(s).unwrap();
        assert_eq!(Selector::parse(None).unwrap(), Selector::Latest);
        assert_eq!(Selector::parse(Some("latest")).unwrap(), Selector::Latest);
        for minor in ["1.34", "1.34.x", "v1.34.*"] {
            assert_eq!(
                Selector::parse(Some(minor)).unwrap(),
                Selector::Minor(1, 34)
            );
        }
        assert_eq!(
            Selector::parse(Some("v1.34.1")).unwrap(),
            Selector::Exact(v("1.34.1"))
        );
        for bad in ["1", "one.two", "1.34.1.2", "1.x"] {
            let err = Selector::parse(Some(bad)).unwrap_err();
            assert!(
                err.to_string().contains("is not a Kubernetes version"),
                "{bad}"
            );
        }
        assert!(Selector::Minor(1, 34).matches(&v("1.34.9")));
        assert!(!Selector::Minor(1, 34).matches(&v("1.35.0")));
        assert!(!Selector::Latest.matches(&v("1.35.0-alpha.1")));
    }

    #[test]
    fn the_index_lists_each_archive_newest_first() {
        let (upper, lower) = ("AB".repeat(64), "cd".repeat(64));
        let index = format!(
            "releases:\n  v1.33.0:\n    envtest-v1.33.0-linux-amd64.tar.gz:\n      hash: {upper}\n      selfLink: https://example.com/a\n  v1.34.1:\n    envtest-v1.34.1-darwin-arm64.tar.gz:\n      hash: {lower}\n      selfLink: https://example.com/b\n    envtest-v1.34.1-linux-arm64.tar.gz:\n      hash: é{lower}\n      selfLink: https://example.com/c\n    notes.txt:\n      hash: {lower}\n      selfLink: https://example.com/d\n"
        );
        let archives = parse_index(&index, "test").unwrap();
        let names: Vec<String> = archives
            .iter()
            .map(|a| format!("{} {} {}", a.version, a.platform, &a.sha512[..4]))
            .collect();
        // A name that is no release's, and a digest that is not hex, are
        // passed over.
        assert_eq!(
            names,
            ["1.34.1 darwin/arm64 cdcd", "1.33.0 linux/amd64 abab"]
        );
        let err = parse_index("releases: [1, 2]", "https://example.com/i").unwrap_err();
        assert!(err.to_string().contains("https://example.com/i"), "{err}");
    }
}
