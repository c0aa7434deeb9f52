//! rsop-runtime in an operator rsop did not make: the diff of `docs/runtime.md`, applied to a small
//! kube-rs operator written as kube-rs's examples write them (`tests/fixtures/adopt/`), gives it
//! the manager's flags, probes, metrics, leader election and graceful shutdown, as the built
//! operator shows when it runs.

use std::io::Write as _;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{copy_tree, generated_cargo_env, generated_cargo_output, run_tool};

/// The first ```` ```diff ```` block of `docs/runtime.md`.
fn adoption_diff() -> String {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/runtime.md"))
            .unwrap();
    let start = doc.find("```diff\n").expect("docs/runtime.md shows a diff") + "```diff\n".len();
    let end = start + doc[start..].find("```").unwrap();
    doc[start..end].to_owned()
}

/// A loopback port no one listens on.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The body of `url`, once it answers 200, or `None` after `limit`.
fn get_when_ok(url: &str, limit: Duration) -> Option<String> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Ok(mut response) = ureq::get(url).call() {
            return response.body_mut().read_to_string().ok();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

#[test]
fn an_existing_kube_rs_operator_adopts_the_manager_in_a_few_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let operator = tmp.path().join("configmap-generator");
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/adopt"),
        &operator,
        None,
    );
    let diff = adoption_diff();
    let added = diff
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .count();
    assert!(added <= 20, "the adoption adds {added} lines:\n{diff}");
    let patch = tmp.path().join("adopt.diff");
    std::fs::write(&patch, &diff).unwrap();
    run_tool(&operator, "git", &["apply", patch.to_str().unwrap()], &[]);

    // The crate of this workspace stands in for crates.io's, as in a project rsop scaffolds.
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime");
    let config = format!(
        "patch.crates-io.rsop-runtime.path={:?}",
        runtime.display().to_string()
    );
    for args in [
        &["fetch", "--quiet"][..],
        &["build", "--quiet", "--offline"],
    ] {
        let mut cmd = Command::new("cargo");
        cmd.args(args)
            .args(["--config", &config])
            .current_dir(&operator);
        if args[0] == "build" {
            cmd.envs(generated_cargo_env());
        }
        let output = generated_cargo_output(&mut cmd).unwrap();
        assert!(
            output.status.success(),
            "cargo {}: {}",
            args[0],
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let target = generated_cargo_env()
        .into_iter()
        .find(|(k, _)| *k == "CARGO_TARGET_DIR")
        .map(|(_, v)| std::path::PathBuf::from(v))
        .unwrap();
    let binary = target.join("debug/configmap-generator");

    // kubebuilder's flags.
    let help = run_tool(tmp.path(), binary.to_str().unwrap(), &["--help"], &[]);
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--leader-elect",
        "--metrics-bind-address",
        "--health-probe-bind-address",
        "--graceful-shutdown-timeout",
    ] {
        assert!(help.contains(flag), "{flag} in:\n{help}");
    }

    // Run against an API server it cannot reach: a standby of leader election, which keeps
    // trying to take the Lease, is ready and serves its metrics meanwhile.
    let kubeconfig = tmp.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: nowhere\n\
         clusters:\n- name: nowhere\n  cluster:\n    server: https://127.0.0.1:1\n    \
         insecure-skip-tls-verify: true\n\
         contexts:\n- name: nowhere\n  context:\n    cluster: nowhere\n    user: nobody\n\
         users:\n- name: nobody\n  user:\n    token: none\n",
    )
    .unwrap();
    let (probes, metrics) = (free_port(), free_port());
    let mut child = Command::new(&binary)
        .args([
            "--leader-elect",
            "--leader-election-namespace=default",
            &format!("--health-probe-bind-address=127.0.0.1:{probes}"),
            &format!("--metrics-bind-address=127.0.0.1:{metrics}"),
            "--metrics-secure=false",
        ])
        .env("KUBECONFIG", &kubeconfig)
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let ready = get_when_ok(
        &format!("http://127.0.0.1:{probes}/readyz"),
        Duration::from_secs(30),
    );
    let healthy = get_when_ok(
        &format!("http://127.0.0.1:{probes}/healthz"),
        Duration::from_secs(5),
    );
    let scrape = get_when_ok(
        &format!("http://127.0.0.1:{metrics}/metrics"),
        Duration::from_secs(5),
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut log = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut log).unwrap();
    let _ = std::io::stderr().flush();
    assert_eq!(ready.as_deref(), Some("ok"), "{log}");
    assert_eq!(healthy.as_deref(), Some("ok"), "{log}");
    let scrape = scrape.unwrap_or_else(|| panic!("no metrics:\n{log}"));
    for series in [
        "leader_election_master_status{name=\"configmap-generator.example.com\"} 0",
        "process_start_time_seconds",
    ] {
        assert!(scrape.contains(series), "{series} in:\n{scrape}");
    }
    assert!(log.contains("waiting to become the leader"), "{log}");
    let status = status.unwrap_or_else(|| panic!("no exit within 15 s of SIGTERM:\n{log}"));
    assert!(status.success(), "{status}:\n{log}");
}
