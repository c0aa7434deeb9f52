//! Hybrid derivation: `rsop manifests` derives statically what it can and
//! builds just the kinds whose schema needs code with the project's own
//! kube-derive, in a library with a private module, a binary-only crate, a
//! binary under `src/bin/` and a workspace member; `--cargo` (every kind
//! from `K::crd()`) agrees with it; `--static` refuses with the list;
//! `--check` sees drift in built kinds; an interrupted build leaves no
//! process behind.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::{generated_cargo_env, refusal_problems_with_env, rsop_with_env, snapshot};

/// A kind rsop derives from the sources.
const PLAIN: &str = r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A kind rsop reads statically.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "hybrid.example.com", version = "v1", kind = "Plain", namespaced)]
pub struct PlainSpec {
    /// How many.
    pub size: i32,
}
"#;

/// A kind whose schema only running code gives: a hand `JsonSchema` impl
/// that builds its enum in a loop over a constant.
const CODED: &str = r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const LEVELS: [&str; 3] = ["low", "mid", "high"];

/// A kind whose schema is code.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "hybrid.example.com", version = "v1", kind = "Coded", namespaced)]
pub struct CodedSpec {
    pub level: Level,
}

#[derive(Deserialize, Serialize, Clone, Debug)]
pub struct Level(String);

impl JsonSchema for Level {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Level".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut values = Vec::new();
        for level in LEVELS {
            values.push(serde_json::Value::from(level));
        }
        schemars::json_schema!({ "type": "string", "enum": values })
    }
}
"#;

/// The line of `impl JsonSchema for Level` in [`CODED`].
fn coded_impl_line() -> usize {
    CODED
        .lines()
        .position(|l| l.starts_with("impl JsonSchema"))
        .unwrap()
        + 1
}

fn dependencies(workspace: bool) -> String {
    let spec = |name: &str, version: &str, features: &str| {
        if workspace {
            format!("{name} = {{ workspace = true }}\n")
        } else {
            format!("{name} = {{ version = \"{version}\"{features} }}\n")
        }
    };
    [
        spec(
            "k8s-openapi",
            rsop::versions::K8S_OPENAPI,
            &format!(
                ", default-features = false, features = [\"{}\", \"schemars\"]",
                rsop::versions::context().k8s_openapi_feature
            ),
        ),
        spec(
            "kube",
            rsop::versions::KUBE,
            ", default-features = false, features = [\"derive\"]",
        ),
        spec("schemars", rsop::versions::SCHEMARS, ""),
        spec("serde", "1.0", ", features = [\"derive\"]"),
        spec("serde_json", "1.0", ""),
    ]
    .concat()
}

fn package(name: &str, workspace: bool) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n{}",
        dependencies(workspace)
    )
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The conformance fixture's lock file pins the dependency versions the
/// shared target directory already has built.
fn write_lock(dir: &Path) {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance/Cargo.lock");
    std::fs::copy(lock, dir.join("Cargo.lock")).unwrap();
}

/// A library whose kinds live in a private module tree.
fn library(root: &Path) -> PathBuf {
    write(&root.join("Cargo.toml"), &package("hybrid-lib", false));
    // Its own tests no longer compile: the build is not theirs to run.
    write(
        &root.join("src/lib.rs"),
        "mod kinds;\n\npub use kinds::{coded::Coded, plain::Plain};\n\n\
         // A test-only static, used by a test-only statement of ordinary code.\n\
         #[cfg(test)]\nstatic CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);\n\n\
         pub fn touch() {\n    #[cfg(test)]\n    CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn stale() {\n        let _ = crate::kinds::plain::PlainSpec { size: 1, gone: 2 };\n    }\n}\n",
    );
    write(
        &root.join("src/kinds/mod.rs"),
        "pub mod coded;\npub mod plain;\n",
    );
    write(&root.join("src/kinds/plain.rs"), PLAIN);
    write(&root.join("src/kinds/coded.rs"), CODED);
    write_lock(root);
    root.to_path_buf()
}

/// A binary-only crate: the kinds are in modules of `main.rs`.
fn binary(root: &Path) -> PathBuf {
    write(&root.join("Cargo.toml"), &package("hybrid-bin", false));
    write(
        &root.join("src/main.rs"),
        "mod coded;\nmod plain;\n\nfn main() {\n    println!(\"{:?}\", coded::LEVELS);\n}\n",
    );
    write(&root.join("src/plain.rs"), PLAIN);
    write(&root.join("src/coded.rs"), CODED);
    write_lock(root);
    root.to_path_buf()
}

/// A binary under `src/bin/` with its modules in its own folder, next to
/// a second binary.
fn bin_dir(root: &Path) -> PathBuf {
    write(&root.join("Cargo.toml"), &package("hybrid-bins", false));
    write(
        &root.join("src/bin/operator/main.rs"),
        "mod coded;\nmod plain;\n\nfn main() {\n    println!(\"{:?}\", coded::LEVELS);\n}\n",
    );
    write(&root.join("src/bin/operator/plain.rs"), PLAIN);
    write(&root.join("src/bin/operator/coded.rs"), CODED);
    write(&root.join("src/bin/tool.rs"), "fn main() {}\n");
    write_lock(root);
    root.to_path_buf()
}

/// A workspace whose `types` member holds the kinds (dependencies inherited
/// from the workspace) and whose `app` member uses it by path.
fn workspace(root: &Path) -> PathBuf {
    write(
        &root.join("Cargo.toml"),
        &format!(
            "[workspace]\nmembers = [\"crates/*\"]\nresolver = \"3\"\n\n[workspace.dependencies]\n{}",
            dependencies(false)
        ),
    );
    let types = root.join("crates/types");
    write(&types.join("Cargo.toml"), &package("hybrid-types", true));
    write(
        &types.join("src/lib.rs"),
        "pub mod coded;\nmod plain;\n\npub use plain::Plain;\n",
    );
    write(&types.join("src/plain.rs"), PLAIN);
    write(&types.join("src/coded.rs"), CODED);
    write(
        &root.join("crates/app/Cargo.toml"),
        "[package]\nname = \"hybrid-app\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\nhybrid-types = { path = \"../types\" }\n",
    );
    write(
        &root.join("crates/app/src/main.rs"),
        "fn main() {\n    println!(\"{:?}\", hybrid_types::coded::LEVELS);\n}\n",
    );
    write_lock(root);
    types
}

/// Writes a project under the given directory; returns the package's root.
type Layout = fn(&Path) -> PathBuf;

#[test]
fn kinds_that_need_code_are_built_with_the_projects_own_kube_derive() {
    let envs = generated_cargo_env();
    let layouts: [(&str, Layout, &str); 4] = [
        ("library, private modules", library, "src/kinds/coded.rs"),
        ("binary-only crate", binary, "src/coded.rs"),
        ("binary under src/bin", bin_dir, "src/bin/operator/coded.rs"),
        ("workspace member", workspace, "src/coded.rs"),
    ];
    for (name, make, coded_file) in layouts {
        let tmp = tempfile::tempdir().unwrap();
        let dir = make(tmp.path());
        let crd = |kind: &str| {
            std::fs::read_to_string(
                dir.join(format!("config/crd/bases/hybrid.example.com_{kind}.yaml")),
            )
            .unwrap()
        };

        // `--static` refuses, naming the construct, and writes nothing.
        let construct = format!("{coded_file}:{}:1", coded_impl_line());
        if let Some(problems) = refusal_problems_with_env(
            &dir,
            &["manifests", "--static"],
            &envs,
            1,
            &[
                "`Level` implements `JsonSchema` by hand",
                &construct,
                "drop `--static`",
                "nothing was written",
            ],
        ) {
            panic!("{name}: {problems}");
        }

        // Hybrid: one note per construct, one build for the kind that needs it.
        let run = rsop_with_env(&dir, &["manifests"], &envs).success();
        assert!(
            run.stderr.contains(&format!(
                "note: {construct}: `Level` implements `JsonSchema` by hand"
            )) && run
                .stderr
                .contains("built the schema of 1 kind with cargo in"),
            "{name}: {}",
            run.stderr
        );
        assert!(crd("codeds").contains("- mid"), "{name}: {}", crd("codeds"));
        assert!(crd("plains").contains("description: How many."), "{name}");

        // Every kind from `K::crd()` gives the same files.
        let exact = rsop_with_env(&dir, &["manifests", "--cargo", "--check"], &envs);
        assert_eq!(
            (exact.code, exact.stdout.as_str()),
            (0, ""),
            "{name}: hybrid and kube-derive disagree:\n{}",
            exact.stderr
        );
        // So says the self-check, which writes nothing.
        let before = snapshot(&dir);
        let verify = rsop_with_env(&dir, &["manifests", "--verify"], &envs);
        assert_eq!(
            (verify.code, verify.stdout.as_str()),
            (
                0,
                "verify: 2 CRD versions, 0 differ from the project's kube-derive\n"
            ),
            "{name}: {}",
            verify.stderr
        );
        assert_eq!(snapshot(&dir), before, "{name}: --verify wrote");

        // Drift in a built kind is caught by `--check`, which writes nothing.
        let coded = dir.join(coded_file);
        let source = std::fs::read_to_string(&coded).unwrap();
        write(
            &coded,
            &source.replace(
                "[&str; 3] = [\"low\", \"mid\", \"high\"]",
                "[&str; 4] = [\"low\", \"mid\", \"high\", \"max\"]",
            ),
        );
        let before = snapshot(&dir);
        let check = rsop_with_env(&dir, &["manifests", "--check"], &envs);
        assert_eq!(check.code, 1, "{name}: {}{}", check.stdout, check.stderr);
        assert!(
            check.stdout.contains("+                - max"),
            "{name}: {}",
            check.stdout
        );
        assert_eq!(snapshot(&dir), before, "{name}: --check wrote");
        assert!(
            !dir.join("target").exists(),
            "{name}: the build wrote into the project"
        );
    }
}

/// A compile error in the user's crate is shown as cargo reports it, under
/// rsop's summary of why a build was needed; as with any build that fails,
/// the kinds derived statically are written, the built kind's CRD is left
/// as it is, and rsop exits 1.
#[test]
fn a_compile_error_in_a_built_kind_is_reported_as_cargo_reports_it() {
    let envs = generated_cargo_env();
    let tmp = tempfile::tempdir().unwrap();
    let dir = library(tmp.path());
    let coded = dir.join("src/kinds/coded.rs");
    let source = std::fs::read_to_string(&coded).unwrap();
    write(&coded, &source.replace("values.push(", "values.push_it("));
    let run = rsop_with_env(&dir, &["manifests"], &envs);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for needle in [
        "no method named `push_it` found",
        "the crdgen build of `Coded` failed",
        "`Level` implements `JsonSchema` by hand",
        "note: the CRDs of `Coded` are left as they are on disk",
    ] {
        assert!(
            run.stderr.contains(needle),
            "{needle:?} not in\n{}",
            run.stderr
        );
    }
    assert!(
        dir.join("config/crd/bases/hybrid.example.com_plains.yaml")
            .is_file()
    );
    assert!(
        !dir.join("config/crd/bases/hybrid.example.com_codeds.yaml")
            .exists()
    );
}

/// SIGINT during the build stops cargo and everything it started.
#[test]
fn an_interrupted_build_leaves_no_process_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("slow");
    // No dependencies, and a build script that outlasts the test: the build
    // is certainly running when the signal comes.
    write(
        &dir.join("Cargo.toml"),
        "[package]\nname = \"slow\"\nversion = \"0.1.0\"\nedition = \"2024\"\nbuild = \"build.rs\"\n",
    );
    write(
        &dir.join("build.rs"),
        "fn main() {\n    std::thread::sleep(std::time::Duration::from_secs(300));\n}\n",
    );
    write(
        &dir.join("src/lib.rs"),
        "#[derive(CustomResource)]\n#[kube(group = \"slow.example.com\", version = \"v1\", kind = \"Slow\")]\npub struct SlowSpec {\n    pub x: i32,\n}\n",
    );
    let target = tmp.path().join("target");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rsop"))
        .args(["manifests", "--cargo"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", &target)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();

    let marker = target.display().to_string();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !processes_using(&marker)
        .iter()
        .any(|cmd| cmd.contains("build-script-build"))
    {
        assert!(Instant::now() < deadline, "the build script never started");
        assert!(
            child.try_wait().unwrap().is_none(),
            "rsop ended before the build ran"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "rsop's exit after SIGINT");

    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = processes_using(&marker);
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "processes left behind: {left:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The command lines of the processes whose command line or working
/// directory mentions `marker`.
fn processes_using(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if !entry
            .file_name()
            .to_string_lossy()
            .bytes()
            .all(|b| b.is_ascii_digit())
        {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        let cwd = std::fs::read_link(entry.path().join("cwd"))
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let zombie = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        });
        if !zombie && (cmdline.contains(marker) || cwd.contains(marker)) {
            found.push(format!("{cmdline} (in {cwd})"));
        }
    }
    found
}

/// A build that cannot run (here, a git dependency with cargo offline)
/// costs only the kinds that needed it: rsop says which and why, writes
/// every CRD it derived statically, leaves the other kinds' CRDs on disk as
/// they are, and exits 1.
#[test]
fn a_build_that_cannot_run_leaves_only_its_kinds_unwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let root = library(tmp.path());
    let manifest = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    write(
        &manifest,
        &format!("{text}vendored-client = {{ git = \"https://git.invalid/vendored-client\" }}\n"),
    );
    let stale = "# the Coded CRD as the project last wrote it\n";
    let coded = root.join("config/crd/bases/hybrid.example.com_codeds.yaml");
    write(&coded, stale);
    let mut env = generated_cargo_env();
    env.push(("CARGO_NET_OFFLINE", "true".into()));
    let run = rsop_with_env(&root, &["manifests"], &env);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    for needle in [
        "rsop builds these kinds because their schema needs code to run",
        &format!("src/kinds/coded.rs:{}", coded_impl_line()),
        "note: the CRDs of `Coded` are left as they are on disk; the other manifests are derived statically",
    ] {
        assert!(
            run.stderr.contains(needle),
            "{needle:?} not in\n{}",
            run.stderr
        );
    }
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&coded).unwrap(), stale);
    let plain =
        std::fs::read_to_string(root.join("config/crd/bases/hybrid.example.com_plains.yaml"))
            .unwrap();
    assert!(plain.contains("size:"), "{plain}");
}
