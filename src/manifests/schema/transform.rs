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

use serde_json::{Map, Value, json};

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

/// Applies, in order, the transforms kube-derive 5 applies to the root schema of a custom resource
/// (the 7 of schemars' openapi3 settings, `AddNullable` again, `StructuralSchemaRewriter`, `OptionalEnum`,
/// `OptionalIntOrString`), then the `JSONSchemaProps` round trip (unknown keys dropped, `default: null`
/// dropped, minimum/maximum/multipleOf as floats, ...). `root` is the raw schemars output for the root
/// type (already holding its `title`).
pub fn finalize(root: Value) -> Result<Value, TransformError> {
    let mut root = root;
    replace_unevaluated_properties(&mut root);
    replace_bool_schemas(&mut root);
    add_nullable(&mut root);
    remove_ref_siblings(&mut root);
    set_single_example(&mut root);
    replace_const_value(&mut root);
    replace_prefix_items(&mut root);
    add_nullable(&mut root);
    structural_schema_rewriter(&mut root, ROOT_POINTER)?;
    optional_enum(&mut root);
    optional_int_or_string(&mut root);
    json_schema_props(&root, ROOT_POINTER)
}

/// The JSON pointer of the root schema in error messages.
const ROOT_POINTER: &str = "#";

// ---------------------------------------------------------------------------
// Walking subschemas
// ---------------------------------------------------------------------------

/// Where a direct subschema sits in its parent object.
#[derive(Debug, Clone)]
enum Slot {
    /// `parent[keyword]`, e.g. `not`, `additionalProperties`, a single `items`.
    Keyword(String),
    /// `parent[keyword][index]`, e.g. `anyOf/0`, an `items` array element.
    Element(String, usize),
    /// `parent[keyword][name]`, e.g. `properties/foo`.
    Entry(String, String),
}

impl Slot {
    fn get_mut<'a>(&self, parent: &'a mut Value) -> Option<&'a mut Value> {
        match self {
            Slot::Keyword(keyword) => parent.get_mut(keyword.as_str()),
            Slot::Element(keyword, index) => parent.get_mut(keyword.as_str())?.get_mut(*index),
            Slot::Entry(keyword, name) => parent.get_mut(keyword.as_str())?.get_mut(name.as_str()),
        }
    }

    fn pointer(&self, parent: &str) -> String {
        match self {
            Slot::Keyword(keyword) => format!("{parent}/{}", escape_pointer(keyword)),
            Slot::Element(keyword, index) => {
                format!("{parent}/{}/{index}", escape_pointer(keyword))
            }
            Slot::Entry(keyword, name) => {
                format!(
                    "{parent}/{}/{}",
                    escape_pointer(keyword),
                    escape_pointer(name)
                )
            }
        }
    }
}

/// Escapes one JSON pointer segment (RFC 6901).
fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// A schema in the sense of schemars: a JSON object or a boolean.
fn is_schema(value: &Value) -> bool {
    matches!(value, Value::Object(_) | Value::Bool(_))
}

/// The direct subschemas schemars' `transform_subschemas` visits: `not`,
/// `if`, `then`, `else`, `contains`, `additionalProperties`, `propertyNames`,
/// `additionalItems`; the elements of `allOf`, `anyOf`, `oneOf`,
/// `prefixItems`; `items` (one schema or an array); the values of
/// `properties`, `patternProperties`, `$defs`, `definitions`.
fn subschema_slots(schema: &Value) -> Vec<Slot> {
    let mut slots = Vec::new();
    let Value::Object(map) = schema else {
        return slots;
    };
    for (key, value) in map {
        match key.as_str() {
            "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "additionalProperties"
            | "propertyNames"
            | "additionalItems" => {
                if is_schema(value) {
                    slots.push(Slot::Keyword(key.clone()));
                }
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" | "items" => {
                if let Value::Array(elements) = value {
                    for (index, element) in elements.iter().enumerate() {
                        if is_schema(element) {
                            slots.push(Slot::Element(key.clone(), index));
                        }
                    }
                } else if key == "items" && is_schema(value) {
                    slots.push(Slot::Keyword(key.clone()));
                }
            }
            "properties" | "patternProperties" | "$defs" | "definitions" => {
                if let Value::Object(entries) = value {
                    for (name, entry) in entries {
                        if is_schema(entry) {
                            slots.push(Slot::Entry(key.clone(), name.clone()));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    slots
}

/// Applies `transform` to every direct subschema (schemars' `transform_subschemas`).
fn for_each_subschema(schema: &mut Value, transform: fn(&mut Value)) {
    for slot in subschema_slots(schema) {
        if let Some(child) = slot.get_mut(schema) {
            transform(child);
        }
    }
}

/// [`for_each_subschema`] for a fallible transform that needs to know where it is.
fn try_for_each_subschema(
    schema: &mut Value,
    pointer: &str,
    transform: fn(&mut Value, &str) -> Result<(), TransformError>,
) -> Result<(), TransformError> {
    for slot in subschema_slots(schema) {
        let child_pointer = slot.pointer(pointer);
        if let Some(child) = slot.get_mut(schema) {
            transform(child, &child_pointer)?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// schemars 1.2 openapi3 transforms
// ---------------------------------------------------------------------------

/// schemars `ReplaceUnevaluatedProperties`: OpenAPI 3.0 has no `unevaluatedProperties`, so it becomes
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
            "if" | "then" | "else" => {
                if is_schema(value) {
                    gather_property_names(value, names);
                }
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

/// schemars `ReplaceBoolSchemas { skip_additional_properties: true }`: OpenAPI 3.0 has no boolean
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
    if value { json!({}) } else { json!({"not": {}}) }
}

/// schemars `Schema::has_type`: whether `type` is `ty` or an array holding it.
fn has_type(schema: &Value, ty: &str) -> bool {
    match schema.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(ty)),
        Some(Value::String(single)) => single == ty,
        _ => false,
    }
}

/// schemars `AddNullable` (defaults: `remove_null_type`, `add_const_null`): OpenAPI 3.0 spells a
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
        all_of.push(json!({ "$ref": reference }));
    }
}

/// schemars `SetSingleExample`: OpenAPI 3.0 has a single `example`, so the first of `examples` is
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

/// schemars `ReplaceConstValue`: OpenAPI 3.0 has no `const`, so it becomes a one-value `enum`.
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
    if let Value::Array(_) = value {
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
    fn to_value(&self) -> Value {
        match self {
            KubeSchema::Bool(value) => Value::Bool(*value),
            KubeSchema::Object(object) => object.to_value(),
        }
    }
}

fn schema_list_to_value(schemas: &[KubeSchema]) -> Value {
    Value::Array(schemas.iter().map(KubeSchema::to_value).collect())
}

fn schema_map_to_value(schemas: &BTreeMap<String, KubeSchema>) -> Value {
    Value::Object(
        schemas
            .iter()
            .map(|(name, schema)| (name.clone(), schema.to_value()))
            .collect(),
    )
}

impl KubeSchemaObject {
    /// `serde_json::to_value` of kube's `SchemaObject`: absent options and empty `required`,
    /// `properties` and `patternProperties` are skipped; `required` comes out sorted.
    fn to_value(&self) -> Value {
        let mut map = Map::new();
        if let Some(metadata) = &self.metadata {
            if let Some(description) = &metadata.description {
                map.insert("description".to_owned(), Value::String(description.clone()));
            }
            if let Some(default) = &metadata.default {
                map.insert("default".to_owned(), default.clone());
            }
        }
        if let Some(instance_type) = &self.instance_type {
            map.insert("type".to_owned(), instance_type.clone());
        }
        if let Some(format) = &self.format {
            map.insert("format".to_owned(), Value::String(format.clone()));
        }
        if let Some(enum_values) = &self.enum_values {
            map.insert("enum".to_owned(), Value::Array(enum_values.clone()));
        }
        if let Some(subschemas) = &self.subschemas {
            if let Some(any_of) = &subschemas.any_of {
                map.insert("anyOf".to_owned(), schema_list_to_value(any_of));
            }
            if let Some(one_of) = &subschemas.one_of {
                map.insert("oneOf".to_owned(), schema_list_to_value(one_of));
            }
        }
        if let Some(array) = &self.array {
            array.write_to(&mut map);
        }
        if let Some(object) = &self.object {
            object.write_to(&mut map);
        }
        for (key, value) in &self.extensions {
            map.insert(key.clone(), value.clone());
        }
        for (key, value) in &self.other {
            map.insert(key.clone(), value.clone());
        }
        Value::Object(map)
    }
}

impl ArrayValidation {
    fn write_to(&self, map: &mut Map<String, Value>) {
        match &self.items {
            Some(Items::Single(schema)) => {
                map.insert("items".to_owned(), schema.to_value());
            }
            Some(Items::Vec(schemas)) => {
                map.insert("items".to_owned(), schema_list_to_value(schemas));
            }
            None => {}
        }
        if let Some(schema) = &self.additional_items {
            map.insert("additionalItems".to_owned(), schema.to_value());
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
        if let Some(schema) = &self.contains {
            map.insert("contains".to_owned(), schema.to_value());
        }
    }
}

impl ObjectValidation {
    fn write_to(&self, map: &mut Map<String, Value>) {
        if let Some(max_properties) = self.max_properties {
            map.insert("maxProperties".to_owned(), Value::from(max_properties));
        }
        if let Some(min_properties) = self.min_properties {
            map.insert("minProperties".to_owned(), Value::from(min_properties));
        }
        if !self.required.is_empty() {
            let required = self.required.iter().cloned().map(Value::String).collect();
            map.insert("required".to_owned(), Value::Array(required));
        }
        if !self.properties.is_empty() {
            map.insert(
                "properties".to_owned(),
                schema_map_to_value(&self.properties),
            );
        }
        if !self.pattern_properties.is_empty() {
            map.insert(
                "patternProperties".to_owned(),
                schema_map_to_value(&self.pattern_properties),
            );
        }
        if let Some(schema) = &self.additional_properties {
            map.insert("additionalProperties".to_owned(), schema.to_value());
        }
        if let Some(schema) = &self.property_names {
            map.insert("propertyNames".to_owned(), schema.to_value());
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
fn structural_schema_rewriter(schema: &mut Value, pointer: &str) -> Result<(), TransformError> {
    try_for_each_subschema(schema, pointer, structural_schema_rewriter)?;
    let Some(map) = schema.as_object() else {
        return Ok(());
    };
    let Some(mut node) = parse_kube_schema_object(map) else {
        return Ok(());
    };

    if let Some(subschemas) = node.subschemas.as_mut() {
        if let Some(one_of) = subschemas.one_of.as_mut() {
            // Externally tagged enums are a `oneOf` of one-property objects.
            hoist_subschema_properties(
                one_of,
                &mut node.object,
                &mut node.instance_type,
                true,
                pointer,
            )?;
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
        if let Some(any_of) = subschemas.any_of.as_mut() {
            // Untagged enums are an `anyOf`; variant docs are not the fields' docs.
            hoist_subschema_properties(
                any_of,
                &mut node.object,
                &mut node.instance_type,
                false,
                pointer,
            )?;
        }
    }

    if let Some(object) = node.object.as_mut()
        && !object.properties.is_empty()
    {
        let additional = match object.additional_properties.as_deref() {
            Some(KubeSchema::Bool(value)) => Some(*value),
            _ => None,
        };
        if let Some(value) = additional {
            object.additional_properties = None;
            if value {
                node.extensions
                    .insert(PRESERVE_UNKNOWN_FIELDS.to_owned(), Value::Bool(true));
            }
        }
    }

    if let Some(array) = node.array.as_mut() {
        array.unique_items = None;
    }

    *schema = node.to_value();
    Ok(())
}

/// kube-core `hoist_subschema_properties`: moves the properties and the type of object variants into
/// the parent (a variant's description goes to its single property when `push_description` is set,
/// else it is dropped), and strips type and metadata from plain variants.
fn hoist_subschema_properties(
    variants: &mut [KubeSchema],
    common_object: &mut Option<ObjectValidation>,
    instance_type: &mut Option<Value>,
    push_description: bool,
    pointer: &str,
) -> Result<(), TransformError> {
    for variant in variants.iter_mut() {
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
        } else if variant.enum_values.is_none()
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
    pointer: &str,
) -> Result<(), TransformError> {
    let Some(variant_type) = variant_type else {
        return Ok(());
    };
    if let Some(common_type) = instance_type.as_ref() {
        if *common_type != variant_type {
            return Err(TransformError::ConflictingVariantTypes {
                pointer: pointer.to_owned(),
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
    pointer: &str,
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
                                pointer: pointer.to_owned(),
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
    pointer: &str,
    property: &str,
    new: &KubeSchema,
    existing: &KubeSchema,
) -> TransformError {
    let (new, existing) = (new.to_value(), existing.to_value());
    let (Value::Object(new), Value::Object(existing)) = (&new, &existing) else {
        return TransformError::PropertyClash {
            pointer: pointer.to_owned(),
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
        && differing.contains(&"enum".to_owned())
        && single_value(new)
        && single_value(existing)
    {
        return TransformError::TaggedEnum {
            pointer: pointer.to_owned(),
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
        pointer: pointer.to_owned(),
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
fn optional_enum(schema: &mut Value) {
    for_each_subschema(schema, optional_enum);
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    let Some(Value::Array(any_of)) = map.get("anyOf") else {
        return;
    };
    let [Value::Object(first), Value::Object(second)] = any_of.as_slice() else {
        return;
    };
    let second_is_null = matches!(second.get("enum"), Some(Value::Array(values)) if matches!(values.as_slice(), [Value::Null]))
        && second.get("nullable") == Some(&Value::Bool(true));
    if first.contains_key("nullable") || !second_is_null {
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
/// fields are options), and writes `minimum`/`maximum`/`multipleOf` as floats.
fn json_schema_props(schema: &Value, pointer: &str) -> Result<Value, TransformError> {
    let map = match schema {
        Value::Object(map) => map,
        Value::Bool(value) => {
            return Err(TransformError::BoolSchema {
                pointer: pointer.to_owned(),
                value: *value,
            });
        }
        _ => {
            return Err(TransformError::NotAnObject {
                pointer: pointer.to_owned(),
            });
        }
    };
    let mut props = Map::new();
    for (keyword, value) in map {
        if value.is_null() {
            continue;
        }
        let here = format!("{pointer}/{}", escape_pointer(keyword));
        let invalid = |expected: &'static str| TransformError::InvalidKeyword {
            pointer: pointer.to_owned(),
            keyword: keyword.clone(),
            expected,
        };
        let converted = match keyword.as_str() {
            "$ref" | "$schema" | "description" | "format" | "id" | "pattern" | "title"
            | "x-kubernetes-list-type" | "x-kubernetes-map-type" => {
                expect(value, Value::is_string, || invalid("a string"))?
            }
            "type" => match value {
                Value::String(_) => value.clone(),
                Value::Array(types) => {
                    let types: Vec<String> = types.iter().map(|t| format!("`{}`", render_type(t))).collect();
                    return Err(TransformError::TypeArray {
                        pointer: pointer.to_owned(),
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
            "default" | "example" | "enum" if keyword != "enum" || value.is_array() => value.clone(),
            "enum" => return Err(invalid("an array")),
            "required" | "x-kubernetes-list-map-keys" => {
                expect(value, is_string_array, || invalid("an array of strings"))?
            }
            "additionalItems" | "additionalProperties" => match value {
                Value::Bool(_) => value.clone(),
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
                Value::Object(schemas) => schema_props_map(schemas, &here, |schema, at| {
                    json_schema_props(schema, at)
                })?,
                _ => return Err(invalid("a map of schemas")),
            },
            "dependencies" => match value {
                Value::Object(dependencies) => schema_props_map(dependencies, &here, |dependency, at| {
                    if is_string_array(dependency) {
                        Ok(dependency.clone())
                    } else {
                        json_schema_props(dependency, at)
                    }
                })?,
                _ => return Err(invalid("a map of schemas or string arrays")),
            },
            "externalDocs" => external_documentation(value).ok_or_else(|| {
                invalid("an object with string `description` and `url`")
            })?,
            "x-kubernetes-validations" => validation_rules(value).ok_or_else(|| {
                invalid("an array of objects with string `rule`, `message`, `messageExpression`, `fieldPath`, `reason` and boolean `optionalOldSelf`")
            })?,
            _ => continue,
        };
        props.insert(keyword.clone(), converted);
    }
    Ok(Value::Object(props))
}

/// A copy of `value` if `check` accepts it, else the error `invalid` makes.
fn expect(
    value: &Value,
    check: fn(&Value) -> bool,
    invalid: impl FnOnce() -> TransformError,
) -> Result<Value, TransformError> {
    if check(value) {
        Ok(value.clone())
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
fn schema_props_list(schemas: &[Value], pointer: &str) -> Result<Value, TransformError> {
    schemas
        .iter()
        .enumerate()
        .map(|(index, schema)| json_schema_props(schema, &format!("{pointer}/{index}")))
        .collect::<Result<Vec<Value>, TransformError>>()
        .map(Value::Array)
}

/// `BTreeMap<String, _>` whose values `convert` handles.
fn schema_props_map(
    entries: &Map<String, Value>,
    pointer: &str,
    convert: impl Fn(&Value, &str) -> Result<Value, TransformError>,
) -> Result<Value, TransformError> {
    let mut converted = Map::new();
    for (name, entry) in entries {
        let at = format!("{pointer}/{}", escape_pointer(name));
        converted.insert(name.clone(), convert(entry, &at)?);
    }
    Ok(Value::Object(converted))
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
