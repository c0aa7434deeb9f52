//! Stage B and C of schema generation. Stage A (the parent module) builds the
//! raw JSON schema that schemars 1's `#[derive(JsonSchema)]` gives the root
//! struct of a custom resource. kube-derive 5's `crd()` does not emit that
//! schema as is: its generator runs schemars' openapi3 transforms and kube's
//! own ones over it, then round-trips it through k8s-openapi's
//! `JSONSchemaProps`. [`finalize`] reproduces both steps exactly, so that the
//! manifest written by `rsop manifests` is the one `crd()` would print.
//!
//! The transforms are written after schemars 1.2 `src/transform.rs` and
//! kube-core 5 `src/schema.rs`. Where kube-derive would panic at run time,
//! [`finalize`] returns a [`TransformError`] instead.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::model::{KubeCore, Model};

/// Why kube-derive's `crd()` would panic on this schema; the caller turns it into a diagnostic.
///
/// Every `pointer` is a JSON pointer into the root schema (`#` is the root
/// itself, `#/properties/spec` its `spec` property).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransformError {
    /// kube's `StructuralSchemaRewriter` found `enum` values of one type next
    /// to object variants in a `oneOf`: an externally tagged enum with unit
    /// and data variants.
    #[error(
        "an enum mixes unit variants ({unit_variants}) with data variants; kube-derive cannot make a structural schema of it (at `{pointer}`, the unit variants are of type `{unit_type}` and the others of type `{data_type}`)"
    )]
    MixedEnum {
        pointer: String,
        unit_variants: String,
        unit_type: String,
        data_type: String,
    },
    /// Two variants of a `oneOf`/`anyOf` define the same property with
    /// different schemas, e.g. untagged enum variants with a same-named field
    /// of another type or doc comment.
    #[error(
        "several variants of an enum have a field `{property}` whose schemas differ ({detail}); kube-derive requires a field shared by variants to have one identical schema (at `{pointer}`)"
    )]
    PropertyClash {
        pointer: String,
        property: String,
        detail: String,
    },
    /// Two variants of a `oneOf` name the same property: kube-core before
    /// 0.76 panics whatever their schemas.
    #[error(
        "several variants of an enum have a field `{property}`; the kube-derive of kube 0.70 to 0.75 panics on any field name two variants share (at `{pointer}`)"
    )]
    RepeatedProperty { pointer: String, property: String },
    /// The property clash of an internally or adjacently tagged enum: each
    /// variant gives the tag property its own one-value `enum`.
    #[error(
        "an internally or adjacently tagged enum has more than one variant, and each variant gives its tag `{tag}` a different value; kube-derive cannot merge them into a structural schema (at `{pointer}`)"
    )]
    TaggedEnum { pointer: String, tag: String },
    /// Variants of a `oneOf`/`anyOf` that define properties but have
    /// different JSON types.
    #[error(
        "the variants of an enum have conflicting JSON types (`{variant_type}` and `{common_type}`); kube-derive cannot merge them into a structural schema (at `{pointer}`)"
    )]
    ConflictingVariantTypes {
        pointer: String,
        variant_type: String,
        common_type: String,
    },
    /// A boolean schema where `JSONSchemaProps` needs an object: schemars'
    /// `ReplaceBoolSchemas` skips everything under `additionalProperties`.
    #[error(
        "the schema at `{pointer}` is the boolean schema `{value}`, which a Kubernetes `JSONSchemaProps` cannot hold, so kube-derive's `crd()` would panic; a `serde_json::Value` (or an empty enum) inside a map value, e.g. `HashMap<String, Vec<serde_json::Value>>`, produces it"
    )]
    BoolSchema { pointer: String, value: bool },
    /// A `type` that is still an array: `JSONSchemaProps` has a single type.
    #[error(
        "the schema at `{pointer}` allows several JSON types ({types}), but a Kubernetes `JSONSchemaProps` has a single `type`, so kube-derive's `crd()` would panic; a Rust type that serializes as more than one JSON type produces it"
    )]
    TypeArray { pointer: String, types: String },
    /// Any other keyword whose value `JSONSchemaProps` cannot deserialize.
    #[error(
        "the keyword `{keyword}` of the schema at `{pointer}` is not {expected}, as a Kubernetes `JSONSchemaProps` requires, so kube-derive's `crd()` would panic; a `#[schemars(extend(...))]` or a hand-written schema produces it"
    )]
    InvalidKeyword {
        pointer: String,
        keyword: String,
        expected: &'static str,
    },
    /// A value in a schema position that is neither an object nor a boolean.
    #[error(
        "the value at `{pointer}` is not a schema object, so kube-derive's `crd()` would panic"
    )]
    NotAnObject { pointer: String },
}

impl TransformError {
    /// The JSON pointer of the offending schema, such as
    /// `#/properties/spec/properties/mode`.
    pub fn pointer(&self) -> &str {
        match self {
            TransformError::MixedEnum { pointer, .. }
            | TransformError::PropertyClash { pointer, .. }
            | TransformError::RepeatedProperty { pointer, .. }
            | TransformError::TaggedEnum { pointer, .. }
            | TransformError::ConflictingVariantTypes { pointer, .. }
            | TransformError::BoolSchema { pointer, .. }
            | TransformError::TypeArray { pointer, .. }
            | TransformError::InvalidKeyword { pointer, .. }
            | TransformError::NotAnObject { pointer } => pointer,
        }
    }

    /// The schema path of the offending schema in rsop's notation:
    /// `#/properties/spec/properties/mode` under `App` is `App.spec.mode`.
    pub fn field_path(&self, root: &str) -> String {
        let mut path = root.to_string();
        let mut parts = self
            .pointer()
            .trim_start_matches('#')
            .split('/')
            .filter(|p| !p.is_empty());
        while let Some(part) = parts.next() {
            match part {
                "properties" => {
                    if let Some(name) = parts.next() {
                        path.push('.');
                        path.push_str(name);
                    }
                }
                "items" | "additionalProperties" => path.push_str("[]"),
                _ => {}
            }
        }
        path
    }
}

/// Applies, in order, the transforms kube-derive 5 applies to the root schema of a custom resource
/// (the 7 of schemars' openapi3 settings, `AddNullable` again, `StructuralSchemaRewriter`, `OptionalEnum`,
/// `OptionalIntOrString`), then the `JSONSchemaProps` round trip (unknown keys dropped, `default: null`
/// dropped, `minimum`/`maximum`/`multipleOf` as floats, ...). `root` is the raw schemars output for the root
/// type (already holding its `title`).
///
/// `model` picks the kube-core release line (see [`super::model`]): 2.0 has
/// neither `OptionalEnum` nor `OptionalIntOrString`, and the rewriter's
/// details changed in 3.0.1 and 3.1.
pub fn finalize(root: Value, model: Model) -> Result<Value, TransformError> {
    let kube = model.kube_core;
    let mut root = root;
    if kube.is_legacy() {
        // schemars 0.8's openapi3 visitors, in their order, then kube's.
        // The raw schema already has `nullable` where schemars 0.8 writes
        // it; the two replacements turn the keywords rsop's raw schema
        // shares with schemars 1 (`const`, `prefixItems`) into those
        // schemars 0.8 writes (`enum`, `items`).
        replace_const_value(&mut root);
        replace_prefix_items(&mut root);
        remove_ref_siblings(&mut root);
        replace_bool_schemas(&mut root);
        set_single_example(&mut root);
        structural_schema_rewriter(&mut root, kube)?;
        return json_schema_props(root, &Pointer::ROOT);
    }
    replace_unevaluated_properties(&mut root);
    replace_bool_schemas(&mut root);
    add_nullable(&mut root);
    remove_ref_siblings(&mut root);
    set_single_example(&mut root);
    replace_const_value(&mut root);
    replace_prefix_items(&mut root);
    add_nullable(&mut root);
    structural_schema_rewriter(&mut root, kube)?;
    if kube >= KubeCore::V3_0_0 {
        optional_enum(&mut root, kube);
        optional_int_or_string(&mut root);
    }
    json_schema_props(root, &Pointer::ROOT)
}

/// Where a schema sits under the root. It is rendered as a JSON pointer
/// (`#/properties/spec`) only when an error names it: the transforms visit
/// every node of schemas as large as an inlined `PodTemplateSpec`, and
/// formatting a path at each would cost more than the visit itself.
#[derive(Debug, Clone, Copy)]
struct Pointer<'a> {
    parent: Option<&'a Pointer<'a>>,
    segment: Segment<'a>,
}

/// One step of a [`Pointer`].
#[derive(Debug, Clone, Copy)]
enum Segment<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl Pointer<'_> {
    const ROOT: Pointer<'static> = Pointer {
        parent: None,
        segment: Segment::Root,
    };

    fn child<'b>(&'b self, segment: Segment<'b>) -> Pointer<'b> {
        Pointer {
            parent: Some(self),
            segment,
        }
    }

    fn key<'b>(&'b self, key: &'b str) -> Pointer<'b> {
        self.child(Segment::Key(key))
    }

    /// The JSON pointer, with `~` and `/` escaped in keys (RFC 6901).
    fn render(&self) -> String {
        let mut out = self.parent.map(Pointer::render).unwrap_or_default();
        match self.segment {
            Segment::Root => out.push('#'),
            Segment::Key(key) => {
                out.push('/');
                out.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Index(index) => {
                out.push('/');
                out.push_str(&index.to_string());
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------
// Walking subschemas
// ---------------------------------------------------------------------------

/// Where a subschema set aside by [`set_aside_subschemas`] goes back.
#[derive(Debug)]
enum Slot {
    /// `parent[keyword]`, e.g. `not`, `additionalProperties`, a single `items`.
    Keyword(String),
    /// `parent[keyword][index]`, e.g. `anyOf/0`, an `items` array element.
    Element(String, usize),
    /// `parent[keyword][name]`, e.g. `properties/foo`.
    Entry(String, String),
}

/// Whether kube parses a subschema under `keyword` as a typed schema (a node
/// with an unparsable one there is left alone), rather than keeping it as an
/// opaque value.
fn is_parsed_by_kube(keyword: &str) -> bool {
    matches!(
        keyword,
        "anyOf"
            | "oneOf"
            | "items"
            | "additionalItems"
            | "contains"
            | "additionalProperties"
            | "propertyNames"
            | "properties"
            | "patternProperties"
    )
}

/// A schema in the sense of schemars: a JSON object or a boolean.
fn is_schema(value: &Value) -> bool {
    matches!(value, Value::Object(_) | Value::Bool(_))
}

/// Calls `visit` on each direct subschema schemars' `transform_subschemas`
/// visits, in key order, with the keyword that holds it and, for an element
/// of a list or an entry of a map, its index or name: `not`, `if`, `then`,
/// `else`, `contains`, `additionalProperties`, `propertyNames`,
/// `additionalItems`; the elements of `allOf`, `anyOf`, `oneOf`,
/// `prefixItems`; `items` (one schema or an array); the values of
/// `properties`, `patternProperties`, `$defs`, `definitions`. Stops at the
/// first error.
fn try_for_each_subschema<E>(
    schema: &mut Value,
    mut visit: impl FnMut(&str, Option<Segment<'_>>, &mut Value) -> Result<(), E>,
) -> Result<(), E> {
    let Value::Object(map) = schema else {
        return Ok(());
    };
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "additionalProperties"
            | "propertyNames"
            | "additionalItems"
                if is_schema(value) =>
            {
                visit(key, None, value)?;
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" | "items" => {
                if let Value::Array(elements) = value {
                    for (index, element) in elements.iter_mut().enumerate() {
                        if is_schema(element) {
                            visit(key, Some(Segment::Index(index)), element)?;
                        }
                    }
                } else if key == "items" && is_schema(value) {
                    visit(key, None, value)?;
                }
            }
            "properties" | "patternProperties" | "$defs" | "definitions" => {
                if let Value::Object(entries) = value {
                    for (name, entry) in entries.iter_mut() {
                        if is_schema(entry) {
                            visit(key, Some(Segment::Key(name)), entry)?;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Applies `transform` to every direct subschema (schemars' `transform_subschemas`).
fn for_each_subschema(schema: &mut Value, transform: fn(&mut Value)) {
    let Ok(()) = try_for_each_subschema(schema, |_, _, child| {
        transform(child);
        Ok::<(), std::convert::Infallible>(())
    });
}

// ---------------------------------------------------------------------------
// schemars 1.2 openapi3 transforms
// ---------------------------------------------------------------------------

/// schemars `ReplaceUnevaluatedProperties`: `OpenAPI` 3.0 has no `unevaluatedProperties`, so it becomes
/// `additionalProperties`, and properties declared in `allOf`/`anyOf`/`oneOf`/`if`/`then`/`else` are
/// listed (as `true`) so they stay allowed.
fn replace_unevaluated_properties(schema: &mut Value) {
    for_each_subschema(schema, replace_unevaluated_properties);
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    let Some(unevaluated) = map.remove("unevaluatedProperties") else {
        return;
    };
    map.insert("additionalProperties".to_owned(), unevaluated);
    let mut names = BTreeSet::new();
    gather_property_names(schema, &mut names);
    if names.is_empty() {
        return;
    }
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    let properties = map
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(properties) = properties {
        for name in names {
            properties.entry(name).or_insert(Value::Bool(true));
        }
    }
}

/// schemars `GatherPropertyNames`: the `properties` names of a schema and, recursively, of its
/// immediate subschemas (`if`, `then`, `else`, `allOf`, `anyOf`, `oneOf`).
fn gather_property_names(schema: &Value, names: &mut BTreeSet<String>) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(Value::Object(properties)) = map.get("properties") {
        names.extend(properties.keys().cloned());
    }
    for (key, value) in map {
        match key.as_str() {
            "if" | "then" | "else" if is_schema(value) => {
                gather_property_names(value, names);
            }
            "allOf" | "anyOf" | "oneOf" => {
                if let Value::Array(elements) = value {
                    for element in elements.iter().filter(|element| is_schema(element)) {
                        gather_property_names(element, names);
                    }
                }
            }
            _ => {}
        }
    }
}

/// schemars `ReplaceBoolSchemas { skip_additional_properties: true }`: `OpenAPI` 3.0 has no boolean
/// schemas, so `true` becomes `{}` and `false` `{"not": {}}`; an `additionalProperties` value is left
/// alone, and so is everything below it.
fn replace_bool_schemas(schema: &mut Value) {
    if let Value::Bool(value) = *schema {
        *schema = bool_schema_as_object(value);
        return;
    }
    let additional = schema
        .as_object_mut()
        .and_then(|map| map.remove_entry("additionalProperties"));
    for_each_subschema(schema, replace_bool_schemas);
    if let Some((key, value)) = additional
        && let Some(map) = schema.as_object_mut()
    {
        map.insert(key, value);
    }
}

/// schemars `Schema::ensure_object`: the object schema equivalent to a boolean schema.
fn bool_schema_as_object(value: bool) -> Value {
    let mut map = Map::new();
    if !value {
        map.insert("not".to_owned(), Value::Object(Map::new()));
    }
    Value::Object(map)
}

/// schemars `Schema::has_type`: whether `type` is `ty` or an array holding it.
fn has_type(schema: &Value, ty: &str) -> bool {
    match schema.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(ty)),
        Some(Value::String(single)) => single == ty,
        _ => false,
    }
}

/// schemars `AddNullable` (defaults: `remove_null_type`, `add_const_null`): `OpenAPI` 3.0 spells a
/// `"null"` type as `nullable: true`; a null-only type becomes `const: null`.
fn add_nullable(schema: &mut Value) {
    if has_type(schema, "null")
        && let Some(map) = schema.as_object_mut()
    {
        map.insert("nullable".to_owned(), Value::Bool(true));
        let only_allows_null = match map.get("type") {
            Some(Value::Array(types)) => types.iter().all(|t| t == "null"),
            _ => true,
        };
        if only_allows_null {
            map.insert("const".to_owned(), Value::Null);
            map.remove("type");
        } else if let Some(ty) = map.get_mut("type")
            && let Some(types) = ty.as_array_mut()
        {
            types.retain(|t| t != "null");
            if types.len() == 1 {
                *ty = types.remove(0);
            }
        }
    }
    for_each_subschema(schema, add_nullable);
}

/// schemars `RemoveRefSiblings`: older drafts ignore keywords next to `$ref`, so a `$ref` with
/// siblings moves into `allOf`.
fn remove_ref_siblings(schema: &mut Value) {
    for_each_subschema(schema, remove_ref_siblings);
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if map.len() <= 1 {
        return;
    }
    let Some(reference) = map.remove("$ref") else {
        return;
    };
    let all_of = map
        .entry("allOf")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(all_of) = all_of {
        let mut reference_only = Map::new();
        reference_only.insert("$ref".to_owned(), reference);
        all_of.push(Value::Object(reference_only));
    }
}

/// schemars `SetSingleExample`: `OpenAPI` 3.0 has a single `example`, so the first of `examples` is
/// kept (and `examples` removed whatever it holds).
fn set_single_example(schema: &mut Value) {
    for_each_subschema(schema, set_single_example);
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(examples)) = map.remove("examples")
        && let Some(first) = examples.into_iter().next()
    {
        map.insert("example".to_owned(), first);
    }
}

/// schemars `ReplaceConstValue`: `OpenAPI` 3.0 has no `const`, so it becomes a one-value `enum`.
fn replace_const_value(schema: &mut Value) {
    for_each_subschema(schema, replace_const_value);
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if let Some(value) = map.remove("const") {
        map.insert("enum".to_owned(), Value::Array(vec![value]));
    }
}

/// schemars `ReplacePrefixItems`: older drafts have no `prefixItems` (tuples), so it becomes the
/// array form of `items`, and a previous `items` becomes `additionalItems`.
fn replace_prefix_items(schema: &mut Value) {
    for_each_subschema(schema, replace_prefix_items);
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    let Some(prefix_items) = map.remove("prefixItems") else {
        return;
    };
    if let Some(previous) = map.insert("items".to_owned(), prefix_items) {
        map.insert("additionalItems".to_owned(), previous);
    }
}

// ---------------------------------------------------------------------------
// kube-core 5 transforms
// ---------------------------------------------------------------------------

/// The JSON types kube's private `InstanceType` accepts.
const INSTANCE_TYPES: [&str; 7] = [
    "null", "boolean", "object", "array", "number", "string", "integer",
];

/// kube-core's private `Schema`: a boolean or a [`KubeSchemaObject`].
#[derive(Debug, Clone, PartialEq)]
enum KubeSchema {
    Bool(bool),
    Object(Box<KubeSchemaObject>),
}

/// kube-core's private `SchemaObject`, the typed view `StructuralSchemaRewriter` works on. Its
/// `PartialEq` is kube's, which decides whether a property repeated across variants clashes.
#[derive(Debug, Clone, PartialEq, Default)]
struct KubeSchemaObject {
    metadata: Option<Metadata>,
    /// A validated `type`: one of [`INSTANCE_TYPES`] or an array of them.
    instance_type: Option<Value>,
    format: Option<String>,
    enum_values: Option<Vec<Value>>,
    subschemas: Option<SubschemaValidation>,
    array: Option<ArrayValidation>,
    object: Option<ObjectValidation>,
    /// Every other keyword (kube's flattened `extensions` map).
    extensions: Map<String, Value>,
    /// Every other keyword again (kube's flattened `other` value). It is written after
    /// `extensions`, so it wins over a key the rewriter adds to `extensions`.
    other: Map<String, Value>,
}

/// kube-core's `Metadata`.
#[derive(Debug, Clone, PartialEq, Default)]
struct Metadata {
    description: Option<String>,
    /// `Some(Value::Null)` for an explicit `default: null`.
    default: Option<Value>,
}

/// kube-core's `SubschemaValidation`.
#[derive(Debug, Clone, PartialEq, Default)]
struct SubschemaValidation {
    any_of: Option<Vec<KubeSchema>>,
    one_of: Option<Vec<KubeSchema>>,
}

/// kube-core's `SingleOrVec<Schema>` for `items`.
#[derive(Debug, Clone, PartialEq)]
enum Items {
    Single(Box<KubeSchema>),
    Vec(Vec<KubeSchema>),
}

/// kube-core's `ArrayValidation`.
#[derive(Debug, Clone, PartialEq, Default)]
struct ArrayValidation {
    items: Option<Items>,
    additional_items: Option<Box<KubeSchema>>,
    max_items: Option<u32>,
    min_items: Option<u32>,
    unique_items: Option<bool>,
    contains: Option<Box<KubeSchema>>,
}

/// kube-core's `ObjectValidation`.
#[derive(Debug, Clone, PartialEq, Default)]
struct ObjectValidation {
    max_properties: Option<u32>,
    min_properties: Option<u32>,
    required: BTreeSet<String>,
    properties: BTreeMap<String, KubeSchema>,
    pattern_properties: BTreeMap<String, KubeSchema>,
    additional_properties: Option<Box<KubeSchema>>,
    property_names: Option<Box<KubeSchema>>,
}

/// serde's `Option<T>`: `null` is `Some(None)`, a value `parse` accepts is `Some(Some(_))`, anything
/// else fails (`None`).
#[allow(clippy::option_option)] // the two levels are serde's two cases
fn optional<T>(value: &Value, parse: impl FnOnce(&Value) -> Option<T>) -> Option<Option<T>> {
    if value.is_null() {
        Some(None)
    } else {
        parse(value).map(Some)
    }
}

fn parse_string(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

/// A `u32` as serde reads it from JSON: a non-negative integer in range, not a float.
fn parse_u32(value: &Value) -> Option<u32> {
    value.as_u64().and_then(|n| u32::try_from(n).ok())
}

/// kube's `SingleOrVec<InstanceType>`.
fn parse_instance_type(value: &Value) -> Option<Value> {
    let known = |t: &Value| {
        t.as_str()
            .is_some_and(|name| INSTANCE_TYPES.contains(&name))
    };
    let valid = match value {
        Value::String(_) => known(value),
        Value::Array(types) => types.iter().all(known),
        _ => false,
    };
    valid.then(|| value.clone())
}

fn parse_boxed_schema(value: &Value) -> Option<Box<KubeSchema>> {
    parse_kube_schema(value).map(Box::new)
}

fn parse_schema_list(value: &Value) -> Option<Vec<KubeSchema>> {
    value.as_array()?.iter().map(parse_kube_schema).collect()
}

fn parse_schema_map(value: &Value) -> Option<BTreeMap<String, KubeSchema>> {
    value
        .as_object()?
        .iter()
        .map(|(name, schema)| Some((name.clone(), parse_kube_schema(schema)?)))
        .collect()
}

/// `items`: untagged `SingleOrVec`, so a schema first, then an array of schemas.
fn parse_items(value: &Value) -> Option<Items> {
    if value.is_array() {
        parse_schema_list(value).map(Items::Vec)
    } else {
        parse_boxed_schema(value).map(Items::Single)
    }
}

/// `required` is a `BTreeSet<String>` (not an `Option`): `null` fails, duplicates merge.
fn parse_required(value: &Value) -> Option<BTreeSet<String>> {
    value.as_array()?.iter().map(parse_string).collect()
}

/// `serde_json::from_value::<Schema>` for kube's untagged `Schema`.
fn parse_kube_schema(value: &Value) -> Option<KubeSchema> {
    match value {
        Value::Bool(value) => Some(KubeSchema::Bool(*value)),
        Value::Object(map) => {
            parse_kube_schema_object(map).map(|o| KubeSchema::Object(Box::new(o)))
        }
        _ => None,
    }
}

/// `serde_json::from_value::<SchemaObject>`: `None` where serde would fail, in which case kube
/// leaves the node alone. A flattened group equal to its default is `None` (kube's `skip_if_default`).
fn parse_kube_schema_object(map: &Map<String, Value>) -> Option<KubeSchemaObject> {
    let mut schema = KubeSchemaObject::default();
    let mut metadata = Metadata::default();
    let mut subschemas = SubschemaValidation::default();
    let mut array = ArrayValidation::default();
    let mut object = ObjectValidation::default();
    for (key, value) in map {
        match key.as_str() {
            "type" => schema.instance_type = optional(value, parse_instance_type)?,
            "format" => schema.format = optional(value, parse_string)?,
            "enum" => schema.enum_values = optional(value, |v| v.as_array().cloned())?,
            "description" => metadata.description = optional(value, parse_string)?,
            "default" => metadata.default = Some(value.clone()),
            "anyOf" => subschemas.any_of = optional(value, parse_schema_list)?,
            "oneOf" => subschemas.one_of = optional(value, parse_schema_list)?,
            "items" => array.items = optional(value, parse_items)?,
            "additionalItems" => array.additional_items = optional(value, parse_boxed_schema)?,
            "maxItems" => array.max_items = optional(value, parse_u32)?,
            "minItems" => array.min_items = optional(value, parse_u32)?,
            "uniqueItems" => array.unique_items = optional(value, Value::as_bool)?,
            "contains" => array.contains = optional(value, parse_boxed_schema)?,
            "maxProperties" => object.max_properties = optional(value, parse_u32)?,
            "minProperties" => object.min_properties = optional(value, parse_u32)?,
            "required" => object.required = parse_required(value)?,
            "properties" => object.properties = parse_schema_map(value)?,
            "patternProperties" => object.pattern_properties = parse_schema_map(value)?,
            "additionalProperties" => {
                object.additional_properties = optional(value, parse_boxed_schema)?;
            }
            "propertyNames" => object.property_names = optional(value, parse_boxed_schema)?,
            _ => {
                schema.extensions.insert(key.clone(), value.clone());
                schema.other.insert(key.clone(), value.clone());
            }
        }
    }
    schema.metadata = non_default(metadata);
    schema.subschemas = non_default(subschemas);
    schema.array = non_default(array);
    schema.object = non_default(object);
    Some(schema)
}

/// kube's `skip_if_default`.
fn non_default<T: Default + PartialEq>(value: T) -> Option<T> {
    if value == T::default() {
        None
    } else {
        Some(value)
    }
}

impl KubeSchema {
    /// `serde_json::to_value` of kube's `Schema`.
    fn into_value(self) -> Value {
        match self {
            KubeSchema::Bool(value) => Value::Bool(value),
            KubeSchema::Object(object) => object.into_value(),
        }
    }
}

fn schema_list_to_value(schemas: Vec<KubeSchema>) -> Value {
    Value::Array(schemas.into_iter().map(KubeSchema::into_value).collect())
}

fn schema_map_to_value(schemas: BTreeMap<String, KubeSchema>) -> Value {
    Value::Object(
        schemas
            .into_iter()
            .map(|(name, schema)| (name, schema.into_value()))
            .collect(),
    )
}

impl KubeSchemaObject {
    /// `serde_json::to_value` of kube's `SchemaObject`: absent options and empty `required`,
    /// `properties` and `patternProperties` are skipped; `required` comes out sorted.
    fn into_value(self) -> Value {
        let mut map = Map::new();
        if let Some(metadata) = self.metadata {
            if let Some(description) = metadata.description {
                map.insert("description".to_owned(), Value::String(description));
            }
            if let Some(default) = metadata.default {
                map.insert("default".to_owned(), default);
            }
        }
        if let Some(instance_type) = self.instance_type {
            map.insert("type".to_owned(), instance_type);
        }
        if let Some(format) = self.format {
            map.insert("format".to_owned(), Value::String(format));
        }
        if let Some(enum_values) = self.enum_values {
            map.insert("enum".to_owned(), Value::Array(enum_values));
        }
        if let Some(subschemas) = self.subschemas {
            if let Some(any_of) = subschemas.any_of {
                map.insert("anyOf".to_owned(), schema_list_to_value(any_of));
            }
            if let Some(one_of) = subschemas.one_of {
                map.insert("oneOf".to_owned(), schema_list_to_value(one_of));
            }
        }
        if let Some(array) = self.array {
            array.write_to(&mut map);
        }
        if let Some(object) = self.object {
            object.write_to(&mut map);
        }
        map.extend(self.extensions);
        map.extend(self.other);
        Value::Object(map)
    }
}

impl ArrayValidation {
    fn write_to(self, map: &mut Map<String, Value>) {
        match self.items {
            Some(Items::Single(schema)) => {
                map.insert("items".to_owned(), schema.into_value());
            }
            Some(Items::Vec(schemas)) => {
                map.insert("items".to_owned(), schema_list_to_value(schemas));
            }
            None => {}
        }
        if let Some(schema) = self.additional_items {
            map.insert("additionalItems".to_owned(), schema.into_value());
        }
        if let Some(max_items) = self.max_items {
            map.insert("maxItems".to_owned(), Value::from(max_items));
        }
        if let Some(min_items) = self.min_items {
            map.insert("minItems".to_owned(), Value::from(min_items));
        }
        if let Some(unique_items) = self.unique_items {
            map.insert("uniqueItems".to_owned(), Value::Bool(unique_items));
        }
        if let Some(schema) = self.contains {
            map.insert("contains".to_owned(), schema.into_value());
        }
    }
}

impl ObjectValidation {
    fn write_to(self, map: &mut Map<String, Value>) {
        if let Some(max_properties) = self.max_properties {
            map.insert("maxProperties".to_owned(), Value::from(max_properties));
        }
        if let Some(min_properties) = self.min_properties {
            map.insert("minProperties".to_owned(), Value::from(min_properties));
        }
        if !self.required.is_empty() {
            let required = self.required.into_iter().map(Value::String).collect();
            map.insert("required".to_owned(), Value::Array(required));
        }
        if !self.properties.is_empty() {
            map.insert(
                "properties".to_owned(),
                schema_map_to_value(self.properties),
            );
        }
        if !self.pattern_properties.is_empty() {
            map.insert(
                "patternProperties".to_owned(),
                schema_map_to_value(self.pattern_properties),
            );
        }
        if let Some(schema) = self.additional_properties {
            map.insert("additionalProperties".to_owned(), schema.into_value());
        }
        if let Some(schema) = self.property_names {
            map.insert("propertyNames".to_owned(), schema.into_value());
        }
    }
}

/// The keyword `StructuralSchemaRewriter` sets on objects with properties and
/// `additionalProperties: true` (a flattened map).
const PRESERVE_UNKNOWN_FIELDS: &str = "x-kubernetes-preserve-unknown-fields";

/// kube-core `StructuralSchemaRewriter`: Kubernetes structural schemas cannot declare properties,
/// types or enum values inside `oneOf`/`anyOf`, so enum variants are hoisted into their parent, a
/// map flattened next to fields becomes `x-kubernetes-preserve-unknown-fields`, and `uniqueItems`
/// (rejected by the API server) is dropped. The typed round trip also sorts `required`. A node kube
/// cannot parse is left as it is.
fn structural_schema_rewriter(schema: &mut Value, kube: KubeCore) -> Result<(), TransformError> {
    rewrite_structural(schema, &Pointer::ROOT, kube).map(|_| ())
}

/// [`structural_schema_rewriter`] on one node, after its subschemas; returns
/// whether the node, as rewritten, is a schema kube can parse.
///
/// kube rewrites a node by parsing its whole subtree into typed schemas and
/// serializing it back, and does so at every level: done literally, that
/// costs the size of the subtree times its depth, which shows on deep
/// schemas such as an inlined `PodTemplateSpec`. A rewritten subschema is
/// already in the form that round trip gives, so when no variants are to be
/// hoisted (no `oneOf`/`anyOf`) the subschemas are set aside while the node
/// itself goes through the round trip, then put back unchanged. A node with
/// a subschema kube cannot parse is left as it is, as kube leaves it.
fn rewrite_structural(
    schema: &mut Value,
    pointer: &Pointer<'_>,
    kube: KubeCore,
) -> Result<bool, TransformError> {
    let mut typed_children_parse = true;
    try_for_each_subschema(schema, |keyword, segment, child| {
        let at_keyword = pointer.key(keyword);
        let parses = match segment {
            Some(segment) => rewrite_structural(child, &at_keyword.child(segment), kube)?,
            None => rewrite_structural(child, &at_keyword, kube)?,
        };
        typed_children_parse &= parses || !is_parsed_by_kube(keyword);
        Ok(())
    })?;
    let Some(map) = schema.as_object_mut() else {
        // A boolean schema.
        return Ok(true);
    };
    if map.contains_key("oneOf") || map.contains_key("anyOf") {
        let Some(node) = parse_kube_schema_object(map) else {
            return Ok(false);
        };
        *schema = rewrite_node(node, pointer, kube)?.into_value();
        return Ok(true);
    }
    if !typed_children_parse {
        return Ok(false);
    }
    let set_aside = set_aside_subschemas(map);
    let Some(node) = parse_kube_schema_object(map) else {
        put_back(map, set_aside);
        return Ok(false);
    };
    let mut rewritten = rewrite_node(node, pointer, kube)?.into_value();
    let out = rewritten
        .as_object_mut()
        .expect("a schema object serializes to an object");
    put_back(out, set_aside);
    *schema = rewritten;
    Ok(true)
}

/// Takes the object subschemas out of a schema object, leaving `{}` (or,
/// where kube keeps the value as it is, `null`) in their place: the round
/// trip of the node treats those as it treats the real ones.
fn set_aside_subschemas(map: &mut Map<String, Value>) -> Vec<(Slot, Value)> {
    let mut out = Vec::new();
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "additionalItems" | "contains" | "additionalProperties" | "propertyNames"
                if value.is_object() =>
            {
                let taken = std::mem::replace(value, Value::Object(Map::new()));
                out.push((Slot::Keyword(key.clone()), taken));
            }
            "items" => match value {
                Value::Object(_) => {
                    let taken = std::mem::replace(value, Value::Object(Map::new()));
                    out.push((Slot::Keyword(key.clone()), taken));
                }
                Value::Array(elements) => {
                    for (index, element) in elements.iter_mut().enumerate() {
                        if element.is_object() {
                            let taken = std::mem::replace(element, Value::Object(Map::new()));
                            out.push((Slot::Element(key.clone(), index), taken));
                        }
                    }
                }
                _ => {}
            },
            "properties" | "patternProperties" => {
                if let Value::Object(entries) = value {
                    for (name, entry) in entries.iter_mut() {
                        if entry.is_object() {
                            let taken = std::mem::replace(entry, Value::Object(Map::new()));
                            out.push((Slot::Entry(key.clone(), name.clone()), taken));
                        }
                    }
                }
            }
            // Copied as they are into the node's other keywords.
            "not" | "if" | "then" | "else" | "allOf" | "prefixItems" | "$defs" | "definitions" => {
                out.push((Slot::Keyword(key.clone()), value.take()));
            }
            _ => {}
        }
    }
    out
}

fn put_back(map: &mut Map<String, Value>, set_aside: Vec<(Slot, Value)>) {
    for (slot, value) in set_aside {
        let target = match &slot {
            Slot::Keyword(keyword) => map.get_mut(keyword.as_str()),
            Slot::Element(keyword, index) => map
                .get_mut(keyword.as_str())
                .and_then(|v| v.get_mut(*index)),
            Slot::Entry(keyword, name) => map
                .get_mut(keyword.as_str())
                .and_then(|v| v.get_mut(name.as_str())),
        };
        if let Some(target) = target {
            *target = value;
        }
    }
}

/// The rewrite of one parsed node (its subschemas already rewritten).
fn rewrite_node(
    mut node: KubeSchemaObject,
    pointer: &Pointer<'_>,
    kube: KubeCore,
) -> Result<KubeSchemaObject, TransformError> {
    // Before 3.1, untagged variants' descriptions went to their property
    // too, and plain variants kept their type and metadata.
    let current = kube >= KubeCore::V3_1;
    // Before 0.76, only a `oneOf`'s object variants are hoisted, and any
    // property two of them name is a panic.
    let first = kube < KubeCore::V0_76;
    if let Some(subschemas) = node.subschemas.as_mut() {
        if let Some(one_of) = subschemas.one_of.as_mut() {
            // Externally tagged enums are a `oneOf` of one-property objects.
            hoist_subschema_properties(
                one_of,
                &mut node.object,
                &mut node.instance_type,
                Hoist {
                    push_description: true,
                    strip_plain: current,
                    unique: first,
                },
                pointer,
            )?;
            if !first {
                // Unit variants with doc comments are a `oneOf` of `enum` sets.
                hoist_subschema_enum_values(
                    one_of,
                    &mut node.enum_values,
                    &mut node.instance_type,
                    pointer,
                )?;
                if one_of.is_empty() {
                    subschemas.one_of = None;
                }
            }
        }
        if !first && let Some(any_of) = subschemas.any_of.as_mut() {
            // Untagged enums are an `anyOf`; variant docs are not the fields' docs.
            hoist_subschema_properties(
                any_of,
                &mut node.object,
                &mut node.instance_type,
                Hoist {
                    push_description: !current,
                    strip_plain: current,
                    unique: false,
                },
                pointer,
            )?;
        }
    }

    // A flattened map is left as it is by 0.70.
    if kube >= KubeCore::V0_71
        && let Some(object) = node.object.as_mut()
        && !object.properties.is_empty()
    {
        let additional = object
            .additional_properties
            .as_deref()
            .and_then(|schema| match schema {
                KubeSchema::Bool(value) => Some(*value),
                KubeSchema::Object(_) => None,
            });
        // `additionalProperties: false` stays before 3.0.1.
        if let Some(value) = additional
            && (value || kube >= KubeCore::V3_0_1)
        {
            object.additional_properties = None;
            if value {
                node.extensions
                    .insert(PRESERVE_UNKNOWN_FIELDS.to_owned(), Value::Bool(true));
                // Before 2.0, the rewriter sets the key in schemars' one
                // extensions map: `true` replaces any value it had.
                if kube.is_legacy() {
                    node.other.remove(PRESERVE_UNKNOWN_FIELDS);
                }
            }
        }
    }

    // `uniqueItems` (of sets) stays before 0.91.
    if kube >= KubeCore::V0_91
        && let Some(array) = node.array.as_mut()
    {
        array.unique_items = None;
    }

    Ok(node)
}

/// How [`hoist_subschema_properties`] treats the variants, by release.
#[derive(Debug, Clone, Copy)]
struct Hoist {
    /// A variant's description goes to its single property, else it is
    /// dropped.
    push_description: bool,
    /// Plain variants lose their type and metadata (kube-core 3.1 and
    /// later).
    strip_plain: bool,
    /// A property two variants name is refused even when they agree
    /// (kube-core before 0.76, which panics).
    unique: bool,
}

/// kube-core `hoist_subschema_properties`: moves the properties and the type of object variants into
/// the parent, as `hoist` says for the release.
fn hoist_subschema_properties(
    variants: &mut [KubeSchema],
    common_object: &mut Option<ObjectValidation>,
    instance_type: &mut Option<Value>,
    hoist: Hoist,
    pointer: &Pointer<'_>,
) -> Result<(), TransformError> {
    let Hoist {
        push_description,
        strip_plain,
        unique,
    } = hoist;
    for variant in variants {
        let KubeSchema::Object(boxed) = variant else {
            continue;
        };
        let variant: &mut KubeSchemaObject = boxed;
        if let Some(variant_object) = variant.object.as_mut() {
            let common = common_object.get_or_insert_with(ObjectValidation::default);

            // The description is taken in any case. The single property gets a metadata group
            // even when nothing is pushed, which kube then compares (see `PropertyClash`).
            if let Some(metadata) = variant.metadata.as_mut()
                && let Some(description) = metadata.description.take()
                && let Some(KubeSchema::Object(property)) =
                    only_item(variant_object.properties.values_mut())
            {
                let property_metadata = property.metadata.get_or_insert_with(Metadata::default);
                if push_description {
                    property_metadata.description = Some(description);
                }
            }

            for (name, property) in std::mem::take(&mut variant_object.properties) {
                match common.properties.entry(name) {
                    Entry::Vacant(entry) => {
                        entry.insert(property);
                    }
                    Entry::Occupied(entry) if unique => {
                        return Err(TransformError::RepeatedProperty {
                            pointer: pointer.render(),
                            property: entry.key().clone(),
                        });
                    }
                    Entry::Occupied(entry) => {
                        if property != *entry.get() {
                            return Err(property_clash(
                                pointer,
                                entry.key(),
                                &property,
                                entry.get(),
                            ));
                        }
                    }
                }
            }

            variant_object.additional_properties = None;
            merge_metadata(instance_type, variant.instance_type.take(), pointer)?;
        } else if strip_plain
            && variant.enum_values.is_none()
            && variant.subschemas.is_none()
            && variant.array.is_none()
        {
            variant.instance_type = None;
            variant.metadata = None;
        }
    }
    Ok(())
}

/// kube-core `only_item`: the only item of an iterator, if it has exactly one.
fn only_item<I: Iterator>(mut items: I) -> Option<I::Item> {
    let item = items.next()?;
    if items.next().is_some() {
        return None;
    }
    Some(item)
}

/// kube-core `merge_metadata`: adopts a variant's type, which must agree with the parent's.
fn merge_metadata(
    instance_type: &mut Option<Value>,
    variant_type: Option<Value>,
    pointer: &Pointer<'_>,
) -> Result<(), TransformError> {
    let Some(variant_type) = variant_type else {
        return Ok(());
    };
    if let Some(common_type) = instance_type.as_ref() {
        if *common_type != variant_type {
            return Err(TransformError::ConflictingVariantTypes {
                pointer: pointer.render(),
                variant_type: render_type(&variant_type),
                common_type: render_type(common_type),
            });
        }
    } else {
        *instance_type = Some(variant_type);
    }
    Ok(())
}

/// kube-core `hoist_subschema_enum_values`: removes the `enum` variants of a `oneOf` and appends
/// their values to the parent's `enum`; their type must agree with the parent's.
fn hoist_subschema_enum_values(
    variants: &mut Vec<KubeSchema>,
    common_enum_values: &mut Option<Vec<Value>>,
    instance_type: &mut Option<Value>,
    pointer: &Pointer<'_>,
) -> Result<(), TransformError> {
    let mut kept = Vec::with_capacity(variants.len());
    for variant in std::mem::take(variants) {
        match variant {
            KubeSchema::Object(object) if object.enum_values.is_some() => {
                let KubeSchemaObject {
                    instance_type: variant_type,
                    enum_values,
                    ..
                } = *object;
                let values = enum_values.unwrap_or_default();
                if let Some(variant_type) = variant_type {
                    if let Some(common_type) = instance_type.as_ref() {
                        if *common_type != variant_type {
                            return Err(TransformError::MixedEnum {
                                pointer: pointer.render(),
                                unit_variants: render_values(&values),
                                unit_type: render_type(&variant_type),
                                data_type: render_type(common_type),
                            });
                        }
                    } else {
                        *instance_type = Some(variant_type);
                    }
                }
                common_enum_values
                    .get_or_insert_with(Vec::new)
                    .extend(values);
            }
            other => kept.push(other),
        }
    }
    *variants = kept;
    Ok(())
}

/// The error for a property defined differently by two variants.
fn property_clash(
    pointer: &Pointer<'_>,
    property: &str,
    new: &KubeSchema,
    existing: &KubeSchema,
) -> TransformError {
    // Copies: this is the error path, and the variants stay in place.
    let (new, existing) = (new.clone().into_value(), existing.clone().into_value());
    let (Value::Object(new), Value::Object(existing)) = (&new, &existing) else {
        return TransformError::PropertyClash {
            pointer: pointer.render(),
            property: property.to_owned(),
            detail: "one of them accepts anything or nothing".to_owned(),
        };
    };
    let differing: BTreeSet<&String> = new
        .keys()
        .chain(existing.keys())
        .filter(|key| new.get(key.as_str()) != existing.get(key.as_str()))
        .collect();
    let single_value = |schema: &Map<String, Value>| matches!(schema.get("enum"), Some(Value::Array(values)) if values.len() == 1);
    if differing.len() == 1
        && differing.iter().all(|key| key.as_str() == "enum")
        && single_value(new)
        && single_value(existing)
    {
        return TransformError::TaggedEnum {
            pointer: pointer.render(),
            tag: property.to_owned(),
        };
    }
    let detail = if differing.is_empty() {
        // Equal JSON, unequal for kube: one copy got an empty metadata group because it is
        // the only field of a documented variant.
        "one of them is the only field of a variant with a doc comment, which makes kube-derive \
         attach an empty description to it; give the field the same doc comment in every variant, \
         or remove the variant's doc comment"
            .to_owned()
    } else {
        let keys: Vec<String> = differing.iter().map(|key| format!("`{key}`")).collect();
        format!("they differ in {}", keys.join(", "))
    };
    TransformError::PropertyClash {
        pointer: pointer.render(),
        property: property.to_owned(),
        detail,
    }
}

/// A `type` value for a message: `string`, or `["string","null"]`.
fn render_type(ty: &Value) -> String {
    match ty {
        Value::String(name) => name.clone(),
        other => other.to_string(),
    }
}

/// Enum values for a message: `` `A`, `B` ``.
fn render_values(values: &[Value]) -> String {
    let rendered: Vec<String> = values
        .iter()
        .map(|value| match value {
            Value::String(name) => format!("`{name}`"),
            other => format!("`{other}`"),
        })
        .collect();
    rendered.join(", ")
}

/// kube-core `OptionalEnum`: schemars makes `Option<E>` of an enum with a `oneOf` schema an
/// `anyOf: [E, {"enum": [null], "nullable": true}]`; this flattens it back into `E` plus
/// `nullable: true` (E's keys win over the field's, e.g. E's description over the field doc).
///
/// Before 3.1 the first variant had to be an `enum`, and in 3.0.0 the `anyOf` had to be the
/// schema's only keyword.
fn optional_enum(schema: &mut Value, kube: KubeCore) {
    let Ok(()) = try_for_each_subschema(schema, |_, _, child| {
        optional_enum(child, kube);
        Ok::<(), std::convert::Infallible>(())
    });
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if kube == KubeCore::V3_0_0 && map.len() != 1 {
        return;
    }
    let Some(Value::Array(any_of)) = map.get("anyOf") else {
        return;
    };
    let [Value::Object(first), Value::Object(second)] = any_of.as_slice() else {
        return;
    };
    let second_is_null = matches!(second.get("enum"), Some(Value::Array(values)) if matches!(values.as_slice(), [Value::Null]))
        && second.get("nullable") == Some(&Value::Bool(true));
    if first.contains_key("nullable")
        || !second_is_null
        || (kube < KubeCore::V3_1 && !first.contains_key("enum"))
    {
        return;
    }
    let mut first = first.clone();
    map.remove("anyOf");
    map.append(&mut first);
    map.insert("nullable".to_owned(), Value::Bool(true));
}

/// kube-core `OptionalIntOrString`: `Option<IntOrString>` (or `Quantity`) has no `type` for
/// schemars to make nullable, so every non-required `x-kubernetes-int-or-string` property gets
/// `nullable: true`.
fn optional_int_or_string(schema: &mut Value) {
    for_each_subschema(schema, optional_int_or_string);
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    let required: BTreeSet<String> = match map.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(parse_string).collect(),
        _ => BTreeSet::new(),
    };
    let Some(Value::Object(properties)) = map.get_mut("properties") else {
        return;
    };
    for (name, property) in properties {
        if required.contains(name) {
            continue;
        }
        let Some(property) = property.as_object_mut() else {
            continue;
        };
        if property.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true))
            && !property.contains_key("nullable")
        {
            property.insert("nullable".to_owned(), Value::Bool(true));
        }
    }
}

// ---------------------------------------------------------------------------
// k8s-openapi 0.29 JSONSchemaProps round trip
// ---------------------------------------------------------------------------

/// `serde_json::from_value::<JSONSchemaProps>` then `serde_json::to_value`: keeps the keywords
/// `JSONSchemaProps` knows (checking their types), drops every other one and every `null` (all its
/// fields are options), and writes `minimum`/`maximum`/`multipleOf` as floats. The schema is
/// converted in place, node by node, rather than copied.
fn json_schema_props(schema: Value, pointer: &Pointer<'_>) -> Result<Value, TransformError> {
    let mut map = match schema {
        Value::Object(map) => map,
        Value::Bool(value) => {
            return Err(TransformError::BoolSchema {
                pointer: pointer.render(),
                value,
            });
        }
        _ => {
            return Err(TransformError::NotAnObject {
                pointer: pointer.render(),
            });
        }
    };
    let mut failure = None;
    map.retain(|keyword, value| {
        if failure.is_some() || value.is_null() {
            return false;
        }
        match json_schema_prop(keyword, value.take(), pointer) {
            Ok(Some(converted)) => {
                *value = converted;
                true
            }
            Ok(None) => false,
            Err(error) => {
                failure = Some(error);
                false
            }
        }
    });
    match failure {
        Some(error) => Err(error),
        None => Ok(Value::Object(map)),
    }
}

/// One keyword of [`json_schema_props`]: its converted value, or `None` for
/// a keyword `JSONSchemaProps` does not have.
fn json_schema_prop(
    keyword: &str,
    value: Value,
    pointer: &Pointer<'_>,
) -> Result<Option<Value>, TransformError> {
    let here = pointer.key(keyword);
    let invalid = |expected: &'static str| TransformError::InvalidKeyword {
        pointer: pointer.render(),
        keyword: keyword.to_owned(),
        expected,
    };
    let converted = match keyword {
        "$ref" | "$schema" | "description" | "format" | "id" | "pattern" | "title"
        | "x-kubernetes-list-type" | "x-kubernetes-map-type" => {
            expect(value, Value::is_string, || invalid("a string"))?
        }
        "type" => match value {
            Value::String(_) => value,
            Value::Array(types) => {
                let types: Vec<String> = types.iter().map(|t| format!("`{}`", render_type(t))).collect();
                return Err(TransformError::TypeArray {
                    pointer: pointer.render(),
                    types: types.join(", "),
                });
            }
            _ => return Err(invalid("a string")),
        },
        "exclusiveMaximum" | "exclusiveMinimum" | "nullable" | "uniqueItems"
        | "x-kubernetes-embedded-resource" | "x-kubernetes-int-or-string"
        | "x-kubernetes-preserve-unknown-fields" => {
            expect(value, Value::is_boolean, || invalid("a boolean"))?
        }
        "maxItems" | "maxLength" | "maxProperties" | "minItems" | "minLength"
        | "minProperties" => expect(value, Value::is_i64, || invalid("an integer"))?,
        "maximum" | "minimum" | "multipleOf" => match value.as_f64() {
            Some(number) => Value::from(number),
            None => return Err(invalid("a number")),
        },
        "default" | "example" => value,
        "enum" => expect(value, Value::is_array, || invalid("an array"))?,
        "required" | "x-kubernetes-list-map-keys" => {
            expect(value, is_string_array, || invalid("an array of strings"))?
        }
        "additionalItems" | "additionalProperties" => match value {
            Value::Bool(_) => value,
            Value::Object(_) => json_schema_props(value, &here)?,
            _ => return Err(invalid("a schema or a boolean")),
        },
        "items" => match value {
            Value::Array(schemas) => schema_props_list(schemas, &here)?,
            _ => json_schema_props(value, &here)?,
        },
        "not" => json_schema_props(value, &here)?,
        "allOf" | "anyOf" | "oneOf" => match value {
            Value::Array(schemas) => schema_props_list(schemas, &here)?,
            _ => return Err(invalid("an array of schemas")),
        },
        "definitions" | "patternProperties" | "properties" => match value {
            Value::Object(schemas) => schema_props_map(schemas, &here, json_schema_props)?,
            _ => return Err(invalid("a map of schemas")),
        },
        "dependencies" => match value {
            Value::Object(dependencies) => schema_props_map(dependencies, &here, |dependency, at| {
                if is_string_array(&dependency) {
                    Ok(dependency)
                } else {
                    json_schema_props(dependency, at)
                }
            })?,
            _ => return Err(invalid("a map of schemas or string arrays")),
        },
        "externalDocs" => external_documentation(&value).ok_or_else(|| {
            invalid("an object with string `description` and `url`")
        })?,
        "x-kubernetes-validations" => validation_rules(&value).ok_or_else(|| {
            invalid("an array of objects with string `rule`, `message`, `messageExpression`, `fieldPath`, `reason` and boolean `optionalOldSelf`")
        })?,
        _ => return Ok(None),
    };
    Ok(Some(converted))
}

/// `value` if `check` accepts it, else the error `invalid` makes.
fn expect(
    value: Value,
    check: fn(&Value) -> bool,
    invalid: impl FnOnce() -> TransformError,
) -> Result<Value, TransformError> {
    if check(&value) {
        Ok(value)
    } else {
        Err(invalid())
    }
}

/// A `Vec<String>`.
fn is_string_array(value: &Value) -> bool {
    value
        .as_array()
        .is_some_and(|elements| elements.iter().all(Value::is_string))
}

/// `Vec<JSONSchemaProps>`.
fn schema_props_list(schemas: Vec<Value>, pointer: &Pointer<'_>) -> Result<Value, TransformError> {
    schemas
        .into_iter()
        .enumerate()
        .map(|(index, schema)| json_schema_props(schema, &pointer.child(Segment::Index(index))))
        .collect::<Result<Vec<Value>, TransformError>>()
        .map(Value::Array)
}

/// `BTreeMap<String, _>` whose values `convert` handles.
fn schema_props_map(
    mut entries: Map<String, Value>,
    pointer: &Pointer<'_>,
    convert: impl Fn(Value, &Pointer<'_>) -> Result<Value, TransformError>,
) -> Result<Value, TransformError> {
    for (name, entry) in &mut entries {
        *entry = convert(entry.take(), &pointer.key(name))?;
    }
    Ok(Value::Object(entries))
}

/// Copies the optional string fields `names` of `source` into `target`: `None` if one is neither
/// a string nor `null`.
fn copy_optional(
    source: &Map<String, Value>,
    target: &mut Map<String, Value>,
    names: &[&str],
    check: fn(&Value) -> bool,
) -> Option<()> {
    for name in names {
        match source.get(*name) {
            None | Some(Value::Null) => {}
            Some(value) if check(value) => {
                target.insert((*name).to_owned(), value.clone());
            }
            Some(_) => return None,
        }
    }
    Some(())
}

/// k8s-openapi `ExternalDocumentation`: optional string `description` and `url`, other keys dropped.
fn external_documentation(value: &Value) -> Option<Value> {
    let source = value.as_object()?;
    let mut docs = Map::new();
    copy_optional(source, &mut docs, &["description", "url"], Value::is_string)?;
    Some(Value::Object(docs))
}

/// k8s-openapi `Vec<ValidationRule>`: `rule` always written (empty when missing), the optional
/// fields when present, other keys dropped.
fn validation_rules(value: &Value) -> Option<Value> {
    let mut rules = Vec::new();
    for element in value.as_array()? {
        let source = element.as_object()?;
        let mut rule = Map::new();
        copy_optional(
            source,
            &mut rule,
            &["fieldPath", "message", "messageExpression", "reason"],
            Value::is_string,
        )?;
        copy_optional(source, &mut rule, &["optionalOldSelf"], Value::is_boolean)?;
        let text = match source.get("rule") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(_) => return None,
        };
        rule.insert("rule".to_owned(), Value::String(text));
        rules.push(Value::Object(rule));
    }
    Some(Value::Array(rules))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{KubeCore, Model, TransformError, finalize};
    use crate::manifests::derive::schema::model::Schemars;

    fn on(kube_core: KubeCore) -> Model {
        Model {
            kube_core,
            schemars: Schemars::V1_2,
            empty_lists: false,
        }
    }

    /// What kube-derive 2.0, 3.0.0, 3.0.1 and 3.1+ make of an optional
    /// enum (with and without a doc), an optional int-or-string, a closed
    /// object and an untagged enum of plain types: each line's output as
    /// its `crd()` gives it.
    #[test]
    fn each_kube_core_line_has_its_own_transforms() {
        let raw = json!({
            "type": "object",
            "properties": {
                "level": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]},
                "documented": {"description": "Doc.", "anyOf": [{"type": "string", "enum": ["a"]}, {"type": "null"}]},
                "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "closed": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": false},
            },
        });
        let level = json!({"type": "string", "enum": ["a", "b"], "nullable": true});
        let any_of_null = |first: Value, doc: bool| {
            let mut v = json!({"anyOf": [first, {"enum": [null], "nullable": true}]});
            if doc {
                v["description"] = json!("Doc.");
            }
            v
        };
        let closed_kept = json!({"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": false});
        let closed_open = json!({"type": "object", "properties": {"x": {"type": "string"}}});
        let port = |nullable: bool, typed: bool| {
            let variants = if typed {
                json!([{"type": "integer"}, {"type": "string"}])
            } else {
                json!([{}, {}])
            };
            let mut v = json!({"x-kubernetes-int-or-string": true, "anyOf": variants});
            if nullable {
                v["nullable"] = json!(true);
            }
            v
        };
        let expect = |level: Value, documented: Value, port: Value, closed: Value| json!({"type": "object", "properties": {"level": level, "documented": documented, "port": port, "closed": closed}});
        let doc_level =
            json!({"type": "string", "enum": ["a"], "nullable": true, "description": "Doc."});
        let cases = [
            (
                KubeCore::V2_0,
                expect(
                    any_of_null(json!({"type": "string", "enum": ["a", "b"]}), false),
                    any_of_null(json!({"type": "string", "enum": ["a"]}), true),
                    port(false, true),
                    closed_kept.clone(),
                ),
            ),
            (
                KubeCore::V3_0_0,
                expect(
                    level.clone(),
                    any_of_null(json!({"type": "string", "enum": ["a"]}), true),
                    port(true, true),
                    closed_kept,
                ),
            ),
            (
                KubeCore::V3_0_1,
                expect(
                    level.clone(),
                    doc_level.clone(),
                    port(true, true),
                    closed_open.clone(),
                ),
            ),
            (
                KubeCore::V3_1,
                expect(level, doc_level, port(true, false), closed_open),
            ),
        ];
        for (line, expected) in cases {
            assert_eq!(finalize(raw.clone(), on(line)), Ok(expected), "{line:?}");
        }
    }

    /// The rewriters of kube 0.70, 0.71 to 0.75 and 0.76 to 0.90 on a
    /// tagged enum, a documented unit enum, an untagged enum and a
    /// flattened map, as schemars 0.8 writes them.
    #[test]
    fn each_kube_line_of_the_schemars_0_8_era_rewrites_its_own_way() {
        let tagged = json!({"oneOf": [
            {"type": "object", "required": ["scale"], "properties": {"scale": {"type": "integer"}}, "additionalProperties": false},
            {"type": "object", "required": ["stop"], "properties": {"stop": {"type": "string"}}, "additionalProperties": false},
        ]});
        let documented = json!({"oneOf": [
            {"description": "A.", "type": "string", "enum": ["A"]},
            {"description": "B.", "type": "string", "enum": ["B"]},
        ]});
        let untagged = json!({"anyOf": [
            {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
            {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}},
        ]});
        let flat = json!({"type": "object", "properties": {"known": {"type": "string"}}, "additionalProperties": true});
        let raw = json!({"type": "object", "properties": {
            "tagged": tagged, "documented": documented, "untagged": untagged, "flat": flat,
        }});
        let hoisted_tagged = json!({
            "type": "object",
            "properties": {"scale": {"type": "integer"}, "stop": {"type": "string"}},
            "oneOf": [{"required": ["scale"]}, {"required": ["stop"]}],
        });
        let legacy = |kube_core| Model {
            kube_core,
            schemars: Schemars::V0_8,
            empty_lists: true,
        };
        let run = |line| finalize(raw.clone(), legacy(line)).unwrap()["properties"].clone();

        let first = run(KubeCore::V0_70);
        assert_eq!(first["tagged"], hoisted_tagged);
        assert_eq!(first["documented"], documented);
        assert_eq!(first["untagged"], untagged);
        assert_eq!(first["flat"], flat);

        let second = run(KubeCore::V0_71);
        assert_eq!(second["tagged"], hoisted_tagged);
        assert_eq!(second["documented"], documented);
        assert_eq!(second["untagged"], untagged);
        let preserved = json!({"type": "object", "properties": {"known": {"type": "string"}}, "x-kubernetes-preserve-unknown-fields": true});
        assert_eq!(second["flat"], preserved);

        let third = run(KubeCore::V0_76);
        assert_eq!(third["tagged"], hoisted_tagged);
        assert_eq!(
            third["documented"],
            json!({"type": "string", "enum": ["A", "B"]})
        );
        assert_eq!(
            third["untagged"],
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}, "id": {"type": "integer"}},
                "anyOf": [{"required": ["name"]}, {"required": ["id"]}],
            })
        );
        assert_eq!(third["flat"], preserved);

        // A field two tagged variants share: a panic of kube-derive before
        // 0.76, even when the schemas agree; fine from 0.76.
        let shared = json!({"type": "object", "properties": {"e": {"oneOf": [
            {"type": "object", "properties": {"a": {"type": "object", "properties": {"x": {"type": "string"}}}}},
            {"type": "object", "properties": {"a": {"type": "object", "properties": {"x": {"type": "string"}}}}},
        ]}}});
        for line in [KubeCore::V0_70, KubeCore::V0_71] {
            assert_eq!(
                finalize(shared.clone(), legacy(line)),
                Err(TransformError::RepeatedProperty {
                    pointer: "#/properties/e".into(),
                    property: "a".into(),
                }),
                "{line:?}"
            );
        }
        assert!(finalize(shared, legacy(KubeCore::V0_76)).is_ok());
    }

    /// The root kube-derive generates for `FooSpec` (`kind = "Foo"`, no `doc`, no `status`).
    fn root(spec: Value) -> Value {
        kube_root("Foo", spec)
    }

    /// The root kube-derive generates for `<kind>Spec`: a `title`, the default description and the
    /// required `spec` property. The transforms leave this wrapper as it is.
    #[allow(clippy::needless_pass_by_value)]
    fn kube_root(kind: &str, spec: Value) -> Value {
        json!({
            "description": format!("Auto-generated derived type for {kind}Spec via `CustomResource`"),
            "properties": {"spec": spec},
            "required": ["spec"],
            "title": kind,
            "type": "object"
        })
    }

    /// `name: Option<String>`, `with_default: Option<String>` with `#[serde(default = "x")]` where
    /// `x()` is `Some("x")`, and `none_default: Option<String>` with `#[serde(default)]` (`None`
    /// serializes to `null`), in a `camelCase` spec.
    #[test]
    fn option_string_becomes_nullable_and_null_default_is_dropped() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "name": {"type": ["string", "null"]},
                "withDefault": {"type": ["string", "null"], "default": "x"},
                "noneDefault": {"type": ["string", "null"], "default": null}
            }
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "nullable": true},
                "withDefault": {"type": "string", "nullable": true, "default": "x"},
                "noneDefault": {"type": "string", "nullable": true}
            }
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// `set: HashSet<String>` and `opt_set: Option<BTreeSet<String>>`: kube drops `uniqueItems`.
    #[test]
    fn hash_set_loses_unique_items() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "set": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
                "optSet": {
                    "type": ["array", "null"],
                    "uniqueItems": true,
                    "items": {"type": "string"}
                }
            },
            "required": ["set"]
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {
                "set": {"type": "array", "items": {"type": "string"}},
                "optSet": {"type": "array", "items": {"type": "string"}, "nullable": true}
            },
            "required": ["set"]
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// `level: Option<Level>` with `enum Level { Debug, Info }` and no doc comments anywhere:
    /// schemars appends `null` to the `enum`, and nothing removes it.
    #[test]
    fn optional_unit_enum_keeps_null_in_enum() {
        let raw = root(json!({
            "type": "object",
            "properties": {"level": {"type": ["string", "null"], "enum": ["Debug", "Info", null]}}
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {
                "level": {"type": "string", "enum": ["Debug", "Info", null], "nullable": true}
            }
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// `foo: NormalEnum` (variants `A` and `B` documented, `C` and `D` not, enum documented) and
    /// `bar: NormalEnumWithoutDescriptions`, as in kube-derive's `crd_complex_enum_test.rs`.
    #[test]
    fn documented_unit_variants_come_after_undocumented_ones() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "foo": {
                    "oneOf": [
                        {"type": "string", "enum": ["C", "D"]},
                        {"description": "First variant", "type": "string", "const": "A"},
                        {"description": "Second variant", "type": "string", "const": "B"}
                    ],
                    "description": "A very simple enum with unit variants"
                },
                "bar": {"type": "string", "enum": ["A", "B", "C", "D"]}
            },
            "required": ["foo", "bar"]
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {
                "foo": {
                    "description": "A very simple enum with unit variants",
                    "type": "string",
                    "enum": ["C", "D", "A", "B"]
                },
                "bar": {"type": "string", "enum": ["A", "B", "C", "D"]}
            },
            "required": ["bar", "foo"]
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// `Option<NormalEnum>` without and with a field doc (the enum's own doc wins), and
    /// `/// Preferred gender` on an `Option<Gender>` whose enum has no doc (the field doc stays),
    /// as in kube-derive's `optional_enum` and `crd_schema_test.rs`.
    #[test]
    fn optional_enum_with_documented_variants_is_flattened() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "plain": {
                    "anyOf": [
                        {
                            "oneOf": [
                                {"type": "string", "enum": ["C", "D"]},
                                {"description": "First variant", "type": "string", "const": "A"},
                                {"description": "Second variant", "type": "string", "const": "B"}
                            ],
                            "description": "A very simple enum with unit variants"
                        },
                        {"type": "null"}
                    ]
                },
                "withFieldDoc": {
                    "anyOf": [
                        {
                            "oneOf": [
                                {"type": "string", "enum": ["C", "D"]},
                                {"description": "First variant", "type": "string", "const": "A"},
                                {"description": "Second variant", "type": "string", "const": "B"}
                            ],
                            "description": "A very simple enum with unit variants"
                        },
                        {"type": "null"}
                    ],
                    "description": "Field doc"
                },
                "gender": {
                    "anyOf": [
                        {
                            "oneOf": [
                                {"type": "string", "enum": ["Female", "Male"]},
                                {
                                    "type": "string",
                                    "const": "Other",
                                    "description": "This variant has a comment!"
                                }
                            ]
                        },
                        {"type": "null"}
                    ],
                    "description": "Preferred gender"
                }
            }
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {
                "plain": {
                    "description": "A very simple enum with unit variants",
                    "type": "string",
                    "enum": ["C", "D", "A", "B"],
                    "nullable": true
                },
                "withFieldDoc": {
                    "description": "A very simple enum with unit variants",
                    "type": "string",
                    "enum": ["C", "D", "A", "B"],
                    "nullable": true
                },
                "gender": {
                    "description": "Preferred gender",
                    "type": "string",
                    "enum": ["Female", "Male", "Other"],
                    "nullable": true
                }
            }
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// kube-derive `crd_schema_test.rs` `test_crd_schema_matches_expected`: the `Foo` root
    /// with `doc`, `status`, a root CEL rule, and a spec covering defaults, nullables, a
    /// complex enum with a field rule, an untagged enum, `HashSet`, `ListMerge::Set` and
    /// optional enums.
    #[test]
    #[allow(clippy::too_many_lines)]
    fn kube_crd_schema_test_foo() {
        // Raw schemars output.
        let gender = json!({
            "oneOf": [
                {"type": "string", "enum": ["Female", "Male"]},
                {"description": "This variant has a comment!", "type": "string", "const": "Other"}
            ]
        });
        let gender_of_person = json!({
            "oneOf": [
                {"type": "string", "enum": ["Female", "Male"]},
                {"description": "This variant has a comment!", "type": "string", "const": "Other"}
            ],
            "description": "Gender of the person"
        });
        let complex_enum = json!({
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "variantOne": {
                            "type": "object",
                            "properties": {"int": {"type": "integer", "format": "int32"}},
                            "required": ["int"]
                        }
                    },
                    "required": ["variantOne"],
                    "additionalProperties": false,
                    "description": "First variant with an int"
                },
                {
                    "type": "object",
                    "properties": {
                        "variantTwo": {
                            "type": "object",
                            "properties": {"str": {"type": "string"}},
                            "required": ["str"]
                        }
                    },
                    "required": ["variantTwo"],
                    "additionalProperties": false,
                    "description": "Second variant with an String"
                },
                {
                    "type": "object",
                    "properties": {"variantThree": {"type": "object"}},
                    "required": ["variantThree"],
                    "additionalProperties": false,
                    "description": "Third variant which doesn't has an attribute"
                }
            ],
            "description": "This is a complex enum with a description",
            "x-kubernetes-validations": [
                {"rule": "!has(self.variantOne) || self.variantOne.int > 22"}
            ]
        });
        let untagged_enum_person = json!({
            "anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "gender": gender_of_person,
                        "age": {
                            "type": "integer",
                            "format": "int32",
                            "description": "Age of the person in years"
                        }
                    },
                    "required": ["gender", "age"]
                },
                {
                    "type": "object",
                    "properties": {
                        "gender": gender_of_person,
                        "dateOfBirth": {
                            "type": "string",
                            "description": "Date of birth of the person as ISO 8601 date"
                        }
                    },
                    "required": ["gender", "dateOfBirth"]
                }
            ],
            "description": "This is a untagged enum with a description"
        });
        let optional_enum = json!({"anyOf": [gender, {"type": "null"}]});
        let optional_enum_with_doc = json!({
            "anyOf": [gender, {"type": "null"}],
            "description": "Preferred gender"
        });
        let spec = json!({
            "type": "object",
            "properties": {
                "nonNullable": {"type": "string"},
                "nonNullableWithDefault": {"type": "string", "default": "default_value"},
                "nullableSkipped": {"type": ["string", "null"]},
                "nullable": {"type": ["string", "null"]},
                "nullableSkippedWithDefault": {
                    "type": ["string", "null"],
                    "default": "default_nullable"
                },
                "nullableWithDefault": {"type": ["string", "null"], "default": "default_nullable"},
                "timestamp": {"type": "string", "format": "date-time"},
                "complexEnum": complex_enum,
                "untaggedEnumPerson": untagged_enum_person,
                "myList": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "set": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
                "associatedDefault": {"type": "boolean", "default": true},
                "xKubernetesSet": {
                    "type": "array",
                    "items": {"type": "string"},
                    "x-kubernetes-list-type": "set"
                },
                "optionalEnum": optional_enum,
                "optionalEnumWithDoc": optional_enum_with_doc
            },
            "required": [
                "nonNullable",
                "timestamp",
                "complexEnum",
                "untaggedEnumPerson",
                "myList",
                "set",
                "xKubernetesSet"
            ],
            "x-kubernetes-validations": [{"rule": "has(self.nonNullable)"}]
        });
        let raw = json!({
            "type": "object",
            "properties": {
                "spec": spec,
                "status": {
                    "type": ["object", "null"],
                    "properties": {
                        "replicas": {"type": "integer", "format": "uint", "minimum": 0},
                        "labelSelector": {"type": "string"}
                    },
                    "required": ["replicas", "labelSelector"]
                }
            },
            "required": ["spec"],
            "description": "Custom resource representing a Foo",
            "title": "Foo",
            "x-kubernetes-validations": [{"rule": "self.metadata.name == 'singleton'"}]
        });

        // kube-derive's expected `openAPIV3Schema`.
        let complex_enum = json!({
            "type": "object",
            "properties": {
                "variantOne": {
                    "type": "object",
                    "properties": {"int": {"type": "integer", "format": "int32"}},
                    "required": ["int"],
                    "description": "First variant with an int"
                },
                "variantTwo": {
                    "type": "object",
                    "properties": {"str": {"type": "string"}},
                    "required": ["str"],
                    "description": "Second variant with an String"
                },
                "variantThree": {
                    "type": "object",
                    "description": "Third variant which doesn't has an attribute"
                }
            },
            "oneOf": [
                {"required": ["variantOne"]},
                {"required": ["variantTwo"]},
                {"required": ["variantThree"]}
            ],
            "x-kubernetes-validations": [
                {"rule": "!has(self.variantOne) || self.variantOne.int > 22"}
            ],
            "description": "This is a complex enum with a description"
        });
        let untagged_enum_person = json!({
            "type": "object",
            "properties": {
                "age": {
                    "type": "integer",
                    "format": "int32",
                    "description": "Age of the person in years"
                },
                "dateOfBirth": {
                    "type": "string",
                    "description": "Date of birth of the person as ISO 8601 date"
                },
                "gender": {
                    "type": "string",
                    "enum": ["Female", "Male", "Other"],
                    "description": "Gender of the person"
                }
            },
            "anyOf": [{"required": ["age", "gender"]}, {"required": ["dateOfBirth", "gender"]}],
            "description": "This is a untagged enum with a description"
        });
        let spec = json!({
            "properties": {
                "nonNullable": {"type": "string"},
                "nonNullableWithDefault": {"default": "default_value", "type": "string"},
                "nullableSkipped": {"nullable": true, "type": "string"},
                "nullable": {"nullable": true, "type": "string"},
                "nullableSkippedWithDefault": {
                    "default": "default_nullable",
                    "nullable": true,
                    "type": "string"
                },
                "nullableWithDefault": {
                    "default": "default_nullable",
                    "nullable": true,
                    "type": "string"
                },
                "timestamp": {"type": "string", "format": "date-time"},
                "complexEnum": complex_enum,
                "untaggedEnumPerson": untagged_enum_person,
                "myList": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "set": {"type": "array", "items": {"type": "string"}},
                "associatedDefault": {"type": "boolean", "default": true},
                "xKubernetesSet": {
                    "type": "array",
                    "items": {"type": "string"},
                    "x-kubernetes-list-type": "set"
                },
                "optionalEnum": {
                    "nullable": true,
                    "type": "string",
                    "enum": ["Female", "Male", "Other"]
                },
                "optionalEnumWithDoc": {
                    "description": "Preferred gender",
                    "nullable": true,
                    "type": "string",
                    "enum": ["Female", "Male", "Other"]
                }
            },
            "required": [
                "complexEnum",
                "myList",
                "nonNullable",
                "set",
                "timestamp",
                "untaggedEnumPerson",
                "xKubernetesSet"
            ],
            "x-kubernetes-validations": [{"rule": "has(self.nonNullable)"}],
            "type": "object"
        });
        let expected = json!({
            "description": "Custom resource representing a Foo",
            "properties": {
                "spec": spec,
                "status": {
                    "properties": {
                        "replicas": {"type": "integer", "format": "uint", "minimum": 0.0},
                        "labelSelector": {"type": "string"}
                    },
                    "required": ["labelSelector", "replicas"],
                    "nullable": true,
                    "type": "object"
                }
            },
            "required": ["spec"],
            "x-kubernetes-validations": [{"rule": "self.metadata.name == 'singleton'"}],
            "title": "Foo",
            "type": "object"
        });
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// kube-derive `crd_complex_enum_test.rs` `complex_enum`: `foo: ComplexEnum` with a documented
    /// newtype variant `Normal(NormalEnum)` and a documented struct variant `Hardcore { .. }`.
    #[test]
    fn kube_complex_enum() {
        let normal_enum = json!({
            "oneOf": [
                {"type": "string", "enum": ["C", "D"]},
                {"description": "First variant", "type": "string", "const": "A"},
                {"description": "Second variant", "type": "string", "const": "B"}
            ],
            "description": "A very simple enum with unit variants"
        });
        let raw = kube_root(
            "ComplexEnumTest",
            json!({
                "type": "object",
                "properties": {
                    "foo": {
                        "oneOf": [
                            {
                                "type": "object",
                                "properties": {"Normal": normal_enum},
                                "required": ["Normal"],
                                "additionalProperties": false,
                                "description": "Override documentation on the Normal variant"
                            },
                            {
                                "type": "object",
                                "properties": {
                                    "Hardcore": {
                                        "type": "object",
                                        "properties": {
                                            "hard": {"type": "string"},
                                            "core": normal_enum,
                                            "without_description": {
                                                "type": "string",
                                                "enum": ["A", "B", "C", "D"]
                                            }
                                        },
                                        "required": ["hard", "core", "without_description"]
                                    }
                                },
                                "required": ["Hardcore"],
                                "additionalProperties": false,
                                "description": "Documentation on the Hardcore variant"
                            }
                        ],
                        "description": "A complex enum with tuple and struct variants"
                    }
                },
                "required": ["foo"]
            }),
        );
        let expected = kube_root(
            "ComplexEnumTest",
            json!({
                "properties": {
                    "foo": {
                        "description": "A complex enum with tuple and struct variants",
                        "oneOf": [{"required": ["Normal"]}, {"required": ["Hardcore"]}],
                        "properties": {
                            "Hardcore": {
                                "description": "Documentation on the Hardcore variant",
                                "properties": {
                                    "core": {
                                        "description": "A very simple enum with unit variants",
                                        "enum": ["C", "D", "A", "B"],
                                        "type": "string"
                                    },
                                    "hard": {"type": "string"},
                                    "without_description": {
                                        "enum": ["A", "B", "C", "D"],
                                        "type": "string"
                                    }
                                },
                                "required": ["core", "hard", "without_description"],
                                "type": "object"
                            },
                            "Normal": {
                                "description": "Override documentation on the Normal variant",
                                "enum": ["C", "D", "A", "B"],
                                "type": "string"
                            }
                        },
                        "type": "object"
                    }
                },
                "required": ["foo"],
                "type": "object"
            }),
        );
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// kube-derive `optional_complex_enum`: `/// Optional complex enum field` on
    /// `foo: Option<ComplexEnum>`; the hoisting already removed the enum's description, so the
    /// field doc survives `OptionalEnum`.
    #[test]
    fn kube_optional_complex_enum() {
        let normal_enum = json!({
            "oneOf": [
                {"type": "string", "enum": ["C", "D"]},
                {"description": "First variant", "type": "string", "const": "A"},
                {"description": "Second variant", "type": "string", "const": "B"}
            ],
            "description": "A very simple enum with unit variants"
        });
        let complex_enum = json!({
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"Normal": normal_enum},
                    "required": ["Normal"],
                    "additionalProperties": false,
                    "description": "Override documentation on the Normal variant"
                },
                {
                    "type": "object",
                    "properties": {
                        "Hardcore": {
                            "type": "object",
                            "properties": {
                                "hard": {"type": "string"},
                                "core": normal_enum,
                                "without_description": {
                                    "type": "string",
                                    "enum": ["A", "B", "C", "D"]
                                }
                            },
                            "required": ["hard", "core", "without_description"]
                        }
                    },
                    "required": ["Hardcore"],
                    "additionalProperties": false,
                    "description": "Documentation on the Hardcore variant"
                }
            ],
            "description": "A complex enum with tuple and struct variants"
        });
        let raw = kube_root(
            "OptionalComplexEnumTest",
            json!({
                "type": "object",
                "properties": {
                    "foo": {
                        "anyOf": [complex_enum, {"type": "null"}],
                        "description": "Optional complex enum field"
                    }
                }
            }),
        );
        let expected = kube_root(
            "OptionalComplexEnumTest",
            json!({
                "properties": {
                    "foo": {
                        "description": "Optional complex enum field",
                        "oneOf": [{"required": ["Normal"]}, {"required": ["Hardcore"]}],
                        "properties": {
                            "Hardcore": {
                                "description": "Documentation on the Hardcore variant",
                                "properties": {
                                    "core": {
                                        "description": "A very simple enum with unit variants",
                                        "enum": ["C", "D", "A", "B"],
                                        "type": "string"
                                    },
                                    "hard": {"type": "string"},
                                    "without_description": {
                                        "enum": ["A", "B", "C", "D"],
                                        "type": "string"
                                    }
                                },
                                "required": ["core", "hard", "without_description"],
                                "type": "object"
                            },
                            "Normal": {
                                "description": "Override documentation on the Normal variant",
                                "enum": ["C", "D", "A", "B"],
                                "type": "string"
                            }
                        },
                        "type": "object",
                        "nullable": true
                    }
                },
                "type": "object"
            }),
        );
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// kube-derive `optional_enum`: `foo: Option<NormalEnum>`.
    #[test]
    fn kube_optional_enum() {
        let raw = kube_root(
            "OptionalEnumTest",
            json!({
                "type": "object",
                "properties": {
                    "foo": {
                        "anyOf": [
                            {
                                "oneOf": [
                                    {"type": "string", "enum": ["C", "D"]},
                                    {"description": "First variant", "type": "string", "const": "A"},
                                    {"description": "Second variant", "type": "string", "const": "B"}
                                ],
                                "description": "A very simple enum with unit variants"
                            },
                            {"type": "null"}
                        ]
                    }
                }
            }),
        );
        let expected = kube_root(
            "OptionalEnumTest",
            json!({
                "properties": {
                    "foo": {
                        "description": "A very simple enum with unit variants",
                        "enum": ["C", "D", "A", "B"],
                        "nullable": true,
                        "type": "string"
                    }
                },
                "type": "object"
            }),
        );
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// kube-derive `flattened_untagged_enum`: `#[serde(flatten)] inner: UntaggedEnum` with
    /// documented struct variants `A { one }`, `B { two, three }` and `C {}`; variant docs are
    /// dropped, not pushed.
    #[test]
    fn kube_flattened_untagged_enum() {
        let normal_enum = json!({
            "oneOf": [
                {"type": "string", "enum": ["C", "D"]},
                {"description": "First variant", "type": "string", "const": "A"},
                {"description": "Second variant", "type": "string", "const": "B"}
            ],
            "description": "A very simple enum with unit variants"
        });
        let raw = kube_root(
            "FlattenedUntaggedEnumTest",
            json!({
                "type": "object",
                "properties": {
                    "foo": {
                        "type": "object",
                        "anyOf": [
                            {
                                "description": "Used in case the `one` field of type [`u32`] is present\n\nThis should not appear in the schema because the \"variant\" disappears\nand this comment cannot pertain to all fields within the struct variant.",
                                "type": "object",
                                "properties": {"one": {"type": "string"}},
                                "required": ["one"]
                            },
                            {
                                "description": "Used in case the `two` ...",
                                "type": "object",
                                "properties": {"two": normal_enum, "three": {"type": "string"}},
                                "required": ["two", "three"]
                            },
                            {
                                "description": "Used in case no fields are present ...",
                                "type": "object"
                            }
                        ],
                        "description": "Put a [`UntaggedEnum`] behind `#[serde(flatten)]`"
                    }
                },
                "required": ["foo"]
            }),
        );
        let expected = kube_root(
            "FlattenedUntaggedEnumTest",
            json!({
                "properties": {
                    "foo": {
                        "anyOf": [{"required": ["one"]}, {"required": ["three", "two"]}, {}],
                        "description": "Put a [`UntaggedEnum`] behind `#[serde(flatten)]`",
                        "properties": {
                            "one": {"type": "string"},
                            "two": {
                                "description": "A very simple enum with unit variants",
                                "enum": ["C", "D", "A", "B"],
                                "type": "string"
                            },
                            "three": {"type": "string"}
                        },
                        "type": "object"
                    }
                },
                "required": ["foo"],
                "type": "object"
            }),
        );
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// kube-derive `crd_mixed_enum_test.rs` `valid_enum_3`: the spec itself is
    /// `enum ValidEnum3Spec { A(String), B(u32) }` with documented variants.(`minimum: 0.0`).
    #[test]
    fn kube_valid_enum_3() {
        let raw = kube_root(
            "ValidEnum3",
            json!({
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"A": {"type": "string"}},
                        "required": ["A"],
                        "additionalProperties": false,
                        "description": "Takes an [`String`] (represented as object)"
                    },
                    {
                        "type": "object",
                        "properties": {"B": {"type": "integer", "format": "uint32", "minimum": 0}},
                        "required": ["B"],
                        "additionalProperties": false,
                        "description": "Takes an [`u32`] (represented as object)"
                    }
                ],
                "description": "This enum is valid, as all variants are objects"
            }),
        );
        let expected = kube_root(
            "ValidEnum3",
            json!({
                "description": "This enum is valid, as all variants are objects",
                "oneOf": [{"required": ["A"]}, {"required": ["B"]}],
                "properties": {
                    "A": {
                        "description": "Takes an [`String`] (represented as object)",
                        "type": "string"
                    },
                    "B": {
                        "description": "Takes an [`u32`] (represented as object)",
                        "format": "uint32",
                        "minimum": 0.0,
                        "type": "integer"
                    }
                },
                "type": "object"
            }),
        );
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// kube-derive `valid_enum_6`: an untagged spec enum whose variants share `inner: u32` with the
    /// same doc.
    #[test]
    fn kube_valid_enum_6() {
        let raw = kube_root(
            "ValidEnum6",
            json!({
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {
                            "inner": {
                                "type": "integer",
                                "format": "uint32",
                                "minimum": 0,
                                "description": "The inner fields need to have the same schema (so also same description)"
                            },
                            "additional": {"type": "string", "description": "An additional field"}
                        },
                        "required": ["inner", "additional"]
                    },
                    {
                        "type": "object",
                        "properties": {
                            "inner": {
                                "type": "integer",
                                "format": "uint32",
                                "minimum": 0,
                                "description": "The inner fields need to have the same schema (so also same description)"
                            }
                        },
                        "required": ["inner"]
                    }
                ],
                "description": "This enum is valid, as the `inner` fields are the same."
            }),
        );
        let expected = kube_root(
            "ValidEnum6",
            json!({
                "anyOf": [{"required": ["additional", "inner"]}, {"required": ["inner"]}],
                "description": "This enum is valid, as the `inner` fields are the same.",
                "properties": {
                    "additional": {"description": "An additional field", "type": "string"},
                    "inner": {
                        "description": "The inner fields need to have the same schema (so also same description)",
                        "format": "uint32",
                        "minimum": 0.0,
                        "type": "integer"
                    }
                },
                "type": "object"
            }),
        );
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// kube-derive `test_optional_int_or_string_nullable`: `required_int_or_string: IntOrString`
    /// and `optional_int_or_string: Option<IntOrString>` (schemars leaves the untyped schema as it
    /// is).
    #[test]
    fn optional_int_or_string_is_nullable_only_when_not_required() {
        let raw = kube_root(
            "IntOrStringTest",
            json!({
                "type": "object",
                "properties": {
                    "required_int_or_string": {
                        "description": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field that can accept a name or number.",
                        "x-kubernetes-int-or-string": true
                    },
                    "optional_int_or_string": {
                        "description": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field that can accept a name or number.",
                        "x-kubernetes-int-or-string": true
                    }
                },
                "required": ["required_int_or_string"]
            }),
        );
        let expected = kube_root(
            "IntOrStringTest",
            json!({
                "type": "object",
                "properties": {
                    "required_int_or_string": {
                        "description": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field that can accept a name or number.",
                        "x-kubernetes-int-or-string": true
                    },
                    "optional_int_or_string": {
                        "description": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field that can accept a name or number.",
                        "x-kubernetes-int-or-string": true,
                        "nullable": true
                    }
                },
                "required": ["required_int_or_string"]
            }),
        );
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// `u32`, `u8`, `i8`, `usize`, `Option<u16>`, `#[schemars(range(min = 1, max = 10))] i32`,
    /// `#[schemars(extend("multipleOf" = 0.5))] f64`, `char` and
    /// `#[schemars(length(min = 1, max = 5))] Vec<String>`: `JSONSchemaProps` holds `minimum`,
    /// `maximum` and `multipleOf` as `f64`, the rest as `i64`.
    #[test]
    fn numeric_bounds_are_floats_and_lengths_integers() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "format": "uint32", "minimum": 0},
                "byte": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
                "small": {"type": "integer", "format": "int8", "minimum": -128, "maximum": 127},
                "size": {"type": "integer", "format": "uint", "minimum": 0},
                "port": {
                    "type": ["integer", "null"],
                    "format": "uint16",
                    "minimum": 0,
                    "maximum": 65535
                },
                "replicas": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 10},
                "ratio": {"type": "number", "format": "double", "multipleOf": 0.5},
                "letter": {"type": "string", "minLength": 1, "maxLength": 1},
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "maxItems": 5
                }
            },
            "required": ["count", "byte", "small", "size", "replicas", "ratio", "letter", "tags"]
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "format": "uint32", "minimum": 0.0},
                "byte": {"type": "integer", "format": "uint8", "minimum": 0.0, "maximum": 255.0},
                "small": {
                    "type": "integer",
                    "format": "int8",
                    "minimum": -128.0,
                    "maximum": 127.0
                },
                "size": {"type": "integer", "format": "uint", "minimum": 0.0},
                "port": {
                    "type": "integer",
                    "format": "uint16",
                    "minimum": 0.0,
                    "maximum": 65535.0,
                    "nullable": true
                },
                "replicas": {
                    "type": "integer",
                    "format": "int32",
                    "minimum": 1.0,
                    "maximum": 10.0
                },
                "ratio": {"type": "number", "format": "double", "multipleOf": 0.5},
                "letter": {"type": "string", "minLength": 1, "maxLength": 1},
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "maxItems": 5
                }
            },
            "required": ["byte", "count", "letter", "ratio", "replicas", "size", "small", "tags"]
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// kube-derive `flattening`: `foo: String` next to
    /// `#[serde(flatten)] arbitrary: HashMap<String, serde_json::Value>`.
    #[test]
    fn flattened_map_becomes_preserve_unknown_fields() {
        let raw = kube_root(
            "Flattening",
            json!({
                "type": "object",
                "properties": {"foo": {"type": "string"}},
                "required": ["foo"],
                "additionalProperties": true
            }),
        );
        let expected = kube_root(
            "Flattening",
            json!({
                "type": "object",
                "properties": {"foo": {"type": "string"}},
                "required": ["foo"],
                "x-kubernetes-preserve-unknown-fields": true
            }),
        );
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// kube-derive `deny_unknown_fields` (`subitem` with `#[serde(deny_unknown_fields)]` loses
    /// `additionalProperties: false`), next to `labels: HashMap<String, String>` and
    /// `extra: HashMap<String, serde_json::Value>`, which keep theirs (they have no properties).
    #[test]
    fn deny_unknown_fields_and_plain_maps() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "subitem": {
                    "type": "object",
                    "properties": {
                        "one": {"type": "string"},
                        "two": {"type": "boolean"},
                        "three": {"type": "integer", "format": "int32"}
                    },
                    "required": ["one", "two", "three"],
                    "additionalProperties": false
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "extra": {"type": "object", "additionalProperties": true}
            },
            "required": ["subitem", "labels", "extra"]
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {
                "subitem": {
                    "type": "object",
                    "properties": {
                        "one": {"type": "string"},
                        "two": {"type": "boolean"},
                        "three": {"type": "integer", "format": "int32"}
                    },
                    "required": ["one", "three", "two"]
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "extra": {"type": "object", "additionalProperties": true}
            },
            "required": ["extra", "labels", "subitem"]
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// `required` goes through kube's `BTreeSet<String>`: byte order, duplicates merged (as two
    /// flattened structs sharing a field would produce).
    #[test]
    fn required_is_sorted_and_deduplicated() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "zeta": {"type": "string"},
                "alpha": {"type": "string"},
                "Beta": {"type": "string"},
                "_x": {"type": "string"}
            },
            "required": ["zeta", "alpha", "Beta", "_x", "alpha"]
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {
                "zeta": {"type": "string"},
                "alpha": {"type": "string"},
                "Beta": {"type": "string"},
                "_x": {"type": "string"}
            },
            "required": ["Beta", "_x", "alpha", "zeta"]
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// `#[deprecated]`, `#[serde(skip_serializing)]` (`writeOnly`), `#[schemars(example = ..)]`,
    /// `StructMerge` (`x-kubernetes-struct-type`), a custom `extend` key, `contains`, `title`,
    /// `default: null`, empty `examples`, and CEL rules with an unknown key or no `rule`.
    #[test]
    fn json_schema_props_drops_unknown_keywords_and_null_defaults() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "count": {
                    "type": "integer",
                    "format": "int32",
                    "deprecated": true,
                    "examples": [8, 9],
                    "writeOnly": true
                },
                "nested": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}},
                    "required": ["a"],
                    "x-kubernetes-struct-type": "atomic",
                    "x-rsop-extra": "dropped",
                    "title": "Nested"
                },
                "list": {
                    "type": "array",
                    "items": {"type": "string"},
                    "contains": {"type": "string", "const": "x"},
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["a"]
                },
                "maybe": {
                    "type": ["integer", "null"],
                    "format": "int32",
                    "default": null,
                    "examples": []
                }
            },
            "x-kubernetes-validations": [
                {"rule": "self.count > 0", "message": "m", "extra": "dropped"},
                {"message": "no rule", "optionalOldSelf": true}
            ]
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "format": "int32", "example": 8},
                "nested": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}},
                    "required": ["a"],
                    "title": "Nested"
                },
                "list": {
                    "type": "array",
                    "items": {"type": "string"},
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["a"]
                },
                "maybe": {"type": "integer", "format": "int32", "nullable": true}
            },
            "x-kubernetes-validations": [
                {"rule": "self.count > 0", "message": "m"},
                {"message": "no rule", "optionalOldSelf": true, "rule": ""}
            ]
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// `pair: (u8, String)`, and a hand-written `prefixItems` with `items` (which moves to
    /// `additionalItems`).
    #[test]
    fn tuples_become_items_arrays() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "pair": {
                    "type": "array",
                    "prefixItems": [
                        {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
                        {"type": "string"}
                    ],
                    "minItems": 2,
                    "maxItems": 2
                },
                "open": {
                    "type": "array",
                    "prefixItems": [{"type": "string"}],
                    "items": {"type": "integer", "format": "int32"}
                }
            },
            "required": ["pair", "open"]
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {
                "pair": {
                    "type": "array",
                    "items": [
                        {"type": "integer", "format": "uint8", "minimum": 0.0, "maximum": 255.0},
                        {"type": "string"}
                    ],
                    "minItems": 2,
                    "maxItems": 2
                },
                "open": {
                    "type": "array",
                    "items": [{"type": "string"}],
                    "additionalItems": {"type": "integer", "format": "int32"}
                }
            },
            "required": ["open", "pair"]
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// `unit: ()`, `any: serde_json::Value`, `anys: Vec<serde_json::Value>` and
    /// `maybe_any: Option<serde_json::Value>` (no preserve-unknown-fields).
    #[test]
    fn unit_and_any_value_schemas() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "unit": {"type": "null"},
                "any": true,
                "anys": {"type": "array", "items": true},
                "maybeAny": true
            },
            "required": ["unit", "any", "anys"]
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {
                "unit": {"nullable": true, "enum": [null]},
                "any": {},
                "anys": {"type": "array", "items": {}},
                "maybeAny": {}
            },
            "required": ["any", "anys", "unit"]
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// A flattened map next to
    /// `#[schemars(extend("x-kubernetes-preserve-unknown-fields" = false))]`: kube keeps unknown
    /// keywords twice (`extensions` and `other`) and writes `other` last, so the original value
    /// beats the `true` the rewriter inserts.
    #[test]
    fn existing_preserve_unknown_fields_value_wins() {
        let raw = root(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "additionalProperties": true,
            "x-kubernetes-preserve-unknown-fields": false
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "x-kubernetes-preserve-unknown-fields": false
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// `/// A name or a number` on `value: NameOrNumber`,
    /// `#[serde(untagged)] enum NameOrNumber { /// A name Name(String), Number(u32) }`: plain
    /// variants lose `type` and description.
    #[test]
    fn untagged_scalar_variants_lose_their_type() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "value": {
                    "anyOf": [
                        {"type": "string", "description": "A name"},
                        {"type": "integer", "format": "uint32", "minimum": 0}
                    ],
                    "description": "A name or a number"
                }
            },
            "required": ["value"]
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {
                "value": {
                    "anyOf": [{}, {"format": "uint32", "minimum": 0.0}],
                    "description": "A name or a number"
                }
            },
            "required": ["value"]
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// `/// The child` on `child: Option<Box<Node>>`-like recursion: a `$ref` with a sibling moves
    /// into `allOf`, and the root's `components` is not a `JSONSchemaProps` keyword.
    #[test]
    fn recursive_reference_moves_into_all_of() {
        let raw = json!({
            "type": "object",
            "title": "Foo",
            "description": "Auto-generated derived type for FooSpec via `CustomResource`",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "child": {"$ref": "#/components/schemas/Node", "description": "The child"}
                    }
                }
            },
            "required": ["spec"],
            "components": {
                "schemas": {
                    "Node": {
                        "type": "object",
                        "properties": {"child": {"$ref": "#/components/schemas/Node"}}
                    }
                }
            }
        });
        let expected = root(json!({
            "type": "object",
            "properties": {
                "child": {
                    "description": "The child",
                    "allOf": [{"$ref": "#/components/schemas/Node"}]
                }
            }
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// `unevaluatedProperties: false` (from flattening with `deny_unknown_fields`) becomes
    /// `additionalProperties: false`, which kube then drops; names from `allOf` are listed as `{}`.
    #[test]
    fn unevaluated_properties_become_additional_properties() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "closed": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}},
                    "unevaluatedProperties": false
                },
                "merged": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}},
                    "allOf": [{"properties": {"b": {"type": "integer", "format": "int32"}}}],
                    "unevaluatedProperties": false
                }
            }
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {
                "closed": {"type": "object", "properties": {"a": {"type": "string"}}},
                "merged": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}, "b": {}},
                    "allOf": [{"properties": {"b": {"type": "integer", "format": "int32"}}}]
                }
            }
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// `#[serde(untagged)] enum Source { Name { name: String }, Full { name: String, namespace: String } }`
    /// without doc comments: the shared `name` is identical, so the variants merge.
    #[test]
    fn untagged_enum_sharing_a_field() {
        let raw = root(json!({
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"]
                },
                {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}},
                    "required": ["name", "namespace"]
                }
            ]
        }));
        let expected = root(json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}},
            "anyOf": [{"required": ["name"]}, {"required": ["name", "namespace"]}]
        }));
        assert_eq!(finalize(raw, Model::default()), Ok(expected));
    }

    /// kube-derive `invalid_enum_1`: `enum InvalidEnum1Spec { /// .. A, /// .. B(u32) }` (kube
    /// panics with `Enum variant set [String("A")] has type Single(String) ..`).
    #[test]
    fn mixed_unit_and_data_enum_is_rejected() {
        let raw = kube_root(
            "InvalidEnum1",
            json!({
                "oneOf": [
                    {
                        "type": "string",
                        "const": "A",
                        "description": "Unit variant (represented as string)"
                    },
                    {
                        "type": "object",
                        "properties": {"B": {"type": "integer", "format": "uint32", "minimum": 0}},
                        "required": ["B"],
                        "additionalProperties": false,
                        "description": "Takes an [`u32`] (represented as object)"
                    }
                ],
                "description": "This enum is invalid, as \"plain\" (string) variants are mixed with object variants"
            }),
        );
        assert_eq!(
            finalize(raw, Model::default()),
            Err(TransformError::MixedEnum {
                pointer: "#/properties/spec".to_owned(),
                unit_variants: "`A`".to_owned(),
                unit_type: "string".to_owned(),
                data_type: "object".to_owned(),
            })
        );
    }

    /// kube-derive `struct_with_enum_1`-like: `foo: E` with `enum E { A, C, B(u32) }` (undocumented
    /// unit variants).
    #[test]
    fn mixed_unit_and_data_enum_as_a_field_is_rejected() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "foo": {
                    "oneOf": [
                        {"type": "string", "enum": ["A", "C"]},
                        {
                            "type": "object",
                            "properties": {
                                "B": {"type": "integer", "format": "uint32", "minimum": 0}
                            },
                            "required": ["B"],
                            "additionalProperties": false
                        }
                    ]
                }
            },
            "required": ["foo"]
        }));
        assert_eq!(
            finalize(raw, Model::default()),
            Err(TransformError::MixedEnum {
                pointer: "#/properties/spec/properties/foo".to_owned(),
                unit_variants: "`A`, `C`".to_owned(),
                unit_type: "string".to_owned(),
                data_type: "object".to_owned(),
            })
        );
    }

    /// kube-derive `invalid_enum_5`:
    /// `#[serde(untagged)] enum { A { inner: String }, B { inner: u32 } }`.
    #[test]
    fn untagged_field_with_different_types_is_rejected() {
        let raw = kube_root(
            "InvalidEnum5",
            json!({
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"inner": {"type": "string"}},
                        "required": ["inner"]
                    },
                    {
                        "type": "object",
                        "properties": {"inner": {"type": "integer", "format": "uint32", "minimum": 0}},
                        "required": ["inner"]
                    }
                ],
                "description": "This enum is invalid, as the types of the `inner` fields differ."
            }),
        );
        assert_eq!(
            finalize(raw, Model::default()),
            Err(TransformError::PropertyClash {
                pointer: "#/properties/spec".to_owned(),
                property: "inner".to_owned(),
                detail: "they differ in `format`, `minimum`, `type`".to_owned(),
            })
        );
    }

    /// kube-derive `invalid_enum_7`: the shared `inner: u32` has a different doc comment in each
    /// variant.
    #[test]
    fn untagged_field_with_different_docs_is_rejected() {
        let raw = kube_root(
            "InvalidEnum7",
            json!({
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {
                            "inner": {
                                "type": "integer",
                                "format": "uint32",
                                "minimum": 0,
                                "description": "The inner fields need to have the same schema (so also same description)"
                            },
                            "additional": {"type": "string"}
                        },
                        "required": ["inner", "additional"]
                    },
                    {
                        "type": "object",
                        "properties": {
                            "inner": {
                                "type": "integer",
                                "format": "uint32",
                                "minimum": 0,
                                "description": "This description differs!"
                            }
                        },
                        "required": ["inner"]
                    }
                ]
            }),
        );
        assert_eq!(
            finalize(raw, Model::default()),
            Err(TransformError::PropertyClash {
                pointer: "#/properties/spec".to_owned(),
                property: "inner".to_owned(),
                detail: "they differ in `description`".to_owned(),
            })
        );
    }

    /// `untagged_enum_sharing_a_field` with `/// By name only` on `Name { name }`: kube takes the
    /// variant doc and gives its only property an empty metadata group (`get_or_insert_with`), so
    /// `name` no longer equals the undocumented copy in `Full` although the JSON is the same.
    #[test]
    fn documented_single_field_variant_clashes() {
        let raw = root(json!({
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                    "description": "By name only"
                },
                {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}},
                    "required": ["name", "namespace"]
                }
            ]
        }));
        assert_eq!(
            finalize(raw, Model::default()),
            Err(TransformError::PropertyClash {
                pointer: "#/properties/spec".to_owned(),
                property: "name".to_owned(),
                detail: "one of them is the only field of a variant with a doc comment, which \
                         makes kube-derive attach an empty description to it; give the field \
                         the same doc comment in every variant, or remove the variant's doc \
                         comment"
                    .to_owned(),
            })
        );
    }

    /// `#[serde(tag = "kind")] enum Source { Git { url: String }, Oci { image: String } }`.
    #[test]
    fn internally_tagged_enum_is_rejected() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "source": {
                    "oneOf": [
                        {
                            "type": "object",
                            "properties": {
                                "kind": {"type": "string", "const": "Git"},
                                "url": {"type": "string"}
                            },
                            "required": ["kind", "url"]
                        },
                        {
                            "type": "object",
                            "properties": {
                                "kind": {"type": "string", "const": "Oci"},
                                "image": {"type": "string"}
                            },
                            "required": ["kind", "image"]
                        }
                    ]
                }
            },
            "required": ["source"]
        }));
        assert_eq!(
            finalize(raw, Model::default()),
            Err(TransformError::TaggedEnum {
                pointer: "#/properties/spec/properties/source".to_owned(),
                tag: "kind".to_owned(),
            })
        );
    }

    /// An `anyOf` whose object-like variants disagree on `type` (a hand-written variant schema).
    #[test]
    fn conflicting_variant_types_are_rejected() {
        let raw = root(json!({
            "anyOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}},
                {"type": "string", "minProperties": 1}
            ]
        }));
        assert_eq!(
            finalize(raw, Model::default()),
            Err(TransformError::ConflictingVariantTypes {
                pointer: "#/properties/spec".to_owned(),
                variant_type: "string".to_owned(),
                common_type: "object".to_owned(),
            })
        );
    }

    /// `extra: HashMap<String, Vec<serde_json::Value>>`: `ReplaceBoolSchemas` skips
    /// `additionalProperties`, so `items: true` reaches `JSONSchemaProps`.
    #[test]
    fn bool_schema_in_map_value_is_rejected() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "extra": {
                    "type": "object",
                    "additionalProperties": {"type": "array", "items": true}
                }
            },
            "required": ["extra"]
        }));
        assert_eq!(
            finalize(raw, Model::default()),
            Err(TransformError::BoolSchema {
                pointer: "#/properties/spec/properties/extra/additionalProperties/items".to_owned(),
                value: true,
            })
        );
    }

    /// `amount: Option<Decimal>` where the schema is a string or a number.
    #[test]
    fn type_array_is_rejected() {
        let raw = root(json!({
            "type": "object",
            "properties": {
                "amount": {
                    "type": ["string", "number", "null"],
                    "pattern": "^-?[0-9]+(\\.[0-9]+)?$"
                }
            }
        }));
        assert_eq!(
            finalize(raw, Model::default()),
            Err(TransformError::TypeArray {
                pointer: "#/properties/spec/properties/amount".to_owned(),
                types: "`string`, `number`".to_owned(),
            })
        );
    }

    /// `#[schemars(extend("exclusiveMinimum" = 0))]`: `JSONSchemaProps` wants a boolean there.
    #[test]
    fn numeric_exclusive_minimum_is_rejected() {
        let raw = root(json!({
            "type": "object",
            "properties": {"delay": {"type": "string", "exclusiveMinimum": 0}}
        }));
        assert_eq!(
            finalize(raw, Model::default()),
            Err(TransformError::InvalidKeyword {
                pointer: "#/properties/spec/properties/delay".to_owned(),
                keyword: "exclusiveMinimum".to_owned(),
                expected: "a boolean",
            })
        );
    }

    /// Messages follow cargo's style: lowercase, names in backticks, the Rust cause first.
    #[test]
    fn error_messages_name_the_rust_cause() {
        let error = TransformError::MixedEnum {
            pointer: "#/properties/spec".to_owned(),
            unit_variants: "`A`".to_owned(),
            unit_type: "string".to_owned(),
            data_type: "object".to_owned(),
        };
        assert_eq!(
            error.to_string(),
            "an enum mixes unit variants (`A`) with data variants; kube-derive cannot make a \
             structural schema of it (at `#/properties/spec`, the unit variants are of type \
             `string` and the others of type `object`)"
        );
    }
}
