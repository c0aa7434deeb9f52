//! The generated project, unedited, must pass its own gates: cargo build,
//! test, clippy with `-D warnings` and fmt; kustomize must render it and every
//! object must validate; hadolint must pass its Dockerfile.

use std::path::Path;

use crate::init::init_demo;
use crate::support::{
    generated_cargo_env, render_and_validate, rsop, run_tool, with_generated_cargo,
};

/// What the envtest suite of a generated project says once when it has no binaries to run.
pub const ENVTEST_SKIPPED: &str = "envtest tests skipped: they need etcd and kube-apiserver; \
    `make test` gets them with `rsop envtest use` and sets KUBEBUILDER_ASSETS\n";

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
    with_generated_cargo(project, || gates_offline(project, &envs));
}

/// The gates after `cargo fetch`, one run after another on `project`.
fn gates_offline(project: &Path, envs: &[(&str, std::ffi::OsString)]) {
    run_tool(project, "cargo", &["build", "--quiet", "--offline"], envs);
    // No etcd or kube-apiserver here: each test against a real API server returns, and the
    // suite says once how to get them.
    let mut test_envs = envs.to_vec();
    test_envs.push(("KUBEBUILDER_ASSETS", "".into()));
    let tested = run_tool(
        project,
        "cargo",
        &["test", "--quiet", "--offline"],
        &test_envs,
    );
    let stderr = String::from_utf8_lossy(&tested.stderr);
    assert_eq!(stderr.matches(ENVTEST_SKIPPED).count(), 1, "{stderr}");
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
        envs,
    );
    run_tool(project, "cargo", &["fmt", "--check"], envs);
}

#[test]
fn init_project_builds_tests_and_lints_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = init_demo(tmp.path());
    cargo_gates(&dir);
    // The e2e suite compiles, and skips its cluster tests saying why.
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
        "the_metrics_endpoint_answers_an_authorized_scraper",
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
        "setup-envtest",
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

/// `make test` runs `cargo test` with `KUBEBUILDER_ASSETS` naming the release of
/// `ENVTEST_K8S_VERSION` that `make setup-envtest` got with `rsop envtest use`:
/// here one already in the store, the network never asked, and a cargo that
/// says what it was given. (setup-envtest's store is elsewhere on macOS.)
#[cfg(target_os = "linux")]
#[test]
fn make_test_gives_cargo_the_envtest_binaries() {
    use std::os::unix::fs::PermissionsExt as _;

    let tmp = tempfile::tempdir().unwrap();
    let dir = init_demo(tmp.path());
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    let version = format!("{}.3", rsop::versions::KUBERNETES);
    let data = tmp.path().join("data");
    let release = data.join(format!("kubebuilder-envtest/k8s/{version}-linux-{arch}"));
    std::fs::create_dir_all(&release).unwrap();
    for binary in ["etcd", "kube-apiserver", "kubectl"] {
        std::fs::write(release.join(binary), "#!/bin/sh\n").unwrap();
        let executable = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(release.join(binary), executable).unwrap();
    }
    let cargo = tmp.path().join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\necho \"cargo $* with $KUBEBUILDER_ASSETS\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();

    let out = run_tool(
        &dir,
        "make",
        &[
            "test",
            &format!("CARGO={}", cargo.display()),
            concat!("RSOP=", env!("CARGO_BIN_EXE_rsop")),
            "TEST_ARGS=--locked",
        ],
        &[
            ("XDG_DATA_HOME", data.into_os_string()),
            ("ENVTEST_INSTALLED_ONLY", "true".into()),
        ],
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let given = format!("cargo test --locked with {}\n", release.display());
    assert!(stdout.contains(&given), "{stdout}");
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
