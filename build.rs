//! Build script:
//!
//! - rebuild when a template changes (`include_dir` embeds `templates/` but
//!   cargo does not know the files are inputs);
//! - carry the sources of rsop-runtime (`runtime/`) when rsop is built from
//!   its repository, where they are, unless `RSOP_RUNTIME_FROM_CRATES_IO` is
//!   set (the release build, whose projects take the published crate): the
//!   `rsop_carries_runtime` cfg;
//! - turn the embedded k8s-openapi schemas (`data/k8s-openapi/schemas.json.gz`,
//!   one gzipped JSON document) into a form `rsop manifests` reads without
//!   decoding the whole table: the names and per-version indexes as Rust
//!   statics, and each distinct schema deflated on its own, found by offset,
//!   so that a run inflates and parses only the schemas its kinds use.

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::path::PathBuf;

use serde_json::Value;

const SCHEMAS: &str = "data/k8s-openapi/schemas.json.gz";

fn main() {
    println!("cargo:rerun-if-changed=templates");
    println!("cargo::rustc-check-cfg=cfg(rsop_carries_runtime)");
    println!("cargo:rerun-if-env-changed=RSOP_RUNTIME_FROM_CRATES_IO");
    // A package of rsop-cli holds no `runtime/`: its projects take the crate from crates.io.
    if std::path::Path::new("runtime/Cargo.toml").is_file()
        && std::env::var_os("RSOP_RUNTIME_FROM_CRATES_IO").is_none_or(|v| v.is_empty())
    {
        println!("cargo:rerun-if-changed=runtime/Cargo.toml");
        println!("cargo:rerun-if-changed=runtime/README.md");
        println!("cargo:rerun-if-changed=runtime/src");
        println!("cargo::rustc-cfg=rsop_carries_runtime");
    }
    println!("cargo:rerun-if-changed={SCHEMAS}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));

    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(SCHEMAS).expect("the k8s-openapi schemas"))
        .read_to_string(&mut text)
        .expect("the k8s-openapi schemas are gzipped");
    let data: Value = serde_json::from_str(&text).expect("the k8s-openapi schemas are JSON");

    let mut pool = Vec::new();
    let mut offsets = vec![0_u32];
    for schema in data["pool"].as_array().expect("a pool") {
        let mut encoder =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        encoder
            .write_all(schema.to_string().as_bytes())
            .expect("deflate to memory");
        pool.extend(encoder.finish().expect("deflate to memory"));
        offsets.push(u32::try_from(pool.len()).expect("the pool is under 4 GB"));
    }
    std::fs::write(out.join("k8s-pool.bin"), &pool).expect("write to OUT_DIR");

    let names = |key: &str| -> String {
        let mut s = String::from("&[");
        for n in data[key].as_array().expect("names") {
            write!(s, "{:?},", n.as_str().expect("a name")).unwrap();
        }
        s.push(']');
        s
    };
    let indexes = |v: &Value| -> String {
        let mut s = String::from("&[");
        for i in v.as_array().expect("indexes") {
            match i.as_u64() {
                Some(i) => write!(s, "Some({i}),").unwrap(),
                None => s.push_str("None,"),
            }
        }
        s.push(']');
        s
    };
    let mut rust = String::new();
    writeln!(
        rust,
        "pub(super) static TYPE_NAMES: &[&str] = {};",
        names("type_names")
    )
    .unwrap();
    writeln!(
        rust,
        "pub(super) static DEFINITION_NAMES: &[&str] = {};",
        names("definition_names")
    )
    .unwrap();
    writeln!(rust, "pub(super) static VERSIONS: &[VersionData] = &[").unwrap();
    for v in data["versions"].as_array().expect("versions") {
        writeln!(
            rust,
            "VersionData {{ k8s_openapi: {:?}, feature: {:?}, earliest: {:?}, latest: {:?}, types: {}, definitions: {} }},",
            v["k8s_openapi"].as_str().expect("a version"),
            v["feature"].as_str().expect("a feature"),
            v["earliest"].as_str().expect("earliest"),
            v["latest"].as_str().expect("latest"),
            indexes(&v["types"]),
            indexes(&v["definitions"]),
        )
        .unwrap();
    }
    writeln!(rust, "];").unwrap();
    writeln!(
        rust,
        "pub(super) static POOL_OFFSETS: &[u32] = &{offsets:?};"
    )
    .unwrap();
    std::fs::write(out.join("k8s-index.rs"), rust).expect("write to OUT_DIR");
}
