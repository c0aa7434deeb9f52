//! Stage A of schema generation: the raw JSON schema schemars 1 derives for a
//! type (under kube-derive's settings: Deserialize contract, every subschema
//! inlined), computed from the syn tree instead of at run time. Stage B, the
//! transforms kube applies, is in [`transform`].
//!
//! Each construct is reproduced as schemars' derive emits it: field names
//! after serde renames, `required` by the Deserialize rule, doc comments as
//! title/description, validation keywords only where the type admits them,
//! defaults serialized as the field's type would serialize them. What cannot
//! be known without running code is reported, never guessed.

mod eval;
mod foreign;
pub mod k8s;
pub mod model;
pub mod transform;
mod typed;

use std::rc::Rc;

use proc_macro2::Span;
use serde_json::{Map, Value, json};
use syn::spanned::Spanned;

use crate::manifests::derive::attrs::{self, ItemAttrs, ItemKind, RenameRule};
use crate::manifests::diagnostics::{Diagnostic, Location};
use crate::manifests::read::source::{Crate, ItemRef, Module, Resolved};

/// Where a type expression is written: its module (for name resolution)
/// and the generic parameters in force there.
#[derive(Debug, Clone)]
pub struct Scope<'a> {
    pub module: &'a Module,
    params: Rc<Vec<(String, syn::Type, Scope<'a>)>>,
}

impl<'a> Scope<'a> {
    pub fn new(module: &'a Module) -> Self {
        Scope {
            module,
            params: Rc::new(Vec::new()),
        }
    }

    fn param(&self, name: &str) -> Option<&(String, syn::Type, Scope<'a>)> {
        self.params.iter().find(|(n, _, _)| n == name)
    }
}

/// A kube-derive release: major, minor, patch.
pub type KubeDerive = (u64, u64, u64);

/// The kube-derive release whose grammar applies when the project's lock
/// file does not say.
pub const DEFAULT_KUBE_DERIVE: KubeDerive = (5, 0, 0);

/// Builds raw schemas, collecting diagnostics.
#[derive(Debug)]
pub struct Builder<'a> {
    pub krate: &'a Crate<'a>,
    pub diagnostics: Vec<Diagnostic>,
    /// The schemas of the project's k8s-openapi release and Kubernetes
    /// version (see [`crate::manifests::derive::releases`]).
    pub k8s: k8s::Table,
    /// The project's kube-derive release, whose `#[kube(...)]` grammar
    /// applies ([`DEFAULT_KUBE_DERIVE`] when unknown).
    pub kube_derive: KubeDerive,
    /// The schemars and kube-core releases whose output is derived.
    pub model: model::Model,
    /// Types being generated, to refuse recursion (kube cannot inline it).
    stack: Vec<String>,
}

impl<'a> Builder<'a> {
    pub fn new(krate: &'a Crate<'a>, k8s: k8s::Table, kube_derive: KubeDerive) -> Self {
        Builder {
            krate,
            diagnostics: Vec::new(),
            k8s,
            kube_derive,
            model: model::Model::default(),
            stack: Vec::new(),
        }
    }

    /// Whether the project's schemars is 0.8 (kube 0.70 to 1.1).
    pub fn legacy(&self) -> bool {
        self.model.schemars == model::Schemars::V0_8
    }

    /// The schema of `Option<T>` from `T`'s, as the project's schemars
    /// writes it.
    pub fn optional(&self, schema: Value) -> Value {
        if self.legacy() {
            nullable(schema)
        } else {
            allow_null(schema)
        }
    }

    /// A doc comment's title and description, as the project's schemars
    /// splits it.
    pub fn split_doc(&self, doc: &str) -> (Option<String>, Option<String>) {
        if self.legacy() {
            attrs::title_and_description_0_8(doc)
        } else {
            attrs::title_and_description(doc)
        }
    }

    /// This builder, deriving what the releases of `model` derive.
    #[must_use]
    pub fn with_model(mut self, model: model::Model) -> Self {
        self.model = model;
        self
    }

    /// Records a problem at `span` in `module`'s file.
    pub fn error(
        &mut self,
        module: &Module,
        span: Span,
        message: impl Into<String>,
        help: impl Into<String>,
        path: &str,
    ) {
        let file = &self.krate.file_of(module).path;
        let mut d = Diagnostic::new(Location::of_span(file, span), message).with_help(help);
        if !path.is_empty() {
            d = d.with_field_path(path);
        }
        self.diagnostics.push(d);
    }

    /// Records a construct whose schema needs the code to run (a hand
    /// `JsonSchema` impl, a function, a foreign type): `help` says how to
    /// make it static, if there is a way. The kind is then built with cargo,
    /// unless `--static` forbids it.
    pub fn unsupported(
        &mut self,
        module: &Module,
        span: Span,
        message: impl Into<String>,
        help: &str,
        path: &str,
    ) {
        let file = &self.krate.file_of(module).path;
        let mut d = Diagnostic::new(Location::of_span(file, span), message).needs_code();
        if !help.is_empty() {
            d = d.with_help(help);
        }
        if !path.is_empty() {
            d = d.with_field_path(path);
        }
        self.diagnostics.push(d);
    }

    fn attr_errors(&mut self, module: &Module, errors: Vec<(Span, String, String)>, path: &str) {
        let file = self.krate.file_of(module).path.clone();
        let p = (!path.is_empty()).then_some(path);
        self.diagnostics
            .extend(attrs::into_diagnostics(errors, &file, p));
    }

    /// Reads an item's attributes, reporting problems.
    pub fn read_attrs(
        &mut self,
        module: &Module,
        attrs: &[syn::Attribute],
        kind: ItemKind,
        path: &str,
    ) -> ItemAttrs {
        let mut errors = Vec::new();
        let mut a = attrs::read(attrs, kind, &mut errors);
        self.attr_errors(module, errors, path);
        for (span, message, help) in std::mem::take(&mut a.unreadable) {
            self.unsupported(module, span, message, &help, path);
        }
        a
    }

    /// The schema of a type written in `scope`.
    pub fn type_schema(&mut self, ty: &syn::Type, scope: &Scope<'a>, path: &str) -> Value {
        match ty {
            syn::Type::Reference(r) => self.type_schema(&r.elem, scope, path),
            syn::Type::Paren(p) => self.type_schema(&p.elem, scope, path),
            syn::Type::Group(g) => self.type_schema(&g.elem, scope, path),
            syn::Type::Slice(s) => object([
                ("type", "array".into()),
                ("items", self.type_schema(&s.elem, scope, path)),
            ]),
            syn::Type::Array(a) => {
                let items = self.type_schema(&a.elem, scope, path);
                match eval::usize_of(&a.len) {
                    Some(0) => json!({"type": "array", "maxItems": 0}),
                    Some(n) => object([
                        ("type", "array".into()),
                        ("items", items),
                        ("minItems", n.into()),
                        ("maxItems", n.into()),
                    ]),
                    None => {
                        self.unsupported(
                            scope.module,
                            a.len.span(),
                            "the array length is not a literal",
                            "write the length as an integer literal",
                            path,
                        );
                        json!({})
                    }
                }
            }
            syn::Type::Tuple(t) if t.elems.is_empty() => json!({"type": "null"}),
            syn::Type::Tuple(t) => {
                let items: Vec<Value> = t
                    .elems
                    .iter()
                    .map(|e| self.type_schema(e, scope, path))
                    .collect();
                let n = items.len();
                object([
                    ("type", "array".into()),
                    ("prefixItems", Value::Array(items)),
                    ("minItems", n.into()),
                    ("maxItems", n.into()),
                ])
            }
            syn::Type::Path(p) if p.qself.is_none() => self.path_schema(&p.path, scope, path),
            other => {
                self.unsupported(
                    scope.module,
                    other.span(),
                    "rsop cannot derive a schema for this kind of type",
                    "use a named type",
                    path,
                );
                json!({})
            }
        }
    }

    fn path_schema(&mut self, p: &syn::Path, scope: &Scope<'a>, path: &str) -> Value {
        // A generic parameter of the enclosing type.
        if p.segments.len() == 1
            && p.leading_colon.is_none()
            && let Some((_, ty, outer)) = scope.param(&p.segments[0].ident.to_string()).cloned()
        {
            return self.type_schema(&ty, &outer, path);
        }
        let last = p.segments.last().expect("a path has a segment");
        let args = generic_args(&last.arguments);
        match self.krate.resolve(scope.module, p) {
            Some(Resolved::Local(item)) => self.local_schema(item, &args, scope, path),
            // A name nothing binds: rustc refuses the crate, and so would
            // the build; say so now.
            Some(Resolved::External(full))
                if full.len() == 1
                    && p.leading_colon.is_none()
                    && self.krate.unbound_type(scope.module, &full[0]) =>
            {
                let name = &full[0];
                let help = match std_home(name) {
                    Some(home) => format!("import it: `use {home}::{name};`"),
                    None => format!(
                        "declare `{name}` in this crate or import it with `use`; rustc refuses this code (E0412)"
                    ),
                };
                self.error(
                    scope.module,
                    p.span(),
                    format!("cannot find type `{name}` in this scope"),
                    help,
                    path,
                );
                json!({})
            }
            Some(Resolved::External(full)) => self
                .foreign_schema(&full, &last.arguments, scope, p.span(), path)
                .unwrap_or_else(|| self.external_schema(&full, &args, scope, p.span(), path)),
            None => {
                let shown = path_string(p);
                self.unsupported(
                    scope.module,
                    p.span(),
                    format!("cannot resolve the type `{shown}`"),
                    "rsop follows `use` declarations and modules under src/; check the path",
                    path,
                );
                json!({})
            }
        }
    }

    fn external_schema(
        &mut self,
        full: &[String],
        args: &[&syn::Type],
        scope: &Scope<'a>,
        span: Span,
        path: &str,
    ) -> Value {
        // kube re-exports k8s-openapi's `ObjectMeta` as `kube::api::ObjectMeta`
        // and `kube::core::ObjectMeta`.
        let object_meta: Vec<String> = "k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta"
            .split("::")
            .map(str::to_string)
            .collect();
        let full = match full {
            [kube, module, name]
                if matches!(kube.as_str(), "kube" | "kube_core")
                    && matches!(module.as_str(), "api" | "core")
                    && name == "ObjectMeta" =>
            {
                object_meta.as_slice()
            }
            [kube_core, name] if kube_core == "kube_core" && name == "ObjectMeta" => {
                object_meta.as_slice()
            }
            _ => full,
        };
        let name = full.last().map_or("", String::as_str);
        let first = full.first().map_or("", String::as_str);
        let from_std = full.len() == 1 || matches!(first, "std" | "core" | "alloc");
        let arg = |i: usize| args.get(i).copied();
        if from_std {
            let primitive_of = |name: &str| {
                primitive(name).map(|s| if self.legacy() { legacy_integer(s) } else { s })
            };
            if let Some(s) = primitive_of(name) {
                return s;
            }
            // schemars: the primitive's schema, which 0 is not.
            if let Some(unsigned) = name.strip_prefix("NonZeroU")
                && let Some(mut s) = primitive_of(&format!("u{}", unsigned.to_ascii_lowercase()))
            {
                s["minimum"] = json!(1);
                return s;
            }
            if let Some(signed) = name.strip_prefix("NonZeroI")
                && let Some(mut s) = primitive_of(&format!("i{}", signed.to_ascii_lowercase()))
            {
                s["not"] = json!({"const": 0});
                return s;
            }
            match (name, arg(0), arg(1)) {
                ("Option", Some(t), _) => {
                    let inner = self.type_schema(t, scope, path);
                    return self.optional(inner);
                }
                ("Vec" | "VecDeque" | "LinkedList" | "BinaryHeap", Some(t), _) => {
                    return object([
                        ("type", "array".into()),
                        ("items", self.type_schema(t, scope, path)),
                    ]);
                }
                ("HashSet" | "BTreeSet", Some(t), _) => {
                    return object([
                        ("type", "array".into()),
                        ("uniqueItems", true.into()),
                        ("items", self.type_schema(t, scope, path)),
                    ]);
                }
                ("HashMap" | "BTreeMap", Some(k), Some(v)) => {
                    return self.map_schema(k, v, scope, span, path);
                }
                (
                    "Box" | "Rc" | "Arc" | "Cell" | "RefCell" | "Mutex" | "RwLock" | "Wrapping"
                    | "Reverse",
                    Some(t),
                    _,
                ) => {
                    return self.type_schema(t, scope, path);
                }
                ("Cow", _, Some(t)) | ("Cow", Some(t), None) => {
                    return self.type_schema(t, scope, path);
                }
                ("Duration", None, None) if full.len() > 1 => {
                    return json!({"type": "object", "required": ["secs", "nanos"], "properties": {
                        "secs": {"type": "integer", "format": "uint64", "minimum": 0},
                        "nanos": {"type": "integer", "format": "uint32", "minimum": 0}}});
                }
                ("PathBuf" | "Path", None, None) => return json!({"type": "string"}),
                ("Ipv4Addr", None, None) => return json!({"type": "string", "format": "ipv4"}),
                ("Ipv6Addr", None, None) => return json!({"type": "string", "format": "ipv6"}),
                ("IpAddr", None, None) => return json!({"type": "string", "format": "ip"}),
                _ => {}
            }
        }
        if first == "serde_json" {
            match name {
                "Value" => return Value::Bool(true),
                "Map" => return json!({"type": "object", "additionalProperties": true}),
                "Number" => return json!({"type": "number"}),
                _ => {}
            }
        }
        if first == "k8s_openapi" {
            let key = k8s_key(full);
            if let Some(s) = self.k8s.schema(&key) {
                return s;
            }
            self.unsupported(
                scope.module,
                span,
                format!(
                    "rsop has no schema for the k8s-openapi type `{}` (k8s-openapi {}, `{}`)",
                    full.join("::"),
                    self.k8s.k8s_openapi(),
                    self.k8s.feature()
                ),
                "rsop records the types of the core, apps, batch, networking, policy, rbac, autoscaling/v2 and storage groups and apimachinery",
                path,
            );
            return json!({});
        }
        if first == "kube" && name == "Duration" {
            return json!({"type": "string"});
        }
        self.unsupported(
            scope.module,
            span,
            format!("rsop cannot derive a schema for the external type `{}`", full.join("::")),
            &format!("rsop knows std, serde_json and k8s-openapi types, the types schemars implements for {} (its optional features), and the types of this crate; give the field `#[schemars(with = \"...\")]` with a type it knows", foreign::KNOWN_CRATES),
            path,
        );
        json!({})
    }

    /// schemars' map schema: string keys give `additionalProperties`.
    fn map_schema(
        &mut self,
        key: &syn::Type,
        value: &syn::Type,
        scope: &Scope<'a>,
        span: Span,
        path: &str,
    ) -> Value {
        let value_schema = self.type_schema(value, scope, &format!("{path}.*"));
        // schemars 0.8: a map is `additionalProperties`, whatever its key
        // (whose schema it never asks for).
        if self.legacy() {
            return object([
                ("type", "object".into()),
                ("additionalProperties", value_schema),
            ]);
        }
        let key_schema = self.type_schema(key, scope, path);
        let is_plain_string = key_schema.get("type") == Some(&json!("string"))
            && key_schema.get("enum").is_none()
            && key_schema.get("pattern").is_none();
        if is_plain_string || key_schema == Value::Bool(true) {
            return object([
                ("type", "object".into()),
                ("additionalProperties", value_schema),
            ]);
        }
        // Before schemars 1.2, a string enum key was any string.
        if self.model.schemars < model::Schemars::V1_2
            && key_schema.get("type") == Some(&json!("string"))
            && key_schema.get("pattern").is_none()
        {
            return object([
                ("type", "object".into()),
                ("additionalProperties", value_schema),
            ]);
        }
        if let Some(values) = key_schema.get("enum").and_then(Value::as_array)
            && key_schema.get("type") == Some(&json!("string"))
        {
            let props: Map<String, Value> = values
                .iter()
                .filter_map(Value::as_str)
                .map(|k| (k.to_string(), value_schema.clone()))
                .collect();
            return object([
                ("type", "object".into()),
                ("properties", Value::Object(props)),
                ("additionalProperties", false.into()),
            ]);
        }
        if key_schema.get("type") == Some(&json!("integer")) {
            let unsigned = key_schema.get("minimum") == Some(&json!(0));
            let pattern = if unsigned { "^\\d+$" } else { "^-?\\d+$" };
            return object([
                ("type", "object".into()),
                ("patternProperties", object([(pattern, value_schema)])),
                ("additionalProperties", false.into()),
            ]);
        }
        self.unsupported(
            scope.module,
            span,
            "rsop supports maps keyed by strings, string enums or integers",
            "use `BTreeMap<String, _>`",
            path,
        );
        json!({})
    }

    fn local_schema(
        &mut self,
        item: ItemRef<'a>,
        args: &[&syn::Type],
        scope: &Scope<'a>,
        path: &str,
    ) -> Value {
        let (ident, generics) = match item.item {
            syn::Item::Struct(s) => (&s.ident, &s.generics),
            syn::Item::Enum(e) => (&e.ident, &e.generics),
            syn::Item::Type(t) => (&t.ident, &t.generics),
            _ => unreachable!("resolve returns only structs, enums and type aliases"),
        };
        let item_scope = Self::bind_generics(item.module, generics, args, scope);
        if let syn::Item::Type(alias) = item.item {
            return self.type_schema(&alias.ty, &item_scope, path);
        }
        // A generic type is itself with the same arguments only:
        // `Either<A, Either<B, C>>` nests, `Tree<T>` in `Tree<T>` recurses.
        let id = format!(
            "{}::{ident}<{}>",
            item.module.path.join("::"),
            args.iter()
                .map(|a| Self::type_key(a, scope, 0))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if let Some((module, imp)) = self.krate.manual_impl_of(&ident.to_string(), "JsonSchema") {
            if let Some(schema) = self.manual_impl_schema(module, imp, path) {
                return schema;
            }
            self.unsupported(
                module,
                imp.span(),
                format!(
                    "`{ident}` implements `JsonSchema` by hand; rsop cannot evaluate that code"
                ),
                "derive `JsonSchema` instead",
                path,
            );
            return json!({});
        }
        if self.stack.contains(&id) || self.stack.len() > 64 {
            self.error(
                item.module,
                ident.span(),
                format!("`{ident}` contains itself; kube-derive cannot inline a recursive type into a CRD schema"),
                "break the recursion (for example with `serde_json::Value` and `#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]`)",
                path,
            );
            return json!({});
        }
        self.stack.push(id);
        let schema = match item.item {
            syn::Item::Struct(s) => self.struct_schema(s, &item_scope, path),
            syn::Item::Enum(e) => self.enum_schema(e, &item_scope, path),
            _ => json!({}),
        };
        self.stack.pop();
        schema
    }

    /// `ty` as text, with the generic parameters of `scope` replaced by the
    /// types they are bound to: what tells two instances of a generic type
    /// apart.
    fn type_key(ty: &syn::Type, scope: &Scope<'a>, depth: usize) -> String {
        if let syn::Type::Path(p) = ty
            && p.qself.is_none()
            && depth < 16
        {
            if let Some(ident) = p.path.get_ident()
                && let Some((_, bound, outer)) = scope.param(&ident.to_string())
            {
                return Self::type_key(bound, outer, depth + 1);
            }
            return p
                .path
                .segments
                .iter()
                .map(|s| {
                    let args = generic_args(&s.arguments);
                    if args.is_empty() {
                        s.ident.to_string()
                    } else {
                        let args: Vec<String> = args
                            .iter()
                            .map(|a| Self::type_key(a, scope, depth + 1))
                            .collect();
                        format!("{}<{}>", s.ident, args.join(", "))
                    }
                })
                .collect::<Vec<_>>()
                .join("::");
        }
        quote::ToTokens::to_token_stream(ty).to_string()
    }

    fn bind_generics(
        module: &'a Module,
        generics: &syn::Generics,
        args: &[&syn::Type],
        scope: &Scope<'a>,
    ) -> Scope<'a> {
        let params: Vec<(String, syn::Type, Scope<'a>)> = generics
            .type_params()
            .zip(args.iter())
            .map(|(p, ty)| (p.ident.to_string(), (*ty).clone(), scope.clone()))
            .collect();
        Scope {
            module,
            params: Rc::new(params),
        }
    }

    /// A struct's schema, with its container mutators.
    pub fn struct_schema(&mut self, s: &syn::ItemStruct, scope: &Scope<'a>, path: &str) -> Value {
        let cattrs = self.read_attrs(scope.module, &s.attrs, ItemKind::Container, path);
        if let Some(schema) = self.container_schema_with(&cattrs, scope, path) {
            return schema;
        }
        self.check_unsupported_container(&cattrs, scope, path);
        // schemars 0.8 reads neither `from` nor `with` on a container.
        if let Some((from, span)) = cattrs.from.as_ref().filter(|_| !self.legacy()) {
            let ty = self.parse_type(from, *span, scope, path);
            let mut schema = ty.map_or(json!({}), |t| self.type_schema(&t, scope, path));
            self.container_mutators(&mut schema, &cattrs, scope, path);
            return schema;
        }
        if let Some((with, span)) = cattrs.with.as_ref().filter(|_| !self.legacy()) {
            let ty = self.parse_type(with, *span, scope, path);
            let mut schema = ty.map_or(json!({}), |t| self.type_schema(&t, scope, path));
            self.container_mutators(&mut schema, &cattrs, scope, path);
            return schema;
        }
        if cattrs.transparent
            && let Some(field) = s.fields.iter().find(|f| {
                let mut ignored = Vec::new();
                !attrs::read(&f.attrs, ItemKind::Field, &mut ignored).skip_deserializing
            })
        {
            // serde's `transparent`: the struct is its one field.
            let fattrs = self.read_attrs(scope.module, &field.attrs, ItemKind::Field, path);
            let (mut schema, _) = self.field_type_schema(field, &fattrs, scope, path);
            self.field_mutators(&mut schema, field, &fattrs, None, None, scope, path);
            self.container_mutators(&mut schema, &cattrs, scope, path);
            return schema;
        }
        let mut schema = match &s.fields {
            syn::Fields::Named(named) => self.named_fields(
                &named.named,
                &cattrs,
                cattrs.rename_all,
                Some(s),
                scope,
                path,
            ),
            syn::Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
                let field = &unnamed.unnamed[0];
                let fattrs = self.read_attrs(scope.module, &field.attrs, ItemKind::Field, path);
                let (mut schema, _) = self.field_type_schema(field, &fattrs, scope, path);
                self.field_mutators(&mut schema, field, &fattrs, None, None, scope, path);
                schema
            }
            syn::Fields::Unnamed(unnamed) => self.tuple_fields(unnamed, scope, path),
            syn::Fields::Unit => json!({"type": "null"}),
        };
        self.container_mutators(&mut schema, &cattrs, scope, path);
        // kube 0.98 and 0.99's `CELSchema` sets the struct's rules even when
        // it has none: an empty `x-kubernetes-validations`.
        if ((0, 98, 0)..(1, 0, 0)).contains(&self.kube_derive) && derives(&s.attrs, "CELSchema") {
            ensure_object(&mut schema)
                .entry("x-kubernetes-validations")
                .or_insert_with(|| Value::Array(Vec::new()));
        }
        schema
    }

    fn tuple_fields(
        &mut self,
        unnamed: &syn::FieldsUnnamed,
        scope: &Scope<'a>,
        path: &str,
    ) -> Value {
        let mut items = Vec::new();
        for field in &unnamed.unnamed {
            let fattrs = self.read_attrs(scope.module, &field.attrs, ItemKind::Field, path);
            if fattrs.skip_deserializing {
                continue;
            }
            let (mut schema, _) = self.field_type_schema(field, &fattrs, scope, path);
            self.field_mutators(&mut schema, field, &fattrs, None, None, scope, path);
            items.push(schema);
        }
        let n = items.len();
        if n == 0 {
            json!({"type": "array", "maxItems": 0})
        } else {
            object([
                ("type", "array".into()),
                ("prefixItems", Value::Array(items)),
                ("minItems", n.into()),
                ("maxItems", n.into()),
            ])
        }
    }

    /// The object schema of named fields (a struct, or a struct variant).
    fn named_fields(
        &mut self,
        fields: &syn::punctuated::Punctuated<syn::Field, syn::Token![,]>,
        cattrs: &ItemAttrs,
        rename_all: Option<RenameRule>,
        container: Option<&syn::ItemStruct>,
        scope: &Scope<'a>,
        path: &str,
    ) -> Value {
        let mut schema = json!({"type": "object"});
        if cattrs.deny_unknown_fields {
            schema["additionalProperties"] = Value::Bool(false);
        }
        for field in fields {
            let ident = field
                .ident
                .as_ref()
                .map(std::string::ToString::to_string)
                .unwrap_or_default();
            let raw = ident.strip_prefix("r#").unwrap_or(&ident).to_string();
            let mut attr_errors = Vec::new();
            let mut fattrs = attrs::read(&field.attrs, ItemKind::Field, &mut attr_errors);
            if fattrs.skip_deserializing {
                continue;
            }
            let name = fattrs
                .rename
                .clone()
                .unwrap_or_else(|| rename_all.map_or(raw.clone(), |r| r.apply_to_field(&raw)));
            let field_path = format!("{path}.{name}");
            self.attr_errors(scope.module, attr_errors, &field_path);
            for (span, message, help) in std::mem::take(&mut fattrs.unreadable) {
                self.unsupported(scope.module, span, message, &help, &field_path);
            }
            self.check_unsupported_field(&fattrs, scope, &field_path);
            if fattrs.flatten {
                if self.legacy() {
                    let child = self.flatten_schema_0_8(field, &fattrs, scope, &field_path);
                    flatten_0_8(&mut schema, child);
                } else {
                    let child = self.flatten_schema(field, &fattrs, scope, &field_path);
                    flatten(&mut schema, child);
                }
                continue;
            }
            let (mut fschema, is_option) =
                self.field_type_schema(field, &fattrs, scope, &field_path);
            if fschema == Value::Bool(true) {
                // Deliberate deviation from kube-derive: a bare
                // `serde_json::Value` gets no `type`, which the API server
                // refuses as not structural; preserving unknown fields is
                // what such a field means.
                fschema = json!({"x-kubernetes-preserve-unknown-fields": true});
            }
            let has_default = fattrs.default.is_some() || cattrs.default.is_some();
            let optional = has_default || (!fattrs.required && is_option);
            self.field_mutators(
                &mut fschema,
                field,
                &fattrs,
                Some(cattrs),
                container,
                scope,
                &field_path,
            );
            let obj = schema.as_object_mut().expect("an object schema");
            obj.entry("properties")
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .expect("properties is an object")
                .insert(name.clone(), fschema);
            if !optional {
                obj.entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()))
                    .as_array_mut()
                    .expect("required is an array")
                    .push(Value::String(name));
            }
        }
        schema
    }

    /// The schema of a field's type (its `with` type if it has one), and
    /// whether that type is an `Option` (for the `required` rule).
    fn field_type_schema(
        &mut self,
        field: &syn::Field,
        fattrs: &ItemAttrs,
        scope: &Scope<'a>,
        path: &str,
    ) -> (Value, bool) {
        let Some(ty) = self.field_type(field, fattrs, scope, path) else {
            return (json!({}), false);
        };
        if let Some(span) = fattrs.schema_with {
            // schemars treats a `schema_with` field as required unless it
            // has a default, whatever its type.
            let schema = self.schema_with_value(fattrs, scope, path);
            if schema.is_none() {
                self.schema_with_unsupported(span, scope, path);
            }
            return (schema.unwrap_or_else(|| json!({})), false);
        }
        let option_inner = self.option_inner(&ty, scope);
        let is_option = option_inner.is_some();
        if fattrs.required
            && let Some((inner, inner_scope)) = option_inner
        {
            return (self.type_schema(&inner, &inner_scope, path), true);
        }
        (self.type_schema(&ty, scope, path), is_option)
    }

    /// The type a field's schema is of: its `with` type if it has one;
    /// `None` when that does not parse (reported).
    fn field_type(
        &mut self,
        field: &syn::Field,
        fattrs: &ItemAttrs,
        scope: &Scope<'a>,
        path: &str,
    ) -> Option<syn::Type> {
        match &fattrs.with {
            Some((with, span)) => self.parse_type(with, *span, scope, path),
            None => Some(field.ty.clone()),
        }
    }

    /// `T` when `ty` is `Option<T>` (through generic parameters), with the
    /// scope `T` is written in.
    pub(super) fn option_inner(
        &self,
        ty: &syn::Type,
        scope: &Scope<'a>,
    ) -> Option<(syn::Type, Scope<'a>)> {
        // A type a macro passed as a fragment arrives in an invisible group.
        if let syn::Type::Group(g) = ty {
            return self.option_inner(&g.elem, scope);
        }
        let syn::Type::Path(p) = ty else { return None };
        if p.qself.is_some() {
            return None;
        }
        if p.path.segments.len() == 1
            && let Some((_, t, outer)) = scope.param(&p.path.segments[0].ident.to_string())
        {
            return self.option_inner(t, outer);
        }
        let last = p.path.segments.last()?;
        if last.ident != "Option" {
            return None;
        }
        match self.krate.resolve(scope.module, &p.path)? {
            Resolved::External(full)
                if full.len() == 1 || full.first().is_some_and(|f| f == "std" || f == "core") =>
            {
                generic_args(&last.arguments)
                    .first()
                    .map(|t| ((*t).clone(), scope.clone()))
            }
            _ => None,
        }
    }

    fn parse_type(
        &mut self,
        text: &str,
        span: Span,
        scope: &Scope<'a>,
        path: &str,
    ) -> Option<syn::Type> {
        match syn::parse_str::<syn::Type>(text) {
            Ok(t) => Some(t),
            Err(e) => {
                self.error(
                    scope.module,
                    span,
                    format!("`{text}` is not a type: {e}"),
                    "write a type path",
                    path,
                );
                None
            }
        }
    }

    /// The schema `schema_with = "f"` gives, when `f` is a function of the
    /// crate whose body [`Self::schema_code`] evaluates.
    fn schema_with_value(&mut self, a: &ItemAttrs, scope: &Scope<'a>, path: &str) -> Option<Value> {
        let fn_path: syn::Path = syn::parse_str(a.schema_with_path.as_ref()?).ok()?;
        let segments: Vec<String> = fn_path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let (module, f) = self.krate.resolve_fn(scope.module, &segments)?;
        // `list_set::<Url>`: the function's type parameters, bound to the
        // types the attribute gives, which are written in the field's scope.
        let args = generic_args(&fn_path.segments.last()?.arguments);
        let fn_scope = Self::bind_generics(module, &f.sig.generics, &args, scope);
        self.schema_code_in(&fn_scope, &f.block, path)
    }

    /// The schema of a hand-written `impl JsonSchema`, when its
    /// `json_schema` body is one [`Self::schema_code`] evaluates.
    pub fn manual_impl_schema(
        &mut self,
        module: &'a Module,
        imp: &'a syn::ItemImpl,
        path: &str,
    ) -> Option<Value> {
        let body = imp.items.iter().find_map(|item| match item {
            syn::ImplItem::Fn(f) if f.sig.ident == "json_schema" => Some(&f.block),
            _ => None,
        })?;
        self.schema_code(module, body, path)
    }

    /// `schema_name()` of a hand-written `impl JsonSchema`, when it is a
    /// string rsop evaluates.
    pub fn manual_schema_name(&self, module: &'a Module, imp: &'a syn::ItemImpl) -> Option<String> {
        imp.items.iter().find_map(|item| match item {
            syn::ImplItem::Fn(f) if f.sig.ident == "schema_name" => {
                match f.block.stmts.as_slice() {
                    [syn::Stmt::Expr(e, None)] => {
                        match eval::value_in(self.krate, module, &schema_name_expr(e)) {
                            Some(Value::String(s)) => Some(s),
                            _ => None,
                        }
                    }
                    _ => None,
                }
            }
            _ => None,
        })
    }

    /// Evaluates the body of schema code (a `json_schema` impl or a
    /// `schema_with` function) of the shapes real code uses: a final
    /// `json_schema!({..})` or `json!({..})` made into a `Schema`
    /// (`.try_into().unwrap()`, `Schema::try_from(..)`), values in it from
    /// `generator.subschema_for::<T>()`, `T::json_schema(generator)`,
    /// constants, and `let` bindings of those before it. Anything else
    /// (loops, mutation, conditions on runtime values) is `None`.
    fn schema_code(&mut self, module: &'a Module, block: &syn::Block, path: &str) -> Option<Value> {
        self.schema_code_in(&Scope::new(module), block, path)
    }

    /// [`Self::schema_code`] in `scope`, which binds the generic
    /// parameters of the function (`schema_with = "list_set::<Url>"`).
    ///
    /// schemars 0.8's typed API is read too (see [`typed`]): bindings of a
    /// `SchemaObject` that later statements change field by field, and a
    /// `let Schema::Object(ref mut object) = schema else { .. }` that
    /// changes `schema` through `object`.
    fn schema_code_in(
        &mut self,
        scope: &Scope<'a>,
        block: &syn::Block,
        path: &str,
    ) -> Option<Value> {
        self.block_value(block, scope, Vec::new(), path)
    }

    /// The value of a block of schema code: its statements run on `env`
    /// (the bindings outside it), then its final expression.
    fn block_value(
        &mut self,
        block: &syn::Block,
        scope: &Scope<'a>,
        mut env: typed::Env,
        path: &str,
    ) -> Option<Value> {
        let mut views: Vec<(String, String)> = Vec::new();
        let (last, lets) = block.stmts.split_last()?;
        self.schema_statements(lets, scope, &mut env, &mut views, path)?;
        let syn::Stmt::Expr(tail, None) = last else {
            return None;
        };
        self.schema_api_value(tail, scope, &env, path)
    }

    /// Runs statements of schema code on `env`: `let` bindings, changes of
    /// the typed API (see [`typed`]), and views of a binding (`let
    /// Schema::Object(ref mut o) = schema else { .. };`, `if let
    /// Schema::Object(ref mut o) = schema { .. }`) whose changes reach it.
    /// `views` holds (binding, view) pairs. `None` on any other statement.
    fn schema_statements(
        &mut self,
        stmts: &[syn::Stmt],
        scope: &Scope<'a>,
        env: &mut typed::Env,
        views: &mut Vec<(String, String)>,
        path: &str,
    ) -> Option<()> {
        /// `Schema::Object(ref mut o)` matched against a binding: the view's
        /// name and the binding's.
        fn object_view(pat: &syn::Pat, init: &syn::Expr) -> Option<(String, String)> {
            let syn::Pat::TupleStruct(t) = pat else {
                return None;
            };
            if t.path.segments.last().is_none_or(|s| s.ident != "Object") {
                return None;
            }
            let [syn::Pat::Ident(name)] = t.elems.iter().collect::<Vec<_>>()[..] else {
                return None;
            };
            let syn::Expr::Path(of) = init else {
                return None;
            };
            Some((name.ident.to_string(), of.path.get_ident()?.to_string()))
        }
        /// Binds `view` to the value of `viewed`, whose value follows it.
        fn open_view(
            (view, viewed): (String, String),
            env: &mut typed::Env,
            views: &mut Vec<(String, String)>,
        ) -> Option<()> {
            let value = env.iter().rev().find(|(n, _)| *n == viewed)?.1.clone();
            views.push((viewed, view.clone()));
            env.push((view, value));
            Some(())
        }
        for stmt in stmts {
            match stmt {
                syn::Stmt::Local(local) => {
                    let init = local.init.as_ref()?;
                    // `let Schema::Object(ref mut object) = schema else { .. };`
                    if let Some(view) = object_view(&local.pat, &init.expr) {
                        open_view(view, env, views)?;
                        continue;
                    }
                    let name = match &local.pat {
                        syn::Pat::Type(t) => match t.pat.as_ref() {
                            syn::Pat::Ident(name) => name.ident.to_string(),
                            _ => return None,
                        },
                        syn::Pat::Ident(name) if init.diverge.is_none() => name.ident.to_string(),
                        _ => return None,
                    };
                    let value = self.schema_api_value(&init.expr, scope, env, path)?;
                    env.push((name, value));
                }
                // `if let Schema::Object(ref mut object) = schema { .. }`
                syn::Stmt::Expr(syn::Expr::If(i), _) if i.else_branch.is_none() => {
                    let syn::Expr::Let(cond) = i.cond.as_ref() else {
                        return None;
                    };
                    open_view(object_view(&cond.pat, &cond.expr)?, env, views)?;
                    self.schema_statements(&i.then_branch.stmts, scope, env, views, path)?;
                }
                syn::Stmt::Expr(e, Some(_)) => {
                    if !self.schema_api_statement(e, scope, env, path) {
                        return None;
                    }
                }
                _ => return None,
            }
            for (viewed, view) in views.iter() {
                let value = env.iter().rev().find(|(n, _)| n == view)?.1.clone();
                if let Some(slot) = env.iter_mut().rev().find(|(n, _)| n == viewed) {
                    slot.1 = value;
                }
            }
        }
        Some(())
    }

    fn schema_expr(
        &mut self,
        e: &syn::Expr,
        scope: &Scope<'a>,
        env: &[(String, Value)],
        path: &str,
    ) -> Option<Value> {
        use syn::Expr;
        match e {
            Expr::Paren(p) => self.schema_expr(&p.expr, scope, env, path),
            Expr::Group(g) => self.schema_expr(&g.expr, scope, env, path),
            Expr::Reference(r) => self.schema_expr(&r.expr, scope, env, path),
            Expr::Macro(m)
                if m.mac
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "json_schema" || s.ident == "json") =>
            {
                let tokens = m.mac.tokens.clone();
                eval::json_tokens_with(tokens, &mut |x| self.schema_expr(x, scope, env, path))
            }
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "unwrap"
                        | "expect"
                        | "unwrap_or"
                        | "unwrap_or_else"
                        | "unwrap_or_default"
                        | "try_into"
                        | "into"
                        | "clone"
                        | "to_owned"
                ) =>
            {
                self.schema_expr(&m.receiver, scope, env, path)
            }
            // `generator.subschema_for::<T>()`: the inlined schema of `T`.
            Expr::MethodCall(m) if m.method == "subschema_for" => {
                let turbofish = m.turbofish.as_ref()?;
                let [syn::GenericArgument::Type(ty)] =
                    turbofish.args.iter().collect::<Vec<_>>()[..]
                else {
                    return None;
                };
                Some(self.type_schema(ty, scope, path))
            }
            Expr::Call(c) => {
                let Expr::Path(func) = c.func.as_ref() else {
                    return None;
                };
                let last = func.path.segments.last()?.ident.to_string();
                match (last.as_str(), c.args.len()) {
                    // `serde_json::to_value(generator.subschema_for::<T>())`
                    // is the schema as JSON, for a `json!` literal.
                    ("from" | "try_from" | "from_value" | "to_value", 1) => {
                        self.schema_expr(&c.args[0], scope, env, path)
                    }
                    // `T::json_schema(generator)`, `<T as JsonSchema>::json_schema(..)`.
                    ("json_schema", 1) => {
                        let ty: syn::Type = if let Some(q) = &func.qself {
                            (*q.ty).clone()
                        } else {
                            let mut p = func.path.clone();
                            p.segments.pop();
                            p.segments.pop_punct();
                            syn::Type::Path(syn::TypePath {
                                qself: None,
                                path: p,
                            })
                        };
                        Some(self.type_schema(&ty, scope, path))
                    }
                    // Another schema function of the crate, given the
                    // generator or nothing.
                    (_, 0 | 1) => {
                        let segments: Vec<String> = func
                            .path
                            .segments
                            .iter()
                            .map(|s| s.ident.to_string())
                            .collect();
                        match self.krate.resolve_fn(scope.module, &segments) {
                            Some((m, f)) => self.schema_code(m, &f.block, path),
                            None => eval::value_in(self.krate, scope.module, e),
                        }
                    }
                    _ => eval::value_in(self.krate, scope.module, e),
                }
            }
            // A condition on constants picks the branch.
            Expr::If(i) => {
                let Value::Bool(cond) = eval::value_in(self.krate, scope.module, &i.cond)? else {
                    return None;
                };
                if cond {
                    match i.then_branch.stmts.as_slice() {
                        [syn::Stmt::Expr(b, None)] => self.schema_expr(b, scope, env, path),
                        _ => None,
                    }
                } else {
                    let (_, other) = i.else_branch.as_ref()?;
                    self.schema_expr(other, scope, env, path)
                }
            }
            Expr::Block(b) => match b.block.stmts.as_slice() {
                [syn::Stmt::Expr(inner, None)] => self.schema_expr(inner, scope, env, path),
                _ => None,
            },
            Expr::Path(p) if p.path.get_ident().is_some() => {
                let name = p.path.get_ident()?.to_string();
                env.iter()
                    .rev()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.clone())
                    .or_else(|| eval::value_in(self.krate, scope.module, e))
            }
            _ => eval::value_in(self.krate, scope.module, e),
        }
    }

    /// A container's `schema_with` replaces its whole schema: the schema
    /// its function gives, when [`Self::schema_code`] evaluates it, with the
    /// container's own metadata on top. schemars 0.8 reads `schema_with` on
    /// fields and variants only, and derives the container as if it were not
    /// there.
    fn container_schema_with(
        &mut self,
        a: &ItemAttrs,
        scope: &Scope<'a>,
        path: &str,
    ) -> Option<Value> {
        a.schema_with?;
        if self.legacy() {
            return None;
        }
        let mut schema = self.schema_with_value(a, scope, path)?;
        self.container_mutators(&mut schema, a, scope, path);
        Some(schema)
    }

    /// A container's `schema_with` rsop could not evaluate (see
    /// [`Self::container_schema_with`]), and transforms.
    fn check_unsupported_container(&mut self, a: &ItemAttrs, scope: &Scope<'a>, path: &str) {
        if let Some(span) = a.schema_with.filter(|_| !self.legacy()) {
            self.schema_with_unsupported(span, scope, path);
        }
        self.check_transform(a, scope, path);
    }

    fn schema_with_unsupported(&mut self, span: Span, scope: &Scope<'a>, path: &str) {
        self.unsupported(
            scope.module,
            span,
            "`schema_with` runs a function rsop cannot evaluate",
            "describe the field with `#[schemars(with = \"...\")]` and a type rsop reads",
            path,
        );
    }

    fn check_transform(&mut self, a: &ItemAttrs, scope: &Scope<'a>, path: &str) {
        if let Some(span) = a.transform {
            self.unsupported(
                scope.module,
                span,
                "`transform` runs a function rsop cannot evaluate",
                "",
                path,
            );
        }
    }

    fn check_unsupported_field(&mut self, a: &ItemAttrs, scope: &Scope<'a>, path: &str) {
        self.check_transform(a, scope, path);
    }

    /// schemars' field mutators, in its order: title/description,
    /// deprecated, examples, validation, readOnly/writeOnly, default,
    /// extend; then `#[x_kube]` rules.
    #[allow(clippy::too_many_arguments)]
    fn field_mutators(
        &mut self,
        schema: &mut Value,
        field: &syn::Field,
        fattrs: &ItemAttrs,
        cattrs: Option<&ItemAttrs>,
        container: Option<&syn::ItemStruct>,
        scope: &Scope<'a>,
        path: &str,
    ) {
        self.metadata(schema, fattrs, scope, path);
        self.validation(schema, &fattrs.validation, scope, path);
        if fattrs.skip_serializing
            && let Value::Object(o) = schema
        {
            o.insert("writeOnly".into(), Value::Bool(true));
        }
        if !fattrs.skip_serializing
            && let Some(default) = self.field_default(field, fattrs, cattrs, container, scope, path)
            && let Value::Object(o) = schema
        {
            o.insert("default".into(), default);
        }
        self.extend(schema, fattrs, scope, path);
        self.kube_rules(schema, fattrs, scope, path);
    }

    /// Container (and variant) mutators: title/description, deprecated,
    /// examples, extend, and `#[x_kube]` container rules.
    fn container_mutators(
        &mut self,
        schema: &mut Value,
        cattrs: &ItemAttrs,
        scope: &Scope<'a>,
        path: &str,
    ) {
        self.metadata(schema, cattrs, scope, path);
        self.extend(schema, cattrs, scope, path);
        self.kube_rules(schema, cattrs, scope, path);
    }

    fn metadata(&mut self, schema: &mut Value, a: &ItemAttrs, scope: &Scope<'a>, path: &str) {
        let (doc_title, doc_description) = a
            .doc
            .as_deref()
            .map(|d| self.split_doc(d))
            .unwrap_or_default();
        let title = match &a.title {
            Some(e) => self.eval_string(e, scope, path),
            None => doc_title,
        };
        let description = match &a.description {
            Some(e) => self.eval_string(e, scope, path),
            None => doc_description,
        };
        let has_meta = title.as_ref().is_some_and(|t| !t.is_empty())
            || description.as_ref().is_some_and(|d| !d.is_empty())
            || a.deprecated
            || !a.examples.is_empty();
        if !has_meta {
            return;
        }
        let obj = ensure_object(schema);
        if let Some(t) = title.filter(|t| !t.is_empty()) {
            obj.insert("title".into(), Value::String(t));
        }
        if let Some(d) = description.filter(|d| !d.is_empty()) {
            obj.insert("description".into(), Value::String(d));
        }
        if a.deprecated {
            obj.insert("deprecated".into(), Value::Bool(true));
        }
        if !a.examples.is_empty() {
            let mut values = Vec::new();
            for e in &a.examples {
                if let Some(v) = self.eval_example(e, scope, path) {
                    values.push(v);
                }
            }
            ensure_object(schema).insert("examples".into(), Value::Array(values));
        }
    }

    fn eval_string(&mut self, e: &syn::Expr, scope: &Scope<'a>, path: &str) -> Option<String> {
        let s = attrs::expr_str(e).or_else(|| match eval::value_in(self.krate, scope.module, e) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        });
        if s.is_none() {
            self.unsupported(
                scope.module,
                e.span(),
                "rsop cannot evaluate this text",
                "write it as a string literal or a constant of this crate",
                path,
            );
        }
        s
    }

    fn validation(
        &mut self,
        schema: &mut Value,
        v: &attrs::Validation,
        scope: &Scope<'a>,
        path: &str,
    ) {
        if v.is_empty() {
            return;
        }
        let types = type_set(schema);
        let has = |t: &str| {
            types
                .iter()
                .any(|x| x == t || (t == "number" && x == "integer"))
        };
        let num = |b: &mut Self, e: &Option<syn::Expr>| {
            e.as_ref().and_then(|e| b.eval_number(e, scope, path))
        };
        let length_min = num(self, &v.length_min);
        let length_max = num(self, &v.length_max);
        let range_min = num(self, &v.range_min);
        let range_max = num(self, &v.range_max);
        let pattern = v
            .pattern
            .as_ref()
            .and_then(|e| self.eval_string(e, scope, path));
        let contains = v
            .contains
            .as_ref()
            .and_then(|e| self.eval_string(e, scope, path));
        let Value::Object(o) = schema else { return };
        if has("string") {
            if let Some(n) = &length_min {
                o.insert("minLength".into(), n.clone());
            }
            if let Some(n) = &length_max {
                o.insert("maxLength".into(), n.clone());
            }
        }
        if has("array") {
            if let Some(n) = &length_min {
                o.insert("minItems".into(), n.clone());
            }
            if let Some(n) = &length_max {
                o.insert("maxItems".into(), n.clone());
            }
        }
        if has("number") {
            if let Some(n) = range_min {
                o.insert("minimum".into(), n);
            }
            if let Some(n) = range_max {
                o.insert("maximum".into(), n);
            }
        }
        if has("string") {
            if let Some(p) = pattern {
                o.insert("pattern".into(), Value::String(p));
            }
            if let Some(c) = contains {
                o.insert("pattern".into(), Value::String(escape_regex(&c)));
            }
        }
        if let Some(f) = v.format {
            o.insert("format".into(), Value::String(f.into()));
        }
        if let Some(inner) = &v.inner
            && let Some(items) = o.get_mut("items")
            && items.is_object()
        {
            let mut items_value = items.take();
            self.validation(&mut items_value, inner, scope, path);
            if let Some(Value::Object(o)) = Some(&mut *schema)
                && let Some(slot) = o.get_mut("items")
            {
                *slot = items_value;
            }
        }
    }

    fn extend(&mut self, schema: &mut Value, a: &ItemAttrs, scope: &Scope<'a>, path: &str) {
        for (key, tokens, span) in &a.extend {
            match eval::json_tokens(tokens.clone()) {
                Some(v) => {
                    ensure_object(schema).insert(key.clone(), v);
                }
                None => self.unsupported(
                    scope.module,
                    *span,
                    format!("rsop cannot evaluate the value of `extend(\"{key}\" = ...)`"),
                    "use JSON literals (`true`, `\"text\"`, `[...]`, `{...}`)",
                    path,
                ),
            }
        }
    }

    /// `#[x_kube(validation = ..., merge_strategy = ...)]`.
    fn kube_rules(&mut self, schema: &mut Value, a: &ItemAttrs, scope: &Scope<'a>, path: &str) {
        for rule in &a.kube_validations {
            match eval::cel_rule(rule) {
                Some(r) => push_validation(schema, r),
                None => self.unsupported(
                    scope.module,
                    rule.span(),
                    "rsop cannot evaluate this validation rule",
                    "write a string literal, a `(rule, message)` pair or a `Rule::new(..)` chain",
                    path,
                ),
            }
        }
        if let Some(strategy) = &a.merge_strategy {
            match eval::merge_strategy(strategy) {
                Some(keys) => {
                    let obj = ensure_object(schema);
                    for (k, v) in keys {
                        obj.insert(k, v);
                    }
                }
                None => self.unsupported(
                    scope.module,
                    strategy.span(),
                    "rsop cannot evaluate this merge strategy",
                    "write a `ListMerge`, `MapMerge` or `StructMerge` variant (or one in its `MergeStrategy` variant) with constant keys",
                    path,
                ),
            }
        }
    }

    /// schemars 0.8's `json_schema_for_flatten`: the schema of the field's
    /// type, of `T` for an `Option<T>` (whose `required` then goes, unless
    /// the field is `required`), with no field metadata.
    fn flatten_schema_0_8(
        &mut self,
        field: &syn::Field,
        fattrs: &ItemAttrs,
        scope: &Scope<'a>,
        path: &str,
    ) -> Value {
        let Some(ty) = self.field_type(field, fattrs, scope, path) else {
            return json!({});
        };
        match self.option_inner(&ty, scope) {
            Some((inner, inner_scope)) => {
                let mut schema = self.type_schema(&inner, &inner_scope, path);
                if !fattrs.required
                    && let Value::Object(o) = &mut schema
                {
                    o.remove("required");
                }
                schema
            }
            None => self.type_schema(&ty, scope, path),
        }
    }

    /// schemars' `json_schema_for_flatten`: the child's schema with
    /// `additionalProperties: false` removed, and `required` dropped when it
    /// is an `Option`.
    fn flatten_schema(
        &mut self,
        field: &syn::Field,
        fattrs: &ItemAttrs,
        scope: &Scope<'a>,
        path: &str,
    ) -> Value {
        let option_inner = self.option_inner(&field.ty, scope);
        let is_option = option_inner.is_some();
        let mut schema = match option_inner {
            Some((inner, inner_scope)) => self.type_schema(&inner, &inner_scope, path),
            None => self.type_schema(&field.ty, scope, path),
        };
        let is_enum = ["enum", "oneOf", "anyOf"]
            .iter()
            .any(|k| schema.get(k).is_some());
        if is_enum && self.model.schemars < model::Schemars::V1_1 {
            // schemars 1.0 flattens an enum's schema as it is, which serde
            // does not write; rsop models 1.1's corrected output only.
            self.unsupported(
                scope.module,
                field.span(),
                "a flattened enum, whose schema schemars 1.0 derives otherwise than 1.1 and later",
                "update schemars to 1.1 or later",
                path,
            );
            return json!({});
        }
        // An all-unit external enum flattens to one object per variant.
        if let Value::Object(o) = &mut schema {
            if o.get("type") == Some(&json!("string"))
                && let Some(Value::Array(names)) = o.get("enum").cloned()
            {
                o.remove("type");
                o.remove("enum");
                let variants: Vec<Value> = names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|n| json!({"type": "object", "properties": {n: {"type": "null"}}, "required": [n]}))
                    .collect();
                o.insert("oneOf".into(), Value::Array(variants));
            }
            if is_option && !fattrs.required {
                o.remove("required");
                if let Some(one_of) = o.remove("oneOf") {
                    o.insert("anyOf".into(), json!([{"oneOf": one_of}, {}]));
                } else if let Some(Value::Array(any)) = o.get_mut("anyOf") {
                    any.push(json!({}));
                }
            }
            strip_closed(o);
            for key in ["allOf", "anyOf", "oneOf"] {
                if let Some(Value::Array(items)) = o.get_mut(key) {
                    for item in items {
                        if let Value::Object(io) = item {
                            strip_closed(io);
                        }
                    }
                }
            }
        }
        schema
    }

    /// An enum's schema, by its serde representation.
    pub fn enum_schema(&mut self, e: &syn::ItemEnum, scope: &Scope<'a>, path: &str) -> Value {
        let cattrs = self.read_attrs(scope.module, &e.attrs, ItemKind::Container, path);
        if let Some(schema) = self.container_schema_with(&cattrs, scope, path) {
            return schema;
        }
        self.check_unsupported_container(&cattrs, scope, path);
        // `from`/`try_from` (the Deserialize contract reads the other type)
        // and a container `with` replace the enum's own schema.
        if let Some((other, span)) = cattrs
            .from
            .as_ref()
            .or(cattrs.with.as_ref())
            .filter(|_| !self.legacy())
        {
            let ty = self.parse_type(other, *span, scope, path);
            let mut schema = ty.map_or(json!({}), |t| self.type_schema(&t, scope, path));
            self.container_mutators(&mut schema, &cattrs, scope, path);
            return schema;
        }
        let mut plain_units = Vec::new();
        let mut others = Vec::new();
        let mut any_untagged_variant = false;
        for variant in &e.variants {
            let vattrs = self.read_attrs(scope.module, &variant.attrs, ItemKind::Variant, path);
            if vattrs.skip_deserializing {
                continue;
            }
            let name = vattrs.rename.clone().unwrap_or_else(|| {
                let raw = variant.ident.to_string();
                cattrs
                    .rename_all
                    .map_or(raw.clone(), |r| r.apply_to_variant(&raw))
            });
            let vpath = format!("{path}.{name}");
            // schemars 0.8 reads neither `rename_all_fields` nor variant-level `untagged`.
            let legacy = self.legacy();
            let field_rule = vattrs
                .rename_all
                .or(cattrs.rename_all_fields.filter(|_| !legacy));
            let body = |b: &mut Self| -> Value {
                match &variant.fields {
                    syn::Fields::Unit => json!({"type": "null"}),
                    syn::Fields::Unnamed(u) if u.unnamed.len() == 1 => {
                        let field = &u.unnamed[0];
                        let fattrs =
                            b.read_attrs(scope.module, &field.attrs, ItemKind::Field, &vpath);
                        let (mut s, _) = b.field_type_schema(field, &fattrs, scope, &vpath);
                        b.field_mutators(&mut s, field, &fattrs, None, None, scope, &vpath);
                        s
                    }
                    syn::Fields::Unnamed(u) => b.tuple_fields(u, scope, &vpath),
                    syn::Fields::Named(n) => {
                        let variant_container = ItemAttrs {
                            deny_unknown_fields: cattrs.deny_unknown_fields,
                            ..ItemAttrs::default()
                        };
                        b.named_fields(
                            &n.named,
                            &variant_container,
                            field_rule,
                            None,
                            scope,
                            &vpath,
                        )
                    }
                }
            };
            if cattrs.untagged || (vattrs.untagged && !legacy) {
                any_untagged_variant |= vattrs.untagged;
                let mut s = body(self);
                self.container_mutators(&mut s, &vattrs, scope, &vpath);
                others.push(s);
                continue;
            }
            if let Some(tag) = &cattrs.tag {
                let mut s = match (&variant.fields, &cattrs.content) {
                    (syn::Fields::Unit, None) => json!({"type": "object"}),
                    (_, None) => body(self),
                    (syn::Fields::Unit, Some(_)) => json!({"type": "object"}),
                    (_, Some(content)) => object([
                        ("type", "object".into()),
                        ("properties", object([(content.as_str(), body(self))])),
                        ("required", json!([content])),
                    ]),
                };
                let obj = ensure_object(&mut s);
                obj.insert("type".into(), json!("object"));
                let mut props = Map::new();
                props.insert(tag.clone(), json!({"type": "string", "const": name}));
                if let Some(Value::Object(existing)) = obj.remove("properties") {
                    props.extend(existing);
                }
                obj.insert("properties".into(), Value::Object(props));
                let mut required = vec![json!(tag)];
                if let Some(Value::Array(existing)) = obj.remove("required") {
                    required.extend(existing);
                }
                obj.insert("required".into(), Value::Array(required));
                if cattrs.deny_unknown_fields {
                    obj.entry("additionalProperties")
                        .or_insert(Value::Bool(false));
                }
                self.container_mutators(&mut s, &vattrs, scope, &vpath);
                others.push(s);
                continue;
            }
            let has_metadata = vattrs.doc.is_some()
                || vattrs.title.is_some()
                || vattrs.description.is_some()
                || vattrs.deprecated
                || !vattrs.examples.is_empty()
                || !vattrs.extend.is_empty()
                || vattrs.with.is_some();
            if matches!(variant.fields, syn::Fields::Unit) && !has_metadata {
                plain_units.push(json!(name));
                continue;
            }
            let mut s = if matches!(variant.fields, syn::Fields::Unit) && vattrs.with.is_none() {
                json!({"type": "string", "const": name})
            } else {
                let inner = if let Some((with, span)) = &vattrs.with {
                    let ty = self.parse_type(with, *span, scope, &vpath);
                    ty.map_or(json!({}), |t| self.type_schema(&t, scope, &vpath))
                } else {
                    body(self)
                };
                object([
                    ("type", "object".into()),
                    ("properties", object([(name.as_str(), inner)])),
                    ("required", json!([name])),
                    ("additionalProperties", false.into()),
                ])
            };
            self.container_mutators(&mut s, &vattrs, scope, &vpath);
            others.push(s);
        }
        let mut schema = if cattrs.untagged || any_untagged_variant {
            let mut items = Vec::new();
            if !plain_units.is_empty() {
                items.push(json!({"type": "string", "enum": plain_units}));
            }
            items.extend(others);
            object([("anyOf", Value::Array(items))])
        } else if cattrs.tag.is_some() {
            object([("oneOf", Value::Array(others))])
        } else if others.is_empty() {
            if plain_units.is_empty() {
                Value::Bool(false)
            } else {
                json!({"type": "string", "enum": plain_units})
            }
        } else {
            let mut items = Vec::new();
            if !plain_units.is_empty() {
                items.push(json!({"type": "string", "enum": plain_units}));
            }
            items.extend(others);
            object([("oneOf", Value::Array(items))])
        };
        self.container_mutators(&mut schema, &cattrs, scope, path);
        schema
    }
}

/// Whether `attrs` derive `name` (by the last segment of its path).
pub fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("derive")
            && a.parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            )
            .is_ok_and(|paths| {
                paths
                    .iter()
                    .any(|p| p.segments.last().is_some_and(|s| s.ident == name))
            })
    })
}

/// A type's declared generic arguments (`Vec<T>` gives `[T]`).
pub(crate) fn generic_args(args: &syn::PathArguments) -> Vec<&syn::Type> {
    match args {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|arg| match arg {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The std module of a type people use without importing it, for the
/// `use` line the error suggests.
fn std_home(name: &str) -> Option<&'static str> {
    Some(match name {
        "HashMap" | "BTreeMap" | "HashSet" | "BTreeSet" | "VecDeque" | "BinaryHeap"
        | "LinkedList" => "std::collections",
        "Arc" => "std::sync",
        "Rc" => "std::rc",
        "Duration" => "std::time",
        "PathBuf" | "Path" => "std::path",
        "Cow" => "std::borrow",
        "IpAddr" | "Ipv4Addr" | "Ipv6Addr" | "SocketAddr" => "std::net",
        "NonZeroU8" | "NonZeroU16" | "NonZeroU32" | "NonZeroU64" | "NonZeroUsize" => "std::num",
        _ => return None,
    })
}

fn path_string(p: &syn::Path) -> String {
    p.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// The table key of a k8s-openapi path: version modules (`v1_34`) are
/// re-exported at the crate root, so they are dropped.
fn k8s_key(full: &[String]) -> String {
    full.iter()
        .filter(|s| !(s.starts_with("v1_") && s[3..].chars().all(|c| c.is_ascii_digit())))
        .cloned()
        .collect::<Vec<_>>()
        .join("::")
}

/// schemars' schemas of primitives.
fn primitive(name: &str) -> Option<Value> {
    Some(match name {
        "String" | "str" => json!({"type": "string"}),
        "bool" => json!({"type": "boolean"}),
        "f32" => json!({"type": "number", "format": "float"}),
        "f64" => json!({"type": "number", "format": "double"}),
        "i8" => json!({"type": "integer", "format": "int8", "minimum": -128, "maximum": 127}),
        "i16" => json!({"type": "integer", "format": "int16", "minimum": -32768, "maximum": 32767}),
        "i32" => json!({"type": "integer", "format": "int32"}),
        "i64" => json!({"type": "integer", "format": "int64"}),
        "i128" => json!({"type": "integer", "format": "int128"}),
        "isize" => json!({"type": "integer", "format": "int"}),
        "u8" => json!({"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}),
        "u16" => json!({"type": "integer", "format": "uint16", "minimum": 0, "maximum": 65535}),
        "u32" => json!({"type": "integer", "format": "uint32", "minimum": 0}),
        "u64" => json!({"type": "integer", "format": "uint64", "minimum": 0}),
        "u128" => json!({"type": "integer", "format": "uint128", "minimum": 0}),
        "usize" => json!({"type": "integer", "format": "uint", "minimum": 0}),
        "char" => json!({"type": "string", "minLength": 1, "maxLength": 1}),
        _ => return None,
    })
}

/// schemars' `allow_null`: the schema of `Option<T>` from that of `T`.
/// A JSON object of `entries`, moved in: `json!` would copy each value
/// that is not a literal, a cost that grows with the depth of the types.
pub fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

pub fn allow_null(schema: Value) -> Value {
    match schema {
        Value::Bool(true) => Value::Bool(true),
        Value::Bool(false) => json!({"type": "null"}),
        Value::Object(mut o) => {
            if o.len() == 1
                && let Some(Value::Array(any)) = o.get("anyOf")
                && any.iter().any(|s| s.get("type") == Some(&json!("null")))
            {
                return Value::Object(o);
            }
            if ["if", "allOf", "anyOf", "oneOf", "$ref"]
                .iter()
                .any(|k| o.contains_key(*k))
            {
                return object([(
                    "anyOf",
                    Value::Array(vec![Value::Object(o), json!({"type": "null"})]),
                )]);
            }
            match o.get_mut("type") {
                Some(Value::String(t)) if t != "null" => {
                    let t = t.clone();
                    o.insert("type".into(), json!([t, "null"]));
                }
                Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => {
                    types.push(json!("null"));
                }
                _ => {}
            }
            if let Some(c) = o.remove("const") {
                if c.is_null() {
                    o.insert("const".into(), c);
                } else {
                    o.insert("enum".into(), json!([c, null]));
                }
            } else if let Some(Value::Array(values)) = o.get_mut("enum")
                && !values.iter().any(Value::is_null)
            {
                values.push(Value::Null);
            }
            Value::Object(o)
        }
        other => other,
    }
}

/// schemars 0.8's `Option<T>`: `T`'s schema with `nullable: true`
/// (`option_nullable`, which kube-derive's openapi3 settings turn on).
fn nullable(schema: Value) -> Value {
    let mut schema = schema;
    ensure_object(&mut schema).insert("nullable".into(), Value::Bool(true));
    schema
}

/// schemars 0.8's integers: a format, and `minimum: 0` for unsigned ones;
/// no bounds otherwise (schemars 1 bounds 8 and 16 bit integers).
fn legacy_integer(mut schema: Value) -> Value {
    if schema.get("type") == Some(&json!("integer"))
        && let Value::Object(o) = &mut schema
    {
        o.remove("maximum");
        let unsigned = o
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| f.starts_with("uint"));
        if !unsigned {
            o.remove("minimum");
        }
    }
    schema
}

/// Whether a schemars 0.8 schema, as rsop's raw schemas write it, has an
/// object validation block (`SchemaObject::object`): every struct's
/// schema has one, even without properties; an enum's or a scalar's has
/// none.
fn has_object_block(o: &Map<String, Value>) -> bool {
    [
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "maxProperties",
        "minProperties",
        "propertyNames",
    ]
    .iter()
    .any(|k| o.contains_key(*k))
        || (o.get("type") == Some(&json!("object"))
            && !["oneOf", "anyOf", "allOf"]
                .iter()
                .any(|k| o.contains_key(*k)))
}

/// schemars 0.8's `Schema::flatten(parent, child)`: a merge, keyword by
/// keyword, in which the parent's value wins, but for properties (the
/// child's win), `required` (the union), `enum` (concatenated) and
/// `additionalProperties` (see below).
pub fn flatten_0_8(parent: &mut Value, child: Value) {
    let is_null = |v: &Value| v.get("type") == Some(&json!("null"));
    if is_null(parent) {
        *parent = child;
        return;
    }
    if is_null(&child) {
        return;
    }
    let mut child = child;
    let c = std::mem::take(ensure_object(&mut child));
    let p = ensure_object(parent);
    let both_objects = has_object_block(p) && has_object_block(&c);
    let parent_additional = p.remove("additionalProperties");
    let mut child_additional = None;
    for (key, value) in c {
        match key.as_str() {
            "additionalProperties" => child_additional = Some(value),
            "properties" | "patternProperties" => match p.get_mut(&key) {
                Some(Value::Object(existing)) => {
                    if let Value::Object(more) = value {
                        existing.extend(more);
                    }
                }
                _ => {
                    p.insert(key, value);
                }
            },
            "required" | "enum" | "examples" => match p.get_mut(&key) {
                Some(Value::Array(existing)) => {
                    if let Value::Array(more) = value {
                        for v in more {
                            if key != "required" || !existing.contains(&v) {
                                existing.push(v);
                            }
                        }
                    }
                }
                _ => {
                    p.insert(key, value);
                }
            },
            "type" => match p.get("type").cloned() {
                None => {
                    p.insert(key, value);
                }
                Some(existing) if existing == value => {}
                Some(existing) => {
                    const ORDER: [&str; 7] = [
                        "null", "boolean", "object", "array", "number", "string", "integer",
                    ];
                    let mut types: Vec<String> = type_set(&json!({"type": existing}));
                    types.extend(type_set(&json!({"type": value})));
                    types.sort_by_key(|t| ORDER.iter().position(|o| o == t));
                    types.dedup();
                    p.insert("type".into(), json!(types));
                }
            },
            // Extensions: the child's value wins.
            k if k.starts_with("x-") || k == "nullable" || k == "example" => {
                p.insert(key, value);
            }
            _ => {
                p.entry(key).or_insert(value);
            }
        }
    }
    let additional = if both_objects {
        match (parent_additional, child_additional) {
            (Some(Value::Bool(true)), _) | (_, Some(Value::Bool(true))) => Some(Value::Bool(true)),
            (None, _) | (_, None) => None,
            (Some(Value::Bool(false)), Some(other)) | (Some(other), Some(Value::Bool(false))) => {
                Some(other)
            }
            (Some(mut a), Some(b)) => {
                flatten_0_8(&mut a, b);
                Some(a)
            }
        }
    } else {
        parent_additional.or(child_additional)
    };
    if let Some(a) = additional {
        p.insert("additionalProperties".into(), a);
    }
}

/// schemars' `flatten(parent, child)`.
pub fn flatten(parent: &mut Value, child: Value) {
    match child {
        Value::Bool(false) => {}
        Value::Bool(true) => {
            let p = ensure_object(parent);
            if !p.contains_key("additionalProperties") && !p.contains_key("unevaluatedProperties") {
                let key = if ["if", "allOf", "anyOf", "oneOf", "$ref"]
                    .iter()
                    .any(|k| p.contains_key(*k))
                {
                    "unevaluatedProperties"
                } else {
                    "additionalProperties"
                };
                p.insert(key.into(), Value::Bool(true));
            }
        }
        Value::Object(mut c) => {
            let p = ensure_object(parent);
            let has_subschemas = |m: &Map<String, Value>| {
                ["if", "then", "else", "allOf", "anyOf", "oneOf", "$ref"]
                    .iter()
                    .any(|k| m.contains_key(*k))
            };
            if p.contains_key("additionalProperties")
                && (c.contains_key("unevaluatedProperties") || has_subschemas(&c))
                && let Some(v) = p.remove("additionalProperties")
            {
                p.insert("unevaluatedProperties".into(), v);
            }
            if c.contains_key("additionalProperties")
                && (p.contains_key("unevaluatedProperties") || has_subschemas(p))
                && let Some(v) = c.remove("additionalProperties")
            {
                c.insert("unevaluatedProperties".into(), v);
            }
            for (key, value) in c {
                match (key.as_str(), p.get_mut(&key)) {
                    (_, None) => {
                        p.insert(key, value);
                    }
                    ("required" | "allOf", Some(Value::Array(existing))) => {
                        if let Value::Array(more) = value {
                            existing.extend(more);
                        }
                    }
                    ("properties" | "patternProperties", Some(Value::Object(existing))) => {
                        if let Value::Object(more) = value {
                            existing.extend(more);
                        }
                    }
                    ("oneOf" | "anyOf", Some(_)) => {
                        let theirs = p.remove(&key).unwrap_or(Value::Null);
                        let mut a = Map::new();
                        a.insert(key.clone(), theirs);
                        let mut b = Map::new();
                        b.insert(key, value);
                        match p.get_mut("allOf") {
                            Some(Value::Array(all)) => {
                                all.push(Value::Object(a));
                                all.push(Value::Object(b));
                            }
                            _ => {
                                p.insert("allOf".into(), json!([a, b]));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

fn strip_closed(o: &mut Map<String, Value>) {
    if o.get("additionalProperties") == Some(&Value::Bool(false)) {
        o.remove("additionalProperties");
    }
    if o.get("unevaluatedProperties") == Some(&Value::Bool(false)) {
        o.remove("unevaluatedProperties");
    }
}

/// The schema as an object, turning a boolean schema into one first.
///
/// # Panics
/// Never: the value is an object when it is returned.
pub fn ensure_object(schema: &mut Value) -> &mut Map<String, Value> {
    if !schema.is_object() {
        *schema = match schema {
            Value::Bool(false) => json!({"not": {}}),
            _ => json!({}),
        };
    }
    schema.as_object_mut().expect("just made an object")
}

fn type_set(schema: &Value) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

fn push_validation(schema: &mut Value, rule: Value) {
    let obj = ensure_object(schema);
    match obj.get_mut("x-kubernetes-validations") {
        Some(Value::Array(rules)) => rules.push(rule),
        _ => {
            obj.insert("x-kubernetes-validations".into(), json!([rule]));
        }
    }
}

/// schemars' escaping for `contains`.
fn escape_regex(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A CEL rule expression, as kube-core serializes it.
pub fn eval_cel_rule(e: &syn::Expr) -> Option<Value> {
    eval::cel_rule(e)
}

/// The value a `schema_name()` body names: `"Name".into()`,
/// `Cow::Borrowed("Name")`, `"Name".to_owned().into()`.
fn schema_name_expr(e: &syn::Expr) -> syn::Expr {
    match e {
        syn::Expr::Call(c)
            if c.args.len() == 1
                && matches!(c.func.as_ref(), syn::Expr::Path(p)
                    if p.path.segments.last().is_some_and(|s| s.ident == "Borrowed" || s.ident == "Owned")) =>
        {
            c.args[0].clone()
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::flatten_0_8;

    fn flattened(parent: serde_json::Value, child: serde_json::Value) -> serde_json::Value {
        let mut parent = parent;
        flatten_0_8(&mut parent, child);
        parent
    }

    /// schemars 0.8's merge: properties and `required` unite, the
    /// parent's keywords win, and `additionalProperties` follows its own
    /// table.
    #[test]
    fn flatten_0_8_merges_as_schemars_0_8() {
        let parent = json!({"type": "object", "description": "P", "required": ["a"], "properties": {"a": {"type": "string"}}});
        assert_eq!(
            flattened(
                parent.clone(),
                json!({"type": "object", "description": "C", "required": ["b"], "properties": {"b": {"type": "integer"}}})
            ),
            json!({"type": "object", "description": "P", "required": ["a", "b"], "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}})
        );
        // A map of anything keeps unknown fields; a map of strings loses
        // its value schema, as the parent has none.
        assert_eq!(
            flattened(
                parent.clone(),
                json!({"type": "object", "additionalProperties": true})
            )["additionalProperties"],
            json!(true)
        );
        assert!(
            flattened(
                parent.clone(),
                json!({"type": "object", "additionalProperties": {"type": "string"}})
            )
            .get("additionalProperties")
            .is_none()
        );
        // `deny_unknown_fields` beside a flattened struct goes.
        let closed = json!({"type": "object", "additionalProperties": false, "properties": {}});
        assert!(
            flattened(closed, json!({"type": "object", "properties": {"b": {}}}))
                .get("additionalProperties")
                .is_none()
        );
        // An enum's `oneOf` is copied; different types make an array.
        assert_eq!(
            flattened(parent.clone(), json!({"oneOf": [{"required": ["x"]}]}))["oneOf"],
            json!([{"required": ["x"]}])
        );
        assert_eq!(
            flattened(
                json!({"type": "object"}),
                json!({"type": "string", "enum": ["a"]})
            )["type"],
            json!(["object", "string"])
        );
        // A unit type adds nothing, and takes the child's place.
        assert_eq!(flattened(parent.clone(), json!({"type": "null"})), parent);
        assert_eq!(flattened(json!({"type": "null"}), parent.clone()), parent);
    }
}
