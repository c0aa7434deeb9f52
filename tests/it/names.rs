//! Every name rsop writes must pass the API server's validation, which
//! schema validation does not check: object names, label keys and values,
//! container and port names, finalizers, condition types and reasons. The
//! rules are apimachinery's (`IsDNS1123Subdomain`, `IsDNS1123Label`,
//! `IsDNS1035Label`, `IsQualifiedName`, `IsValidLabelValue`,
//! `IsValidPortName`) and the `Condition` type's patterns, written out here.
//!
//! A table of kinds (one word, two words, an acronym, 60 characters) goes
//! through every flavour of `rsop create api`; what kustomize renders of
//! `config/default` and `config/samples`, and the names in the generated
//! controllers, are checked against those rules.

use std::path::Path;

use serde_yaml_ng::Value;

use crate::support::{rsop, run_tool};

/// One-word, two-word, acronym and 60-character kinds.
const KINDS: [&str; 4] = [
    "Memcached",
    "HelloApp",
    "DNSRecord",
    "AVeryLongKindNameThatKeepsGoingUntilItHasSixtyCharactersAbcd",
];

fn is_alnum(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// A DNS-1123 label without the length limit: lowercase alphanumerics or '-', alphanumeric at
/// both ends.
fn label_chars(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| is_alnum(c) || c == '-')
        && s.starts_with(is_alnum)
        && s.ends_with(is_alnum)
}

/// `IsDNS1123Label`: at most 63 characters.
fn dns_label(s: &str) -> bool {
    s.len() <= 63 && label_chars(s)
}

/// `IsDNS1035Label` (Service names): a DNS-1123 label that starts with a letter.
fn dns1035_label(s: &str) -> bool {
    dns_label(s) && s.starts_with(|c: char| c.is_ascii_lowercase())
}

/// `IsDNS1123Subdomain`: at most 253 characters of dot-separated labels (each of any length).
fn dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(label_chars)
}

/// The name part of a qualified name, and a non-empty label value: at most 63 alphanumerics,
/// '-', '_' or '.', alphanumeric at both ends (upper case allowed).
fn name_part(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    !s.is_empty()
        && s.len() <= 63
        && s.chars().all(|c| alnum(c) || "-_.".contains(c))
        && s.starts_with(alnum)
        && s.ends_with(alnum)
}

/// `IsQualifiedName`: label keys, finalizers.
fn qualified_name(s: &str) -> bool {
    match s.split_once('/') {
        Some((prefix, name)) => dns_subdomain(prefix) && name_part(name),
        None => name_part(s),
    }
}

/// `IsValidLabelValue`: empty, or a name part.
fn label_value(s: &str) -> bool {
    s.is_empty() || name_part(s)
}

/// `IsValidPortName` (`IANA_SVC_NAME`): at most 15 lowercase alphanumerics or '-', with a letter,
/// no '-' at either end nor two in a row.
fn port_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 15
        && s.chars().all(|c| is_alnum(c) || c == '-')
        && s.chars().any(|c| c.is_ascii_lowercase())
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
}

/// `metav1.Condition` type (the name part of a qualified name) and reason
/// (`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`, at most 1024).
fn condition_reason(s: &str) -> bool {
    let inner = |c: char| c.is_ascii_alphanumeric() || "_,:".contains(c);
    s.len() <= 1024
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars().all(inner)
        && !s.ends_with(',')
        && !s.ends_with(':')
}

#[test]
fn the_rules_accept_and_refuse_what_the_api_server_does() {
    assert!(dns_subdomain("helloapp-sample") && !dns_subdomain("hello_app-sample"));
    assert!(dns_subdomain("a.b-c") && !dns_subdomain("a..b") && !dns_subdomain("-a"));
    assert!(dns_subdomain(&"a".repeat(253)) && !dns_subdomain(&"a".repeat(254)));
    assert!(dns_label(&"a".repeat(63)) && !dns_label(&"a".repeat(64)));
    assert!(dns1035_label("metrics") && !dns1035_label("1metrics"));
    assert!(qualified_name("example.com/finalizer") && !qualified_name("example.com/"));
    assert!(label_value("") && label_value("A_b.c") && !label_value(&"a".repeat(64)));
    assert!(port_name("https") && !port_name("metrics-https-port") && !port_name("a--b"));
    assert!(condition_reason("PodsReady") && !condition_reason("Pods Ready"));
    assert!(!condition_reason("1Ready") && !condition_reason("Ready:"));
}

/// Collects what is wrong with the names in `value`, an object rendered from `source`.
fn check_object(value: &Value, source: &str, problems: &mut Vec<String>) {
    let kind = value["kind"].as_str().unwrap_or_default();
    let name = value["metadata"]["name"].as_str().unwrap_or_default();
    let mut bad =
        |what: &str, text: &str| problems.push(format!("{source}: {kind} {name}: {what} {text:?}"));
    let name_ok = match kind {
        "Namespace" => dns_label(name),
        "Service" => dns1035_label(name),
        _ => dns_subdomain(name),
    };
    if !name_ok {
        bad("name", name);
    }
    check_labels(&value["metadata"]["labels"], &mut bad);
    if kind == "CustomResourceDefinition" {
        let names = &value["spec"]["names"];
        for key in ["plural", "singular"] {
            if !dns_label(names[key].as_str().unwrap_or_default()) {
                bad(key, names[key].as_str().unwrap_or_default());
            }
        }
    }
    if let Some(ports) = value["spec"]["ports"].as_sequence() {
        for port in ports {
            if let Some(port) = port["name"].as_str()
                && !dns_label(port)
            {
                bad("service port name", port);
            }
        }
    }
    let template = &value["spec"]["template"];
    check_labels(&template["metadata"]["labels"], &mut bad);
    check_labels(&value["spec"]["selector"]["matchLabels"], &mut bad);
    let containers = template["spec"]["containers"]
        .as_sequence()
        .into_iter()
        .flatten();
    for container in containers {
        let container_name = container["name"].as_str().unwrap_or_default();
        if !dns_label(container_name) {
            bad("container name", container_name);
        }
        for port in container["ports"].as_sequence().into_iter().flatten() {
            if let Some(port) = port["name"].as_str()
                && !port_name(port)
            {
                bad("port name", port);
            }
        }
    }
}

fn check_labels(labels: &Value, bad: &mut impl FnMut(&str, &str)) {
    for (key, value) in labels.as_mapping().into_iter().flatten() {
        let key = key.as_str().unwrap_or_default();
        let value = value.as_str().unwrap_or_default();
        if !qualified_name(key) {
            bad("label key", key);
        }
        if !label_value(value) {
            bad("label value", value);
        }
    }
}

/// The string constants `const NAME: &str = "...";` of a Rust source.
fn string_constants(source: &str) -> Vec<(String, String)> {
    source
        .lines()
        .filter_map(|line| {
            let rest = line
                .trim_start()
                .trim_start_matches("pub ")
                .strip_prefix("const ")?;
            let (name, rest) = rest.split_once(": &str = \"")?;
            let value = rest.strip_suffix("\";")?;
            Some((name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// The reasons the controllers give their conditions: the third argument of `conditions::new`.
fn condition_reasons(source: &str) -> Vec<String> {
    let mut reasons = Vec::new();
    for call in source.split("conditions::new(").skip(1) {
        let arguments: Vec<&str> = call.splitn(4, ',').map(str::trim).collect();
        if let Some(reason) = arguments.get(2)
            && let Some(reason) = reason.strip_prefix('"').and_then(|r| r.strip_suffix('"'))
        {
            reasons.push(reason.to_owned());
        }
    }
    reasons
}

/// Checks the names in the generated Rust sources of `project`; returns how many it checked.
fn check_sources(project: &Path, problems: &mut Vec<String>) -> usize {
    let mut checked = 0;
    for entry in walkdir::WalkDir::new(project.join("src")) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let source = std::fs::read_to_string(entry.path()).unwrap();
        let file = entry
            .path()
            .strip_prefix(project)
            .unwrap()
            .display()
            .to_string();
        let mut bad = |what: &str, text: &str| problems.push(format!("{file}: {what} {text:?}"));
        let constants = string_constants(&source);
        let reasons = condition_reasons(&source);
        checked += constants.len() + reasons.len();
        // The names rsop-runtime makes of the operator's name and domain: the leader election
        // Lease, the field manager, the shard labels.
        let constant = |wanted: &str| {
            constants
                .iter()
                .find(|(name, _)| name == wanted)
                .map(|(_, value)| value.clone())
        };
        if let (Some(name), Some(domain)) = (constant("NAME"), constant("DOMAIN")) {
            checked += 1;
            if !dns_subdomain(&format!("{name}.{domain}")) {
                bad("leader election Lease", &format!("{name}.{domain}"));
            }
            for label in [
                format!("shard.{domain}/{name}"),
                format!("drain.{domain}/{name}"),
            ] {
                if !qualified_name(&label) {
                    bad("shard label", &label);
                }
            }
        }
        for (name, value) in constants {
            let ok = match name.as_str() {
                "FINALIZER" => qualified_name(&value),
                "NAME" | "APP_NAME" => dns_label(&value),
                "DOMAIN" => dns_subdomain(&value),
                "MANAGED_BY" => label_value(&value),
                // The field manager, and with `-controller` the events' reporter.
                "CONTROLLER_NAME" => {
                    !value.is_empty() && format!("{value}-controller").len() <= 128
                }
                "AVAILABLE" | "PROGRESSING" | "DEGRADED" | "READY" => name_part(&value),
                _ => true,
            };
            if !ok {
                bad(&name, &value);
            }
        }
        for reason in reasons {
            if !condition_reason(&reason) {
                bad("condition reason", &reason);
            }
        }
    }
    checked
}

fn check_project(project: &Path) {
    let mut problems = Vec::new();
    let mut objects = 0;
    for dir in ["config/default", "config/samples"] {
        let rendered = run_tool(project, "kubectl", &["kustomize", dir], &[]);
        let yaml = String::from_utf8(rendered.stdout).unwrap();
        for doc in serde_yaml_ng::Deserializer::from_str(&yaml) {
            let value: Value = serde::Deserialize::deserialize(doc).unwrap();
            check_object(&value, dir, &mut problems);
            objects += 1;
        }
    }
    // A CRD, three roles and a sample per kind at least, and every controller's constants.
    assert!(objects > 20, "only {objects} objects rendered");
    let checked = check_sources(project, &mut problems);
    assert!(checked > 25, "only {checked} names in the sources");
    assert!(
        problems.is_empty(),
        "names the API server refuses:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_name_in_a_single_group_project_is_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // The longest project name rsop accepts.
    let project = "a-project-name-of-28-chars-x";
    rsop(
        dir,
        &["init", "--domain", "example.com", "--project-name", project],
    )
    .success();
    for (i, kind) in KINDS.iter().enumerate() {
        let mut args = vec![
            "create",
            "api",
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            kind,
        ];
        match i {
            0 | 3 => args.extend([
                "--image",
                "memcached:1.6",
                "--image-container-port",
                "11211",
            ]),
            2 => args.push("--namespaced=false"),
            _ => args.extend(["--resource", "--controller"]),
        }
        rsop(dir, &args).success();
    }
    // A second version of a two-word kind.
    rsop(
        dir,
        &[
            "create",
            "api",
            "--group",
            "apps",
            "--version",
            "v2",
            "--kind",
            "HelloApp",
            "--resource",
            "--controller=false",
        ],
    )
    .success();
    check_project(dir);
}

#[test]
fn every_name_in_a_multigroup_project_is_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    rsop(
        dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "groups",
        ],
    )
    .success();
    rsop(dir, &["edit", "--multigroup"]).success();
    for (kind, group) in KINDS.iter().zip(["cache", "web-apps", "net", "long"]) {
        let mut args = vec![
            "create",
            "api",
            "--group",
            group,
            "--version",
            "v1alpha1",
            "--kind",
            kind,
        ];
        if *kind == "HelloApp" {
            args.extend(["--image", "nginx:1.27"]);
        } else {
            args.extend(["--resource", "--controller"]);
        }
        rsop(dir, &args).success();
    }
    check_project(dir);
}
