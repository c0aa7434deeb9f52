//! Helpers shared by the integration tests: running the real `rsop` binary,
//! snapshotting directory trees, golden-tree comparison and the external
//! tools (cargo, kubectl, kubernetes-validate, hadolint) the gates call.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Set to regenerate every golden tree from the current output.
pub const UPDATE_GOLDEN: &str = "UPDATE_GOLDEN";

/// The result of one `rsop` run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the `rsop` binary built for this test run, in `cwd`.
pub fn rsop(cwd: &Path, args: &[&str]) -> Run {
    rsop_with_env(cwd, args, &[])
}

/// [`rsop`] with extra environment variables.
pub fn rsop_with_env(cwd: &Path, args: &[&str], envs: &[(&str, OsString)]) -> Run {
    run_binary(Path::new(env!("CARGO_BIN_EXE_rsop")), cwd, args, envs)
}

/// [`rsop`] with another build of rsop, `binary`.
pub fn rsop_at(binary: &Path, cwd: &Path, args: &[&str]) -> Run {
    run_binary(binary, cwd, args, &[])
}

/// Where the runs of rsop in the suite put the copy of rsop-runtime their projects build
/// against: one for the whole suite, beside the generated projects' target directory.
pub fn rsop_data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/rsop-data")
}

fn run_binary(binary: &Path, cwd: &Path, args: &[&str], envs: &[(&str, OsString)]) -> Run {
    let mut cmd = Command::new(binary);
    cmd.env("RSOP_DATA_DIR", rsop_data_dir());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let output = cmd
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the rsop binary runs");
    Run {
        code: output
            .status
            .code()
            .expect("rsop exits with a code, not a signal"),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

impl Run {
    /// Asserts success and returns self.
    #[track_caller]
    pub fn success(self) -> Self {
        assert_eq!(
            self.code, 0,
            "rsop failed\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// Every file under `root` (relative path -> bytes), directories included
/// as empty entries so that a stray empty directory is noticed too.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut tree = BTreeMap::new();
    if !root.exists() {
        return tree;
    }
    // git's own files (`rsop init` makes the repository) are not the
    // project's output.
    let walk = walkdir::WalkDir::new(root)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| e.depth() != 1 || e.file_name() != ".git");
    for entry in walk {
        let entry = entry.expect("walk the tree");
        let rel = entry.path().strip_prefix(root).unwrap().to_path_buf();
        if entry.file_type().is_dir() {
            tree.insert(rel, None);
        } else {
            tree.insert(rel, Some(std::fs::read(entry.path()).expect("read file")));
        }
    }
    tree
}

/// Only the files of a snapshot, as text. The patch of `.cargo/config.toml` names a folder of this
/// machine and a hash of rsop-runtime's sources: it reads as a placeholder.
pub fn files(root: &Path) -> BTreeMap<PathBuf, String> {
    snapshot(root)
        .into_iter()
        .filter_map(|(path, bytes)| {
            bytes.map(|b| {
                let text = String::from_utf8(b).expect("generated files are UTF-8");
                let text = if path == Path::new(".cargo/config.toml") {
                    without_machine_paths(&text)
                } else {
                    text
                };
                (path, text)
            })
        })
        .collect()
}

/// `config` (a `.cargo/config.toml`) with the path of each patch made a placeholder.
fn without_machine_paths(config: &str) -> String {
    config
        .lines()
        .map(|line| match line.split_once("{ path = \"") {
            Some((key, _)) => {
                format!("{key}{{ path = \"<rsop data>/runtime/<version>-<hash>\" }}\n")
            }
            None => format!("{line}\n"),
        })
        .collect()
}

/// Compares the tree at `actual` with `tests/golden/<name>/`, file by file,
/// and panics with a unified diff of every difference. With `UPDATE_GOLDEN`
/// set, rewrites the golden tree instead.
#[track_caller]
pub fn assert_golden(actual: &Path, name: &str) {
    assert_tree(
        actual,
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden")
            .join(name),
    );
}

/// Compares the tree at `actual` with the golden tree at `golden`, file by
/// file, with a unified diff of every difference; `UPDATE_GOLDEN` rewrites it.
#[track_caller]
pub fn assert_tree(actual: &Path, golden: &Path) {
    let name = golden.display();
    let actual_files = files(actual);
    if std::env::var_os(UPDATE_GOLDEN).is_some() {
        if golden.exists() {
            std::fs::remove_dir_all(golden).unwrap();
        }
        for (path, text) in &actual_files {
            let target = golden.join(path);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(target, text).unwrap();
        }
        return;
    }
    let expected_files = files(golden);
    let mut report = String::new();
    for (path, expected) in &expected_files {
        match actual_files.get(path) {
            None => {
                report.push_str(&["missing file: ", &path.display().to_string(), "\n"].concat());
            }
            Some(actual) if actual != expected => {
                let diff = similar::TextDiff::from_lines(expected, actual)
                    .unified_diff()
                    .context_radius(3)
                    .header(
                        &format!("golden/{}", path.display()),
                        &format!("actual/{}", path.display()),
                    )
                    .to_string();
                report.push_str(&diff);
            }
            Some(_) => {}
        }
    }
    for path in actual_files.keys() {
        if !expected_files.contains_key(path) {
            report.push_str(&["unexpected file: ", &path.display().to_string(), "\n"].concat());
        }
    }
    assert!(
        report.is_empty(),
        "generated tree differs from {name} \
         (rerun with {UPDATE_GOLDEN}=1 to accept the new output, then review the diff):\n{report}"
    );
}

/// Held by each cargo run in the generated projects' shared target
/// directory, with the project built there last. There a package's units are
/// named by its name, not by its folder, and many projects are
/// `memcached-operator`: their builds take each other's places. A run on
/// another project than the last one built must not find the last one's
/// units fresh (their fingerprints list that project's sources, unchanged),
/// or it would run that project's binaries, with its `config/`. cargo's own
/// lock covers one build, not the run that follows or the next build.
/// The name of that project's package is kept with it: its folder may be
/// gone by the next run.
static GENERATED_CARGO: std::sync::Mutex<Option<(PathBuf, Option<String>)>> =
    std::sync::Mutex::new(None);

thread_local! {
    /// Whether this thread holds [`GENERATED_CARGO`].
    static HOLDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, cargo runs on `project` one after another, under
/// [`GENERATED_CARGO`]; first makes cargo build `project`'s own units again
/// if another project was built last.
pub fn with_generated_cargo<T>(project: &Path, f: impl FnOnce() -> T) -> T {
    /// Marks the lock as no longer held by this thread, also when `f` panics.
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            HOLDING.set(false);
        }
    }
    if HOLDING.get() {
        return f();
    }
    // A test that failed while holding it left nothing half done.
    let mut last = GENERATED_CARGO
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if last.as_ref().is_none_or(|(built, _)| built != project) {
        if let Some((_, Some(previous))) = last.as_ref() {
            drop_own_units(previous);
        }
        let name = package_name(project);
        if let Some(name) = &name {
            drop_own_units(name);
        }
        *last = Some((project.to_owned(), name));
    }
    HOLDING.set(true);
    let _release = Release;
    f()
}

/// The name of the package `project` holds.
fn package_name(project: &Path) -> Option<String> {
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).ok()?;
    let manifest = manifest.parse::<toml_edit::DocumentMut>().ok()?;
    Some(manifest.get("package")?.get("name")?.as_str()?.to_owned())
}

/// Removes the package `name` from the shared target directory: its
/// fingerprints, so that cargo builds its units again, and the artifacts
/// they name, so that the binaries of twenty projects (50-300 MB each) do
/// not pile up on the disk. The uplifted copies in `debug/` stay: a test may
/// still be running one after its build released the lock.
fn drop_own_units(name: &str) {
    let target = generated_cargo_env()
        .into_iter()
        .find(|(key, _)| *key == "CARGO_TARGET_DIR")
        .map(|(_, dir)| PathBuf::from(dir))
        .expect("the generated projects' target directory");
    let Ok(units) = std::fs::read_dir(target.join("debug/.fingerprint")) else {
        return;
    };
    // A unit's fingerprint folder and its artifacts carry one hash.
    let mut hashes = Vec::new();
    for unit in units.flatten() {
        let file_name = unit.file_name();
        let file_name = file_name.to_string_lossy();
        let hash = file_name
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('-'));
        if let Some(hash) =
            hash.filter(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            hashes.push(format!("-{hash}"));
            let _ = std::fs::remove_dir_all(unit.path());
        }
    }
    if hashes.is_empty() {
        return;
    }
    let Ok(artifacts) = std::fs::read_dir(target.join("debug/deps")) else {
        return;
    };
    for artifact in artifacts.flatten() {
        let file_name = artifact.file_name();
        let file_name = file_name.to_string_lossy();
        let stem = file_name.split('.').next().unwrap_or_default();
        if hashes.iter().any(|hash| stem.ends_with(hash.as_str())) {
            let _ = std::fs::remove_file(artifact.path());
        }
    }
}

/// Runs `cmd`, a cargo run in the generated projects' target directory,
/// under [`GENERATED_CARGO`].
pub fn generated_cargo_output(cmd: &mut Command) -> std::io::Result<Output> {
    let project = cmd
        .get_current_dir()
        .map(Path::to_owned)
        .unwrap_or_default();
    with_generated_cargo(&project, || cmd.output())
}

/// Runs an external program, panicking with its output when it fails.
#[track_caller]
pub fn run_tool(cwd: &Path, program: &str, args: &[&str], envs: &[(&str, OsString)]) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(cwd);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let shared = program == "cargo" && envs.iter().any(|(k, _)| *k == "CARGO_TARGET_DIR");
    let output = if shared {
        generated_cargo_output(&mut cmd)
    } else {
        cmd.output()
    };
    let output = output.unwrap_or_else(|e| {
        panic!(
            "cannot run `{program}` ({e}); the test suite needs it on PATH \
             (.ci/run installs it)"
        )
    });
    assert!(
        output.status.success(),
        "`{program} {}` failed in {}\n--- stdout\n{}\n--- stderr\n{}",
        args.join(" "),
        cwd.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The environment of every cargo run on a generated project.
///
/// One target directory serves them all, so kube and k8s-openapi compile
/// once per test run. Debug info and incremental state are off: nothing
/// reads them here, and with them each generated project's own artifacts
/// take about 1 GB (its rlib alone 250-350 MB), enough to fill a CI disk.
pub fn generated_cargo_env() -> Vec<(&'static str, OsString)> {
    let target = std::env::var_os("RSOP_GENERATED_TARGET_DIR").unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/generated")
            .into_os_string()
    });
    vec![
        ("CARGO_TARGET_DIR", target),
        ("CARGO_PROFILE_DEV_DEBUG", "0".into()),
        ("CARGO_INCREMENTAL", "0".into()),
    ]
}

/// Renders `kustomize_dir` with `kubectl kustomize` and validates every
/// object with kubernetes-validate (strict: unknown fields are errors).
/// Returns the rendered YAML.
pub fn render_and_validate(project: &Path, kustomize_dir: &str) -> String {
    let rendered = run_tool(project, "kubectl", &["kustomize", kustomize_dir], &[]);
    let yaml = String::from_utf8(rendered.stdout).unwrap();
    validate(project, &yaml);
    yaml
}

/// Validates every object of a YAML stream with kubernetes-validate
/// (strict: unknown fields are errors).
pub fn validate(project: &Path, yaml: &str) {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), yaml).unwrap();
    // The schemas of the Kubernetes version the generated project compiles for.
    let version = format!("{}.0", rsop::versions::KUBERNETES);
    run_tool(
        project,
        "kubernetes-validate",
        &[
            "--strict",
            "--kubernetes-version",
            &version,
            file.path().to_str().unwrap(),
        ],
        &[],
    );
}

/// Copies the tree at `from` to `to`, leaving out the top-level entry
/// `skip` if given.
pub fn copy_tree(from: &Path, to: &Path, skip: Option<&str>) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(from).unwrap();
        if skip.is_some_and(|s| rel.starts_with(s)) {
            continue;
        }
        let target = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs `rsop args` in `root` and checks that it is refused as it should
/// be: exit `code`, every `needles` part in stderr, no panic, no file
/// changed. Returns what is wrong, with the stderr, or `None`.
pub fn refusal_problems(root: &Path, args: &[&str], code: i32, needles: &[&str]) -> Option<String> {
    refusal_problems_with_env(root, args, &[], code, needles)
}

/// [`refusal_problems`] with extra environment variables.
pub fn refusal_problems_with_env(
    root: &Path,
    args: &[&str],
    envs: &[(&str, OsString)],
    code: i32,
    needles: &[&str],
) -> Option<String> {
    let before = snapshot(root);
    let run = rsop_with_env(root, args, envs);
    let mut problems = Vec::new();
    if run.code != code {
        problems.push(format!("exit code {} (want {code})", run.code));
    }
    for needle in needles {
        if !run.stderr.contains(needle) {
            problems.push(format!("stderr lacks {needle:?}"));
        }
    }
    if run.stderr.contains("panicked") || run.stderr.contains("RUST_BACKTRACE") {
        problems.push("it panicked".into());
    }
    if snapshot(root) != before {
        problems.push("files changed".into());
    }
    (!problems.is_empty()).then(|| format!("{}\n--- stderr\n{}", problems.join("; "), run.stderr))
}

/// The YAML files under `root` (`*.yaml`, `*.yml` and `PROJECT`), except
/// Helm templates: they are YAML only once Helm has rendered them.
pub fn yaml_files(root: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|entry| entry.expect("walk the tree").into_path())
        .filter(|path| {
            let yaml = path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"));
            (yaml || path.file_name().is_some_and(|n| n == "PROJECT"))
                && !std::fs::read_to_string(path).is_ok_and(|text| text.contains("{{"))
        })
        .collect()
}

/// Reads every YAML file of `paths` with `PyYAML`'s `safe_load_all` (a YAML
/// 1.1 reader, as ansible, pre-commit and kubernetes-validate use) and with
/// `serde_yaml_ng` (YAML 1.2, rsop's own reader), and returns one line per
/// file where they disagree or one cannot read it. serde reading back what
/// `rsop::yaml::to_string` wrote gives the value it was given, so agreeing
/// with serde is agreeing with the JSON value rsop wrote.
pub fn yaml_reader_disagreements(cwd: &Path, paths: &[PathBuf]) -> Vec<String> {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/yaml_json.py");
    let mut args = vec![tool.to_str().unwrap()];
    args.extend(paths.iter().map(|p| p.to_str().unwrap()));
    let out = run_tool(cwd, "python3", &args, &[]);
    let mut pyyaml: BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(&out.stdout).expect("yaml_json.py prints JSON");
    let mut problems = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(path).unwrap();
        let serde: Result<Vec<serde_json::Value>, _> = serde_yaml_ng::Deserializer::from_str(&text)
            .map(serde::Deserialize::deserialize)
            .collect();
        let python = pyyaml.remove(path.to_str().unwrap()).unwrap();
        match serde {
            Err(e) => problems.push(format!("{}: serde cannot read it: {e}", path.display())),
            Ok(_) if python.get("error").is_some() => problems.push(format!(
                "{}: PyYAML cannot read it: {}",
                path.display(),
                python["error"]
            )),
            Ok(documents) if serde_json::Value::Array(documents.clone()) != python => {
                problems.push(format!(
                    "{}: PyYAML reads\n{python}\nbut serde reads\n{}",
                    path.display(),
                    serde_json::Value::Array(documents)
                ));
            }
            Ok(_) => {}
        }
    }
    problems
}

/// `rsop manifests` found nothing to say about the role against the calls:
/// no warning and no call left unchecked.
#[track_caller]
pub fn assert_no_rbac_findings(stderr: &str) {
    let findings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:") || l.contains("not checked against the role"))
        .collect();
    assert!(
        findings.is_empty(),
        "RBAC findings:\n{}",
        findings.join("\n")
    );
}
