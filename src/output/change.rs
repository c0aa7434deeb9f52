//! What every pipeline hands to the writer: one [`FileChange`] per file,
//! its text before (read through [`Disk`]) and after. Reading refuses a path
//! the writer could never write, so a command fails before any write.

use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// What happens to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Create,
    Update,
    Remove,
    Unchanged,
}

/// A file's text before and after the plan. `before` is `None` for a file
/// that does not exist yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    pub before: Option<String>,
    pub after: String,
    /// The file goes (`after` is then empty): a generator no longer makes it.
    pub remove: bool,
}

impl FileChange {
    pub fn kind(&self) -> ChangeKind {
        if self.remove {
            return match self.before {
                Some(_) => ChangeKind::Remove,
                None => ChangeKind::Unchanged,
            };
        }
        match &self.before {
            None => ChangeKind::Create,
            Some(before) if *before == self.after => ChangeKind::Unchanged,
            Some(_) => ChangeKind::Update,
        }
    }
}

/// A read-only view of the project directory.
#[derive(Debug, Clone)]
pub struct Disk {
    root: PathBuf,
}

impl Disk {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Disk { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The text of `rel`, or `None` when it does not exist. A path that could
    /// never be written (a directory, or a file in its way) is an error here,
    /// so plans fail before any write.
    pub fn read(&self, rel: &Path) -> Result<Option<String>> {
        let full = self.root.join(rel);
        check_path_is_writable(&full)?;
        match std::fs::read_to_string(&full) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("read", &full, e)),
        }
    }
}

/// Refuses a target that is a directory, or whose nearest existing ancestor
/// is not a directory.
pub fn check_path_is_writable(full: &Path) -> Result<()> {
    if full.is_dir() {
        return Err(Error::user_with_help(
            format!("cannot write `{}`: it is a directory", full.display()),
            "move the directory out of the way, or choose another `--dir`",
        ));
    }
    let mut ancestor = full.parent();
    while let Some(dir) = ancestor {
        if dir.as_os_str().is_empty() {
            break;
        }
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(Error::user_with_help(
                    format!(
                        "cannot write `{}`: `{}` is a file, not a directory",
                        full.display(),
                        dir.display()
                    ),
                    "choose a `--dir` that is a directory or does not exist yet",
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => ancestor = dir.parent(),
            Err(e) if e.raw_os_error() == Some(20) => {
                // ENOTDIR: a file further up; keep climbing to name it.
                ancestor = dir.parent();
            }
            Err(e) => return Err(Error::io("inspect", dir, e)),
        }
    }
    Ok(())
}
