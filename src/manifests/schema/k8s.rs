//! Schemas of k8s-openapi types, recorded at build time from the pinned
//! k8s-openapi's own `JsonSchema` impls (see `build.rs`), returned fully
//! inlined as schemars does with `inline_subschemas`.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::{Map, Value};

mod table {
    include!(concat!(env!("OUT_DIR"), "/k8s_schemas.rs"));
}

const REF_PREFIX: &str = "#/components/schemas/";

/// The raw schema of the k8s-openapi type at `path` (such as
/// `k8s_openapi::api::core::v1::PodSpec`), or `None` when rsop has no
/// record of it.
pub fn schema(path: &str) -> Option<Value> {
    // Kinds embed the same types again and again (a `Condition` in every
    // status): each is parsed and inlined once per thread, then copied.
    thread_local! {
        static INLINED: RefCell<HashMap<String, Option<Value>>> = RefCell::new(HashMap::new());
    }
    INLINED.with(|cache| {
        if let Some(found) = cache.borrow().get(path) {
            return found.clone();
        }
        let found = lookup(path);
        cache.borrow_mut().insert(path.to_string(), found.clone());
        found
    })
}

fn lookup(path: &str) -> Option<Value> {
    let i = table::K8S_TYPES
        .binary_search_by(|(p, _)| p.cmp(&path))
        .ok()?;
    let root: Value = serde_json::from_str(table::K8S_TYPES[i].1).ok()?;
    Some(inline(root, 0))
}

/// Every recorded type path, for messages.
pub fn known_paths() -> impl Iterator<Item = &'static str> {
    table::K8S_TYPES.iter().map(|(p, _)| *p)
}

fn definition(name: &str) -> Option<Value> {
    let i = table::K8S_DEFINITIONS
        .binary_search_by(|(n, _)| n.cmp(&name))
        .ok()?;
    serde_json::from_str(table::K8S_DEFINITIONS[i].1).ok()
}

/// Replaces every reference by its definition; the reference's siblings
/// (a property's `description`) are inserted over the definition, as
/// schemars' inlining does.
fn inline(value: Value, depth: usize) -> Value {
    match value {
        Value::Object(map) => {
            if depth < 64
                && let Some(Value::String(r)) = map.get("$ref")
                && let Some(name) = r.strip_prefix(REF_PREFIX)
                && let Some(Value::Object(mut def)) = definition(name)
            {
                for (k, v) in map {
                    if k != "$ref" {
                        def.insert(k, v);
                    }
                }
                return inline(Value::Object(def), depth + 1);
            }
            Value::Object(
                map.into_iter()
                    .map(|(k, v)| (k, inline(v, depth)))
                    .collect::<Map<String, Value>>(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(|v| inline(v, depth)).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_or_string_has_no_type_and_is_int_or_string() {
        let s = schema("k8s_openapi::apimachinery::pkg::util::intstr::IntOrString").unwrap();
        assert_eq!(s["x-kubernetes-int-or-string"], Value::Bool(true));
        assert!(s.get("type").is_none());
    }

    #[test]
    fn nested_types_are_inlined() {
        let s = schema("k8s_openapi::api::core::v1::PodTemplateSpec").unwrap();
        let text = s.to_string();
        assert!(!text.contains("$ref"), "references remain");
        assert_eq!(
            s["properties"]["spec"]["properties"]["containers"]["type"],
            "array"
        );
    }

    #[test]
    fn condition_requires_its_five_fields() {
        let s = schema("k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition").unwrap();
        assert_eq!(s["required"].as_array().unwrap().len(), 5);
    }
}
