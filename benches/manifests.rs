//! Benchmark of `rsop manifests`: a synthetic crate of 10 kinds and one of
//! 500, each run in-process (read, parse, resolve, derive, render) many
//! times; then, in the same run, the time to rebuild a crdgen binary after a
//! one-line change (`rsop manifests --cargo` on the 10-kind crate), and the
//! ratio of the two. Run with `cargo bench --bench manifests`.
//!
//! Targets: under 20 ms for 10 kinds, under 1 s for 500, and at least 100
//! times faster than the crdgen rebuild. `RSOP_BENCH_SKIP_CRDGEN=1` skips
//! the crdgen part (it compiles kube-rs on a cold cache).

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use rsop::manifests::{self, Derivation, ManifestsOptions};

/// One kind: a spec with scalars, options, collections, a nested struct, an
/// enum and a k8s-openapi type; a status with conditions.
fn kind_source(i: usize) -> String {
    format!(
        r#"use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
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
}}

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

fn write_crate(dir: &Path, kinds: usize) {
    std::fs::create_dir_all(dir.join("src/kinds")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"bench-{kinds}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [dependencies]\nk8s-openapi = {{ version = \"{}\", default-features = false, features = [\"schemars\", \"{}\"] }}\n\
             kube = {{ version = \"{}\", default-features = false, features = [\"derive\"] }}\n\
             schemars = \"{}\"\nserde = {{ version = \"1.0\", features = [\"derive\"] }}\nserde_json = \"1.0\"\n\n[workspace]\n",
            rsop::versions::K8S_OPENAPI,
            rsop::versions::context().k8s_openapi_feature,
            rsop::versions::KUBE,
            rsop::versions::SCHEMARS,
        ),
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), "pub mod kinds;\n").unwrap();
    let mut index = String::new();
    for i in 0..kinds {
        std::fs::write(dir.join(format!("src/kinds/app{i}.rs")), kind_source(i)).unwrap();
        writeln!(index, "pub mod app{i};").unwrap();
    }
    std::fs::write(dir.join("src/kinds/mod.rs"), index).unwrap();
}

fn options(root: &Path, cargo: bool) -> ManifestsOptions {
    ManifestsOptions {
        root: root.to_path_buf(),
        crd_dir: "config/crd/bases".into(),
        rbac_dir: "config/rbac".into(),
        namespaced: false,
        derivation: if cargo {
            Derivation::Cargo
        } else {
            Derivation::Static
        },
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
        "{name:<32} runs {:>4}  min {:>10.2?}  median {:>10.2?}  max {:>10.2?}",
        sorted.len(),
        sorted[0],
        median,
        sorted[sorted.len() - 1]
    );
    median
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let mut medians = Vec::new();
    for (kinds, runs) in [(10, 100), (500, 10)] {
        let dir = tmp.path().join(format!("bench-{kinds}"));
        write_crate(&dir, kinds);
        let opts = options(&dir, false);
        let times = measure(runs, || {
            let generated = manifests::generate(&opts, &mut std::io::sink())
                .expect("the synthetic crate derives cleanly");
            assert_eq!(generated.files.len(), kinds + 1);
        });
        medians.push(report(&format!("manifests, {kinds} kinds"), &times));
    }

    if std::env::var_os("RSOP_BENCH_SKIP_CRDGEN").is_some() {
        println!("crdgen rebuild: skipped (RSOP_BENCH_SKIP_CRDGEN)");
        return;
    }
    let dir = tmp.path().join("bench-10");
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
        "{:<32} {rebuild:>10.2?}",
        "crdgen rebuild after a 1-line change"
    );
    println!(
        "{:<32} {:>10.0}x (rsop, 10 kinds, median)",
        "speed-up",
        rebuild.as_secs_f64() / medians[0].as_secs_f64()
    );
}
