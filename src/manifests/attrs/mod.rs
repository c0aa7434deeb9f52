//! The attributes of an item, read the way the derives that consume them
//! read them: `#[serde(...)]` (as `serde_derive` parses it under the
//! Deserialize contract, with `#[schemars(...)]` overriding it), schemars'
//! own keys, doc comments, and `#[x_kube(...)]`. `#[kube(...)]` is in
//! [`kube`].
//!
//! Unknown keys of `#[schemars]` and `#[x_kube]` are errors with a
//! "did you mean"; serde's unknown keys are left to rustc.

pub mod kube;

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Lit, Meta, Token};

use super::diagnostics::{Diagnostic, did_you_mean};

/// One `key`, `key = value` or `key(...)` inside an attribute.
#[derive(Debug, Clone)]
pub struct AttrItem {
    pub key: String,
    pub span: Span,
    pub value: AttrValue,
}

// An attribute value lives only while its attribute is read; boxing the
// expression would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum AttrValue {
    Flag,
    Expr(Expr),
    List(TokenStream),
}

impl AttrItem {
    /// The value as a string literal, if it is one.
    pub fn str_value(&self) -> Option<String> {
        match &self.value {
            AttrValue::Expr(e) => expr_str(e),
            _ => None,
        }
    }
}

/// The string of a string-literal expression.
pub fn expr_str(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Lit(l) => match &l.lit {
            Lit::Str(s) => Some(s.value()),
            _ => None,
        },
        Expr::Group(g) => expr_str(&g.expr),
        Expr::Paren(p) => expr_str(&p.expr),
        // `concat!` of literals, as macros write docs and names.
        Expr::Macro(m) if m.mac.path.is_ident("concat") => {
            let parts = m
                .mac
                .parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated)
                .ok()?;
            parts
                .iter()
                .map(|p| match p {
                    Expr::Lit(l) => match &l.lit {
                        Lit::Int(i) => Some(i.base10_digits().to_string()),
                        Lit::Bool(b) => Some(b.value.to_string()),
                        Lit::Char(c) => Some(c.value().to_string()),
                        _ => expr_str(p),
                    },
                    _ => expr_str(p),
                })
                .collect()
        }
        _ => None,
    }
}

/// The comma-separated items of an attribute's argument list.
pub fn parse_items(tokens: TokenStream) -> syn::Result<Vec<AttrItem>> {
    let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens)?;
    Ok(metas.into_iter().map(meta_item).collect())
}

fn meta_item(meta: Meta) -> AttrItem {
    let span = meta.span();
    match meta {
        Meta::Path(p) => AttrItem {
            key: path_key(&p),
            span,
            value: AttrValue::Flag,
        },
        Meta::NameValue(nv) => AttrItem {
            key: path_key(&nv.path),
            span,
            value: AttrValue::Expr(nv.value),
        },
        Meta::List(l) => AttrItem {
            key: path_key(&l.path),
            span,
            value: AttrValue::List(l.tokens),
        },
    }
}

fn path_key(path: &syn::Path) -> String {
    let key = path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::");
    // `!from` in schemars unsets a serde key; keep the marker in the key.
    key
}

/// The items of every `#[name(...)]` attribute in `attrs`, in order.
pub fn items_of(attrs: &[syn::Attribute], name: &str) -> syn::Result<Vec<AttrItem>> {
    let mut out = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident(name) {
            continue;
        }
        if let Meta::List(list) = &attr.meta {
            out.extend(parse_items(list.tokens.clone())?);
        }
    }
    Ok(out)
}

/// A serde rename rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    const NAMES: &'static [&'static str] = &[
        "lowercase",
        "UPPERCASE",
        "PascalCase",
        "camelCase",
        "snake_case",
        "SCREAMING_SNAKE_CASE",
        "kebab-case",
        "SCREAMING-KEBAB-CASE",
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// serde's `apply_to_field`: the input is a `snake_case` field name.
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_string(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::new();
                let mut upper = true;
                for c in field.chars() {
                    if c == '_' {
                        upper = true;
                    } else if upper {
                        out.push(c.to_ascii_uppercase());
                        upper = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply_to_field(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// serde's `apply_to_variant`: the input is a `PascalCase` variant name.
    pub fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_string(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => {
                let mut chars = variant.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Snake => {
                let mut out = String::new();
                for (i, c) in variant.char_indices() {
                    if i > 0 && c.is_uppercase() {
                        out.push('_');
                    }
                    out.push(c.to_ascii_lowercase());
                }
                out
            }
            RenameRule::ScreamingSnake => RenameRule::Snake
                .apply_to_variant(variant)
                .to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake
                .apply_to_variant(variant)
                .replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }
}

/// `default` or `default = "path"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefaultAttr {
    Trait,
    Path(String),
}

/// Length/range bounds as written (expressions, evaluated later).
#[derive(Debug, Clone, Default)]
pub struct Validation {
    pub length_min: Option<Expr>,
    pub length_max: Option<Expr>,
    pub range_min: Option<Expr>,
    pub range_max: Option<Expr>,
    pub pattern: Option<Expr>,
    pub contains: Option<Expr>,
    pub format: Option<&'static str>,
    pub inner: Option<Box<Validation>>,
}

impl Validation {
    pub fn is_empty(&self) -> bool {
        self.length_min.is_none()
            && self.length_max.is_none()
            && self.range_min.is_none()
            && self.range_max.is_none()
            && self.pattern.is_none()
            && self.contains.is_none()
            && self.format.is_none()
            && self.inner.is_none()
    }
}

/// What rsop needs to know of an item's (container, variant or field)
/// attributes: serde's effective view and schemars' own keys.
#[derive(Debug, Clone, Default)]
pub struct ItemAttrs {
    /// Attributes only compiled code can read (span, message, help): valid
    /// Rust, so the kind is built with cargo rather than refused.
    pub unreadable: Vec<(Span, String, String)>,
    pub rename: Option<String>,
    pub rename_all: Option<RenameRule>,
    pub rename_all_fields: Option<RenameRule>,
    pub deny_unknown_fields: bool,
    pub tag: Option<String>,
    pub content: Option<String>,
    pub untagged: bool,
    pub default: Option<DefaultAttr>,
    pub transparent: bool,
    pub skip_serializing: bool,
    pub skip_deserializing: bool,
    pub skip_serializing_if: Option<String>,
    pub flatten: bool,
    /// `with = "Type"` (schemars), or serde's `with`, which schemars reads as a type.
    pub with: Option<(String, Span)>,
    pub from: Option<(String, Span)>,
    pub title: Option<Expr>,
    pub description: Option<Expr>,
    pub examples: Vec<Expr>,
    pub extend: Vec<(String, TokenStream, Span)>,
    pub validation: Validation,
    pub required: bool,
    pub schema_with: Option<Span>,
    /// The function `schema_with` names.
    pub schema_with_path: Option<String>,
    pub transform: Option<Span>,
    pub deprecated: bool,
    pub doc: Option<String>,
    pub doc_span: Option<Span>,
    /// `#[x_kube(validation = ...)]` rules, as written.
    pub kube_validations: Vec<Expr>,
    /// `#[x_kube(merge_strategy = ...)]`.
    pub merge_strategy: Option<Expr>,
    /// Unsupported constructs, to report where the item is used.
    pub unsupported: Vec<(Span, String)>,
}

/// Which kind of item the attributes are on (keys differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Container,
    Variant,
    Field,
}

const SCHEMARS_KEYS: &[&str] = &[
    "rename",
    "rename_all",
    "rename_all_fields",
    "deny_unknown_fields",
    "tag",
    "content",
    "untagged",
    "default",
    "skip",
    "skip_serializing",
    "skip_deserializing",
    "skip_serializing_if",
    "flatten",
    "transparent",
    "from",
    "try_from",
    "into",
    "remote",
    "title",
    "description",
    "example",
    "extend",
    "transform",
    "with",
    "schema_with",
    "inline",
    "crate",
    "bound",
    "range",
    "length",
    "regex",
    "pattern",
    "contains",
    "email",
    "url",
    "ip",
    "ipv4",
    "ipv6",
    "inner",
    "required",
];

const X_KUBE_KEYS: &[&str] = &["validation", "merge_strategy", "cel", "crates"];

/// Reads the attributes of an item; problems go to `errors` as
/// (span, message, help).
pub fn read(
    attrs: &[syn::Attribute],
    kind: ItemKind,
    errors: &mut Vec<(Span, String, String)>,
) -> ItemAttrs {
    let mut out = ItemAttrs::default();
    // Doc comments, joined as schemars joins them.
    let mut docs = Vec::new();
    for attr in attrs {
        if attr.path().is_ident("deprecated") {
            out.deprecated = true;
        }
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let Meta::NameValue(nv) = &attr.meta {
            out.doc_span.get_or_insert(attr.span());
            match expr_str(&nv.value) {
                Some(s) => docs.push(s.strip_prefix(' ').map(str::to_string).unwrap_or(s)),
                None => out.unreadable.push((
                    attr.span(),
                    "a doc attribute that is not a string literal cannot be read without compiling"
                        .into(),
                    "write the documentation as `///` comments".into(),
                )),
            }
        }
    }
    if !docs.is_empty() {
        out.doc = Some(docs.join("\n"));
    }

    match items_of(attrs, "serde") {
        Ok(items) => {
            for item in items {
                apply_serde_key(&mut out, &item, errors);
            }
        }
        Err(e) => errors.push((
            e.span(),
            format!("cannot parse `#[serde(...)]`: {e}"),
            "fix the attribute".into(),
        )),
    }
    match items_of(attrs, "schemars") {
        Ok(items) => {
            for item in items {
                apply_schemars_key(&mut out, &item, kind, errors);
            }
        }
        Err(e) => errors.push((
            e.span(),
            format!("cannot parse `#[schemars(...)]`: {e}"),
            "fix the attribute".into(),
        )),
    }
    // schemars reads validator's and garde's attributes on fields too, each
    // with its own grammar, and ignores the keys it does not know.
    if kind == ItemKind::Field {
        for tool in ["validate", "garde"] {
            if let Ok(items) = items_of(attrs, tool) {
                for item in &items {
                    apply_foreign_validation(&mut out, tool, item);
                }
            }
        }
    }

    match items_of(attrs, "x_kube") {
        Ok(items) => {
            for item in items {
                match (item.key.as_str(), &item.value) {
                    ("validation", AttrValue::Expr(e)) => out.kube_validations.push(e.clone()),
                    ("merge_strategy", AttrValue::Expr(e)) => out.merge_strategy = Some(e.clone()),
                    ("cel" | "crates", _) => {}
                    (key, _) => errors.push(unknown_key("x_kube", key, item.span, X_KUBE_KEYS)),
                }
            }
        }
        Err(e) => errors.push((
            e.span(),
            format!("cannot parse `#[x_kube(...)]`: {e}"),
            "fix the attribute".into(),
        )),
    }
    out
}

fn unknown_key(attr: &str, key: &str, span: Span, known: &[&str]) -> (Span, String, String) {
    let help = match did_you_mean(key, known) {
        Some(candidate) => format!("did you mean `{candidate}`?"),
        None => format!("the keys of `#[{attr}(...)]` are: {}", known.join(", ")),
    };
    (
        span,
        format!("unknown key `{key}` in `#[{attr}(...)]`"),
        help,
    )
}

/// The rename rule of `rename_all = "..."` or `rename_all(deserialize = "...")`.
fn rename_rule(item: &AttrItem, errors: &mut Vec<(Span, String, String)>) -> Option<RenameRule> {
    let text = match &item.value {
        AttrValue::Expr(e) => expr_str(e),
        AttrValue::List(tokens) => parse_items(tokens.clone())
            .ok()?
            .into_iter()
            .find(|i| i.key == "deserialize")
            .and_then(|i| i.str_value()),
        AttrValue::Flag => None,
    }?;
    let rule = RenameRule::parse(&text);
    if rule.is_none() {
        errors.push((
            item.span,
            format!("unknown rename rule `{text}`"),
            format!("use one of {}", RenameRule::NAMES.join(", ")),
        ));
    }
    rule
}

/// The deserialize name of `rename = "x"` or `rename(deserialize = "x")`.
fn rename_value(item: &AttrItem) -> Option<String> {
    match &item.value {
        AttrValue::Expr(e) => expr_str(e),
        AttrValue::List(tokens) => parse_items(tokens.clone())
            .ok()?
            .into_iter()
            .find(|i| i.key == "deserialize")
            .and_then(|i| i.str_value()),
        AttrValue::Flag => None,
    }
}

/// A serde key (also used for the serde keys schemars mirrors). Returns
/// whether the key was one of serde's.
fn apply_serde_key(
    out: &mut ItemAttrs,
    item: &AttrItem,
    errors: &mut Vec<(Span, String, String)>,
) -> bool {
    match item.key.as_str() {
        "rename" => out.rename = rename_value(item),
        "rename_all" => out.rename_all = rename_rule(item, errors),
        "rename_all_fields" => out.rename_all_fields = rename_rule(item, errors),
        "deny_unknown_fields" => out.deny_unknown_fields = true,
        "tag" => out.tag = item.str_value(),
        "content" => out.content = item.str_value(),
        "untagged" => out.untagged = true,
        "default" => {
            out.default = Some(match item.str_value() {
                Some(path) => DefaultAttr::Path(path),
                None => DefaultAttr::Trait,
            });
        }
        "transparent" => out.transparent = true,
        "skip" => {
            out.skip_serializing = true;
            out.skip_deserializing = true;
        }
        "skip_serializing" => out.skip_serializing = true,
        "skip_deserializing" => out.skip_deserializing = true,
        "skip_serializing_if" => out.skip_serializing_if = item.str_value(),
        "flatten" => out.flatten = true,
        "with" => {
            if let Some(s) = item.str_value() {
                out.with = Some((s, item.span));
            }
        }
        "from" | "try_from" => {
            if let Some(s) = item.str_value() {
                out.from = Some((s, item.span));
            }
        }
        "serialize_with" | "deserialize_with" | "into" | "remote" | "bound" | "alias" | "other"
        | "borrow" | "getter" | "expecting" | "crate" | "variant_identifier"
        | "field_identifier" => {}
        _ => return false,
    }
    true
}

fn apply_schemars_key(
    out: &mut ItemAttrs,
    item: &AttrItem,
    kind: ItemKind,
    errors: &mut Vec<(Span, String, String)>,
) {
    if let Some(unset) = item.key.strip_prefix('!') {
        unset_serde_key(out, unset);
        return;
    }
    match item.key.as_str() {
        "title" => out.title = expr_of(item),
        "description" => out.description = expr_of(item),
        "example" => {
            if let Some(e) = expr_of(item) {
                out.examples.push(e);
            }
        }
        "extend" => match &item.value {
            AttrValue::List(tokens) => match parse_extend(tokens.clone()) {
                Ok(pairs) => out.extend.extend(pairs),
                Err(e) => errors.push((
                    e.span(),
                    format!("cannot parse `extend(...)`: {e}"),
                    "write `extend(\"key\" = value, ...)`".into(),
                )),
            },
            _ => errors.push((
                item.span,
                "`extend` takes a list".into(),
                "write `extend(\"key\" = value, ...)`".into(),
            )),
        },
        "transform" => out.transform = Some(item.span),
        "schema_with" => {
            out.schema_with = Some(item.span);
            out.schema_with_path = item.str_value();
        }
        "with" => {
            if let Some(s) = item.str_value() {
                out.with = Some((s, item.span));
            }
        }
        "inline" | "crate" | "bound" => {}
        "required" => out.required = true,
        "range" | "length" | "regex" | "pattern" | "contains" | "email" | "url" | "ip" | "ipv4"
        | "ipv6" | "inner" => apply_validation(&mut out.validation, item, errors),
        "rename" if kind == ItemKind::Container => {}
        _ => {
            if !apply_serde_key(out, item, errors) {
                errors.push(unknown_key("schemars", &item.key, item.span, SCHEMARS_KEYS));
            }
        }
    }
}

fn unset_serde_key(out: &mut ItemAttrs, key: &str) {
    match key {
        "rename" => out.rename = None,
        "rename_all" => out.rename_all = None,
        "default" => out.default = None,
        "flatten" => out.flatten = false,
        "skip" => {
            out.skip_serializing = false;
            out.skip_deserializing = false;
        }
        "with" => out.with = None,
        "from" | "try_from" => out.from = None,
        "untagged" => out.untagged = false,
        "tag" => out.tag = None,
        _ => {}
    }
}

fn expr_of(item: &AttrItem) -> Option<Expr> {
    match &item.value {
        AttrValue::Expr(e) => Some(e.clone()),
        _ => None,
    }
}

/// `"key" = value, ...`; values keep their tokens (they use `json!` syntax).
fn parse_extend(tokens: TokenStream) -> syn::Result<Vec<(String, TokenStream, Span)>> {
    let parser =
        |input: syn::parse::ParseStream<'_>| -> syn::Result<Vec<(String, TokenStream, Span)>> {
            let mut out = Vec::new();
            while !input.is_empty() {
                let key: syn::LitStr = input.parse()?;
                input.parse::<Token![=]>()?;
                let mut value = TokenStream::new();
                while !input.is_empty() && !input.peek(Token![,]) {
                    let tt: proc_macro2::TokenTree = input.parse()?;
                    value.extend(std::iter::once(tt));
                }
                if input.peek(Token![,]) {
                    input.parse::<Token![,]>()?;
                }
                out.push((key.value(), value, key.span()));
            }
            Ok(out)
        };
    parser.parse2(tokens)
}

/// One key of `#[validate(...)]` (validator) or `#[garde(...)]`, as schemars
/// 1 reads it: the validation keys it shares with `#[schemars]`, with
/// validator's `regex(path = ..)` and garde's `pattern(..)`; `inner(..)`
/// only for garde. Unknown keys and malformed values are ignored, as
/// schemars ignores them.
fn apply_foreign_validation(out: &mut ItemAttrs, tool: &str, item: &AttrItem) {
    let nested = || match &item.value {
        AttrValue::List(tokens) => parse_items(tokens.clone()).unwrap_or_default(),
        _ => Vec::new(),
    };
    let v = &mut out.validation;
    match item.key.as_str() {
        // garde takes formats bare only; validator also with arguments.
        "email" | "url" | "ip" | "ipv4" | "ipv6"
            if tool == "validate" || matches!(item.value, AttrValue::Flag) =>
        {
            v.format = Some(match item.key.as_str() {
                "url" => "uri",
                "email" => "email",
                "ip" => "ip",
                "ipv4" => "ipv4",
                _ => "ipv6",
            });
        }
        // Keys the tools add (`exclusive_max`, `message`, `chars`) are ignored.
        key @ ("length" | "range") => {
            for s in nested() {
                bound(v, key, &s);
            }
        }
        "required" if matches!(item.value, AttrValue::Flag) => out.required = true,
        "regex" if tool == "validate" => {
            if let Some(e) = nested().iter().find(|s| s.key == "path").and_then(expr_of) {
                v.pattern = Some(e);
            }
        }
        "pattern" if tool == "garde" => {
            if let AttrValue::List(tokens) = &item.value
                && let Ok(e) = syn::parse2::<Expr>(tokens.clone())
            {
                v.pattern = Some(e);
            }
        }
        "contains" => match &item.value {
            AttrValue::List(tokens) if tool == "garde" => {
                if let Ok(e) = syn::parse2::<Expr>(tokens.clone()) {
                    v.contains = Some(e);
                }
            }
            AttrValue::List(_) => {
                if let Some(e) = nested()
                    .iter()
                    .find(|s| s.key == "pattern")
                    .and_then(expr_of)
                {
                    v.contains = Some(e);
                }
            }
            _ => {}
        },
        "inner" if tool == "garde" => {
            let mut inner = ItemAttrs::default();
            for s in nested() {
                apply_foreign_validation(&mut inner, tool, &s);
            }
            v.inner = Some(Box::new(inner.validation));
        }
        _ => {}
    }
}

/// One key of `length(..)` or `range(..)` (`min`, `max`, and for a length
/// `equal`) into `v`; false for a key schemars does not read there.
fn bound(v: &mut Validation, of: &str, item: &AttrItem) -> bool {
    let Some(e) = expr_of(item) else {
        return false;
    };
    match (of, item.key.as_str()) {
        ("length", "min") => v.length_min = Some(e),
        ("length", "max") => v.length_max = Some(e),
        ("length", "equal") => {
            v.length_min = Some(e.clone());
            v.length_max = Some(e);
        }
        ("range", "min") => v.range_min = Some(e),
        ("range", "max") => v.range_max = Some(e),
        _ => return false,
    }
    true
}

fn apply_validation(v: &mut Validation, item: &AttrItem, errors: &mut Vec<(Span, String, String)>) {
    let sub = |errors: &mut Vec<(Span, String, String)>| -> Vec<AttrItem> {
        match &item.value {
            AttrValue::List(tokens) => parse_items(tokens.clone()).unwrap_or_else(|e| {
                errors.push((
                    e.span(),
                    format!("cannot parse `{}(...)`: {e}", item.key),
                    "see the schemars documentation".into(),
                ));
                Vec::new()
            }),
            _ => Vec::new(),
        }
    };
    match item.key.as_str() {
        "length" => {
            for s in sub(errors) {
                if !bound(v, "length", &s) {
                    errors.push(unknown_key(
                        "schemars(length",
                        &s.key,
                        s.span,
                        &["min", "max", "equal"],
                    ));
                }
            }
        }
        "range" => {
            for s in sub(errors) {
                if !bound(v, "range", &s) {
                    errors.push(unknown_key(
                        "schemars(range",
                        &s.key,
                        s.span,
                        &["min", "max"],
                    ));
                }
            }
        }
        "regex" => {
            for s in sub(errors) {
                match (s.key.as_str(), expr_of(&s)) {
                    ("pattern", Some(e)) => v.pattern = Some(e),
                    (key, _) => {
                        errors.push(unknown_key("schemars(regex", key, s.span, &["pattern"]));
                    }
                }
            }
        }
        "pattern" => match &item.value {
            AttrValue::List(tokens) => match syn::parse2::<Expr>(tokens.clone()) {
                Ok(e) => v.pattern = Some(e),
                Err(e) => errors.push((
                    e.span(),
                    format!("cannot parse `pattern(...)`: {e}"),
                    "write `pattern(\"^[a-z]+$\")`".into(),
                )),
            },
            AttrValue::Expr(e) => v.pattern = Some(e.clone()),
            AttrValue::Flag => {}
        },
        "contains" => match &item.value {
            AttrValue::List(tokens) => {
                // `contains(pattern = "..")` or `contains("..")`.
                let named = parse_items(tokens.clone())
                    .ok()
                    .and_then(|items| items.into_iter().find(|i| i.key == "pattern"))
                    .and_then(|i| expr_of(&i));
                match named {
                    Some(e) => v.contains = Some(e),
                    None => match syn::parse2::<Expr>(tokens.clone()) {
                        Ok(e) => v.contains = Some(e),
                        Err(e) => errors.push((
                            e.span(),
                            format!("cannot parse `contains(...)`: {e}"),
                            "write `contains(\"text\")`".into(),
                        )),
                    },
                }
            }
            AttrValue::Expr(e) => v.contains = Some(e.clone()),
            AttrValue::Flag => {}
        },
        "email" => v.format = Some("email"),
        "url" => v.format = Some("uri"),
        "ip" => v.format = Some("ip"),
        "ipv4" => v.format = Some("ipv4"),
        "ipv6" => v.format = Some("ipv6"),
        "inner" => {
            let mut inner = Validation::default();
            for s in sub(errors) {
                apply_validation(&mut inner, &s, errors);
            }
            v.inner = Some(Box::new(inner));
        }
        _ => {}
    }
}

/// Turns collected (span, message, help) errors into diagnostics.
pub fn into_diagnostics(
    errors: Vec<(Span, String, String)>,
    file: &std::path::Path,
    field_path: Option<&str>,
) -> Vec<Diagnostic> {
    errors
        .into_iter()
        .map(|(span, message, help)| {
            let d = Diagnostic::new(super::diagnostics::Location::of_span(file, span), message)
                .with_help(help);
            match field_path {
                Some(p) => d.with_field_path(p),
                None => d,
            }
        })
        .collect()
}

/// schemars' split of a doc comment into title and description.
pub fn title_and_description(doc: &str) -> (Option<String>, Option<String>) {
    let d = doc.trim_matches(|c: char| c.is_ascii_whitespace());
    if let Some(rest) = d.strip_prefix('#') {
        let (first, after) = match rest.find('\n') {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let title = first
            .trim_start_matches('#')
            .trim_matches(|c: char| c.is_ascii_whitespace());
        let description = after.map(|a| a.trim_matches(|c: char| c.is_ascii_whitespace()));
        (
            Some(title.to_string()).filter(|t| !t.is_empty()),
            description.map(str::to_string).filter(|d| !d.is_empty()),
        )
    } else {
        (None, Some(d.to_string()).filter(|d| !d.is_empty()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_rules_match_serde() {
        assert_eq!(
            RenameRule::Camel.apply_to_field("max_replicas_count"),
            "maxReplicasCount"
        );
        assert_eq!(RenameRule::Pascal.apply_to_field("a_b"), "AB");
        assert_eq!(RenameRule::ScreamingKebab.apply_to_field("a_b"), "A-B");
        assert_eq!(
            RenameRule::Snake.apply_to_variant("HTTPServer"),
            "h_t_t_p_server"
        );
        assert_eq!(RenameRule::Camel.apply_to_variant("FooBar"), "fooBar");
        assert_eq!(RenameRule::Kebab.apply_to_variant("FooBar"), "foo-bar");
    }

    #[test]
    fn docs_split_like_schemars() {
        assert_eq!(
            title_and_description(" # A Unit "),
            (Some("A Unit".into()), None)
        );
        assert_eq!(
            title_and_description("### Title\n\nBody\n line"),
            (Some("Title".into()), Some("Body\n line".into()))
        );
        assert_eq!(
            title_and_description("Plain\ntext"),
            (None, Some("Plain\ntext".into()))
        );
    }
}
