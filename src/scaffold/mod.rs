//! The scaffolding engine: each command's planner in [`plans`] describes what
//! it wants as a [`Plan`] of file actions; [`resolve`] works the plan out in
//! memory against a read-only view of the disk and yields the
//! [`FileChange`]s; `output::apply` is the one place that writes them.
//!
//! Nothing here writes. That is what makes `--dry-run`, the diff and check
//! modes and all-or-nothing writes possible: every action is validated, every
//! marker found and every template rendered before the first byte lands.

pub mod e2e;
pub mod external;
pub mod grafana;
mod markers;
pub mod plans;
pub mod runtime;
pub mod rustfmt;
mod toml;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use markers::Marker;
pub use toml::TomlEdit;

use crate::output::{Disk, FileChange};
use crate::project::{PROJECT_FILE, Project};
use crate::{Error, Result};

/// What to do when a file to be created already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfExists {
    /// Refuse: the user owns the file (the default without `--force`).
    Refuse,
    /// Leave the existing file alone (shared files a later command may
    /// find already made, such as a module index).
    Keep,
    /// Replace it (`--force`).
    Overwrite,
}

impl IfExists {
    /// `Overwrite` when the user passed `--force`, else `Refuse`.
    pub fn from_force(force: bool) -> Self {
        if force {
            IfExists::Overwrite
        } else {
            IfExists::Refuse
        }
    }
}

/// One step of a plan. Paths are relative to the project root.
#[derive(Debug, Clone)]
pub enum Action {
    /// Create a file with the given contents.
    Create {
        path: PathBuf,
        contents: String,
        if_exists: IfExists,
    },
    /// Insert a fragment just before a marker line, unless it is already there.
    Insert {
        path: PathBuf,
        marker: Marker,
        fragment: String,
        /// Insert a single line at its sorted place in the block above the
        /// marker, instead of just before it.
        sorted: bool,
    },
    /// Edit a TOML file in place, keeping its formatting and comments.
    EditToml { path: PathBuf, edit: TomlEdit },
    /// Write the PROJECT file.
    SaveProject(Box<Project>),
}

/// The ordered actions of one command.
#[derive(Debug, Default, Clone)]
pub struct Plan {
    actions: Vec<Action>,
}

impl Plan {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn actions(&self) -> &[Action] {
        &self.actions
    }

    pub fn create(&mut self, path: impl Into<PathBuf>, contents: String, if_exists: IfExists) {
        self.actions.push(Action::Create {
            path: path.into(),
            contents,
            if_exists,
        });
    }

    pub fn insert(
        &mut self,
        path: impl Into<PathBuf>,
        marker: Marker,
        fragment: impl Into<String>,
    ) {
        self.actions.push(Action::Insert {
            path: path.into(),
            marker,
            fragment: fragment.into(),
            sorted: false,
        });
    }

    /// Like [`Plan::insert`], for one line kept in sorted order.
    pub fn insert_sorted(
        &mut self,
        path: impl Into<PathBuf>,
        marker: Marker,
        line: impl Into<String>,
    ) {
        self.actions.push(Action::Insert {
            path: path.into(),
            marker,
            fragment: line.into(),
            sorted: true,
        });
    }

    pub fn edit_toml(&mut self, path: impl Into<PathBuf>, edit: TomlEdit) {
        self.actions.push(Action::EditToml {
            path: path.into(),
            edit,
        });
    }

    /// Writes PROJECT, stamped with this rsop's release: the one that
    /// scaffolded last.
    pub fn save_project(&mut self, mut project: Project) {
        project.cli_version = Some(crate::project::CLI_VERSION.into());
        self.actions.push(Action::SaveProject(Box::new(project)));
    }
}

/// The files a plan has touched so far: their text on disk and their text
/// after the actions resolved until now.
struct Overlay<'a> {
    disk: &'a Disk,
    files: BTreeMap<PathBuf, (Option<String>, Option<String>)>,
    order: Vec<PathBuf>,
}

impl Overlay<'_> {
    fn current(&mut self, path: &Path) -> Result<Option<String>> {
        if let Some((_, now)) = self.files.get(path) {
            return Ok(now.clone());
        }
        let before = self.disk.read(path)?;
        self.files
            .insert(path.to_path_buf(), (before.clone(), before.clone()));
        self.order.push(path.to_path_buf());
        Ok(before)
    }

    fn set(&mut self, path: &Path, text: String) {
        if let Some(entry) = self.files.get_mut(path) {
            entry.1 = Some(text);
        }
    }

    fn into_changes(mut self) -> Vec<FileChange> {
        self.order
            .into_iter()
            .filter_map(|path| {
                let (before, after) = self.files.remove(&path)?;
                after.map(|after| FileChange {
                    path,
                    before,
                    after,
                    remove: false,
                })
            })
            .collect()
    }
}

/// Works the plan out against the disk: the text every touched file will
/// have, in the order the plan first touched it.
pub fn resolve(plan: &Plan, disk: &Disk) -> Result<Vec<FileChange>> {
    let mut overlay = Overlay {
        disk,
        files: BTreeMap::new(),
        order: Vec::new(),
    };
    for action in &plan.actions {
        match action {
            Action::Create {
                path,
                contents,
                if_exists,
            } => match (overlay.current(path)?, if_exists) {
                (Some(_), IfExists::Refuse) => {
                    return Err(Error::user_with_help(
                        format!("`{}` already exists", path.display()),
                        "pass `--force` to overwrite it",
                    ));
                }
                (Some(_), IfExists::Keep) => {}
                (Some(_) | None, _) => overlay.set(path, contents.clone()),
            },
            Action::Insert {
                path,
                marker,
                fragment,
                sorted,
            } => {
                let Some(text) = overlay.current(path)? else {
                    return Err(Error::user_with_help(
                        format!(
                            "cannot insert into `{}`: the file does not exist",
                            path.display()
                        ),
                        format!(
                            "rsop adds code there at the `{}` marker; restore the file \
                             from version control",
                            marker.comment_for(path)
                        ),
                    ));
                };
                let after = if *sorted {
                    marker.insert_sorted(path, &text, fragment)?
                } else {
                    marker.insert(path, &text, fragment)?
                };
                overlay.set(path, after);
            }
            Action::EditToml { path, edit } => {
                let Some(text) = overlay.current(path)? else {
                    return Err(Error::user_with_help(
                        format!("cannot edit `{}`: the file does not exist", path.display()),
                        "restore it from version control",
                    ));
                };
                let after = edit.apply(path, &text)?;
                overlay.set(path, after);
            }
            Action::SaveProject(project) => {
                let path = Path::new(PROJECT_FILE);
                overlay.current(path)?;
                overlay.set(path, project.to_yaml());
            }
        }
    }
    Ok(overlay.into_changes())
}
