//! schemars 0.8's typed schema API in schema code. Before schemars 1's
//! `json_schema!`, hand-written `JsonSchema` impls and `schema_with`
//! functions built a `SchemaObject` and set its fields:
//!
//! ```text
//! let mut schema: SchemaObject = <Vec<String>>::json_schema(gen).into();
//! schema.extensions.insert("x-kubernetes-list-type".to_owned(), "set".into());
//! schema.metadata().description = Some("Hosts.".into());
//! schema.into()
//! ```
//!
//! or wrote one as a struct literal (`SchemaObject { instance_type:
//! Some(InstanceType::String.into()), ..Default::default() }`). This module
//! evaluates those shapes to the JSON schemars serializes them to: the
//! struct's nested blocks (`metadata`, `string`, `object`, ...) and its
//! `extensions` flattened into one object, field names as schemars renames
//! them.

use serde_json::{Map, Value};
use syn::Expr;

use super::{Builder, Scope, ensure_object, eval};

/// A binding of schema code: its name and value.
pub(super) type Env = Vec<(String, Value)>;

/// The JSON key of a field of `SchemaObject`, `Metadata` or one of the
/// validation blocks; `None` for a block itself.
fn key_of(field: &str) -> Option<&'static str> {
    Some(match field {
        "id" => "$id",
        "title" => "title",
        "description" => "description",
        "default" => "default",
        "deprecated" => "deprecated",
        "read_only" => "readOnly",
        "write_only" => "writeOnly",
        "examples" => "examples",
        "instance_type" => "type",
        "format" => "format",
        "enum_values" => "enum",
        "const_value" => "const",
        "all_of" => "allOf",
        "any_of" => "anyOf",
        "one_of" => "oneOf",
        "not" => "not",
        "if_schema" => "if",
        "then_schema" => "then",
        "else_schema" => "else",
        "multiple_of" => "multipleOf",
        "maximum" => "maximum",
        "exclusive_maximum" => "exclusiveMaximum",
        "minimum" => "minimum",
        "exclusive_minimum" => "exclusiveMinimum",
        "max_length" => "maxLength",
        "min_length" => "minLength",
        "pattern" => "pattern",
        "items" => "items",
        "additional_items" => "additionalItems",
        "max_items" => "maxItems",
        "min_items" => "minItems",
        "unique_items" => "uniqueItems",
        "contains" => "contains",
        "max_properties" => "maxProperties",
        "min_properties" => "minProperties",
        "required" => "required",
        "properties" => "properties",
        "pattern_properties" => "patternProperties",
        "additional_properties" => "additionalProperties",
        "property_names" => "propertyNames",
        "reference" => "$ref",
        _ => return None,
    })
}

/// The blocks of a `SchemaObject` whose fields schemars flattens into the
/// schema, and `extensions`, whose entries it flattens too.
const BLOCKS: &[&str] = &[
    "metadata",
    "subschemas",
    "number",
    "string",
    "array",
    "object",
    "extensions",
];

/// The keys a block holds, to clear when the block is replaced whole.
fn block_keys(block: &str) -> &'static [&'static str] {
    match block {
        "metadata" => &[
            "$id",
            "title",
            "description",
            "default",
            "deprecated",
            "readOnly",
            "writeOnly",
            "examples",
        ],
        "subschemas" => &["allOf", "anyOf", "oneOf", "not", "if", "then", "else"],
        "number" => &[
            "multipleOf",
            "maximum",
            "exclusiveMaximum",
            "minimum",
            "exclusiveMinimum",
        ],
        "string" => &["maxLength", "minLength", "pattern"],
        "array" => &[
            "items",
            "additionalItems",
            "maxItems",
            "minItems",
            "uniqueItems",
            "contains",
        ],
        "object" => &[
            "maxProperties",
            "minProperties",
            "required",
            "properties",
            "patternProperties",
            "additionalProperties",
            "propertyNames",
        ],
        _ => &[],
    }
}

/// The name of the last segment of a path expression.
fn last_ident(e: &Expr) -> Option<String> {
    match e {
        Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// Where an assignment or a call writes: the binding, and the JSON key
/// (`None` for the schema itself, or a whole block such as `metadata`).
struct Place {
    binding: String,
    block: Option<String>,
    key: Option<&'static str>,
}

/// `schema`, `schema.metadata()`, `schema.metadata().description`,
/// `schema.object.as_mut().unwrap().required`...
fn place_of(e: &Expr) -> Option<Place> {
    match e {
        Expr::Path(p) => Some(Place {
            binding: p.path.get_ident()?.to_string(),
            block: None,
            key: None,
        }),
        Expr::Paren(p) => place_of(&p.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => place_of(&u.expr),
        Expr::MethodCall(m)
            if matches!(
                m.method.to_string().as_str(),
                "as_mut"
                    | "unwrap"
                    | "expect"
                    | "get_or_insert_with"
                    | "get_or_insert_default"
                    | "ensure_object"
                    | "as_object_mut"
            ) =>
        {
            place_of(&m.receiver)
        }
        // `schema.metadata()`: schemars' accessor of a block.
        Expr::MethodCall(m)
            if m.args.is_empty() && BLOCKS.contains(&m.method.to_string().as_str()) =>
        {
            let mut place = place_of(&m.receiver)?;
            place.block = Some(m.method.to_string());
            Some(place)
        }
        Expr::Field(f) => {
            let syn::Member::Named(name) = &f.member else {
                return None;
            };
            let name = name.to_string();
            let mut place = place_of(&f.base)?;
            if BLOCKS.contains(&name.as_str()) {
                place.block = Some(name);
            } else {
                place.key = Some(key_of(&name)?);
            }
            Some(place)
        }
        _ => None,
    }
}

impl<'a> Builder<'a> {
    /// A statement of schema code that changes a binding, in the typed
    /// API: an assignment to a field (`schema.format = Some(..)`) or an
    /// `insert` into one (`schema.extensions.insert(k, v)`,
    /// `schema.object().required.insert(k)`). False when it is none of
    /// those.
    pub(super) fn schema_api_statement(
        &mut self,
        e: &Expr,
        scope: &Scope<'a>,
        env: &mut Env,
        path: &str,
    ) -> bool {
        match e {
            Expr::Assign(a) => {
                let Some(place) = place_of(&a.left) else {
                    return false;
                };
                let Some(value) = self.schema_api_value(&a.right, scope, env, path) else {
                    return false;
                };
                let Some((_, target)) = env.iter_mut().rev().find(|(n, _)| *n == place.binding)
                else {
                    return false;
                };
                let target = ensure_object(target);
                match (place.key, place.block.as_deref()) {
                    (Some(key), _) => set(target, key, value),
                    // A whole block: its keys replaced by the new block's.
                    (None, Some(block)) => {
                        for key in block_keys(block) {
                            target.remove(*key);
                        }
                        if let Value::Object(fields) = value {
                            target.extend(fields);
                        }
                    }
                    (None, None) => *target = value.as_object().cloned().unwrap_or_default(),
                }
                true
            }
            Expr::MethodCall(m) if m.method == "insert" || m.method == "push" => {
                let Some(place) = place_of(&m.receiver) else {
                    return false;
                };
                let args: Vec<Value> = match m
                    .args
                    .iter()
                    .map(|a| self.schema_api_value(a, scope, env, path))
                    .collect::<Option<Vec<_>>>()
                {
                    Some(args) => args,
                    None => return false,
                };
                let Some((_, target)) = env.iter_mut().rev().find(|(n, _)| *n == place.binding)
                else {
                    return false;
                };
                let target = ensure_object(target);
                match (place.key, place.block.as_deref(), args.as_slice()) {
                    // `extensions.insert(key, value)`.
                    (None, Some("extensions"), [Value::String(k), v]) => {
                        target.insert(k.clone(), v.clone());
                    }
                    // `properties.insert(name, schema)`.
                    (Some(key), _, [Value::String(k), v]) => {
                        let map = target
                            .entry(key)
                            .or_insert_with(|| Value::Object(Map::new()));
                        let Value::Object(map) = map else {
                            return false;
                        };
                        map.insert(k.clone(), v.clone());
                    }
                    // `map.insert(key, value)` on a map of its own, or
                    // schemars 1's `schema.insert(key, value)`.
                    (None, None, [Value::String(k), v]) => {
                        target.insert(k.clone(), v.clone());
                    }
                    // `required.insert(name)`, `enum_values.push(v)`.
                    (Some(key), _, [v]) => {
                        let list = target
                            .entry(key)
                            .or_insert_with(|| Value::Array(Vec::new()));
                        let Value::Array(list) = list else {
                            return false;
                        };
                        if !list.contains(v) || key != "required" {
                            list.push(v.clone());
                        }
                    }
                    _ => return false,
                }
                true
            }
            _ => false,
        }
    }

    /// The JSON of an expression of the typed API: `SchemaObject { .. }`,
    /// `Some(..)`, `Box::new(..)`, `InstanceType::String`,
    /// `Schema::Object(..)`, `SchemaObject::default()`, `vec![..]`, a map
    /// collected from pairs; anything else is schema code
    /// ([`Builder::schema_expr`]). `None` (the Rust value) is JSON `null`:
    /// the field is unset.
    pub(super) fn schema_api_value(
        &mut self,
        e: &Expr,
        scope: &Scope<'a>,
        env: &Env,
        path: &str,
    ) -> Option<Value> {
        match e {
            Expr::Paren(p) => self.schema_api_value(&p.expr, scope, env, path),
            Expr::Group(g) => self.schema_api_value(&g.expr, scope, env, path),
            Expr::Reference(r) => self.schema_api_value(&r.expr, scope, env, path),
            Expr::Path(p) if p.path.is_ident("None") => Some(Value::Null),
            Expr::Path(p)
                if p.path.segments.len() >= 2
                    && p.path.segments[p.path.segments.len() - 2].ident == "InstanceType" =>
            {
                let name = p.path.segments.last()?.ident.to_string();
                Some(Value::String(name.to_ascii_lowercase()))
            }
            Expr::Struct(s) => {
                // `..Default::default()` adds nothing; another base would.
                if let Some(rest) = &s.rest
                    && !matches!(rest.as_ref(), Expr::Call(c)
                        if c.args.is_empty() && last_ident(&c.func).as_deref() == Some("default"))
                {
                    return None;
                }
                let mut out = Map::new();
                for field in &s.fields {
                    let syn::Member::Named(name) = &field.member else {
                        return None;
                    };
                    let name = name.to_string();
                    let value = self.schema_api_value(&field.expr, scope, env, path)?;
                    if BLOCKS.contains(&name.as_str()) {
                        if let Value::Object(fields) = value {
                            out.extend(fields);
                        }
                    } else if let Some(key) = key_of(&name) {
                        set(&mut out, key, value);
                    } else {
                        return None;
                    }
                }
                Some(Value::Object(out))
            }
            Expr::Call(c) => {
                let func = last_ident(&c.func)?;
                match (func.as_str(), c.args.len()) {
                    // `Box::new(x)`, `Schema::Object(x)`, `Value::String(x)`...
                    ("Some" | "new" | "Object" | "Single" | "Vec" | "Bool" | "String", 1)
                        if matches!(func.as_str(), "Some")
                            || matches!(&*c.func, Expr::Path(p) if p.path.segments.len() > 1
                                && (func != "new" || p.path.segments[p.path.segments.len() - 2].ident == "Box")) =>
                    {
                        self.schema_api_value(&c.args[0], scope, env, path)
                    }
                    ("default", 0) => Some(Value::Object(Map::new())),
                    // `Map::new()`, `BTreeMap::new()`, `SchemaObject::new()`..:
                    // an empty map, which `insert`s then fill.
                    ("new", 0) if matches!(&*c.func, Expr::Path(p) if p.path.segments.len() > 1) => {
                        Some(Value::Object(Map::new()))
                    }
                    // `serde_json::from_str(r#"[..]"#)`: JSON written as a string.
                    ("from_str", 1) => match self.schema_api_value(&c.args[0], scope, env, path)? {
                        Value::String(text) => serde_json::from_str(&text).ok(),
                        _ => None,
                    },
                    ("from" | "from_iter", 1) => {
                        let v = self.schema_api_value(&c.args[0], scope, env, path)?;
                        Some(pairs_to_map(v))
                    }
                    _ => self.schema_expr(e, scope, env, path),
                }
            }
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "into"
                        | "to_owned"
                        | "to_string"
                        | "clone"
                        | "into_object"
                        | "unwrap"
                        | "expect"
                        | "unwrap_or"
                        | "unwrap_or_else"
                        | "unwrap_or_default"
                        | "into_iter"
                        | "iter"
                        | "cloned"
                ) =>
            {
                self.schema_api_value(&m.receiver, scope, env, path)
            }
            Expr::MethodCall(m) if m.method == "collect" => {
                let v = self.schema_api_value(&m.receiver, scope, env, path)?;
                Some(pairs_to_map(v))
            }
            Expr::Array(a) => a
                .elems
                .iter()
                .map(|x| self.schema_api_value(x, scope, env, path))
                .collect::<Option<Vec<_>>>()
                .map(Value::Array),
            Expr::Tuple(t) => t
                .elems
                .iter()
                .map(|x| self.schema_api_value(x, scope, env, path))
                .collect::<Option<Vec<_>>>()
                .map(Value::Array),
            Expr::Macro(m) if m.mac.path.is_ident("vec") => {
                let items = m
                    .mac
                    .parse_body_with(
                        syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                    )
                    .ok()?;
                items
                    .iter()
                    .map(|x| self.schema_api_value(x, scope, env, path))
                    .collect::<Option<Vec<_>>>()
                    .map(Value::Array)
            }
            Expr::Lit(_) => eval::value_in(self.krate, scope.module, e),
            // `{ let mut map = Map::new(); map.insert(..); map }`.
            Expr::Block(b) if b.label.is_none() => {
                self.block_value(&b.block, scope, env.clone(), path)
            }
            _ => self.schema_expr(e, scope, env, path),
        }
    }
}

/// Sets `key`, or removes it for `null` (a `None`).
fn set(target: &mut Map<String, Value>, key: &str, value: Value) {
    if value.is_null() {
        target.remove(key);
    } else {
        target.insert(key.to_string(), value);
    }
}

/// A list of `[name, value]` pairs as a map (a `BTreeMap` or `Map`
/// collected from them); any other value as it is.
fn pairs_to_map(v: Value) -> Value {
    match v {
        Value::Array(items)
            if !items.is_empty()
                && items
                    .iter()
                    .all(|i| matches!(i, Value::Array(p) if p.len() == 2 && p[0].is_string())) =>
        {
            Value::Object(
                items
                    .into_iter()
                    .filter_map(|i| match i {
                        Value::Array(mut p) => {
                            let v = p.pop()?;
                            let k = p.pop()?;
                            Some((k.as_str()?.to_string(), v))
                        }
                        _ => None,
                    })
                    .collect(),
            )
        }
        other => other,
    }
}
