//! The one place rsop writes: the file changes of any command, whichever
//! pipeline made them, are applied here, in one of four modes. It owns what
//! it writes: [`FileChange`] and the read-only [`Disk`] view live here.
//!
//! Writes are all-or-nothing. Every target is checked first; then each file
//! is written to a temporary sibling, and only when all of them are written
//! are they renamed over their targets (a rename within a directory is
//! atomic). A failure before the renames removes the temporaries and any
//! directory made for them.

mod change;

use std::io::Write;
use std::path::{Path, PathBuf};

use anstyle::{AnsiColor, Style};

pub use change::{ChangeKind, Disk, FileChange, check_path_is_writable};

use crate::{Error, Result};

/// How to apply changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Write the files, listing each.
    Write,
    /// List what would be written; write nothing.
    DryRun,
    /// Print a unified diff of each change, then write.
    Diff,
    /// Print a unified diff of each change; write nothing. Changes are drift.
    Check,
}

/// What applying found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything is written, or nothing needed writing.
    Done,
    /// Check mode found files that differ from what rsop would write.
    Drift,
    /// Some files could not be made (a build that failed); the others
    /// were written, and what went wrong was reported.
    Incomplete,
}

/// Applies `changes` under `root` and reports on `out`.
pub fn apply(
    root: &Path,
    changes: &[FileChange],
    mode: Mode,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let report = |out: &mut dyn Write| -> Result<()> {
        for change in changes {
            report_line(out, change)?;
        }
        Ok(())
    };
    let pending: Vec<&FileChange> = changes
        .iter()
        .filter(|c| c.kind() != ChangeKind::Unchanged)
        .collect();
    match mode {
        Mode::Write => {
            write_all(root, &pending)?;
            report(out)?;
        }
        Mode::DryRun => {
            report(out)?;
            emit(out, format_args!("dry run: nothing was written\n"))?;
        }
        Mode::Diff => {
            for change in &pending {
                emit(out, format_args!("{}", unified_diff(change)))?;
            }
            write_all(root, &pending)?;
            report(out)?;
        }
        Mode::Check => {
            for change in &pending {
                emit(out, format_args!("{}", unified_diff(change)))?;
            }
            if !pending.is_empty() {
                return Ok(Outcome::Drift);
            }
        }
    }
    Ok(Outcome::Done)
}

fn emit(out: &mut dyn Write, args: std::fmt::Arguments<'_>) -> Result<()> {
    out.write_fmt(args)
        .map_err(|e| Error::io("write to", "standard output", e))
}

fn report_line(out: &mut dyn Write, change: &FileChange) -> Result<()> {
    let (verb, color) = match change.kind() {
        ChangeKind::Create => ("create", AnsiColor::Green),
        ChangeKind::Update => ("update", AnsiColor::Yellow),
        ChangeKind::Remove => ("remove", AnsiColor::Red),
        ChangeKind::Unchanged => ("skip", AnsiColor::BrightBlack),
    };
    let style = Style::new().fg_color(Some(color.into())).bold();
    emit(
        out,
        format_args!("{style}{verb:<8}{style:#}{}\n", change.path.display()),
    )
}

/// A unified diff (3 lines of context) between a file's current and new
/// text, with `a/` and `b/` headers as git prints them.
pub fn unified_diff(change: &FileChange) -> String {
    let path = change.path.display();
    let before = change.before.as_deref().unwrap_or("");
    let old_header = if change.before.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_string()
    };
    let new_header = if change.remove {
        "/dev/null".to_string()
    } else {
        format!("b/{path}")
    };
    similar::TextDiff::from_lines(before, &change.after)
        .unified_diff()
        .context_radius(3)
        .header(&old_header, &new_header)
        .to_string()
}

/// Writes every change or none.
fn write_all(root: &Path, changes: &[&FileChange]) -> Result<()> {
    for change in changes {
        check_path_is_writable(&root.join(&change.path))?;
    }
    let (removals, writes): (Vec<&FileChange>, Vec<&FileChange>) =
        changes.iter().partition(|c| c.remove);
    let mut staged = Staged::default();
    for change in writes {
        if let Err(e) = staged.stage(&root.join(&change.path), &change.after) {
            staged.roll_back();
            return Err(e);
        }
    }
    staged.commit()?;
    // Removals come last: a failure before them leaves every file as it was.
    for change in removals {
        let path = root.join(&change.path);
        std::fs::remove_file(&path).map_err(|e| Error::io("remove", &path, e))?;
        // A folder the removals emptied goes too (`src/manager/` once the update took its files),
        // up to the project's root; `remove_dir` leaves a folder that still holds anything.
        let mut dir = path.parent();
        while let Some(parent) = dir
            && parent != root
            && parent.starts_with(root)
            && std::fs::remove_dir(parent).is_ok()
        {
            dir = parent.parent();
        }
    }
    Ok(())
}

/// Temporary files written and directories created, to commit or undo.
#[derive(Default)]
struct Staged {
    files: Vec<(PathBuf, PathBuf)>,
    dirs: Vec<PathBuf>,
}

impl Staged {
    fn stage(&mut self, target: &Path, text: &str) -> Result<()> {
        let parent = target.parent().unwrap_or_else(|| Path::new("."));
        self.make_dirs(parent)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = parent.join(format!(".{name}.rsop-{}.tmp", std::process::id()));
        std::fs::write(&tmp, text).map_err(|e| Error::io("write", &tmp, e))?;
        self.files.push((tmp.clone(), target.to_path_buf()));
        // An update keeps the permissions of the file it replaces (say, an
        // executable script).
        if let Ok(meta) = std::fs::metadata(target) {
            std::fs::set_permissions(&tmp, meta.permissions())
                .map_err(|e| Error::io("set permissions of", &tmp, e))?;
        }
        Ok(())
    }

    fn make_dirs(&mut self, dir: &Path) -> Result<()> {
        if dir.as_os_str().is_empty() || dir.is_dir() {
            return Ok(());
        }
        if let Some(parent) = dir.parent() {
            self.make_dirs(parent)?;
        }
        std::fs::create_dir(dir).map_err(|e| Error::io("create directory", dir, e))?;
        self.dirs.push(dir.to_path_buf());
        Ok(())
    }

    fn roll_back(&mut self) {
        // Best effort: the error that caused the roll-back is the one to report.
        for (tmp, _) in self.files.drain(..) {
            let _ = std::fs::remove_file(tmp);
        }
        for dir in self.dirs.drain(..).rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }

    fn commit(mut self) -> Result<()> {
        let files = std::mem::take(&mut self.files);
        for (i, (tmp, target)) in files.iter().enumerate() {
            if let Err(e) = std::fs::rename(tmp, target) {
                self.files = files[i..].to_vec();
                self.roll_back();
                return Err(Error::io("replace", target, e));
            }
        }
        Ok(())
    }
}
