//! Prints, as JSON, the raw schema of every k8s-openapi type listed in
//! `k8s_types.rs` and the definitions they reference, exactly as the crate's
//! own `JsonSchema` impls generate them under kube-derive's settings before
//! any transform (openapi3, no inlining, no meta schema). Built by
//! `scripts/k8s-schemas.sh` once per k8s-openapi version and feature; the
//! drift test in `src/manifests/derive/schema/k8s.rs` runs the same code against
//! rsop's pinned k8s-openapi.

use std::collections::BTreeMap;

use schemars::generate::SchemaSettings;

fn main() {
    let mut generator = SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = false;
            s.meta_schema = None;
        })
        .into_generator();
    let mut types: BTreeMap<String, serde_json::Value> = BTreeMap::new();

    macro_rules! k8s_types {
        ($($($segment:ident)::+),* $(,)?) => {{
            $(
                types.insert(
                    concat!("k8s_openapi" $(, "::", stringify!($segment))+).to_string(),
                    generator
                        .subschema_for::<k8s_openapi $(::$segment)+>()
                        .to_value(),
                );
            )*
        }};
    }
    include!("k8s_types.rs");

    let definitions: BTreeMap<&String, &serde_json::Value> =
        generator.definitions().iter().collect();
    let out = serde_json::json!({ "types": types, "definitions": definitions });
    println!("{out}");
}
