//! The generated project, unedited, must pass its own gates: cargo build,
//! test, clippy with `-D warnings` and fmt; kustomize must render it and every
//! object must validate; hadolint must pass its Dockerfile.

use std::path::Path;

use crate::init::init_demo;
use crate::support::{generated_cargo_env, render_and_validate, rsop, run_tool};

/// cargo's gates, in one shared target directory.
///
/// The network is used in one step: `cargo fetch` resolves and downloads
/// every dependency (dev ones included), retried because the crates.io
/// index served by its CDN can briefly lag behind itself. The gates then
/// run offline against exactly what was fetched.
pub fn cargo_gates(project: &Path) {
    let envs = generated_cargo_env();
    let mut attempt = 1;
    loop {
        let fetched = std::process::Command::new("cargo")
            .args(["fetch", "--quiet"])
            .current_dir(project)
            .output()
            .expect("cargo runs");
        if fetched.status.success() {
            break;
        }
        assert!(
            attempt < 3,
            "`cargo fetch` failed {attempt} times in {}:\n{}",
            project.display(),
            String::from_utf8_lossy(&fetched.stderr)
        );
        attempt += 1;
        std::thread::sleep(std::time::Duration::from_secs(5));
    }
    run_tool(project, "cargo", &["build", "--quiet", "--offline"], &envs);
    run_tool(project, "cargo", &["test", "--quiet", "--offline"], &envs);
    run_tool(
        project,
        "cargo",
        &[
            "clippy",
            "--quiet",
            "--offline",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
        &envs,
    );
    run_tool(project, "cargo", &["fmt", "--check"], &envs);
}

#[test]
fn init_project_builds_tests_and_lints_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = init_demo(tmp.path());
    cargo_gates(&dir);
    // The e2e suite runs the tests of its checks, and skips its cluster tests saying why.
    let e2e = run_tool(
        &dir,
        "cargo",
        &["test", "--offline", "--test", "e2e"],
        &generated_cargo_env(),
    );
    let stdout = String::from_utf8_lossy(&e2e.stdout);
    let stderr = String::from_utf8_lossy(&e2e.stderr);
    assert_eq!(
        stderr
            .matches("e2e tests skipped: they need a cluster")
            .count(),
        1,
        "{stderr}"
    );
    for test in [
        "the_manager_runs",
        "recorded::the_metrics_check_scrapes_from_a_pod_with_the_readers_token",
        "recorded::the_sample_check_waits_for_the_condition_of_the_applied_generation",
    ] {
        assert!(stdout.contains(&format!("test {test} ... ok")), "{stdout}");
    }
}

#[test]
fn init_project_renders_and_validates() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = init_demo(tmp.path());
    let yaml = render_and_validate(&dir, "config/default");
    for expected in [
        "kind: Namespace",
        "name: demo-operator-system",
        "kind: Deployment",
        "name: demo-operator-controller-manager",
        "kind: ServiceAccount",
        "kind: ClusterRole",
        "name: demo-operator-manager-role",
        "name: demo-operator-leader-election-role",
        "name: demo-operator-controller-manager-metrics-service",
    ] {
        assert!(
            yaml.contains(expected),
            "rendered config/default lacks {expected:?}:\n{yaml}"
        );
    }
    render_and_validate(&dir, "config/network-policy");
}

#[test]
fn namespaced_project_renders_roles_not_cluster_roles() {
    let tmp = tempfile::tempdir().unwrap();
    rsop(
        tmp.path(),
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "scoped",
            "--namespaced",
        ],
    )
    .success();
    let yaml = render_and_validate(tmp.path(), "config/default");
    assert!(yaml.contains("name: scoped-manager-role"), "{yaml}");
    let manager_role = yaml
        .split("\n---\n")
        .find(|doc| doc.contains("name: scoped-manager-role\n"))
        .expect("the manager role is rendered");
    assert!(manager_role.contains("kind: Role\n"), "{manager_role}");
    assert!(
        yaml.contains("--namespace=$(POD_NAMESPACE)") || yaml.contains("WATCH_NAMESPACE"),
        "{yaml}"
    );
}

#[test]
fn dockerfile_passes_hadolint() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = init_demo(tmp.path());
    run_tool(&dir, "hadolint", &["Dockerfile"], &[]);
}

#[test]
fn makefile_help_lists_kubebuilder_targets() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = init_demo(tmp.path());
    let out = run_tool(&dir, "make", &["help"], &[]);
    let help = strip_ansi(&String::from_utf8(out.stdout).unwrap());
    for target in [
        "help",
        "manifests",
        "fmt",
        "lint",
        "test",
        "build",
        "run",
        "docker-build",
        "docker-push",
        "build-installer",
        "install",
        "uninstall",
        "deploy",
        "undeploy",
    ] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(target)),
            "`make help` lacks `{target}`:\n{help}"
        );
    }
}

/// `text` without ANSI escape sequences (`make help` colours target names).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // Skip to the sequence's final byte, a letter.
            chars.by_ref().find(char::is_ascii_alphabetic);
        } else {
            out.push(c);
        }
    }
    out
}
