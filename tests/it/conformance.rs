//! Static derivation equals kube-derive: the fixture crate under
//! `tests/fixtures/conformance` is built with kube-derive, and for every
//! kind and version rsop's CRD must equal `K::crd()` as a JSON value (key
//! order aside), except for the deliberate deviations named below (each is
//! documented in docs/deviations.md).
//!
//! The fixture is compared as committed (kube 5, schemars 1.2, k8s-openapi
//! 0.29 with `v1_34`), under the `earliest` and `latest` features, on kube 5
//! with schemars 1.0, on kube 4 with schemars 1.1 and k8s-openapi 0.28, on
//! kube 3 with k8s-openapi 0.27, and on kube 2 with schemars 1.0 and
//! k8s-openapi 0.26: rsop must follow the project's kube-core, schemars and
//! k8s-openapi releases and Kubernetes version. Each variant compiles
//! k8s-openapi once more, so the list is kept to these.
//!
//! The schemars 0.8 era (kube 0.70 to 1.1) has a fixture of its own,
//! `tests/fixtures/conformance-legacy`, locked once per rewriter line and
//! k8s-openapi era: kube 0.70 (the first rewriter), 0.74, 0.82, 0.88, 0.98
//! (`CELSchema`, `#[kube(rule)]`) and 1.1.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{
    copy_tree, generated_cargo_env, rsop, run_tool, yaml_files, yaml_reader_disagreements,
};

/// A deliberate deviation: where it applies, and what rsop writes instead
/// of kube-derive's value there.
struct Deviation {
    name: &'static str,
    key: &'static str,
    pointer: &'static str,
    kube: Value,
    rsop: Value,
}

fn deviations() -> Vec<Deviation> {
    vec![Deviation {
        name: "a bare serde_json::Value field preserves unknown fields (kube-derive's `{}` is not structural)",
        key: "conformance.rsop.dev/Everything/v1",
        pointer: "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/raw",
        kube: json!({"description": "Free-form data: a deliberate deviation (see docs/deviations.md)."}),
        rsop: json!({"description": "Free-form data: a deliberate deviation (see docs/deviations.md).", "x-kubernetes-preserve-unknown-fields": true}),
    }]
}

/// The fixture's dependencies for one comparison.
struct Variant {
    /// The k8s-openapi requirement and Kubernetes version feature.
    k8s_openapi: (&'static str, &'static str),
    /// The kube requirement.
    kube: &'static str,
    /// The schemars requirement.
    schemars: &'static str,
}

const COMMITTED: Variant = Variant {
    k8s_openapi: ("0.29", "v1_34"),
    kube: "5.0",
    schemars: "1.2",
};

#[test]
fn static_crds_equal_kube_derive() {
    compare(&COMMITTED);
}

#[test]
fn static_crds_equal_kube_derive_under_earliest() {
    compare(&Variant {
        k8s_openapi: ("0.29", "earliest"),
        ..COMMITTED
    });
}

#[test]
fn static_crds_equal_kube_derive_under_latest() {
    compare(&Variant {
        k8s_openapi: ("0.29", "latest"),
        ..COMMITTED
    });
}

/// The oldest schemars kube 5 allows: maps keyed by enums and flattened
/// enums come out otherwise.
#[test]
fn static_crds_equal_kube_derive_on_schemars_1_0() {
    compare(&Variant {
        schemars: "=1.0.4",
        ..COMMITTED
    });
}

/// An older line: kube 4 uses k8s-openapi 0.28; schemars 1.1.
#[test]
fn static_crds_equal_kube_derive_on_kube_4() {
    compare(&Variant {
        k8s_openapi: ("0.28", "latest"),
        kube: "4.0",
        schemars: "~1.1",
    });
}

/// kube 3 with k8s-openapi 0.27: before kube-derive 4.2, `crd()` carries
/// empty `categories`, `shortNames`, printer columns and `subresources`.
#[test]
fn static_crds_equal_kube_derive_on_kube_3() {
    compare(&Variant {
        k8s_openapi: ("0.27", "latest"),
        kube: "3.1",
        schemars: "1.2",
    });
}

/// kube 2, before kube-core's `OptionalEnum` and `OptionalIntOrString`,
/// with k8s-openapi 0.26 and schemars 1.0.
#[test]
fn static_crds_equal_kube_derive_on_kube_2() {
    compare(&Variant {
        k8s_openapi: ("0.26", "latest"),
        kube: "2.0",
        schemars: "=1.0.4",
    });
}

/// The self-check on the fixture as committed: the crdgen build (which
/// leaves out the fixture's test-only static and the statement that uses
/// it) gives every CRD rsop derives, but for the one documented deviation.
#[test]
fn verify_finds_only_the_documented_deviation() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("conformance");
    copy_tree(&fixture, &project, None);
    let run =
        crate::support::rsop_with_env(&project, &["manifests", "--verify"], &generated_cargo_env());
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.is_empty(), "{}", run.stderr);
    let changed: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .collect();
    assert_eq!(
        changed,
        ["+                x-kubernetes-preserve-unknown-fields: true"],
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .ends_with("verify: 22 CRD versions, 1 differ from the project's kube-derive\n"),
        "{}",
        run.stdout
    );
}

/// A kube 2 project that merges its versions with `merge_crds(.., "v2")`:
/// rsop's CRD is the one its binary prints (versions in rsop's order).
#[test]
fn merge_crds_projects_get_the_crd_merge_crds_gives() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/merge-crds");
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("merge-crds");
    copy_tree(&fixture, &project, None);
    rsop(&project, &["manifests", "--static"]).success();
    let text =
        std::fs::read_to_string(project.join("config/crd/bases/merge.rsop.dev_widgets.yaml"))
            .unwrap();
    let ours: Value = serde_yaml_ng::from_str(&text).unwrap();
    let out = run_tool(
        &project,
        "cargo",
        &["run", "--quiet"],
        &generated_cargo_env(),
    );
    let mut theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
    // kube keeps the order of the list it is given; rsop lists GA first.
    theirs["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .sort_by_key(|v| std::cmp::Reverse(v["name"].as_str().unwrap().to_string()));
    assert_eq!(
        ours,
        theirs,
        "{}",
        serde_json::to_string_pretty(&theirs).unwrap()
    );
}

/// Writes the variant's requirements into the fixture's Cargo.toml; for
/// another release, lets cargo re-resolve the lock for them (rsop reads
/// the release from Cargo.lock, so this comes before `rsop manifests`).
fn apply(variant: &Variant, project: &Path) {
    let path = project.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut doc: toml_edit::DocumentMut = text.parse().unwrap();
    let deps = &mut doc["dependencies"];
    let (release, feature) = variant.k8s_openapi;
    deps["k8s-openapi"]["version"] = toml_edit::value(release);
    deps["k8s-openapi"]["features"] =
        toml_edit::value(toml_edit::Array::from_iter([feature, "schemars"]));
    deps["kube"]["version"] = toml_edit::value(variant.kube);
    deps["schemars"]["version"] = toml_edit::value(variant.schemars);
    std::fs::write(&path, doc.to_string()).unwrap();
    strip_newer_kinds(project, variant.kube);
    if variant.kube != COMMITTED.kube || variant.schemars != COMMITTED.schemars {
        run_tool(project, "cargo", &["update", "--workspace", "--quiet"], &[]);
    }
}

/// `major.minor` of a requirement or marker such as `4.0` or `3.1`.
fn release(text: &str) -> (u64, u64) {
    let mut parts = text.trim_start_matches(['=', '~', '^']).split('.');
    let mut next = || parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (next(), next())
}

/// Removes what the variant's kube-derive lacks: the lines between
/// `since kube X.Y: begin` and `since kube X.Y: end` markers of a newer
/// release than `kube`, and those between `until kube X.Y` markers of a
/// release `kube` has reached. Marked blocks nest.
fn strip_newer_kinds(project: &Path, kube: &str) {
    let kube = release(kube);
    for entry in walkdir::WalkDir::new(project.join("src")) {
        let path = entry.unwrap().into_path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut kept = String::new();
        // Whether each open block is left out.
        let mut open: Vec<bool> = Vec::new();
        for line in text.lines() {
            let marker = ["since kube ", "until kube "]
                .iter()
                .find_map(|m| Some((*m, line.split(m).nth(1)?)));
            if let Some((kind, rest)) = marker
                && let Some((release_text, what)) = rest.split_once(':')
            {
                if what.trim_start().starts_with("begin") {
                    let reached = release(release_text) <= kube;
                    open.push(if kind == "since kube " {
                        !reached
                    } else {
                        reached
                    });
                } else {
                    open.pop();
                }
                continue;
            }
            if !open.iter().any(|&out| out) {
                kept.push_str(line);
                kept.push('\n');
            }
        }
        std::fs::write(&path, kept).unwrap();
    }
}

fn compare(variant: &Variant) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance");
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("conformance");
    copy_tree(&fixture, &project, None);
    apply(variant, &project);

    // `--static`: every kind must come from the sources, none from a build;
    // the client types of other projects' kinds get no CRD.
    let run = rsop(&project, &["manifests", "--static"]).success();
    assert!(
        run.stderr.contains(
            "wrote no CRD for 4 kinds the project uses but does not own \
             (3 generated by kopium, 1 listed in [package.metadata.rsop] external)"
        ),
        "{}",
        run.stderr
    );
    let report = differences(&project, &deviations());
    assert!(
        report.is_empty(),
        "rsop's CRDs differ from kube-derive's (k8s-openapi {} `{}`, kube {}, schemars {}):\n{report}",
        variant.k8s_openapi.0,
        variant.k8s_openapi.1,
        variant.kube,
        variant.schemars
    );
}

/// The fixture of the schemars 0.8 era (kube 0.70 to 1.1) as one release
/// line locks it: `tests/fixtures/conformance-legacy/kube-<line>` holds
/// that line's Cargo.toml and Cargo.lock, the sources are shared.
fn compare_legacy(line: &str) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conformance-legacy");
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("conformance-legacy");
    copy_tree(&fixture.join("src"), &project.join("src"), None);
    for file in ["Cargo.toml", "Cargo.lock"] {
        std::fs::copy(
            fixture.join(format!("kube-{line}")).join(file),
            project.join(file),
        )
        .unwrap();
    }
    strip_newer_kinds(&project, line);
    let run = rsop(&project, &["manifests", "--static"]).success();
    assert!(!run.stderr.contains("built"), "{}", run.stderr);
    let deviations = vec![Deviation {
        name: "a bare serde_json::Value field preserves unknown fields (kube-derive's `{}` is not structural)",
        key: "legacy.rsop.dev/Everything/v1",
        pointer: "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/raw",
        kube: json!({"description": "Free-form data."}),
        rsop: json!({"description": "Free-form data.", "x-kubernetes-preserve-unknown-fields": true}),
    }];
    let report = differences(&project, &deviations);
    assert!(
        report.is_empty(),
        "rsop's CRDs differ from kube-derive {line}'s:\n{report}"
    );
}

/// kube 0.70: the rewriter that hoists only externally tagged enums and
/// leaves a flattened map alone, `#[kube(apiextensions)]`, k8s-openapi
/// 0.14.
#[test]
fn static_crds_equal_kube_derive_on_kube_0_70() {
    compare_legacy("0.70");
}

/// kube 0.71 to 0.75: the same, and a flattened map preserves unknown
/// fields; k8s-openapi 0.15.
#[test]
fn static_crds_equal_kube_derive_on_kube_0_74() {
    compare_legacy("0.74");
}

/// kube 0.76 to 0.90: the rewriter of untagged enums and documented unit
/// variants too, on k8s-openapi 0.18 (kube 0.82, the release of 2023).
#[test]
fn static_crds_equal_kube_derive_on_kube_0_82() {
    compare_legacy("0.82");
}

/// kube 0.85 to 0.90 on k8s-openapi 0.21.
#[test]
fn static_crds_equal_kube_derive_on_kube_0_88() {
    compare_legacy("0.88");
}

/// kube 0.91 to 1.1: the rewriter that drops `uniqueItems`, validation
/// rules, k8s-openapi 0.25.
#[test]
fn static_crds_equal_kube_derive_on_kube_1_1() {
    compare_legacy("1.1");
}

/// kube 0.98 and 0.99: `#[kube(rule)]`, `CELSchema` and its
/// `#[cel_validate]`, k8s-openapi 0.24.
#[test]
fn static_crds_equal_kube_derive_on_kube_0_98() {
    compare_legacy("0.98");
}

/// The unified diff of each CRD version rsop wrote under `project` and
/// kube-derive's `K::crd()` of it, from the project's binary (which prints
/// them all as one JSON map); empty when all are equal but for
/// `deviations`.
fn differences(project: &Path, deviations: &[Deviation]) -> String {
    // PyYAML (YAML 1.1) reads what serde reads, so both equal `K::crd()`.
    let problems = yaml_reader_disagreements(project, &yaml_files(&project.join("config")));
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    let mut ours: BTreeMap<String, Value> = BTreeMap::new();
    for entry in std::fs::read_dir(project.join("config/crd/bases")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let crd: Value = serde_yaml_ng::from_str(&text).unwrap();
        // One document per version, shaped like a single-version `crd()`.
        for version in crd["spec"]["versions"].as_array().unwrap() {
            let mut single = crd.clone();
            single["spec"]["versions"] = json!([version]);
            let key = format!(
                "{}/{}/{}",
                crd["spec"]["group"].as_str().unwrap(),
                crd["spec"]["names"]["kind"].as_str().unwrap(),
                version["name"].as_str().unwrap()
            );
            ours.insert(key, single);
        }
    }

    let out = run_tool(
        project,
        "cargo",
        &["run", "--quiet"],
        &generated_cargo_env(),
    );
    let theirs: BTreeMap<String, Value> = serde_json::from_slice(&out.stdout).unwrap();

    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "rsop and kube-derive found different kinds"
    );
    let mut report = String::new();
    for (key, mut expected) in theirs {
        let actual = ours.remove(&key).unwrap();
        for d in deviations.iter().filter(|d| d.key == key) {
            let kube_value = expected
                .pointer_mut(d.pointer)
                .unwrap_or_else(|| panic!("deviation `{}` no longer applies", d.name));
            assert_eq!(
                *kube_value, d.kube,
                "kube-derive's output at {} changed; revisit the deviation `{}`",
                d.pointer, d.name
            );
            *kube_value = d.rsop.clone();
        }
        if actual != expected {
            // A readable diff of the two documents (object keys are sorted).
            let a = serde_json::to_string_pretty(&actual).unwrap();
            let e = serde_json::to_string_pretty(&expected).unwrap();
            let diff = similar::TextDiff::from_lines(&e, &a)
                .unified_diff()
                .context_radius(4)
                .header(&format!("kube-derive {key}"), &format!("rsop {key}"))
                .to_string();
            report.push_str(&diff);
        }
    }
    report
}
