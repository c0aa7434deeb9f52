//! `dump.rs` for the k8s-openapi releases of the schemars 0.8 era (before
//! 0.26): the raw schema of every listed type and the definitions they
//! reference, as the crate's own `JsonSchema` impls generate them under
//! kube-derive's settings of those releases before any visitor runs
//! (openapi3, no inlining, no meta schema). The same JSON shape as
//! `dump.rs`.

use std::collections::BTreeMap;

use schemars::r#gen::SchemaSettings;

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
                    serde_json::to_value(
                        generator.subschema_for::<k8s_openapi $(::$segment)+>(),
                    )
                    .unwrap(),
                );
            )*
        }};
    }
    include!("k8s_types.rs");

    let definitions: BTreeMap<&String, serde_json::Value> = generator
        .definitions()
        .iter()
        .map(|(name, schema)| (name, serde_json::to_value(schema).unwrap()))
        .collect();
    let out = serde_json::json!({ "types": types, "definitions": definitions });
    println!("{out}");
}
