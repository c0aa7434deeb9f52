//! Schemas of k8s-openapi types, for every k8s-openapi version and
//! Kubernetes version feature rsop knows, returned fully inlined as
//! schemars does with `inline_subschemas`.
//!
//! The schemas are the raw ones the crates' own `JsonSchema` impls give
//! (before any transform), with nested types as `#/components/schemas/<name>`
//! references into a per-version table of definitions. They are produced
//! from the real crates by `scripts/k8s-schemas.sh` and embedded here, so
//! rsop's build does not compile k8s-openapi; the test at the end of this
//! file checks the pinned version against the real crate.

use std::cell::RefCell;
use std::collections::HashMap;

use miniz_oxide::inflate::TINFLStatus;
use miniz_oxide::inflate::core::{DecompressorOxide, decompress, inflate_flags};
use serde_json::Value;

use crate::versions;

const REF_PREFIX: &str = "#/components/schemas/";

// The data of `data/k8s-openapi/schemas.json.gz` (see
// `scripts/k8s-schemas/pack.rs` for its layout) as build.rs indexes it:
// `TYPE_NAMES` (every Rust type path of every version, sorted),
// `DEFINITION_NAMES` (every definition name, sorted), `VERSIONS`, and
// `POOL_OFFSETS` into `POOL`, where each distinct schema is deflated on its
// own and inflated only when asked for.
#[allow(clippy::unreadable_literal, reason = "written by build.rs")]
mod index {
    use super::VersionData;
    include!(concat!(env!("OUT_DIR"), "/k8s-index.rs"));
}
use index::{DEFINITION_NAMES, POOL_OFFSETS, TYPE_NAMES, VERSIONS};

static POOL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/k8s-pool.bin"));

#[derive(Debug)]
struct VersionData {
    k8s_openapi: &'static str,
    feature: &'static str,
    earliest: &'static str,
    latest: &'static str,
    /// Parallel to `TYPE_NAMES`: pool index, or `None` when the version
    /// lacks the type.
    types: &'static [Option<u32>],
    /// Parallel to `DEFINITION_NAMES`.
    definitions: &'static [Option<u32>],
}

/// The schemas of one k8s-openapi version under one Kubernetes version
/// feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    index: usize,
}

/// One version rsop has schemas for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Known {
    /// The crate version, such as `0.29.0`.
    pub k8s_openapi: &'static str,
    /// The Kubernetes version feature, such as `v1_34`.
    pub feature: &'static str,
    /// What `earliest` and `latest` stand for in this crate version; `-`
    /// in releases before 0.19, which have neither feature.
    pub earliest: &'static str,
    pub latest: &'static str,
}

/// Every version and feature rsop has schemas for, oldest first.
pub fn known() -> impl Iterator<Item = Known> {
    VERSIONS.iter().map(|v| Known {
        k8s_openapi: v.k8s_openapi,
        feature: v.feature,
        earliest: v.earliest,
        latest: v.latest,
    })
}

impl Table {
    /// The table of `k8s_openapi` (an exact crate version, such as `0.29.0`)
    /// under `feature` (`v1_XX`; `earliest` and `latest` are resolved by
    /// the caller through [`known`]).
    pub fn find(k8s_openapi: &str, feature: &str) -> Option<Table> {
        VERSIONS
            .iter()
            .position(|v| v.k8s_openapi == k8s_openapi && v.feature == feature)
            .map(|index| Table { index })
    }

    /// What a project rsop scaffolds builds with: the newest release of the
    /// pinned k8s-openapi line under the pinned Kubernetes version.
    ///
    /// # Panics
    /// When the embedded data lacks that version: `scripts/k8s-schemas.sh`
    /// was not run after moving the pin, which the tests catch.
    pub fn pinned() -> Table {
        let feature = versions::context().k8s_openapi_feature;
        let line = format!("{}.", versions::K8S_OPENAPI);
        let index = VERSIONS
            .iter()
            .rposition(|v| v.k8s_openapi.starts_with(&line) && v.feature == feature)
            .unwrap_or_else(|| {
                panic!(
                    "no embedded schemas for k8s-openapi {} {feature}",
                    versions::K8S_OPENAPI
                )
            });
        Table { index }
    }

    fn version(self) -> &'static VersionData {
        &VERSIONS[self.index]
    }

    /// The crate version, such as `0.29.0`.
    pub fn k8s_openapi(self) -> &'static str {
        self.version().k8s_openapi
    }

    /// The Kubernetes version feature, such as `v1_34`.
    pub fn feature(self) -> &'static str {
        self.version().feature
    }

    /// The raw schema of the k8s-openapi type at `path` (such as
    /// `k8s_openapi::api::core::v1::PodSpec`), or `None` when this version
    /// has no such type.
    pub fn schema(self, path: &str) -> Option<Value> {
        // Kinds embed the same types again and again (a `Condition` in every
        // status): each is parsed and inlined once per thread, then copied.
        thread_local! {
            static INLINED: RefCell<HashMap<(usize, String), Option<Value>>> =
                RefCell::new(HashMap::new());
        }
        INLINED.with(|cache| {
            let key = (self.index, path.to_string());
            if let Some(found) = cache.borrow().get(&key) {
                return found.clone();
            }
            let found = self.raw_type(path).map(|mut raw| {
                self.inline(&mut raw, 0);
                raw
            });
            cache.borrow_mut().insert(key, found.clone());
            found
        })
    }

    /// Every recorded type path, for messages.
    pub fn known_paths(self) -> impl Iterator<Item = &'static str> {
        TYPE_NAMES
            .iter()
            .zip(self.version().types)
            .filter(|(_, i)| i.is_some())
            .map(|(name, _)| *name)
    }

    /// A type's schema as recorded: usually a reference to a definition.
    fn raw_type(self, path: &str) -> Option<Value> {
        let i = TYPE_NAMES.binary_search(&path).ok()?;
        pool_value(self.version().types[i]?)
    }

    fn definition(self, name: &str) -> Option<Value> {
        let i = DEFINITION_NAMES.binary_search(&name).ok()?;
        pool_value(self.version().definitions[i]?)
    }

    /// Replaces every reference by its definition; the reference's siblings
    /// (a property's `description`) are inserted over the definition, as
    /// schemars' inlining does.
    fn inline(self, value: &mut Value, depth: usize) {
        match value {
            Value::Object(map) => {
                if depth < 64
                    && let Some(Value::String(r)) = map.get("$ref")
                    && let Some(name) = r.strip_prefix(REF_PREFIX)
                    && let Some(Value::Object(mut def)) = self.definition(name)
                {
                    for (k, v) in std::mem::take(map) {
                        if k != "$ref" {
                            def.insert(k, v);
                        }
                    }
                    *map = def;
                    return self.inline(value, depth + 1);
                }
                for v in map.values_mut() {
                    self.inline(v, depth);
                }
            }
            Value::Array(items) => {
                for v in items {
                    self.inline(v, depth);
                }
            }
            _ => {}
        }
    }
}

/// A pool entry, inflated and parsed once per thread (the same definition
/// is referenced from many places of one schema), then copied.
fn pool_value(index: u32) -> Option<Value> {
    thread_local! {
        static PARSED: RefCell<HashMap<u32, Option<Value>>> = RefCell::new(HashMap::new());
    }
    PARSED.with(|cache| {
        if let Some(found) = cache.borrow().get(&index) {
            return found.clone();
        }
        let found = decode(index);
        cache.borrow_mut().insert(index, found.clone());
        found
    })
}

fn decode(index: u32) -> Option<Value> {
    thread_local! {
        // One inflater and buffer per thread, reset for each entry: a new
        // inflater zeroes and sets up more memory than most entries inflate
        // to.
        static INFLATER: RefCell<(Box<DecompressorOxide>, Vec<u8>)> =
            RefCell::new((Box::default(), Vec::new()));
    }
    let i = index as usize;
    let mut input = &POOL[*POOL_OFFSETS.get(i)? as usize..*POOL_OFFSETS.get(i + 1)? as usize];
    INFLATER.with_borrow_mut(|(inflater, text)| {
        inflater.init();
        text.clear();
        text.resize((input.len() * 4).max(64), 0);
        let mut written = 0;
        loop {
            // The whole entry is inflated into one buffer, which then holds
            // every earlier byte a back reference can reach.
            let (status, read, wrote) = decompress(
                inflater,
                input,
                text,
                written,
                inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
            );
            written += wrote;
            match status {
                TINFLStatus::Done => break,
                TINFLStatus::HasMoreOutput => {
                    input = input.get(read..)?;
                    text.resize(text.len() * 2, 0);
                }
                _ => return None,
            }
        }
        serde_json::from_slice(&text[..written]).ok()
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn pinned(path: &str) -> Value {
        Table::pinned().schema(path).unwrap()
    }

    #[test]
    fn int_or_string_has_no_type_and_is_int_or_string() {
        let s = pinned("k8s_openapi::apimachinery::pkg::util::intstr::IntOrString");
        assert_eq!(s["x-kubernetes-int-or-string"], Value::Bool(true));
        assert!(s.get("type").is_none());
    }

    #[test]
    fn nested_types_are_inlined() {
        let s = pinned("k8s_openapi::api::core::v1::PodTemplateSpec");
        let text = s.to_string();
        assert!(!text.contains("$ref"), "references remain");
        assert_eq!(
            s["properties"]["spec"]["properties"]["containers"]["type"],
            "array"
        );
    }

    #[test]
    fn condition_requires_its_five_fields() {
        let s = pinned("k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition");
        assert_eq!(s["required"].as_array().unwrap().len(), 5);
    }

    #[test]
    fn every_version_of_every_line_is_there() {
        for (version, earliest, latest) in [
            ("0.26.0", 30, 34),
            ("0.26.1", 30, 34),
            ("0.27.0", 31, 35),
            ("0.27.1", 31, 35),
            ("0.28.0", 32, 36),
            ("0.29.0", 33, 37),
        ] {
            for minor in earliest..=latest {
                let table = Table::find(version, &format!("v1_{minor}"))
                    .unwrap_or_else(|| panic!("no k8s-openapi {version} v1_{minor}"));
                assert!(
                    table
                        .schema("k8s_openapi::api::core::v1::PodSpec")
                        .is_some(),
                    "k8s-openapi {version} v1_{minor} has no PodSpec"
                );
            }
            let k = known().find(|k| k.k8s_openapi == version).unwrap();
            assert_eq!(
                (k.earliest, k.latest),
                (
                    format!("v1_{earliest}").as_str(),
                    format!("v1_{latest}").as_str()
                )
            );
        }
    }

    /// Fields Kubernetes added after 1.34 (a probe's `grpc.mode` and
    /// `httpGet.protocol`, a mount's `bindMountOptions`) are in `latest`'s
    /// schemas only, and 1.34's `env[].valueFrom.fileKeyRef` is not in
    /// `earliest`'s: what an API server prunes when the CRD lacks it.
    #[test]
    fn later_kubernetes_versions_have_later_fields() {
        let container = |feature: &str| {
            Table::find("0.29.0", feature)
                .unwrap()
                .schema("k8s_openapi::api::core::v1::Container")
                .unwrap()
        };
        let added_after_1_34 = [
            "/properties/livenessProbe/properties/grpc/properties/mode",
            "/properties/readinessProbe/properties/httpGet/properties/protocol",
            "/properties/lifecycle/properties/preStop/properties/httpGet/properties/protocol",
            "/properties/volumeMounts/items/properties/bindMountOptions",
        ];
        let file_key_ref = "/properties/env/items/properties/valueFrom/properties/fileKeyRef";
        let stop_signal = "/properties/lifecycle/properties/stopSignal";
        let (v1_33, v1_34, v1_37) = (container("v1_33"), container("v1_34"), container("v1_37"));
        for added in added_after_1_34 {
            assert!(v1_34.pointer(added).is_none(), "1.34 has {added}");
            assert!(v1_37.pointer(added).is_some(), "1.37 lacks {added}");
        }
        assert!(v1_33.pointer(file_key_ref).is_none());
        assert!(v1_34.pointer(file_key_ref).is_some());
        for schema in [&v1_33, &v1_34, &v1_37] {
            assert!(schema.pointer(stop_signal).is_some());
        }
    }

    /// The embedded schemas of rsop's pinned k8s-openapi (the dev-dependency)
    /// equal what the crate itself gives under dump.rs's settings: drift
    /// between the data and the crate fails here.
    #[test]
    fn pinned_data_equals_the_real_crate() {
        use schemars::generate::SchemaSettings;

        let mut generator = SchemaSettings::openapi3()
            .with(|s| {
                s.inline_subschemas = false;
                s.meta_schema = None;
            })
            .into_generator();
        let mut types: BTreeMap<String, Value> = BTreeMap::new();
        macro_rules! k8s_types {
            ($($($segment:ident)::+),* $(,)?) => {{
                $(
                    types.insert(
                        concat!("k8s_openapi" $(, "::", stringify!($segment))+).to_string(),
                        generator.subschema_for::<k8s_openapi $(::$segment)+>().to_value(),
                    );
                )*
            }};
        }
        include!("../../../../data/k8s-openapi/pinned_types.rs");

        let table = Table::pinned();
        let manifest = include_str!("../../../../Cargo.toml");
        let dev_dependency = manifest
            .lines()
            .find(|l| l.starts_with("k8s-openapi = "))
            .unwrap();
        assert!(
            dev_dependency.contains(&format!("\"={}\"", table.k8s_openapi()))
                && dev_dependency.contains(&format!("\"{}\"", table.feature())),
            "the k8s-openapi dev-dependency is not the pinned {} {}",
            table.k8s_openapi(),
            table.feature()
        );

        assert_eq!(
            table.known_paths().collect::<Vec<_>>(),
            types.keys().map(String::as_str).collect::<Vec<_>>(),
            "the recorded types differ; run scripts/k8s-schemas.sh"
        );
        for (path, schema) in &types {
            assert_eq!(table.raw_type(path).as_ref(), Some(schema), "{path}");
        }
        let mut names = Vec::new();
        for (name, schema) in generator.definitions() {
            assert_eq!(table.definition(name).as_ref(), Some(schema), "{name}");
            names.push(name.as_str());
        }
        let recorded: Vec<&str> = DEFINITION_NAMES
            .iter()
            .zip(table.version().definitions)
            .filter(|(_, i)| i.is_some())
            .map(|(n, _)| *n)
            .collect();
        names.sort_unstable();
        assert_eq!(recorded, names, "the recorded definitions differ");
    }
}
