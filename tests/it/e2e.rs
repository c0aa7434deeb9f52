//! The end-to-end suite and the devcontainer of a generated project: what
//! `init` writes, what `create api` and `create webhook` add, and what
//! `edit --e2e` and `edit --devcontainer` give a project that had neither.
//! The suite itself compiles and runs (its checks against a recorded API
//! server) in every generated project's `cargo test` gate.

use std::path::Path;

use crate::support::{files, rsop, run_tool};

/// The files of the suite and of the devcontainer.
const SUITE: &[&str] = &[
    "tests/e2e/main.rs",
    ".github/workflows/test-e2e.yml",
    ".devcontainer/devcontainer.json",
    ".devcontainer/post-install.sh",
];

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `create api` and `create webhook` on `dir`: a kind with a controller and
/// every webhook, one of another group with the `--image` controller, and a
/// validating webhook on pods.
fn add_kinds(dir: &Path) {
    for args in [
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
        ][..],
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
            "--programmatic-validation",
        ],
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Memcached",
            "--controller=false",
        ],
        &[
            "create",
            "webhook",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--conversion",
        ],
        &[
            "create",
            "api",
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Frontend",
            "--image",
            "nginx:1.29",
        ],
        &[
            "create",
            "webhook",
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--programmatic-validation",
        ],
    ] {
        rsop(dir, args).success();
    }
}

/// A project made with the suite has a test of each kind's sample and of each
/// webhook, and workflows actionlint passes. `edit --e2e` and `edit
/// --devcontainer` give a project made without them the very same files, and
/// `=false` takes them away again, the Makefile's targets included.
#[test]
fn edit_gives_a_project_the_suite_init_and_the_kinds_would_have() {
    let tmp = tempfile::tempdir().unwrap();
    let with = tmp.path().join("with");
    let without = tmp.path().join("without");
    for dir in [&with, &without] {
        std::fs::create_dir(dir).unwrap();
    }
    let init = ["init", "--domain", "example.com", "--project-name", "demo"];
    rsop(&with, &init).success();
    rsop(
        &without,
        &[&init[..], &["--e2e=false", "--devcontainer=false"]].concat(),
    )
    .success();
    let makefile_without = read(&without, "Makefile");
    assert!(!makefile_without.contains("test-e2e"), "{makefile_without}");
    add_kinds(&with);
    add_kinds(&without);
    for path in SUITE {
        assert!(!without.join(path).exists(), "{path} was written");
    }

    let main = read(&with, "tests/e2e/main.rs");
    for test in [
        "fn the_manager_runs()",
        "fn the_metrics_endpoint_answers_an_authorized_scraper()",
        "fn cache_v1alpha1_memcached_reconciles()",
        "fn cache_v1alpha1_memcached_defaulting_webhook_is_served()",
        "fn cache_v1alpha1_memcached_validation_webhook_is_served()",
        "fn cache_v1alpha1_memcached_conversion_webhook_is_served()",
        "fn web_v1_frontend_reconciles()",
        "fn core_v1_pod_validation_webhook_is_served()",
    ] {
        assert_eq!(main.matches(test).count(), 1, "{test} in:\n{main}");
    }
    // The second version has no controller: nothing reconciles its sample on its own.
    assert!(!main.contains("fn cache_v1_memcached_reconciles"), "{main}");
    assert!(
        main.contains(r#"e2e::reconciles(&api, &sample, "Available")"#),
        "{main}"
    );
    assert!(main.contains("spec.foo must not be empty"), "{main}");
    assert!(main.contains(r#""memcacheds.cache.example.com""#), "{main}");
    assert!(main.contains(r#""/validate--v1-pod""#), "{main}");
    run_tool(
        &with,
        "actionlint",
        &[".github/workflows/test-e2e.yml", ".github/workflows/ci.yml"],
        &[],
    );

    rsop(&without, &["edit", "--e2e", "--devcontainer"]).success();
    for path in SUITE.iter().chain(&["Makefile", "PROJECT"]) {
        assert_eq!(read(&without, path), read(&with, path), "{path}");
    }

    rsop(&without, &["edit", "--e2e=false", "--devcontainer=false"]).success();
    for path in SUITE {
        assert!(!without.join(path).exists(), "{path} is left");
    }
    assert_eq!(read(&without, "Makefile"), makefile_without);
    assert!(read(&without, "PROJECT").contains("e2e: false\ndevcontainer: false\n"));
}

/// A project from an rsop before the suite records no `e2e` and has no
/// `tests/e2e`: `create api` works as before and writes no test, until `edit
/// --e2e` brings the suite with the kind's test in it.
#[test]
fn a_project_from_before_the_suite_gets_it_with_edit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    rsop(
        dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "old",
            "--e2e=false",
        ],
    )
    .success();
    let project = read(dir, "PROJECT").replace("e2e: false\n", "");
    std::fs::write(dir.join("PROJECT"), project).unwrap();
    rsop(
        dir,
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
    assert!(!dir.join("tests/e2e").exists());
    rsop(dir, &["edit", "--e2e"]).success();
    let main = read(dir, "tests/e2e/main.rs");
    assert!(
        main.contains("fn cache_v1_memcached_reconciles()"),
        "{main}"
    );
    assert!(read(dir, "Makefile").contains("\ntest-e2e: setup-test-e2e"));
}

/// The devcontainer is JSON that runs the script it ships, and the script is
/// valid bash.
#[test]
fn the_devcontainer_runs_its_own_script() {
    let tmp = tempfile::tempdir().unwrap();
    rsop(tmp.path(), &["init", "--domain", "example.com"]).success();
    let all = files(tmp.path());
    let config: serde_json::Value =
        serde_json::from_str(&all[Path::new(".devcontainer/devcontainer.json")])
            .expect("devcontainer.json is JSON");
    let command = config["onCreateCommand"].as_str().expect("a command");
    let script = command.strip_prefix("bash ").expect("a bash script");
    assert!(
        all.contains_key(Path::new(script)),
        "{script} is not written"
    );
    assert!(
        config["features"]
            .as_object()
            .is_some_and(|f| f.keys().any(|k| k.contains("docker-in-docker"))),
        "{config}"
    );
    run_tool(tmp.path(), "bash", &["-n", script], &[]);
}
