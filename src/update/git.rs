//! The git plumbing `rsop update` stands on, through the `git` program the
//! user's repository already needs: reading a commit's tree, writing a tree
//! of files as objects, moving the refs that hold the pristine scaffold, and
//! git's own line merge (`git merge-file`).
//!
//! Nothing here touches the user's index, work tree or branches: trees are
//! written through a private index file, and only `refs/rsop/*` move.

use std::collections::BTreeMap;
use std::io::Write;
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
}

/// The identity of the commits rsop makes under `refs/rsop/`: they hold
/// only generated trees, and must not depend on the user's git config.
const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "rsop"),
    ("GIT_AUTHOR_EMAIL", "rsop@localhost"),
    ("GIT_COMMITTER_NAME", "rsop"),
    ("GIT_COMMITTER_EMAIL", "rsop@localhost"),
];

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

/// Whether the `git` program can be run at all.
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        Command::new("git")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// `git init` in `dir`, quietly.
pub fn init(dir: &Path) -> Result<()> {
    let mut cmd = git(dir);
    cmd.args(["init", "--quiet"]);
    run(cmd, "create the project's repository").map(drop)
}

impl Repo {
    /// The repository whose work tree holds `root`, if any.
    pub fn discover(root: &Path) -> Result<Option<Repo>> {
        if !available() {
            return Ok(None);
        }
        let mut cmd = git(root);
        cmd.args(["rev-parse", "--show-prefix"]);
        let output = cmd
            .output()
            .map_err(|e| missing_git("find the repository", &e))?;
        if !output.status.success() {
            return Ok(None);
        }
        let prefix = text(&output).trim_end_matches('/').to_string();
        Ok(Some(Repo {
            root: root.to_path_buf(),
            prefix,
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

    /// The commit `rev` names, if it names one.
    pub fn commit(&self, rev: &str) -> Result<Option<String>> {
        let mut cmd = git(&self.root);
        cmd.args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{rev}^{{commit}}"));
        let output = cmd
            .output()
            .map_err(|e| missing_git("resolve a revision", &e))?;
        Ok(output.status.success().then(|| text(&output)))
    }

    /// The first line of a commit's message.
    pub fn message(&self, commit: &str) -> Result<String> {
        let mut cmd = git(&self.root);
        cmd.args(["log", "-1", "--format=%B", commit]);
        Ok(text(&run(cmd, "read a commit")?))
    }

    /// The files of a scaffold rsop recorded: its whole tree, which holds
    /// the project's files alone.
    pub fn read_scaffold(&self, commit: &str) -> Result<Tree> {
        self.read(&format!("{commit}^{{tree}}"))
    }

    /// One file of a scaffold rsop recorded, if it holds it.
    pub fn read_scaffold_file(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>> {
        let mut cmd = git(&self.root);
        cmd.args(["cat-file", "blob", &format!("{commit}:{path}")]);
        let output = cmd
            .output()
            .map_err(|e| missing_git("read a file of the scaffold", &e))?;
        Ok(output.status.success().then_some(output.stdout))
    }

    /// The project's files in `commit` of the user's history (its
    /// directory's part of the tree).
    pub fn read_tree(&self, commit: &str) -> Result<Tree> {
        let spec = if self.prefix.is_empty() {
            format!("{commit}^{{tree}}")
        } else {
            format!("{commit}:{}", self.prefix)
        };
        self.read(&spec)
    }

    fn read(&self, spec: &str) -> Result<Tree> {
        let mut cmd = git(&self.root);
        cmd.args(["ls-tree", "-r", "-z", "--full-tree", spec]);
        let listing = run(cmd, "list a commit's files")?;
        let mut entries: Vec<(PathBuf, String)> = Vec::new();
        for entry in listing.stdout.split(|b| *b == 0).filter(|e| !e.is_empty()) {
            let entry = String::from_utf8_lossy(entry);
            let Some((meta, path)) = entry.split_once('\t') else {
                continue;
            };
            let mut meta = meta.split(' ');
            let (_, kind, oid) = (meta.next(), meta.next(), meta.next());
            if let (Some("blob"), Some(oid)) = (kind, oid) {
                entries.push((PathBuf::from(path), oid.to_string()));
            }
        }
        let blobs = self.cat_blobs(entries.iter().map(|(_, oid)| oid.as_str()))?;
        Ok(entries.into_iter().map(|(p, _)| p).zip(blobs).collect())
    }

    /// The contents of blobs, in order, through one `git cat-file --batch`.
    fn cat_blobs<'a>(&self, oids: impl Iterator<Item = &'a str>) -> Result<Vec<Vec<u8>>> {
        let input = oids.fold(String::new(), |mut all, oid| {
            all.push_str(oid);
            all.push('\n');
            all
        });
        let mut cmd = git(&self.root);
        cmd.args(["cat-file", "--batch"]);
        let output = run_with_input(cmd, input.as_bytes(), "read files from git")?;
        let mut out = Vec::new();
        let mut rest = output.stdout.as_slice();
        while !rest.is_empty() {
            let header_end = rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
            let header = String::from_utf8_lossy(&rest[..header_end]).to_string();
            let size: usize = header
                .rsplit(' ')
                .next()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| Error::user(format!("git gave an unexpected object: {header}")))?;
            let start = header_end + 1;
            let end = (start + size).min(rest.len());
            out.push(rest[start..end].to_vec());
            rest = rest.get(end + 1..).unwrap_or_default();
        }
        Ok(out)
    }

    /// Commits `tree` on `reference`, after the commit `parent` when given,
    /// with `message`, through one `git fast-import`: the files go into one
    /// pack, not a loose object each.
    pub fn commit_tree(
        &self,
        tree: &Tree,
        reference: &str,
        parent: Option<&str>,
        message: &str,
    ) -> Result<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut stream = Vec::new();
        let _ = write!(
            stream,
            "commit {reference}\ncommitter {} <{}> {now} +0000\ndata {}\n{message}\n",
            IDENTITY[2].1,
            IDENTITY[3].1,
            message.len()
        );
        if let Some(parent) = parent {
            let _ = writeln!(stream, "from {parent}");
        }
        // The tree is exactly `tree`, whatever the parent held.
        stream.extend_from_slice(b"deleteall\n");
        for (path, bytes) in tree {
            let path = path.to_string_lossy().replace('\\', "/");
            let _ = write!(stream, "M 100644 inline {path}\ndata {}\n", bytes.len());
            stream.extend_from_slice(bytes);
            stream.push(b'\n');
        }
        let mut cmd = git(&self.root);
        // Below `fastimport.unpackLimit` objects (100 by default, which a scaffold is) git would
        // unpack the pack into a loose file per object, in a second process.
        cmd.args(["-c", "fastimport.unpackLimit=1"]);
        cmd.args(["fast-import", "--quiet", "--force", "--date-format=raw"]);
        run_with_input(cmd, &stream, "record the scaffold").map(drop)
    }

    /// Points `reference` at `commit`.
    pub fn set_ref(&self, reference: &str, commit: &str) -> Result<()> {
        let mut cmd = git(&self.root);
        cmd.args(["update-ref", reference, commit]);
        run(cmd, "record the scaffold").map(drop)
    }

    /// Deletes `reference`, if it exists.
    pub fn delete_ref(&self, reference: &str) -> Result<()> {
        let mut cmd = git(&self.root);
        cmd.args(["update-ref", "-d", reference]);
        run(cmd, "drop a ref").map(drop)
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

fn run_with_input(mut cmd: Command, input: &[u8], what: &str) -> Result<Output> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| missing_git(what, &e))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    // Written from a thread: git may fill its stdout before it has read all
    // of its stdin.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child
        .wait_with_output()
        .map_err(|e| missing_git(what, &e))?;
    let _ = writer.join();
    succeeded(output, what)
}

/// git's line merge of `ours` and `theirs` from `base`: the merged text and
/// whether conflict markers remain. Labels name the sides in the markers.
pub fn merge_text(
    base: &str,
    ours: &str,
    theirs: &str,
    labels: [&str; 3],
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
