//! The string values the code computes where it names a group, a kind or a
//! resource: literals, the crate's constants, variables and functions that
//! hold or return one.

use std::collections::HashMap;

use syn::visit::Visit;

/// A group, kind and plural written as literals: the parts a
/// `GroupVersionKind` or an `ApiResource` is made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Literal {
    pub(super) group: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) plural: Option<String>,
}

impl Literal {
    pub(super) fn or(self, other: &Literal) -> Literal {
        Literal {
            group: self.group.or_else(|| other.group.clone()),
            kind: self.kind.or_else(|| other.kind.clone()),
            plural: self.plural.or_else(|| other.plural.clone()),
        }
    }
}

/// A string literal, also as `"x".into()`, `"x".to_string()`,
/// `String::from("x")`.
pub(super) fn string_value(expr: &syn::Expr) -> Option<String> {
    string_in(expr, &HashMap::new())
}

/// [`string_value`], with the crate's string constants `consts` read too
/// (`VELERO_GROUP.into()`).
pub(super) fn string_in(expr: &syn::Expr, consts: &HashMap<String, String>) -> Option<String> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        syn::Expr::Path(p) => consts
            .get(&p.path.segments.last()?.ident.to_string())
            .cloned(),
        syn::Expr::MethodCall(m)
            if matches!(
                m.method.to_string().as_str(),
                "into" | "to_string" | "to_owned"
            ) =>
        {
            string_in(&m.receiver, consts)
        }
        syn::Expr::Call(c) if c.args.len() == 1 => match &*c.func {
            syn::Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "from") => {
                string_in(&c.args[0], consts)
            }
            _ => None,
        },
        syn::Expr::Reference(r) => string_in(&r.expr, consts),
        _ => None,
    }
}

/// The literal group, kind and plural in `exprs`: a
/// `GroupVersionKind::gvk("group", "version", "Kind")`, the plural of
/// `ApiResource::from_gvk_with_plural(.., "plural")`, an `ApiResource { .. }`
/// or `GroupVersionKind { .. }` written field by field, and the variables
/// of `known` that hold such values.
pub(super) fn literal_parts<'e>(
    exprs: impl IntoIterator<Item = &'e syn::Expr>,
    known: &Known<'_>,
) -> Literal {
    struct Finder<'k> {
        found: Literal,
        known: &'k Known<'k>,
    }
    impl Finder<'_> {
        fn string(&self, expr: &syn::Expr) -> Option<String> {
            string_in(expr, self.known.consts)
        }
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = &*call.func
                && let Some(last) = p.path.segments.last()
            {
                let name = last.ident.to_string();
                let items: Vec<Option<String>> = call.args.iter().map(|a| self.string(a)).collect();
                match (name.as_str(), items.as_slice()) {
                    ("gvk", [Some(group), Some(_), Some(kind)]) => {
                        self.found.group = Some(group.clone());
                        self.found.kind = Some(kind.clone());
                    }
                    ("from_gvk_with_plural", [_, Some(plural)]) => {
                        self.found.plural = Some(plural.clone());
                    }
                    _ => {
                        // A function of the crate that returns a literal
                        // `ApiResource` or `GroupVersionKind`.
                        if let Some(literal) = self.known.functions.get(&name) {
                            self.found = std::mem::take(&mut self.found).or(literal);
                        }
                    }
                }
            }
            syn::visit::visit_expr_call(self, call);
        }
        fn visit_expr_struct(&mut self, item: &'ast syn::ExprStruct) {
            if item
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "ApiResource" || s.ident == "GroupVersionKind")
            {
                for field in &item.fields {
                    let syn::Member::Named(name) = &field.member else {
                        continue;
                    };
                    let value = self.string(&field.expr);
                    match name.to_string().as_str() {
                        "group" => self.found.group = value,
                        "kind" => self.found.kind = value,
                        "plural" => self.found.plural = value,
                        _ => {}
                    }
                }
            }
            syn::visit::visit_expr_struct(self, item);
        }
        fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
            if let Some(ident) = path.path.get_ident()
                && let Some(known) = self.known.vars.get(&ident.to_string())
            {
                self.found = std::mem::take(&mut self.found).or(known);
            }
        }
    }
    let mut finder = Finder {
        found: Literal::default(),
        known,
    };
    for expr in exprs {
        finder.visit_expr(expr);
    }
    finder.found
}

/// What literal values are known where an expression is read: the
/// function's variables that hold one, the crate's string constants, and
/// its functions that return one.
pub(super) struct Known<'a> {
    pub(super) vars: &'a HashMap<String, Literal>,
    pub(super) consts: &'a HashMap<String, String>,
    pub(super) functions: &'a HashMap<String, Literal>,
}

/// The crate's string constants (`const GROUP: &str = "velero.io";`), read
/// line by line from every file; a name two constants share is left out.
pub(super) fn string_consts<'t>(texts: impl Iterator<Item = &'t str>) -> HashMap<String, String> {
    let mut out: HashMap<String, Option<String>> = HashMap::new();
    for text in texts {
        for line in text.lines() {
            let line = line.trim_start();
            let line = line.strip_prefix("pub ").unwrap_or(line);
            let line = line
                .strip_prefix("pub(crate) ")
                .unwrap_or(line)
                .trim_start();
            let Some(rest) = line.strip_prefix("const ") else {
                continue;
            };
            let Some((name, rest)) = rest.split_once(':') else {
                continue;
            };
            let Some((ty, value)) = rest.split_once('=') else {
                continue;
            };
            if ty.trim() != "&str" && ty.trim() != "&'static str" {
                continue;
            }
            let Ok(syn::Lit::Str(lit)) =
                syn::parse_str::<syn::Lit>(value.trim().trim_end_matches(';'))
            else {
                continue;
            };
            let entry = out
                .entry(name.trim().to_string())
                .or_insert(Some(lit.value()));
            if entry.as_deref() != Some(lit.value().as_str()) {
                *entry = None;
            }
        }
    }
    out.into_iter().filter_map(|(k, v)| Some((k, v?))).collect()
}
