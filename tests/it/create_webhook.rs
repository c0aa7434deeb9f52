//! `rsop create webhook`: the project of docs/webhooks.md (a defaulting and
//! validating webhook on one kind, a conversion webhook between the two
//! versions of another, a validating webhook on Kubernetes' `Pod`), made by
//! running the page's commands, compared with its golden tree and put through
//! the generated project's gates (its own tests drive the webhook server with
//! real reviews); re-runs, `--dry-run` and bad input.

use std::path::{Path, PathBuf};

use crate::generated::cargo_gates;
use crate::support::{assert_golden, refusal_problems, render_and_validate, rsop, snapshot};
use crate::tutorial::{commands, run_commands};

fn run(dir: &Path, args: &[&str]) {
    rsop(dir, args).success();
}

fn init(dir: &Path) {
    run(
        dir,
        &["init", "--domain", "example.com", "--project-name", "demo"],
    );
}

/// `create api` for `cache/<version>/Memcached`, a controller for the first.
fn memcached(dir: &Path, version: &str, controller: bool) {
    let controller = format!("--controller={controller}");
    run(
        dir,
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            version,
            "--kind",
            "Memcached",
            &controller,
        ],
    );
}

fn webhook(dir: &Path, args: &[&str]) {
    let mut all = vec!["create", "webhook"];
    all.extend_from_slice(args);
    run(dir, &all);
}

const MEMCACHED_HUB: &[&str] = &[
    "--group",
    "cache",
    "--version",
    "v1alpha1",
    "--kind",
    "Memcached",
];

/// The project of the golden tree: the one docs/webhooks.md makes, by
/// running its commands (their `cargo test` included).
fn webhook_project(tmp: &Path) -> PathBuf {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/webhooks.md"))
            .unwrap();
    let commands = commands(&text);
    assert!(
        commands.len() >= 10,
        "the page lost its commands: {commands:?}"
    );
    run_commands(&commands, tmp)
}

#[test]
fn webhooks_of_own_and_kubernetes_kinds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = webhook_project(tmp.path());
    // The page's `cargo test` resolved the dependencies: the lock file is
    // cargo's, of the day's crates.io, not the scaffold's.
    std::fs::remove_file(dir.join("Cargo.lock")).unwrap();
    assert_golden(&dir, "create-webhook");

    let check = rsop(&dir, &["manifests", "--check"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (0, ""),
        "manifests drift right after create webhook: {}",
        check.stderr
    );
    crate::support::assert_no_rbac_findings(&check.stderr);
    let yaml = render_and_validate(&dir, "config/default");
    let objects: Vec<&str> = yaml.split("\n---\n").collect();
    let object = |kind: &str, name: &str| {
        objects
            .iter()
            .find(|o| {
                o.contains(&format!("kind: {kind}\n")) && o.contains(&format!("name: {name}\n"))
            })
            .unwrap_or_else(|| panic!("no {kind} {name} in:\n{yaml}"))
    };
    let injected =
        "cert-manager.io/inject-ca-from: webhook-operator-system/webhook-operator-serving-cert";
    for (kind, name) in [
        (
            "MutatingWebhookConfiguration",
            "webhook-operator-mutating-webhook-configuration",
        ),
        (
            "ValidatingWebhookConfiguration",
            "webhook-operator-validating-webhook-configuration",
        ),
        ("CustomResourceDefinition", "memcacheds.cache.example.com"),
    ] {
        let o = object(kind, name);
        assert!(o.contains(injected), "{o}");
        assert!(o.contains("name: webhook-operator-webhook-service"), "{o}");
        assert!(o.contains("namespace: webhook-operator-system"), "{o}");
    }
    assert!(
        object("CustomResourceDefinition", "memcacheds.cache.example.com")
            .contains("strategy: Webhook")
    );
    assert!(
        !object("CustomResourceDefinition", "cronjobs.batch.example.com").contains("conversion:")
    );
    let cert = object("Certificate", "webhook-operator-serving-cert");
    assert!(
        cert.contains("- webhook-operator-webhook-service.webhook-operator-system.svc\n"),
        "{cert}"
    );
    assert!(
        cert.contains("name: webhook-operator-selfsigned-issuer"),
        "{cert}"
    );
    let deployment = object("Deployment", "webhook-operator-controller-manager");
    for expected in [
        "containerPort: 9443",
        "mountPath: /tmp/k8s-webhook-server/serving-certs",
        "secretName: webhook-server-cert",
    ] {
        assert!(deployment.contains(expected), "{expected}:\n{deployment}");
    }
    object("Service", "webhook-operator-webhook-service");
    object("Issuer", "webhook-operator-selfsigned-issuer");
    let policies = render_and_validate(&dir, "config/network-policy");
    assert!(
        policies.contains("name: allow-webhook-traffic"),
        "{policies}"
    );
    cargo_gates(&dir);
}

#[test]
fn multigroup_webhooks_live_in_their_group() {
    let tmp = tempfile::tempdir().unwrap();
    run(
        tmp.path(),
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "demo",
            "--multigroup",
        ],
    );
    memcached(tmp.path(), "v1", true);
    webhook(
        tmp.path(),
        &[
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Memcached",
            "--defaulting",
        ],
    );
    let read = |p: &str| std::fs::read_to_string(tmp.path().join(p)).unwrap();
    assert!(
        read("src/webhooks/cache/memcached.rs").contains("use crate::api::cache::v1::Memcached;")
    );
    assert!(read("src/webhooks/cache/mod.rs").contains("pub mod memcached;"));
    let index = read("src/webhooks/mod.rs");
    assert!(index.contains("pub mod cache;"), "{index}");
    assert!(
        index.contains("cache::memcached::register(&mut webhooks);"),
        "{index}"
    );
}

#[test]
fn forced_rerun_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path());
    memcached(tmp.path(), "v1alpha1", true);
    memcached(tmp.path(), "v1", false);
    let admission = [
        MEMCACHED_HUB,
        &["--defaulting", "--programmatic-validation"],
    ]
    .concat();
    webhook(tmp.path(), &admission);
    webhook(tmp.path(), &[MEMCACHED_HUB, &["--conversion"]].concat());
    let first = snapshot(tmp.path());
    webhook(tmp.path(), &[admission.as_slice(), &["--force"]].concat());
    webhook(
        tmp.path(),
        &[MEMCACHED_HUB, &["--conversion", "--force"]].concat(),
    );
    assert_eq!(snapshot(tmp.path()), first);
}

#[test]
fn dry_run_lists_what_a_real_run_writes_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    init(tmp.path());
    memcached(tmp.path(), "v1", true);
    let before = snapshot(tmp.path());
    let args = [
        &["create", "webhook"][..],
        &["--group", "cache", "--version", "v1", "--kind", "Memcached"][..],
        &["--defaulting", "--dry-run"],
    ]
    .concat();
    let dry = rsop(tmp.path(), &args).success();
    assert_eq!(snapshot(tmp.path()), before, "--dry-run wrote");
    for line in [
        "create  src/webhooks/memcached.rs",
        "update  src/main.rs",
        "update  Cargo.toml",
        "create  config/certmanager/certificate-webhook.yaml",
        "update  config/default/kustomization.yaml",
        "update  PROJECT",
    ] {
        assert!(dry.stdout.contains(line), "{line}:\n{}", dry.stdout);
    }
    let real = rsop(tmp.path(), &args[..args.len() - 1]).success();
    for line in dry
        .stdout
        .lines()
        .filter(|l| l.starts_with("create") || l.starts_with("update"))
    {
        assert!(
            real.stdout.contains(line),
            "{line} not in:\n{}",
            real.stdout
        );
    }
}

struct Bad {
    name: &'static str,
    setup: fn(&Path),
    args: &'static [&'static str],
    code: i32,
    stderr: &'static [&'static str],
}

fn nothing(_: &Path) {}

fn one_version(dir: &Path) {
    init(dir);
    memcached(dir, "v1alpha1", true);
}

fn two_versions(dir: &Path) {
    one_version(dir);
    memcached(dir, "v1", false);
}

fn with_defaulting(dir: &Path) {
    two_versions(dir);
    webhook(dir, &[MEMCACHED_HUB, &["--defaulting"]].concat());
}

const BAD: &[Bad] = &[
    Bad {
        name: "not a project",
        setup: nothing,
        args: &[
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Memcached",
            "--defaulting",
        ],
        code: 1,
        stderr: &["is not an rsop project"],
    },
    Bad {
        name: "no webhook asked for",
        setup: one_version,
        args: MEMCACHED_HUB,
        code: 1,
        stderr: &["no webhook to create", "--defaulting"],
    },
    Bad {
        name: "unknown kind",
        setup: one_version,
        args: &[
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Redis",
            "--defaulting",
        ],
        code: 1,
        stderr: &["the project has no kind `Redis`", "rsop create api"],
    },
    Bad {
        name: "unknown version of a kind",
        setup: one_version,
        args: &[
            "--group",
            "cache",
            "--version",
            "v2",
            "--kind",
            "Memcached",
            "--defaulting",
        ],
        code: 1,
        stderr: &["has no version `v2`", "v1alpha1"],
    },
    Bad {
        name: "unknown Kubernetes kind",
        setup: one_version,
        args: &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pood",
            "--defaulting",
        ],
        code: 1,
        stderr: &["unknown Kubernetes kind", "Pod"],
    },
    Bad {
        name: "conversion of a Kubernetes kind",
        setup: one_version,
        args: &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--conversion",
        ],
        code: 1,
        stderr: &["is a Kubernetes kind"],
    },
    Bad {
        name: "conversion of a kind with one version",
        setup: one_version,
        args: &[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--conversion",
        ],
        code: 1,
        stderr: &["has one version", "rsop create api"],
    },
    Bad {
        name: "conversion through a version that is not stored",
        setup: two_versions,
        args: &[
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Memcached",
            "--conversion",
        ],
        code: 1,
        stderr: &["not the storage version", "--version v1alpha1"],
    },
    Bad {
        name: "unknown spoke",
        setup: two_versions,
        args: &[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--conversion",
            "--spoke",
            "v3",
        ],
        code: 1,
        stderr: &["`--spoke v3`", "its versions are v1alpha1, v1"],
    },
    Bad {
        name: "the hub as a spoke",
        setup: two_versions,
        args: &[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--conversion",
            "--spoke",
            "v1alpha1",
        ],
        code: 1,
        stderr: &["is the hub itself"],
    },
    Bad {
        name: "spoke without conversion",
        setup: two_versions,
        args: &[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--defaulting",
            "--spoke",
            "v1",
        ],
        code: 2,
        stderr: &["--conversion"],
    },
    Bad {
        name: "the same webhook twice",
        setup: with_defaulting,
        args: &[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--defaulting",
        ],
        code: 1,
        stderr: &["already has a defaulting webhook", "--force"],
    },
    Bad {
        name: "another admission webhook into an existing file",
        setup: with_defaulting,
        args: &[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--programmatic-validation",
        ],
        code: 1,
        stderr: &["already has admission webhooks", "--force"],
    },
    Bad {
        name: "admission webhooks of another version",
        setup: with_defaulting,
        args: &[
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Memcached",
            "--programmatic-validation",
        ],
        code: 1,
        stderr: &["for its version `v1alpha1` already"],
    },
];

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let mut failures = Vec::new();
    for case in BAD {
        let tmp = tempfile::tempdir().unwrap();
        (case.setup)(tmp.path());
        let mut args = vec!["create", "webhook"];
        args.extend_from_slice(case.args);
        if let Some(problems) = refusal_problems(tmp.path(), &args, case.code, case.stderr) {
            failures.push(format!("{}: {problems}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
