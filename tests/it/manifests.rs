//! `rsop manifests`: manifest cases (sources in, expected YAML out),
//! `--check`/`--diff` on a real project, and every diagnostic.

use std::path::Path;

use crate::support::{
    assert_tree, copy_tree, refusal_problems, render_and_validate, rsop, snapshot, validate,
};

/// Each directory under tests/manifests is a crate; `rsop manifests` on it
/// must write exactly its `expected/` tree (under `config/`).
#[test]
fn manifest_cases_match_their_expected_output() {
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/manifests");
    let mut names: Vec<_> = std::fs::read_dir(&cases)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    assert!(names.len() >= 3, "the manifest cases are missing");
    for case in names {
        let tmp = tempfile::tempdir().unwrap();
        copy_tree(&case, tmp.path(), Some("expected"));
        rsop(tmp.path(), &["manifests"]).success();
        assert_tree(&tmp.path().join("config"), &case.join("expected"));
        // The webhook configurations are what the API server accepts.
        let webhooks = case.join("expected/webhook/manifests.yaml");
        if webhooks.exists() {
            validate(tmp.path(), &std::fs::read_to_string(&webhooks).unwrap());
        }
        // A second run changes nothing, byte for byte.
        let before = snapshot(tmp.path());
        let again = rsop(tmp.path(), &["manifests"]).success();
        assert_eq!(snapshot(tmp.path()), before, "{}", case.display());
        assert!(
            again.stdout.lines().all(|l| l.starts_with("skip")),
            "{}",
            again.stdout
        );
    }
}

const GUESTBOOK: &str = r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// GuestbookSpec is the desired state of a Guestbook.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "webapp.example.com", version = "v1", kind = "Guestbook", namespaced)]
pub struct GuestbookSpec {
    /// Number of replicas.
    pub size: i32,
}
"#;

/// Adds a Guestbook kind to an init'd project, wired into its module tree
/// and CRD kustomization.
fn add_guestbook(dir: &Path) {
    std::fs::create_dir_all(dir.join("src/api")).unwrap();
    std::fs::write(dir.join("src/api/guestbook.rs"), GUESTBOOK).unwrap();
    std::fs::write(dir.join("src/api/mod.rs"), "pub mod guestbook;\n").unwrap();
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        lib.replace(
            "// +rsop:scaffold:modules",
            "pub mod api;\n// +rsop:scaffold:modules",
        ),
    )
    .unwrap();
    let crd = std::fs::read_to_string(dir.join("config/crd/kustomization.yaml")).unwrap();
    std::fs::write(
        dir.join("config/crd/kustomization.yaml"),
        crd.replace(
            "# +rsop:scaffold:crd-resources",
            "- bases/webapp.example.com_guestbooks.yaml\n# +rsop:scaffold:crd-resources",
        ),
    )
    .unwrap();
}

#[test]
fn check_passes_when_in_sync_and_fails_with_a_diff_on_drift() {
    let tmp = tempfile::tempdir().unwrap();
    rsop(
        tmp.path(),
        &["init", "--domain", "example.com", "--project-name", "demo"],
    )
    .success();
    let check = rsop(tmp.path(), &["manifests", "--check"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (0, ""),
        "right after init: {}",
        check.stderr
    );

    add_guestbook(tmp.path());
    let check = rsop(tmp.path(), &["manifests", "--check"]);
    assert_eq!(check.code, 1, "a new kind is drift");
    assert!(
        check
            .stdout
            .contains("+++ b/config/crd/bases/webapp.example.com_guestbooks.yaml"),
        "{}",
        check.stdout
    );
    assert!(
        !tmp.path().join("config/crd/bases").exists(),
        "--check wrote files"
    );

    let diff = rsop(tmp.path(), &["manifests", "--diff"]).success();
    assert!(
        diff.stdout
            .contains("+  name: guestbooks.webapp.example.com"),
        "{}",
        diff.stdout
    );
    let check = rsop(tmp.path(), &["manifests", "--check"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (0, ""),
        "after writing: {}",
        check.stderr
    );

    // The written CRD renders with the rest and validates.
    let yaml = render_and_validate(tmp.path(), "config/default");
    assert!(yaml.contains("kind: CustomResourceDefinition"), "{yaml}");

    // Adding a field is drift again, shown as a diff of the schema.
    let src = tmp.path().join("src/api/guestbook.rs");
    let text = std::fs::read_to_string(&src).unwrap();
    std::fs::write(
        &src,
        text.replace(
            "pub size: i32,",
            "pub size: i32,\n    /// The image.\n    pub image: String,",
        ),
    )
    .unwrap();
    let before = snapshot(tmp.path());
    let check = rsop(tmp.path(), &["manifests", "--check"]);
    assert_eq!(check.code, 1);
    assert!(
        check
            .stdout
            .contains("+                description: The image."),
        "{}",
        check.stdout
    );
    assert_eq!(snapshot(tmp.path()), before, "--check changed files");
}

/// One source with a problem, and what rsop must say about it.
struct Bad {
    name: &'static str,
    source: &'static str,
    expect: &'static [&'static str],
}

const KIND_HEAD: &str =
    "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";

const BAD: &[Bad] = &[
    Bad {
        name: "an attribute macro of another crate writes the kube attribute",
        source: "#[versioned(crd(group = \"a.io\"))]\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\npub struct AppSpec { pub x: i32 }\n",
        expect: &[
            "`AppSpec` derives `CustomResource` without a whole `#[kube(group, version, kind)]`: the attribute macro `#[versioned]`",
            "src/lib.rs:7:",
            "[package.metadata.rsop] external = [\"src/lib.rs\"]",
        ],
    },
    Bad {
        name: "unknown kube key",
        source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\", shortnames = \"a\")]\npub struct AppSpec { pub x: i32 }\n",
        expect: &[
            "unknown key `shortnames` in `#[kube(...)]`",
            "src/lib.rs:6:",
            "did you mean `shortname`?",
        ],
    },
    Bad {
        name: "missing kind",
        source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\")]\npub struct AppSpec { pub x: i32 }\n",
        expect: &["`#[kube(...)]` has no `kind`", "src/lib.rs:7:12"],
    },
    Bad {
        name: "unknown schemars key",
        source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec {\n    #[schemars(lenght(min = 1))]\n    pub name: String,\n}\n",
        expect: &[
            "unknown key `lenght` in `#[schemars(...)]`",
            "src/lib.rs:8:16",
            "App.spec.name",
            "did you mean `length`?",
        ],
    },
    Bad {
        name: "unknown x_kube key",
        source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, kube::KubeSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec {\n    #[x_kube(validations = \"self > 0\")]\n    pub n: i32,\n}\n",
        expect: &[
            "unknown key `validations` in `#[x_kube(...)]`",
            "did you mean `validation`?",
        ],
    },
    Bad {
        name: "unresolvable type",
        source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec {\n    pub when: time::OffsetDateTime,\n}\n",
        expect: &[
            "rsop cannot derive a schema for the external type `time::OffsetDateTime`",
            "src/lib.rs:8:15",
            "App.spec.when",
            "drop `--static`",
        ],
    },
    Bad {
        name: "custom JsonSchema impl",
        source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec { pub c: Custom }\n#[derive(Deserialize, Serialize, Clone, Debug)]\npub struct Custom;\nimpl JsonSchema for Custom {\n    fn schema_name() -> std::borrow::Cow<'static, str> { \"Custom\".into() }\n    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {\n        let mut s = schemars::json_schema!({});\n        for key in std::env::args() { s.insert(key, true.into()); }\n        s\n    }\n}\n",
        expect: &[
            "`Custom` implements `JsonSchema` by hand",
            "src/lib.rs:10:1",
            "drop `--static`",
        ],
    },
    Bad {
        name: "schema_with",
        source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec {\n    #[schemars(schema_with = \"my_schema\")]\n    pub x: String,\n}\n",
        expect: &[
            "`schema_with` runs a function rsop cannot evaluate",
            "App.spec.x",
            "drop `--static`",
        ],
    },
    // A value kube-derive takes but rsop cannot evaluate sends the kind to
    // the build (refused here by `--static`), never stops the run.
    Bad {
        name: "merge strategy from a function",
        source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, kube::KubeSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec {\n    #[x_kube(merge_strategy = ListMerge::Map(keys()))]\n    pub x: Vec<Item>,\n}\n#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]\npub struct Item { pub name: String }\nfn keys() -> Vec<String> { vec![\"name\".into()] }\n",
        expect: &[
            "rsop cannot evaluate this merge strategy",
            "src/lib.rs:8:31",
            "App.spec.x",
            "drop `--static`",
        ],
    },
    Bad {
        name: "mixed unit and data enum",
        source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec { pub e: E }\n#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]\npub enum E { A, B(String) }\n",
        expect: &[
            "an enum mixes unit variants",
            "src/lib.rs:7:12",
            "App.spec.e",
        ],
    },
    Bad {
        name: "two storage versions",
        source: "pub mod a {\nuse super::*;\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec { pub x: i32 }\n}\npub mod b {\nuse super::*;\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v2\", kind = \"App\")]\npub struct AppSpec { pub x: i32 }\n}\n",
        expect: &[
            "`App.a.io` has several storage versions: `v2`, `v1`",
            "storage = false",
        ],
    },
    Bad {
        name: "bad RBAC marker",
        source: "// +rsop:rbac:groups=apps,resources=deployments,verb=get\n",
        expect: &[
            "unknown key `verb`",
            "src/lib.rs:5:4",
            "did you mean `verbs`?",
        ],
    },
    Bad {
        name: "protected group with an invalid approval",
        source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"kubernetes.io\", version = \"v1\", kind = \"App\", annotation(\"api-approved.kubernetes.io\", \"yes\"))]\npub struct AppSpec { pub x: i32 }\n",
        expect: &[
            "`kubernetes.io` is a protected group and its `api-approved.kubernetes.io` annotation is neither a URL nor starts with `unapproved`",
            "src/lib.rs:7:12",
        ],
    },
    Bad {
        name: "syntax error",
        source: "pub struct {\n",
        expect: &[
            "cannot parse Rust: unbalanced delimiters or an invalid token",
            "src/lib.rs:5:",
        ],
    },
    Bad {
        name: "missing module file",
        source: "mod api;\n",
        expect: &[
            "`mod api;` has no file: neither `src/api.rs` nor `src/api/mod.rs` exists",
            "src/lib.rs:5:5",
            "create the module's file",
        ],
    },
    Bad {
        name: "kind macro rsop cannot expand",
        source: "macro_rules! kinds {\n    ($spec:ident) => {\n        #[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n        #[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\n        pub struct $spec { pub x: i32 }\n    };\n}\nkinds!(\"AppSpec\");\n",
        expect: &[
            "rsop cannot expand `kinds!` here",
            "no arm of the macro matches this invocation",
            "src/lib.rs:12:1",
            "declare the kind with `#[derive(CustomResource)]` outside the macro",
        ],
    },
    Bad {
        name: "bad webhook marker",
        source: "// +rsop:webhook:path=/validate-a-io-v1-app,mutating=false,failurePolicy=fail,sideEffect=None,groups=a.io,resources=apps,verbs=create,versions=v1,name=vapp.a.io,admissionReviewVersions=v1\n",
        expect: &[
            "unknown key `sideEffect` in webhook marker",
            "src/lib.rs:5:4",
            "did you mean `sideEffects`?",
        ],
    },
    Bad {
        name: "invalid webhook values",
        source: "// +kubebuilder:webhook:path=/mutate-a-io-v1-app,mutating=true,failurePolicy=retry,sideEffects=Some,groups=a.io,resources=apps,verbs=create;get,versions=v1,name=mapp.a.io,admissionReviewVersions=v1\n",
        expect: &[
            "invalid value `retry` for `failurePolicy` in webhook marker",
            "the values are `Fail` and `Ignore`",
            "`sideEffects=Some` is refused by admissionregistration.k8s.io/v1",
            "unknown verb `get` in webhook marker",
            "src/lib.rs:5:4",
            "3 problems in the sources",
        ],
    },
    Bad {
        name: "webhook marker without required keys",
        source: "// +rsop:webhook:path=/mutate-a-io-v1-app,mutating=true,name=mapp.a.io\n",
        expect: &[
            "missing `failurePolicy` in webhook marker",
            "missing `sideEffects` in webhook marker",
            "missing `admissionReviewVersions` in webhook marker",
            "src/lib.rs:5:4",
        ],
    },
    Bad {
        name: "duplicate webhook name",
        source: "// +rsop:webhook:path=/mutate-a-io-v1-app,mutating=true,failurePolicy=fail,sideEffects=None,groups=a.io,resources=apps,verbs=create,versions=v1,name=app.a.io,admissionReviewVersions=v1\n\
                 // +rsop:webhook:path=/validate-a-io-v1-app,mutating=false,failurePolicy=fail,sideEffects=None,groups=a.io,resources=apps,verbs=create,versions=v1,name=app.a.io,admissionReviewVersions=v1\n",
        expect: &[
            "duplicate webhook name `app.a.io`",
            "src/lib.rs:6:4",
            "also names the webhook of the marker at src/lib.rs:5:4",
        ],
    },
];

/// A package named `bad` whose `src/lib.rs` is `lib`, in a directory of
/// its own.
fn bad_crate(lib: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("Cargo.toml"),
        "[package]\nname = \"bad\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::create_dir(tmp.path().join("src")).unwrap();
    std::fs::write(tmp.path().join("src/lib.rs"), lib).unwrap();
    tmp
}

#[test]
fn problems_in_sources_are_reported_with_location_and_nothing_is_written() {
    let mut failures = Vec::new();
    for case in BAD {
        let tmp = bad_crate(&format!("{KIND_HEAD}\n{}", case.source));
        let mut needles = case.expect.to_vec();
        needles.push("nothing was written");
        // `--static`: the constructs that need code are refused, not built.
        if let Some(problems) =
            refusal_problems(tmp.path(), &["manifests", "--static"], 1, &needles)
        {
            failures.push(format!("{}: {problems}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// With the approval annotation (a URL, or a value that starts with
/// `unapproved`), a kind of a protected group is written, annotation included.
#[test]
fn protected_groups_pass_with_an_approval_annotation() {
    for value in [
        "https://github.com/kubernetes/enhancements/pull/1111",
        "unapproved, experimental-only",
    ] {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("Cargo.toml"),
            "[package]\nname = \"approved\"\nversion = \"0.1.0\"\n",
        )
        .unwrap();
        std::fs::create_dir(tmp.path().join("src")).unwrap();
        std::fs::write(
            tmp.path().join("src/lib.rs"),
            format!(
                "{KIND_HEAD}#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n\
                 #[kube(group = \"apps.k8s.io\", version = \"v1\", kind = \"App\", \
                 annotation(\"api-approved.kubernetes.io\", \"{value}\"))]\npub struct AppSpec {{ pub x: i32 }}\n"
            ),
        )
        .unwrap();
        rsop(tmp.path(), &["manifests"]).success();
        let crd =
            std::fs::read_to_string(tmp.path().join("config/crd/bases/apps.k8s.io_apps.yaml"))
                .unwrap();
        assert!(
            crd.contains(&format!("api-approved.kubernetes.io: {value}")),
            "{crd}"
        );
    }
}

/// A project of one kind, `App`, whose spec struct has `body`, with this
/// Cargo.toml and Cargo.lock.
fn locked_project(manifest: &str, lock: &str, body: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("Cargo.toml"), manifest).unwrap();
    std::fs::write(tmp.path().join("Cargo.lock"), lock).unwrap();
    std::fs::create_dir(tmp.path().join("src")).unwrap();
    std::fs::write(
        tmp.path().join("src/lib.rs"),
        format!(
            "{KIND_HEAD}\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n\
             #[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\n\
             pub struct AppSpec {{ {body} }}\n"
        ),
    )
    .unwrap();
    tmp
}

/// A k8s-openapi release rsop has no schemas for is named, at its line in
/// Cargo.lock, with the fallback; with `--static` nothing is written.
#[test]
fn an_unsupported_k8s_openapi_release_is_reported_and_nothing_is_written() {
    let tmp = locked_project(
        "[package]\nname = \"old\"\nversion = \"0.1.0\"\n\n[dependencies]\n\
         k8s-openapi = { version = \"0.13\", features = [\"v1_22\"] }\n",
        "version = 4\n\n[[package]]\nname = \"k8s-openapi\"\nversion = \"0.13.1\"\n\n\
         [[package]]\nname = \"old\"\nversion = \"0.1.0\"\ndependencies = [\"k8s-openapi\"]\n",
        "pub pod: k8s_openapi::api::core::v1::PodSpec",
    );
    let needles = [
        "k8s-openapi 0.13.1 is not supported statically; rsop has 0.14.0, 0.15.0, 0.16.0, 0.17.0, 0.18.0, 0.19.0, 0.20.0, 0.21.0, 0.21.1, 0.22.0, 0.23.0, 0.24.0, 0.25.0, 0.26.0, 0.26.1, 0.27.0, 0.27.1, 0.28.0 and 0.29.0",
        "Cargo.lock:5:11",
        "drop `--static`",
        "nothing was written",
    ];
    if let Some(problems) = refusal_problems(tmp.path(), &["manifests", "--static"], 1, &needles) {
        panic!("{problems}");
    }
}

/// A kube or schemars release rsop has no model of (kube before 0.70,
/// schemars 0.9, a release newer than rsop's) is never guessed: each kind needs the
/// build, for that one reason, and `--static` refuses at the lock's line.
#[test]
fn a_release_rsop_has_no_model_of_is_never_guessed() {
    for (krate, version, expected) in [
        (
            "kube-core",
            "0.69.1",
            "rsop has no model of kube 0.69.1: it derives CRDs statically for kube 0.70 to 5.0",
        ),
        (
            "schemars",
            "1.3.0",
            "rsop has no model of schemars 1.3.0: it derives CRDs statically for schemars 0.8 and 1.0 to 1.2",
        ),
    ] {
        let tmp = locked_project(
            "[package]\nname = \"op\"\nversion = \"0.1.0\"\n",
            &format!(
                "version = 4\n\n[[package]]\nname = \"{krate}\"\nversion = \"{version}\"\n\n\
                 [[package]]\nname = \"op\"\nversion = \"0.1.0\"\n"
            ),
            "pub size: i32",
        );
        let needles = [
            expected,
            "Cargo.lock:5:11",
            "drop `--static`",
            "nothing was written",
        ];
        if let Some(problems) =
            refusal_problems(tmp.path(), &["manifests", "--static"], 1, &needles)
        {
            panic!("{krate}: {problems}");
        }
    }
}

/// Code rustc refuses (a type no module declares or imports, E0412) is an
/// error at its use in the default mode too, at once: no build is started
/// for the kind's hand-written schema, which alone would need one.
#[test]
fn a_type_nothing_declares_fails_at_once_without_a_build() {
    let tmp = bad_crate(&format!(
        "{KIND_HEAD}\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n\
             #[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\n\
             pub struct AppSpec {{\n    pub labels: HashMap<String, String>,\n    pub widget: Widget,\n    pub custom: Custom,\n}}\n\
             #[derive(Deserialize, Serialize, Clone, Debug)]\npub struct Custom;\n\
             impl JsonSchema for Custom {{\n    fn schema_name() -> std::borrow::Cow<'static, str> {{ \"Custom\".into() }}\n    \
             fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {{ custom() }}\n}}\n\
             mod helpers {{\n    pub struct Widget;\n}}\n"
    ));
    let needles = [
        "error: cannot find type `HashMap` in this scope",
        "src/lib.rs:8:17",
        "import it: `use std::collections::HashMap;`",
        "error: cannot find type `Widget` in this scope",
        "src/lib.rs:9:17",
        "rustc refuses this code (E0412)",
        "nothing was written",
    ];
    // Files changed would include a build's target directory.
    if let Some(problems) = refusal_problems(tmp.path(), &["manifests"], 1, &needles) {
        panic!("{problems}");
    }
}

#[test]
fn all_problems_are_reported_at_once() {
    let tmp = bad_crate(&format!("{KIND_HEAD}{}{}", BAD[0].source, BAD[9].source));
    let run = rsop(tmp.path(), &["manifests"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("2 problems in the sources"),
        "{}",
        run.stderr
    );
}

/// The `#[kube(...)]` grammar is the one of the kube-derive in Cargo.lock:
/// kube-derive 2 joins printcolumn strings into one JSON array (so a string
/// may hold several columns), later releases take one column per string,
/// and keys a release lacks are refused with the release that has them.
#[test]
fn the_kube_attribute_grammar_follows_the_projects_kube_derive() {
    const TWO_COLUMNS: &str = r##"printcolumn = r#"{"name":"Size","type":"integer","jsonPath":".spec.size"},{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#"##;
    let project = |kube_derive: &str, kube: &str| {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("Cargo.toml"),
            "[package]\nname = \"old\"\nversion = \"0.1.0\"\n",
        )
        .unwrap();
        std::fs::write(
            tmp.path().join("Cargo.lock"),
            format!(
                "version = 4\n\n[[package]]\nname = \"kube-derive\"\nversion = \"{kube_derive}\"\n"
            ),
        )
        .unwrap();
        std::fs::create_dir(tmp.path().join("src")).unwrap();
        std::fs::write(
            tmp.path().join("src/lib.rs"),
            format!(
                "{KIND_HEAD}#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n\
                 #[kube(group = \"a.io\", version = \"v1\", kind = \"App\", {kube})]\npub struct AppSpec {{ pub size: i32 }}\n"
            ),
        )
        .unwrap();
        tmp
    };

    let old = project("2.0.1", TWO_COLUMNS);
    rsop(old.path(), &["manifests", "--static"]).success();
    let crd = std::fs::read_to_string(old.path().join("config/crd/bases/a.io_apps.yaml")).unwrap();
    assert!(
        crd.contains("jsonPath: .spec.size") && crd.contains("name: Age"),
        "{crd}"
    );

    let new = project("5.0.0", TWO_COLUMNS);
    if let Some(problems) = refusal_problems(
        new.path(),
        &["manifests", "--static"],
        1,
        &[
            "invalid `printcolumn` JSON: trailing characters",
            "src/lib.rs:5:",
            "nothing was written",
        ],
    ) {
        panic!("{problems}");
    }

    let no_spec = project("4.2.0", "no_spec");
    if let Some(problems) = refusal_problems(
        no_spec.path(),
        &["manifests", "--static"],
        1,
        &[
            "kube-derive 4.2 has no `no_spec` key in `#[kube(...)]`",
            "it came with kube-derive 5.0",
            "nothing was written",
        ],
    ) {
        panic!("{problems}");
    }

    // Keys of kube 0.85 to 1.1: `rule` was `validation` before 1.0, and
    // `doc` came with 0.87.2.
    let rule = project(
        "0.99.0",
        r#"rule = Rule::new("self.spec.size > 0").message("positive")"#,
    );
    rsop(rule.path(), &["manifests", "--static"]).success();
    let crd = std::fs::read_to_string(rule.path().join("config/crd/bases/a.io_apps.yaml")).unwrap();
    assert!(
        crd.contains("rule: self.spec.size > 0") && crd.contains("title: App_kube_validation"),
        "{crd}"
    );
    for (release, key, expected) in [
        (
            "1.1.0",
            r#"rule = "self.x""#,
            "kube-derive 1.0 replaced it with `validation`",
        ),
        ("0.87.1", r#"doc = "x""#, "it came with kube-derive 0.87.2"),
    ] {
        let old = project(release, key);
        if let Some(problems) =
            refusal_problems(old.path(), &["manifests", "--static"], 1, &[expected])
        {
            panic!("{release}: {problems}");
        }
    }
}

/// A path dependency (a sibling workspace crate) is read for its types:
/// the crate's kind embeds one statically, and the dependency's own kinds
/// and RBAC markers stay that crate's.
#[test]
fn path_dependencies_are_read_for_their_types_only() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"op\", \"api\"]\n\n[workspace.dependencies]\napi-types = { path = \"api\", features = [\"from-workspace\"] }\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("api/src")).unwrap();
    std::fs::write(
        root.join("api/Cargo.toml"),
        "[package]\nname = \"api-types\"\nversion = \"0.1.0\"\n\n[features]\ngated = []\nfrom-workspace = []\n",
    )
    .unwrap();
    std::fs::write(
        root.join("api/src/lib.rs"),
        format!(
            "{KIND_HEAD}// +rsop:rbac:groups=other.io,resources=things,verbs=get\n\
             pub const MAX: i32 = 9;\n\
             pub mod util {{ pub fn is_zero(v: &i32) -> bool {{ *v == 0 }} }}\n\
             #[cfg(feature = \"from-workspace\")]\n\
             pub mod ws {{ #[derive(serde::Deserialize, serde::Serialize, Clone, Debug, schemars::JsonSchema)] pub struct Ws {{ pub w: i32 }} }}\n\
             #[cfg(feature = \"gated\")]\n\
             pub mod gated {{ #[derive(serde::Deserialize, serde::Serialize, Clone, Debug, schemars::JsonSchema)] pub struct Gated {{ pub g: i32 }} }}\n\
             #[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]\n\
             pub struct Shared {{ #[schemars(range(max = crate::MAX))] pub n: i32 }}\n\
             #[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n\
             #[kube(group = \"other.io\", version = \"v1\", kind = \"Other\")]\n\
             pub struct OtherSpec {{ pub x: i32 }}\n"
        ),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("op/src")).unwrap();
    std::fs::write(
        root.join("op/Cargo.toml"),
        "[package]\nname = \"op\"\nversion = \"0.1.0\"\n\n[dependencies]\napi-types = { workspace = true, features = [\"gated\"] }\n",
    )
    .unwrap();
    std::fs::write(
        root.join("op/src/lib.rs"),
        format!(
            "{KIND_HEAD}use api_types::util::is_zero;\n\
             mod checks {{ pub use super::is_zero as zero; }}\n\
             #[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n\
             #[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\n\
             pub struct AppSpec {{ pub shared: api_types::Shared,\n\
             #[serde(default, skip_serializing_if = \"is_zero\")] pub a: i32,\n\
             #[serde(default, skip_serializing_if = \"checks::zero\")] pub b: i32,\n\
             pub gated: api_types::gated::Gated,\n\
             pub ws: api_types::ws::Ws }}\n"
        ),
    )
    .unwrap();
    rsop(&root.join("op"), &["manifests", "--static"]).success();
    let crds: Vec<_> = std::fs::read_dir(root.join("op/config/crd/bases"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(crds, ["a.io_apps.yaml"]);
    let crd = std::fs::read_to_string(root.join("op/config/crd/bases/a.io_apps.yaml")).unwrap();
    assert!(crd.contains("maximum: 9.0"), "{crd}");
    let role = std::fs::read_to_string(root.join("op/config/rbac/role.yaml")).unwrap();
    assert!(!role.contains("other.io"), "{role}");
}

/// Foreign kinds (kopium output, `src/external/`, `schema = "disabled"`,
/// `[package.metadata.rsop] external`) get no CRD and are counted on one
/// line; an entry of `external` that names nothing fails at its Cargo.toml
/// line with a suggestion, and nothing is written.
#[test]
fn foreign_kinds_are_skipped_and_a_wrong_external_entry_is_refused() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/manifests/foreign-kinds");
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&case, tmp.path(), Some("expected"));
    let run = rsop(tmp.path(), &["manifests"]).success();
    assert!(
        run.stderr.contains(
            "wrote no CRD for 5 kinds the project uses but does not own (1 generated by kopium, \
             1 under src/external/, 1 with `schema = \"disabled\"`, 2 listed in [package.metadata.rsop] external)"
        ),
        "{}",
        run.stderr
    );

    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&case, tmp.path(), Some("expected"));
    let manifest = tmp.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace(
            "clients::traefik::IngressRoute",
            "clients::trafik::IngressRoute",
        ),
    )
    .unwrap();
    if let Some(problems) = refusal_problems(
        tmp.path(),
        &["manifests"],
        1,
        &[
            "`[package.metadata.rsop] external` lists `clients::trafik::IngressRoute`, which is no kind of this crate",
            "--> Cargo.toml:8:",
            "did you mean `clients::traefik::IngressRoute`?",
            "nothing was written",
        ],
    ) {
        panic!("{problems}");
    }
    // The suggestion, taken, clears the error.
    std::fs::write(&manifest, text).unwrap();
    rsop(tmp.path(), &["manifests"]).success();
}

/// A type whose `crd()` the crate writes by hand and its crdgen prints gets
/// a note naming it, where it is printed and the command that prints it:
/// rsop writes no CRD for it, whether or not the crdgen also prints a
/// derived kind.
#[test]
fn a_hand_written_crd_is_named_never_passed_over() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/manifests/hand-written-crd");
    let note = "note: src/lib.rs:19:1: `Legacy` implements `crd()` by hand, printed at \
                src/bin/crdgen.rs:7:37; rsop derives the CRDs of `#[derive(CustomResource)]` \
                kinds only and wrote none for it: `cargo run --bin crdgen` prints it, or derive \
                `CustomResource` on its spec";
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&case, tmp.path(), Some("expected"));
    let run = rsop(tmp.path(), &["manifests"]).success();
    assert!(run.stderr.contains(note), "{}", run.stderr);

    // A crdgen that prints only the hand-written kind.
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&case, tmp.path(), Some("expected"));
    let crdgen = tmp.path().join("src/bin/crdgen.rs");
    let text = std::fs::read_to_string(&crdgen).unwrap();
    std::fs::write(
        &crdgen,
        text.replace("[App::crd(), Legacy::crd()]", "[Legacy::crd()]"),
    )
    .unwrap();
    let run = rsop(tmp.path(), &["manifests"]).success();
    assert!(
        run.stderr
            .contains("`Legacy` implements `crd()` by hand, printed at src/bin/crdgen.rs:7:"),
        "{}",
        run.stderr
    );
}

/// A `merge_crds(..., "vN")` call decides the storage version of versions
/// that do not say; one that names no version of the kind, or none at all
/// with several stored versions, is an error that shows the fix.
#[test]
fn merge_crds_calls_choose_the_storage_version() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/manifests/merge-crds");
    let crdgen = "src/bin/crdgen.rs";
    let text = std::fs::read_to_string(case.join(crdgen)).unwrap();
    for (changed, needles) in [
        (
            text.replace("\"v2\").unwrap", "\"v3\").unwrap"),
            vec![
                "`merge_crds` stores version `v3` of `Widget.shop.example.com`, which has no such version",
                "--> src/bin/crdgen.rs:6:",
                "name one of its versions: `v2`, `v1`",
            ],
        ),
        (
            text.replace("merge_crds(vec!", "(vec!")
                .replace(", \"v2\").unwrap()", ")"),
            vec![
                "`Widget.shop.example.com` has several storage versions: `v2`, `v1`",
                "kube::core::crd::merge_crds(vec![v2::Widget::crd(), v1::Widget::crd()], \"v2\")",
            ],
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        copy_tree(&case, tmp.path(), Some("expected"));
        std::fs::write(tmp.path().join(crdgen), changed).unwrap();
        let mut needles = needles;
        needles.push("nothing was written");
        if let Some(problems) = refusal_problems(tmp.path(), &["manifests"], 1, &needles) {
            panic!("{problems}");
        }
    }
}

/// Types of a crates.io dependency that derives `JsonSchema` (such as the
/// kopium-generated `gateway-api`) are read from the sources cargo
/// downloaded, for the release Cargo.lock holds and with the features the
/// package enables on it.
#[test]
fn types_of_a_downloaded_crates_io_dependency_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("cargo-home");
    let krate = home.join("registry/src/index.crates.io-0123456789abcdef/fake-routes-0.3.1");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"fake-routes\"\nversion = \"0.3.1\"\n\n[features]\ndefault = []\nexperimental = []\n\n\
         [dependencies.schemars]\nversion = \"1\"\n\n[dependencies.serde]\nversion = \"1\"\n",
    )
    .unwrap();
    std::fs::write(
        krate.join("src/lib.rs"),
        "pub mod apis;\n#[cfg(feature = \"experimental\")]\npub use apis::experimental;\n",
    )
    .unwrap();
    std::fs::create_dir_all(krate.join("src/apis")).unwrap();
    std::fs::write(
        krate.join("src/apis/mod.rs"),
        "#[cfg(feature = \"experimental\")]\npub mod experimental {\n\
         pub mod grpc {}\npub mod tcp {}\npub mod tls {}\n\
         use schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n\
         /// Where a route sends its requests.\n\
         #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
         pub struct RouteRules {\n    #[serde(rename = \"backendRef\")]\n    pub backend_ref: String,\n    pub weight: Option<i32>,\n}\n}\n",
    )
    .unwrap();
    let project = tmp.path().join("op");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(
        project.join("Cargo.toml"),
        "[package]\nname = \"op\"\nversion = \"0.1.0\"\n\n[dependencies]\n\
         fake-routes = { version = \"0.3\", features = [\"experimental\"] }\n",
    )
    .unwrap();
    std::fs::write(
        project.join("Cargo.lock"),
        "version = 4\n\n[[package]]\nname = \"fake-routes\"\nversion = \"0.3.1\"\n\
         source = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n\
         [[package]]\nname = \"op\"\nversion = \"0.1.0\"\ndependencies = [\"fake-routes\"]\n",
    )
    .unwrap();
    std::fs::write(
        project.join("src/lib.rs"),
        format!(
            "{KIND_HEAD}\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n\
             #[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\n\
             pub struct AppSpec {{ pub rules: Vec<fake_routes::experimental::RouteRules>, pub more: Vec<gateway::RouteRules> }}\n\
             // Globs into the dependency, the type's the last one, as operators re-export them.\n\
             pub mod gateway {{\n    pub use fake_routes::experimental::grpc::*;\n    pub use fake_routes::experimental::tcp::*;\n\
                 pub use fake_routes::experimental::tls::*;\n    pub use fake_routes::experimental::*;\n}}\n"
        ),
    )
    .unwrap();
    let run = crate::support::rsop_with_env(
        &project,
        &["manifests", "--static"],
        &[("CARGO_HOME", home.clone().into_os_string())],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let crd = std::fs::read_to_string(project.join("config/crd/bases/a.io_apps.yaml")).unwrap();
    assert!(
        crd.contains("backendRef:") && crd.contains("Where a route sends its requests."),
        "{crd}"
    );

    // Without the feature that compiles the module, the type is not there.
    std::fs::write(
        project.join("Cargo.toml"),
        "[package]\nname = \"op\"\nversion = \"0.1.0\"\n\n[dependencies]\nfake-routes = \"0.3\"\n",
    )
    .unwrap();
    let run = crate::support::rsop_with_env(
        &project,
        &["manifests", "--static"],
        &[("CARGO_HOME", home.into_os_string())],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
}

/// At the root of a virtual workspace, the error names the members that
/// declare kinds and how to run there; nothing is written.
#[test]
fn a_workspace_root_names_the_members_that_hold_kinds() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"crates/*\", \"tools\"]\n",
    )
    .unwrap();
    for (member, text) in [
        (
            "crates/api",
            format!(
                "{KIND_HEAD}#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec {{ pub x: i32 }}\n"
            ),
        ),
        ("crates/cli", "use kube::CustomResourceExt;\n".to_string()),
        ("tools", "fn main() {}\n".to_string()),
    ] {
        std::fs::create_dir_all(root.join(member).join("src")).unwrap();
        std::fs::write(
            root.join(member).join("Cargo.toml"),
            format!(
                "[package]\nname = \"{}\"\nversion = \"0.1.0\"\n",
                member.replace('/', "-")
            ),
        )
        .unwrap();
        std::fs::write(root.join(member).join("src/lib.rs"), text).unwrap();
    }
    if let Some(problems) = refusal_problems(
        root,
        &["manifests"],
        1,
        &[
            "Cargo.toml` is the root of a workspace, not a package",
            "the kinds are in `crates/api`: run `rsop manifests --dir crates/api`",
        ],
    ) {
        panic!("{problems}");
    }
    rsop(root, &["manifests", "--static", "--dir", "crates/api"]).success();
    assert!(
        root.join("crates/api/config/crd/bases/a.io_apps.yaml")
            .exists()
    );
}

const WEBHOOK_MARKERS: &str = "//! Webhooks of Guestbooks.\n\n\
// +rsop:webhook:path=/validate-webapp-example-com-v1-guestbook,mutating=false,failurePolicy=fail,sideEffects=None,groups=webapp.example.com,resources=guestbooks,verbs=create;update,versions=v1,name=vguestbook-v1.kb.io,admissionReviewVersions=v1\n\
// +rsop:webhook:path=/mutate-webapp-example-com-v1-guestbook,mutating=true,failurePolicy=fail,sideEffects=None,groups=webapp.example.com,resources=guestbooks,verbs=create;update,versions=v1,name=mguestbook-v1.kb.io,admissionReviewVersions=v1\n";

/// `config/webhook/manifests.yaml` is one more derived file: `--check`
/// fails with its diff, `--diff` writes it, `--webhook-dir` moves it, and
/// a project without markers has none (one left from removed markers stays,
/// like the CRD of a removed kind).
#[test]
fn webhook_manifests_follow_the_markers_and_check_covers_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    rsop(
        dir,
        &["init", "--domain", "example.com", "--project-name", "demo"],
    )
    .success();
    add_guestbook(dir);
    rsop(dir, &["manifests"]).success();
    assert!(!dir.join("config/webhook/manifests.yaml").exists());

    std::fs::create_dir_all(dir.join("src/webhooks")).unwrap();
    std::fs::write(dir.join("src/webhooks/guestbook.rs"), WEBHOOK_MARKERS).unwrap();
    std::fs::write(dir.join("src/webhooks/mod.rs"), "pub mod guestbook;\n").unwrap();
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        lib.replace("pub mod api;\n", "pub mod api;\npub mod webhooks;\n"),
    )
    .unwrap();

    let before = snapshot(dir);
    let check = rsop(dir, &["manifests", "--check"]);
    assert_eq!(check.code, 1, "new markers are drift: {}", check.stderr);
    assert!(
        check.stdout.contains("+++ b/config/webhook/manifests.yaml")
            && check.stdout.contains("+kind: MutatingWebhookConfiguration"),
        "{}",
        check.stdout
    );
    assert_eq!(snapshot(dir), before, "--check changed files");

    let diff = rsop(dir, &["manifests", "--diff"]).success();
    assert!(
        diff.stdout.contains("+  name: vguestbook-v1.kb.io"),
        "{}",
        diff.stdout
    );
    let written = std::fs::read_to_string(dir.join("config/webhook/manifests.yaml")).unwrap();
    validate(dir, &written);
    let check = rsop(dir, &["manifests", "--check"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (0, ""),
        "{}",
        check.stderr
    );

    // A changed marker is drift, shown in the file's diff.
    let src = dir.join("src/webhooks/guestbook.rs");
    let text = std::fs::read_to_string(&src).unwrap();
    std::fs::write(
        &src,
        text.replace(
            "verbs=create;update,versions=v1,name=vguestbook",
            "verbs=create;update;delete,versions=v1,name=vguestbook",
        ),
    )
    .unwrap();
    let check = rsop(dir, &["manifests", "--check"]);
    assert_eq!(check.code, 1);
    assert!(check.stdout.contains("+    - DELETE"), "{}", check.stdout);

    // Elsewhere with --webhook-dir.
    rsop(dir, &["manifests", "--webhook-dir", "deploy/webhook"]).success();
    let moved = std::fs::read_to_string(dir.join("deploy/webhook/manifests.yaml")).unwrap();
    assert!(moved.contains("- DELETE"), "{moved}");

    // Without markers, the file is left as it is and nothing is drift.
    std::fs::write(&src, "//! No webhooks any more.\n").unwrap();
    let check = rsop(dir, &["manifests", "--check"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (0, ""),
        "{}",
        check.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("config/webhook/manifests.yaml")).unwrap(),
        written
    );
}

/// The call analysis on an operator written the way people write them
/// (tests/fixtures/rbac-calls): the one call no marker grants is an error
/// at its line with the marker to paste, the one marker no call needs a
/// warning, the call whose kind the sources do not show a note; `warn`
/// writes, `infer` writes the role the calls need.
#[test]
fn rbac_is_checked_against_the_calls_of_the_code() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rbac-calls");
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&fixture, tmp.path(), None);
    let dir = tmp.path();
    let mut problems: Vec<String> = refusal_problems(
        dir,
        &["manifests", "--rbac=check"],
        1,
        &[
            "error: `pods.evict` sends `create` on `pods/eviction`, which no RBAC rule grants",
            "--> src/controller.rs:58:10",
            "help: add the marker `// +rsop:rbac:groups=core,resources=pods/eviction,verbs=create`",
            "warning: src/controller.rs:21:4: this RBAC marker grants `delete` on `secrets` that no call of the code needs",
            "not checked against the role: 1 call whose kind the sources do not show: `anything.get` at src/controller.rs:71:22",
        ],
    )
    .into_iter()
    .collect();
    // Nothing else: the leases are granted by the leader-election role bound
    // to the manager, the kept marker is kept, and test code is not read.
    let run = rsop(dir, &["manifests", "--rbac=warn"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let findings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning:") || l.starts_with("error"))
        .collect();
    assert_eq!(findings.len(), 2, "{}", run.stderr);
    assert!(
        findings.iter().any(|l| l.contains("pods/eviction")),
        "{}",
        run.stderr
    );

    // With the marker added, only the stale marker is left to say.
    let controller = dir.join("src/controller.rs");
    let text = std::fs::read_to_string(&controller).unwrap();
    std::fs::write(
        &controller,
        text.replace(
            "// +rsop:rbac:groups=core,resources=pods/log,verbs=get\n",
            "// +rsop:rbac:groups=core,resources=pods/log,verbs=get\n// +rsop:rbac:groups=core,resources=pods/eviction,verbs=create\n",
        ),
    )
    .unwrap();
    let run = rsop(dir, &["manifests", "--rbac=check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr.matches("warning:").count(), 1, "{}", run.stderr);

    // Without any marker, `infer` writes the role the calls need (the
    // leases stay the leader-election role's).
    let bare: String = text
        .split_inclusive('\n')
        .filter(|l| !l.contains("+rsop:rbac"))
        .collect();
    std::fs::write(&controller, bare).unwrap();
    rsop(dir, &["manifests", "--rbac=infer"]).success();
    let role: serde_yaml_ng::Value = serde_yaml_ng::from_str(
        &std::fs::read_to_string(dir.join("config/rbac/role.yaml")).unwrap(),
    )
    .unwrap();
    let rules: Vec<String> = role["rules"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|r| {
            let list = |key: &str| -> String {
                r[key]
                    .as_sequence()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            format!(
                "{} {} {}",
                list("apiGroups"),
                list("resources"),
                list("verbs")
            )
        })
        .collect();
    assert_eq!(
        rules,
        [
            " configmaps list,watch",
            " nodes list",
            " pods/eviction create",
            " pods/log,secrets get",
            "apps deployments create,list,patch,watch",
            "events.k8s.io events create,patch",
            "example.com widgets list,patch,watch",
            "example.com widgets/status patch",
            "gateway.networking.k8s.io gateways delete",
        ],
        "{rules:#?}"
    );
    let yaml = std::fs::read_to_string(dir.join("config/rbac/role.yaml")).unwrap();
    validate(dir, &yaml);

    // Bad markers next to the calls: a verb's typo and a marker that does
    // not parse are refused where they are, and nothing is written.
    for (marker, needles) in [
        (
            "// +rsop:rbac:groups=core,resources=pods/log,verbs=gte\n",
            &["unknown verb `gte` in RBAC marker", "did you mean `get`?"][..],
        ),
        (
            "// +rsop:rbac:groups=core,resources=pods/log,verbs\n",
            &["src/controller.rs:1:4"][..],
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        copy_tree(&fixture, tmp.path(), None);
        let controller = tmp.path().join("src/controller.rs");
        let text = std::fs::read_to_string(&controller).unwrap();
        std::fs::write(&controller, format!("{marker}{text}")).unwrap();
        problems.extend(refusal_problems(
            tmp.path(),
            &["manifests", "--rbac=check"],
            1,
            needles,
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// A namespaced project's markers make a Role, which cannot grant a request
/// across the cluster: such a call is refused at its line, with what to do
/// instead, in `check` and in `infer` alike, and nothing is written.
#[test]
fn a_namespaced_project_refuses_requests_across_the_cluster() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/init-namespaced-mit");
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&golden, tmp.path(), None);
    let dir = tmp.path();
    std::fs::write(
        dir.join("src/nodes.rs"),
        "use k8s_openapi::api::core::v1::{ConfigMap, Node};\n\
         use kube::{Api, Client};\n\
         \n\
         // +rsop:rbac:groups=core,resources=nodes;configmaps,verbs=list\n\
         pub async fn count(client: Client) -> usize {\n\
         \x20   let maps: Api<ConfigMap> = Api::namespaced(client.clone(), \"system\");\n\
         \x20   let _ = maps.list(&Default::default()).await;\n\
         \x20   let nodes: Api<Node> = Api::all(client);\n\
         \x20   nodes.list(&Default::default()).await.map_or(0, |l| l.items.len())\n\
         }\n",
    )
    .unwrap();
    let lib = dir.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, format!("{text}pub mod nodes;\n")).unwrap();
    let mut problems = Vec::new();
    for mode in ["--rbac=check", "--rbac=infer"] {
        problems.extend(refusal_problems(
            dir,
            &["manifests", mode],
            1,
            &[
                "error: `nodes.list` sends `list` on `nodes` across the cluster, which the Role of a namespaced project cannot grant",
                "--> src/nodes.rs:9:11",
                "help: make the `Api` with `Api::namespaced`",
            ],
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Kinds a crate writes no CRD for get none: hand-written client types in
/// a protected group without the approval annotation, and, where a crdgen
/// prints `K::crd()`, the kinds it does not print, unless they share an API
/// group with one it prints. An enum spec is a kind like any other. Nothing needs the build; `owned` claims a kind back, and
/// an `owned` entry that names nothing fails at its line in Cargo.toml.
#[test]
fn kinds_the_crate_does_not_generate_are_foreign_unless_owned() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/manifests/owned-kinds");
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&case, tmp.path(), Some("expected"));
    let run = rsop(tmp.path(), &["manifests", "--static"]).success();
    assert!(
        run.stderr.contains(
            "note: wrote no CRD for 2 kinds the project uses but does not own \
             (1 in a protected group without an `api-approved.kubernetes.io` annotation: `clients::HttpRoute`, \
             1 that no `K::crd()` call of the crate names: `clients::Sandbox`); their RBAC markers still apply; \
             if the project installs one of these CRDs, list the kind in `[package.metadata.rsop] owned`"
        ),
        "{}",
        run.stderr
    );
    assert_tree(&tmp.path().join("config"), &case.join("expected"));
    // The kind the crdgen does not name, in the group of those it does, is
    // the project's.
    assert!(
        tmp.path()
            .join("config/crd/bases/backup.example.com_schedules.yaml")
            .is_file()
    );

    // Claimed with `owned`, the sandbox gets its CRD.
    let manifest = tmp.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        format!("{text}\n[package.metadata.rsop]\nowned = [\"clients::Sandbox\"]\n"),
    )
    .unwrap();
    let run = rsop(tmp.path(), &["manifests", "--static"]).success();
    assert!(
        run.stdout
            .contains("create  config/crd/bases/agents.x-k8s.io_sandboxes.yaml"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.stderr.contains("wrote no CRD for 1 kind "),
        "{}",
        run.stderr
    );

    // A typo in `owned` is an error at its line; nothing is written.
    std::fs::write(
        &manifest,
        format!("{text}\n[package.metadata.rsop]\nowned = [\"clients::Sandbx\"]\n"),
    )
    .unwrap();
    if let Some(problems) = refusal_problems(
        tmp.path(),
        &["manifests"],
        1,
        &[
            "`[package.metadata.rsop] owned` lists `clients::Sandbx`, which is no kind of this crate",
            "--> Cargo.toml:7:10",
            "did you mean `clients::Sandbox`?",
            "nothing was written",
        ],
    ) {
        panic!("{problems}");
    }

    // A protected group's kind that the project claims must carry the
    // approval annotation: the API server refuses its CRD otherwise.
    std::fs::write(
        &manifest,
        format!("{text}\n[package.metadata.rsop]\nowned = [\"clients::HttpRoute\"]\n"),
    )
    .unwrap();
    if let Some(problems) = refusal_problems(
        tmp.path(),
        &["manifests"],
        1,
        &[
            "the API server refuses the CRD of `HTTPRoute.gateway.networking.k8s.io`: \
             `gateway.networking.k8s.io` is a protected group and it has no `api-approved.kubernetes.io` annotation",
            "src/clients.rs:",
            "annotation(\"api-approved.kubernetes.io\", \"<URL of the pull request that approved the API>\")",
            "such as `\"unapproved, experimental-only\"`",
            "nothing was written",
        ],
    ) {
        panic!("{problems}");
    }
}

/// Dependencies on kube 0.88, whose kube-derive lacks later keys and forms.
const OLD_KUBE: &str = "[dependencies]\nkube = { version = \"0.88\", features = [\"derive\"] }\nschemars = \"0.8\"\nk8s-openapi = { version = \"0.21\", features = [\"v1_29\"] }\n";

/// Each `help:` that names a fix clears its error when applied: rsop runs
/// again on the fixed crate and writes its manifests.
#[test]
fn applying_a_help_clears_its_error() {
    #[derive(Default)]
    struct Fix {
        name: &'static str,
        /// The crate's dependencies: their releases decide what rsop
        /// models (no Cargo.lock: the newest each requirement allows).
        deps: &'static str,
        source: &'static str,
        /// What the help says to append to Cargo.toml.
        cargo_toml: &'static str,
        /// What it says to replace in Cargo.toml, as (from, to).
        cargo_toml_replace: &'static [(&'static str, &'static str)],
        /// What it says to replace in the source, as (from, to).
        replace: &'static [(&'static str, &'static str)],
        /// Code it says to add to the source.
        append: &'static str,
        /// A file it says to create.
        create: Option<&'static str>,
        help: &'static str,
    }
    let fixes = [
        Fix {
            name: "list a macro-written kind as external",
            source: "#[versioned(crd(group = \"a.io\"))]\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\npub struct AppSpec { pub x: i32 }\n",
            cargo_toml: "\n[package.metadata.rsop]\nexternal = [\"src/lib.rs\"]\n",
            help: "[package.metadata.rsop] external = [\"src/lib.rs\"]",
            ..Fix::default()
        },
        Fix {
            name: "an unknown kube key's suggestion",
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\", shortnames = \"a\")]\npub struct AppSpec { pub x: i32 }\n",
            replace: &[("shortnames", "shortname")],
            help: "did you mean `shortname`?",
            ..Fix::default()
        },
        Fix {
            name: "an unknown schemars key's suggestion",
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec {\n    #[schemars(lenght(min = 1))]\n    pub name: String,\n}\n",
            replace: &[("lenght", "length")],
            help: "did you mean `length`?",
            ..Fix::default()
        },
        Fix {
            name: "an unknown x_kube key's suggestion",
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, kube::KubeSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec {\n    #[x_kube(validations = \"self > 0\")]\n    pub n: i32,\n}\n",
            replace: &[("validations", "validation")],
            help: "did you mean `validation`?",
            ..Fix::default()
        },
        Fix {
            name: "an RBAC marker key's suggestion",
            source: "// +rsop:rbac:groups=apps,resources=deployments,verb=get\n",
            replace: &[("verb=", "verbs=")],
            help: "did you mean `verbs`?",
            ..Fix::default()
        },
        Fix {
            name: "a webhook marker key's suggestion",
            source: "// +rsop:webhook:path=/validate-a-io-v1-app,mutating=false,failurePolicy=fail,sideEffect=None,groups=a.io,resources=apps,verbs=create,versions=v1,name=vapp.a.io,admissionReviewVersions=v1\n",
            replace: &[("sideEffect=", "sideEffects=")],
            help: "did you mean `sideEffects`?",
            ..Fix::default()
        },
        Fix {
            name: "one storage version",
            source: "pub mod a {\nuse super::*;\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec { pub x: i32 }\n}\npub mod b {\nuse super::*;\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v2\", kind = \"App\")]\npub struct AppSpec { pub x: i32 }\n}\n",
            replace: &[(
                "version = \"v1\", kind = \"App\"",
                "version = \"v1\", kind = \"App\", storage = false",
            )],
            help: "storage = false",
            ..Fix::default()
        },
        Fix {
            name: "a module's missing file",
            source: "mod api;\n",
            create: Some("src/api.rs"),
            help: "create the module's file",
            ..Fix::default()
        },
        Fix {
            name: "approve a claimed protected group",
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"apps.k8s.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec { pub x: i32 }\n",
            cargo_toml: "\n[package.metadata.rsop]\nowned = [\"App\"]\n",
            replace: &[(
                "kind = \"App\"",
                "kind = \"App\", annotation(\"api-approved.kubernetes.io\", \"unapproved, experimental-only\")",
            )],
            help: "such as `\"unapproved, experimental-only\"`",
            ..Fix::default()
        },
        Fix {
            name: "a key of a later kube-derive, removed",
            deps: OLD_KUBE,
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\", selectable = \".spec.x\")]\npub struct AppSpec { pub x: i32 }\n",
            replace: &[(", selectable = \".spec.x\"", "")],
            help: "it came with kube-derive 0.97: move to kube 0.97 or later, or remove it",
            ..Fix::default()
        },
        Fix {
            name: "a key a later kube-derive replaced",
            deps: OLD_KUBE,
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\", struct = \"AppRoot\")]\npub struct AppSpec { pub x: i32 }\n",
            replace: &[("struct =", "root =")],
            help: "kube-derive 0.87.1 replaced it with `root`",
            ..Fix::default()
        },
        Fix {
            name: "list-form printcolumn and scale before kube-derive takes them",
            deps: OLD_KUBE,
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\", status = \"AppStatus\",\n  printcolumn(name = \"X\", type_ = \"integer\", json_path = \".spec.x\"),\n  scale(spec_replicas_path = \".spec.x\", status_replicas_path = \".status.x\"))]\npub struct AppSpec { pub x: i32 }\n#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]\npub struct AppStatus { pub x: i32 }\n",
            replace: &[
                (
                    "printcolumn(name = \"X\", type_ = \"integer\", json_path = \".spec.x\")",
                    "printcolumn = r#\"{\"name\":\"X\",\"type\":\"integer\",\"jsonPath\":\".spec.x\"}\"#",
                ),
                (
                    "scale(spec_replicas_path = \".spec.x\", status_replicas_path = \".status.x\")",
                    "scale = r#\"{\"specReplicasPath\":\".spec.x\",\"statusReplicasPath\":\".status.x\"}\"#",
                ),
            ],
            help: "write `printcolumn = r#\"{\"name\":\"X\",\"type\":\"integer\",\"jsonPath\":\".spec.x\"}\"#`",
            ..Fix::default()
        },
        Fix {
            name: "two storage versions before `#[kube(storage)]`",
            deps: OLD_KUBE,
            source: "pub mod a {\nuse super::*;\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec { pub x: i32 }\n}\npub mod b {\nuse super::*;\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v2\", kind = \"App\")]\npub struct AppSpec { pub x: i32 }\n}\n",
            append: "pub fn crd() -> kube::core::CustomResourceDefinition {\n    use kube::CustomResourceExt;\n    kube::core::crd::merge_crds(vec![b::App::crd(), a::App::crd()], \"v2\").unwrap()\n}\n",
            help: "merge the versions with `kube::core::crd::merge_crds(vec![b::App::crd(), a::App::crd()], \"v2\")`",
            ..Fix::default()
        },
        Fix {
            name: "a merge_crds call naming no version",
            source: "pub mod a {\nuse super::*;\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec { pub x: i32 }\n}\npub mod b {\nuse super::*;\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v2\", kind = \"App\")]\npub struct AppSpec { pub x: i32 }\n}\npub fn crd() -> kube::core::CustomResourceDefinition {\n    use kube::CustomResourceExt;\n    kube::core::crd::merge_crds(vec![b::App::crd(), a::App::crd()], \"v3\").unwrap()\n}\n",
            replace: &[("\"v3\"", "\"v1\"")],
            help: "name one of its versions: `v2`, `v1`",
            ..Fix::default()
        },
        Fix {
            name: "versions that differ in scope",
            source: "pub mod a {\nuse super::*;\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\", namespaced, storage = false)]\npub struct AppSpec { pub x: i32 }\n}\npub mod b {\nuse super::*;\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v2\", kind = \"App\")]\npub struct AppSpec { pub x: i32 }\n}\n",
            replace: &[(", namespaced", "")],
            help: "all versions of a kind share `namespaced`",
            ..Fix::default()
        },
        Fix {
            name: "a key given twice",
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\", plural = \"apps\", plural = \"apps\")]\npub struct AppSpec { pub x: i32 }\n",
            replace: &[(", plural = \"apps\")", ")")],
            help: "keep one",
            ..Fix::default()
        },
        Fix {
            name: "a status that names no type",
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\", status = 1)]\npub struct AppSpec { pub x: i32 }\n#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]\npub struct MyStatus { pub x: i32 }\n",
            replace: &[("status = 1", "status = \"MyStatus\"")],
            help: "write `status = \"MyStatus\"`",
            ..Fix::default()
        },
        Fix {
            name: "a missing version",
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", kind = \"App\")]\npub struct AppSpec { pub x: i32 }\n",
            replace: &[("kind = \"App\"", "kind = \"App\", version = \"v1\"")],
            help: "add `version = \"...\"`",
            ..Fix::default()
        },
        Fix {
            name: "a spec struct named as the kind",
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct App { pub x: i32 }\n",
            replace: &[("struct App ", "struct AppSpec ")],
            help: "name the spec struct `AppSpec`",
            ..Fix::default()
        },
        Fix {
            name: "a kind without a plural",
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"Y\")]\npub struct YSpec { pub x: i32 }\n",
            replace: &[("kind = \"Y\"", "kind = \"Y\", plural = \"ys\"")],
            help: "give it with `plural = \"...\"`",
            ..Fix::default()
        },
        Fix {
            name: "an unknown rename rule",
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\n#[serde(rename_all = \"camelcase\")]\npub struct AppSpec { pub x_y: i32 }\n",
            replace: &[("camelcase", "camelCase")],
            help: "use one of lowercase, UPPERCASE, PascalCase, camelCase",
            ..Fix::default()
        },
        Fix {
            name: "a recursive type",
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec { pub root: Node }\n#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]\npub struct Node { pub children: Vec<Node> }\n",
            replace: &[(
                "pub children: Vec<Node>",
                "#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))] pub children: serde_json::Value",
            )],
            help: "`serde_json::Value` and `#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]`",
            ..Fix::default()
        },
        Fix {
            name: "no Kubernetes version feature on k8s-openapi",
            deps: "[dependencies]\nkube = \"1\"\nk8s-openapi = \"0.25\"\n",
            source: "#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n#[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec { pub pod: k8s_openapi::api::core::v1::PodTemplateSpec }\n",
            cargo_toml_replace: &[(
                "k8s-openapi = \"0.25\"",
                "k8s-openapi = { version = \"0.25.0\", features = [\"v1_33\"] }",
            )],
            help: "e.g. `k8s-openapi = { version = \"0.25.0\", features = [\"v1_33\"] }`",
            ..Fix::default()
        },
    ];
    for fix in fixes {
        let tmp = tempfile::tempdir().unwrap();
        let manifest = tmp.path().join("Cargo.toml");
        let package = format!(
            "[package]\nname = \"fix\"\nversion = \"0.1.0\"\n{}",
            fix.deps
        );
        let owned_only = fix.cargo_toml.contains("owned");
        std::fs::write(
            &manifest,
            if owned_only {
                format!("{package}{}", fix.cargo_toml)
            } else {
                package
            },
        )
        .unwrap();
        std::fs::create_dir(tmp.path().join("src")).unwrap();
        let lib = tmp.path().join("src/lib.rs");
        std::fs::write(&lib, format!("{KIND_HEAD}\n{}", fix.source)).unwrap();
        let run = rsop(tmp.path(), &["manifests", "--static"]);
        assert_eq!(run.code, 1, "{}: {}", fix.name, run.stderr);
        assert!(
            run.stderr.contains(fix.help),
            "{}: {}",
            fix.name,
            run.stderr
        );
        let mut toml = std::fs::read_to_string(&manifest).unwrap();
        for (from, to) in fix.cargo_toml_replace {
            assert!(toml.contains(from), "{}", fix.name);
            toml = toml.replace(from, to);
        }
        if !owned_only {
            toml.push_str(fix.cargo_toml);
        }
        std::fs::write(&manifest, toml).unwrap();
        let mut text = std::fs::read_to_string(&lib).unwrap();
        for (from, to) in fix.replace {
            assert!(text.contains(from), "{}", fix.name);
            text = text.replace(from, to);
        }
        text.push_str(fix.append);
        std::fs::write(&lib, text).unwrap();
        if let Some(file) = fix.create {
            std::fs::write(tmp.path().join(file), "").unwrap();
        }
        let run = rsop(tmp.path(), &["manifests", "--static"]);
        assert_eq!(run.code, 0, "{}: {}", fix.name, run.stderr);
    }
}

/// A kind that `include!` pastes into a module is never dropped without a
/// word: rsop reads modules, so it says where the macro is and what to do;
/// done, the kind gets its CRD.
#[test]
fn kinds_pasted_by_include_are_an_error_until_they_are_a_module() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"pasted\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("src/pool")).unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "pub mod pool {\n    include!(\"pool/crd.rs\");\n}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/pool/crd.rs"),
        format!(
            "{KIND_HEAD}#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n\
             #[kube(group = \"a.io\", version = \"v1\", kind = \"Pool\")]\npub struct PoolSpec {{ pub size: i32 }}\n"
        ),
    )
    .unwrap();
    if let Some(problems) = refusal_problems(
        root,
        &["manifests", "--static"],
        1,
        &[
            "`include!(\"pool/crd.rs\")` pastes kinds into this module",
            "src/lib.rs:2:5",
            "make the included file a module of its own",
            "nothing was written",
        ],
    ) {
        panic!("{problems}");
    }
    std::fs::write(
        root.join("src/lib.rs"),
        "#[path = \"pool/crd.rs\"]\npub mod pool;\n",
    )
    .unwrap();
    rsop(root, &["manifests", "--static"]).success();
    assert!(root.join("config/crd/bases/a.io_pools.yaml").is_file());
}

/// A kind declared in a binary of a crate with a library gets no CRD (rsop
/// derives the library's kinds, and reads other binaries for markers), and
/// the run says so rather than leave it out without a word.
#[test]
fn kinds_of_a_binary_beside_a_library_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"two\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("src/bin")).unwrap();
    let kind = |name: &str| {
        format!(
            "{KIND_HEAD}#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n\
             #[kube(group = \"a.io\", version = \"v1\", kind = \"{name}\")]\npub struct {name}Spec {{ pub size: i32 }}\n"
        )
    };
    std::fs::write(root.join("src/lib.rs"), kind("Pool")).unwrap();
    std::fs::write(
        root.join("src/bin/migrate.rs"),
        format!("{}\nfn main() {{}}\n", kind("OldPool")),
    )
    .unwrap();
    let run = rsop(root, &["manifests", "--static"]).success();
    assert!(
        run.stderr.contains(
            "note: kinds declared in binaries beside the library get no CRD (`src/bin/migrate.rs`)"
        ),
        "{}",
        run.stderr
    );
    assert!(root.join("config/crd/bases/a.io_pools.yaml").is_file());
    assert!(!root.join("config/crd/bases/a.io_oldpools.yaml").exists());
}

/// Two stored versions on a kube-derive without `#[kube(storage)]` (before
/// 0.98): the help names `merge_crds` only, and applying it clears the
/// error.
#[test]
fn the_storage_help_follows_the_projects_kube_derive() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"old\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join("Cargo.lock"),
        "version = 4\n\n[[package]]\nname = \"kube-derive\"\nversion = \"0.97.0\"\n\n[[package]]\nname = \"kube-core\"\nversion = \"0.97.0\"\n\n[[package]]\nname = \"schemars\"\nversion = \"0.8.22\"\n",
    )
    .unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    let kinds = format!(
        "{KIND_HEAD}pub mod a {{\nuse super::*;\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n\
         #[kube(group = \"a.io\", version = \"v1\", kind = \"App\")]\npub struct AppSpec {{ pub x: i32 }}\n}}\n\
         pub mod b {{\nuse super::*;\n#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]\n\
         #[kube(group = \"a.io\", version = \"v2\", kind = \"App\")]\npub struct AppSpec {{ pub x: i32 }}\n}}\n"
    );
    std::fs::write(root.join("src/lib.rs"), &kinds).unwrap();
    if let Some(problems) = refusal_problems(
        root,
        &["manifests", "--static"],
        1,
        &[
            "`App.a.io` has several storage versions",
            "merge the versions with `kube::core::crd::merge_crds(vec![b::App::crd(), a::App::crd()], \"v2\")` (kube-derive before 0.98 has no `#[kube(storage)]`)",
        ],
    ) {
        panic!("{problems}");
    }
    std::fs::create_dir(root.join("src/bin")).unwrap();
    std::fs::write(
        root.join("src/bin/crdgen.rs"),
        "use kube::CustomResourceExt;\nfn main() {\n    let crd = kube::core::crd::merge_crds(vec![old::a::App::crd(), old::b::App::crd()], \"v2\").unwrap();\n    print!(\"{}\", serde_yaml::to_string(&crd).unwrap());\n}\n",
    )
    .unwrap();
    rsop(root, &["manifests", "--static"]).success();
    assert!(root.join("config/crd/bases/a.io_apps.yaml").is_file());
}
