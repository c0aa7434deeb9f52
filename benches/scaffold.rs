//! Benchmark of the scaffolding commands: `rsop init` into a fresh
//! directory, measured in-process (plan, render, resolve, write) and as a
//! whole `rsop` process, over many runs. Run with `cargo bench --bench scaffold`.
//!
//! Target: well under 50 ms per run, with no network.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use clap::Parser;

const RUNS: usize = 200;

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
    check_written(tmp.path());
}

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
}
