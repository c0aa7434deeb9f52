//! rsop as it reaches users: the crate `cargo package` makes (what crates.io
//! serves to `cargo install`), and the workflows that test and release it.

use std::path::Path;
use std::process::Command;

use crate::support::{generated_cargo_env, rsop_at, run_tool};

/// The published crates: rsop-cli's holds everything its build needs (the
/// templates and data that `include_dir!` and build.rs read) and none of the
/// golden trees; unpacked and built on its own, its binary scaffolds a project
/// that depends on rsop-runtime from crates.io, as a released rsop's do, and
/// that project builds against the packaged rsop-runtime.
#[test]
fn the_packaged_crate_builds_and_scaffolds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let package_dir = tmp.path().join("package");
    let package = Command::new(env!("CARGO"))
        .args([
            "package",
            "--workspace",
            "--no-verify",
            "--allow-dirty",
            "--locked",
            "--quiet",
        ])
        .arg("--target-dir")
        .arg(&package_dir)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        package.status.success(),
        "{}",
        String::from_utf8_lossy(&package.stderr)
    );
    let name = format!("rsop-cli-{}", env!("CARGO_PKG_VERSION"));
    let krate = package_dir.join("package").join(format!("{name}.crate"));
    run_tool(tmp.path(), "tar", &["-xzf", krate.to_str().unwrap()], &[]);
    let unpacked = tmp.path().join(&name);
    let runtime_name = format!("rsop-runtime-{}", env!("CARGO_PKG_VERSION"));
    let runtime_crate = package_dir
        .join("package")
        .join(format!("{runtime_name}.crate"));
    run_tool(
        tmp.path(),
        "tar",
        &["-xzf", runtime_crate.to_str().unwrap()],
        &[],
    );
    let runtime = tmp.path().join(&runtime_name);
    assert!(runtime.join("src/lib.rs").is_file());
    assert!(unpacked.join("templates").is_dir());
    assert!(
        !unpacked.join("tests/golden").exists(),
        "the golden trees are packaged"
    );

    // Built as `cargo install --locked` builds it, into the target
    // directory the generated projects share (their dependencies overlap).
    let build = Command::new(env!("CARGO"))
        .args(["build", "--locked", "--quiet", "--bin", "rsop"])
        .envs(generated_cargo_env())
        .current_dir(&unpacked)
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let target = generated_cargo_env()
        .into_iter()
        .find(|(k, _)| *k == "CARGO_TARGET_DIR")
        .map(|(_, v)| std::path::PathBuf::from(v))
        .unwrap();
    let binary = target.join("debug/rsop");

    let project = tmp.path().join("demo");
    std::fs::create_dir(&project).unwrap();
    rsop_at(&binary, &project, &["init", "--domain", "example.com"]).success();
    rsop_at(
        &binary,
        &project,
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
    rsop_at(&binary, &project, &["manifests", "--check"]).success();
    assert!(
        project
            .join("config/crd/bases/cache.example.com_memcacheds.yaml")
            .exists()
    );
    // A packaged rsop carries no rsop-runtime: its projects take the published crate.
    assert!(!project.join(".cargo/config.toml").exists());
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains(&format!(
            "rsop-runtime = {{ version = \"{}\"",
            env!("CARGO_PKG_VERSION")
        )),
        "{manifest}"
    );
    // Here the packaged rsop-runtime stands in for crates.io's.
    let patch = format!(
        "patch.crates-io.rsop-runtime.path={:?}",
        runtime.display().to_string()
    );
    for args in [
        &["fetch", "--quiet"][..],
        &["build", "--quiet", "--offline"],
    ] {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(args)
            .args(["--config", &patch])
            .current_dir(&project);
        if args[0] == "build" {
            cmd.envs(generated_cargo_env());
        }
        let output = crate::support::generated_cargo_output(&mut cmd).unwrap();
        assert!(
            output.status.success(),
            "cargo {}: {}",
            args[0],
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// rsop's own workflows pass actionlint, and the release publishes the
/// archives that `cargo binstall` looks for.
#[test]
fn the_ci_and_release_workflows_pass_actionlint_and_match_binstall() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    run_tool(
        root,
        "actionlint",
        &[".github/workflows/ci.yml", ".github/workflows/release.yml"],
        &[],
    );
    let manifest: toml_edit::DocumentMut = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let binstall = &manifest["package"]["metadata"]["binstall"];
    let pkg_url = binstall["pkg-url"].as_str().unwrap();
    let bin_dir = binstall["bin-dir"].as_str().unwrap();
    let release = std::fs::read_to_string(root.join(".github/workflows/release.yml")).unwrap();
    // The archive name and its top directory, as binstall spells them and
    // as the workflow makes them.
    assert!(
        pkg_url.ends_with("/releases/download/v{ version }/rsop-{ target }.tar.gz"),
        "{pkg_url}"
    );
    assert_eq!(bin_dir, "rsop-{ target }/{ bin }{ binary-ext }");
    assert!(release.contains("name=\"rsop-${TARGET}\""), "{release}");
    assert!(
        release.contains("tar -C dist -czf \"dist/${name}.tar.gz\" \"${name}\""),
        "{release}"
    );
    for target in [
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(release.contains(&format!("target: {target}")), "{target}");
    }
}
