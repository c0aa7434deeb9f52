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
use crate::manifests::derive::attrs::{DefaultAttr, ItemAttrs, ItemKind, RenameRule};
use crate::manifests::read::source::{Crate, Module, Resolved};

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
    const_expr_in(e, &mut |_| None)
}

/// [`const_expr`], with `resolve` giving the value of a path that is not a
/// std constant (a `const` or `static` of the crate) and of a call to a
/// function it does not know (one of the crate's); it gets the expression.
pub fn const_expr_in(e: &Expr, resolve: &mut dyn FnMut(&Expr) -> Option<Value>) -> Option<Value> {
    let mut eval = |e: &Expr| const_expr_in(e, resolve);
    match e {
        Expr::Lit(l) => literal(&l.lit),
        Expr::Paren(p) => eval(&p.expr),
        Expr::Group(g) => eval(&g.expr),
        Expr::Reference(r) => eval(&r.expr),
        // `*RE` of a lazily built regex: its pattern, as `to_string()` gives.
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => eval(&u.expr),
        // The body of `|| ...`, as in `LazyLock::new(|| Regex::new("..").unwrap())`.
        Expr::Closure(c) if c.inputs.is_empty() => eval(&c.body),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match eval(&u.expr)? {
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Some(Value::from(i.checked_neg()?))
                } else {
                    Some(Value::Number(Number::from_f64(-n.as_f64()?)?))
                }
            }
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => match eval(&u.expr)? {
            Value::Bool(b) => Some(Value::Bool(!b)),
            _ => None,
        },
        Expr::Binary(b) => {
            let (left, right) = (eval(&b.left)?, eval(&b.right)?);
            match b.op {
                // Values of any kind compare as their serializations do.
                syn::BinOp::Eq(_) if !matches!(left, Value::Number(_)) => {
                    Some(Value::Bool(left == right))
                }
                syn::BinOp::Ne(_) if !matches!(left, Value::Number(_)) => {
                    Some(Value::Bool(left != right))
                }
                _ => binary(&b.op, &left, &right),
            }
        }
        Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(
                    m.method.to_string().as_str(),
                    "is_empty" | "is_none" | "is_some" | "len"
                ) =>
        {
            let v = eval(&m.receiver)?;
            Some(match (m.method.to_string().as_str(), &v) {
                ("is_none", _) => Value::Bool(v.is_null()),
                ("is_some", _) => Value::Bool(!v.is_null()),
                ("is_empty", Value::String(s)) => Value::Bool(s.is_empty()),
                ("is_empty", Value::Array(a)) => Value::Bool(a.is_empty()),
                ("is_empty", Value::Object(o)) => Value::Bool(o.is_empty()),
                ("len", Value::String(s)) => Value::from(s.len()),
                ("len", Value::Array(a)) => Value::from(a.len()),
                ("len", Value::Object(o)) => Value::from(o.len()),
                _ => return None,
            })
        }
        Expr::Cast(c) => cast(eval(&c.expr)?, &c.ty),
        Expr::Path(p) if p.path.is_ident("None") => Some(Value::Null),
        Expr::Path(p) => std_constant(&p.path).or_else(|| resolve(e)),
        Expr::Tuple(t) => t
            .elems
            .iter()
            .map(&mut eval)
            .collect::<Option<Vec<_>>>()
            .map(Value::Array),
        Expr::Call(call) => {
            let Expr::Path(func) = call.func.as_ref() else {
                return None;
            };
            let name: Vec<String> = func
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let args: Vec<&Expr> = call.args.iter().collect();
            let name: Vec<&str> = name.iter().map(String::as_str).collect();
            let type_name = name.len().checked_sub(2).map(|i| name[i]);
            match (name.last().copied(), type_name, args.as_slice()) {
                (Some("Some"), None, [x]) => eval(x),
                (Some("from"), Some("String" | "From"), [x]) => eval(x),
                (Some("new"), Some("Vec" | "BTreeSet" | "HashSet" | "IndexSet"), []) => {
                    Some(json!([]))
                }
                (Some("new"), Some("BTreeMap" | "HashMap" | "IndexMap"), []) => Some(json!({})),
                (Some("new"), Some("String"), []) => Some(json!("")),
                // A regex stands for its pattern (schemars writes
                // `regex.to_string()`); a lazy static for its value.
                (Some("new"), Some("Regex"), [x]) => eval(x),
                // k8s-openapi values serialize as their content.
                (Some("Quantity"), _, [x]) => eval(x),
                (Some("Int" | "String"), Some("IntOrString"), [x]) => eval(x),
                (Some("new"), Some("LazyLock" | "Lazy"), [x]) => eval(x),
                // `BTreeMap::from([("a", 1), ...])`: serde writes a map.
                (Some("from" | "from_iter"), Some("BTreeMap" | "HashMap" | "IndexMap"), [x]) => {
                    pairs_to_map(eval(x)?)
                }
                (
                    Some("from" | "from_iter"),
                    Some("Vec" | "BTreeSet" | "HashSet" | "IndexSet"),
                    [x],
                ) => match eval(x)? {
                    a @ Value::Array(_) => Some(a),
                    _ => None,
                },
                // A function of the crate, such as another default function.
                _ => resolve(e),
            }
        }
        Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(
                    m.method.to_string().as_str(),
                    "to_string"
                        | "to_owned"
                        | "into"
                        | "clone"
                        | "into_iter"
                        | "iter"
                        | "to_vec"
                        | "cloned"
                        | "copied"
                        | "collect"
                ) =>
        {
            // A `collect()` into a map cannot be told from one into a Vec
            // without the target type; pairs stay pairs (the caller that
            // knows the type turns them into a map).
            eval(&m.receiver)
        }
        Expr::MethodCall(m)
            if m.method == "unwrap" || (m.method == "expect" && m.args.len() == 1) =>
        {
            eval(&m.receiver)
        }
        Expr::Macro(m) if m.mac.path.is_ident("vec") => {
            let items = syn::parse::Parser::parse2(
                syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                m.mac.tokens.clone(),
            )
            .ok()?;
            items
                .iter()
                .map(&mut eval)
                .collect::<Option<Vec<_>>>()
                .map(Value::Array)
        }
        Expr::Macro(m) if m.mac.path.is_ident("format") => {
            let items = syn::parse::Parser::parse2(
                syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                m.mac.tokens.clone(),
            )
            .ok()?;
            let mut items = items.iter();
            let Some(Value::String(template)) = eval(items.next()?) else {
                return None;
            };
            let args = items.map(&mut eval).collect::<Option<Vec<_>>>()?;
            format_literal(&template, &args).map(Value::String)
        }
        Expr::Array(a) => a
            .elems
            .iter()
            .map(&mut eval)
            .collect::<Option<Vec<_>>>()
            .map(Value::Array),
        Expr::Repeat(r) => {
            let item = eval(&r.expr)?;
            let n = usize::try_from(eval(&r.len)?.as_u64()?).ok()?;
            (n <= 4096).then(|| Value::Array(vec![item; n]))
        }
        Expr::Block(b) => block_value_in(&b.block, resolve),
        // Conditions on constants.
        Expr::If(i) => {
            let Value::Bool(cond) = eval(&i.cond)? else {
                return None;
            };
            if cond {
                block_value_in(&i.then_branch, resolve)
            } else {
                const_expr_in(i.else_branch.as_ref().map(|(_, e)| e.as_ref())?, resolve)
            }
        }
        Expr::Match(m) => {
            let scrutinee = eval(&m.expr)?;
            for arm in &m.arms {
                if arm.guard.is_some() {
                    return None;
                }
                if pattern_matches(&arm.pat, &scrutinee)? {
                    return eval(&arm.body);
                }
            }
            None
        }
        _ => None,
    }
}

/// Whether a literal, wildcard or `|` pattern matches `value`; `None` for
/// patterns rsop does not evaluate (bindings, paths, structs).
fn pattern_matches(pat: &syn::Pat, value: &Value) -> Option<bool> {
    match pat {
        syn::Pat::Wild(_) => Some(true),
        syn::Pat::Lit(l) => Some(literal(&l.lit)? == *value),
        syn::Pat::Or(o) => {
            for case in &o.cases {
                if pattern_matches(case, value)? {
                    return Some(true);
                }
            }
            Some(false)
        }
        syn::Pat::Paren(p) => pattern_matches(&p.pat, value),
        _ => None,
    }
}

/// `MAX` and `MIN` of the primitive numbers (`u16::MAX`, `std::i32::MIN`).
fn std_constant(path: &syn::Path) -> Option<Value> {
    let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let tail: Vec<&str> = names.iter().map(String::as_str).collect();
    let tail = match tail.as_slice() {
        ["std" | "core", rest @ ..] => rest,
        rest => rest,
    };
    let [ty, name] = tail else { return None };
    Some(match (*ty, *name) {
        ("u8", "MAX") => Value::from(u8::MAX),
        ("u16", "MAX") => Value::from(u16::MAX),
        ("u32", "MAX") => Value::from(u32::MAX),
        ("u64" | "usize", "MAX") => Value::from(u64::MAX),
        ("u8" | "u16" | "u32" | "u64" | "usize", "MIN") => Value::from(0),
        ("i8", "MAX") => Value::from(i8::MAX),
        ("i8", "MIN") => Value::from(i8::MIN),
        ("i16", "MAX") => Value::from(i16::MAX),
        ("i16", "MIN") => Value::from(i16::MIN),
        ("i32", "MAX") => Value::from(i32::MAX),
        ("i32", "MIN") => Value::from(i32::MIN),
        ("i64" | "isize", "MAX") => Value::from(i64::MAX),
        ("i64" | "isize", "MIN") => Value::from(i64::MIN),
        _ => return None,
    })
}

/// Integer arithmetic (checked, in i128) and float arithmetic, comparisons,
/// boolean logic; the rest is not a constant rsop evaluates.
fn binary(op: &syn::BinOp, left: &Value, right: &Value) -> Option<Value> {
    use syn::BinOp as B;
    if let (Value::Bool(a), Value::Bool(b)) = (left, right) {
        return match op {
            B::And(_) => Some(Value::Bool(*a && *b)),
            B::Or(_) => Some(Value::Bool(*a || *b)),
            B::Eq(_) => Some(Value::Bool(a == b)),
            B::Ne(_) => Some(Value::Bool(a != b)),
            _ => None,
        };
    }
    let (Value::Number(a), Value::Number(b)) = (left, right) else {
        return None;
    };
    let int = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    if let (Some(a), Some(b)) = (int(a), int(b)) {
        let shift = || u32::try_from(b).ok();
        let v = match op {
            B::Add(_) => a.checked_add(b)?,
            B::Sub(_) => a.checked_sub(b)?,
            B::Mul(_) => a.checked_mul(b)?,
            B::Div(_) => a.checked_div(b)?,
            B::Rem(_) => a.checked_rem(b)?,
            B::Shl(_) => a.checked_shl(shift()?)?,
            B::Shr(_) => a.checked_shr(shift()?)?,
            B::BitAnd(_) => a & b,
            B::BitOr(_) => a | b,
            B::BitXor(_) => a ^ b,
            B::Lt(_) => return Some(Value::Bool(a < b)),
            B::Le(_) => return Some(Value::Bool(a <= b)),
            B::Gt(_) => return Some(Value::Bool(a > b)),
            B::Ge(_) => return Some(Value::Bool(a >= b)),
            B::Eq(_) => return Some(Value::Bool(a == b)),
            B::Ne(_) => return Some(Value::Bool(a != b)),
            _ => return None,
        };
        return i64::try_from(v)
            .map(Value::from)
            .ok()
            .or_else(|| u64::try_from(v).ok().map(Value::from));
    }
    let (a, b) = (a.as_f64()?, b.as_f64()?);
    let v = match op {
        B::Add(_) => a + b,
        B::Sub(_) => a - b,
        B::Mul(_) => a * b,
        B::Div(_) => a / b,
        _ => return None,
    };
    Number::from_f64(v).map(Value::Number)
}

/// `value as ty` for the numeric primitives.
fn cast(value: Value, ty: &syn::Type) -> Option<Value> {
    let syn::Type::Path(p) = ty else { return None };
    let name = p.path.get_ident()?.to_string();
    let Value::Number(n) = value else { return None };
    match name.as_str() {
        "f32" | "f64" => Number::from_f64(n.as_f64()?).map(Value::Number),
        "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64" | "isize" => {
            if n.is_f64() {
                // `as` truncates toward zero.
                #[allow(clippy::cast_possible_truncation)]
                let t = n.as_f64()?.trunc() as i64;
                Some(Value::from(t))
            } else {
                Some(Value::Number(n))
            }
        }
        _ => None,
    }
}

/// `[(k, v), ...]` as the JSON object serde writes for a map: keys that are
/// numbers or booleans become their text, as `serde_json` does.
fn pairs_to_map(pairs: Value) -> Option<Value> {
    let Value::Array(pairs) = pairs else {
        return None;
    };
    let mut map = Map::new();
    for pair in pairs {
        let Value::Array(kv) = pair else { return None };
        let [k, v] = <[Value; 2]>::try_from(kv).ok()?;
        let key = match k {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => return None,
        };
        map.insert(key, v);
    }
    Some(Value::Object(map))
}

/// `format!` of literal arguments: `{}` and `{N}` placeholders with no
/// format spec, and `{{`/`}}` escapes.
fn format_literal(template: &str, args: &[Value]) -> Option<String> {
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    let mut out = String::new();
    let mut next = 0;
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut inner = String::new();
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                    inner.push(c);
                }
                let index = if inner.is_empty() {
                    next += 1;
                    next - 1
                } else {
                    inner.parse().ok()?
                };
                out.push_str(&text(args.get(index)?)?);
            }
            '}' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// The value of `e` written in `module`: [`const_expr`], with the crate's
/// constants, statics and argument-less functions evaluated where named
/// (to a bounded depth, so that cycles end).
/// `Namespace::API_VERSION`, `Deployment::KIND`...: the `Resource`
/// constants of a Kubernetes kind k8s-openapi types, for the kinds rsop
/// knows (see [`crate::project::k8s_kinds`]).
fn k8s_resource_constant(krate: &Crate, module: &Module, path: &syn::Path) -> Option<Value> {
    let n = path.segments.len();
    if n < 2 {
        return None;
    }
    let constant = &path.segments[n - 1];
    let ty_path = syn::Path {
        leading_colon: path.leading_colon,
        segments: path.segments.iter().take(n - 1).cloned().collect(),
    };
    let Some(Resolved::External(full)) = krate.resolve(module, &ty_path) else {
        return None;
    };
    if full.first().is_none_or(|f| f != "k8s_openapi") {
        return None;
    }
    let kind = crate::project::k8s_kinds::KINDS
        .iter()
        .find(|k| k.rust_path() == full.join("::"))?;
    let group = if kind.group == "core" { "" } else { kind.group };
    Some(Value::String(match constant.ident.to_string().as_str() {
        "API_VERSION" => kind.api_version(),
        "KIND" => kind.kind.to_string(),
        "GROUP" => group.to_string(),
        "VERSION" => kind.version.to_string(),
        "URL_PATH_SEGMENT" => kind.plural.to_string(),
        _ => return None,
    }))
}

pub fn value_in(krate: &Crate, module: &Module, e: &Expr) -> Option<Value> {
    value_at_depth(krate, module, e, 0)
}

fn value_at_depth(krate: &Crate, module: &Module, e: &Expr, depth: usize) -> Option<Value> {
    value_with(krate, module, e, depth, &[])
}

/// [`value_in`] with the arguments of the function being evaluated bound
/// (`params`).
fn value_with(
    krate: &Crate,
    module: &Module,
    e: &Expr,
    depth: usize,
    params: &[(String, Value)],
) -> Option<Value> {
    const_expr_in(e, &mut |named| {
        if depth >= 16 {
            return None;
        }
        let (path, args) = match named {
            Expr::Path(p) => {
                if let Some(name) = p.path.get_ident()
                    && let Some((_, v)) = params.iter().find(|(n, _)| name == n)
                {
                    return Some(v.clone());
                }
                if let Some((m, expr)) = krate.resolve_const(module, &p.path) {
                    return value_at_depth(krate, m, expr, depth + 1);
                }
                if let Some(v) = k8s_resource_constant(krate, module, &p.path) {
                    return Some(v);
                }
                (&p.path, Vec::new())
            }
            Expr::Call(c) => {
                let Expr::Path(f) = c.func.as_ref() else {
                    return None;
                };
                let args = c
                    .args
                    .iter()
                    .map(|a| value_with(krate, module, a, depth, params))
                    .collect::<Option<Vec<_>>>()?;
                (&f.path, args)
            }
            _ => return None,
        };
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let (m, sig, block) = krate.callable(module, &segments)?;
        // The arguments, bound to the parameters' names.
        let names: Vec<String> = sig
            .inputs
            .iter()
            .map(|input| match input {
                syn::FnArg::Typed(t) => match t.pat.as_ref() {
                    syn::Pat::Ident(i) => Some(i.ident.to_string()),
                    _ => None,
                },
                syn::FnArg::Receiver(_) => None,
            })
            .collect::<Option<Vec<_>>>()?;
        if names.len() != args.len() {
            return None;
        }
        let bound: Vec<(String, Value)> = names.into_iter().zip(args).collect();
        match block.stmts.as_slice() {
            [syn::Stmt::Expr(body, None)] => value_with(krate, m, body, depth + 1, &bound),
            _ => None,
        }
    })
}

/// The value of a block whose only statement is an expression.
fn block_value_in(
    block: &syn::Block,
    resolve: &mut dyn FnMut(&Expr) -> Option<Value>,
) -> Option<Value> {
    match block.stmts.as_slice() {
        [syn::Stmt::Expr(e, None)] => const_expr_in(e, resolve),
        _ => None,
    }
}

/// A value written with `serde_json::json!` syntax.
pub fn json_tokens(tokens: TokenStream) -> Option<Value> {
    json_tokens_with(tokens, &mut |_| None)
}

/// [`json_tokens`], where `interpolate` gives the value of a Rust expression
/// written in value position (`json!({"items": generator.subschema_for::<T>()})`).
pub fn json_tokens_with(
    tokens: TokenStream,
    interpolate: &mut dyn FnMut(&Expr) -> Option<Value>,
) -> Option<Value> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    json_trees(&trees, interpolate)
}

fn json_trees(
    trees: &[TokenTree],
    interpolate: &mut dyn FnMut(&Expr) -> Option<Value>,
) -> Option<Value> {
    match trees {
        [TokenTree::Ident(i)] => match i.to_string().as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            "null" => Some(Value::Null),
            _ => interpolate(&Expr::Path(syn::ExprPath {
                attrs: Vec::new(),
                qself: None,
                path: syn::Path::from(i.clone()),
            })),
        },
        [TokenTree::Literal(l)] => {
            let lit: Lit = syn::parse_str(&l.to_string()).ok()?;
            literal(&lit)
        }
        [TokenTree::Punct(p), rest @ ..] if p.as_char() == '-' => {
            match json_trees(rest, interpolate)? {
                Value::Number(n) => n
                    .as_i64()
                    .map(|i| Value::from(-i))
                    .or_else(|| Number::from_f64(-n.as_f64()?).map(Value::Number)),
                _ => None,
            }
        }
        [TokenTree::Group(g)] if g.delimiter() == Delimiter::Bracket => {
            let items = split_commas(g.stream());
            items
                .iter()
                .map(|t| json_trees(t, interpolate))
                .collect::<Option<Vec<_>>>()
                .map(Value::Array)
        }
        [TokenTree::Group(g)] if g.delimiter() == Delimiter::Brace => {
            let mut map = Map::new();
            for entry in split_commas(g.stream()) {
                let colon = entry
                    .iter()
                    .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ':'))?;
                let Value::String(key) = json_trees(&entry[..colon], interpolate)? else {
                    return None;
                };
                map.insert(key, json_trees(&entry[colon + 1..], interpolate)?);
            }
            Some(Value::Object(map))
        }
        [TokenTree::Group(g)] if g.delimiter() == Delimiter::Parenthesis => {
            json_tokens_with(g.stream(), interpolate)
        }
        _ => {
            let expr: Expr = syn::parse2(trees.iter().cloned().collect()).ok()?;
            interpolate(&expr)
        }
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
        // `("rule", "message").into()`: a `Rule` from its pair.
        Expr::MethodCall(m) if m.method == "into" && m.args.is_empty() => cel_rule(&m.receiver),
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

/// The keys a merge strategy sets: any value kube-derive accepts, which is
/// anything `Into<MergeStrategy>`: `ListMerge::..`, `MapMerge::..`,
/// `StructMerge::..`, each also wrapped in its `MergeStrategy` variant
/// (`MergeStrategy::ListType(ListMerge::Set)`) or followed by `.into()`,
/// by any path (`kube::core::ListMerge::Set`). A `Map`'s keys are any
/// constant list of strings (`vec!["name".into()]`, `vec![String::from(..)]`).
pub fn merge_strategy(e: &Expr) -> Option<Vec<(String, Value)>> {
    let (ty, variant, arg) = match e {
        Expr::Paren(p) => return merge_strategy(&p.expr),
        Expr::Group(g) => return merge_strategy(&g.expr),
        Expr::MethodCall(m) if m.method == "into" && m.args.is_empty() => {
            return merge_strategy(&m.receiver);
        }
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
            if n < 2 || c.args.len() > 1 {
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
        // `MergeStrategy::ListType(ListMerge::Set)`: the same keys as the
        // inner strategy, which must be of the variant's own kind.
        ("MergeStrategy", wrapper @ ("ListType" | "MapType" | "StructType")) => {
            let inner = arg?;
            let kind = match inner {
                Expr::Path(p) => p.path.segments.iter().rev().nth(1),
                Expr::Call(c) => match c.func.as_ref() {
                    Expr::Path(p) => p.path.segments.iter().rev().nth(1),
                    _ => None,
                },
                _ => None,
            }?;
            let expected = match wrapper {
                "ListType" => "ListMerge",
                "MapType" => "MapMerge",
                _ => "StructMerge",
            };
            if kind.ident != expected {
                return None;
            }
            return merge_strategy(inner);
        }
        ("ListMerge", "Atomic") => vec![("x-kubernetes-list-type".into(), json!("atomic"))],
        ("ListMerge", "Set") => vec![("x-kubernetes-list-type".into(), json!("set"))],
        ("ListMerge", "Map") => {
            let keys = const_expr(arg?)?;
            let Value::Array(items) = &keys else {
                return None;
            };
            if !items.iter().all(Value::is_string) {
                return None;
            }
            vec![
                ("x-kubernetes-list-type".into(), json!("map")),
                ("x-kubernetes-list-map-keys".into(), keys),
            ]
        }
        ("MapMerge", "Atomic") => vec![("x-kubernetes-map-type".into(), json!("atomic"))],
        ("MapMerge", "Granular") => vec![("x-kubernetes-map-type".into(), json!("granular"))],
        // `x-kubernetes-struct-type`, which JSONSchemaProps drops: no
        // effect on the CRD.
        ("StructMerge", "Atomic" | "Granular") => Vec::new(),
        _ => return None,
    })
}

impl<'a> Builder<'a> {
    /// A numeric bound (`min = 1`, `max = "10"`).
    pub(super) fn eval_number(&mut self, e: &Expr, scope: &Scope<'a>, path: &str) -> Option<Value> {
        let v = match value_in(self.krate, scope.module, e) {
            Some(Value::String(s)) => syn::parse_str::<Expr>(&s)
                .ok()
                .and_then(|e| value_in(self.krate, scope.module, &e)),
            other => other,
        };
        if let Some(n @ Value::Number(_)) = v {
            Some(n)
        } else {
            self.unsupported(
                scope.module,
                e.span(),
                "rsop cannot evaluate this number",
                "write it as a literal or a constant of this crate",
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
        let v = value_in(self.krate, scope.module, e);
        if v.is_none() {
            self.unsupported(
                scope.module,
                e.span(),
                "rsop cannot evaluate this example",
                "write it as a literal or a constant of this crate",
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
            (Some(DefaultAttr::Path(p)), _) => {
                self.call_default_fn(p, &field.ty, scope, field.span(), path)
            }
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
            let skip = skip_predicate(pred, &value)
                .or_else(|| self.crate_predicate(pred, &value, &field.ty, scope, path));
            match skip {
                Some(true) => return None,
                Some(false) => {}
                None => {
                    self.unsupported(scope.module, field.span(), format!("rsop cannot evaluate `skip_serializing_if = \"{pred}\"` on the default value"), "use `Option::is_none`, `Vec::is_empty`, `String::is_empty`, a map's `is_empty`, or a function of this crate comparing its argument with a constant or `T::default()`", path);
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
                    // k8s-openapi's derived `Default`: what its serializer
                    // writes of it, the required fields at their defaults.
                    _ if full.first().is_some_and(|f| f == "k8s_openapi")
                        && let Some(value) = self
                            .k8s
                            .schema(&super::k8s_key(&full))
                            .and_then(|schema| k8s_default(&schema)) =>
                    {
                        value
                    }
                    _ => {
                        self.unsupported(scope.module, span, format!("rsop cannot compute `{}::default()`", full.join("::")), "give the field an explicit `#[serde(default = \"...\")]` function returning a literal", path);
                        return None;
                    }
                };
                Some(value)
            }
            Some(Resolved::Local(item))
                if matches!(item.item, syn::Item::Struct(_) | syn::Item::Enum(_))
                    && self.krate.has_manual_default(&name) =>
            {
                self.manual_default(item, ty, scope, span, path)
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
            let name = serde_name(field, &fattrs, &cattrs);
            let value = self.type_default(&field.ty, scope, field.ty.span(), path)?;
            write_field(&mut out, &fattrs, name, value);
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
            if let Some(v) =
                body.and_then(|b| self.struct_literal_field(module, b, field, scope, path))
            {
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
        if let Some((m, f)) = self.krate.resolve_fn(scope.module, &segments)
            && let Some(v) = self.struct_literal_field(m, &f.block, field, scope, path)
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

    /// `T::default()` from a hand-written `impl Default for T` whose body
    /// is an expression [`Self::typed_value`] evaluates (`Self { .. }`,
    /// `Self::Variant`, a constant, another default).
    fn manual_default(
        &mut self,
        item: crate::manifests::read::source::ItemRef<'a>,
        ty: &syn::Type,
        scope: &Scope<'a>,
        span: proc_macro2::Span,
        path: &str,
    ) -> Option<Value> {
        let ident = match item.item {
            syn::Item::Struct(s) => &s.ident,
            syn::Item::Enum(e) => &e.ident,
            _ => return None,
        };
        let (module, imp) = self.krate.manual_impl_of(&ident.to_string(), "Default")?;
        let tail = imp.items.iter().find_map(|i| match i {
            syn::ImplItem::Fn(f) if f.sig.ident == "default" => match f.block.stmts.as_slice() {
                [syn::Stmt::Expr(e, None)] => Some(e),
                _ => None,
            },
            _ => None,
        });
        let value = tail.and_then(|e| self.typed_value(e, module, ty, scope, 1, path));
        if value.is_none() {
            self.unsupported(
                module,
                span.join(imp.span()).unwrap_or_else(|| imp.span()),
                format!("rsop cannot evaluate `{ident}`'s `Default` impl"),
                "make `default()` a struct literal (`Self { .. }`) or a variant, of constant values",
                path,
            );
        }
        value
    }

    /// A value of type `ty` (written in `ty_scope`) that the expression `e`
    /// (written in `module`) builds, serialized as serde would: struct
    /// literals with their renames, `skip_serializing_if` and
    /// `..Default::default()`, unit variants, `Some`, `vec![..]`,
    /// `Default::default()`, argument-less functions of the crate, and
    /// k8s-openapi's `Quantity(..)` and `IntOrString`; other expressions as
    /// [`value_in`] evaluates them.
    fn typed_value(
        &mut self,
        e: &Expr,
        module: &'a Module,
        ty: &syn::Type,
        ty_scope: &Scope<'a>,
        depth: usize,
        path: &str,
    ) -> Option<Value> {
        if depth > 16 {
            return None;
        }
        let ty = peel_type(ty);
        match e {
            Expr::Paren(p) => self.typed_value(&p.expr, module, ty, ty_scope, depth, path),
            Expr::Group(g) => self.typed_value(&g.expr, module, ty, ty_scope, depth, path),
            Expr::Struct(lit) => self.struct_literal(lit, module, ty, ty_scope, depth, path),
            Expr::MethodCall(m)
                if m.args.is_empty()
                    && matches!(m.method.to_string().as_str(), "into" | "clone" | "to_owned") =>
            {
                self.typed_value(&m.receiver, module, ty, ty_scope, depth, path)
            }
            Expr::Call(c) => {
                let Expr::Path(func) = c.func.as_ref() else {
                    return None;
                };
                let name = func.path.segments.last()?.ident.to_string();
                match (name.as_str(), c.args.len()) {
                    ("default", 0) => self.type_default(ty, ty_scope, func.path.span(), path),
                    ("Some", 1) => {
                        let (inner, inner_scope) = self.option_inner(ty, ty_scope)?;
                        self.typed_value(&c.args[0], module, &inner, &inner_scope, depth + 1, path)
                    }
                    // k8s-openapi's newtypes and `IntOrString` serialize as their content.
                    ("Quantity" | "Time" | "MicroTime" | "Int" | "String", 1) => {
                        value_in(self.krate, module, &c.args[0])
                    }
                    (_, 0) => {
                        let segments: Vec<String> = func
                            .path
                            .segments
                            .iter()
                            .map(|s| s.ident.to_string())
                            .collect();
                        let found = self
                            .krate
                            .callable(module, &segments)
                            .map(|(m, _, block)| (m, block.stmts.as_slice()));
                        match found {
                            Some((m, [syn::Stmt::Expr(tail, None)])) => {
                                self.typed_value(tail, m, ty, ty_scope, depth + 1, path)
                            }
                            _ => value_in(self.krate, module, e),
                        }
                    }
                    (_, 1) if func.path.segments.len() >= 2 => self
                        .newtype_variant(&func.path, &c.args[0], module, ty, ty_scope, depth, path)
                        .or_else(|| value_in(self.krate, module, e)),
                    _ => value_in(self.krate, module, e),
                }
            }
            // `Mode::Fast`, `Self::Fast`: a unit variant of a local enum.
            Expr::Path(p) if p.path.segments.len() >= 2 => self
                .unit_variant(&p.path, ty, ty_scope, path)
                .or_else(|| value_in(self.krate, module, e)),
            Expr::Macro(m) if m.mac.path.is_ident("vec") => {
                let items = syn::parse::Parser::parse2(
                    syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                    m.mac.tokens.clone(),
                )
                .ok()?;
                let element = element_type(ty)?;
                items
                    .iter()
                    .map(|x| self.typed_value(x, module, &element, ty_scope, depth + 1, path))
                    .collect::<Option<Vec<_>>>()
                    .map(Value::Array)
            }
            _ => value_in(self.krate, module, e),
        }
    }

    /// The variant `variant` names of the local enum `ty`: the enum's module,
    /// its attributes, the variant, and the variant's serde name.
    fn local_variant(
        &mut self,
        variant: &syn::Path,
        ty: &syn::Type,
        ty_scope: &Scope<'a>,
        path: &str,
    ) -> Option<(&'a Module, ItemAttrs, &'a syn::Variant, String)> {
        let syn::Type::Path(tp) = ty else { return None };
        let Some(Resolved::Local(item)) = self.krate.resolve(ty_scope.module, &tp.path) else {
            return None;
        };
        let syn::Item::Enum(e) = item.item else {
            return None;
        };
        let name = variant.segments.last()?.ident.to_string();
        let v = e.variants.iter().find(|v| v.ident == name)?;
        let cattrs = self.read_attrs(item.module, &e.attrs, ItemKind::Container, path);
        let vattrs = self.read_attrs(item.module, &v.attrs, ItemKind::Variant, path);
        let serde_name = vattrs.rename.clone().unwrap_or_else(|| {
            cattrs
                .rename_all
                .map_or(name.clone(), |r| r.apply_to_variant(&name))
        });
        let untagged = cattrs.untagged || vattrs.untagged;
        let cattrs = ItemAttrs { untagged, ..cattrs };
        Some((item.module, cattrs, v, serde_name))
    }

    /// `Reference::Branch(value)`, a newtype variant of the local enum
    /// `ty`, serialized as serde does for an externally tagged or an
    /// untagged enum (`{"branch": value}`, `value`).
    #[allow(clippy::too_many_arguments)]
    fn newtype_variant(
        &mut self,
        variant: &syn::Path,
        arg: &Expr,
        module: &'a Module,
        ty: &syn::Type,
        ty_scope: &Scope<'a>,
        depth: usize,
        path: &str,
    ) -> Option<Value> {
        let (enum_module, cattrs, v, name) = self.local_variant(variant, ty, ty_scope, path)?;
        let syn::Fields::Unnamed(fields) = &v.fields else {
            return None;
        };
        let [field] = fields.unnamed.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        if cattrs.tag.is_some() {
            return None;
        }
        let field_scope = Scope::new(enum_module);
        let value = self.typed_value(arg, module, &field.ty, &field_scope, depth + 1, path)?;
        if cattrs.untagged {
            return Some(value);
        }
        let mut out = serde_json::Map::new();
        out.insert(name, value);
        Some(Value::Object(out))
    }

    /// The serialized name of the unit variant `variant` names, when `ty`
    /// is a local enum.
    fn unit_variant(
        &mut self,
        variant: &syn::Path,
        ty: &syn::Type,
        ty_scope: &Scope<'a>,
        path: &str,
    ) -> Option<Value> {
        let (_, _, v, name) = self.local_variant(variant, ty, ty_scope, path)?;
        matches!(v.fields, syn::Fields::Unit).then_some(Value::String(name))
    }

    /// A struct literal, serialized: a local struct's fields by their serde
    /// names, from the literal or from the `..base` it ends with; another
    /// crate's (k8s-openapi's) fields as written, camelCase, `None` left
    /// out, as k8s-openapi writes them.
    fn struct_literal(
        &mut self,
        lit: &syn::ExprStruct,
        module: &'a Module,
        ty: &syn::Type,
        ty_scope: &Scope<'a>,
        depth: usize,
        path: &str,
    ) -> Option<Value> {
        // `Self { .. }` is the expected type; otherwise the literal's path.
        let resolved = if lit.path.is_ident("Self") {
            let syn::Type::Path(tp) = ty else { return None };
            self.krate.resolve(ty_scope.module, &tp.path)?
        } else {
            self.krate.resolve(module, &lit.path)?
        };
        let Resolved::Local(item) = resolved else {
            let mut out = Map::new();
            for fv in &lit.fields {
                let syn::Member::Named(n) = &fv.member else {
                    return None;
                };
                let value = value_in(self.krate, module, &fv.expr)?;
                if !value.is_null() {
                    let raw = n.to_string();
                    let raw = raw.strip_prefix("r#").unwrap_or(&raw).trim_end_matches('_');
                    out.insert(RenameRule::Camel.apply_to_field(raw), value);
                }
            }
            return Some(Value::Object(out));
        };
        let syn::Item::Struct(s) = item.item else {
            return None;
        };
        let syn::Fields::Named(named) = &s.fields else {
            return None;
        };
        let own_scope = Scope::new(item.module);
        let struct_ty = syn::Type::Path(syn::TypePath {
            qself: None,
            path: syn::Path::from(s.ident.clone()),
        });
        let base = match &lit.rest {
            Some(rest) => {
                match self.typed_value(rest, module, &struct_ty, &own_scope, depth + 1, path)? {
                    Value::Object(o) => Some(o),
                    _ => return None,
                }
            }
            None => None,
        };
        let cattrs = self.read_attrs(item.module, &s.attrs, ItemKind::Container, path);
        let mut out = Map::new();
        for field in &named.named {
            let fattrs = self.read_attrs(item.module, &field.attrs, ItemKind::Field, path);
            if fattrs.skip_serializing {
                continue;
            }
            let ident = field.ident.as_ref()?;
            let name = serde_name(field, &fattrs, &cattrs);
            let given = lit
                .fields
                .iter()
                .find(|fv| matches!(&fv.member, syn::Member::Named(n) if n == ident));
            let value = match (given, &base) {
                (Some(fv), _) => {
                    self.typed_value(&fv.expr, module, &field.ty, &own_scope, depth + 1, path)?
                }
                (None, Some(base)) => match base.get(&name) {
                    Some(v) => v.clone(),
                    // The base's serialization skipped it: so does this one.
                    None => continue,
                },
                (None, None) => return None,
            };
            write_field(&mut out, &fattrs, name, value);
        }
        Some(Value::Object(out))
    }

    /// The value of `field` in a block ending in `Self { field: .., .. }`,
    /// serialized as the field's type.
    fn struct_literal_field(
        &mut self,
        module: &'a Module,
        block: &syn::Block,
        field: &syn::Field,
        scope: &Scope<'a>,
        path: &str,
    ) -> Option<Value> {
        let Some(syn::Stmt::Expr(Expr::Struct(s), None)) = block.stmts.last() else {
            return None;
        };
        let ident = field.ident.as_ref()?;
        let fv = s
            .fields
            .iter()
            .find(|fv| matches!(&fv.member, syn::Member::Named(n) if n == ident))?;
        self.typed_value(&fv.expr, module, &field.ty, scope, 0, path)
    }

    /// `skip_serializing_if = "path"` naming a one-argument function of this
    /// crate whose body compares its argument (`*v == 0`,
    /// `*v == T::default()`, `v.is_empty()`, `!v`): applied to the value.
    fn crate_predicate(
        &mut self,
        pred: &str,
        value: &Value,
        ty: &syn::Type,
        scope: &Scope<'a>,
        path: &str,
    ) -> Option<bool> {
        let segments: Vec<String> = pred.split("::").map(|s| s.trim().to_string()).collect();
        let (module, f) = self.krate.resolve_fn(scope.module, &segments)?;
        let [syn::FnArg::Typed(arg)] = f.sig.inputs.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        let syn::Pat::Ident(param) = arg.pat.as_ref() else {
            return None;
        };
        // The statements a normal build compiles: a body may hold
        // `#[cfg(feature = "..")] { .. }` blocks for other builds.
        let config = self.krate.file_of(module).config.clone();
        let stmts: Vec<&syn::Stmt> = f
            .block
            .stmts
            .iter()
            .filter(|stmt| match (stmt, &config) {
                (syn::Stmt::Expr(Expr::Block(b), _), Some(config)) => config.enabled(&b.attrs),
                _ => true,
            })
            .collect();
        let [syn::Stmt::Expr(body, None)] = stmts.as_slice() else {
            return None;
        };
        let default = self.type_default(ty, scope, f.sig.ident.span(), path);
        let param = param.ident.to_string();
        let outcome = const_expr_in(body, &mut |e| {
            match e {
                Expr::Path(p) if p.path.is_ident(&param) => return Some(value.clone()),
                Expr::Call(c)
                    if c.args.is_empty()
                        && matches!(c.func.as_ref(), Expr::Path(p)
                            if p.path.segments.last().is_some_and(|s| s.ident == "default")) =>
                {
                    return default.clone();
                }
                _ => {}
            }
            value_in(self.krate, module, e)
        });
        match outcome {
            Some(Value::Bool(b)) => Some(b),
            _ => None,
        }
    }

    /// `default = "path"`: a function of this crate whose body is a literal.
    fn call_default_fn(
        &mut self,
        fn_path: &str,
        ty: &syn::Type,
        scope: &Scope<'a>,
        span: proc_macro2::Span,
        path: &str,
    ) -> Option<Value> {
        let segments: Vec<String> = fn_path.split("::").map(str::to_string).collect();
        let body = self.krate.callable(scope.module, &segments);
        if let Some((m, stmts)) = body.map(|(m, _, b)| (m, b.stmts.as_slice())) {
            let built;
            let tail = if let [syn::Stmt::Expr(tail, None)] = stmts {
                Some(tail)
            } else {
                built = collection_builder(stmts);
                built.as_ref()
            };
            if let Some(tail) = tail
                && let Some(v) = self.typed_value(tail, m, ty, scope, 0, path)
            {
                return Some(v);
            }
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

/// A function body that fills a collection and returns it, as the
/// expression that makes it at once:
///
/// ```text
/// let mut m = BTreeMap::new();   // or HashMap, Vec, `Default::default()`
/// m.insert(k, v);                // `push(v)` for a Vec
/// m                              // or `Some(m)`
/// ```
///
/// is `BTreeMap::from([(k, v)])` (`vec![v]`), which rsop evaluates.
fn collection_builder(stmts: &[syn::Stmt]) -> Option<Expr> {
    let [
        syn::Stmt::Local(local),
        fills @ ..,
        syn::Stmt::Expr(tail, None),
    ] = stmts
    else {
        return None;
    };
    let syn::Pat::Ident(binding) = &local.pat else {
        return None;
    };
    let name = &binding.ident;
    let Expr::Call(init) = local.init.as_ref()?.expr.as_ref() else {
        return None;
    };
    let Expr::Path(ctor) = init.func.as_ref() else {
        return None;
    };
    let mut collection = ctor.path.clone();
    let last = collection.segments.pop()?.into_value();
    collection.segments.pop_punct();
    if !init.args.is_empty() || !matches!(last.ident.to_string().as_str(), "new" | "default") {
        return None;
    }
    let is_vec = collection.segments.last().is_some_and(|s| s.ident == "Vec");
    let mut entries: Vec<proc_macro2::TokenStream> = Vec::new();
    for fill in fills {
        let syn::Stmt::Expr(Expr::MethodCall(call), Some(_)) = fill else {
            return None;
        };
        let Expr::Path(receiver) = call.receiver.as_ref() else {
            return None;
        };
        if !receiver.path.is_ident(name) {
            return None;
        }
        let args: Vec<&Expr> = call.args.iter().collect();
        match (call.method.to_string().as_str(), args.as_slice(), is_vec) {
            ("insert", [k, v], false) => entries.push(quote::quote!((#k, #v))),
            ("push", [v], true) => entries.push(quote::quote!(#v)),
            _ => return None,
        }
    }
    let made = if is_vec {
        quote::quote!(vec![#(#entries),*])
    } else {
        // `Default::default()` names no collection: the field's type does.
        if collection.segments.is_empty() || collection.is_ident("Default") {
            return None;
        }
        quote::quote!(#collection::from([#(#entries),*]))
    };
    let returned = match tail {
        Expr::Path(p) if p.path.is_ident(name) => made,
        Expr::Call(c)
            if matches!(c.func.as_ref(), Expr::Path(f) if f.path.is_ident("Some"))
                && matches!(c.args.first(), Some(Expr::Path(p)) if p.path.is_ident(name)) =>
        {
            quote::quote!(Some(#made))
        }
        _ => return None,
    };
    syn::parse2(returned).ok()
}

/// Known `skip_serializing_if` predicates, applied to a serialized value.
/// What serializing `T::default()` of a k8s-openapi struct gives, from its
/// schema: k8s-openapi writes its required fields always and its optional
/// ones only when set, so the value is the required fields at their own
/// defaults. `None` where a default is not plain from the schema (a time,
/// bytes, an int-or-string).
fn k8s_default(schema: &Value) -> Option<Value> {
    let mut out = Map::new();
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten() {
        let name = name.as_str()?;
        let property = schema.get("properties")?.get(name)?;
        out.insert(name.to_owned(), k8s_field_default(property)?);
    }
    Some(Value::Object(out))
}

fn k8s_field_default(schema: &Value) -> Option<Value> {
    if schema.get("x-kubernetes-int-or-string").is_some() {
        return None;
    }
    Some(match schema.get("type")?.as_str()? {
        // A time or bytes default is not the empty string.
        "string" if schema.get("format").is_some() => return None,
        "string" => json!(""),
        "integer" => json!(0),
        "number" => json!(0.0),
        "boolean" => json!(false),
        "array" => json!([]),
        "object" if schema.get("properties").is_some() => k8s_default(schema)?,
        "object" => json!({}),
        _ => return None,
    })
}

fn skip_predicate(pred: &str, value: &Value) -> Option<bool> {
    let pred = pred.replace(' ', "");
    let last = pred.rsplit("::").next().unwrap_or(&pred);
    match last {
        // `std::ops::Not::not` on a `bool`: skipped when false.
        "not" => value.as_bool().map(|b| !b),
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

/// A named field's name as serde writes it: its `rename`, else the
/// container's `rename_all` applied to it.
fn serde_name(field: &syn::Field, fattrs: &ItemAttrs, cattrs: &ItemAttrs) -> String {
    let raw = field
        .ident
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    let raw = raw.strip_prefix("r#").unwrap_or(&raw).to_string();
    fattrs.rename.clone().unwrap_or_else(|| {
        cattrs
            .rename_all
            .map_or(raw.clone(), |r| r.apply_to_field(&raw))
    })
}

/// Adds a serialized field to `out` as serde would: left out when its
/// `skip_serializing_if` holds, merged when flattened.
fn write_field(out: &mut Map<String, Value>, fattrs: &ItemAttrs, name: String, value: Value) {
    if let Some(pred) = &fattrs.skip_serializing_if
        && skip_predicate(pred, &value) == Some(true)
    {
        return;
    }
    if fattrs.flatten {
        if let Value::Object(inner) = value {
            out.extend(inner);
        }
        return;
    }
    out.insert(name, value);
}

/// The type under references and parentheses.
fn peel_type(ty: &syn::Type) -> &syn::Type {
    match ty {
        syn::Type::Reference(r) => peel_type(&r.elem),
        syn::Type::Paren(p) => peel_type(&p.elem),
        syn::Type::Group(g) => peel_type(&g.elem),
        other => other,
    }
}

/// `T` of `Vec<T>` (and the other sequences).
fn element_type(ty: &syn::Type) -> Option<syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if !matches!(
        last.ident.to_string().as_str(),
        "Vec" | "VecDeque" | "BTreeSet" | "HashSet" | "IndexSet"
    ) {
        return None;
    }
    super::generic_args(&last.arguments)
        .first()
        .map(|t| (*t).clone())
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
        assert_eq!(const_expr(&expr("16 * 1024")), Some(json!(16384)));
        assert_eq!(const_expr(&expr("(1 << 20) - 1")), Some(json!(1_048_575)));
        assert_eq!(const_expr(&expr("u16::MAX")), Some(json!(65535)));
        assert_eq!(const_expr(&expr("std::i32::MIN")), Some(json!(i32::MIN)));
        assert_eq!(const_expr(&expr("u16::MAX as u32 + 1")), Some(json!(65536)));
        assert_eq!(const_expr(&expr("3 as f64 / 2.0")), Some(json!(1.5)));
        assert_eq!(
            const_expr(&expr("u64::MAX + 1")),
            None,
            "overflow is no constant"
        );
        assert_eq!(const_expr(&expr("u64::MAX")), Some(json!(u64::MAX)));
        assert_eq!(
            const_expr(&expr("format!(\"{}-{}-{{x}}\", \"a\", 1)")),
            Some(json!("a-1-{x}"))
        );
        assert_eq!(
            const_expr(&expr(
                "BTreeMap::from([(\"a\".to_string(), 1), (\"b\".into(), 2)])"
            )),
            Some(json!({"a": 1, "b": 2}))
        );
        assert_eq!(
            const_expr(&expr(
                "[\"x\", \"y\"].into_iter().map(String::from).collect()"
            )),
            None,
            "closures and adapters other than plain conversions are not evaluated"
        );
        assert_eq!(
            const_expr(&expr("[\"x\", \"y\"].iter().cloned().collect()")),
            Some(json!(["x", "y"]))
        );
        assert_eq!(const_expr(&expr("[0; 3]")), Some(json!([0, 0, 0])));
        assert_eq!(
            const_expr(&expr("if 2 > 1 { \"big\" } else { \"small\" }")),
            Some(json!("big"))
        );
        assert_eq!(
            const_expr(&expr(
                "match \"b\" { \"a\" => 1, \"b\" | \"c\" => 2, _ => 3 }"
            )),
            Some(json!(2))
        );
        assert_eq!(
            const_expr(&expr("LazyLock::new(|| Regex::new(\"^[a-z]+$\").unwrap())")),
            Some(json!("^[a-z]+$"))
        );
        assert_eq!(
            const_expr(&expr(
                "once_cell::sync::Lazy::new(|| regex::Regex::new(\"x\").expect(\"valid\"))"
            )),
            Some(json!("x"))
        );
        let mut lookup =
            |e: &Expr| matches!(e, Expr::Path(p) if p.path.is_ident("MAX_LEN")).then(|| json!(63));
        assert_eq!(
            const_expr_in(&expr("MAX_LEN - 10"), &mut lookup),
            Some(json!(53))
        );
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
        // Every form `Into<MergeStrategy>` takes.
        let map_keys = Some(vec![
            ("x-kubernetes-list-type".into(), json!("map")),
            ("x-kubernetes-list-map-keys".into(), json!(["type", "name"])),
        ]);
        for form in [
            "MergeStrategy::ListType(ListMerge::Map(vec![\"type\".into(), \"name\".into()]))",
            "kube::core::MergeStrategy::ListType(kube::core::ListMerge::Map(vec![String::from(\"type\"), \"name\".to_string()]))",
            "ListMerge::Map(vec![\"type\".to_owned(), \"name\".into()]).into()",
        ] {
            assert_eq!(merge_strategy(&expr(form)), map_keys, "{form}");
        }
        assert_eq!(
            merge_strategy(&expr("MergeStrategy::MapType(MapMerge::Atomic)")),
            Some(vec![("x-kubernetes-map-type".into(), json!("atomic"))])
        );
        assert_eq!(
            merge_strategy(&expr("(MergeStrategy::StructType(StructMerge::Granular))")),
            Some(Vec::new())
        );
        // A strategy in another kind's variant does not compile: not read.
        assert_eq!(
            merge_strategy(&expr("MergeStrategy::MapType(ListMerge::Set)")),
            None
        );
        assert_eq!(merge_strategy(&expr("ListMerge::Map(keys())")), None);
    }
}
