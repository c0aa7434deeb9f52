//! `rsop update` as users run it: on scaffolds that earlier rsop commits
//! really wrote (their golden trees, kept under tests/fixtures/update), with
//! the edits a user makes, committed in git; the merged project then passes
//! its own gates. Plus `--regenerate` against every golden scenario, the
//! conflict flow, the bad-input table and the autoupdate workflow.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::generated::cargo_gates;
use crate::support::{
    assert_tree, copy_tree, files, refusal_problems, render_and_validate, rsop, run_tool, snapshot,
};

const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "Test User"),
    ("GIT_AUTHOR_EMAIL", "user@example.com"),
    ("GIT_COMMITTER_NAME", "Test User"),
    ("GIT_COMMITTER_EMAIL", "user@example.com"),
];

fn git(dir: &Path, args: &[&str]) -> String {
    let envs: Vec<(&str, OsString)> = IDENTITY.iter().map(|(k, v)| (*k, (*v).into())).collect();
    let output = run_tool(dir, "git", args, &envs);
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// Commits the whole work tree; returns the commit.
fn commit_all(dir: &Path, message: &str) -> String {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "--quiet", "--allow-empty", "-m", message]);
    git(dir, &["rev-parse", "HEAD"])
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/update")
}

/// The old scaffold `name` in a new repository under `tmp`, committed as
/// the user would right after scaffolding it. Returns the project and the
/// commit.
fn old_project(tmp: &Path, name: &str) -> (PathBuf, String) {
    let dir = tmp.join("memcached-operator");
    std::fs::create_dir_all(&dir).unwrap();
    copy_tree(&fixtures().join(name), &dir, None);
    git(&dir, &["init", "--quiet"]);
    let commit = commit_all(&dir, "Scaffold with rsop");
    (dir, commit)
}

/// Replaces `from` by `to` in the file, which must hold `from`.
#[track_caller]
fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "`{file}` does not hold {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

#[track_caller]
fn assert_holds(dir: &Path, file: &str, needle: &str) {
    let text = std::fs::read_to_string(dir.join(file))
        .unwrap_or_else(|e| panic!("cannot read `{file}` after the update: {e}"));
    assert!(text.contains(needle), "`{file}` lost {needle:?}:\n{text}");
}

/// The edits of a user who has run the operator for a while: a spec field
/// and its use in the reconciler, a dependency and a module of their own, a
/// Makefile target, a config/ patch and a sample they deleted.
fn user_edits(dir: &Path) {
    edit(
        dir,
        "src/api/v1alpha1/memcached.rs",
        "    pub container_port: Option<i32>,\n",
        "    pub container_port: Option<i32>,\n    \
         /// Logs every request the server handles.\n    \
         #[serde(default)]\n    pub verbose: bool,\n",
    );
    edit(
        dir,
        "src/controllers/memcached.rs",
        "image_pull_policy: Some(\"IfNotPresent\".into()),\n",
        "image_pull_policy: Some(\"IfNotPresent\".into()),\n\
         \x20                       args: crate::naming::verbosity(obj.spec.verbose),\n",
    );
    std::fs::write(
        dir.join("src/naming.rs"),
        "//! The memcached server's arguments.\n\n\
         use either::Either;\n\n\
         /// `-vv` for a verbose server, nothing otherwise.\n\
         pub fn verbosity(verbose: bool) -> Option<Vec<String>> {\n    \
         let flags: Either<[&str; 1], [&str; 0]> = if verbose {\n        \
         Either::Left([\"-vv\"])\n    } else {\n        Either::Right([])\n    };\n    \
         let flags: Vec<String> = flags.either(\n        \
         |l| l.iter().map(ToString::to_string).collect(),\n        \
         |r| r.iter().map(ToString::to_string).collect(),\n    );\n    \
         (!flags.is_empty()).then_some(flags)\n}\n",
    )
    .unwrap();
    edit(
        dir,
        "src/lib.rs",
        "pub mod controllers;\n",
        "pub mod controllers;\npub mod naming;\n",
    );
    edit(
        dir,
        "Cargo.toml",
        "[dependencies]\n",
        "[dependencies]\neither = \"1\"\n",
    );
    edit(
        dir,
        "Makefile",
        "\t$(CARGO) build --release\n",
        "\t$(CARGO) build --release --locked\n",
    );
    edit(
        dir,
        "config/manager/manager.yaml",
        "            memory: 128Mi\n",
        "            memory: 256Mi\n",
    );
    std::fs::remove_file(dir.join("config/samples/cache_v1alpha1_memcached.yaml")).unwrap();
    edit(
        dir,
        "config/samples/kustomization.yaml",
        "- cache_v1alpha1_memcached.yaml\n",
        "",
    );
}

/// Every user edit is in the merged tree, at the file's new place.
fn assert_user_edits(dir: &Path) {
    assert_holds(dir, "src/api/v1alpha1/memcached.rs", "pub verbose: bool,");
    assert_holds(
        dir,
        "src/controllers/memcached.rs",
        "args: crate::naming::verbosity(obj.spec.verbose),",
    );
    assert_holds(dir, "src/naming.rs", "use either::Either;");
    assert_holds(dir, "src/lib.rs", "pub mod naming;");
    assert_holds(dir, "Cargo.toml", "either = \"1\"");
    assert_holds(dir, "Makefile", "$(CARGO) build --release --locked");
    assert_holds(dir, "config/manager/manager.yaml", "memory: 256Mi");
    assert!(
        !dir.join("config/samples/cache_v1alpha1_memcached.yaml")
            .exists()
    );
    // The field is in the CRD: the manifests were derived again.
    assert_holds(
        dir,
        "config/crd/bases/cache.example.com_memcacheds.yaml",
        "verbose:",
    );
}

/// Every file the user did not touch is exactly what this rsop scaffolds
/// for the same commands (the golden tree of `create api --image`).
fn assert_scaffold_arrived(dir: &Path) {
    let golden =
        files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/create-api-image"));
    let ours = files(dir);
    let touched = [
        "src/api/v1alpha1/memcached.rs",
        "src/controllers/memcached.rs",
        "src/lib.rs",
        "Cargo.toml",
        "Makefile",
        "config/manager/manager.yaml",
        "config/samples/kustomization.yaml",
        "config/samples/cache_v1alpha1_memcached.yaml",
        "config/crd/bases/cache.example.com_memcacheds.yaml",
    ];
    let mut stale = Vec::new();
    for (path, text) in &golden {
        if touched.iter().any(|t| path == Path::new(t)) {
            continue;
        }
        if ours.get(path) != Some(text) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "files the user never touched differ from this rsop's scaffold: {stale:?}"
    );
    for old in [
        "src/leader.rs",
        "src/manager.rs",
        "src/tls.rs",
        "src/manager",
    ] {
        assert!(
            !dir.join(old).exists(),
            "`{old}` of the copied machinery is left"
        );
    }
    // The scaffold's changes reach the files the user edited too.
    let cargo = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let golden_cargo = &golden[Path::new("Cargo.toml")];
    for line in golden_cargo.lines().filter(|l| l.starts_with("kube")) {
        assert!(
            cargo.contains(line),
            "Cargo.toml lacks the scaffold's `{line}`"
        );
    }
}

/// The user's whole flow on a project from before `src/manager/`: the
/// scaffold committed, edited, committed; `rsop update --base` merges with
/// no conflict; the project passes its gates; a second update is a no-op.
#[test]
fn update_from_the_flat_layout_keeps_every_edit_and_builds() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, scaffold) = old_project(tmp.path(), "8f1e09c-create-api-image");
    user_edits(&dir);
    commit_all(&dir, "Our operator");

    let check = rsop(&dir, &["update", "--base", &scaffold, "--check"]);
    assert_eq!(check.code, 1, "{}{}", check.stdout, check.stderr);
    assert!(
        check.stdout.contains("the scaffold is behind") && check.stdout.contains("rsop 0.1.0"),
        "{}",
        check.stdout
    );

    let update = rsop(&dir, &["update", "--base", &scaffold]).success();
    assert!(!update.stdout.contains("conflict"), "{}", update.stdout);
    // The manager's machinery is rsop-runtime's now: the files the user never edited go.
    assert!(
        update.stdout.contains("delete   src/leader.rs"),
        "{}",
        update.stdout
    );
    assert_user_edits(&dir);
    assert_scaffold_arrived(&dir);
    let check = rsop(&dir, &["manifests", "--check"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (0, ""),
        "{}",
        check.stderr
    );
    render_and_validate(&dir, "config/default");
    cargo_gates(&dir);

    // The update is recorded: once committed, the next one changes nothing,
    // and `--check` agrees.
    commit_all(&dir, "Update the scaffold");
    let before = snapshot(&dir);
    let again = rsop(&dir, &["update"]).success();
    assert!(again.stdout.contains("up to date"), "{}", again.stdout);
    assert_eq!(snapshot(&dir), before, "a second update changed files");
    rsop(&dir, &["update", "--check"]).success();

    // The flat layout could not take a webhook; the updated project can, and
    // the scaffold recorded after it is still current.
    rsop(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--defaulting",
        ],
    )
    .success();
    rsop(&dir, &["update", "--check"]).success();
}

/// A project of the last rsop whose projects held the manager's machinery (`src/manager/`, the
/// envtest harness, the e2e checks): the update brings rsop-runtime, the machinery the user never
/// edited goes, the file they edited stays and is named with what replaces it, their controller
/// edit is merged into the new controller, the project passes its gates, and a second update
/// changes nothing.
#[test]
fn update_to_the_runtime_crate_keeps_every_edit_and_builds() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, scaffold) = old_project(tmp.path(), "8567250-create-api-image");
    user_edits(&dir);
    // An edit in the machinery: a longer lease for a slow API server.
    edit(
        &dir,
        "src/manager/leader.rs",
        "lease_duration: Duration::from_secs(15),",
        "lease_duration: Duration::from_secs(30),",
    );
    commit_all(&dir, "Our operator");

    let update = rsop(&dir, &["update", "--base", &scaffold]).success();
    assert!(!update.stdout.contains("conflict"), "{}", update.stdout);
    for gone in [
        "src/manager/mod.rs",
        "src/manager/shard.rs",
        "src/manager/testing.rs",
        "tests/envtest/harness.rs",
        "tests/envtest/support.rs",
    ] {
        assert!(
            update.stdout.contains(&format!("delete   {gone}")),
            "{gone}:
{}",
            update.stdout
        );
        assert!(!dir.join(gone).exists(), "{gone} is left");
    }
    assert!(
        update.stdout.contains(
            "keep     src/manager/leader.rs (you edited it; `rsop_runtime::leader` replaces it, \
             and the project no longer builds it)"
        ),
        "{}",
        update.stdout
    );
    assert_holds(
        &dir,
        "src/manager/leader.rs",
        "lease_duration: Duration::from_secs(30),",
    );
    assert_user_edits(&dir);
    assert_holds(&dir, "Cargo.toml", "rsop-runtime");
    assert_holds(
        &dir,
        "src/main.rs",
        ".controller(memcached_operator::controllers::memcached::run)",
    );
    let check = rsop(&dir, &["manifests", "--check"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (0, ""),
        "{}",
        check.stderr
    );
    cargo_gates(&dir);

    commit_all(&dir, "Update the scaffold");
    let before = snapshot(&dir);
    let again = rsop(&dir, &["update"]).success();
    assert!(again.stdout.contains("up to date"), "{}", again.stdout);
    assert_eq!(snapshot(&dir), before, "a second update changed files");
}

/// Older scaffolds still: before the leader-election rewrite (flat layout,
/// kube-lease-manager) and before the start-up fix (`src/manager/`).
#[test]
fn update_from_older_scaffolds_keeps_every_edit_and_builds() {
    for name in ["afa431f-create-api-image", "d50fe38-create-api-image"] {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, scaffold) = old_project(tmp.path(), name);
        user_edits(&dir);
        commit_all(&dir, "Our operator");
        let update = rsop(&dir, &["update", "--base", &scaffold]);
        assert_eq!(
            update.code, 0,
            "{name}:\n{}\n{}",
            update.stdout, update.stderr
        );
        assert_user_edits(&dir);
        assert_scaffold_arrived(&dir);
        let cargo = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(!cargo.contains("kube-lease-manager"), "{name}: {cargo}");
        let check = rsop(&dir, &["manifests", "--check"]);
        assert_eq!(
            (check.code, check.stdout.as_str()),
            (0, ""),
            "{name}: {}",
            check.stderr
        );
        cargo_gates(&dir);
    }
}

/// Lines both sides changed: markers in that file only, exit 1, the file
/// named; `--continue` refuses while markers remain, then records the new
/// scaffold, after which an update changes nothing.
#[test]
fn conflicts_are_marked_and_continue_records_the_scaffold() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, scaffold) = old_project(tmp.path(), "afa431f-create-api-image");
    // The new scaffold validates the image; the user wrote their own rule
    // on the same line.
    edit(
        &dir,
        "src/api/v1alpha1/memcached.rs",
        "    pub image: String,\n",
        "    #[schemars(length(min = 3))]\n    pub image: String,\n",
    );
    commit_all(&dir, "Our validation");
    let update = rsop(&dir, &["update", "--base", &scaffold]);
    assert_eq!(update.code, 1, "{}\n{}", update.stdout, update.stderr);
    assert!(
        update
            .stdout
            .lines()
            .any(|l| l.starts_with("conflict") && l.ends_with("src/api/v1alpha1/memcached.rs")),
        "{}",
        update.stdout
    );
    let marked: Vec<PathBuf> = files(&dir)
        .into_iter()
        .filter(|(_, text)| text.contains("<<<<<<< yours"))
        .map(|(path, _)| path)
        .collect();
    assert_eq!(marked, vec![PathBuf::from("src/api/v1alpha1/memcached.rs")]);

    let early = rsop(&dir, &["update", "--continue"]);
    assert_eq!(early.code, 1, "{}", early.stdout);
    assert!(
        early.stderr.contains("conflict markers remain"),
        "{}",
        early.stderr
    );

    // Resolved as the user would: their rule, and the scaffold's next to it.
    let path = dir.join("src/api/v1alpha1/memcached.rs");
    let text = std::fs::read_to_string(&path).unwrap();
    let resolved: String = text
        .split_inclusive('\n')
        .filter(|l| {
            !(l.starts_with("<<<<<<<") || l.starts_with("=======") || l.starts_with(">>>>>>>"))
        })
        .collect();
    std::fs::write(&path, resolved).unwrap();
    let pending = git(&dir, &["rev-parse", "refs/rsop/scaffold-pending"]);
    rsop(&dir, &["update", "--continue"]).success();
    assert_eq!(git(&dir, &["rev-parse", "refs/rsop/scaffold"]), pending);
    assert!(
        run_tool_fails(
            &dir,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                "refs/rsop/scaffold-pending"
            ]
        ),
        "the pending scaffold is left"
    );
    commit_all(&dir, "Update the scaffold");
    let before = snapshot(&dir);
    rsop(&dir, &["update"]).success();
    assert_eq!(snapshot(&dir), before);
}

fn run_tool_fails(dir: &Path, args: &[&str]) -> bool {
    !std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .success()
}

/// `--regenerate` re-runs every recorded command: for every golden
/// scenario, its output is the golden tree that the commands run by hand
/// made.
#[test]
fn regenerate_equals_the_scaffold_made_by_hand() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut scenarios = 0;
    for entry in std::fs::read_dir(&golden).unwrap() {
        let scenario = entry.unwrap().path();
        if !scenario.join("PROJECT").exists() {
            continue;
        }
        scenarios += 1;
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        copy_tree(&scenario, &project, None);
        // The external CRD sits next to the project, where PROJECT names it.
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/external/cert-manager.yaml"),
            tmp.path().join("cert-manager.yaml"),
        )
        .unwrap();
        let out = tmp.path().join("regenerated");
        rsop(&project, &["update", "--regenerate", out.to_str().unwrap()]).success();
        if std::env::var_os(crate::support::UPDATE_GOLDEN).is_none() {
            assert_tree(&out, &scenario);
        }
    }
    assert!(
        scenarios >= 9,
        "only {scenarios} golden scenarios have a PROJECT"
    );
}

/// A fresh project records its scaffold, and an update of it changes
/// nothing, byte for byte.
#[test]
fn an_update_with_no_scaffold_change_is_a_no_op() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    std::fs::create_dir(&dir).unwrap();
    rsop(&dir, &["init", "--domain", "example.com"]).success();
    rsop(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Memcached",
        ],
    )
    .success();
    rsop(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Memcached",
            "--defaulting",
        ],
    )
    .success();
    commit_all(&dir, "Scaffold");
    let before = snapshot(&dir);
    let update = rsop(&dir, &["update"]).success();
    assert!(update.stdout.contains("up to date"), "{}", update.stdout);
    assert_eq!(snapshot(&dir), before);
}

/// Bad input: a clear message, exit 1, no file changed.
#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    std::fs::create_dir(&dir).unwrap();
    rsop(&dir, &["init", "--domain", "example.com"]).success();
    commit_all(&dir, "Scaffold");
    let mut problems = Vec::new();

    // Uncommitted changes.
    std::fs::write(dir.join("notes.txt"), "mine\n").unwrap();
    problems.extend(refusal_problems(
        &dir,
        &["update"],
        1,
        &["uncommitted changes", "notes.txt"],
    ));
    std::fs::remove_file(dir.join("notes.txt")).unwrap();

    // A base that is no commit, and an ancestor without a scaffold.
    problems.extend(refusal_problems(
        &dir,
        &["update", "--base", "no-such-rev"],
        1,
        &["names no commit"],
    ));
    let empty_tree = git(&dir, &["hash-object", "-t", "tree", "-w", "/dev/null"]);
    let bogus = git(&dir, &["commit-tree", &empty_tree, "-m", "not a scaffold"]);
    let recorded = git(&dir, &["rev-parse", "refs/rsop/scaffold"]);
    git(&dir, &["update-ref", "refs/rsop/scaffold", &bogus]);
    problems.extend(refusal_problems(
        &dir,
        &["update"],
        1,
        &["does not hold an rsop scaffold"],
    ));
    // No ancestor at all.
    git(&dir, &["update-ref", "-d", "refs/rsop/scaffold"]);
    problems.extend(refusal_problems(
        &dir,
        &["update"],
        1,
        &["has not recorded", "--base"],
    ));
    git(&dir, &["update-ref", "refs/rsop/scaffold", &recorded]);

    // --regenerate into a directory that holds files.
    problems.extend(refusal_problems(
        &dir,
        &["update", "--regenerate", "src"],
        1,
        &["is not empty"],
    ));

    // A PROJECT from a newer rsop.
    edit(&dir, "PROJECT", "cliVersion: 0.1.0", "cliVersion: 99.0.0");
    commit_all(&dir, "From the future");
    problems.extend(refusal_problems(
        &dir,
        &["update"],
        1,
        &["newer than this rsop"],
    ));

    // No PROJECT.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    git(&empty, &["init", "--quiet"]);
    problems.extend(refusal_problems(
        &empty,
        &["update"],
        1,
        &["not an rsop project"],
    ));

    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// `--autoupdate` adds a workflow that actionlint passes, as it passes the
/// CI workflow; `edit --autoupdate=false` takes it away again.
#[test]
fn autoupdate_workflow_passes_actionlint() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    std::fs::create_dir(&dir).unwrap();
    rsop(&dir, &["init", "--domain", "example.com", "--autoupdate"]).success();
    let workflow = ".github/workflows/rsop-update.yml";
    assert!(dir.join(workflow).exists());
    run_tool(
        &dir,
        "actionlint",
        &[workflow, ".github/workflows/ci.yml"],
        &[],
    );
    assert_holds(&dir, "PROJECT", "autoupdate: true");

    rsop(&dir, &["edit", "--autoupdate=false"]).success();
    assert!(!dir.join(workflow).exists());
    rsop(&dir, &["edit", "--autoupdate"]).success();
    assert!(dir.join(workflow).exists());
    // The workflow is part of the recorded scaffold: an update keeps it.
    commit_all(&dir, "Scaffold");
    let before = snapshot(&dir);
    rsop(&dir, &["update"]).success();
    assert_eq!(snapshot(&dir), before);
}

/// A project below the top of its repository (a monorepo) keeps its own
/// scaffold ref, named after its directory, and updates from it.
#[test]
fn a_project_in_a_subdirectory_of_a_repository_updates_from_its_own_ref() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path();
    git(repo, &["init", "--quiet"]);
    rsop(
        repo,
        &["init", "--domain", "example.com", "--dir", "ops/demo"],
    )
    .success();
    let dir = repo.join("ops/demo");
    assert!(
        !dir.join(".git").exists(),
        "init made a repository inside the repository"
    );
    rsop(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Memcached",
        ],
    )
    .success();
    let refs = git(repo, &["for-each-ref", "--format=%(refname)", "refs/rsop"]);
    assert_eq!(refs, "refs/rsop/ops-demo/scaffold");
    commit_all(repo, "Scaffold");
    let before = snapshot(&dir);
    let update = rsop(&dir, &["update"]).success();
    assert!(update.stdout.contains("up to date"), "{}", update.stdout);
    assert_eq!(snapshot(&dir), before);
}

/// An old scaffold with `--owns` and `--watches` its PROJECT did not record
/// yet: they are read back from its RBAC markers, and the update of the
/// unedited project is exactly this rsop's scaffold of the same commands.
#[test]
fn owns_and_watches_are_read_back_from_an_old_scaffold() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, scaffold) = old_project(tmp.path(), "d50fe38-create-api-related");
    let update = rsop(&dir, &["update", "--base", &scaffold]).success();
    assert!(
        update.stdout.contains(
            "inferred from the old scaffold: the `--owns apps/v1/Deployment,v1/ConfigMap` and `--watches v1/Pod` of the controller `exporter`"
        ),
        "{}",
        update.stdout
    );
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/create-api-related");
    let expected = files(&golden);
    let actual = files(&dir);
    let differ: Vec<&PathBuf> = expected
        .keys()
        .chain(actual.keys())
        .filter(|p| expected.get(*p) != actual.get(*p))
        .collect();
    assert!(
        differ.is_empty(),
        "the updated project differs from this rsop's scaffold: {differ:?}"
    );
}

/// The rsop release a file pins, read from the line that sets it.
fn pins(dir: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (path, text) in files(dir) {
        let path = path.display().to_string();
        for line in text.lines() {
            let line = line.trim();
            for prefix in ["RSOP_VERSION ?= ", "RSOP_VERSION: ", "RSOP_VERSION="] {
                if let Some(version) = line.strip_prefix(prefix) {
                    found.push((path.clone(), version.to_string()));
                }
            }
            // Every install of rsop names the pin; the autoupdate workflow
            // alone installs the newest release, which it updates to.
            if line.contains("rsop-cli")
                && !line.contains("RSOP_VERSION")
                && !path.ends_with("rsop-update.yml")
                && !line.starts_with('#')
            {
                panic!("{path} installs an unpinned rsop: {line}");
            }
        }
    }
    found
}

/// The Makefile, CI, the e2e workflow and the dev container install exactly
/// the rsop that PROJECT records; an update by a newer rsop moves each pin
/// with PROJECT's `cliVersion`.
#[test]
fn every_install_of_rsop_pins_the_recorded_release_and_update_moves_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    std::fs::create_dir(&dir).unwrap();
    rsop(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--devcontainer",
            "--autoupdate",
        ],
    )
    .success();
    let recorded = |dir: &Path| {
        std::fs::read_to_string(dir.join("PROJECT"))
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("cliVersion: ").map(str::to_string))
            .expect("PROJECT records cliVersion")
    };
    let version = recorded(&dir);
    let pinned: Vec<(String, String)> = pins(&dir);
    let pinning: Vec<&str> = pinned.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        pinning,
        [
            ".devcontainer/post-install.sh",
            ".github/workflows/ci.yml",
            ".github/workflows/test-e2e.yml",
            "Makefile"
        ]
    );
    for (path, pin) in &pinned {
        assert_eq!(pin, &version, "{path}");
    }

    // The same project as an older rsop would have written it.
    let older = "0.0.9";
    for (path, _) in pinned
        .iter()
        .chain([&("PROJECT".to_string(), String::new())])
    {
        let file = dir.join(path);
        let text = std::fs::read_to_string(&file).unwrap();
        let text = text
            .replace(
                &format!("RSOP_VERSION ?= {version}"),
                &format!("RSOP_VERSION ?= {older}"),
            )
            .replace(
                &format!("RSOP_VERSION: {version}"),
                &format!("RSOP_VERSION: {older}"),
            )
            .replace(
                &format!("RSOP_VERSION={version}"),
                &format!("RSOP_VERSION={older}"),
            )
            .replace(
                &format!("cliVersion: {version}"),
                &format!("cliVersion: {older}"),
            );
        std::fs::write(&file, text).unwrap();
    }
    let scaffold = commit_all(&dir, "Scaffold with an older rsop");
    let update = rsop(&dir, &["update", "--base", &scaffold]);
    assert_eq!(update.code, 0, "{}\n{}", update.stdout, update.stderr);
    assert_eq!(recorded(&dir), version);
    for (path, pin) in pins(&dir) {
        assert_eq!(pin, version, "{path} after the update");
    }
}

/// The files of the scaffold rsop recorded under `refs/rsop/scaffold`.
fn recorded_scaffold(dir: &Path, into: &Path) -> std::collections::BTreeMap<PathBuf, String> {
    std::fs::create_dir_all(into).unwrap();
    let archive = into.join("scaffold.tar");
    git(
        dir,
        &[
            "archive",
            "--output",
            archive.to_str().unwrap(),
            "refs/rsop/scaffold",
        ],
    );
    let tree = into.join("tree");
    std::fs::create_dir(&tree).unwrap();
    run_tool(&tree, "tar", &["-xf", archive.to_str().unwrap()], &[]);
    files(&tree)
}

/// After each command on a project that is still the scaffold (where rsop
/// records the work tree as it is rather than replaying every command), the
/// recorded scaffold is exactly what replaying PROJECT writes.
#[test]
fn the_scaffold_recorded_after_each_command_is_the_replay_of_project() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    std::fs::create_dir(&dir).unwrap();
    let steps: &[&[&str]] = &[
        &["init", "--domain", "example.com", "--multigroup"],
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Memcached",
            "--image",
            "memcached:1.6",
        ],
        &[
            "create",
            "api",
            "--group",
            "apps",
            "--version",
            "v1beta1",
            "--kind",
            "GuestBook",
        ],
        &[
            "create",
            "webhook",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Memcached",
            "--defaulting",
        ],
        &[
            "create",
            "webhook",
            "--group",
            "apps",
            "--version",
            "v1beta1",
            "--kind",
            "GuestBook",
            "--programmatic-validation",
        ],
        // After webhooks, a new kind's replay runs before them: rsop replays.
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Redis",
        ],
    ];
    for (n, step) in steps.iter().enumerate() {
        rsop(&dir, step).success();
        let recorded = recorded_scaffold(&dir, &tmp.path().join(format!("recorded-{n}")));
        let replay = tmp.path().join(format!("replay-{n}"));
        rsop(&dir, &["update", "--regenerate", replay.to_str().unwrap()]).success();
        let replayed = files(&replay);
        assert_eq!(
            recorded.keys().collect::<Vec<_>>(),
            replayed.keys().collect::<Vec<_>>(),
            "after {step:?}"
        );
        for (path, text) in &replayed {
            assert_eq!(&recorded[path], text, "{} after {step:?}", path.display());
        }
        // Still the scaffold: the next command takes the short way.
        assert_eq!(
            files(&dir)
                .into_iter()
                .filter(|(p, _)| !p.starts_with(".git"))
                .count(),
            replayed.len(),
            "after {step:?}"
        );
    }
}
