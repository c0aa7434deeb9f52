//! The git plumbing rsop stands on. What every scaffolding command does
//! (find the repository, create it, read the recorded scaffold, record the
//! new one under `refs/rsop/`) runs in process through gix: a command that
//! scaffolds starts no git process. `rsop update` also runs the `git`
//! program, for what only it does: revisions such as `HEAD~2`, the work
//! tree's status, and git's own line merge (`git merge-file`).
//!
//! Nothing here touches the user's index, work tree or branches: objects
//! are written to the object database, and only `refs/rsop/*` move.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::{Error, Result};

/// Files by path relative to the project root, as bytes.
pub type Tree = BTreeMap<PathBuf, Vec<u8>>;

/// The repository holding a project.
#[derive(Debug, Clone)]
pub struct Repo {
    /// The project root (where PROJECT is).
    root: PathBuf,
    /// The project root relative to the work tree's top, `""` at the top.
    prefix: String,
    git: gix::Repository,
}

/// The error of a git operation rsop does in process.
fn failed(what: &str, e: impl std::fmt::Display) -> Error {
    Error::user(format!("git failed to {what}: {e}"))
}

/// The identity of the commits rsop makes under `refs/rsop/`: they hold
/// only generated trees, and must not depend on the user's git config.
const IDENTITY: (&str, &str) = ("rsop", "rsop@localhost");

fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null());
    cmd
}

fn run(mut cmd: Command, what: &str) -> Result<Output> {
    let output = cmd.output().map_err(|e| missing_git(what, &e))?;
    succeeded(output, what)
}

/// The output of a git that exited 0, else an error with what git said.
fn succeeded(output: Output, what: &str) -> Result<Output> {
    if output.status.success() {
        Ok(output)
    } else {
        Err(Error::user(format!(
            "git failed to {what}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}

fn missing_git(what: &str, e: &std::io::Error) -> Error {
    Error::user_with_help(
        format!("cannot run git to {what}: {e}"),
        "install git: rsop keeps the scaffold it wrote in the project's git repository",
    )
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A new repository with its work tree at `dir`, as `git init` makes one
/// (its first branch is `init.defaultBranch`, else `main`).
pub fn init(dir: &Path) -> Result<()> {
    gix::init(dir)
        .map(drop)
        .map_err(|e| failed("create the project's repository", e))
}

impl Repo {
    /// The repository whose work tree holds `root`, if any.
    pub fn discover(root: &Path) -> Result<Option<Repo>> {
        let Ok(repo) = gix::discover(root) else {
            return Ok(None);
        };
        let Some(top) = repo.workdir() else {
            return Ok(None);
        };
        let canonical = |p: &Path| p.canonicalize().map_err(|e| Error::io("read", p, e));
        let prefix = canonical(root)?
            .strip_prefix(canonical(top)?)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        Ok(Some(Repo {
            root: root.to_path_buf(),
            prefix,
            git: repo,
        }))
    }

    /// The ref that holds this project's pristine scaffold. A project below
    /// the work tree's top gets its own, named after its directory.
    pub fn scaffold_ref(&self) -> String {
        self.named_ref("scaffold")
    }

    /// The ref of a scaffold that waits for conflicts to be resolved.
    pub fn pending_ref(&self) -> String {
        self.named_ref("scaffold-pending")
    }

    fn named_ref(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            format!("refs/rsop/{name}")
        } else {
            let dir: String = self
                .prefix
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            format!("refs/rsop/{dir}/{name}")
        }
    }

    /// The commit `rev` names, if it names one. A full ref name or a commit
    /// id is resolved in process; other revisions (`HEAD~2`, a tag's short
    /// name) by `git rev-parse`.
    pub fn commit(&self, rev: &str) -> Result<Option<String>> {
        if rev.starts_with("refs/") {
            let Some(mut reference) = self
                .git
                .try_find_reference(rev)
                .map_err(|e| failed("read a ref", e))?
            else {
                return Ok(None);
            };
            return Ok(reference
                .peel_to_commit()
                .ok()
                .map(|c| c.id.to_hex().to_string()));
        }
        if let Ok(id) = gix::ObjectId::from_hex(rev.as_bytes()) {
            return Ok(self.git.find_commit(id).ok().map(|_| rev.to_string()));
        }
        let mut cmd = git(&self.root);
        cmd.args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{rev}^{{commit}}"));
        let output = cmd
            .output()
            .map_err(|e| missing_git("resolve a revision", &e))?;
        Ok(output.status.success().then(|| text(&output)))
    }

    /// A commit rsop found with [`Repo::commit`].
    fn find_commit(&self, commit: &str) -> Result<gix::Commit<'_>> {
        let id = gix::ObjectId::from_hex(commit.as_bytes())
            .map_err(|e| failed(&format!("read the commit `{commit}`"), e))?;
        self.git
            .find_commit(id)
            .map_err(|e| failed(&format!("read the commit `{commit}`"), e))
    }

    /// The root tree of a commit rsop found with [`Repo::commit`].
    fn tree_of(&self, commit: &str) -> Result<gix::Tree<'_>> {
        self.find_commit(commit)?
            .tree()
            .map_err(|e| failed("read a commit's tree", e))
    }

    /// A commit's message, without its trailing newline.
    pub fn message(&self, commit: &str) -> Result<String> {
        let commit = self.find_commit(commit)?;
        let message = commit
            .message_raw()
            .map_err(|e| failed("read a commit", e))?;
        Ok(String::from_utf8_lossy(message).trim().to_string())
    }

    /// The files of a scaffold rsop recorded: its whole tree, which holds
    /// the project's files alone.
    pub fn read_scaffold(&self, commit: &str) -> Result<Tree> {
        let tree = self.tree_of(commit)?;
        self.read(&tree)
    }

    /// One file of a scaffold rsop recorded, if it holds it.
    pub fn read_scaffold_file(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>> {
        let tree = self.tree_of(commit)?;
        let Some(entry) = tree
            .lookup_entry_by_path(path)
            .map_err(|e| failed("read a file of the scaffold", e))?
        else {
            return Ok(None);
        };
        if !entry.mode().is_blob() {
            return Ok(None);
        }
        let object = entry
            .object()
            .map_err(|e| failed("read a file of the scaffold", e))?;
        Ok(Some(object.detach().data))
    }

    /// The project's files in `commit` of the user's history (its
    /// directory's part of the tree).
    pub fn read_tree(&self, commit: &str) -> Result<Tree> {
        let tree = self.tree_of(commit)?;
        if self.prefix.is_empty() {
            return self.read(&tree);
        }
        let entry = tree
            .lookup_entry_by_path(&self.prefix)
            .map_err(|e| failed("read a commit's tree", e))?;
        match entry {
            Some(entry) if entry.mode().is_tree() => {
                let sub = entry
                    .object()
                    .map_err(|e| failed("read a commit's tree", e))?
                    .into_tree();
                self.read(&sub)
            }
            _ => Err(Error::user(format!(
                "the commit `{commit}` has no directory `{}`",
                self.prefix
            ))),
        }
    }

    /// Every file of `tree` and of the trees below it, by path.
    fn read(&self, tree: &gix::Tree<'_>) -> Result<Tree> {
        let mut files = Tree::new();
        let mut pending = vec![(PathBuf::new(), tree.id)];
        while let Some((dir, id)) = pending.pop() {
            let tree = self
                .git
                .find_tree(id)
                .map_err(|e| failed("read a tree", e))?;
            for entry in tree.iter() {
                let entry = entry.map_err(|e| failed("read a tree", e))?;
                let path = dir.join(entry.filename().to_string());
                if entry.mode().is_tree() {
                    pending.push((path, entry.oid().to_owned()));
                } else if entry.mode().is_blob() {
                    let blob = self
                        .git
                        .find_blob(entry.oid())
                        .map_err(|e| failed("read a file from git", e))?;
                    files.insert(path, blob.detach().data);
                }
            }
        }
        Ok(files)
    }

    /// Commits `tree` on `reference`, after the commit `parent` when given,
    /// with `message`. The objects the repository lacks (most are there
    /// already, from the scaffold recorded before) go into one new pack.
    pub fn commit_tree(
        &self,
        tree: &Tree,
        reference: &str,
        parent: Option<&str>,
        message: &str,
    ) -> Result<()> {
        let what = "record the scaffold";
        // New objects stay in memory until they are written as one pack.
        let mut memory = self.git.clone().with_object_memory();
        let mut editor = memory
            .edit_tree(gix::ObjectId::empty_tree(memory.object_hash()))
            .map_err(|e| failed(what, e))?;
        for (path, bytes) in tree {
            let blob = memory.write_blob(bytes).map_err(|e| failed(what, e))?;
            let path = path.to_string_lossy().replace('\\', "/");
            editor
                .upsert(path.as_str(), gix::object::tree::EntryKind::Blob, blob)
                .map_err(|e| failed(what, e))?;
        }
        let tree = editor.write().map_err(|e| failed(what, e))?.detach();
        let seconds = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let signature = gix::actor::Signature {
            name: IDENTITY.0.into(),
            email: IDENTITY.1.into(),
            time: gix::date::Time::new(i64::try_from(seconds).unwrap_or(0), 0),
        };
        let parents = match parent {
            Some(parent) => vec![self.find_commit(parent)?.id],
            None => Vec::new(),
        };
        let commit = gix::objs::Commit {
            tree,
            parents: parents.into(),
            author: signature.clone(),
            committer: signature,
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        };
        let id = memory
            .write_object(&commit)
            .map_err(|e| failed(what, e))?
            .detach();
        if let Some(objects) = memory.objects.take_object_memory() {
            self.write_pack(&objects)?;
        }
        self.set(reference, id)
    }

    /// Writes `objects` as one pack with its index into the repository.
    fn write_pack(&self, objects: &gix::odb::memory::Storage) -> Result<()> {
        use gix_pack::data::output;
        let what = "record the scaffold";
        if objects.is_empty() {
            return Ok(());
        }
        let entries = objects
            .iter()
            .map(|(id, (kind, data))| {
                output::Entry::from_data(
                    &output::Count::from_data(*id, None),
                    &gix::objs::Data::new(data, *kind, self.git.object_hash()),
                    // Speed over size: `git gc` recompresses packs anyway.
                    gix::zlib::Compression::BEST_SPEED,
                )
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| failed(what, e))?;
        let count = u32::try_from(entries.len()).map_err(|e| failed(what, e))?;
        let mut pack = Vec::new();
        for written in output::bytes::FromEntriesIter::new(
            std::iter::once(Ok(entries)),
            &mut pack,
            count,
            gix_pack::data::Version::V2,
            self.git.object_hash(),
        ) {
            written.map_err(|e| failed(what, e))?;
        }
        let directory = self.git.objects.store_ref().path().join("pack");
        let outcome = gix_pack::Bundle::write_to_directory(
            &mut pack.as_slice(),
            Some(&directory),
            &mut gix::progress::Discard,
            &std::sync::atomic::AtomicBool::new(false),
            None::<gix::objs::find::Never>,
            self.git.object_hash(),
            gix_pack::bundle::write::Options {
                thread_limit: Some(1),
                ..Default::default()
            },
        )
        .map_err(|e| failed(what, e))?;
        // The `.keep` file guards the pack while it is written; left, it
        // would keep `git gc` from ever repacking it.
        if let Some(keep) = outcome.keep_path {
            std::fs::remove_file(&keep).map_err(|e| Error::io("remove", &keep, e))?;
        }
        Ok(())
    }

    /// Points `reference` at `commit`.
    pub fn set_ref(&self, reference: &str, commit: &str) -> Result<()> {
        let id = self.find_commit(commit)?.id;
        self.set(reference, id)
    }

    fn set(&self, reference: &str, id: gix::ObjectId) -> Result<()> {
        self.git
            .reference(
                reference,
                id,
                gix::refs::transaction::PreviousValue::Any,
                "rsop: record the scaffold",
            )
            .map(drop)
            .map_err(|e| failed("record the scaffold", e))
    }

    /// Deletes `reference`, if it exists.
    pub fn delete_ref(&self, reference: &str) -> Result<()> {
        use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};
        let what = "drop a ref";
        if self
            .git
            .try_find_reference(reference)
            .map_err(|e| failed(what, e))?
            .is_none()
        {
            return Ok(());
        }
        let name = reference.try_into().map_err(|e| failed(what, e))?;
        self.git
            .edit_reference(RefEdit {
                change: Change::Delete {
                    expected: PreviousValue::Any,
                    log: RefLog::AndReference,
                },
                name,
                deref: false,
            })
            .map(drop)
            .map_err(|e| failed(what, e))
    }

    /// The project's files with changes git has not committed (modified,
    /// staged or untracked, ignored files aside).
    pub fn dirty_files(&self) -> Result<Vec<String>> {
        let mut cmd = git(&self.root);
        cmd.args(["status", "--porcelain", "--untracked-files=all", "--", "."]);
        let output = run(cmd, "read the work tree's status")?;
        Ok(String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|l| l.get(3..))
            .map(str::to_string)
            .collect())
    }
}

/// How [`merge_text`] writes what both sides changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Conflict markers with both sides.
    Markers,
    /// Conflict markers with the base between the sides (`--diff3`).
    Diff3,
    /// No conflict: both sides' lines, ours first (git's `merge=union`).
    Union,
}

/// git's line merge of `ours` and `theirs` from `base`: the merged text and
/// whether conflict markers remain. Labels name the sides in the markers.
pub fn merge_text(
    base: &str,
    ours: &str,
    theirs: &str,
    labels: [&str; 3],
    style: Style,
) -> Result<(String, bool)> {
    let scratch =
        tempfile::tempdir().map_err(|e| Error::io("create", "a temporary directory", e))?;
    let mut files = Vec::new();
    for (name, text) in [("ours", ours), ("base", base), ("theirs", theirs)] {
        let path = scratch.path().join(name);
        std::fs::write(&path, text).map_err(|e| Error::io("write", &path, e))?;
        files.push(path);
    }
    let mut cmd = git(scratch.path());
    cmd.args([
        "merge-file",
        "-p",
        "-L",
        labels[0],
        "-L",
        labels[1],
        "-L",
        labels[2],
    ])
    .args(match style {
        Style::Markers => None,
        Style::Diff3 => Some("--diff3"),
        Style::Union => Some("--union"),
    })
    .args(&files);
    let output = cmd.output().map_err(|e| missing_git("merge a file", &e))?;
    // merge-file exits with the number of conflicts, or a negative code
    // (255 and up here) when it fails.
    match output.status.code() {
        Some(0) => Ok((String::from_utf8_lossy(&output.stdout).into_owned(), false)),
        Some(n) if (1..=127).contains(&n) => {
            Ok((String::from_utf8_lossy(&output.stdout).into_owned(), true))
        }
        _ => Err(Error::user(format!(
            "git failed to merge a file: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))),
    }
}
