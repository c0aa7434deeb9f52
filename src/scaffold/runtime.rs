//! Where a project rsop scaffolds finds rsop-runtime, the crate it builds on.
//!
//! A project depends on the rsop-runtime of rsop's own version. A released rsop's projects take it
//! from crates.io, where it is published with rsop. An rsop built from its repository (the README's
//! quick start) may be ahead of any release: it carries the crate's sources (`runtime/`, embedded
//! at build time), writes them once to a folder of its data directory named by their version and a
//! hash of their content, and gives each project it scaffolds a `.cargo/config.toml` that patches
//! crates.io's rsop-runtime with that folder. The project then builds, offline too, with no edit.
//!
//! The copy is the only thing a scaffolding command writes outside the project, and only when it
//! writes the project (never on `--dry-run`): a cache, content-addressed, written to a temporary
//! folder and renamed into place, so that concurrent runs and older copies never clash.

use std::path::{Path, PathBuf};

use crate::scaffold::{IfExists, Plan, TomlEdit};
use crate::{Error, Result};

/// The version of rsop-runtime a project of this rsop depends on: rsop's own.
pub const VERSION: &str = crate::versions::RSOP_RUNTIME;
/// The cargo configuration of a project, where the patch goes.
pub const CARGO_CONFIG: &str = ".cargo/config.toml";
/// The crate's name on crates.io.
pub const CRATE: &str = "rsop-runtime";
/// Overrides where rsop keeps its data (the copies of rsop-runtime).
pub const DATA_DIR_ENV: &str = "RSOP_DATA_DIR";

#[cfg(rsop_carries_runtime)]
static SOURCES: include_dir::Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/runtime");

/// The sources of rsop-runtime this rsop carries, as (path, content) sorted by path; none for a
/// released rsop.
fn sources() -> Vec<(&'static Path, &'static [u8])> {
    #[cfg(rsop_carries_runtime)]
    {
        fn walk(
            dir: &'static include_dir::Dir<'static>,
            out: &mut Vec<(&'static Path, &'static [u8])>,
        ) {
            for file in dir.files() {
                out.push((file.path(), file.contents()));
            }
            for sub in dir.dirs() {
                walk(sub, out);
            }
        }
        let mut out = Vec::new();
        walk(&SOURCES, &mut out);
        out.sort_by_key(|(path, _)| *path);
        out
    }
    #[cfg(not(rsop_carries_runtime))]
    Vec::new()
}

/// The copy of rsop-runtime a project of this rsop builds against, when this rsop carries one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    /// Where the copy is, or goes.
    pub dir: PathBuf,
}

impl Carried {
    /// The copy this rsop carries, in rsop's data directory; `None` for a released rsop, whose
    /// projects take the crate from crates.io.
    pub fn of_this_rsop() -> Result<Option<Self>> {
        let sources = sources();
        if sources.is_empty() {
            return Ok(None);
        }
        let dir = data_dir()?
            .join("runtime")
            .join(format!("{VERSION}-{}", content_hash(&sources)));
        Ok(Some(Carried { dir }))
    }

    /// Writes the copy unless it is there already.
    pub fn install(&self) -> Result<()> {
        if self.dir.join("Cargo.toml").is_file() {
            return Ok(());
        }
        let parent = self.dir.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(|e| Error::io("create directory", parent, e))?;
        let staging = tempfile::Builder::new()
            .prefix(".rsop-runtime-")
            .tempdir_in(parent)
            .map_err(|e| Error::io("create a temporary directory in", parent, e))?;
        for (path, contents) in sources() {
            let target = staging.path().join(path);
            if let Some(dir) = target.parent() {
                std::fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
            }
            std::fs::write(&target, contents).map_err(|e| Error::io("write", &target, e))?;
        }
        let staged = staging.keep();
        match std::fs::rename(&staged, &self.dir) {
            Ok(()) => Ok(()),
            // Another rsop wrote the same content first.
            Err(_) if self.dir.join("Cargo.toml").is_file() => {
                let _ = std::fs::remove_dir_all(&staged);
                Ok(())
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staged);
                Err(Error::io("move rsop-runtime's sources to", &self.dir, e))
            }
        }
    }

    /// Plans the project's `.cargo/config.toml` so that cargo takes rsop-runtime from the copy:
    /// created with a word on why when there is none, else given the patch among what it holds.
    pub fn plan(&self, plan: &mut Plan) {
        plan.create(CARGO_CONFIG, CONFIG_HEADER.to_owned(), IfExists::Keep);
        plan.edit_toml(
            CARGO_CONFIG,
            TomlEdit::CratesIoPatch {
                name: CRATE.to_owned(),
                path: self.dir.display().to_string(),
            },
        );
    }
}

/// What a new `.cargo/config.toml` says of the patch below it.
const CONFIG_HEADER: &str = "\
# This project was scaffolded by an rsop built from source, before its
# rsop-runtime was on crates.io: cargo takes the crate from the copy that rsop
# wrote on this machine. A project of a released rsop needs no such patch;
# `rsop update` with one removes it. `docker build` does not see the copy.
[patch.crates-io]
";

/// Plans the patch of a project of this rsop, if it carries rsop-runtime.
pub fn plan(plan: &mut Plan) -> Result<()> {
    if let Some(carried) = Carried::of_this_rsop()? {
        carried.plan(plan);
    }
    Ok(())
}

/// Writes the copy of rsop-runtime that the projects of this rsop build against, if it carries
/// one and it is not there yet: run before a scaffolding command writes the project.
pub fn install() -> Result<()> {
    match Carried::of_this_rsop()? {
        Some(carried) => carried.install(),
        None => Ok(()),
    }
}

/// Where rsop keeps its data: `$RSOP_DATA_DIR`, else `$XDG_DATA_HOME/rsop` (or
/// `~/.local/share/rsop`), `~/Library/Application Support/rsop` on macOS.
fn data_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let missing = || {
        Error::user_with_help(
            "cannot tell where to put rsop-runtime's sources: `HOME` is not set",
            format!("set `{DATA_DIR_ENV}` to a directory rsop may write"),
        )
    };
    if cfg!(target_os = "macos") {
        return Ok(home
            .ok_or_else(missing)?
            .join("Library/Application Support/rsop"));
    }
    if cfg!(windows)
        && let Some(local) = std::env::var_os("LocalAppData")
    {
        return Ok(PathBuf::from(local).join("rsop"));
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".local/share")))
        .ok_or_else(missing)?;
    Ok(data.join("rsop"))
}

/// The first 12 hex digits of the SHA-256 of the sources, paths and contents.
fn content_hash(sources: &[(&Path, &[u8])]) -> String {
    use std::fmt::Write as _;

    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for (path, contents) in sources {
        hasher.update(path.to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update((contents.len() as u64).to_le_bytes());
        hasher.update(contents);
    }
    let digest = hasher.finalize();
    digest[..6].iter().fold(String::new(), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(rsop_carries_runtime)]
    #[test]
    fn the_copy_holds_the_crate_and_is_written_once() {
        let data = tempfile::tempdir().unwrap();
        let sources = sources();
        let dir = data
            .path()
            .join(format!("runtime/{VERSION}-{}", content_hash(&sources)));
        let carried = Carried { dir: dir.clone() };
        carried.install().unwrap();
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("name = \"rsop-runtime\""), "{manifest}");
        assert!(dir.join("src/lib.rs").is_file());
        // Nothing inherited from rsop's workspace: the copy builds on its own.
        assert!(!manifest.contains(".workspace = true"), "{manifest}");
        assert!(
            manifest.contains(&format!("version = \"{VERSION}\"")),
            "{manifest}"
        );
        // Written once: a second install leaves the copy as it is, and no staging folder behind.
        let before = std::fs::metadata(dir.join("src/lib.rs"))
            .unwrap()
            .modified()
            .unwrap();
        carried.install().unwrap();
        let after = std::fs::metadata(dir.join("src/lib.rs"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(before, after);
        let entries: Vec<_> = std::fs::read_dir(dir.parent().unwrap()).unwrap().collect();
        assert_eq!(entries.len(), 1);
    }

    #[test]
    fn the_hash_follows_the_content() {
        let a = [(Path::new("src/lib.rs"), b"a".as_slice())];
        let b = [(Path::new("src/lib.rs"), b"b".as_slice())];
        assert_eq!(content_hash(&a).len(), 12);
        assert_ne!(content_hash(&a), content_hash(&b));
        assert_eq!(content_hash(&a), content_hash(&a));
    }
}
