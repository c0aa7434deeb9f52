//! `rsop update`: the project's scaffold brought to this rsop. The commands
//! PROJECT records are run again into a scratch directory (`--regenerate`
//! alone stops there), and the result is merged into the user's tree from
//! the scaffold rsop wrote last, which every scaffolding command keeps in
//! git under `refs/rsop/scaffold` ([`record`]). docs/updating.md is the
//! user's account of it.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::say;
use crate::cli::{
    CreateApiArgs, CreateWebhookArgs, InitArgs, License, ManifestsArgs, UpdateArgs, Vcs,
};
use crate::output::{self, FileChange, Mode, Outcome};
use crate::project::{CLI_VERSION, LicenseRecord, PROJECT_FILE, Project};
use crate::update::git::{self, Repo, Tree};
use crate::update::infer;
use crate::update::merge::{self, Action, Entry, Labels, Texts};
use crate::{Error, Result};

pub fn run(args: &UpdateArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let root = cwd;
    let project = Project::load(root, "update")?;
    if let Some(dir) = &args.regenerate {
        return regenerate(&project, root, &cwd.join(dir), out);
    }
    let repo = Repo::discover(root)?.ok_or_else(|| {
        Error::user_with_help(
            format!("`{}` is not in a git repository", root.display()),
            "rsop update merges through git: `git init && git add -A && git commit -m \"Scaffold\"`, \
             then `rsop update --base <the commit that holds the scaffold as rsop wrote it>`",
        )
    })?;
    if args.continue_ {
        return continue_update(&repo, root, out);
    }
    if repo.commit(&repo.pending_ref())?.is_some() && !args.check && !args.dry_run {
        return Err(Error::user_with_help(
            "the last `rsop update` left conflicts",
            "resolve them, then run `rsop update --continue`",
        ));
    }
    let (base_name, base_commit) = base(&repo, args.base.as_deref())?;
    let tree = if args.base.is_some() {
        repo.read_tree(&base_commit)?
    } else {
        repo.read_scaffold(&base_commit)?
    };
    let base = texts(tree, &base_name)?;
    let base_project = base_project(&base, &base_name)?;
    let mut target = project.clone();
    let inferred = infer::complete(&mut target, &base)?;
    let theirs = scaffold_of(&target, root)?;
    if args.check {
        return check(&base, &theirs, base_project.cli_version.as_deref(), out);
    }
    let dirty = if args.dry_run {
        Vec::new()
    } else {
        repo.dirty_files()?
    };
    if !dirty.is_empty() && !args.force {
        return Err(Error::user_with_help(
            format!(
                "the work tree has uncommitted changes: {}",
                list(dirty.iter().map(String::as_str))
            ),
            "commit or stash them first, so that the update's changes stand apart; \
             `--force` updates anyway",
        ));
    }
    let ours = read_ours(root, base.keys().chain(theirs.keys()))?;
    let labels = Labels {
        ours: "yours".into(),
        base: format!(
            "scaffold of rsop {}",
            base_project
                .cli_version
                .as_deref()
                .unwrap_or("(unrecorded)")
        ),
        theirs: format!("rsop {CLI_VERSION}"),
    };
    let entries = merge::merge(&base, &ours, &theirs, &labels)?;
    for line in &inferred {
        say(
            out,
            &format!("note: inferred from the old scaffold: {line}\n"),
        )?;
    }
    report(&entries, out)?;
    if entries.is_empty() {
        return Ok(Outcome::Done);
    }
    if args.dry_run {
        say(out, "dry run: nothing was written\n")?;
        return Ok(Outcome::Done);
    }
    let changes = changes(&entries, &ours);
    crate::scaffold::runtime::install()?;
    output::apply(root, &changes, Mode::Write, &mut std::io::sink())?;
    let overwritten: Vec<&str> = dirty
        .iter()
        .filter(|d| entries.iter().any(|e| e.path == Path::new(d.as_str())))
        .map(String::as_str)
        .collect();
    if !overwritten.is_empty() {
        say(
            out,
            &format!(
                "warning: `--force` overwrote uncommitted changes in: {}\n",
                list(overwritten.into_iter())
            ),
        )?;
    }
    let conflicts: Vec<&Entry> = entries
        .iter()
        .filter(|e| matches!(e.action, Action::Conflict(_)))
        .collect();
    let message = format!(
        "rsop {CLI_VERSION} scaffold\n\nfingerprint: {}",
        crate::templates::fingerprint()
    );
    let recorded = repo.commit(&repo.scaffold_ref())?;
    if conflicts.is_empty() {
        if let Err(e) = derive_manifests(root, out) {
            roll_back(root, &changes);
            return Err(e);
        }
        repo.commit_tree(
            &bytes(&theirs),
            &repo.scaffold_ref(),
            recorded.as_deref(),
            &message,
        )?;
        say(
            out,
            &format!(
                "\nthe scaffold is rsop {CLI_VERSION}'s; review the changes with `git diff`\n"
            ),
        )?;
        return Ok(Outcome::Done);
    }
    let paths: Vec<String> = conflicts
        .iter()
        .map(|e| e.path.display().to_string())
        .collect();
    repo.commit_tree(
        &bytes(&theirs),
        &repo.pending_ref(),
        recorded.as_deref(),
        &format!("{message}\n\nconflicts:\n{}", paths.join("\n")),
    )?;
    say(
        out,
        &format!(
            "\n{} with conflicts: {}\nresolve them (the lines between `<<<<<<<` and `>>>>>>>`, or the keys listed), \
             then run `rsop update --continue`\n",
            if conflicts.len() == 1 {
                "1 file".to_string()
            } else {
                format!("{} files", conflicts.len())
            },
            paths.join(", ")
        ),
    )?;
    Ok(Outcome::Drift)
}

/// The commit of the ancestor scaffold and how to name it in messages.
fn base(repo: &Repo, rev: Option<&str>) -> Result<(String, String)> {
    if let Some(rev) = rev {
        let commit = repo.commit(rev)?.ok_or_else(|| {
            Error::user_with_help(
                format!("`--base {rev}` names no commit"),
                "pass the commit that holds the scaffold as rsop wrote it, such as the first commit: \
                 `git log --reverse --format=%h | head -1`",
            )
        })?;
        return Ok((format!("`{rev}`"), commit));
    }
    let reference = repo.scaffold_ref();
    match repo.commit(&reference)? {
        Some(commit) => Ok((format!("`{reference}`"), commit)),
        None => Err(Error::user_with_help(
            format!("rsop has not recorded this project's scaffold (`{reference}` does not exist)"),
            "pass `--base REV`, the commit that holds the scaffold as rsop wrote it (usually the commit \
             right after `rsop init` and `rsop create api`); rsop records it from then on",
        )),
    }
}

fn base_project(base: &Texts, name: &str) -> Result<Project> {
    let corrupted = |why: &str| {
        Error::user_with_help(
            format!("{name} does not hold an rsop scaffold: {why}"),
            "pass `--base REV`, the commit that holds the scaffold as rsop wrote it",
        )
    };
    let text = base
        .get(Path::new(PROJECT_FILE))
        .ok_or_else(|| corrupted("it has no PROJECT file"))?;
    Project::from_yaml(Path::new(PROJECT_FILE), text)
        .map_err(|e| corrupted(&format!("its PROJECT file is not valid ({e})")))
}

/// A tree of files as text; the scaffold is text throughout.
fn texts(tree: Tree, name: &str) -> Result<Texts> {
    tree.into_iter()
        .map(|(path, bytes)| {
            String::from_utf8(bytes)
                .map(|t| (path.clone(), t))
                .map_err(|_| {
                    Error::user_with_help(
                        format!("{name} holds `{}`, which is not text", path.display()),
                        "pass `--base REV`, the commit that holds the scaffold as rsop wrote it",
                    )
                })
        })
        .collect()
}

fn bytes(texts: &Texts) -> Tree {
    texts
        .iter()
        .map(|(p, t)| (p.clone(), t.clone().into_bytes()))
        .collect()
}

/// The user's files at `paths` that exist.
fn read_ours<'a>(root: &Path, paths: impl Iterator<Item = &'a PathBuf>) -> Result<Texts> {
    let disk = output::Disk::new(root);
    let mut ours = Texts::new();
    for path in paths {
        if ours.contains_key(path) {
            continue;
        }
        if let Some(text) = disk.read(path)? {
            ours.insert(path.clone(), text);
        }
    }
    Ok(ours)
}

fn list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let items: Vec<&str> = items.collect();
    let shown: Vec<String> = items.iter().take(8).map(|i| format!("`{i}`")).collect();
    if items.len() > shown.len() {
        format!(
            "{} and {} more",
            shown.join(", "),
            items.len() - shown.len()
        )
    } else {
        shown.join(", ")
    }
}

fn report(entries: &[Entry], out: &mut dyn Write) -> Result<()> {
    use anstyle::{AnsiColor, Style};
    for entry in entries {
        let (verb, color, detail) = match &entry.action {
            Action::Update => ("update", AnsiColor::Yellow, String::new()),
            Action::Create => ("create", AnsiColor::Green, String::new()),
            Action::Delete => ("delete", AnsiColor::Red, String::new()),
            Action::Conflict(keys) if keys.is_empty() => {
                ("conflict", AnsiColor::Magenta, String::new())
            }
            Action::Conflict(keys) => (
                "conflict",
                AnsiColor::Magenta,
                keys.iter().fold(String::new(), |mut all, k| {
                    all.push_str("\n          ");
                    all.push_str(k);
                    all
                }),
            ),
            Action::Keep(why) => ("keep", AnsiColor::BrightBlack, format!(" ({why})")),
        };
        let moved = entry
            .moved_from
            .as_ref()
            .map(|from| format!(" (moved from {})", from.display()))
            .unwrap_or_default();
        let style = Style::new().fg_color(Some(color.into())).bold();
        say(
            out,
            &format!(
                "{style}{verb:<9}{style:#}{}{moved}{detail}\n",
                entry.path.display()
            ),
        )?;
    }
    if entries.is_empty() {
        say(out, "the scaffold is up to date: nothing to change\n")?;
    }
    Ok(())
}

/// The file changes of the entries; `ours` holds the texts they replace.
fn changes(entries: &[Entry], ours: &Texts) -> Vec<FileChange> {
    let mut changes = Vec::new();
    for entry in entries {
        let before = ours.get(&entry.path).cloned();
        match (&entry.action, &entry.text) {
            (Action::Delete, _) => changes.push(FileChange {
                path: entry.path.clone(),
                before,
                after: String::new(),
                remove: true,
            }),
            (Action::Update | Action::Create | Action::Conflict(_), Some(text)) => {
                changes.push(FileChange {
                    path: entry.path.clone(),
                    before,
                    after: text.clone(),
                    remove: false,
                });
            }
            _ => {}
        }
    }
    changes
}

/// Puts every changed file back as it was, after a later step failed.
fn roll_back(root: &Path, changes: &[FileChange]) {
    for change in changes {
        let path = root.join(&change.path);
        let _ = match &change.before {
            Some(text) => std::fs::write(&path, text),
            None => std::fs::remove_file(&path),
        };
    }
}

/// `rsop manifests`, as the user would run it after the merge.
fn derive_manifests(root: &Path, out: &mut dyn Write) -> Result<()> {
    let args = ManifestsArgs {
        check: false,
        diff: false,
        crd_dir: "config/crd/bases".into(),
        rbac_dir: "config/rbac".into(),
        webhook_dir: "config/webhook".into(),
        r#static: false,
        cargo: false,
        dir: ".".into(),
        verify: false,
        rbac: None,
    };
    let mut report = Vec::new();
    super::manifests::run(&args, root, &mut report)?;
    // The manifests that did not change are no news after the merge's list.
    for line in String::from_utf8_lossy(&report).lines() {
        if !line.contains("skip ") {
            say(out, &format!("{line}\n"))?;
        }
    }
    Ok(())
}

/// `--check`: whether the scaffold rsop recorded is what this rsop writes.
fn check(
    base: &Texts,
    theirs: &Texts,
    recorded: Option<&str>,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let differ: Vec<&PathBuf> = base
        .keys()
        .chain(theirs.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|p| base.get(*p) != theirs.get(*p))
        .collect();
    if differ.is_empty() {
        say(
            out,
            &format!("the scaffold is rsop {CLI_VERSION}'s: nothing to update\n"),
        )?;
        return Ok(Outcome::Done);
    }
    say(
        out,
        &format!(
            "the scaffold is behind: it was written by rsop {}, and rsop {CLI_VERSION} writes {} differently: {}\n\
             run `rsop update` to bring it up to date\n",
            recorded.unwrap_or("(a release before rsop recorded its version)"),
            if differ.len() == 1 {
                "1 file".to_string()
            } else {
                format!("{} files", differ.len())
            },
            list(differ.iter().map(|p| p.to_str().unwrap_or_default()))
        ),
    )?;
    Ok(Outcome::Drift)
}

/// `--continue`: once no conflict markers remain in the files the update
/// left them in, the manifests are derived and the new scaffold recorded.
fn continue_update(repo: &Repo, root: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let pending = repo.pending_ref();
    let Some(commit) = repo.commit(&pending)? else {
        return Err(Error::user_with_help(
            "no `rsop update` waits to be continued",
            "run `rsop update`",
        ));
    };
    let message = repo.message(&commit)?;
    let conflicted: Vec<&str> = message
        .split_once("conflicts:\n")
        .map(|(_, list)| list.lines().filter(|l| !l.is_empty()).collect())
        .unwrap_or_default();
    let mut unresolved = Vec::new();
    for path in &conflicted {
        let full = root.join(path);
        let text = std::fs::read_to_string(&full).unwrap_or_default();
        if let Some((n, _)) = text.lines().enumerate().find(|(_, l)| {
            l.starts_with("<<<<<<< ") || l.starts_with(">>>>>>> ") || *l == "======="
        }) {
            unresolved.push(format!("{path}:{}", n + 1));
        }
    }
    if !unresolved.is_empty() {
        return Err(Error::user_with_help(
            format!(
                "conflict markers remain in {}",
                list(unresolved.iter().map(String::as_str))
            ),
            "resolve them, then run `rsop update --continue` again",
        ));
    }
    derive_manifests(root, out)?;
    repo.set_ref(&repo.scaffold_ref(), &commit)?;
    repo.delete_ref(&pending)?;
    say(
        out,
        &format!("\nthe scaffold is rsop {CLI_VERSION}'s; review the changes with `git diff`\n"),
    )?;
    Ok(Outcome::Done)
}

/// `--regenerate DIR`: the scaffold alone, written into an empty DIR.
fn regenerate(project: &Project, root: &Path, dir: &Path, out: &mut dyn Write) -> Result<Outcome> {
    if dir.exists()
        && std::fs::read_dir(dir)
            .map_err(|e| Error::io("read", dir, e))?
            .next()
            .is_some()
    {
        return Err(Error::user_with_help(
            format!("`{}` is not empty", dir.display()),
            "pass a directory that does not exist yet, or an empty one",
        ));
    }
    let mut project = project.clone();
    infer::complete(&mut project, &read_tree(root)?)?;
    replay(&project, root, dir)?;
    say(
        out,
        &format!(
            "wrote the scaffold of `{PROJECT_FILE}` with rsop {CLI_VERSION} into {}\n",
            dir.display()
        ),
    )?;
    Ok(Outcome::Done)
}

/// The scaffold of `project` with this rsop, in memory.
pub fn scaffold_of(project: &Project, root: &Path) -> Result<Texts> {
    let scratch = scratch_dir()?;
    let dir = scratch.path().join("scaffold");
    replay(project, root, &dir)?;
    read_tree(&dir)
}

/// A directory for a scaffold that lives only while it is read back: in
/// memory (`/dev/shm`) where Linux offers it and `TMPDIR` does not say
/// otherwise, since every scaffolding command writes a whole project there
/// and creating files on a disk costs far more than writing them.
fn scratch_dir() -> Result<tempfile::TempDir> {
    let shm = Path::new("/dev/shm");
    if std::env::var_os("TMPDIR").is_none()
        && shm.is_dir()
        && let Ok(dir) = tempfile::Builder::new().prefix("rsop-").tempdir_in(shm)
    {
        return Ok(dir);
    }
    tempfile::tempdir().map_err(|e| Error::io("create", "a temporary directory", e))
}

/// Every file under `dir` but git's and cargo's, as text.
fn read_tree(dir: &Path) -> Result<Texts> {
    let mut files = Texts::new();
    for file in project_files(dir) {
        let (path, rel) = file?;
        if let Ok(text) = std::fs::read_to_string(&path) {
            files.insert(rel, text);
        }
    }
    Ok(files)
}

/// The files under `dir` but git's and cargo's (`.git/`, `target/`), each
/// as (path, path relative to `dir`).
fn project_files(dir: &Path) -> impl Iterator<Item = Result<(PathBuf, PathBuf)>> + '_ {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| {
            e.depth() != 1 || !matches!(e.file_name().to_str(), Some(".git" | "target"))
        })
        .filter_map(move |entry| match entry {
            Err(e) => Some(Err(Error::user(format!(
                "cannot read `{}`: {e}",
                dir.display()
            )))),
            Ok(entry) if entry.file_type().is_file() => {
                let rel = entry
                    .path()
                    .strip_prefix(dir)
                    .expect("walkdir yields paths under its root")
                    .to_path_buf();
                Some(Ok((entry.into_path(), rel)))
            }
            Ok(_) => None,
        })
}

/// Runs every command PROJECT records, in the order kubebuilder's `alpha
/// generate` does: `init`, each kind's `create api`, then each kind's
/// `create webhook`. External CRDs are read from `source_root`.
pub fn replay(project: &Project, source_root: &Path, dir: &Path) -> Result<()> {
    let sink = &mut std::io::sink();
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    let init = InitArgs {
        domain: project.domain.clone(),
        project_name: Some(project.project_name.clone()),
        repo: project.repo.clone(),
        owner: project.owner.clone(),
        license: match project.license {
            Some(LicenseRecord::Mit) => License::Mit,
            Some(LicenseRecord::None) => License::None,
            Some(LicenseRecord::Apache2) | None => License::Apache2,
        },
        namespaced: project.namespaced,
        multigroup: project.multigroup,
        autoupdate: project.autoupdate,
        grafana: project.grafana,
        e2e: project.e2e,
        devcontainer: project.devcontainer,
        vcs: Vcs::None,
        dir: ".".into(),
        force: false,
        dry_run: false,
    };
    super::init::run(&init, dir, sink)?;
    for r in &project.resources {
        if !(r.api || r.controller || r.external) {
            continue;
        }
        if let Some(crd) = &r.external_api_crd
            && !source_root.join(crd).is_file()
        {
            return Err(Error::user_with_help(
                format!(
                    "`{PROJECT_FILE}` records `externalApiCrd: {crd}` for the kind `{}`, and that file does not exist",
                    r.kind
                ),
                format!(
                    "put the CRD back at `{crd}` (relative to the project), or set `externalApiCrd` to where it is now"
                ),
            ));
        }
        let image = r.image.as_ref();
        let args = CreateApiArgs {
            group: (!r.external).then(|| r.group.clone()),
            version: Some(r.version.clone()),
            kind: Some(r.kind.clone()),
            external_api_crd: r.external_api_crd.as_ref().map(|p| source_root.join(p)),
            resource: r.api,
            controller: r.controller,
            namespaced: r.namespaced,
            plural: (r.api && r.path.is_none()).then(|| r.plural.clone()),
            image: image.map(|i| i.image.clone()),
            image_container_port: image.and_then(|i| i.container_port),
            image_container_command: image.and_then(|i| i.command.clone()),
            run_as_user: image.and_then(|i| i.run_as_user),
            controller_name: r.controller_name.clone(),
            owns: r.owns.clone(),
            watches: r.watches.clone(),
            force: false,
            dry_run: false,
        };
        super::create_api::run(&args, dir, sink)?;
    }
    for r in &project.resources {
        let Some(webhooks) = &r.webhooks else {
            continue;
        };
        let args = CreateWebhookArgs {
            group: r.group.clone(),
            version: r.version.clone(),
            kind: r.kind.clone(),
            defaulting: webhooks.defaulting,
            programmatic_validation: webhooks.validation,
            conversion: webhooks.conversion,
            spoke: webhooks.spoke.clone(),
            force: false,
            dry_run: false,
        };
        super::create_webhook::run(&args, dir, sink)?;
    }
    Ok(())
}

/// After `rsop init`: the git repository, as `cargo new` makes one (not
/// inside another work tree), and the scaffold recorded in it.
pub fn after_init(root: &Path, vcs: Vcs, fresh: bool, out: &mut dyn Write) -> Result<()> {
    if vcs == Vcs::Git && Repo::discover(root)?.is_none() {
        git::init(root)?;
    }
    record(root, None, fresh, out)
}

/// The project before a command that adds to it, and whether its work tree
/// was then exactly the scaffold rsop recorded.
#[derive(Debug)]
pub struct Before {
    pub project: Project,
    pristine: bool,
}

/// [`Before`] for the project at `root`, if it has a PROJECT. Comparing the
/// work tree with the recorded scaffold stops at the first file that
/// differs, so that an edited project costs little here.
pub fn before_command(root: &Path) -> Result<Option<Before>> {
    let Some(project) = Project::load_optional(root).ok().flatten() else {
        return Ok(None);
    };
    let pristine = match Repo::discover(root)? {
        Some(repo) => match repo.commit(&repo.scaffold_ref())? {
            Some(commit) => same_files(root, &repo.read_scaffold(&commit)?)?,
            None => false,
        },
        None => false,
    };
    Ok(Some(Before { project, pristine }))
}

/// Whether the files under `root` (git's and cargo's aside, as
/// [`read_tree`] reads them) are exactly `tree`.
fn same_files(root: &Path, tree: &Tree) -> Result<bool> {
    let mut seen = 0;
    for file in project_files(root) {
        let (path, rel) = file?;
        let Some(recorded) = tree.get(&rel) else {
            return Ok(false);
        };
        match std::fs::read(&path) {
            Ok(bytes) if &bytes == recorded => seen += 1,
            _ => return Ok(false),
        }
    }
    Ok(seen == tree.len())
}

/// Whether `after` is `before` with one more step that a replay of
/// `after` takes last: a new kind's `create api` while no kind has
/// webhooks yet, or `create webhook` for the last kind (in PROJECT's order)
/// that has webhooks, which had none before. Then the command, run on a
/// work tree that was the recorded scaffold, made the replay's result.
fn replays_last(before: &Project, after: &Project) -> bool {
    let mut expected = before.clone();
    expected.cli_version.clone_from(&after.cli_version);
    match after.resources.len().checked_sub(before.resources.len()) {
        Some(1) => {
            let new = after.resources.last().expect("one more resource");
            if after.resources.iter().any(|r| r.webhooks.is_some())
                || before.resources.iter().any(|r| r.same_entry(new))
            {
                return false;
            }
            expected.resources.push(new.clone());
        }
        Some(0) => {
            let Some(last) = after.resources.iter().rposition(|r| r.webhooks.is_some()) else {
                return false;
            };
            if before.resources[last].webhooks.is_some() {
                return false;
            }
            expected.resources[last]
                .webhooks
                .clone_from(&after.resources[last].webhooks);
        }
        _ => return false,
    }
    expected == *after
}

/// Records the scaffold of the project's PROJECT as the ancestor of the
/// next update, after a command changed it. `before` is the project as the
/// command found it (`None` for `init`): the scaffold is recorded only when
/// the one recorded before was exactly that PROJECT's with this rsop, else
/// the record would pass the older scaffold's lines off as the user's.
///
/// The scaffold is what replaying PROJECT's commands writes. When the
/// command ran on a work tree that was the recorded scaffold (for `init`:
/// an empty directory, `fresh`) and is the step a replay takes last, the
/// work tree now is that replay's result, and is recorded as it is.
pub fn record(
    root: &Path,
    before: Option<&Before>,
    fresh: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let Some(repo) = Repo::discover(root)? else {
        return Ok(());
    };
    let reference = repo.scaffold_ref();
    let fingerprint = format!("fingerprint: {}", crate::templates::fingerprint());
    let parent = repo.commit(&reference)?;
    let mut as_it_is = fresh && before.is_none();
    if let Some(before) = before {
        let Some(commit) = &parent else {
            return say(
                out,
                &format!(
                    "note: rsop has not recorded this project's scaffold (`{reference}`); \
                     `rsop update --base REV` records it, from the commit that holds the scaffold as rsop wrote it\n"
                ),
            );
        };
        // The same rsop's scaffold of the same PROJECT is the recorded one;
        // anything else is compared whole.
        let same_rsop = repo.message(commit)?.lines().any(|l| l == fingerprint)
            && repo.read_scaffold_file(commit, PROJECT_FILE)?.as_deref()
                == Some(before.project.to_yaml().as_bytes());
        if !same_rsop
            && bytes(&scaffold_of(&before.project, root)?) != repo.read_scaffold(commit)?
        {
            return say(
                out,
                "note: the scaffold rsop recorded is older than this rsop's, so this change was not \
                 recorded in it; run `rsop update` to bring the project up to date\n",
            );
        }
        as_it_is = same_rsop
            && before.pristine
            && Project::load_optional(root)
                .ok()
                .flatten()
                .is_some_and(|after| replays_last(&before.project, &after));
    }
    let scaffold = if as_it_is {
        read_tree(root)?
    } else {
        scaffold_of(&Project::load(root, "update")?, root)?
    };
    repo.commit_tree(
        &bytes(&scaffold),
        &reference,
        parent.as_deref(),
        &format!("rsop {CLI_VERSION} scaffold\n\n{fingerprint}"),
    )?;
    Ok(())
}
