//! The little Rust evaluation schema generation needs: default values of
//! fields (`#[serde(default)]`, `default = "path"`), `skip_serializing_if`
//! predicates, literal bounds and examples, `json!`-style `extend` values,
//! CEL rules and merge strategies. Only forms whose value is plain from the
//! source are evaluated; anything else is reported.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use serde_json::{Map, Number, Value, json};
use syn::spanned::Spanned;
use syn::{Expr, Lit};

use super::{Builder, Scope};
use crate::manifests::attrs::{DefaultAttr, ItemAttrs, ItemKind};
use crate::manifests::source::Resolved;

/// An array length literal.
pub fn usize_of(e: &Expr) -> Option<usize> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

/// A literal number or string or bool, as JSON.
fn literal(lit: &Lit) -> Option<Value> {
    Some(match lit {
        Lit::Str(s) => Value::String(s.value()),
        Lit::Bool(b) => Value::Bool(b.value),
        Lit::Int(i) => {
            if let Ok(v) = i.base10_parse::<i64>() {
                Value::from(v)
            } else {
                Value::from(i.base10_parse::<u64>().ok()?)
            }
        }
        Lit::Float(f) => Value::Number(Number::from_f64(f.base10_parse::<f64>().ok()?)?),
        Lit::Char(c) => Value::String(c.value().to_string()),
        _ => return None,
    })
}

/// Evaluates an expression made of literals and the common constructors.
pub fn const_expr(e: &Expr) -> Option<Value> {
    match e {
        Expr::Lit(l) => literal(&l.lit),
        Expr::Paren(p) => const_expr(&p.expr),
        Expr::Group(g) => const_expr(&g.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match const_expr(&u.expr)? {
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Some(Value::from(-i))
                } else {
                    Some(Value::Number(Number::from_f64(-n.as_f64()?)?))
                }
            }
            _ => None,
        },
        Expr::Path(p) if p.path.is_ident("None") => Some(Value::Null),
        Expr::Call(c) => {
            let Expr::Path(f) = c.func.as_ref() else {
                return None;
            };
            let name: Vec<String> = f
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let args: Vec<&Expr> = c.args.iter().collect();
            match (
                name.iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .as_slice(),
                args.as_slice(),
            ) {
                (["Some"], [x]) => const_expr(x),
                (["String" | "From", "from"], [x]) => const_expr(x),
                (["Vec" | "BTreeSet" | "HashSet", "new"], []) => Some(json!([])),
                (["BTreeMap" | "HashMap", "new"], []) => Some(json!({})),
                (["String", "new"], []) => Some(json!("")),
                _ => None,
            }
        }
        Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(
                    m.method.to_string().as_str(),
                    "to_string" | "to_owned" | "into" | "clone"
                ) =>
        {
            const_expr(&m.receiver)
        }
        Expr::Macro(m) if m.mac.path.is_ident("vec") => {
            let items = syn::parse::Parser::parse2(
                syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                m.mac.tokens.clone(),
            )
            .ok()?;
            items
                .iter()
                .map(const_expr)
                .collect::<Option<Vec<_>>>()
                .map(Value::Array)
        }
        Expr::Array(a) => a
            .elems
            .iter()
            .map(const_expr)
            .collect::<Option<Vec<_>>>()
            .map(Value::Array),
        Expr::Block(b) => block_value(&b.block),
        _ => None,
    }
}

/// The value of a block whose only statement is an expression.
fn block_value(block: &syn::Block) -> Option<Value> {
    match block.stmts.as_slice() {
        [syn::Stmt::Expr(e, None)] => const_expr(e),
        _ => None,
    }
}

/// A value written with `serde_json::json!` syntax.
pub fn json_tokens(tokens: TokenStream) -> Option<Value> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    json_trees(&trees)
}

fn json_trees(trees: &[TokenTree]) -> Option<Value> {
    match trees {
        [TokenTree::Ident(i)] => match i.to_string().as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            "null" => Some(Value::Null),
            _ => None,
        },
        [TokenTree::Literal(l)] => {
            let lit: Lit = syn::parse_str(&l.to_string()).ok()?;
            literal(&lit)
        }
        [TokenTree::Punct(p), rest @ ..] if p.as_char() == '-' => match json_trees(rest)? {
            Value::Number(n) => n
                .as_i64()
                .map(|i| Value::from(-i))
                .or_else(|| Number::from_f64(-n.as_f64()?).map(Value::Number)),
            _ => None,
        },
        [TokenTree::Group(g)] if g.delimiter() == Delimiter::Bracket => {
            let items = split_commas(g.stream());
            items
                .iter()
                .map(|t| json_trees(t))
                .collect::<Option<Vec<_>>>()
                .map(Value::Array)
        }
        [TokenTree::Group(g)] if g.delimiter() == Delimiter::Brace => {
            let mut map = Map::new();
            for entry in split_commas(g.stream()) {
                let colon = entry
                    .iter()
                    .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ':'))?;
                let Value::String(key) = json_trees(&entry[..colon])? else {
                    return None;
                };
                map.insert(key, json_trees(&entry[colon + 1..])?);
            }
            Some(Value::Object(map))
        }
        [TokenTree::Group(g)] if g.delimiter() == Delimiter::Parenthesis => json_tokens(g.stream()),
        _ => None,
    }
}

fn split_commas(tokens: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut out = vec![Vec::new()];
    for tt in tokens {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => out.push(Vec::new()),
            _ => out.last_mut().expect("never empty").push(tt),
        }
    }
    out.retain(|v| !v.is_empty());
    out
}

/// A CEL rule as kube-core serializes it: a string, a `(rule, message)`
/// pair, or a `Rule::new(..)` builder chain.
pub fn cel_rule(e: &Expr) -> Option<Value> {
    match e {
        Expr::Lit(_) => Some(json!({"rule": const_expr(e)?})),
        Expr::Tuple(t) if t.elems.len() == 2 => {
            Some(json!({"rule": const_expr(&t.elems[0])?, "message": const_expr(&t.elems[1])?}))
        }
        Expr::Paren(p) => cel_rule(&p.expr),
        Expr::Call(c) => {
            let Expr::Path(f) = c.func.as_ref() else {
                return None;
            };
            let last = f.path.segments.last()?.ident.to_string();
            if last == "new" && c.args.len() == 1 {
                Some(json!({"rule": const_expr(&c.args[0])?}))
            } else {
                None
            }
        }
        Expr::MethodCall(m) => {
            let mut rule = cel_rule(&m.receiver)?;
            let obj = rule.as_object_mut()?;
            let arg = m.args.first();
            match (m.method.to_string().as_str(), arg) {
                ("message", Some(a)) => {
                    let (key, value) = message(a)?;
                    obj.insert(key.into(), value);
                }
                ("field_path", Some(a)) => {
                    obj.insert("fieldPath".into(), const_expr(a)?);
                }
                ("reason", Some(a)) => {
                    obj.insert("reason".into(), Value::String(reason(a)?));
                }
                ("optional_old_self", Some(a)) => {
                    obj.insert("optionalOldSelf".into(), const_expr(a)?);
                }
                _ => return None,
            }
            Some(rule)
        }
        _ => None,
    }
}

fn message(e: &Expr) -> Option<(&'static str, Value)> {
    if let Expr::Call(c) = e
        && let Expr::Path(f) = c.func.as_ref()
    {
        let last = f.path.segments.last()?.ident.to_string();
        let v = const_expr(c.args.first()?)?;
        return match last.as_str() {
            "Message" => Some(("message", v)),
            "Expression" => Some(("messageExpression", v)),
            _ => None,
        };
    }
    Some(("message", const_expr(e)?))
}

fn reason(e: &Expr) -> Option<String> {
    match e {
        Expr::Path(p) => Some(p.path.segments.last()?.ident.to_string()),
        Expr::Call(c) => match c.func.as_ref() {
            Expr::Path(p) if p.path.segments.last()?.ident == "default" => {
                Some("FieldValueInvalid".into())
            }
            _ => None,
        },
        _ => None,
    }
}

/// A merge strategy's keys.
pub fn merge_strategy(e: &Expr) -> Option<Vec<(String, Value)>> {
    let (ty, variant, arg) = match e {
        Expr::Path(p) => {
            let n = p.path.segments.len();
            if n < 2 {
                return None;
            }
            (
                p.path.segments[n - 2].ident.to_string(),
                p.path.segments[n - 1].ident.to_string(),
                None,
            )
        }
        Expr::Call(c) => {
            let Expr::Path(p) = c.func.as_ref() else {
                return None;
            };
            let n = p.path.segments.len();
            if n < 2 {
                return None;
            }
            (
                p.path.segments[n - 2].ident.to_string(),
                p.path.segments[n - 1].ident.to_string(),
                c.args.first(),
            )
        }
        _ => return None,
    };
    Some(match (ty.as_str(), variant.as_str()) {
        ("ListMerge", "Atomic") => vec![("x-kubernetes-list-type".into(), json!("atomic"))],
        ("ListMerge", "Set") => vec![("x-kubernetes-list-type".into(), json!("set"))],
        ("ListMerge", "Map") => vec![
            ("x-kubernetes-list-type".into(), json!("map")),
            ("x-kubernetes-list-map-keys".into(), const_expr(arg?)?),
        ],
        ("MapMerge", "Atomic") => vec![("x-kubernetes-map-type".into(), json!("atomic"))],
        ("MapMerge", "Granular") => vec![("x-kubernetes-map-type".into(), json!("granular"))],
        // Dropped by JSONSchemaProps: no effect on the CRD.
        ("StructMerge", "Atomic" | "Granular") => Vec::new(),
        _ => return None,
    })
}

impl<'a> Builder<'a> {
    /// A numeric bound (`min = 1`, `max = "10"`).
    pub(super) fn eval_number(&mut self, e: &Expr, scope: &Scope<'a>, path: &str) -> Option<Value> {
        let v = match const_expr(e) {
            Some(Value::String(s)) => syn::parse_str::<Expr>(&s).ok().and_then(|e| const_expr(&e)),
            other => other,
        };
        if let Some(n @ Value::Number(_)) = v {
            Some(n)
        } else {
            self.unsupported(
                scope.module,
                e.span(),
                "rsop can only read a number literal here",
                "write the bound as a literal",
                path,
            );
            None
        }
    }

    pub(super) fn eval_example(
        &mut self,
        e: &Expr,
        scope: &Scope<'a>,
        path: &str,
    ) -> Option<Value> {
        let v = const_expr(e);
        if v.is_none() {
            self.unsupported(
                scope.module,
                e.span(),
                "rsop cannot evaluate this example",
                "write the example as a literal",
                path,
            );
        }
        v
    }

    /// The `default` of a field, as schemars computes and serializes it.
    pub(super) fn field_default(
        &mut self,
        field: &syn::Field,
        fattrs: &ItemAttrs,
        cattrs: Option<&ItemAttrs>,
        container: Option<&syn::ItemStruct>,
        scope: &Scope<'a>,
        path: &str,
    ) -> Option<Value> {
        let value = match (&fattrs.default, cattrs.and_then(|c| c.default.as_ref())) {
            (Some(DefaultAttr::Trait), _) => {
                self.type_default(&field.ty, scope, field.ty.span(), path)
            }
            (Some(DefaultAttr::Path(p)), _) => self.call_default_fn(p, scope, field.span(), path),
            (None, Some(DefaultAttr::Trait)) => {
                let container = container?;
                self.container_default_field(container, field, scope, path)
            }
            (None, Some(DefaultAttr::Path(p))) => {
                let p = p.clone();
                self.container_fn_default_field(&p, field, scope, path)
            }
            (None, None) => return None,
        }?;
        if let Some(pred) = &fattrs.skip_serializing_if {
            match skip_predicate(pred, &value) {
                Some(true) => return None,
                Some(false) => {}
                None => {
                    self.unsupported(scope.module, field.span(), format!("rsop cannot evaluate `skip_serializing_if = \"{pred}\"` on the default value"), "use `Option::is_none`, `Vec::is_empty`, `String::is_empty` or a map's `is_empty`", path);
                    return None;
                }
            }
        }
        if value.is_null() { None } else { Some(value) }
    }

    /// `<T>::default()`, serialized.
    fn type_default(
        &mut self,
        ty: &syn::Type,
        scope: &Scope<'a>,
        span: proc_macro2::Span,
        path: &str,
    ) -> Option<Value> {
        let syn::Type::Path(p) = ty else {
            return match ty {
                syn::Type::Tuple(t) if t.elems.is_empty() => Some(Value::Null),
                syn::Type::Reference(r) => self.type_default(&r.elem, scope, span, path),
                _ => {
                    self.unsupported(
                        scope.module,
                        span,
                        "rsop cannot compute the default of this type",
                        "give the field an explicit `#[serde(default = \"...\")]` function returning a literal",
                        path,
                    );
                    None
                }
            };
        };
        let last = p.path.segments.last()?;
        let name = last.ident.to_string();
        match self.krate.resolve(scope.module, &p.path) {
            Some(Resolved::External(full)) => {
                let value = match name.as_str() {
                    "String" | "str" | "PathBuf" => json!(""),
                    "bool" => json!(false),
                    "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32"
                    | "u64" | "u128" | "usize" => json!(0),
                    "f32" | "f64" => json!(0.0),
                    "Option" => Value::Null,
                    "Vec" | "VecDeque" | "HashSet" | "BTreeSet" | "LinkedList" => json!([]),
                    "HashMap" | "BTreeMap" | "Map" => json!({}),
                    "Value" if full.first().is_some_and(|f| f == "serde_json") => Value::Null,
                    "Box" | "Rc" | "Arc" => {
                        let inner = super::generic_args(&last.arguments)
                            .first()
                            .copied()?
                            .clone();
                        return self.type_default(&inner, scope, span, path);
                    }
                    _ => {
                        self.unsupported(scope.module, span, format!("rsop cannot compute `{}::default()`", full.join("::")), "give the field an explicit `#[serde(default = \"...\")]` function returning a literal", path);
                        return None;
                    }
                };
                Some(value)
            }
            Some(Resolved::Local(item)) => match item.item {
                syn::Item::Struct(s) => {
                    let item_scope = Scope::new(item.module);
                    self.struct_default(s, &item_scope, path)
                }
                syn::Item::Enum(e) => {
                    if self.krate.has_manual_default(&e.ident.to_string()) {
                        self.unsupported(
                            item.module,
                            e.ident.span(),
                            format!(
                                "`{}` implements `Default` by hand; rsop cannot evaluate it",
                                e.ident
                            ),
                            "derive `Default` with a `#[default]` variant",
                            path,
                        );
                        return None;
                    }
                    let variant = e
                        .variants
                        .iter()
                        .find(|v| v.attrs.iter().any(|a| a.path().is_ident("default")))?;
                    let cattrs = self.read_attrs(item.module, &e.attrs, ItemKind::Container, path);
                    let vattrs =
                        self.read_attrs(item.module, &variant.attrs, ItemKind::Variant, path);
                    let raw = variant.ident.to_string();
                    let name = vattrs.rename.unwrap_or_else(|| {
                        cattrs
                            .rename_all
                            .map_or(raw.clone(), |r| r.apply_to_variant(&raw))
                    });
                    Some(Value::String(name))
                }
                syn::Item::Type(t) => {
                    let alias_scope = Scope::new(item.module);
                    self.type_default(&t.ty, &alias_scope, span, path)
                }
                _ => None,
            },
            None => None,
        }
    }

    /// A struct's `Default`, serialized with its serde attributes.
    fn struct_default(
        &mut self,
        s: &syn::ItemStruct,
        scope: &Scope<'a>,
        path: &str,
    ) -> Option<Value> {
        let derives_default = s.attrs.iter().any(|a| {
            a.path().is_ident("derive")
                && a.parse_args_with(
                    syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
                )
                .is_ok_and(|ps| {
                    ps.iter()
                        .any(|p| p.segments.last().is_some_and(|s| s.ident == "Default"))
                })
        });
        if !derives_default {
            self.unsupported(
                scope.module,
                s.ident.span(),
                format!(
                    "`{}` implements `Default` by hand; rsop cannot evaluate it",
                    s.ident
                ),
                "derive `Default`",
                path,
            );
            return None;
        }
        let cattrs = self.read_attrs(scope.module, &s.attrs, ItemKind::Container, path);
        let syn::Fields::Named(named) = &s.fields else {
            self.unsupported(
                scope.module,
                s.ident.span(),
                "rsop computes defaults of structs with named fields only",
                "give the field an explicit `#[serde(default = \"...\")]` function returning a literal",
                path,
            );
            return None;
        };
        let mut out = Map::new();
        for field in &named.named {
            let fattrs = self.read_attrs(scope.module, &field.attrs, ItemKind::Field, path);
            if fattrs.skip_serializing {
                continue;
            }
            let raw = field
                .ident
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            let raw = raw.strip_prefix("r#").unwrap_or(&raw).to_string();
            let name = fattrs.rename.clone().unwrap_or_else(|| {
                cattrs
                    .rename_all
                    .map_or(raw.clone(), |r| r.apply_to_field(&raw))
            });
            let value = self.type_default(&field.ty, scope, field.ty.span(), path)?;
            if let Some(pred) = &fattrs.skip_serializing_if
                && skip_predicate(pred, &value) == Some(true)
            {
                continue;
            }
            if fattrs.flatten {
                if let Value::Object(inner) = value {
                    out.extend(inner);
                }
                continue;
            }
            out.insert(name, value);
        }
        Some(Value::Object(out))
    }

    /// The field of `Self::default()` under a container `#[serde(default)]`.
    fn container_default_field(
        &mut self,
        container: &syn::ItemStruct,
        field: &syn::Field,
        scope: &Scope<'a>,
        path: &str,
    ) -> Option<Value> {
        if let Some((module, imp)) = self
            .krate
            .manual_impl_of(&container.ident.to_string(), "Default")
        {
            let body = imp.items.iter().find_map(|i| match i {
                syn::ImplItem::Fn(f) if f.sig.ident == "default" => Some(&f.block),
                _ => None,
            });
            if let Some(v) = body.and_then(|b| struct_literal_field(b, field)) {
                return Some(v);
            }
            self.unsupported(
                module,
                imp.span(),
                format!(
                    "rsop cannot evaluate `{}`'s `Default` impl",
                    container.ident
                ),
                "make `default()` a struct literal of literal values",
                path,
            );
            return None;
        }
        self.type_default(&field.ty, scope, field.ty.span(), path)
    }

    fn container_fn_default_field(
        &mut self,
        fn_path: &str,
        field: &syn::Field,
        scope: &Scope<'a>,
        path: &str,
    ) -> Option<Value> {
        let segments: Vec<String> = fn_path.split("::").map(str::to_string).collect();
        if let Some((_, f)) = self.krate.resolve_fn(scope.module, &segments)
            && let Some(v) = struct_literal_field(&f.block, field)
        {
            return Some(v);
        }
        self.unsupported(
            scope.module,
            field.span(),
            format!("rsop cannot evaluate the container default `{fn_path}`"),
            "make it return a struct literal of literal values",
            path,
        );
        None
    }

    /// `default = "path"`: a function of this crate whose body is a literal.
    fn call_default_fn(
        &mut self,
        fn_path: &str,
        scope: &Scope<'a>,
        span: proc_macro2::Span,
        path: &str,
    ) -> Option<Value> {
        let segments: Vec<String> = fn_path.split("::").map(str::to_string).collect();
        let body = if let Some((_, f)) = self.krate.resolve_fn(scope.module, &segments) {
            Some(f.block.as_ref().clone())
        } else if segments.len() == 2 {
            self.krate
                .resolve_assoc_fn(&segments[0], &segments[1])
                .map(|(_, f)| f.block.clone())
        } else {
            None
        };
        if let Some(v) = body.as_ref().and_then(block_value) {
            return Some(v);
        }
        self.unsupported(
            scope.module,
            span,
            format!("rsop cannot evaluate the default function `{fn_path}`"),
            "make it a function of this crate whose body is a literal (such as `3`, `\"text\".into()`, `Some(1)`, `vec![...]`)",
            path,
        );
        None
    }
}

/// The value of `field` in a block ending in `Self { field: <literal>, .. }`.
fn struct_literal_field(block: &syn::Block, field: &syn::Field) -> Option<Value> {
    let Some(syn::Stmt::Expr(Expr::Struct(s), None)) = block.stmts.last() else {
        return None;
    };
    let ident = field.ident.as_ref()?;
    s.fields.iter().find_map(|fv| match &fv.member {
        syn::Member::Named(n) if n == ident => const_expr(&fv.expr),
        _ => None,
    })
}

/// Known `skip_serializing_if` predicates, applied to a serialized value.
fn skip_predicate(pred: &str, value: &Value) -> Option<bool> {
    let pred = pred.replace(' ', "");
    let last = pred.rsplit("::").next().unwrap_or(&pred);
    match last {
        "is_none" => Some(value.is_null()),
        "is_some" => Some(!value.is_null()),
        "is_empty" => Some(match value {
            Value::String(s) => s.is_empty(),
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            _ => return None,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(s: &str) -> Expr {
        syn::parse_str(s).unwrap()
    }

    #[test]
    fn evaluates_literal_forms() {
        assert_eq!(const_expr(&expr("3")), Some(json!(3)));
        assert_eq!(const_expr(&expr("-2.5")), Some(json!(-2.5)));
        assert_eq!(const_expr(&expr("\"a\".to_string()")), Some(json!("a")));
        assert_eq!(const_expr(&expr("String::from(\"a\")")), Some(json!("a")));
        assert_eq!(const_expr(&expr("Some(1)")), Some(json!(1)));
        assert_eq!(
            const_expr(&expr("vec![\"a\".into(), \"b\".into()]")),
            Some(json!(["a", "b"]))
        );
        assert_eq!(const_expr(&expr("compute()")), None);
    }

    #[test]
    fn evaluates_json_tokens() {
        let ts: TokenStream = "{\"rule\": \"self > 0\", \"n\": [1, -2, true, null]}"
            .parse()
            .unwrap();
        assert_eq!(
            json_tokens(ts),
            Some(json!({"rule": "self > 0", "n": [1, -2, true, null]}))
        );
    }

    #[test]
    fn evaluates_cel_rules() {
        assert_eq!(
            cel_rule(&expr("\"self.a > 0\"")),
            Some(json!({"rule": "self.a > 0"}))
        );
        assert_eq!(
            cel_rule(&expr(
                "Rule::new(\"self.a\").message(\"m\").reason(Reason::FieldValueForbidden)"
            )),
            Some(json!({"rule": "self.a", "message": "m", "reason": "FieldValueForbidden"}))
        );
        assert_eq!(
            cel_rule(&expr("(\"r\", \"m\")")),
            Some(json!({"rule": "r", "message": "m"}))
        );
        assert_eq!(
            cel_rule(&expr(
                "Rule::new(\"r\").message(Message::Expression(\"e\".into()))"
            )),
            Some(json!({"rule": "r", "messageExpression": "e"}))
        );
    }

    #[test]
    fn evaluates_merge_strategies() {
        assert_eq!(
            merge_strategy(&expr("ListMerge::Set")),
            Some(vec![("x-kubernetes-list-type".into(), json!("set"))])
        );
        assert_eq!(
            merge_strategy(&expr("ListMerge::Map(vec![\"name\".into()])")),
            Some(vec![
                ("x-kubernetes-list-type".into(), json!("map")),
                ("x-kubernetes-list-map-keys".into(), json!(["name"]))
            ])
        );
    }
}
