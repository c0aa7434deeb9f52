//! Reading Rust as written: attributes, macro arguments, paths and types,
//! with no meaning of the crate's own.

use std::collections::HashMap;
use std::path::Path;

use syn::visit::Visit;

use crate::manifests::derive::schema::generic_args;

/// The file parsed without its `#[cfg(test)] mod ..` modules: they make no
/// request of the operator's, and in a scaffolded controller they are half
/// the text. The tokens are read once; only the others are parsed.
pub(super) fn without_tests(text: &str) -> Option<syn::File> {
    use proc_macro2::{Delimiter, TokenTree};
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // A shebang or inner attributes would need syn's file parser as is.
    if text.starts_with("#!") {
        return syn::parse_file(text).ok();
    }
    let tokens: Vec<TokenTree> = text
        .parse::<proc_macro2::TokenStream>()
        .ok()?
        .into_iter()
        .collect();
    let is_cfg_test = |tree: &TokenTree| match tree {
        TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket => {
            let inner = g.stream().to_string().replace(' ', "");
            inner == "cfg(test)"
        }
        _ => false,
    };
    let mut kept = proc_macro2::TokenStream::new();
    let mut i = 0;
    while i < tokens.len() {
        // `# [cfg(test)] (pub)? mod name { .. }`
        if matches!(&tokens[i], TokenTree::Punct(p) if p.as_char() == '#')
            && tokens.get(i + 1).is_some_and(is_cfg_test)
        {
            let mut j = i + 2;
            if matches!(tokens.get(j), Some(TokenTree::Ident(id)) if id == "pub") {
                j += 1;
            }
            if matches!(tokens.get(j), Some(TokenTree::Ident(id)) if id == "mod")
                && matches!(tokens.get(j + 1), Some(TokenTree::Ident(_)))
                && matches!(tokens.get(j + 2), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace)
            {
                i = j + 3;
                continue;
            }
        }
        kept.extend(std::iter::once(tokens[i].clone()));
        i += 1;
    }
    syn::parse2(kept).ok()
}

/// The expressions of a macro whose body is a comma-separated list of
/// them (`tokio::join!(a, b)`, `vec![..]`, `format!(..)`), which syn leaves
/// as tokens.
pub(super) fn macro_exprs(
    mac: &syn::Macro,
) -> Option<syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>> {
    use proc_macro2::{Spacing, TokenStream, TokenTree};
    if let Ok(exprs) = mac
        .parse_body_with(syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
    {
        return Some(exprs);
    }
    // Any other body (`tokio::select! { r = run::<Widget>(..) => { .. } }`):
    // the pieces between its top-level `,`, `;`, `=` and `=>` that are
    // expressions.
    let tokens: Vec<TokenTree> = mac.tokens.clone().into_iter().collect();
    let mut pieces: Vec<TokenStream> = vec![TokenStream::new()];
    let mut i = 0;
    while i < tokens.len() {
        let separator = match &tokens[i] {
            TokenTree::Punct(p) if matches!(p.as_char(), ',' | ';') => 1,
            TokenTree::Punct(p) if p.as_char() == '=' && p.spacing() == Spacing::Alone => {
                // Not the end of `==`, `<=`, `!=` and the like.
                let joined = i > 0
                    && matches!(&tokens[i - 1], TokenTree::Punct(q) if q.spacing() == Spacing::Joint);
                usize::from(!joined)
            }
            TokenTree::Punct(p)
                if p.as_char() == '='
                    && matches!(tokens.get(i + 1), Some(TokenTree::Punct(q)) if q.as_char() == '>') =>
            {
                2
            }
            _ => 0,
        };
        if separator > 0 {
            pieces.push(TokenStream::new());
            i += separator;
            continue;
        }
        if let Some(piece) = pieces.last_mut() {
            piece.extend(std::iter::once(tokens[i].clone()));
        }
        i += 1;
    }
    let exprs: syn::punctuated::Punctuated<syn::Expr, syn::Token![,]> = pieces
        .into_iter()
        .filter(|p| !p.is_empty())
        .filter_map(|p| syn::parse2::<syn::Expr>(p).ok())
        .collect();
    (!exprs.is_empty()).then_some(exprs)
}

/// `Result<T, E>`, `Option<T>` and the like: `T`.
pub(super) fn unwrap_result(ty: &syn::Type) -> &syn::Type {
    if let syn::Type::Path(p) = ty
        && let Some(last) = p.path.segments.last()
        && matches!(last.ident.to_string().as_str(), "Result" | "Option")
        && let Some(inner) = generic_args(&last.arguments).first()
    {
        return inner;
    }
    ty
}

/// The names of the type parameters `generics` declares (`K` of `<K: Resource>`).
pub(crate) fn type_param_names(generics: &syn::Generics) -> Vec<String> {
    generics
        .type_params()
        .map(|p| p.ident.to_string())
        .collect()
}

/// The type parameter an `Api`'s kind is written with: `K` in `Api<K>` and
/// in `Api<PartialObjectMeta<K>>`, whose requests are on `K`'s resource.
pub(super) fn type_parameter(ty: &syn::Type) -> Option<&syn::Ident> {
    let syn::Type::Path(p) = ty else {
        return None;
    };
    if let Some(ident) = p.path.get_ident() {
        return Some(ident);
    }
    let last = p.path.segments.last()?;
    if last.ident != "PartialObjectMeta" && last.ident != "DeserializeGuard" {
        return None;
    }
    type_parameter(generic_args(&last.arguments).first()?)
}

pub(super) fn is_ident(ty: &syn::Type, ident: &syn::Ident) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident(ident))
}

pub(super) fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg")
                && a.parse_args::<syn::Meta>()
                    .is_ok_and(|m| m.path().is_ident("test")))
    })
}

/// The names a file imports: name -> full path (`Deployment` ->
/// `k8s_openapi::api::apps::v1::Deployment`).
pub(crate) fn imports(file: &syn::File) -> HashMap<String, Vec<String>> {
    fn walk(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut HashMap<String, Vec<String>>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
            }
            // `use kube::runtime::{self, ..}` brings in `runtime`.
            syn::UseTree::Name(n) if n.ident == "self" => {
                if let Some(last) = prefix.last() {
                    out.insert(last.clone(), prefix.clone());
                }
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                full.push(n.ident.to_string());
                out.insert(n.ident.to_string(), full);
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                out.insert(r.rename.to_string(), full);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    walk(t, prefix, out);
                }
            }
            syn::UseTree::Glob(_) => {}
        }
    }
    struct Uses(HashMap<String, Vec<String>>);
    impl<'ast> Visit<'ast> for Uses {
        fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
            walk(&u.tree, &mut Vec::new(), &mut self.0);
        }
    }
    let mut uses = Uses(HashMap::new());
    uses.visit_file(file);
    // `use k8s_openapi::...::apiextensions::v1 as apiexts;` then
    // `use apiexts::CustomResourceDefinition;`: a path that starts with a
    // name another `use` brings in starts where that one does.
    let mut imports = uses.0;
    for _ in 0..4 {
        let expanded: Vec<(String, Vec<String>)> = imports
            .iter()
            .filter_map(|(name, path)| {
                let head = imports.get(path.first()?)?;
                (head != path && path.len() > 1).then(|| {
                    let mut full = head.clone();
                    full.extend(path[1..].iter().cloned());
                    (name.clone(), full)
                })
            })
            .collect();
        if expanded.is_empty() {
            break;
        }
        imports.extend(expanded);
    }
    imports
}

/// Writes kube's `Api` back under its own name where a file renamed it
/// (`use kube::api::{Api as KubeApi}` beside another `Api`'s absence), so
/// that each of its values is read as kube's.
pub(super) fn unalias_kube(file: &mut syn::File) {
    use syn::visit_mut::VisitMut;
    struct Renames(Vec<String>, bool);
    impl<'ast> Visit<'ast> for Renames {
        fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
            fn walk(tree: &syn::UseTree, kube: bool, out: &mut Renames) {
                match tree {
                    syn::UseTree::Path(p) => {
                        let kube = kube || p.ident.to_string().starts_with("kube");
                        walk(&p.tree, kube, out);
                    }
                    syn::UseTree::Rename(r) if kube && r.ident == "Api" => {
                        out.0.push(r.rename.to_string());
                    }
                    syn::UseTree::Name(n) if n.ident == "Api" => out.1 = true,
                    syn::UseTree::Rename(r) if r.rename == "Api" => out.1 = true,
                    syn::UseTree::Group(g) => {
                        for t in &g.items {
                            walk(t, kube, out);
                        }
                    }
                    _ => {}
                }
            }
            walk(&u.tree, false, self);
        }
        fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
            self.1 |= item.ident == "Api";
        }
        fn visit_item_enum(&mut self, item: &'ast syn::ItemEnum) {
            self.1 |= item.ident == "Api";
        }
    }
    struct Rename<'a>(&'a [String]);
    impl VisitMut for Rename<'_> {
        fn visit_path_segment_mut(&mut self, segment: &mut syn::PathSegment) {
            if self.0.iter().any(|alias| segment.ident == alias) {
                segment.ident = syn::Ident::new("Api", segment.ident.span());
            }
            syn::visit_mut::visit_path_segment_mut(self, segment);
        }
    }
    let mut renames = Renames(Vec::new(), false);
    renames.visit_file(file);
    if renames.0.is_empty() || renames.1 {
        return;
    }
    Rename(&renames.0).visit_file_mut(file);
}

/// The `use`s of a file of `crate_name`, a dependency the crate's code
/// calls by that name (`None`: the crate's own): a path from its root
/// (`crate::process::f`) starts with its name, as the crate's code writes
/// it (`operator_framework::process::f`).
pub(super) fn imports_in(
    file: &syn::File,
    crate_name: Option<&str>,
) -> HashMap<String, Vec<String>> {
    let mut imports = imports(file);
    if let Some(name) = crate_name {
        for path in imports.values_mut() {
            let local = path
                .iter()
                .take_while(|s| matches!(s.as_str(), "crate" | "self" | "super"))
                .count();
            if local > 0 {
                path.splice(..local, [name.to_string()]);
            }
        }
        // `crate::a::f(..)` written in a call.
        imports.insert("crate".to_string(), vec![name.to_string()]);
    }
    imports
}

/// The module path of the file at `path` of `crate_name` (as
/// [`imports_in`]): a dependency's modules start with its name.
pub(super) fn module_in(path: &Path, crate_name: Option<&str>) -> Vec<String> {
    let mut module = module_path(path);
    if let Some(name) = crate_name {
        module.insert(0, name.to_string());
    }
    module
}

pub(super) fn turbofish(t: Option<&syn::AngleBracketedGenericArguments>) -> Option<syn::Type> {
    match t?.args.first()? {
        syn::GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    }
}

/// The variable an argument names: `api`, `&api`, `api.clone()`.
pub(super) fn variable(expr: &syn::Expr) -> Option<String> {
    match expr {
        syn::Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
        syn::Expr::Reference(r) => variable(&r.expr),
        syn::Expr::MethodCall(m) if m.method == "clone" => variable(&m.receiver),
        _ => None,
    }
}

/// The name of a struct type and its type arguments (`Wrapper<Pod>`:
/// `Wrapper`, `[Pod]`), behind references and smart pointers.
pub(super) fn type_name(ty: &syn::Type) -> Option<(String, Vec<syn::Type>)> {
    let syn::Type::Path(p) = strip_wrappers(ty) else {
        return None;
    };
    let last = p.path.segments.last()?;
    Some((
        last.ident.to_string(),
        generic_args(&last.arguments).into_iter().cloned().collect(),
    ))
}

/// `&K`, `Arc<K>`, `&Arc<K>`: `K`.
pub(super) fn strip_wrappers(ty: &syn::Type) -> syn::Type {
    match ty {
        syn::Type::Reference(r) => strip_wrappers(&r.elem),
        syn::Type::Path(p) => {
            if let Some(last) = p.path.segments.last()
                && matches!(last.ident.to_string().as_str(), "Arc" | "Box" | "Rc")
                && let Some(inner) = generic_args(&last.arguments).first()
            {
                return strip_wrappers(inner);
            }
            ty.clone()
        }
        _ => ty.clone(),
    }
}

pub(super) fn receiver_text(expr: &syn::Expr) -> String {
    use quote::ToTokens;
    let text = expr.to_token_stream().to_string().replace(' ', "");
    if text.len() > 40 { "api".into() } else { text }
}

/// An `Api::namespaced(client, ..)` call (behind `?` and the like), and
/// the client it is given.
pub(super) fn api_constructor_call(expr: &syn::Expr) -> Option<&syn::Expr> {
    match expr {
        syn::Expr::Call(c) => {
            api_constructor(&c.func)?;
            c.args.first()
        }
        syn::Expr::Try(t) => api_constructor_call(&t.expr),
        syn::Expr::Paren(p) => api_constructor_call(&p.expr),
        _ => None,
    }
}

/// `K` of `Api<K>`, `&Api<K>`, `kube::Api<K>`.
pub(super) fn api_type(ty: &syn::Type) -> Option<syn::Type> {
    match ty {
        syn::Type::Reference(r) => api_type(&r.elem),
        syn::Type::Path(p) => {
            let last = p.path.segments.last()?;
            // `Arc<Api<K>>`, `Box<Api<K>>`: calls go through to the `Api`.
            if matches!(last.ident.to_string().as_str(), "Arc" | "Box" | "Rc") {
                return api_type(generic_args(&last.arguments).first()?);
            }
            if last.ident != "Api" {
                return None;
            }
            generic_args(&last.arguments).first().map(|t| (*t).clone())
        }
        _ => None,
    }
}

/// Whether a function that returns an `Api` makes it with `Api::all`
/// (`Some(true)`), `Api::namespaced` (`Some(false)`), or either.
pub(super) fn constructor_scope(block: &syn::Block) -> Option<bool> {
    struct Scopes(Vec<bool>);
    impl<'ast> Visit<'ast> for Scopes {
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            if let Some((_, cluster)) = api_constructor(&call.func) {
                self.0.push(cluster);
            }
            syn::visit::visit_expr_call(self, call);
        }
    }
    let mut scopes = Scopes(Vec::new());
    scopes.visit_block(block);
    match scopes.0.as_slice() {
        [] => None,
        [first, rest @ ..] if rest.iter().all(|s| s == first) => Some(*first),
        _ => None,
    }
}

/// `Api::<K>::all` and its kin: the turbofish type, if written, and whether
/// the value spans the cluster.
pub(super) fn api_constructor(func: &syn::Expr) -> Option<(Option<syn::Type>, bool)> {
    let syn::Expr::Path(p) = func else {
        return None;
    };
    let segments: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
    let [.., api, ctor] = segments.as_slice() else {
        return None;
    };
    if api.ident != "Api" {
        return None;
    }
    let cluster = match ctor.ident.to_string().as_str() {
        "all" | "all_with" => true,
        "namespaced" | "namespaced_with" | "default_namespaced" | "default_namespaced_with" => {
            false
        }
        _ => return None,
    };
    let kind = generic_args(&api.arguments).first().map(|t| (*t).clone());
    Some((kind, cluster))
}

/// The module a file of a crate is, by its path: `src/svc/k8s/secret.rs`
/// and `src/svc/k8s/secret/mod.rs` are `svc::k8s::secret`, a crate root
/// (`src/main.rs`, `src/lib.rs`, `src/bin/tool.rs`) is the root.
pub(crate) fn module_path(path: &Path) -> Vec<String> {
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => s.to_str().map(str::to_string),
            _ => None,
        })
        .collect();
    let Some(src) = parts.iter().rposition(|p| p == "src") else {
        return Vec::new();
    };
    let mut module: Vec<String> = parts[src + 1..].to_vec();
    if let Some(last) = module.last_mut()
        && let Some(stem) = last.strip_suffix(".rs")
    {
        *last = stem.to_string();
    }
    // A program of `src/bin/` is a crate root of its own.
    if module.first().is_some_and(|m| m == "bin") {
        module.remove(0);
        if module.len() == 1 {
            return Vec::new();
        }
        module.remove(0);
    }
    if module.len() == 1 && matches!(module[0].as_str(), "main" | "lib") {
        return Vec::new();
    }
    if module.last().is_some_and(|m| m == "mod") {
        module.pop();
    }
    module
}

/// A condition on a `bool` parameter of the function (`if status`, `if
/// !dry_run`): the parameter's place among `params` and the value under
/// which the branch runs.
pub(super) fn flag_condition(cond: &syn::Expr, params: &[String]) -> Option<(usize, bool)> {
    match cond {
        syn::Expr::Paren(p) => flag_condition(&p.expr, params),
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
            flag_condition(&u.expr, params).map(|(at, value)| (at, !value))
        }
        syn::Expr::Path(p) => {
            let name = p.path.get_ident()?.to_string();
            params.iter().position(|p| *p == name).map(|at| (at, true))
        }
        _ => None,
    }
}

/// A `bool` literal (`false`).
pub(super) fn bool_literal(expr: &syn::Expr) -> Option<bool> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => Some(b.value),
        syn::Expr::Paren(p) => bool_literal(&p.expr),
        _ => None,
    }
}

/// Whether `tree` names an owner reference (`owner_ref`,
/// `controller_owner_ref`, `owner_references`, `OwnerReference`), at any
/// depth.
pub(super) fn names_owner_reference(tree: &proc_macro2::TokenTree) -> bool {
    match tree {
        proc_macro2::TokenTree::Ident(ident) => {
            let name = ident.to_string();
            name.contains("owner_ref") || name == "OwnerReference"
        }
        proc_macro2::TokenTree::Group(group) => group
            .stream()
            .into_iter()
            .any(|t| names_owner_reference(&t)),
        _ => false,
    }
}
