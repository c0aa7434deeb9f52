//! Build script.
//!
//! 1. Rebuild when a template changes: `include_dir` embeds `templates/` but
//!    cargo does not know the files are inputs.
//! 2. Record the JSON schema of every k8s-openapi type an operator may embed,
//!    as the pinned k8s-openapi's own `JsonSchema` impls generate it, so that
//!    `rsop manifests` inlines exactly what kube-derive would. The schemas are
//!    the raw ones (before any transform), with nested types as
//!    `#/components/schemas/<name>` references into a shared table; the
//!    table is written to `$OUT_DIR/k8s_schemas.rs`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use schemars::generate::SchemaSettings;

fn main() {
    println!("cargo:rerun-if-changed=templates");
    println!("cargo:rerun-if-changed=build/k8s_types.rs");

    let mut generator = SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = false;
            s.meta_schema = None;
        })
        .into_generator();
    let mut roots: BTreeMap<String, serde_json::Value> = BTreeMap::new();

    macro_rules! k8s_types {
        ($($($segment:ident)::+),* $(,)?) => {{
            $(
                roots.insert(
                    concat!("k8s_openapi" $(, "::", stringify!($segment))+).to_string(),
                    generator
                        .subschema_for::<k8s_openapi $(::$segment)+>()
                        .to_value(),
                );
            )*
        }};
    }
    include!("build/k8s_types.rs");

    let definitions: BTreeMap<&String, &serde_json::Value> =
        generator.definitions().iter().collect();
    let mut out = String::from(
        "/// Rust path of a k8s-openapi type -> its schema (usually a reference).\n\
         pub static K8S_TYPES: &[(&str, &str)] = &[\n",
    );
    for (path, schema) in &roots {
        writeln!(out, "    ({path:?}, {:?}),", schema.to_string()).unwrap();
    }
    out.push_str(
        "];\n\n/// Definition name -> schema, for `#/components/schemas/<name>` references.\n\
         pub static K8S_DEFINITIONS: &[(&str, &str)] = &[\n",
    );
    for (name, schema) in definitions {
        writeln!(out, "    ({name:?}, {:?}),", schema.to_string()).unwrap();
    }
    out.push_str("];\n");
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("k8s_schemas.rs");
    std::fs::write(dest, out).unwrap();
}
