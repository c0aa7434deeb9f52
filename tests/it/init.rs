//! `rsop init`: the golden tree, dry runs, re-runs, and bad input.

use std::path::Path;

use crate::support::{assert_golden, files, refusal_problems, rsop, snapshot};

/// The arguments of the golden scenario, run in a directory named
/// `demo-operator`.
pub const GOLDEN_ARGS: &[&str] = &["init", "--domain", "example.com"];

/// Creates `<tmp>/demo-operator` and runs the golden `init` in it.
pub fn init_demo(tmp: &Path) -> std::path::PathBuf {
    let dir = tmp.join("demo-operator");
    std::fs::create_dir(&dir).unwrap();
    rsop(&dir, GOLDEN_ARGS).success();
    dir
}

#[test]
fn init_matches_the_golden_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = init_demo(tmp.path());
    assert_golden(&dir, "init");
}

#[test]
fn init_variants_match_their_golden_trees() {
    let tmp = tempfile::tempdir().unwrap();
    rsop(
        tmp.path(),
        &[
            "init",
            "--domain",
            "acme.io",
            "--project-name",
            "guestbook",
            "--repo",
            "https://github.com/acme/guestbook",
            "--owner",
            "Acme \"Rockets\" Inc.",
            "--license",
            "mit",
            "--namespaced",
            "--multigroup",
            "--dir",
            "out/guestbook",
        ],
    )
    .success();
    assert_golden(&tmp.path().join("out/guestbook"), "init-namespaced-mit");
}

#[test]
fn init_reports_each_file_and_the_next_steps() {
    let tmp = tempfile::tempdir().unwrap();
    let run = rsop(
        tmp.path(),
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "demo",
            "--license",
            "none",
        ],
    )
    .success();
    let created: Vec<&str> = run
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("create  "))
        .collect();
    let written: Vec<String> = files(tmp.path())
        .keys()
        .map(|p| p.display().to_string())
        .collect();
    let mut created_sorted: Vec<String> = created.iter().map(ToString::to_string).collect();
    created_sorted.sort();
    assert_eq!(created_sorted, written);
    assert!(
        !written.iter().any(|p| p == "LICENSE"),
        "--license none writes no LICENSE"
    );
    assert!(run.stdout.contains("next steps:"), "{}", run.stdout);
    assert!(run.stdout.contains("rsop create api"), "{}", run.stdout);
}

#[test]
fn dry_run_lists_exactly_what_a_real_run_creates_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dry = rsop(
        tmp.path(),
        &[
            "init",
            "--domain",
            "example.com",
            "--dir",
            "dry",
            "--dry-run",
        ],
    )
    .success();
    assert!(
        !tmp.path().join("dry").exists(),
        "a dry run created the directory"
    );
    assert!(snapshot(tmp.path()).is_empty(), "a dry run wrote files");
    assert!(
        dry.stdout.contains("dry run: nothing was written"),
        "{}",
        dry.stdout
    );

    rsop(
        tmp.path(),
        &["init", "--domain", "example.com", "--dir", "dry"],
    )
    .success();
    let mut listed: Vec<String> = dry
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("create  ").map(ToString::to_string))
        .collect();
    listed.sort();
    let written: Vec<String> = files(&tmp.path().join("dry"))
        .keys()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(listed, written);
}

#[test]
fn forced_rerun_changes_nothing_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = init_demo(tmp.path());
    let before = snapshot(&dir);
    let run = rsop(&dir, &["init", "--domain", "example.com", "--force"]).success();
    assert_eq!(snapshot(&dir), before);
    assert!(
        run.stdout
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with(' '))
            .take_while(|l| *l != "next steps:")
            .all(|l| l.starts_with("skip ")),
        "every file should be skipped as unchanged:\n{}",
        run.stdout
    );
}

#[test]
fn force_overwrites_a_changed_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = init_demo(tmp.path());
    let golden_main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
    std::fs::write(dir.join("src/main.rs"), "// edited\n").unwrap();
    let run = rsop(&dir, &["init", "--domain", "example.com", "--force"]).success();
    assert!(run.stdout.contains("update  src/main.rs"), "{}", run.stdout);
    assert_eq!(
        std::fs::read_to_string(dir.join("src/main.rs")).unwrap(),
        golden_main
    );
}

/// One bad invocation: what to set up, the arguments, and what must come out.
struct BadCase {
    name: &'static str,
    setup: fn(&Path),
    args: &'static [&'static str],
    code: i32,
    stderr: &'static [&'static str],
}

fn nothing(_: &Path) {}

fn existing_project(root: &Path) {
    std::fs::create_dir_all(root.join("p/src")).unwrap();
    std::fs::write(root.join("p/PROJECT"), "version: \"1\"\n").unwrap();
}

fn existing_crate(root: &Path) {
    std::fs::create_dir_all(root.join("p")).unwrap();
    std::fs::write(root.join("p/Cargo.toml"), "[package]\nname = \"p\"\n").unwrap();
}

fn existing_main(root: &Path) {
    std::fs::create_dir_all(root.join("p/src")).unwrap();
    std::fs::write(root.join("p/src/main.rs"), "fn main() {}\n").unwrap();
}

fn a_file(root: &Path) {
    std::fs::write(root.join("f"), "not a directory\n").unwrap();
}

fn a_directory_where_a_file_goes(root: &Path) {
    std::fs::create_dir_all(root.join("p/Makefile")).unwrap();
}

const BAD: &[BadCase] = &[
    BadCase {
        name: "uppercase domain",
        setup: nothing,
        args: &["init", "--domain", "Example.com", "--dir", "p"],
        code: 1,
        stderr: &[
            "error: invalid domain `Example.com`",
            "help: the domain must be a DNS-1123 subdomain",
        ],
    },
    BadCase {
        name: "empty domain segment",
        setup: nothing,
        args: &["init", "--domain", "example..com", "--dir", "p"],
        code: 1,
        stderr: &["invalid domain `example..com`: it has an empty segment"],
    },
    BadCase {
        name: "project name with an underscore",
        setup: nothing,
        args: &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "my_op",
            "--dir",
            "p",
        ],
        code: 1,
        stderr: &["invalid project name `my_op`: `_` is not allowed", "help:"],
    },
    BadCase {
        name: "project name starting with a digit",
        setup: nothing,
        args: &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "1op",
            "--dir",
            "p",
        ],
        code: 1,
        stderr: &["invalid project name `1op`: it must start with a letter"],
    },
    BadCase {
        name: "project name Cargo reserves",
        setup: nothing,
        args: &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "test",
            "--dir",
            "p",
        ],
        code: 1,
        stderr: &["invalid project name `test`"],
    },
    BadCase {
        name: "directory name that makes no project name",
        setup: nothing,
        args: &["init", "--domain", "example.com", "--dir", "9lives"],
        code: 1,
        stderr: &[
            "cannot derive a project name from the directory name `9lives`",
            "help: pass `--project-name`",
        ],
    },
    BadCase {
        name: "directory holding a PROJECT",
        setup: existing_project,
        args: &["init", "--domain", "example.com", "--dir", "p"],
        code: 1,
        stderr: &[
            "`p` already holds a project (`PROJECT` exists)",
            "help:",
            "--force",
        ],
    },
    BadCase {
        name: "directory holding a crate",
        setup: existing_crate,
        args: &["init", "--domain", "example.com", "--dir", "p"],
        code: 1,
        stderr: &["`p` already holds a project (`Cargo.toml` exists)"],
    },
    BadCase {
        name: "directory holding a src/main.rs",
        setup: existing_main,
        args: &["init", "--domain", "example.com", "--dir", "p"],
        code: 1,
        stderr: &["`p` already holds a project (`src/main.rs` exists)"],
    },
    BadCase {
        name: "--dir is a file",
        setup: a_file,
        args: &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "x",
            "--dir",
            "f",
        ],
        code: 1,
        stderr: &["`f` is a file, not a directory"],
    },
    BadCase {
        name: "--dir lies under a file",
        setup: a_file,
        args: &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "x",
            "--dir",
            "f/sub",
        ],
        code: 1,
        stderr: &["is a file, not a directory"],
    },
    BadCase {
        name: "a directory where the Makefile goes (found before any write)",
        setup: a_directory_where_a_file_goes,
        args: &["init", "--domain", "example.com", "--dir", "p", "--force"],
        code: 1,
        stderr: &["cannot write", "Makefile`: it is a directory"],
    },
    BadCase {
        name: "repository URL with a space",
        setup: nothing,
        args: &[
            "init",
            "--domain",
            "example.com",
            "--dir",
            "p",
            "--repo",
            "https://x y",
        ],
        code: 1,
        stderr: &["invalid repository URL `https://x y`"],
    },
    BadCase {
        name: "unknown license (usage error)",
        setup: nothing,
        args: &[
            "init",
            "--domain",
            "example.com",
            "--dir",
            "p",
            "--license",
            "gpl",
        ],
        code: 2,
        stderr: &["invalid value 'gpl' for '--license"],
    },
    BadCase {
        name: "missing domain (usage error)",
        setup: nothing,
        args: &["init", "--dir", "p"],
        code: 2,
        stderr: &["--domain <DOMAIN>"],
    },
];

#[test]
fn bad_input_is_refused_with_a_clear_message_and_changes_nothing() {
    let mut failures = Vec::new();
    for case in BAD {
        let tmp = tempfile::tempdir().unwrap();
        (case.setup)(tmp.path());
        if let Some(problems) = refusal_problems(tmp.path(), case.args, case.code, case.stderr) {
            failures.push(format!("{}: {problems}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn completion_and_version_work() {
    let tmp = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let run = rsop(tmp.path(), &["completion", shell]).success();
        assert!(run.stdout.contains("rsop"), "{shell}: {}", run.stdout);
    }
    let run = rsop(tmp.path(), &["version"]).success();
    assert!(
        run.stdout
            .starts_with(&format!("rsop {}", env!("CARGO_PKG_VERSION"))),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("kube 5"), "{}", run.stdout);
    // The man pages the release archives carry: one per command, linked
    // from rsop(1), each with its options.
    let run = rsop(tmp.path(), &["man", "share/man/man1"]).success();
    let pages: Vec<&str> = run.stdout.lines().collect();
    assert!(pages.contains(&"share/man/man1/rsop.1"), "{}", run.stdout);
    assert!(
        pages.contains(&"share/man/man1/rsop-create-api.1"),
        "{}",
        run.stdout
    );
    let page =
        |name: &str| std::fs::read_to_string(tmp.path().join("share/man/man1").join(name)).unwrap();
    assert!(page("rsop.1").contains(".TH rsop 1"), "{}", page("rsop.1"));
    assert!(
        page("rsop.1").contains("rsop\\-manifests(1)"),
        "{}",
        page("rsop.1")
    );
    assert!(
        page("rsop-manifests.1").contains("\\-\\-check"),
        "{}",
        page("rsop-manifests.1")
    );
    assert_eq!(pages.len(), files(&tmp.path().join("share/man/man1")).len());
    for args in [
        &["-h"][..],
        &["init", "-h"],
        &["completion", "-h"],
        &["version", "-h"],
    ] {
        rsop(tmp.path(), args).success();
    }
}

/// Everything the manager does after SIGTERM (the drain, the Lease release, the servers' stop)
/// ends within the pod's `terminationGracePeriodSeconds`, so the kubelet never kills a leader
/// before it gives the Lease up and a standby never waits the Lease out: the manifest's arguments,
/// read as rsop-runtime's manager reads them, against rsop-runtime's own limits.
#[test]
fn the_pod_outlasts_the_shutdown() {
    use clap::Parser as _;
    let tmp = tempfile::tempdir().unwrap();
    let dir = init_demo(tmp.path());
    let manifest = std::fs::read_to_string(dir.join("config/manager/manager.yaml")).unwrap();
    let grace = manifest
        .lines()
        .find_map(|line| line.trim().strip_prefix("terminationGracePeriodSeconds:"))
        .expect("config/manager/manager.yaml sets terminationGracePeriodSeconds");
    let grace = std::time::Duration::from_secs(grace.trim().parse().expect("a number of seconds"));
    // The container's arguments: the list under `args:`, comments aside.
    let args = manifest
        .lines()
        .map(str::trim)
        .skip_while(|line| *line != "args:")
        .skip(1)
        .filter(|line| !line.starts_with('#'))
        .map_while(|line| line.strip_prefix("- "));
    let flags = rsop_runtime::Flags::try_parse_from(std::iter::once("manager").chain(args))
        .expect("the manager accepts its manifest's arguments");
    let shutdown = flags.graceful_shutdown_timeout
        + rsop_runtime::manager::LEASE_RELEASE_TIMEOUT
        + rsop_runtime::manager::SERVER_SHUTDOWN_TIMEOUT;
    assert!(
        shutdown < grace,
        "--graceful-shutdown-timeout ({:?}) plus the Lease release and the servers' stop take up \
         to {shutdown:?}, more than terminationGracePeriodSeconds ({grace:?})",
        flags.graceful_shutdown_timeout
    );
}
