//! Benchmark of `rsop manifests`. Run with
//!
//! ```text
//! cargo bench --bench manifests
//! ```
//!
//! It reports, in this order:
//!
//! 1. a kopium-style crate of 1,500 kinds (about 1.5 M lines, 100 MB: each
//!    kind a deep tree of nested structs and enums, as kopium generates from
//!    real CRDs) as a whole `rsop manifests` process: time of each run and
//!    the peak resident memory (target: under 5 s and under 1 GB);
//! 2. 10 realistic kinds (k8s-openapi types embedded, a `PodTemplateSpec`
//!    among them) as a whole process (target: under 20 ms), 8 of them in a
//!    crate with no Cargo.lock yet (target: under 20 ms), and in-process;
//! 3. 500 kinds in-process (target: well under 1 s);
//! 4. 5 of the realistic kinds in a crate locked to kube 0.98, schemars 0.8
//!    and k8s-openapi 0.24, and in one locked to kube 0.82 and k8s-openapi
//!    0.18, as a whole process (target: under 20 ms each, where before rsop
//!    modelled those releases it built every kind with cargo);
//! 5. the time to rebuild a crdgen binary after a one-line change
//!    (`rsop manifests --cargo` on the 10 realistic kinds), and how many
//!    times faster the static process is (target: 100x).
//!
//! `init` + `create api` as processes are in `cargo bench --bench scaffold`.
//!
//! Knobs: `RSOP_BENCH_SKIP_CRDGEN=1` skips the crdgen part (it compiles
//! kube-rs on a cold cache); `RSOP_BENCH_KOPIUM_KINDS=N` sizes the kopium
//! crate (0 skips it); `RSOP_BENCH_DIR=path` writes the crates there and
//! keeps them, to run `rsop manifests` on them by hand (for `perf`, or
//! `/usr/bin/time -v`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rsop::manifests::{self, Derivation, ManifestsOptions};

/// One realistic kind: a spec with scalars, options, collections, a nested
/// struct, an enum and k8s-openapi types (the first kind embeds a whole
/// `PodTemplateSpec`); a status with conditions.
fn kind_source(i: usize) -> String {
    let template = if i == 0 {
        "    /// The pods this kind runs.\n    pub template: k8s_openapi::api::core::v1::PodTemplateSpec,\n"
    } else {
        ""
    };
    format!(
        r#"use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{{Affinity, EnvVar, Probe, Toleration}};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{{Condition, LabelSelector}};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{{Deserialize, Serialize}};

/// App{i} runs something.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "bench.example.com", version = "v1", kind = "App{i}", namespaced, status = "App{i}Status", shortname = "a{i}")]
#[serde(rename_all = "camelCase")]
pub struct App{i}Spec {{
    /// Replicas to run.
    #[schemars(range(min = 0, max = 100))]
    pub replicas: i32,
    /// The image.
    pub image: String,
    pub args: Vec<String>,
    pub labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub paused: bool,
    pub mode: Mode{i},
    pub backend: Backend{i},
    pub resources: Option<k8s_openapi::api::core::v1::ResourceRequirements>,
    /// Which pods this kind owns.
    pub selector: Option<LabelSelector>,
    #[serde(default)]
    pub env: Vec<EnvVar>,
    pub liveness_probe: Option<Probe>,
    #[serde(default)]
    pub tolerations: Vec<Toleration>,
    pub affinity: Option<Affinity>,
{template}}}

#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]
pub enum Mode{i} {{
    Fast,
    Safe,
}}

/// Where the data lives.
#[derive(Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Backend{i} {{
    pub host: String,
    pub port: u16,
    pub tls: Option<bool>,
}}

#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct App{i}Status {{
    #[serde(default)]
    pub conditions: Vec<Condition>,
    pub observed_generation: Option<i64>,
}}

// +rsop:rbac:groups=bench.example.com,resources=app{i}s,verbs=get;list;watch;create;update;patch;delete
// +rsop:rbac:groups=bench.example.com,resources=app{i}s/status,verbs=get;update;patch
"#
    )
}

fn cargo_toml(name: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [dependencies]\nk8s-openapi = {{ version = \"{}\", default-features = false, features = [\"schemars\", \"{}\"] }}\n\
         kube = {{ version = \"{}\", default-features = false, features = [\"derive\"] }}\n\
         schemars = \"{}\"\nserde = {{ version = \"1.0\", features = [\"derive\"] }}\nserde_json = \"1.0\"\n\n[workspace]\n",
        rsop::versions::K8S_OPENAPI,
        rsop::versions::context().k8s_openapi_feature,
        rsop::versions::KUBE,
        rsop::versions::SCHEMARS,
    )
}

/// The part of a Cargo.lock `rsop manifests` reads: the k8s-openapi, kube
/// and schemars releases, those of rsop's own lock, as a project that has
/// been built has them.
fn cargo_lock() -> String {
    let own = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"))
        .expect("rsop's Cargo.lock");
    let release = |name: &str| -> String {
        own.split("[[package]]")
            .find(|p| p.contains(&format!("name = \"{name}\"\n")))
            .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = \"")))
            .map_or_else(
                || panic!("rsop's Cargo.lock has no {name}"),
                |v| v.trim_end_matches('"').to_string(),
            )
    };
    let mut lock = String::from("version = 4\n");
    for (name, version) in [
        ("k8s-openapi", release("k8s-openapi")),
        ("kube-core", format!("{}.0", rsop::versions::KUBE)),
        ("kube-derive", format!("{}.0", rsop::versions::KUBE)),
        ("schemars", release("schemars")),
    ] {
        write!(
            lock,
            "\n[[package]]\nname = \"{name}\"\nversion = \"{version}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
        )
        .unwrap();
    }
    lock
}

/// The releases of a crate of the schemars 0.8 era: Cargo.toml's
/// requirements and Cargo.lock's releases.
const LEGACY_TOML: &str = "[dependencies]\nk8s-openapi = { version = \"0.24\", default-features = false, features = [\"schemars\", \"v1_32\"] }\n\
     kube = { version = \"0.98\", default-features = false, features = [\"derive\"] }\n\
     schemars = \"0.8\"\nserde = { version = \"1.0\", features = [\"derive\"] }\nserde_json = \"1.0\"\n\n[workspace]\n";
const LEGACY_LOCK: &[(&str, &str)] = &[
    ("k8s-openapi", "0.24.0"),
    ("kube-core", "0.98.0"),
    ("kube-derive", "0.98.0"),
    ("schemars", "0.8.22"),
];

/// The same for a crate of 2023: kube 0.82 on k8s-openapi 0.18.
const KUBE_0_82_TOML: &str = "[dependencies]\nk8s-openapi = { version = \"0.18\", default-features = false, features = [\"schemars\", \"v1_26\"] }\n\
     kube = { version = \"0.82\", default-features = false, features = [\"derive\"] }\n\
     schemars = \"0.8\"\nserde = { version = \"1.0\", features = [\"derive\"] }\nserde_json = \"1.0\"\n\n[workspace]\n";
const KUBE_0_82_LOCK: &[(&str, &str)] = &[
    ("k8s-openapi", "0.18.0"),
    ("kube-core", "0.82.2"),
    ("kube-derive", "0.82.2"),
    ("schemars", "0.8.12"),
];

/// `kinds` realistic kinds in a crate of the schemars 0.8 era, with the
/// requirements `toml` and the releases `locked`.
fn write_legacy_crate(dir: &Path, kinds: usize, toml: &str, locked: &[(&str, &str)]) {
    write_crate(dir, kinds);
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"legacy-{kinds}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n{toml}"
        ),
    )
    .unwrap();
    let mut lock = String::from("version = 4\n");
    for (name, version) in locked {
        write!(
            lock,
            "\n[[package]]\nname = \"{name}\"\nversion = \"{version}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
        )
        .unwrap();
    }
    std::fs::write(dir.join("Cargo.lock"), lock).unwrap();
}

fn write_crate(dir: &Path, kinds: usize) {
    std::fs::create_dir_all(dir.join("src/kinds")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        cargo_toml(&format!("bench-{kinds}")),
    )
    .unwrap();
    std::fs::write(dir.join("Cargo.lock"), cargo_lock()).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "pub mod kinds;\n").unwrap();
    let mut index = String::new();
    for i in 0..kinds {
        std::fs::write(dir.join(format!("src/kinds/app{i}.rs")), kind_source(i)).unwrap();
        writeln!(index, "pub mod app{i};").unwrap();
    }
    std::fs::write(dir.join("src/kinds/mod.rs"), index).unwrap();
}

/// Words for kinds, fields and kopium's nested type names.
const WORDS: &[&str] = &[
    "template",
    "selector",
    "resources",
    "storage",
    "backup",
    "monitoring",
    "tls",
    "auth",
    "network",
    "ingress",
    "service",
    "security",
    "logging",
    "metrics",
    "scheduling",
    "replication",
    "volume",
    "container",
    "probe",
    "endpoint",
    "secret",
    "config",
    "policy",
    "affinity",
    "retention",
    "schedule",
    "target",
    "source",
    "destination",
    "credentials",
    "certificate",
    "issuer",
    "webhook",
    "gateway",
    "route",
    "listener",
    "upstream",
    "cluster",
    "snapshot",
    "quota",
];

fn pascal(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_ascii_uppercase().to_string() + chars.as_str()
    })
}

/// kopium's output for one CRD: a prelude module, the spec, and one struct
/// (or enum) per nested object of the CRD's schema, named after its path.
struct Kopium {
    kind: String,
    out: String,
    seed: usize,
}

impl Kopium {
    /// Fields per struct and nested structs among them, by depth.
    const FIELDS: [usize; 4] = [10, 8, 7, 6];
    const NESTED: [usize; 4] = [4, 2, 2, 0];

    fn file(kind: &str, group: &str, seed: usize) -> String {
        let mut k = Kopium {
            kind: kind.to_string(),
            out: String::new(),
            seed,
        };
        let plural = format!("{}s", kind.to_ascii_lowercase());
        write!(
            k.out,
            // Without kopium's warning line, which would make these kinds
            // another project's (no CRD): a project that owns kinds written
            // from its own CRD YAML by kopium keeps them this way. The
            // command names the CRD file, as real output does: text that
            // mentions `crd` in every file, which a scan for `crd()` calls
            // must not pay for.
            "// kopium command: kopium --docs --derive JsonSchema -f crd-catalog/{group}/{plural}.yaml\n\
             // kopium version: 0.22.5\n\n\
             #[allow(unused_imports)]\n\
             mod prelude {{\n    \
                 pub use kube::CustomResource;\n    \
                 pub use schemars::JsonSchema;\n    \
                 pub use serde::{{Serialize, Deserialize}};\n    \
                 pub use std::collections::BTreeMap;\n    \
                 pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;\n    \
                 pub use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;\n\
             }}\n\
             use self::prelude::*;\n\n\
             /// {kind}Spec defines the desired state of {kind}, as the operator that owns\n\
             /// the {plural} resource documents it in its CustomResourceDefinition.\n\
             #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
             #[kube(group = \"{group}\", version = \"v1\", kind = \"{kind}\", plural = \"{plural}\")]\n\
             #[kube(namespaced)]\n\
             #[kube(status = \"{kind}Status\")]\n"
        )
        .unwrap();
        k.structure(&format!("{kind}Spec"), 0, true);
        write!(
            k.out,
            "\n/// {kind}Status defines the observed state of {kind}.\n\
             #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n\
             pub struct {kind}Status {{\n    \
                 /// Conditions represent the latest available observations of the {kind}'s state.\n    \
                 #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    \
                 pub conditions: Option<Vec<Condition>>,\n    \
                 /// The generation most recently observed by the controller.\n    \
                 #[serde(default, skip_serializing_if = \"Option::is_none\", rename = \"observedGeneration\")]\n    \
                 pub observed_generation: Option<i64>,\n    \
                 /// A human-readable phase of the {kind}.\n    \
                 #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    \
                 pub phase: Option<String>,\n\
             }}\n\n"
        )
        .unwrap();
        k.out
    }

    /// A struct of `FIELDS[depth]` fields, then its nested types.
    fn structure(&mut self, name: &str, depth: usize, is_spec: bool) {
        let fields = Self::FIELDS[depth];
        let nested = Self::NESTED[depth];
        let offset = (self.seed * 7 + depth * 13 + name.len()) % WORDS.len();
        let mut children = Vec::new();
        let mut enums = Vec::new();
        if !is_spec {
            write!(
                self.out,
                "\n/// {name} configures one part of the {kind}; kopium names it after\n\
                 /// its path in the CRD's schema.\n\
                 #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema)]\n",
                kind = self.kind
            )
            .unwrap();
        }
        writeln!(self.out, "pub struct {name} {{").unwrap();
        for j in 0..fields {
            let word = WORDS[(offset + j) % WORDS.len()];
            let camel = format!("{word}{}", pascal(WORDS[(offset + j + 5) % WORDS.len()]));
            let snake = format!("{word}_{}", WORDS[(offset + j + 5) % WORDS.len()]);
            let child = format!("{name}{}", pascal(&camel));
            let ty = if j < nested {
                children.push(child.clone());
                if j % 2 == 0 {
                    format!("Option<{child}>")
                } else {
                    format!("Option<Vec<{child}>>")
                }
            } else {
                match (j + self.seed) % 8 {
                    0 => "Option<String>".into(),
                    1 => "Option<i64>".into(),
                    2 => "Option<bool>".into(),
                    3 => "Option<BTreeMap<String, String>>".into(),
                    4 => "Option<Vec<String>>".into(),
                    5 => "Option<IntOrString>".into(),
                    6 => {
                        enums.push(child.clone());
                        format!("Option<{child}>")
                    }
                    _ => "Option<i32>".into(),
                }
            };
            writeln!(
                self.out,
                "    /// The {word} {} of this {name}, as the CRD's schema describes it.",
                WORDS[(offset + j + 5) % WORDS.len()]
            )
            .unwrap();
            if j == fields - 1 && !is_spec {
                // A required field, as kopium writes one.
                write!(
                    self.out,
                    "    #[serde(rename = \"{camel}\")]\n    pub {snake}: String,\n"
                )
                .unwrap();
            } else {
                write!(
                    self.out,
                    "    #[serde(default, skip_serializing_if = \"Option::is_none\", rename = \"{camel}\")]\n    \
                     pub {snake}: {ty},\n"
                )
                .unwrap();
            }
        }
        self.out.push_str("}\n");
        for e in enums {
            self.enumeration(&e);
        }
        for child in children {
            self.structure(&child, depth + 1, false);
        }
    }

    /// A string enum (`type: string` with `enum`), as kopium writes it.
    fn enumeration(&mut self, name: &str) {
        write!(
            self.out,
            "\n/// {name} is one of a fixed set of values.\n\
             #[derive(Serialize, Deserialize, Clone, Debug, JsonSchema, PartialEq)]\n\
             pub enum {name} {{\n    \
                 #[serde(rename = \"Always\")]\n    Always,\n    \
                 #[serde(rename = \"IfNotPresent\")]\n    IfNotPresent,\n    \
                 #[serde(rename = \"Never\")]\n    Never,\n\
             }}\n"
        )
        .unwrap();
    }
}

/// A crate of kopium output: `kinds` kinds in groups of ten, one file per
/// kind (`src/g<N>/v1/<kind>.rs`), as crates that collect kopium's output
/// for many CRDs lay it out. Returns the number of lines written.
fn write_kopium_crate(dir: &Path, kinds: usize) -> usize {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), cargo_toml("bench-kopium")).unwrap();
    std::fs::write(dir.join("Cargo.lock"), cargo_lock()).unwrap();
    let mut lines = 0;
    let mut lib = String::new();
    for g in 0..kinds.div_ceil(10) {
        writeln!(lib, "pub mod g{g};").unwrap();
        let group_dir = dir.join(format!("src/g{g}/v1"));
        std::fs::create_dir_all(&group_dir).unwrap();
        std::fs::write(dir.join(format!("src/g{g}/mod.rs")), "pub mod v1;\n").unwrap();
        let mut index = String::new();
        for i in (g * 10)..((g + 1) * 10).min(kinds) {
            let kind = format!(
                "{}{}{i}",
                pascal(WORDS[i % WORDS.len()]),
                pascal(WORDS[(i / WORDS.len() + 3) % WORDS.len()])
            );
            let module = kind.to_ascii_lowercase();
            let text = Kopium::file(&kind, &format!("g{g}.bench.example.com"), i);
            lines += text.lines().count();
            std::fs::write(group_dir.join(format!("{module}.rs")), text).unwrap();
            writeln!(index, "pub mod {module};").unwrap();
        }
        std::fs::write(group_dir.join("mod.rs"), index).unwrap();
    }
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    lines
}

fn options(root: &Path, cargo: bool) -> ManifestsOptions {
    ManifestsOptions {
        root: root.to_path_buf(),
        crd_dir: "config/crd/bases".into(),
        rbac_dir: "config/rbac".into(),
        webhook_dir: "config/webhook".into(),
        namespaced: false,
        derivation: if cargo {
            Derivation::Cargo
        } else {
            Derivation::Static
        },
        rbac: rsop::manifests::check::rbac_check::Mode::Markers,
    }
}

fn measure(runs: usize, mut f: impl FnMut()) -> Vec<Duration> {
    f(); // warm-up
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    times
}

fn report(name: &str, sorted: &[Duration]) -> Duration {
    let median = sorted[sorted.len() / 2];
    println!(
        "{name:<36} runs {:>4}  min {:>10.2?}  median {:>10.2?}  max {:>10.2?}",
        sorted.len(),
        sorted[0],
        median,
        sorted[sorted.len() - 1]
    );
    median
}

/// `rsop manifests` in `dir` as a whole process.
/// The call check's cost where it has calls to read: a project `rsop init`
/// and ten `rsop create api` made (one of them `--image`), derived with the
/// markers alone and with the calls checked.
fn scaffolded_project_check(dir: &Path) {
    use clap::Parser;
    std::fs::create_dir_all(dir).unwrap();
    let run = |args: &[&str], cwd: &Path| {
        let cli = rsop::cli::Cli::parse_from(std::iter::once("rsop").chain(args.iter().copied()));
        rsop::run(cli, cwd, &mut std::io::sink()).expect("the scaffolding command succeeds");
    };
    run(
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "bench",
            "--vcs",
            "none",
        ],
        dir,
    );
    for i in 0..10 {
        let kind = format!("Kind{i}");
        let mut args = vec![
            "create",
            "api",
            "--group",
            "bench",
            "--version",
            "v1",
            "--kind",
            &kind,
        ];
        if i == 0 {
            args.extend(["--image", "memcached:1.6.26-alpine"]);
        }
        run(&args, dir);
    }
    let opts = |rbac| ManifestsOptions {
        rbac,
        ..options(dir, false)
    };
    let markers = opts(rsop::manifests::check::rbac_check::Mode::Markers);
    let checked = opts(rsop::manifests::check::rbac_check::Mode::Check);
    let plain = report(
        "scaffolded, 10 kinds, markers only",
        &measure(100, || {
            manifests::generate(&markers, &mut std::io::sink()).expect("derives");
        }),
    );
    let with_check = report(
        "scaffolded, 10 kinds, --rbac=check",
        &measure(100, || {
            let mut notes = Vec::new();
            manifests::generate(&checked, &mut notes).expect("derives and checks cleanly");
            assert!(
                !String::from_utf8_lossy(&notes).contains("warning"),
                "the scaffold's markers and calls disagree"
            );
        }),
    );
    println!(
        "{:<36} {:>10.2?}",
        "  added by the call check",
        with_check.saturating_sub(plain)
    );
}

fn run_process(dir: &Path) {
    run_process_with(dir, &[]);
}

fn run_process_with(dir: &Path, args: &[&str]) {
    let status = Command::new(env!("CARGO_BIN_EXE_rsop"))
        .arg("manifests")
        .args(args)
        .current_dir(dir)
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("rsop runs");
    assert!(
        status.success(),
        "rsop manifests failed in {}",
        dir.display()
    );
}

/// The largest peak resident set of the processes this one has waited for,
/// in megabytes (Linux reports kilobytes).
fn children_peak_rss_mb() -> i64 {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage");
    usage.max_rss() / 1000
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let base: PathBuf =
        std::env::var_os("RSOP_BENCH_DIR").map_or_else(|| tmp.path().into(), Into::into);
    let kopium_kinds: usize = std::env::var("RSOP_BENCH_KOPIUM_KINDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1500);

    // First, so that the children's peak memory is this crate's.
    if kopium_kinds > 0 {
        let dir = base.join(format!("kopium-{kopium_kinds}"));
        let lines = write_kopium_crate(&dir, kopium_kinds);
        let mut times: Vec<Duration> = (0..3)
            .map(|_| {
                let start = Instant::now();
                run_process(&dir);
                start.elapsed()
            })
            .collect();
        println!(
            "kopium crate: {kopium_kinds} kinds, {lines} lines; runs: {}",
            times
                .iter()
                .map(|t| format!("{t:.2?}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        times.sort_unstable();
        let plain = report(
            &format!("manifests, {kopium_kinds} kopium kinds, process"),
            &times,
        );
        // The same with the code's calls checked against the role.
        let mut checked = measure(3, || run_process_with(&dir, &["--rbac=check"]));
        checked.sort_unstable();
        let with_check = report(
            &format!("  with --rbac=check, {kopium_kinds} kopium kinds"),
            &checked,
        );
        println!(
            "{:<36} {:>+9.1} %",
            "  added by the call check",
            (with_check.as_secs_f64() / plain.as_secs_f64() - 1.0) * 100.0
        );
        println!(
            "{:<36} {:>10} MB",
            "peak memory (max RSS)",
            children_peak_rss_mb()
        );
    }

    let dir = base.join("bench-10");
    write_crate(&dir, 10);
    let process = report(
        "manifests, 10 kinds, process",
        &measure(50, || run_process(&dir)),
    );
    // A project that was never built: no Cargo.lock, so the releases come
    // from Cargo.toml's requirements.
    let dir = base.join("bench-8-unlocked");
    write_crate(&dir, 8);
    std::fs::remove_file(dir.join("Cargo.lock")).unwrap();
    report(
        "manifests, 8 kinds, no Cargo.lock, process",
        &measure(50, || run_process(&dir)),
    );
    for (kinds, runs) in [(10, 100), (500, 10)] {
        let dir = base.join(format!("bench-{kinds}"));
        write_crate(&dir, kinds);
        let opts = options(&dir, false);
        let times = measure(runs, || {
            let generated = manifests::generate(&opts, &mut std::io::sink())
                .expect("the synthetic crate derives cleanly");
            assert_eq!(generated.files.len(), kinds + 1);
        });
        let plain = report(&format!("manifests, {kinds} kinds, in-process"), &times);
        let checked = ManifestsOptions {
            rbac: rsop::manifests::check::rbac_check::Mode::Check,
            ..opts.clone()
        };
        let times = measure(runs, || {
            manifests::generate(&checked, &mut std::io::sink())
                .expect("the synthetic crate derives and checks cleanly");
        });
        let with_check = report(&format!("  with --rbac=check, {kinds} kinds"), &times);
        println!(
            "{:<36} {:>10.2?}",
            "  added by the call check",
            with_check.saturating_sub(plain)
        );
    }

    for (release, toml, locked) in [
        ("0.98", LEGACY_TOML, LEGACY_LOCK),
        ("0.82", KUBE_0_82_TOML, KUBE_0_82_LOCK),
    ] {
        let dir = base.join(format!("kube-{release}-5"));
        write_legacy_crate(&dir, 5, toml, locked);
        let generated = manifests::generate(&options(&dir, false), &mut std::io::sink())
            .unwrap_or_else(|e| panic!("the kube {release} crate derives statically: {e}"));
        assert!(generated.built.is_empty(), "no kind needs the build");
        report(
            &format!("manifests, 5 kinds, kube {release}, process"),
            &measure(50, || run_process(&dir)),
        );
    }

    scaffolded_project_check(&base.join("scaffolded-10"));

    if std::env::var_os("RSOP_BENCH_SKIP_CRDGEN").is_some() {
        println!("crdgen rebuild: skipped (RSOP_BENCH_SKIP_CRDGEN)");
        return;
    }
    let dir = base.join("bench-10");
    // The build locks every dependency itself.
    std::fs::remove_file(dir.join("Cargo.lock")).unwrap();
    let cargo_opts = options(&dir, true);
    // First build: compiles kube-rs and the crate; not what is compared.
    manifests::generate(&cargo_opts, &mut std::io::sink()).expect("the crdgen program builds");
    // A one-line change to one kind, then the rebuild the user would wait for.
    let file = dir.join("src/kinds/app0.rs");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace(
            "pub paused: bool,",
            "pub paused: bool,\n    pub note: Option<String>,",
        ),
    )
    .unwrap();
    let start = Instant::now();
    manifests::generate(&cargo_opts, &mut std::io::sink()).expect("the crdgen program rebuilds");
    let rebuild = start.elapsed();
    println!(
        "{:<36} {rebuild:>10.2?}",
        "crdgen rebuild after a 1-line change"
    );
    println!(
        "{:<36} {:>10.0}x (rsop, 10 kinds, process, median)",
        "speed-up",
        rebuild.as_secs_f64() / process.as_secs_f64()
    );
}
