//! Schemas of the foreign types schemars 1 implements `JsonSchema` for
//! behind its optional features (`chrono04`, `jiff02`, `uuid1`, `url2`,
//! `semver1`, `bytes1`, `rust_decimal1`, `bigdecimal04`, `smol_str02/03`,
//! `arrayvec07`, `indexmap2`, `smallvec1`, `either1`).
//!
//! Leaf types (`chrono::DateTime<Tz>`, `uuid::Uuid`, ...) take their schema
//! from `data/foreign/schemas.json`, which `scripts/foreign-schemas.sh`
//! dumps from the real crates under kube-derive's settings. Generic
//! containers are derived here from their arguments, as schemars' impls do
//! (most forward to a std container); the test at the end checks them
//! against the instances recorded in the same file.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use proc_macro2::Span;
use serde::Deserialize;
use serde_json::{Value, json};
use syn::spanned::Spanned;

use super::{Builder, Scope, eval};

static DATA: &str = include_str!("../../../../data/foreign/schemas.json");

/// Crates that re-export a foreign crate at their root: k8s-openapi
/// re-exports chrono (up to 0.26) or jiff (from 0.27), and projects import
/// through it (`k8s_openapi::chrono::DateTime`).
const REEXPORTERS: &[&str] = &["k8s_openapi"];

#[derive(Debug, Deserialize)]
struct Data {
    /// By path as the crate names it (`chrono::DateTime`, `jiff::civil::Date`).
    types: BTreeMap<String, Entry>,
}

#[derive(Debug, Deserialize)]
struct Entry {
    schema: Value,
}

/// The leaf types, by crate and type name: a type is reachable through
/// several module paths (`chrono::DateTime`, `chrono::prelude::DateTime`,
/// `chrono::offset::...`), and its crate and name identify it.
fn leaves() -> &'static BTreeMap<String, BTreeMap<String, Value>> {
    static TABLE: OnceLock<BTreeMap<String, BTreeMap<String, Value>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let data: Data =
            serde_json::from_str(DATA).expect("the embedded foreign schemas are valid");
        let mut table: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
        for (path, entry) in data.types {
            let krate = path.split("::").next().unwrap_or_default();
            let name = path.rsplit("::").next().unwrap_or_default();
            table
                .entry(krate.to_string())
                .or_default()
                .insert(name.to_string(), entry.schema);
        }
        table
    })
}

/// `full` without a re-exporting crate in front (`k8s_openapi::jiff::Timestamp`
/// is `jiff::Timestamp`).
fn unexported(full: &[String]) -> &[String] {
    match full {
        [first, rest @ ..]
            if rest.len() >= 2 && REEXPORTERS.contains(&first.as_str()) && is_foreign(&rest[0]) =>
        {
            rest
        }
        _ => full,
    }
}

/// Whether `krate` is a crate whose types schemars knows.
fn is_foreign(krate: &str) -> bool {
    CONTAINERS.iter().any(|(c, _)| *c == krate) || leaves().contains_key(krate)
}

/// The generic containers, derived from their arguments.
const CONTAINERS: &[(&str, &str)] = &[
    ("indexmap", "IndexMap"),
    ("indexmap", "IndexSet"),
    ("smallvec", "SmallVec"),
    ("arrayvec", "ArrayVec"),
    ("either", "Either"),
];

/// The crates rsop knows types of, for messages.
pub const KNOWN_CRATES: &str = "chrono, jiff, uuid, url, semver, bytes, rust_decimal, bigdecimal, smol_str, arrayvec, indexmap, smallvec and either";

impl<'a> Builder<'a> {
    /// The schema of a foreign type schemars knows, or `None` when `full`
    /// (an external path, as the resolver gives it) is not one.
    pub(super) fn foreign_schema(
        &mut self,
        full: &[String],
        arguments: &syn::PathArguments,
        scope: &Scope<'a>,
        span: Span,
        path: &str,
    ) -> Option<Value> {
        let full = unexported(full);
        let [krate, .., name] = full else {
            return None;
        };
        // schemars 0.8 gives chrono's `NaiveTime` the format of
        // `NaiveDateTime`; schemars 1 has one of its own.
        if self.legacy() && krate == "chrono" && name == "NaiveTime" {
            return Some(json!({"type": "string", "format": "partial-date-time"}));
        }
        if let Some(schema) = leaves()
            .get(krate.as_str())
            .and_then(|types| types.get(name.as_str()))
        {
            return Some(schema.clone());
        }
        let args = super::generic_args(arguments);
        let arg = |i: usize| args.get(i).copied();
        Some(match (krate.as_str(), name.as_str(), arg(0), arg(1)) {
            // Forwarded to `BTreeMap<K, V>` and `BTreeSet<T>`; the hasher is
            // the third argument.
            ("indexmap", "IndexMap", Some(k), Some(v)) => self.map_schema(k, v, scope, span, path),
            ("indexmap", "IndexSet", Some(t), _) => {
                json!({"type": "array", "uniqueItems": true, "items": self.type_schema(t, scope, path)})
            }
            // Forwarded to `Vec<A::Item>`.
            ("smallvec", "SmallVec", Some(array), None) => {
                let elem = match bound(array, scope) {
                    (syn::Type::Array(a), outer) => Some((*a.elem, outer)),
                    _ => None,
                };
                let Some((elem, outer)) = elem else {
                    self.unsupported(
                        scope.module,
                        array.span(),
                        "the `SmallVec` argument is not an array type",
                        "write it as `SmallVec<[T; N]>`",
                        path,
                    );
                    return Some(json!({}));
                };
                json!({"type": "array", "items": self.type_schema(&elem, &outer, path)})
            }
            // `maxItems` is the capacity.
            ("arrayvec", "ArrayVec", Some(t), _) => {
                let Some(capacity) = self.capacity(arguments, scope) else {
                    self.unsupported(
                        scope.module,
                        arguments.span(),
                        "rsop cannot evaluate the `ArrayVec` capacity",
                        "write it as an integer literal or a constant of this crate",
                        path,
                    );
                    return Some(json!({}));
                };
                json!({"type": "array", "items": self.type_schema(t, scope, path), "maxItems": capacity})
            }
            // An externally tagged enum of `Left` and `Right`.
            ("either", "Either", Some(l), Some(r)) => {
                let variant = |b: &mut Self, name: &str, ty: &syn::Type| {
                    json!({
                        "type": "object",
                        "properties": {name: b.type_schema(ty, scope, &format!("{path}.{name}"))},
                        "additionalProperties": false,
                        "required": [name],
                    })
                };
                json!({"oneOf": [variant(self, "Left", l), variant(self, "Right", r)]})
            }
            _ => return None,
        })
    }

    /// The const argument of `ArrayVec<T, N>`: a literal, or a constant
    /// expression of the crate (which syn parses as a type when it is a
    /// bare path).
    fn capacity(&self, arguments: &syn::PathArguments, scope: &Scope<'a>) -> Option<u64> {
        let syn::PathArguments::AngleBracketed(a) = arguments else {
            return None;
        };
        let expr = match a.args.iter().nth(1)? {
            syn::GenericArgument::Const(e) => e.clone(),
            syn::GenericArgument::Type(syn::Type::Path(p)) if p.qself.is_none() => {
                syn::Expr::Path(syn::ExprPath {
                    attrs: Vec::new(),
                    qself: None,
                    path: p.path.clone(),
                })
            }
            _ => return None,
        };
        eval::value_in(self.krate, scope.module, &expr)?.as_u64()
    }
}

/// `ty` with generic parameters of the enclosing types replaced by their
/// arguments, and the scope those are written in.
fn bound<'a>(ty: &syn::Type, scope: &Scope<'a>) -> (syn::Type, Scope<'a>) {
    if let syn::Type::Path(p) = ty
        && p.qself.is_none()
        && let Some(ident) = p.path.get_ident()
        && let Some((_, bound_ty, outer)) = scope.param(&ident.to_string())
    {
        return bound(bound_ty, outer);
    }
    (ty.clone(), scope.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifests::derive::schema::DEFAULT_KUBE_DERIVE;
    use crate::manifests::derive::schema::k8s::Table;
    use crate::manifests::diagnostics::Diagnostics;
    use crate::manifests::read::source::{Crate, Sources};

    fn recorded() -> Value {
        serde_json::from_str(DATA).unwrap()
    }

    /// rsop's schema of each type written in a crate's root module
    /// (`source` declares what the types refer to), with the diagnostics.
    fn schemas(source: &str, types: &[&str]) -> Vec<(Value, Vec<String>)> {
        let mut diagnostics = Diagnostics::default();
        let sources = Sources::from_sources(&[("src/lib.rs", source)], None, &mut diagnostics);
        assert!(diagnostics.is_empty());
        let krate = Crate::new(&sources);
        let module = krate.module(&[]).unwrap();
        types
            .iter()
            .map(|ty| {
                let mut builder = Builder::new(&krate, Table::pinned(), DEFAULT_KUBE_DERIVE);
                let parsed: syn::Type = syn::parse_str(ty).unwrap();
                let schema = builder.type_schema(&parsed, &Scope::new(module), "spec");
                let messages = builder
                    .diagnostics
                    .iter()
                    .map(|d| d.message.clone())
                    .collect();
                (schema, messages)
            })
            .collect()
    }

    /// Every recorded leaf type, written as its path, gets the recorded
    /// schema; with any type arguments (`DateTime<Utc>`).
    #[test]
    fn leaf_types_have_the_recorded_schemas() {
        let data = recorded();
        let types = data["types"].as_object().unwrap();
        assert!(types.len() >= 20, "the data lost types");
        for (path, entry) in types {
            let written = [path.clone(), format!("{path}<Utc>"), format!("::{path}")];
            let refs: Vec<&str> = written.iter().map(String::as_str).collect();
            for ((schema, messages), ty) in schemas("", &refs).into_iter().zip(&written) {
                assert!(messages.is_empty(), "{ty}: {messages:?}");
                assert_eq!(schema, entry["schema"], "{ty}");
            }
        }
    }

    /// Generic containers at the recorded arguments give what schemars gave.
    #[test]
    fn containers_equal_the_real_crates() {
        let data = recorded();
        let instances = data["instances"].as_object().unwrap();
        assert!(
            instances
                .keys()
                .any(|k| k.starts_with("arrayvec::ArrayVec"))
        );
        let types: Vec<&str> = instances.keys().map(String::as_str).collect();
        for ((schema, messages), ty) in schemas("", &types).into_iter().zip(&types) {
            assert!(messages.is_empty(), "{ty}: {messages:?}");
            assert_eq!(schema, instances[*ty], "{ty}");
        }
    }

    /// Users import through `use`, module re-exports and k8s-openapi's
    /// re-export of chrono or jiff.
    #[test]
    fn types_resolve_through_imports_and_reexports() {
        let source = "use chrono::{DateTime, Utc, naive::NaiveDate as Day};\n\
                      use k8s_openapi::jiff;\n\
                      use indexmap::IndexMap;\n\
                      const CAP: usize = 2 * 4;\n\
                      pub struct Wrapper<A> { pub items: smallvec::SmallVec<A> }";
        let cases = [
            (
                "DateTime<Utc>",
                json!({"type": "string", "format": "date-time"}),
            ),
            (
                "chrono::prelude::DateTime<chrono::FixedOffset>",
                json!({"type": "string", "format": "date-time"}),
            ),
            ("Day", json!({"type": "string", "format": "date"})),
            (
                "k8s_openapi::chrono::NaiveTime",
                json!({"type": "string", "format": "partial-time"}),
            ),
            (
                "jiff::Timestamp",
                json!({"type": "string", "format": "date-time"}),
            ),
            (
                "k8s_openapi::jiff::civil::Date",
                json!({"type": "string", "format": "date"}),
            ),
            (
                "IndexMap<String, DateTime<Utc>>",
                json!({"type": "object", "additionalProperties": {"type": "string", "format": "date-time"}}),
            ),
            (
                "arrayvec::ArrayVec<u8, CAP>",
                json!({"type": "array", "items": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}, "maxItems": 8}),
            ),
            (
                "Wrapper<[bool; 3]>",
                json!({"type": "object", "required": ["items"], "properties": {"items": {"type": "array", "items": {"type": "boolean"}}}}),
            ),
        ];
        let types: Vec<&str> = cases.iter().map(|(t, _)| *t).collect();
        for ((schema, messages), (ty, expected)) in schemas(source, &types).into_iter().zip(&cases)
        {
            assert!(messages.is_empty(), "{ty}: {messages:?}");
            assert_eq!(&schema, expected, "{ty}");
        }
    }

    /// A type of those crates schemars has no impl for stays unknown.
    #[test]
    fn other_types_of_those_crates_are_reported() {
        let results = schemas(
            "",
            &[
                "chrono::Month",
                "semver::VersionReq",
                "arrayvec::ArrayVec<u8, N>",
            ],
        );
        for (schema, messages) in results {
            assert_eq!(schema, json!({}));
            assert_eq!(messages.len(), 1, "{messages:?}");
        }
    }
}
