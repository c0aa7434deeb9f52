//! Benchmark of the scaffolding commands: `rsop init` into a fresh
//! directory, and `rsop init` followed by `rsop create api --image` (which also
//! derives the manifests and runs rustfmt on the generated Rust), measured
//! in-process and as whole `rsop` processes, over many runs; then `rsop
//! update` on a project of 5 kinds, 2 webhooks and an external kind. Run
//! with `cargo bench --bench scaffold`.
//!
//! Targets: init well under 50 ms; init + create api under 50 ms together
//! (each also records its scaffold in git); `rsop update` under 500 ms; no
//! network.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use clap::Parser;

const RUNS: usize = 100;

fn main() {
    let tmp = tempfile::tempdir().expect("a temporary directory");

    let in_process = measure(|i| {
        let cli = rsop::cli::Cli::parse_from([
            "rsop",
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "bench-operator",
            "--dir",
            &format!("in-process-{i}"),
        ]);
        rsop::run(cli, tmp.path(), &mut std::io::sink()).expect("init succeeds");
    });
    report("init, in-process", &in_process);

    let binary = env!("CARGO_BIN_EXE_rsop");
    let process = measure(|i| {
        let status = Command::new(binary)
            .args([
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "bench-operator",
            ])
            .args(["--dir", &format!("process-{i}")])
            .current_dir(tmp.path())
            .stdout(std::process::Stdio::null())
            .status()
            .expect("rsop runs");
        assert!(status.success());
    });
    report("init, whole process", &process);

    let both = measure(|i| {
        let dir = format!("both-{i}");
        let cli = rsop::cli::Cli::parse_from([
            "rsop",
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "bench-operator",
            "--dir",
            &dir,
        ]);
        rsop::run(cli, tmp.path(), &mut std::io::sink()).expect("init succeeds");
        let cli = rsop::cli::Cli::parse_from([
            "rsop",
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--image",
            "memcached:1.6.26-alpine",
        ]);
        rsop::run(cli, &tmp.path().join(&dir), &mut std::io::sink()).expect("create api succeeds");
    });
    report("init + create api, in-process", &both);

    let both_process = measure(|i| {
        let dir = tmp.path().join(format!("both-process-{i}"));
        for args in [
            &[
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "bench-operator",
            ][..],
            &[
                "create",
                "api",
                "--group",
                "cache",
                "--version",
                "v1alpha1",
                "--kind",
                "Memcached",
                "--image",
                "memcached:1.6.26-alpine",
            ][..],
        ] {
            std::fs::create_dir_all(&dir).unwrap();
            let status = Command::new(binary)
                .args(args)
                .current_dir(&dir)
                .stdout(std::process::Stdio::null())
                .status()
                .expect("rsop runs");
            assert!(status.success());
        }
    });
    report("init + create api, processes", &both_process);
    check_written(tmp.path());
    update(tmp.path());
}

/// `rsop update` on a project of 5 kinds (one of them `--image`), 2 of them
/// with webhooks, and a kind of cert-manager's CRD: the recorded commands
/// run again, every file merged, nothing to write. As a whole process, as
/// the user runs it.
fn update(tmp: &Path) {
    let dir = tmp.join("update");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/external/cert-manager.yaml"),
        tmp.join("cert-manager.yaml"),
    )
    .unwrap();
    let binary = env!("CARGO_BIN_EXE_rsop");
    let run = |args: &[&str]| {
        let output = Command::new(binary)
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("rsop runs");
        assert!(
            output.status.success(),
            "rsop {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    run(&[
        "init",
        "--domain",
        "example.com",
        "--project-name",
        "bench-operator",
    ]);
    let kind = |kind: &'static str| {
        [
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            kind,
        ]
    };
    run(&[
        &kind("Memcached")[..],
        &["--image", "memcached:1.6.26-alpine"],
    ]
    .concat());
    for k in ["Redis", "Valkey", "Etcd"] {
        run(&kind(k));
    }
    run(&[
        "create",
        "api",
        "--group",
        "cache",
        "--version",
        "v2",
        "--kind",
        "Etcd",
        "--controller=false",
    ]);
    for k in ["Redis", "Valkey"] {
        run(&[
            "create",
            "webhook",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            k,
            "--defaulting",
            "--programmatic-validation",
        ]);
    }
    run(&[
        "create",
        "api",
        "--external-api-crd",
        "../cert-manager.yaml",
        "--kind",
        "Certificate",
        "--resource=false",
    ]);
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(args)
            .current_dir(&dir)
            .envs([
                ("GIT_AUTHOR_NAME", "bench"),
                ("GIT_AUTHOR_EMAIL", "bench@example.com"),
                ("GIT_COMMITTER_NAME", "bench"),
                ("GIT_COMMITTER_EMAIL", "bench@example.com"),
            ])
            .stdout(std::process::Stdio::null())
            .status()
            .expect("git runs");
        assert!(status.success());
    };
    git(&["add", "-A"]);
    git(&["commit", "--quiet", "-m", "Scaffold"]);
    let mut times: Vec<Duration> = (0..UPDATE_RUNS)
        .map(|_| {
            let start = Instant::now();
            run(&["update"]);
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    report("update, 5 kinds", &times);
}

const UPDATE_RUNS: usize = 20;

fn measure(mut f: impl FnMut(usize)) -> Vec<Duration> {
    // One warm-up run so page cache and allocator state are steady.
    f(usize::MAX);
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|i| {
            let start = Instant::now();
            f(i);
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    times
}

fn report(name: &str, sorted: &[Duration]) {
    let pct = |p: usize| sorted[(sorted.len() - 1) * p / 100];
    println!(
        "{name:<24} runs {:>4}  min {:>8.2?}  median {:>8.2?}  p95 {:>8.2?}  max {:>8.2?}",
        sorted.len(),
        sorted[0],
        pct(50),
        pct(95),
        sorted[sorted.len() - 1]
    );
}

fn check_written(root: &Path) {
    assert!(root.join("in-process-0/PROJECT").is_file());
    assert!(root.join("process-0/src/main.rs").is_file());
    assert!(root.join("both-0/src/controllers/memcached.rs").is_file());
    assert!(
        root.join("both-process-0/config/crd/bases/cache.example.com_memcacheds.yaml")
            .is_file()
    );
}
