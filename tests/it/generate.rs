//! `rsop generate installer`, `generate kustomize manifests` and
//! `generate bundle` on real projects: golden output, the installer checked
//! by kubernetes-validate, the CSV by the schema OLM installs for it, the
//! bundle's CRDs and RBAC compared with `config/`, re-runs, `--check` drift
//! and bad input.

use std::path::{Path, PathBuf};

use serde_yaml_ng::Value;

use crate::support::{
    assert_golden, copy_tree, refusal_problems, refusal_problems_with_env, rsop, run_tool,
    snapshot, validate,
};

pub const IMG: &str = "quay.io/example/memcached-operator:v0.1.0";

pub fn run(dir: &Path, args: &[&str]) -> String {
    rsop(dir, args).success().stdout
}

/// `memcached-operator` with a `--image` kind and a plain one in another group.
pub fn two_kinds(tmp: &Path) -> PathBuf {
    let dir = tmp.join("memcached-operator");
    std::fs::create_dir(&dir).unwrap();
    run(&dir, &["init", "--domain", "example.com"]);
    run(
        &dir,
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
            "--image-container-port",
            "11211",
        ],
    );
    run(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "webapp",
            "--version",
            "v1",
            "--kind",
            "Guestbook",
        ],
    );
    dir
}

/// Gives [`two_kinds`]' Memcached a second version (v1, not stored) and the
/// webhooks `rsop create webhook` scaffolds: defaulting and validation on
/// v1alpha1, and conversion between the two versions through v1alpha1,
/// with cert-manager's issuer and certificate and CA injection in `config/`.
pub fn add_webhooks(dir: &Path) {
    let memcached = ["--group", "cache", "--kind", "Memcached"];
    let with = |args: &[&'static str]| -> Vec<&'static str> {
        let mut all = args.to_vec();
        all.extend(memcached);
        all
    };
    run(
        dir,
        &with(&[
            "create",
            "api",
            "--version",
            "v1",
            "--resource",
            "--controller=false",
        ]),
    );
    run(
        dir,
        &with(&[
            "create",
            "webhook",
            "--version",
            "v1alpha1",
            "--defaulting",
            "--programmatic-validation",
        ]),
    );
    run(
        dir,
        &with(&["create", "webhook", "--version", "v1alpha1", "--conversion"]),
    );
}

/// Runs the three generators as `make build-installer bundle` would.
fn generate_all(dir: &Path) {
    run(dir, &["generate", "installer", "--img", IMG]);
    run(dir, &["generate", "kustomize", "manifests"]);
    run(
        dir,
        &[
            "generate",
            "bundle",
            "--version",
            "0.1.0",
            "--channels",
            "alpha,stable",
            "--default-channel",
            "stable",
            "--img",
            IMG,
        ],
    );
}

fn read_yaml(path: &Path) -> Value {
    serde_yaml_ng::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn documents(text: &str) -> Vec<Value> {
    use serde::Deserialize;
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|d| Value::deserialize(d).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}

/// `value` with every number as a float: kustomize writes the `65535.0`
/// of a CRD's `maximum` as `65535`, the same number.
fn numbers_as_floats(value: Value) -> Value {
    match value {
        Value::Number(n) => Value::from(n.as_f64().unwrap()),
        Value::Sequence(items) => {
            Value::Sequence(items.into_iter().map(numbers_as_floats).collect())
        }
        Value::Mapping(map) => Value::Mapping(
            map.into_iter()
                .map(|(k, v)| (k, numbers_as_floats(v)))
                .collect(),
        ),
        other => other,
    }
}

fn olm_csv_crd() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/olm/operators.coreos.com_clusterserviceversions.yaml")
}

/// Validates CSV files against the `ClusterServiceVersion` CRD's schema.
fn validate_csv(dir: &Path, csv: &str) {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/validate_cr.py");
    run_tool(
        dir,
        "python3",
        &[tool.to_str().unwrap(), olm_csv_crd().to_str().unwrap(), csv],
        &[],
    );
}

#[test]
fn installer_and_bundle_of_two_kinds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = two_kinds(tmp.path());
    generate_all(&dir);

    // Golden: only what `generate` writes.
    let view = tmp.path().join("view");
    for part in ["dist", "bundle", "config/manifests"] {
        std::fs::create_dir_all(view.join(part)).unwrap();
        copy_tree(&dir.join(part), &view.join(part), None);
    }
    std::fs::copy(
        dir.join("bundle.Dockerfile"),
        view.join("bundle.Dockerfile"),
    )
    .unwrap();
    assert_golden(&view, "generate");

    // The installer: every object valid, the image set.
    let install = std::fs::read_to_string(dir.join("dist/install.yaml")).unwrap();
    validate(&dir, &install);
    let objects = documents(&install);
    let kinds: Vec<&str> = objects.iter().filter_map(|o| o["kind"].as_str()).collect();
    for kind in [
        "Namespace",
        "CustomResourceDefinition",
        "ServiceAccount",
        "Role",
        "ClusterRole",
        "RoleBinding",
        "ClusterRoleBinding",
        "Service",
        "Deployment",
    ] {
        assert!(
            kinds.contains(&kind),
            "install.yaml has no {kind}: {kinds:?}"
        );
    }
    assert!(install.contains(&format!("image: {IMG}")));

    // The CSV base and the bundle's CSV satisfy OLM's schema.
    validate_csv(
        &dir,
        "config/manifests/bases/memcached-operator.clusterserviceversion.yaml",
    );
    validate_csv(
        &dir,
        "bundle/manifests/memcached-operator.clusterserviceversion.yaml",
    );

    // Every CRD in the bundle is the one in config/.
    for crd in [
        "cache.example.com_memcacheds.yaml",
        "webapp.example.com_guestbooks.yaml",
    ] {
        assert_eq!(
            numbers_as_floats(read_yaml(&dir.join("bundle/manifests").join(crd))),
            numbers_as_floats(read_yaml(&dir.join("config/crd/bases").join(crd))),
            "{crd}"
        );
    }
    // The permissions are the rules config/ binds to the manager's account.
    let csv =
        read_yaml(&dir.join("bundle/manifests/memcached-operator.clusterserviceversion.yaml"));
    let install_spec = &csv["spec"]["install"]["spec"];
    let rules_of = |kind: &str, name: &str| -> Vec<Value> {
        objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("install.yaml has no {kind} {name}"))["rules"]
            .as_sequence()
            .unwrap()
            .clone()
    };
    let mut cluster_rules = rules_of("ClusterRole", "memcached-operator-manager-role");
    cluster_rules.extend(rules_of(
        "ClusterRole",
        "memcached-operator-metrics-auth-role",
    ));
    let manager_rules = read_yaml(&dir.join("config/rbac/role.yaml"))["rules"].clone();
    assert_eq!(
        Value::Sequence(cluster_rules[..manager_rules.as_sequence().unwrap().len()].to_vec()),
        manager_rules,
        "the manager's ClusterRole is config/rbac/role.yaml"
    );
    assert_eq!(
        install_spec["clusterPermissions"][0]["rules"],
        Value::Sequence(cluster_rules)
    );
    assert_eq!(
        install_spec["permissions"][0]["rules"],
        Value::Sequence(rules_of("Role", "memcached-operator-leader-election-role"))
    );
    for permissions in ["clusterPermissions", "permissions"] {
        assert_eq!(
            install_spec[permissions][0]["serviceAccountName"],
            "memcached-operator-controller-manager"
        );
    }
    // The other ClusterRoles travel as they are, without a namespace.
    let editor = read_yaml(&dir.join(
        "bundle/manifests/memcached-operator-memcached-editor-role_rbac.authorization.k8s.io_v1_clusterrole.yaml",
    ));
    assert_eq!(
        editor["rules"],
        Value::Sequence(rules_of(
            "ClusterRole",
            "memcached-operator-memcached-editor-role"
        ))
    );
    let deployment = &install_spec["deployments"][0];
    assert_eq!(deployment["name"], "memcached-operator-controller-manager");
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        IMG
    );
    assert_eq!(csv["spec"]["relatedImages"][0]["image"], IMG);
    assert_eq!(csv["spec"]["version"], "0.1.0");
    assert_eq!(csv["metadata"]["name"], "memcached-operator.v0.1.0");
    let examples: serde_json::Value = serde_json::from_str(
        csv["metadata"]["annotations"]["alm-examples"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(examples.as_array().unwrap().len(), 2, "{examples}");
    assert!(
        !std::fs::read_to_string(
            dir.join("bundle/manifests/memcached-operator.clusterserviceversion.yaml")
        )
        .unwrap()
        .contains("createdAt"),
        "no timestamp unless the user sets one"
    );
    run_tool(&dir, "hadolint", &["bundle.Dockerfile"], &[]);

    // Re-running changes nothing, and --check agrees.
    let before = snapshot(&dir);
    generate_all(&dir);
    assert!(snapshot(&dir) == before, "a second run changed files");
    for args in [
        &["generate", "installer", "--img", IMG, "--check"][..],
        &["generate", "kustomize", "manifests", "--check"],
        &[
            "generate",
            "bundle",
            "--version",
            "0.1.0",
            "--channels",
            "alpha,stable",
            "--default-channel",
            "stable",
            "--img",
            IMG,
            "--check",
        ],
    ] {
        let check = rsop(&dir, args);
        assert_eq!(
            (check.code, check.stdout.as_str()),
            (0, ""),
            "{args:?}: {}",
            check.stderr
        );
    }
}

/// `--check` after a change: exit 1, the diff names what changed, nothing written.
#[track_caller]
fn assert_drift(dir: &Path, args: &[&str], needle: &str) {
    let before = snapshot(dir);
    let check = rsop(dir, args);
    assert_eq!(
        check.code, 1,
        "{args:?}\n{}\n{}",
        check.stdout, check.stderr
    );
    assert!(
        check.stdout.contains("--- a/"),
        "{args:?}: no diff:\n{}",
        check.stdout
    );
    assert!(
        check
            .stdout
            .lines()
            .any(|l| l.starts_with('+') && l.contains(needle)),
        "{args:?}: the diff does not add {needle:?}:\n{}",
        check.stdout
    );
    assert!(snapshot(dir) == before, "--check wrote files");
}

#[test]
fn check_finds_a_new_kind_and_a_new_rbac_marker() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("op");
    std::fs::create_dir(&dir).unwrap();
    run(&dir, &["init", "--domain", "example.com"]);
    run(
        &dir,
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
    );
    let bundle = ["generate", "bundle", "--version", "1.0.0", "--check"];
    run(&dir, &["generate", "installer"]);
    run(&dir, &["generate", "kustomize", "manifests"]);
    run(&dir, &bundle[..4]);

    run(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Redis",
        ],
    );
    assert_drift(&dir, &["generate", "installer", "--check"], "redis");
    assert_drift(
        &dir,
        &["generate", "kustomize", "manifests", "--check"],
        "redises.cache.example.com",
    );
    run(&dir, &["generate", "kustomize", "manifests"]);
    assert_drift(&dir, &bundle, "redises.cache.example.com");
    run(&dir, &["generate", "installer"]);
    run(&dir, &bundle[..4]);

    let controller = dir.join("src/controllers/redis.rs");
    let source = std::fs::read_to_string(&controller).unwrap();
    let marker = "// +rsop:rbac:groups=events.k8s.io,resources=events,verbs=create";
    assert!(source.contains(marker));
    std::fs::write(
        &controller,
        source.replacen(
            marker,
            &format!(
                "{marker}\n// +rsop:rbac:groups=core,resources=configmaps,verbs=get;list;watch"
            ),
            1,
        ),
    )
    .unwrap();
    run(&dir, &["manifests"]);
    assert_drift(&dir, &["generate", "installer", "--check"], "configmaps");
    assert_drift(&dir, &bundle, "configmaps");
}

#[test]
fn kustomize_manifests_keeps_the_users_edits() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("op");
    std::fs::create_dir(&dir).unwrap();
    run(&dir, &["init", "--domain", "example.com"]);
    run(
        &dir,
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
    );
    run(&dir, &["generate", "kustomize", "manifests"]);
    let base = dir.join("config/manifests/bases/op.clusterserviceversion.yaml");
    let text = std::fs::read_to_string(&base).unwrap();
    let edited = text
        .replace("displayName: Op\n", "displayName: Cache Operator\n")
        .replace(
            "displayName: Memcached\n",
            "displayName: Memcached Cluster\n",
        )
        .replace("maturity: alpha", "maturity: stable");
    assert_ne!(edited, text);
    std::fs::write(&base, &edited).unwrap();

    // Nothing new: the user's file is left byte for byte.
    run(&dir, &["generate", "kustomize", "manifests"]);
    assert_eq!(std::fs::read_to_string(&base).unwrap(), edited);

    run(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Redis",
        ],
    );
    run(&dir, &["generate", "kustomize", "manifests"]);
    let csv = read_yaml(&base);
    assert_eq!(csv["spec"]["displayName"], "Cache Operator");
    assert_eq!(csv["spec"]["maturity"], "stable");
    let owned = csv["spec"]["customresourcedefinitions"]["owned"]
        .as_sequence()
        .unwrap();
    let names: Vec<(&str, &str)> = owned
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap(),
                o["displayName"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [("Memcached", "Memcached Cluster"), ("Redis", "Redis")]
    );
    validate_csv(&dir, "config/manifests/bases/op.clusterserviceversion.yaml");
}

/// A refusal: name, directory, arguments, exit code, what stderr says.
type Case<'a> = (&'a str, &'a Path, &'a [&'a str], i32, &'a [&'a str]);

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let dir = tmp.path().join("op");
    std::fs::create_dir(&dir).unwrap();
    run(&dir, &["init", "--domain", "example.com"]);
    run(
        &dir,
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
    );
    let empty_path = tmp.path().join("empty-path");
    std::fs::create_dir(&empty_path).unwrap();

    let mut failures = Vec::new();
    let mut check = |name: &str, problem: Option<String>| {
        if let Some(p) = problem {
            failures.push(format!("{name}: {p}"));
        }
    };
    // Before the CSV base exists.
    check(
        "bundle without the CSV base",
        refusal_problems(
            &dir,
            &["generate", "bundle", "--version", "0.1.0"],
            1,
            &["does not exist", "rsop generate kustomize manifests"],
        ),
    );
    run(&dir, &["generate", "kustomize", "manifests"]);
    let cases: &[Case] = &[
        (
            "outside a project",
            &outside,
            &["generate", "installer"],
            1,
            &["is not an rsop project", "rsop init"],
        ),
        (
            "bundle outside a project",
            &outside,
            &["generate", "bundle"],
            1,
            &["is not an rsop project"],
        ),
        (
            "invalid semver",
            &dir,
            &["generate", "bundle", "--version", "1.0"],
            1,
            &["invalid bundle version `1.0`", "semantic version"],
        ),
        (
            "unknown default channel",
            &dir,
            &[
                "generate",
                "bundle",
                "--channels",
                "alpha,beta",
                "--default-channel",
                "stable",
            ],
            1,
            &["default channel `stable` is not one of the channels (alpha, beta)"],
        ),
        (
            "bad channel",
            &dir,
            &["generate", "bundle", "--channels", "al pha"],
            1,
            &["invalid channel `al pha`"],
        ),
        (
            "bad package",
            &dir,
            &["generate", "bundle", "--package", "My_Operator"],
            1,
            &["package name"],
        ),
        (
            "check and dry-run",
            &dir,
            &["generate", "installer", "--check", "--dry-run"],
            2,
            &["cannot be used with"],
        ),
    ];
    for (name, root, args, code, needles) in cases {
        check(name, refusal_problems(root, args, *code, needles));
    }
    for args in [
        &["generate", "installer"][..],
        &["generate", "bundle", "--version", "0.1.0"],
        &["generate", "helm"],
    ] {
        check(
            &format!("no kustomize: {args:?}"),
            refusal_problems_with_env(
                &dir,
                args,
                &[("PATH", empty_path.clone().into_os_string())],
                1,
                &[
                    "neither `kustomize` nor `kubectl` is on PATH",
                    "install kubectl",
                ],
            ),
        );
    }
    // --dry-run lists and writes nothing.
    let before = snapshot(&dir);
    let dry = rsop(&dir, &["generate", "installer", "--dry-run"]).success();
    assert!(dry.stdout.contains("dist/install.yaml"), "{}", dry.stdout);
    assert!(snapshot(&dir) == before, "--dry-run wrote files");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// With webhooks: the installer is everything config/default renders, the
/// cert-manager objects included; the bundle's CSV lists the admission and
/// conversion webhooks as OLM wants them, and the objects OLM makes itself
/// (webhook configurations, their Service, certificates, CA injection) are
/// not in the bundle.
#[test]
fn installer_and_bundle_with_webhooks() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = two_kinds(tmp.path());
    add_webhooks(&dir);
    generate_all(&dir);

    let install = std::fs::read_to_string(dir.join("dist/install.yaml")).unwrap();
    validate(&dir, &install);
    let rendered = run_tool(&dir, "kubectl", &["kustomize", "config/default"], &[]);
    let expected = String::from_utf8(rendered.stdout)
        .unwrap()
        .replace("image: controller:latest", &format!("image: {IMG}"));
    assert_eq!(documents(&install), documents(&expected));
    for needle in [
        "kind: MutatingWebhookConfiguration",
        "kind: ValidatingWebhookConfiguration",
        "kind: Certificate",
        "kind: Issuer",
        "name: memcached-operator-webhook-service",
        "cert-manager.io/inject-ca-from: memcached-operator-system/memcached-operator-serving-cert",
        "secretName: webhook-server-cert",
    ] {
        assert!(install.contains(needle), "install.yaml has no {needle:?}");
    }

    let csv_path = "bundle/manifests/memcached-operator.clusterserviceversion.yaml";
    validate_csv(&dir, csv_path);
    let csv = read_yaml(&dir.join(csv_path));
    let definitions = csv["spec"]["webhookdefinitions"].as_sequence().unwrap();
    let summary: Vec<(&str, &str, &str)> = definitions
        .iter()
        .map(|d| {
            (
                d["type"].as_str().unwrap(),
                d["generateName"].as_str().unwrap(),
                d["webhookPath"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("ConversionWebhook", "cmemcacheds.kb.io", "/convert"),
            (
                "MutatingAdmissionWebhook",
                "mmemcached-v1alpha1.kb.io",
                "/mutate-cache-example-com-v1alpha1-memcached"
            ),
            (
                "ValidatingAdmissionWebhook",
                "vmemcached-v1alpha1.kb.io",
                "/validate-cache-example-com-v1alpha1-memcached"
            ),
        ]
    );
    let deployment = &csv["spec"]["install"]["spec"]["deployments"][0];
    for definition in definitions {
        assert_eq!(definition["deploymentName"], deployment["name"]);
        assert_eq!(definition["containerPort"], 443);
        assert_eq!(definition["targetPort"], 9443);
        assert_eq!(definition["sideEffects"], "None");
        assert_eq!(definition["admissionReviewVersions"][0], "v1");
    }
    assert_eq!(
        definitions[0]["conversionCRDs"][0],
        "memcacheds.cache.example.com"
    );
    let validating = &definitions[2];
    assert_eq!(validating["failurePolicy"], "Fail");
    assert_eq!(
        validating["rules"][0]["operations"],
        Value::Sequence(vec!["CREATE".into(), "UPDATE".into()])
    );

    // OLM mounts its own certificate where the manager reads it.
    let pod = &deployment["spec"]["template"]["spec"];
    assert!(pod.get("volumes").is_none(), "{pod:?}");
    assert!(
        pod["containers"][0].get("volumeMounts").is_none(),
        "{pod:?}"
    );
    assert!(
        pod["containers"][0]["args"]
            .as_sequence()
            .unwrap()
            .contains(&"--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs".into())
    );
    assert_eq!(pod["containers"][0]["ports"][2]["containerPort"], 9443);

    // Nothing OLM makes itself is in the bundle.
    for entry in std::fs::read_dir(dir.join("bundle/manifests")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for needle in [
            "kind: MutatingWebhookConfiguration",
            "kind: ValidatingWebhookConfiguration",
            "kind: Certificate\n",
            "kind: Issuer",
            "cert-manager.io",
            "webhook-server-cert",
        ] {
            assert!(!text.contains(needle), "{}: {needle:?}", path.display());
        }
        let object = read_yaml(&path);
        assert_ne!(
            object["metadata"]["name"],
            "memcached-operator-webhook-service",
            "{}",
            path.display()
        );
    }
    // The converted CRD keeps its conversion settings, which OLM fills in.
    let crd = read_yaml(&dir.join("bundle/manifests/cache.example.com_memcacheds.yaml"));
    assert_eq!(crd["spec"]["conversion"]["strategy"], "Webhook");
    assert!(crd["metadata"].get("annotations").is_none(), "{crd:?}");

    let before = snapshot(&dir);
    generate_all(&dir);
    assert!(snapshot(&dir) == before, "a second run changed files");
}
