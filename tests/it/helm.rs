//! `rsop generate helm` on a real project, checked by the real Helm engine
//! (helm-python-sdk, through `tests/tools/helm_chart.py`): golden chart,
//! strict lint, rendered objects validated by kubernetes-validate and
//! compared with the installer's, values that change the right objects, the
//! values schema, user edits kept, `--check` and bad input.

use std::collections::BTreeMap;
use std::path::Path;

use serde_yaml_ng::{Mapping, Value};

use crate::generate::{IMG, add_webhooks, documents, run, two_kinds};
use crate::support::{assert_golden, refusal_problems, rsop, snapshot, validate};

const CHART: &str = "dist/chart";
/// With the release named after the chart, object names are the ones
/// `config/default` gives.
const RELEASE: &str = "memcached-operator";
const NAMESPACE: &str = "memcached-operator-system";
/// The labels the chart's helpers set, which the installer's objects do
/// not carry (or carry with kustomize's values).
const HELM_LABELS: [&str; 5] = [
    "app.kubernetes.io/name",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
    "app.kubernetes.io/managed-by",
    "helm.sh/chart",
];

/// Runs `tests/tools/helm_chart.py`; returns its exit code, stdout, stderr.
fn helm(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/helm_chart.py");
    let output = std::process::Command::new("python3")
        .arg(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("python3 runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// The chart's objects as `helm template` renders them with `sets`.
fn render(dir: &Path, release: &str, sets: &[&str]) -> Vec<Value> {
    let mut args = vec![
        "render",
        CHART,
        "--release",
        release,
        "--namespace",
        NAMESPACE,
    ];
    for set in sets {
        args.extend(["--set", set]);
    }
    let (code, stdout, stderr) = helm(dir, &args);
    assert_eq!(code, 0, "helm render {sets:?} failed:\n{stderr}");
    documents(&stdout)
}

/// Objects keyed by kind and name.
fn by_name(objects: Vec<Value>) -> BTreeMap<(String, String), Value> {
    objects
        .into_iter()
        .map(|o| {
            let key = (
                o["kind"].as_str().unwrap().to_string(),
                o["metadata"]["name"].as_str().unwrap().to_string(),
            );
            (key, o)
        })
        .collect()
}

/// `object` without what Helm adds: its standard labels (on the object and
/// in selectors) and the keep annotation on CRDs.
fn without_helm(mut object: Value) -> Value {
    let strip = |map: Option<&mut Value>| {
        if let Some(Value::Mapping(map)) = map {
            for label in HELM_LABELS {
                map.shift_remove(label);
            }
            map.shift_remove("helm.sh/resource-policy");
        }
    };
    strip(object.get_mut("metadata").and_then(|m| m.get_mut("labels")));
    strip(
        object
            .get_mut("metadata")
            .and_then(|m| m.get_mut("annotations")),
    );
    if let Some(spec) = object.get_mut("spec") {
        strip(spec.get_mut("selector"));
        strip(
            spec.get_mut("selector")
                .and_then(|s| s.get_mut("matchLabels")),
        );
        strip(
            spec.get_mut("podSelector")
                .and_then(|s| s.get_mut("matchLabels")),
        );
        strip(
            spec.get_mut("template")
                .and_then(|t| t.get_mut("metadata"))
                .and_then(|m| m.get_mut("labels")),
        );
    }
    // Keys the stripping left empty.
    if let Some(Value::Mapping(metadata)) = object.get_mut("metadata") {
        metadata.retain(|_, v| !v.as_mapping().is_some_and(Mapping::is_empty));
    }
    object
}

fn find<'a>(objects: &'a [Value], kind: &str) -> Vec<&'a Value> {
    objects.iter().filter(|o| o["kind"] == kind).collect()
}

fn manager(objects: &[Value]) -> &Value {
    find(objects, "Deployment")[0]
}

/// Validates objects with kubernetes-validate, leaving out the
/// `ServiceMonitor`, whose schema is the Prometheus Operator's.
fn validate_objects(dir: &Path, objects: &[Value]) {
    let yaml: Vec<String> = objects
        .iter()
        .filter(|o| o["kind"] != "ServiceMonitor")
        .map(|o| rsop::yaml::to_string(o).unwrap())
        .collect();
    validate(dir, &yaml.join("---\n"));
}

#[test]
fn helm_chart_of_two_kinds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = two_kinds(tmp.path());
    run(&dir, &["generate", "installer", "--img", IMG]);
    run(&dir, &["generate", "helm", "--img", IMG]);
    assert_golden(&dir.join(CHART), "helm");

    // Strict lint: no warning and no error.
    let (code, stdout, stderr) = helm(&dir, &["lint", CHART]);
    assert_eq!(code, 0, "helm lint --strict failed:\n{stdout}{stderr}");

    // Defaults: valid objects, equal to the installer's but for Helm's
    // labels and the namespace, which is Helm's to create.
    let objects = render(&dir, RELEASE, &[]);
    validate_objects(&dir, &objects);
    let install = std::fs::read_to_string(dir.join("dist/install.yaml")).unwrap();
    let expected: BTreeMap<_, _> = by_name(documents(&install))
        .into_iter()
        .filter(|((kind, _), _)| kind != "Namespace")
        .map(|(k, o)| (k, without_helm(o)))
        .collect();
    let actual: BTreeMap<_, _> = by_name(objects.clone())
        .into_iter()
        .map(|(k, o)| (k, without_helm(o)))
        .collect();
    assert_eq!(
        actual.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (key, object) in &expected {
        assert_eq!(&actual[key], object, "{key:?} differs from the installer's");
    }
    // Helm's labels are on every object, and the selectors select the
    // manager's Pods of this release only.
    for object in &objects {
        let labels = &object["metadata"]["labels"];
        assert_eq!(labels["app.kubernetes.io/managed-by"], "Helm", "{object:?}");
        assert_eq!(labels["app.kubernetes.io/instance"], RELEASE);
    }
    let pod_labels = manager(&objects)["spec"]["template"]["metadata"]["labels"]
        .as_mapping()
        .unwrap()
        .clone();
    let service = find(&objects, "Service")[0];
    for selector in [
        &manager(&objects)["spec"]["selector"]["matchLabels"],
        &service["spec"]["selector"],
    ] {
        let selector = selector.as_mapping().unwrap();
        assert_eq!(selector["app.kubernetes.io/instance"], RELEASE);
        for (k, v) in selector {
            assert_eq!(pod_labels.get(k), Some(v), "selector {selector:?}");
        }
    }

    // Another release name prefixes every name, and each reference follows.
    let other = render(&dir, "prod", &[]);
    let names: Vec<String> = other
        .iter()
        .filter(|o| o["kind"] != "CustomResourceDefinition")
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("prod-memcached-operator-")),
        "{names:?}"
    );
    for binding in other
        .iter()
        .filter(|o| o["kind"].as_str().unwrap().ends_with("RoleBinding"))
    {
        let role = &binding["roleRef"]["name"];
        assert!(
            other
                .iter()
                .any(|o| o["kind"] == binding["roleRef"]["kind"] && &o["metadata"]["name"] == role),
            "{role:?} is not rendered"
        );
        let subject = &binding["subjects"][0];
        assert_eq!(subject["namespace"], NAMESPACE);
        assert!(
            find(&other, "ServiceAccount")
                .iter()
                .any(|a| a["metadata"]["name"] == subject["name"]),
            "{subject:?}"
        );
    }
    assert_eq!(
        manager(&other)["spec"]["template"]["spec"]["serviceAccountName"],
        "prod-memcached-operator-controller-manager"
    );

    // Values change the objects they name, and nothing else.
    let changed = render(
        &dir,
        RELEASE,
        &[
            "image.repository=registry.example.com/team/operator",
            "image.tag=v2.0.0",
            "replicas=3",
            "resources.limits.memory=256Mi",
            "crds.install=false",
            "serviceMonitor.enabled=true",
        ],
    );
    validate_objects(&dir, &changed);
    assert!(find(&changed, "CustomResourceDefinition").is_empty());
    let monitors = find(&changed, "ServiceMonitor");
    assert_eq!(monitors.len(), 1);
    assert_eq!(
        monitors[0]["metadata"]["name"],
        "memcached-operator-controller-manager-metrics-monitor"
    );
    assert_eq!(monitors[0]["spec"]["endpoints"][0]["port"], "https");
    let deployment = manager(&changed);
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(deployment["spec"]["replicas"], 3);
    assert_eq!(
        container["image"],
        "registry.example.com/team/operator:v2.0.0"
    );
    assert_eq!(container["resources"]["limits"]["memory"], "256Mi");
    assert_eq!(container["resources"]["limits"]["cpu"], "500m");
    let before = by_name(objects.clone());
    let after = by_name(changed.clone());
    for (key, object) in &after {
        match key.0.as_str() {
            "Deployment" | "ServiceMonitor" => {}
            _ => assert_eq!(Some(object), before.get(key), "{key:?} changed"),
        }
    }
    for (key, object) in &before {
        let is_crd = key.0 == "CustomResourceDefinition";
        assert_eq!(after.contains_key(key), !is_crd, "{object:?}");
    }

    // Metrics over plain HTTP on another port, leader election off, the
    // NetworkPolicy on, logging and scheduling from values.
    let tuned = render(
        &dir,
        RELEASE,
        &[
            "metrics.secure=false",
            "metrics.port=9090",
            "leaderElection.enabled=false",
            "networkPolicy.enabled=true",
            "serviceMonitor.enabled=true",
            "log.format=json",
            "watchNamespace=team-a",
            "nodeSelector.kubernetes\\.io/os=linux",
            "priorityClassName=system-cluster-critical",
            "image.digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ],
    );
    validate_objects(&dir, &tuned);
    let pod = &manager(&tuned)["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let args: Vec<&str> = container["args"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        [
            "--metrics-bind-address=:9090",
            "--metrics-secure=false",
            "--health-probe-bind-address=:8081"
        ]
    );
    let env: Vec<(&str, &str)> = container["env"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|e| Some((e["name"].as_str()?, e["value"].as_str()?)))
        .collect();
    assert_eq!(env, [("WATCH_NAMESPACE", "team-a"), ("LOG_FORMAT", "json")]);
    assert_eq!(pod["nodeSelector"]["kubernetes.io/os"], "linux");
    assert_eq!(pod["priorityClassName"], "system-cluster-critical");
    assert!(
        container["image"]
            .as_str()
            .unwrap()
            .starts_with("quay.io/example/memcached-operator@sha256:0123"),
        "{:?}",
        container["image"]
    );
    let port = &container["ports"][1];
    assert_eq!(
        (&port["containerPort"], &port["name"]),
        (&9090.into(), &"http".into())
    );
    let service_port = &find(&tuned, "Service")[0]["spec"]["ports"][0];
    assert_eq!(service_port["port"], 9090);
    assert_eq!(service_port["name"], "http");
    let monitor = &find(&tuned, "ServiceMonitor")[0]["spec"]["endpoints"][0];
    assert_eq!(monitor["scheme"], "http");
    assert!(monitor.get("tlsConfig").is_none(), "{monitor:?}");
    let policy = find(&tuned, "NetworkPolicy");
    assert_eq!(policy[0]["spec"]["ingress"][0]["ports"][0]["port"], 9090);
    // Metrics off: no Service, no flag value but 0, no port.
    let off = render(&dir, RELEASE, &["metrics.enabled=false"]);
    assert!(find(&off, "Service").is_empty());
    let container = &manager(&off)["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["args"][0], "--metrics-bind-address=0");
    assert_eq!(container["ports"].as_sequence().unwrap().len(), 1);
    // No chart-made service account: the bindings name the given one.
    let byo = render(
        &dir,
        RELEASE,
        &["serviceAccount.create=false", "serviceAccount.name=ops"],
    );
    assert!(find(&byo, "ServiceAccount").is_empty());
    let (code, _, stderr) = helm(
        &dir,
        &["render", CHART, "--set", "serviceAccount.create=false"],
    );
    assert_eq!(code, 1);
    assert!(stderr.contains("serviceAccount.name must name"), "{stderr}");
    // Pod labels and annotations of one's own, never twice a key the chart
    // sets, nor a selector label.
    let labelled = render(
        &dir,
        RELEASE,
        &[
            "podLabels.team=storage",
            "podLabels.control-plane=other",
            "podLabels.app\\.kubernetes\\.io/name=other",
            "podAnnotations.kubectl\\.kubernetes\\.io/default-container=other",
            "podAnnotations.example\\.com/owner=storage",
        ],
    );
    validate_objects(&dir, &labelled);
    let template = &manager(&labelled)["spec"]["template"]["metadata"];
    assert_eq!(template["labels"]["team"], "storage");
    assert_eq!(template["labels"]["control-plane"], "controller-manager");
    assert_eq!(
        template["labels"]["app.kubernetes.io/name"],
        "memcached-operator"
    );
    assert_eq!(template["annotations"]["example.com/owner"], "storage");
    assert_eq!(
        template["annotations"]["kubectl.kubernetes.io/default-container"],
        "manager"
    );
    assert!(
        find(&byo, "ClusterRoleBinding")
            .iter()
            .all(|b| b["subjects"][0]["name"] == "ops")
    );

    // The schema rejects wrong types and unknown keys before rendering.
    for (set, needle) in [
        ("replicas=two", "at '/replicas': got string, want integer"),
        ("replica=2", "additional properties 'replica' not allowed"),
        ("image.pullPolicy=Sometimes", "/image/pullPolicy"),
        ("metrics.port=70000", "/metrics/port"),
    ] {
        let (code, _, stderr) = helm(&dir, &["render", CHART, "--release", RELEASE, "--set", set]);
        assert_eq!(code, 1, "{set} was accepted");
        assert!(stderr.contains(needle), "{set}: {stderr}");
    }

    // NOTES.txt names the manager's Deployment and the kinds.
    let (code, notes, stderr) = helm(
        &dir,
        &[
            "notes",
            CHART,
            "--release",
            RELEASE,
            "--namespace",
            NAMESPACE,
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        notes.contains("rollout status deployment/memcached-operator-controller-manager"),
        "{notes}"
    );
    assert!(notes.contains("kubectl get memcacheds.cache.example.com"));
}

#[test]
fn helm_chart_keeps_user_edits_and_checks_templates() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = two_kinds(tmp.path());
    run(&dir, &["generate", "helm"]);
    let chart = dir.join(CHART);

    // The user's edits to Chart.yaml and values.yaml, and a value of their
    // own for a template of their own.
    let chart_yaml = std::fs::read_to_string(chart.join("Chart.yaml"))
        .unwrap()
        .replace("version: \"0.1.0\"\n", "version: \"0.2.0\"\n");
    std::fs::write(chart.join("Chart.yaml"), &chart_yaml).unwrap();
    let values = std::fs::read_to_string(chart.join("values.yaml"))
        .unwrap()
        .replace("replicas: 1\n", "replicas: 2\n")
        + "\n# Mine.\nextraConfig:\n  greeting: hello\n";
    std::fs::write(chart.join("values.yaml"), &values).unwrap();
    std::fs::write(
        chart.join("templates/extra-config.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra\n\
         data:\n  greeting: {{ .Values.extraConfig.greeting | quote }}\n",
    )
    .unwrap();

    // A re-run keeps them, byte for byte, and admits the new value.
    let report = run(&dir, &["generate", "helm"]);
    assert!(
        report.contains("update  dist/chart/values.schema.json"),
        "{report}"
    );
    assert_eq!(
        std::fs::read_to_string(chart.join("Chart.yaml")).unwrap(),
        chart_yaml
    );
    assert_eq!(
        std::fs::read_to_string(chart.join("values.yaml")).unwrap(),
        values
    );
    let (code, stdout, stderr) = helm(&dir, &["lint", CHART]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let objects = render(&dir, RELEASE, &[]);
    assert_eq!(manager(&objects)["spec"]["replicas"], 2);
    assert_eq!(find(&objects, "ConfigMap")[0]["data"]["greeting"], "hello");
    assert!(
        rsop(&dir, &["generate", "helm", "--check"])
            .success()
            .stdout
            .is_empty()
    );

    // A new kind makes the templates stale: --check shows it and writes
    // nothing.
    run(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "ship",
            "--version",
            "v1beta1",
            "--kind",
            "Frigate",
        ],
    );
    let before = snapshot(&dir);
    let check = rsop(&dir, &["generate", "helm", "--check"]);
    assert_eq!(check.code, 1, "{}{}", check.stdout, check.stderr);
    assert!(
        check
            .stdout
            .contains("+++ b/dist/chart/templates/crd/ship.example.com_frigates.yaml"),
        "{}",
        check.stdout
    );
    assert!(check.stdout.contains("+  - frigates"), "{}", check.stdout);
    assert!(snapshot(&dir) == before, "--check wrote files");
    run(&dir, &["generate", "helm"]);
    assert!(
        rsop(&dir, &["generate", "helm", "--check"])
            .success()
            .stdout
            .is_empty()
    );
    let objects = render(&dir, RELEASE, &[]);
    assert_eq!(find(&objects, "CustomResourceDefinition").len(), 3);

    // An object gone from config/ takes its template with it, and the
    // user's own template stays.
    let rbac = dir.join("config/rbac/kustomization.yaml");
    let text = std::fs::read_to_string(&rbac).unwrap();
    std::fs::write(&rbac, text.replace("- memcached_admin_role.yaml\n", "")).unwrap();
    let stale = "dist/chart/templates/rbac/memcached-admin-role.yaml";
    let before = snapshot(&dir);
    let check = rsop(&dir, &["generate", "helm", "--check"]);
    assert_eq!(check.code, 1);
    assert!(
        check
            .stdout
            .contains(&format!("--- a/{stale}\n+++ /dev/null")),
        "{}",
        check.stdout
    );
    assert!(snapshot(&dir) == before, "--check wrote files");
    let report = run(&dir, &["generate", "helm"]);
    assert!(report.contains(&format!("remove  {stale}")), "{report}");
    assert!(!dir.join(stale).exists());
    assert!(chart.join("templates/extra-config.yaml").exists());

    // Whatever else config/network-policy holds is behind networkPolicy.enabled.
    let policies = dir.join("config/network-policy");
    std::fs::write(
        policies.join("allow-webhook-traffic.yaml"),
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  \
         name: allow-webhook-traffic\n  namespace: system\nspec:\n  podSelector: {}\n  \
         policyTypes:\n  - Ingress\n",
    )
    .unwrap();
    let kustomization = policies.join("kustomization.yaml");
    let text = std::fs::read_to_string(&kustomization).unwrap();
    std::fs::write(
        &kustomization,
        format!("{text}- allow-webhook-traffic.yaml\n"),
    )
    .unwrap();
    run(&dir, &["generate", "helm"]);
    assert!(find(&render(&dir, RELEASE, &[]), "NetworkPolicy").is_empty());
    let on = render(&dir, RELEASE, &["networkPolicy.enabled=true"]);
    assert_eq!(find(&on, "NetworkPolicy").len(), 2);

    // --force writes the chart's defaults again.
    run(&dir, &["generate", "helm", "--force"]);
    let values = std::fs::read_to_string(chart.join("values.yaml")).unwrap();
    assert!(values.contains("replicas: 1\n") && !values.contains("extraConfig"));
    assert!(
        std::fs::read_to_string(chart.join("Chart.yaml"))
            .unwrap()
            .contains("version: \"0.1.0\"")
    );

    // A values.yaml without a group the templates read fails by its name.
    let start = values.find("serviceMonitor:").unwrap();
    let end = start + values[start..].find("\n\n").unwrap();
    std::fs::write(
        chart.join("values.yaml"),
        format!("{}{}", &values[..start], &values[end..]),
    )
    .unwrap();
    let (code, stdout, _) = helm(&dir, &["lint", CHART]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("missing property 'serviceMonitor'"),
        "{stdout}"
    );
}

#[test]
fn helm_chart_refuses_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = two_kinds(tmp.path());
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let mut failures = Vec::new();
    if let Some(p) = refusal_problems(
        &outside,
        &["generate", "helm"],
        1,
        &["is not an rsop project", "rsop init"],
    ) {
        failures.push(format!("outside a project: {p}"));
    }
    run(&dir, &["generate", "helm"]);
    std::fs::write(dir.join(CHART).join("values.yaml"), "replicas: [1\n").unwrap();
    if let Some(p) = refusal_problems(
        &dir,
        &["generate", "helm"],
        1,
        &["dist/chart/values.yaml", "--force"],
    ) {
        failures.push(format!("broken values.yaml: {p}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn helm_chart_of_a_namespaced_project() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("guard-operator");
    std::fs::create_dir(&dir).unwrap();
    run(&dir, &["init", "--domain", "example.com", "--namespaced"]);
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
        ],
    );
    // Text that looks like a template action must reach the CRD as text.
    let types = dir.join("src/api/v1alpha1/memcached.rs");
    let source = std::fs::read_to_string(&types).unwrap().replace(
        "/// An example optional field: free-form text, left out when not set.",
        "/// Free-form text such as {{ .Name }}, which Helm must not expand.",
    );
    std::fs::write(&types, source).unwrap();
    run(&dir, &["manifests"]);
    run(&dir, &["generate", "installer"]);
    run(&dir, &["generate", "helm"]);

    let (code, stdout, stderr) = helm(&dir, &["lint", CHART]);
    assert_eq!(code, 0, "helm lint --strict failed:\n{stdout}{stderr}");
    let render_as = |sets: &[&str]| {
        let mut args = vec![
            "render",
            CHART,
            "--release",
            "guard-operator",
            "--namespace",
            "guard-operator-system",
        ];
        for set in sets {
            args.extend(["--set", set]);
        }
        let (code, stdout, stderr) = helm(&dir, &args);
        (code, documents(&stdout), stderr)
    };
    let (code, objects, stderr) = render_as(&[]);
    assert_eq!(code, 0, "{stderr}");
    validate_objects(&dir, &objects);
    let install = std::fs::read_to_string(dir.join("dist/install.yaml")).unwrap();
    assert!(install.contains("{{ .Name }}"), "the CRD lost the braces");
    let expected: BTreeMap<_, _> = by_name(documents(&install))
        .into_iter()
        .filter(|((kind, _), _)| kind != "Namespace")
        .map(|(k, o)| (k, without_helm(o)))
        .collect();
    let actual: BTreeMap<_, _> = by_name(objects.clone())
        .into_iter()
        .map(|(k, o)| (k, without_helm(o)))
        .collect();
    assert_eq!(actual, expected);
    // The manager's Roles live in the release's namespace, and it watches
    // that namespace: the chart offers no watchNamespace to change it.
    let roles = find(&objects, "Role");
    assert!(
        roles
            .iter()
            .any(|r| r["metadata"]["name"] == "guard-operator-manager-role"),
        "{roles:?}"
    );
    assert!(
        roles
            .iter()
            .all(|r| r["metadata"]["namespace"] == "guard-operator-system")
    );
    let values = std::fs::read_to_string(dir.join(CHART).join("values.yaml")).unwrap();
    assert!(!values.contains("watchNamespace"), "{values}");
    let (code, _, stderr) = render_as(&["watchNamespace=other"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("'watchNamespace' not allowed"), "{stderr}");
}

/// The names of `objects`, by kind.
fn names_of<'a>(objects: &'a [Value], kind: &str) -> Vec<&'a str> {
    find(objects, kind)
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap())
        .collect()
}

/// With webhooks: `webhook.enabled` and `certManager.enabled` (both on by
/// default, which renders what the installer holds) each take their parts
/// out, and every reference follows the release's names.
#[test]
fn helm_chart_with_webhooks() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = two_kinds(tmp.path());
    add_webhooks(&dir);
    run(&dir, &["generate", "installer", "--img", IMG]);
    run(&dir, &["generate", "helm", "--img", IMG]);
    let (code, stdout, stderr) = helm(&dir, &["lint", CHART]);
    assert_eq!(code, 0, "helm lint --strict failed:\n{stdout}{stderr}");
    let values = std::fs::read_to_string(dir.join(CHART).join("values.yaml")).unwrap();
    assert!(
        values.contains("webhook:\n")
            && values.contains("certManager:\n")
            && values.matches("  enabled: true\n").count() >= 4,
        "{values}"
    );

    // Defaults: the installer's objects (the NetworkPolicies aside: they
    // are off by default), Helm's labels and keep annotation apart.
    let objects = render(&dir, RELEASE, &[]);
    validate_objects(&dir, &objects);
    let install = std::fs::read_to_string(dir.join("dist/install.yaml")).unwrap();
    let expected: BTreeMap<_, _> = by_name(documents(&install))
        .into_iter()
        .filter(|((kind, _), _)| kind != "Namespace")
        .map(|(k, o)| (k, without_helm(o)))
        .collect();
    let actual: BTreeMap<_, _> = by_name(objects.clone())
        .into_iter()
        .map(|(k, o)| (k, without_helm(o)))
        .collect();
    assert_eq!(
        actual.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (key, object) in &expected {
        assert_eq!(&actual[key], object, "{key:?} differs from the installer's");
    }

    // Another release: the webhook configurations call its Service, its
    // Certificate is issued by its Issuer for that Service, and the CA comes
    // from its Certificate.
    let release = render(&dir, "prod", &["networkPolicy.enabled=true"]);
    validate_objects(&dir, &release);
    let service = "prod-memcached-operator-webhook-service";
    assert!(names_of(&release, "Service").contains(&service));
    let ca = format!("{NAMESPACE}/prod-memcached-operator-serving-cert");
    for kind in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        let configuration = find(&release, kind)[0];
        assert_eq!(
            configuration["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
            ca.as_str()
        );
        let reference = &configuration["webhooks"][0]["clientConfig"]["service"];
        assert_eq!(reference["name"], service);
        assert_eq!(reference["namespace"], NAMESPACE);
    }
    let certificate = find(&release, "Certificate")[0];
    assert_eq!(
        certificate["metadata"]["name"],
        "prod-memcached-operator-serving-cert"
    );
    assert_eq!(
        certificate["spec"]["dnsNames"][0],
        format!("{service}.{NAMESPACE}.svc").as_str()
    );
    assert_eq!(
        names_of(&release, "Issuer"),
        [certificate["spec"]["issuerRef"]["name"].as_str().unwrap()]
    );
    let crd = find(&release, "CustomResourceDefinition")
        .into_iter()
        .find(|c| c["metadata"]["name"] == "memcacheds.cache.example.com")
        .unwrap();
    assert_eq!(
        crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["name"],
        service
    );
    assert_eq!(
        crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        ca.as_str()
    );
    let policies = names_of(&release, "NetworkPolicy");
    assert!(
        policies.contains(&"prod-memcached-operator-allow-webhook-traffic"),
        "{policies:?}"
    );

    // cert-manager off: no Issuer or Certificate, no CA injection; the
    // webhooks are still served, from the Secret the user then makes.
    let no_cert_manager = render(&dir, RELEASE, &["certManager.enabled=false"]);
    validate_objects(&dir, &no_cert_manager);
    assert!(find(&no_cert_manager, "Certificate").is_empty());
    assert!(find(&no_cert_manager, "Issuer").is_empty());
    assert_eq!(
        find(&no_cert_manager, "MutatingWebhookConfiguration").len(),
        1
    );
    for object in &no_cert_manager {
        assert!(
            !rsop::yaml::to_string(object)
                .unwrap()
                .contains("cert-manager.io"),
            "{object:?}"
        );
    }
    assert_eq!(
        manager(&no_cert_manager),
        manager(&objects),
        "the manager does not depend on cert-manager"
    );
    let pod = &manager(&no_cert_manager)["spec"]["template"]["spec"];
    assert_eq!(
        pod["volumes"][0]["secret"]["secretName"],
        "webhook-server-cert"
    );
    let container = &pod["containers"][0];
    assert!(
        rsop::yaml::to_string(&container["ports"])
            .unwrap()
            .contains("containerPort: 9443")
    );
    let crd = find(&no_cert_manager, "CustomResourceDefinition")
        .into_iter()
        .find(|c| c["metadata"]["name"] == "memcacheds.cache.example.com")
        .unwrap();
    assert_eq!(crd["spec"]["conversion"]["strategy"], "Webhook");

    // Webhooks off: none of their objects, no conversion through them, the
    // manager without their port; the rest as by default.
    let off = render(
        &dir,
        RELEASE,
        &["webhook.enabled=false", "networkPolicy.enabled=true"],
    );
    validate_objects(&dir, &off);
    for kind in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "Certificate",
    ] {
        assert!(find(&off, kind).is_empty(), "{kind}");
    }
    assert_eq!(
        names_of(&off, "Service"),
        ["memcached-operator-controller-manager-metrics-service"]
    );
    assert_eq!(
        names_of(&off, "NetworkPolicy"),
        ["memcached-operator-allow-metrics-traffic"]
    );
    let crd = find(&off, "CustomResourceDefinition")
        .into_iter()
        .find(|c| c["metadata"]["name"] == "memcacheds.cache.example.com")
        .unwrap();
    assert!(crd["spec"].get("conversion").is_none(), "{crd:?}");
    assert!(
        crd["metadata"]["annotations"]
            .get("cert-manager.io/inject-ca-from")
            .is_none()
    );
    let pod = &manager(&off)["spec"]["template"]["spec"];
    assert!(pod.get("volumes").is_none(), "{pod:?}");
    let text = rsop::yaml::to_string(&pod["containers"][0]).unwrap();
    assert!(
        !text.contains("9443") && !text.contains("webhook-cert") && !text.contains("volumeMounts"),
        "{text}"
    );
    let by_default = by_name(objects);
    for (key, object) in by_name(off) {
        if key.0 != "Deployment" && key.0 != "CustomResourceDefinition" && key.0 != "NetworkPolicy"
        {
            assert_eq!(Some(&object), by_default.get(&key), "{key:?} changed");
        }
    }

    // Both off, the crds.keep annotation alone stays.
    let neither = render(
        &dir,
        RELEASE,
        &[
            "webhook.enabled=false",
            "certManager.enabled=false",
            "crds.keep=false",
        ],
    );
    validate_objects(&dir, &neither);
    assert!(find(&neither, "Issuer").is_empty());
    for crd in find(&neither, "CustomResourceDefinition") {
        assert!(crd["metadata"].get("annotations").is_none(), "{crd:?}");
    }

    // The schema knows the two values.
    let (code, _, stderr) = helm(
        &dir,
        &[
            "render",
            CHART,
            "--release",
            RELEASE,
            "--namespace",
            NAMESPACE,
            "--set",
            "webhook.enable=false",
        ],
    );
    assert_ne!(code, 0, "a misspelt value passed the schema");
    assert!(stderr.contains("enable"), "{stderr}");
}
