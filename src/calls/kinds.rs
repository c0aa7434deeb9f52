//! Which kind each `Api` value has: the crate's own kinds and Kubernetes',
//! read from constructors, annotations, bindings, answers and the types of
//! the values the code builds. [`Typing`] holds what a function's walk
//! knows to type an expression.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use syn::spanned::Spanned;
use syn::visit::Visit;

use super::OwnKind;
use super::literals::{Known, Literal, literal_parts, string_value};
use super::reach::{Callee, Index, Owner, from_root, is_self, uses_runtime};
use super::syntax::{
    api_constructor, api_constructor_call, api_type, is_ident, macro_exprs, strip_wrappers,
    turbofish, type_name, type_parameter, variable,
};
use crate::manifests::derive::schema::generic_args;
use crate::manifests::diagnostics::Location;
use crate::project::{k8s_kinds, names};

/// Where a kind's requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    pub(super) group: String,
    pub(super) plural: String,
    pub(super) namespaced: bool,
}

/// The kind of an `Api` value, as far as the sources show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ApiKind {
    /// The type written for `K` (`Deployment`, `PartialObjectMeta<Pod>`),
    /// and whether the value was made with `Api::all`.
    Known(Box<syn::Type>, Option<bool>),
    /// `Api::namespaced(..)` and the like with no turbofish: rustc infers
    /// `K` from a later use.
    Inferred(Option<bool>),
    /// A `DynamicObject` of a literal `GroupVersionKind` (group, kind, and
    /// the plural when `from_gvk_with_plural` names it).
    Dynamic(String, String, Option<String>, bool),
}

/// The kinds a file declares with `#[kube(..)]`, each attribute read alone
/// (a kopium file can run to megabytes: it is not parsed whole for this) by
/// the CRD derivation's own attribute parser; the plural defaults as there.
pub(super) fn declared_kinds(text: &str) -> Vec<OwnKind> {
    // Each item's `#[kube(..)]` attributes, which may be several
    // (`#[kube(group = ..)]` then `#[kube(namespaced)]`).
    let mut items: Vec<Vec<&str>> = Vec::new();
    let mut rest = text;
    let mut gap_ends_item = true;
    while let Some(start) = rest.find("#[kube(") {
        // An attribute commented out (`// #[kube(`) is no attribute.
        let line = &rest[rest[..start].rfind('\n').map_or(0, |n| n + 1)..start];
        if line.contains("//") {
            rest = &rest[start + 2..];
            continue;
        }
        // What lies between this attribute and the last, comments left out.
        let gap: String = rest[..start]
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect();
        if gap_ends_item || gap.contains("struct ") || gap.contains("enum ") || gap.contains('}') {
            items.push(Vec::new());
        }
        let tail = &rest[start + 2..];
        // The attribute is `kube(..)`, up to the parenthesis that closes it.
        let mut depth = 0usize;
        let mut end = None;
        for (i, c) in tail.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { break };
        if let Some(item) = items.last_mut() {
            item.push(&tail[..end]);
        }
        rest = &tail[end..];
        gap_ends_item = false;
    }
    let mut kinds = Vec::new();
    for item in items {
        // The attributes read as the CRD derivation reads them.
        let written = item.iter().fold(String::new(), |mut out, a| {
            out.push_str("#[");
            out.push_str(a);
            out.push_str("]\n");
            out
        });
        let Ok(attrs) = syn::parse::Parser::parse_str(syn::Attribute::parse_outer, &written) else {
            continue;
        };
        let mut errors = Vec::new();
        if let Some((kube, _)) = crate::manifests::derive::attrs::kube::parse(
            &attrs,
            proc_macro2::Span::call_site(),
            crate::manifests::derive::schema::DEFAULT_KUBE_DERIVE,
            &mut errors,
        ) {
            kinds.push(OwnKind {
                plural: kube.plural.unwrap_or_else(|| {
                    names::to_plural(
                        &kube
                            .singular
                            .unwrap_or_else(|| kube.kind.to_ascii_lowercase()),
                    )
                }),
                kind: kube.kind,
                group: kube.group,
                namespaced: kube.namespaced,
                root: kube.root,
                declared_in: None,
                foreign: false,
            });
        } else if let Some(kind) = lenient_kind(&attrs) {
            // A key this release of kube-derive would refuse (the manifests
            // run reports it) does not hide where the kind's requests go.
            kinds.push(kind);
        }
    }
    kinds
}

/// The kind, group, plural and scope of an item's `#[kube(..)]`
/// attributes, their other keys passed over whatever they hold.
pub(super) fn lenient_kind(attrs: &[syn::Attribute]) -> Option<OwnKind> {
    let (mut kind, mut group, mut plural, mut singular, mut root) = (None, None, None, None, None);
    let mut namespaced = false;
    for attr in attrs {
        let _ = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            if meta.input.peek(syn::Token![=]) {
                let value: syn::Expr = meta.value()?.parse()?;
                let text = string_value(&value);
                match key.as_str() {
                    "kind" => kind = text,
                    "group" => group = text,
                    "plural" => plural = text,
                    "singular" => singular = text,
                    "root" | "struct" => root = text,
                    _ => {}
                }
            } else if meta.input.peek(syn::token::Paren) {
                let _content;
                syn::parenthesized!(_content in meta.input);
            } else if key == "namespaced" {
                namespaced = true;
            }
            Ok(())
        });
    }
    let kind = kind?;
    Some(OwnKind {
        plural: plural.unwrap_or_else(|| {
            names::to_plural(&singular.unwrap_or_else(|| kind.to_ascii_lowercase()))
        }),
        group: group?,
        kind,
        namespaced,
        root,
        declared_in: None,
        foreign: false,
    })
}

/// The structs of a file that `#[derive(Resource)]` with
/// `#[resource(inherit = path::Kind)]`, each with the path it inherits.
pub(super) fn inherited_kinds(text: &str) -> Vec<(String, Vec<String>)> {
    struct Inherits(Vec<(String, Vec<String>)>);
    impl<'ast> Visit<'ast> for Inherits {
        fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
            for attr in item.attrs.iter().filter(|a| a.path().is_ident("resource")) {
                let _ = attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("inherit") {
                        // `inherit = ConfigMap` or `inherit = "ConfigMap"`.
                        let value = meta.value()?;
                        let path: syn::Path = if value.peek(syn::LitStr) {
                            value.parse::<syn::LitStr>()?.parse()?
                        } else {
                            value.parse()?
                        };
                        let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
                        self.0.push((item.ident.to_string(), segments));
                    } else if meta.input.peek(syn::Token![=]) {
                        let _: syn::Expr = meta.value()?.parse()?;
                    }
                    Ok(())
                });
            }
        }
    }
    let Ok(file) = syn::parse_file(text) else {
        return Vec::new();
    };
    let mut found = Inherits(Vec::new());
    found.visit_file(&file);
    found.0
}

/// The kind of `own` that the type written as `path` (its last segment the
/// type's name, `crate::api::fleet::Cluster`) is, in code of the file
/// `from`. Kinds of the same name are told apart by the modules the path
/// names (or, for a bare name, the file's own), matched against the
/// folders and file names that declare them; when that leaves kinds that
/// differ, none is chosen.
pub(super) fn best_kind<'k>(
    own: &'k [OwnKind],
    path: &[String],
    from: Option<&Path>,
) -> Option<&'k OwnKind> {
    let name = path.last()?;
    let mut candidates: Vec<&OwnKind> = own.iter().filter(|k| k.type_name() == name).collect();
    // A kind known by its name alone (a CRD's) is named in Rust's casing
    // by the type generated for it: kopium's `TlsStore` for `TLSStore`.
    if candidates.is_empty() {
        candidates = own
            .iter()
            .filter(|k| k.declared_in.is_none() && k.kind.eq_ignore_ascii_case(name))
            .collect();
    }
    let same = |a: &OwnKind, b: &OwnKind| {
        a.group == b.group && a.plural == b.plural && a.namespaced == b.namespaced
    };
    match candidates.as_slice() {
        [] => return None,
        [only] => return Some(only),
        [first, rest @ ..] if rest.iter().all(|k| same(first, k)) => return Some(first),
        _ => {}
    }
    let mut hints: Vec<String> = path[..path.len() - 1]
        .iter()
        .filter(|s| !matches!(s.as_str(), "crate" | "self" | "super"))
        .cloned()
        .collect();
    if hints.is_empty()
        && let Some(from) = from
    {
        hints = path_words(from);
    }
    let score = |k: &OwnKind| {
        let words = k.declared_in.as_deref().map(path_words).unwrap_or_default();
        hints.iter().filter(|h| words.contains(h)).count()
    };
    let top = candidates.iter().map(|k| score(k)).max()?;
    let best: Vec<&OwnKind> = candidates.into_iter().filter(|k| score(k) == top).collect();
    match best.as_slice() {
        [first, rest @ ..] if rest.iter().all(|k| same(first, k)) => Some(first),
        _ => None,
    }
}

/// The folder and file names of a path, as Rust names them
/// (`fleet-api-rs/src/api/fleet_cluster.rs`: `fleet_api_rs`, `src`, `api`,
/// `fleet_cluster`).
pub(super) fn path_words(path: &Path) -> Vec<String> {
    path.with_extension("")
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .flat_map(|c| {
            // A registry crate's folder is `fleet-api-rs-0.14.3`.
            let unversioned = c
                .match_indices('-')
                .find(|(i, _)| c[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
                .map(|(i, _)| c[..i].replace('-', "_"));
            std::iter::once(c.replace('-', "_")).chain(unversioned)
        })
        .collect()
}

/// The kinds a file implements `kube::Resource` (or k8s-openapi's
/// `Resource`) for by hand: the kind, group and plural its functions or
/// constants return as literals, and the scope its `Scope` type names.
pub(super) fn implemented_kinds(text: &str) -> Vec<OwnKind> {
    struct Impls(Vec<OwnKind>);
    impl<'ast> Visit<'ast> for Impls {
        fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
            let is_resource = item
                .trait_
                .as_ref()
                .and_then(|(_, path, _)| path.segments.last())
                .is_some_and(|s| s.ident == "Resource");
            if !is_resource {
                return;
            }
            let mut kind = None;
            let mut group = None;
            let mut plural = None;
            let mut namespaced = true;
            for impl_item in &item.items {
                match impl_item {
                    syn::ImplItem::Fn(f) => {
                        let value = first_string(&f.block);
                        match f.sig.ident.to_string().as_str() {
                            "kind" => kind = value,
                            "group" => group = value,
                            "plural" => plural = value,
                            _ => {}
                        }
                    }
                    syn::ImplItem::Const(c) => {
                        let value = string_value(&c.expr);
                        match c.ident.to_string().as_str() {
                            "KIND" => kind = value,
                            "GROUP" => group = value,
                            "URL_PATH_SEGMENT" => plural = value,
                            _ => {}
                        }
                    }
                    syn::ImplItem::Type(t) if t.ident == "Scope" => {
                        namespaced = !quote::ToTokens::to_token_stream(&t.ty)
                            .to_string()
                            .contains("ClusterResourceScope");
                    }
                    _ => {}
                }
            }
            if let (Some(kind), Some(group)) = (kind, group) {
                let root = type_name(&item.self_ty)
                    .map(|(name, _)| name)
                    .filter(|name| *name != kind);
                self.0.push(OwnKind {
                    plural: plural.unwrap_or_else(|| names::to_plural(&kind.to_ascii_lowercase())),
                    kind,
                    group,
                    namespaced,
                    root,
                    declared_in: None,
                    foreign: false,
                });
            }
        }
    }
    /// The first string literal of a function body (`Cow::Borrowed("x")`).
    fn first_string(block: &syn::Block) -> Option<String> {
        struct First(Option<String>);
        impl<'ast> Visit<'ast> for First {
            fn visit_lit_str(&mut self, lit: &'ast syn::LitStr) {
                self.0.get_or_insert_with(|| lit.value());
            }
        }
        let mut first = First(None);
        first.visit_block(block);
        first.0
    }
    let Ok(file) = syn::parse_file(text) else {
        return Vec::new();
    };
    let mut impls = Impls(Vec::new());
    impls.visit_file(&file);
    impls.0
}

/// The `K` of an `ApiResource::erase::<K>(..)` in `args`.
pub(super) fn erased_kind(
    args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
) -> Option<syn::Type> {
    struct Erase(Option<syn::Type>);
    impl<'ast> Visit<'ast> for Erase {
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = &*call.func
                && let Some(last) = p.path.segments.last()
                && last.ident == "erase"
                && let Some(kind) = generic_args(&last.arguments).first()
            {
                self.0.get_or_insert_with(|| (*kind).clone());
            }
            syn::visit::visit_expr_call(self, call);
        }
    }
    let mut erase = Erase(None);
    for arg in args {
        erase.visit_expr(arg);
    }
    erase.0
}

/// Where the requests on Kubernetes' own kind `kind` go, from rsop's table.
pub(super) fn kubernetes_kind(kind: &str) -> Option<Target> {
    let k = k8s_kinds::KINDS.iter().find(|k| k.kind == kind)?;
    Some(Target {
        group: names::api_group(k.group).to_string(),
        plural: k.plural.to_string(),
        namespaced: k.namespaced,
    })
}

/// A k8s-openapi type's group and plural, from its module path
/// (`k8s_openapi::api::apps::v1::Deployment`).
pub(super) fn k8s_target(path: &[String]) -> Option<Target> {
    let kind = path.last()?;
    let module = match path {
        [_, api, module, ..] if api == "api" => module.as_str(),
        [_, ext, ..] if ext == "apiextensions_apiserver" => "apiextensions",
        [_, agg, ..] if agg == "kube_aggregator" => "apiregistration",
        _ => return kubernetes_kind(kind),
    };
    let group = match module {
        "core" => String::new(),
        // The groups of before `.k8s.io`: `extensions/v1beta1`'s Ingress
        // of old releases is served there, not in `networking.k8s.io`.
        "apps" | "batch" | "autoscaling" | "policy" | "extensions" => module.to_string(),
        "rbac" => "rbac.authorization.k8s.io".to_string(),
        "flowcontrol" => "flowcontrol.apiserver.k8s.io".to_string(),
        "apiserverinternal" => "internal.apiserver.k8s.io".to_string(),
        other => format!("{other}.k8s.io"),
    };
    // The module names the group; the kind its plural and scope.
    if let Some(known) = kubernetes_kind(kind) {
        return Some(Target { group, ..known });
    }
    Some(Target {
        group,
        plural: names::to_plural(&kind.to_ascii_lowercase()),
        namespaced: !CLUSTER_KINDS.contains(&kind.as_str()),
    })
}

/// The kinds of the Gateway API (`gateway.networking.k8s.io`): kind,
/// plural, namespaced.
pub(super) const GATEWAY_KINDS: &[(&str, &str, bool)] = &[
    ("GatewayClass", "gatewayclasses", false),
    ("Gateway", "gateways", true),
    ("HTTPRoute", "httproutes", true),
    ("GRPCRoute", "grpcroutes", true),
    ("TLSRoute", "tlsroutes", true),
    ("TCPRoute", "tcproutes", true),
    ("UDPRoute", "udproutes", true),
    ("ReferenceGrant", "referencegrants", true),
    ("BackendTLSPolicy", "backendtlspolicies", true),
];

/// Kubernetes' cluster-scoped kinds beyond [`k8s_kinds::KINDS`].
pub(super) const CLUSTER_KINDS: &[&str] = &[
    "APIService",
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "ComponentStatus",
    "CustomResourceDefinition",
    "FlowSchema",
    "IngressClass",
    "MutatingWebhookConfiguration",
    "PriorityClass",
    "PriorityLevelConfiguration",
    "RuntimeClass",
    "SelfSubjectAccessReview",
    "SelfSubjectReview",
    "SelfSubjectRulesReview",
    "StorageClass",
    "SubjectAccessReview",
    "TokenReview",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
    "CSIDriver",
    "CSINode",
];

/// What a function's variables hold: `Api` values by their kind, and other
/// values by their written type (the kind a generic function is given).
#[derive(Debug, Default)]
pub(super) struct Scope {
    pub(super) apis: Bound<ApiKind>,
    pub(super) values: Bound<syn::Type>,
    /// Variables that hold a literal `GroupVersionKind` or `ApiResource`.
    pub(super) literals: HashMap<String, Literal>,
    /// Variables that hold a client of another cluster, and `Api`s made
    /// with one.
    pub(super) remote_clients: HashSet<String>,
    pub(super) remote_apis: HashSet<String>,
    /// Variables that hold a `Patch::Apply(..)`.
    pub(super) applies: HashSet<String>,
    /// Variables made with an owner reference: another object's children.
    pub(super) children: HashSet<String>,
    /// The places of the `Recorder::new(..)` calls whose recorder the
    /// function only calls methods on: it publishes and is dropped.
    pub(super) passing_recorders: HashSet<Place>,
}

/// The `Recorder::new(..)` calls of a block bound by a `let` to a name the
/// block uses only as a method's receiver (`recorder.publish(..)`): the
/// recorder is not kept beyond the function.
pub(super) fn passing_recorders(block: &syn::Block) -> HashSet<Place> {
    #[derive(Default)]
    struct Recorders {
        made: Vec<(String, Place)>,
        escaped: HashSet<String>,
    }
    impl<'ast> Visit<'ast> for Recorders {
        fn visit_local(&mut self, local: &'ast syn::Local) {
            if let syn::Pat::Ident(name) = &local.pat
                && let Some(init) = &local.init
                && let syn::Expr::Call(c) = &*init.expr
                && let syn::Expr::Path(p) = &*c.func
                && p.path.segments.len() >= 2
                && p.path.segments[p.path.segments.len() - 2].ident == "Recorder"
            {
                self.made.push((name.ident.to_string(), start(c)));
            }
            syn::visit::visit_local(self, local);
        }
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            // `recorder.publish(..)`: used, not kept.
            if !matches!(&*call.receiver, syn::Expr::Path(p) if p.path.get_ident().is_some()) {
                self.visit_expr(&call.receiver);
            }
            for arg in &call.args {
                self.visit_expr(arg);
            }
        }
        fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
            if let Some(name) = path.path.get_ident() {
                self.escaped.insert(name.to_string());
            }
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            for expr in macro_exprs(mac).iter().flatten() {
                self.visit_expr(expr);
            }
        }
    }
    let mut recorders = Recorders::default();
    recorders.visit_block(block);
    recorders
        .made
        .into_iter()
        .filter(|(name, _)| !recorders.escaped.contains(name))
        .map(|(_, at)| at)
        .collect()
}

/// Values bound to names in a function, each from where it is bound to
/// the end of the block that binds it: a name reads the last binding before
/// it that is still in scope, so a `let` that shadows another, one in a
/// sibling `match` arm, or one in a loop body that has ended, does not
/// change what a use reads.
#[derive(Debug)]
pub(super) struct Bound<T>(HashMap<String, Vec<(Place, Place, T)>>);

/// A line and column.
pub(super) type Place = (usize, usize);

impl<T> Default for Bound<T> {
    fn default() -> Self {
        Bound(HashMap::new())
    }
}

impl<T> Bound<T> {
    /// Binds `name` from `at` (line, column) on.
    pub(super) fn insert(&mut self, name: String, at: Place, value: T) {
        self.insert_until(name, at, (usize::MAX, usize::MAX), value);
    }

    /// Binds `name` from `at` to `until`, the end of its block.
    pub(super) fn insert_until(&mut self, name: String, at: Place, until: Place, value: T) {
        let bindings = self.0.entry(name).or_default();
        match bindings.binary_search_by_key(&at, |(place, _, _)| *place) {
            Ok(i) => bindings[i] = (at, until, value),
            Err(i) => bindings.insert(i, (at, until, value)),
        }
    }

    /// What `name` is bound to at `at`.
    pub(super) fn get(&self, name: &str, at: Place) -> Option<&T> {
        self.0
            .get(name)?
            .iter()
            .rev()
            .find(|(place, until, _)| *place <= at && at <= *until)
            .map(|(_, _, value)| value)
    }

    /// The binding `name` reads at `at`, to settle it.
    pub(super) fn get_mut(&mut self, name: &str, at: Place) -> Option<&mut T> {
        self.0
            .get_mut(name)?
            .iter_mut()
            .rev()
            .find(|(place, until, _)| *place <= at && at <= *until)
            .map(|(_, _, value)| value)
    }
}

/// The expression a block ends with.
fn tail(block: &syn::Block) -> Option<&syn::Expr> {
    match block.stmts.last()? {
        syn::Stmt::Expr(expr, None) => Some(expr),
        _ => None,
    }
}

/// The tuple an expression yields: written out, or the one every branch
/// that does not panic yields.
fn tuple_of(expr: &syn::Expr) -> Option<&syn::ExprTuple> {
    match expr {
        syn::Expr::Tuple(t) => Some(t),
        syn::Expr::Paren(p) => tuple_of(&p.expr),
        syn::Expr::Block(b) => tuple_of(tail(&b.block)?),
        syn::Expr::If(_) | syn::Expr::Match(_) => match yielding_branches(expr)?.as_slice() {
            [only] => tuple_of(only),
            _ => None,
        },
        _ => None,
    }
}

/// Whether a branch never yields a value: it panics (`todo!()`,
/// `unreachable!()`), returns, breaks or continues.
fn diverges(expr: &syn::Expr) -> bool {
    match expr {
        syn::Expr::Return(_) | syn::Expr::Break(_) | syn::Expr::Continue(_) => true,
        syn::Expr::Macro(m) => diverging_macro(&m.mac),
        syn::Expr::Block(b) => block_diverges(&b.block),
        _ => false,
    }
}

/// Whether a block ends in a branch that never yields a value.
fn block_diverges(block: &syn::Block) -> bool {
    match block.stmts.last() {
        Some(syn::Stmt::Expr(e, _)) => diverges(e),
        Some(syn::Stmt::Macro(m)) => diverging_macro(&m.mac),
        _ => false,
    }
}

/// `todo!()`, `unimplemented!()`, `unreachable!()`, `panic!()`.
fn diverging_macro(mac: &syn::Macro) -> bool {
    mac.path.segments.last().is_some_and(|s| {
        matches!(
            s.ident.to_string().as_str(),
            "todo" | "unimplemented" | "unreachable" | "panic"
        )
    })
}

/// The branches of an `if` (with its `else`) or a `match` that yield a
/// value, as the expressions they end with.
fn yielding_branches(expr: &syn::Expr) -> Option<Vec<&syn::Expr>> {
    let branches: Vec<&syn::Expr> = match expr {
        syn::Expr::If(i) => {
            let (_, otherwise) = i.else_branch.as_ref()?;
            let mut out = Vec::new();
            if !block_diverges(&i.then_branch) {
                out.push(tail(&i.then_branch)?);
            }
            if !diverges(otherwise) {
                out.push(&**otherwise);
            }
            out
        }
        syn::Expr::Match(m) => m
            .arms
            .iter()
            .map(|arm| &*arm.body)
            .filter(|body| !diverges(body))
            .collect(),
        _ => return None,
    };
    Some(branches)
}

/// The kind all of `kinds` are, the `Api::all` or `namespaced` they agree
/// on kept.
fn agree(kinds: impl IntoIterator<Item = Option<ApiKind>>) -> Option<ApiKind> {
    let kinds: Vec<ApiKind> = kinds.into_iter().collect::<Option<_>>()?;
    let (first, rest) = kinds.split_first()?;
    // Every branch yields an `Api` but they do not agree on its kind (one
    // made from a resource found at run time, the other a clone): an `Api`
    // whose kind the code does not show, noted where it is used.
    let unknown = Some(ApiKind::Inferred(None));
    let ApiKind::Known(first, cluster) = first else {
        return unknown;
    };
    let mut cluster = *cluster;
    for kind in rest {
        let ApiKind::Known(ty, other) = kind else {
            return unknown;
        };
        if quote::ToTokens::to_token_stream(ty).to_string()
            != quote::ToTokens::to_token_stream(first).to_string()
        {
            return unknown;
        }
        if *other != cluster {
            cluster = None;
        }
    }
    Some(ApiKind::Known(first.clone(), cluster))
}

/// Where a node starts: line and column.
pub(super) fn start(node: &impl Spanned) -> Place {
    let at = node.span().start();
    (at.line, at.column)
}

/// `let` bindings of `Api` values.
pub(super) struct Bindings<'w, 'a> {
    pub(super) cx: &'w Typing<'a>,
    pub(super) scope: &'w mut Scope,
    /// Where each block being read ends, the innermost last.
    pub(super) blocks: Vec<Place>,
}

impl Bindings<'_, '_> {
    /// The type of the elements a loop over `expr` takes: of a `Vec`,
    /// set, `Option`, array or slice the code shows, through `.iter()` and
    /// the like.
    fn element_of(&self, expr: &syn::Expr) -> Option<syn::Type> {
        let expr = match expr {
            syn::Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "iter" | "into_iter" | "iter_mut" | "drain"
                ) =>
            {
                &*m.receiver
            }
            other => other,
        };
        match self.cx.type_of(expr, self.scope)? {
            syn::Type::Array(a) => Some((*a.elem).clone()),
            syn::Type::Slice(s) => Some((*s.elem).clone()),
            syn::Type::Path(p) => {
                let last = p.path.segments.last()?;
                let collection = matches!(
                    last.ident.to_string().as_str(),
                    "Vec" | "VecDeque" | "HashSet" | "BTreeSet" | "Option"
                );
                collection
                    .then(|| generic_args(&last.arguments).first().copied().cloned())
                    .flatten()
            }
            _ => None,
        }
    }

    /// Where a `let`'s names are bound: from its end to the end of its block.
    fn span_of(&self, local: &syn::Local) -> (Place, Place) {
        let end = local.span().end();
        let until = self
            .blocks
            .last()
            .copied()
            .unwrap_or((usize::MAX, usize::MAX));
        ((end.line, end.column), until)
    }
}

impl<'ast> Visit<'ast> for Bindings<'_, '_> {
    fn visit_block(&mut self, block: &'ast syn::Block) {
        let end = block.brace_token.span.close().end();
        self.blocks.push((end.line, end.column));
        syn::visit::visit_block(self, block);
        self.blocks.pop();
    }
    fn visit_local(&mut self, local: &'ast syn::Local) {
        let (pat, annotated) = match &local.pat {
            syn::Pat::Type(t) => (&*t.pat, api_type(&t.ty)),
            other => (other, None),
        };
        // `let (tasks, workflows) = (Api::namespaced(..), Api::namespaced(..))`,
        // or the one branch of an `if` that does not panic; `let (api,
        // resource) = dynamic_api(..).await?`: the `Api`s of the tuple the
        // crate's function returns.
        if let syn::Pat::Tuple(names) = pat
            && let Some(init) = &local.init
            && let Some(kinds) = match tuple_of(&init.expr) {
                Some(values) => Some(
                    values
                        .elems
                        .iter()
                        .map(|value| self.cx.kind_of(value, self.scope))
                        .collect::<Vec<_>>(),
                ),
                None => self.cx.tuple_returned(&init.expr).map(|kinds| {
                    kinds
                        .into_iter()
                        .map(|kind| kind.map(|kind| ApiKind::Known(Box::new(kind), None)))
                        .collect()
                }),
            }
            && kinds.len() == names.elems.len()
        {
            let (from, until) = self.span_of(local);
            for (name, kind) in names.elems.iter().zip(kinds) {
                if let syn::Pat::Ident(name) = name
                    && let Some(kind) = kind
                {
                    self.scope
                        .apis
                        .insert_until(name.ident.to_string(), from, until, kind);
                }
            }
        }
        if let syn::Pat::Ident(name) = pat {
            let name = name.ident.to_string();
            // `let patch = Patch::Apply(&cm); api.patch(.., &patch)`.
            if let Some(init) = &local.init
                && super::requests::applies([&*init.expr], &HashSet::new())
            {
                self.scope.applies.insert(name.clone());
            }
            // `let tunnel = build_tunnel(name, owner_refs, ..)`.
            if let Some(init) = &local.init
                && super::requests::makes_child([&*init.expr], &self.scope.children)
            {
                self.scope.children.insert(name.clone());
            }
            let from_init = local
                .init
                .as_ref()
                .and_then(|init| self.cx.kind_of(&init.expr, self.scope));
            // `Api<DynamicObject>` says nothing of the kind; its constructor may.
            let dynamic = annotated.as_ref().is_some_and(|k| {
                matches!(k, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "DynamicObject"))
            });
            let kind = match (annotated, from_init) {
                (Some(_), Some(known @ ApiKind::Known(..))) if dynamic => Some(known),
                (Some(kind), Some(ApiKind::Known(_, cluster) | ApiKind::Inferred(cluster))) => {
                    Some(ApiKind::Known(Box::new(kind), cluster))
                }
                (Some(_), Some(dynamic @ ApiKind::Dynamic(..))) => Some(dynamic),
                (Some(kind), None) => Some(ApiKind::Known(Box::new(kind), None)),
                (None, found) => found,
            };
            let literal = local
                .init
                .as_ref()
                .map(|init| {
                    let known = Known {
                        vars: &self.scope.literals,
                        consts: &self.cx.index.consts,
                        functions: &self.cx.index.literal_fns,
                    };
                    literal_parts([&*init.expr], &known)
                })
                .unwrap_or_default();
            if let Some(client) = local
                .init
                .as_ref()
                .and_then(|init| api_constructor_call(&init.expr))
                && variable(client).is_some_and(|c| self.scope.remote_clients.contains(&c))
            {
                self.scope.remote_apis.insert(name.clone());
            }
            if let Some(kind) = kind {
                let (from, until) = self.span_of(local);
                self.scope.apis.insert_until(name, from, until, kind);
            } else if literal != Literal::default() {
                self.scope.literals.insert(name, literal);
            } else if let syn::Pat::Type(t) = &local.pat {
                let (from, until) = self.span_of(local);
                self.scope
                    .values
                    .insert_until(name, from, until, (*t.ty).clone());
            } else if let Some(ty) = local.init.as_ref().and_then(|init| {
                constructed_type(&init.expr).or_else(|| self.cx.type_of(&init.expr, self.scope))
            }) {
                // Each `match` arm's `let data = Secret { .. }` is its own.
                let (from, until) = self.span_of(local);
                self.scope.values.insert_until(name, from, until, ty);
            }
        }
        syn::visit::visit_local(self, local);
    }
    /// `for api in hpa_apis(ctx)` of a `Vec<Api<K>>`: each element is
    /// bound in the loop's body.
    fn visit_expr_for_loop(&mut self, e: &'ast syn::ExprForLoop) {
        if let syn::Pat::Ident(name) = &*e.pat
            && let Some(element) = self.element_of(&e.expr)
        {
            let name = name.ident.to_string();
            let from = start(&e.body);
            let end = e.body.span().end();
            let until = (end.line, end.column);
            match api_type(&element) {
                Some(kind) => self.scope.apis.insert_until(
                    name,
                    from,
                    until,
                    ApiKind::Known(Box::new(kind), None),
                ),
                None => self
                    .scope
                    .values
                    .insert_until(name, from, until, strip_wrappers(&element)),
            }
        }
        syn::visit::visit_expr_for_loop(self, e);
    }
    fn visit_expr_closure(&mut self, closure: &'ast syn::ExprClosure) {
        for input in &closure.inputs {
            let syn::Pat::Type(t) = input else { continue };
            let syn::Pat::Ident(name) = &*t.pat else {
                continue;
            };
            let name = name.ident.to_string();
            if let Some(kind) = api_type(&t.ty) {
                self.scope
                    .apis
                    .insert(name, start(t), ApiKind::Known(Box::new(kind), None));
            } else {
                // `|obj: Arc<T>, ctx| reconcile(obj, ctx)`: bound in the
                // closure's body only.
                let end = closure.span().end();
                self.scope.values.insert_until(
                    name,
                    start(t),
                    (end.line, end.column),
                    (*t.ty).clone(),
                );
            }
        }
        syn::visit::visit_expr_closure(self, closure);
    }
}

/// An `Api` whose kind rustc infers takes the kind of the parameter it is
/// passed to.
pub(super) struct Settle<'w, 'a> {
    pub(super) cx: &'w Typing<'a>,
    pub(super) scope: &'w mut Scope,
}

impl Settle<'_, '_> {
    /// `owners`: the crate's functions named `callee` the call may be of.
    pub(super) fn settle(
        &mut self,
        callee: &str,
        owners: Option<&[Owner]>,
        args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
    ) {
        let Some(params) = self.cx.index.params.at(callee, owners) else {
            return;
        };
        for (arg, param) in args.iter().zip(params) {
            let (Some(param), Some(name)) = (param, variable(arg)) else {
                continue;
            };
            if let Some(bound) = self.scope.apis.get_mut(&name, start(arg))
                && let ApiKind::Inferred(cluster) = bound
            {
                *bound = ApiKind::Known(Box::new(param.clone()), *cluster);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Settle<'_, '_> {
    /// `let secret: Secret = api.get(..).await?`: an `Api` whose kind rustc
    /// infers is of the kind its answer is bound to.
    fn visit_local(&mut self, local: &'ast syn::Local) {
        if let syn::Pat::Type(t) = &local.pat
            && let Some(init) = &local.init
            && let Some((api, method)) = answered_call(&init.expr)
            && let Some(bound) = self.scope.apis.get_mut(&api, start(&init.expr))
            && let ApiKind::Inferred(cluster) = bound
            && let Some(kind) = answer_kind(&t.ty, &method)
        {
            *bound = ApiKind::Known(Box::new(kind), *cluster);
        }
        syn::visit::visit_local(self, local);
    }
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        for expr in macro_exprs(mac).iter().flatten() {
            self.visit_expr(expr);
        }
    }
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*call.func
            && let Some(last) = p.path.segments.last()
        {
            let owners = self.cx.owners_of_path(&p.path);
            self.settle(&last.ident.to_string(), owners.as_deref(), &call.args);
            // `finalizer(&api, name, obj, ..)`: the `Api` is of the object's kind.
            if last.ident == "finalizer"
                && let (Some(api), Some(obj)) = (
                    call.args.first().and_then(variable),
                    call.args.iter().nth(2).and_then(variable),
                )
                && let Some(ty) = self.scope.values.get(&obj, start(call)).map(strip_wrappers)
                && let Some(bound) = self.scope.apis.get_mut(&api, start(call))
                && let ApiKind::Inferred(cluster) = bound
            {
                *bound = ApiKind::Known(Box::new(ty), *cluster);
            }
        }
        syn::visit::visit_expr_call(self, call);
    }
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let method = call.method.to_string();
        let owners = self
            .cx
            .owners_of_method(&method, &call.receiver, self.scope);
        self.settle(&method, owners.as_deref(), &call.args);
        syn::visit::visit_expr_method_call(self, call);
    }
}

/// The `Api` variable and method of `api.get(..).await?` (also with
/// `.unwrap()` or `.expect(..)`).
pub(super) fn answered_call(expr: &syn::Expr) -> Option<(String, String)> {
    match expr {
        syn::Expr::Try(t) => answered_call(&t.expr),
        syn::Expr::Await(a) => answered_call(&a.base),
        syn::Expr::Paren(p) => answered_call(&p.expr),
        syn::Expr::MethodCall(m)
            if matches!(m.method.to_string().as_str(), "unwrap" | "expect") =>
        {
            answered_call(&m.receiver)
        }
        syn::Expr::MethodCall(m) => Some((variable(&m.receiver)?, m.method.to_string())),
        _ => None,
    }
}

/// The kind of the `Api` whose `method` answers with a value of type `ty`.
pub(super) fn answer_kind(ty: &syn::Type, method: &str) -> Option<syn::Type> {
    let inner = |ty: &syn::Type, wrapper: &str| match ty {
        syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == wrapper) => p
            .path
            .segments
            .last()
            .and_then(|s| generic_args(&s.arguments).first().map(|t| (*t).clone())),
        _ => None,
    };
    let kind = match method {
        "get" | "get_status" | "create" | "replace" | "replace_status" | "patch"
        | "patch_status" => Some(ty.clone()),
        "get_opt" => inner(ty, "Option"),
        "list" => inner(ty, "ObjectList"),
        _ => None,
    }?;
    // `DynamicObject` and the like say nothing of the kind.
    matches!(&kind, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| {
        !matches!(s.ident.to_string().as_str(), "DynamicObject" | "Value" | "PartialObjectMeta")
    }))
    .then_some(kind)
}

/// The type an expression constructs: `Wrapper::<Pod>::new(..)` and
/// `Wrapper::new(..)` make a `Wrapper<Pod>` / `Wrapper`, `Wrapper { .. }` a
/// `Wrapper` (behind `?` and `.await`).
pub(super) fn constructed_type(expr: &syn::Expr) -> Option<syn::Type> {
    match expr {
        syn::Expr::Try(t) => constructed_type(&t.expr),
        syn::Expr::Await(a) => constructed_type(&a.base),
        // `Type::new(..).context(..)?`: the error changes, the value not.
        syn::Expr::MethodCall(m)
            if matches!(
                m.method.to_string().as_str(),
                "context"
                    | "with_context"
                    | "map_err"
                    | "wrap_err"
                    | "wrap_err_with"
                    | "unwrap"
                    | "expect"
            ) =>
        {
            constructed_type(&m.receiver)
        }
        syn::Expr::Struct(s) => Some(syn::Type::Path(syn::TypePath {
            qself: None,
            path: s.path.clone(),
        })),
        syn::Expr::Call(c) => {
            let syn::Expr::Path(p) = &*c.func else {
                return None;
            };
            let segments = &p.path.segments;
            let n = segments.len();
            // `Type::function`: a type starts with a capital.
            if n < 2
                || !segments[n - 2]
                    .ident
                    .to_string()
                    .starts_with(|c: char| c.is_ascii_uppercase())
                || segments[n - 2].ident == "Api"
            {
                return None;
            }
            let mut path = p.path.clone();
            path.segments.pop();
            // The popped separator leaves a trailing `::`.
            let segments: syn::punctuated::Punctuated<syn::PathSegment, syn::Token![::]> =
                path.segments.into_iter().collect();
            path.segments = segments;
            Some(syn::Type::Path(syn::TypePath { qself: None, path }))
        }
        _ => None,
    }
}

/// What the walk of a function knows to type its expressions: the file,
/// the crate's index, kinds and imports, and the function and `impl` being
/// walked.
pub(super) struct Typing<'a> {
    pub(super) path: &'a Path,
    pub(super) index: &'a Index,
    pub(super) own: &'a [OwnKind],
    pub(super) imports: &'a HashMap<String, Vec<String>>,
    /// The function being walked, and its type parameters (with those of
    /// its `impl`).
    pub(super) function: String,
    pub(super) generics: Vec<String>,
    /// Those of the function's type parameters bound by `Resource`: the
    /// kinds it is generic over.
    pub(super) resource_generics: Vec<String>,
    /// The `impl` being walked: its self type and its type parameters.
    pub(super) self_type: Option<syn::Type>,
    pub(super) impl_generics: Vec<String>,
    /// The type the function being walked returns.
    pub(super) output: Option<syn::Type>,
    /// The trait whose provided methods are being walked.
    pub(super) in_trait: Option<String>,
    /// The file uses rsop-runtime, whose manager and reconciler make requests of their own.
    pub(super) runtime: bool,
    /// The function is an `impl`'s or a trait's, called through a type
    /// (`Self::reconcile`), not a free function of the same name.
    pub(super) associated: bool,
    /// The module being walked (the file's, with its inline `mod`s).
    pub(super) module: Vec<String>,
    /// The dependency crate the file is of (`""`: the package's own).
    pub(super) krate: String,
    /// The names of the function's `bool` parameters, by place (a method's
    /// `self` left out; other parameters are empty names).
    pub(super) flags: Vec<String>,
}

impl<'a> Typing<'a> {
    /// What a file's walk starts from, outside any function.
    pub(super) fn new(
        path: &'a Path,
        index: &'a Index,
        own: &'a [OwnKind],
        imports: &'a HashMap<String, Vec<String>>,
        krate: Option<&str>,
    ) -> Self {
        Typing {
            krate: krate.unwrap_or_default().to_string(),
            path,
            index,
            own,
            imports,
            function: String::new(),
            generics: Vec::new(),
            resource_generics: Vec::new(),
            self_type: None,
            impl_generics: Vec::new(),
            in_trait: None,
            output: None,
            runtime: uses_runtime(imports),
            associated: false,
            module: super::syntax::module_in(path, krate),
            flags: Vec::new(),
        }
    }

    /// Where the function being walked is (see [`Owner`]).
    pub(super) fn owner(&self) -> Owner {
        let mut owner = self.module.clone();
        if let Some(name) = &self.in_trait {
            owner.push(name.clone());
        } else if let Some((name, _)) = self.self_type.as_ref().and_then(type_name) {
            owner.push(name);
        }
        owner
    }

    /// The crate's functions a call of `path` may be of; `None` when the
    /// path does not tell the functions of its name apart.
    pub(super) fn owners_of_path(&self, path: &syn::Path) -> Option<Vec<Owner>> {
        let mut segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let name = segments.pop()?;
        if segments.first().is_some_and(|first| first == "Self") {
            segments[0] = type_name(self.self_type.as_ref()?)?.0;
        }
        self.index.resolve(
            &name,
            &Callee {
                qualifier: from_root(segments, self.imports),
                method: false,
                module: &self.module,
                imports: self.imports,
            },
        )
    }

    /// The crate's methods `x.name()` may be of, by the type of `x`.
    pub(super) fn owners_of_method(
        &self,
        name: &str,
        receiver: &syn::Expr,
        scope: &Scope,
    ) -> Option<Vec<Owner>> {
        let ty = self.type_of(receiver, scope)?;
        let (ty, _) = type_name(&ty)?;
        self.index.resolve(
            name,
            &Callee {
                qualifier: vec![ty],
                method: true,
                module: &self.module,
                imports: self.imports,
            },
        )
    }
    /// The kind of an `Api` expression.
    pub(super) fn kind_of(&self, expr: &syn::Expr, scope: &Scope) -> Option<ApiKind> {
        match expr {
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|i| scope.apis.get(&i.to_string(), start(p)).cloned()),
            syn::Expr::Reference(r) => self.kind_of(&r.expr, scope),
            syn::Expr::Paren(p) => self.kind_of(&p.expr, scope),
            syn::Expr::Try(t) => self.kind_of(&t.expr, scope),
            syn::Expr::Await(a) => self.kind_of(&a.base, scope),
            syn::Expr::Field(f) => {
                let syn::Member::Named(name) = &f.member else {
                    return None;
                };
                let candidates = self.index.fields.get(&name.to_string())?;
                // The struct the base's value is picks the field; a base
                // whose type the code does not show takes the kind all such
                // fields agree on, or is not checked.
                if let Some(owner) = self.type_of(&f.base, scope)
                    && let Some((struct_name, args)) = type_name(&owner)
                {
                    let (struct_name, args) = self
                        .with_field(&struct_name, &args, &name.to_string())
                        .unwrap_or((struct_name, args));
                    if let Some((_, kind)) = candidates.iter().find(|(s, _)| *s == struct_name) {
                        let kind = self.substitute(kind, &struct_name, &args);
                        return Some(ApiKind::Known(Box::new(kind), None));
                    }
                    // A field of another of the crate's structs is no `Api`.
                    if self.index.structs.contains(&struct_name) {
                        return None;
                    }
                }
                match candidates.as_slice() {
                    [(_, kind), rest @ ..] if rest.iter().all(|(_, k)| k == kind) => {
                        Some(ApiKind::Known(Box::new(kind.clone()), None))
                    }
                    _ => Some(ApiKind::Inferred(None)),
                }
            }
            // `if let Some(ns) = ns { Api::namespaced(..) } else { Api::all(..) }`:
            // the kind every branch agrees on.
            syn::Expr::Block(b) => self.kind_of(tail(&b.block)?, scope),
            // A branch that panics or returns yields no `Api`.
            syn::Expr::If(_) | syn::Expr::Match(_) => agree(
                yielding_branches(expr)?
                    .into_iter()
                    .map(|branch| self.kind_of(branch, scope)),
            ),
            syn::Expr::MethodCall(m) => {
                let method = m.method.to_string();
                if matches!(method.as_str(), "clone" | "to_owned" | "as_ref") {
                    return self.kind_of(&m.receiver, scope);
                }
                // `cache.entry(ns).or_insert_with(|| Api::namespaced(..))`:
                // the `Api` the map holds is the one made for it.
                if matches!(
                    method.as_str(),
                    "or_insert_with"
                        | "or_insert_with_key"
                        | "get_or_insert_with"
                        | "or_insert"
                        | "get_or_insert"
                ) && let Some(made) = m.args.first()
                {
                    let made = match made {
                        syn::Expr::Closure(c) => &*c.body,
                        other => other,
                    };
                    return self.kind_of(made, scope);
                }
                // rsop-runtime's `ctx.api::<K>()`: the watched namespace's, or all namespaces'.
                if self.runtime
                    && method == "api"
                    && m.args.is_empty()
                    && !self.index.returns.contains_key(&method)
                    && let Some(kind) = turbofish(m.turbofish.as_ref())
                {
                    return Some(ApiKind::Known(Box::new(kind), None));
                }
                // `self.get_api()` in a trait's provided method: what the
                // trait declares it returns (`Api<R>`), not what one of its
                // `impl`s does.
                if let Some(name) = &self.in_trait
                    && matches!(&*m.receiver, syn::Expr::Path(p) if p.path.is_ident("self"))
                    && let Some(kind) = self
                        .index
                        .trait_returns
                        .get(&(name.clone(), method.clone()))
                {
                    return Some(ApiKind::Known(Box::new(kind.clone()), None));
                }
                // Another crate's `client.get_api::<Pod>(ns)`: a method named
                // for the `Api` it makes, of the kind its turbofish names.
                if !self.index.functions.contains_key(&method)
                    && method.to_ascii_lowercase().ends_with("api")
                    && let Some(kind) = turbofish(m.turbofish.as_ref())
                    && self.target(&kind).is_some()
                {
                    return Some(ApiKind::Known(Box::new(kind), None));
                }
                let owners = self.owners_of_method(&method, &m.receiver, scope);
                let (kind, cluster) = self.index.returns.at(&method, owners.as_deref())?;
                let kind = kind
                    .clone()
                    .or_else(|| turbofish(m.turbofish.as_ref()))
                    .or_else(|| {
                        matches!(&*m.receiver, syn::Expr::Path(r) if r.path.is_ident("self"))
                            .then(|| self.only_type_parameter())
                            .flatten()
                    })?;
                Some(ApiKind::Known(Box::new(kind), *cluster))
            }
            syn::Expr::Call(c) => {
                // `Api::<Pod>::clone(&pods)`, `Clone::clone(&pods)`: the `Api` cloned.
                if let syn::Expr::Path(p) = &*c.func
                    && p.path.segments.last().is_some_and(|s| s.ident == "clone")
                    && p.path.segments.len() >= 2
                    && let Some(cloned) = c.args.first()
                {
                    return self.kind_of(cloned, scope);
                }
                if let Some((kind, cluster)) = api_constructor(&c.func) {
                    if let Literal {
                        group: Some(group),
                        kind: Some(kind),
                        plural,
                    } = literal_parts(
                        &c.args,
                        &Known {
                            vars: &scope.literals,
                            consts: &self.index.consts,
                            functions: &self.index.literal_fns,
                        },
                    ) {
                        return Some(ApiKind::Dynamic(group, kind, plural, cluster));
                    }
                    // `Api::all_with(client, &ApiResource::erase::<K>(&()))`.
                    if let Some(erased) = erased_kind(&c.args) {
                        return Some(ApiKind::Known(Box::new(erased), Some(cluster)));
                    }
                    return Some(match kind {
                        Some(kind) => ApiKind::Known(Box::new(kind), Some(cluster)),
                        None => ApiKind::Inferred(Some(cluster)),
                    });
                }
                let syn::Expr::Path(p) = &*c.func else {
                    return None;
                };
                let last = p.path.segments.last()?;
                let owners = self.owners_of_path(&p.path);
                let (kind, cluster) = self
                    .index
                    .returns
                    .at(&last.ident.to_string(), owners.as_deref())?;
                // A function that makes an `Api<DynamicObject>` of a literal
                // `GroupVersionKind`: that resource.
                if let Some(Literal {
                    group: Some(group),
                    kind: Some(literal),
                    plural,
                }) = self.index.literal_fns.get(&last.ident.to_string())
                    && kind.as_ref().is_some_and(|k| {
                        matches!(k, syn::Type::Path(k) if k.path.segments.last().is_some_and(|l| l.ident == "DynamicObject"))
                    })
                {
                    return Some(ApiKind::Dynamic(
                        group.clone(),
                        literal.clone(),
                        plural.clone(),
                        cluster.unwrap_or(false),
                    ));
                }
                let mut kind = kind
                    .clone()
                    .or_else(|| generic_args(&last.arguments).first().map(|t| (*t).clone()))
                    // `Self::api(..)`: the type's own function.
                    .or_else(|| {
                        (p.path.segments.len() == 2 && p.path.segments[0].ident == "Self")
                            .then(|| self.only_type_parameter())
                            .flatten()
                    })?;
                // `Widget::get_api(..)` of a `fn get_api() -> Api<Self>`.
                if is_self(&kind) && p.path.segments.len() >= 2 {
                    let mut path = p.path.clone();
                    path.segments.pop();
                    path.segments = path.segments.into_iter().collect();
                    kind = syn::Type::Path(syn::TypePath { qself: None, path });
                }
                // `Self::get_api(..)` in an `impl` of a kind.
                if is_self(&kind)
                    && let Some(own) = &self.self_type
                {
                    kind = own.clone();
                }
                Some(ApiKind::Known(Box::new(kind), *cluster))
            }
            _ => None,
        }
    }

    /// The type of a value, as far as the function's parameters, its
    /// `let`s and the crate's struct fields show it (`self.ctx.clients`).
    pub(super) fn type_of(&self, expr: &syn::Expr, scope: &Scope) -> Option<syn::Type> {
        match expr {
            syn::Expr::Path(p) => {
                let name = p.path.get_ident()?.to_string();
                scope.values.get(&name, start(p)).map(strip_wrappers)
            }
            syn::Expr::Reference(r) => self.type_of(&r.expr, scope),
            // `&*obj` of an `Arc<K>`: its wrappers are stripped.
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                self.type_of(&u.expr, scope)
            }
            syn::Expr::Paren(p) => self.type_of(&p.expr, scope),
            syn::Expr::Try(t) => self.type_of(&t.expr, scope),
            syn::Expr::Await(a) => self.type_of(&a.base, scope),
            syn::Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "clone" | "as_ref" | "to_owned" | "unwrap" | "expect"
                ) =>
            {
                self.type_of(&m.receiver, scope)
            }
            // `build_service_account(..)`: the type the crate's function of
            // that name returns.
            syn::Expr::Call(c) => {
                let syn::Expr::Path(p) = &*c.func else {
                    return None;
                };
                let name = p.path.segments.last()?.ident.to_string();
                let owners = self.owners_of_path(&p.path);
                self.index.value_fns.at(&name, owners.as_deref())?.clone()
            }
            syn::Expr::Field(f) => {
                // `self.0` of a tuple struct is its field "0".
                let name = match &f.member {
                    syn::Member::Named(name) => name.to_string(),
                    syn::Member::Unnamed(index) => index.index.to_string(),
                };
                let owner = self.type_of(&f.base, scope)?;
                let (struct_name, args) = type_name(&owner)?;
                let Some(ty) = self
                    .index
                    .field_types
                    .get(&(struct_name.clone(), name.clone()))
                else {
                    // kube-derive's `Widget` holds the `WidgetSpec` it is
                    // derived from, and its `WidgetStatus`.
                    let part = match name.as_str() {
                        "spec" => "Spec",
                        "status" => "Status",
                        _ => return None,
                    };
                    let derived = format!("{struct_name}{part}");
                    return self
                        .index
                        .structs
                        .contains(&derived)
                        .then(|| syn::parse_str(&derived).ok())
                        .flatten();
                };
                Some(strip_wrappers(&self.substitute(ty, &struct_name, &args)))
            }
            _ => None,
        }
    }

    /// `ty` written in `struct_name`'s definition, with its type parameters
    /// replaced by `args` (a `K` field of `Wrapper<Pod>` is a `Pod`).
    pub(super) fn substitute(
        &self,
        ty: &syn::Type,
        struct_name: &str,
        args: &[syn::Type],
    ) -> syn::Type {
        if let Some(params) = self.index.struct_generics.get(struct_name)
            && let syn::Type::Path(p) = ty
            && let Some(ident) = p.path.get_ident()
            && let Some(i) = params.iter().position(|g| ident == g)
            && let Some(arg) = args.get(i)
        {
            return arg.clone();
        }
        if let Some(params) = self.index.struct_generics.get(struct_name)
            && let syn::Type::Path(p) = ty
            && let Some(last) = p.path.segments.last()
            && matches!(
                last.ident.to_string().as_str(),
                "PartialObjectMeta" | "DeserializeGuard"
            )
            && let Some(syn::Type::Path(inner)) = generic_args(&last.arguments).first()
            && let Some(ident) = inner.path.get_ident()
            && let Some(i) = params.iter().position(|g| ident == g)
            && let Some(arg) = args.get(i)
        {
            let mut out = p.clone();
            if let Some(last) = out.path.segments.last_mut() {
                last.arguments = syn::PathArguments::AngleBracketed(syn::parse_quote!(<#arg>));
            }
            return syn::Type::Path(out);
        }
        ty.clone()
    }

    /// The `impl`'s struct and the place of `generic` among its type
    /// arguments, when `generic` is a type parameter of the `impl`.
    pub(super) fn owner_of(&self, generic: &syn::Ident) -> Option<(String, usize)> {
        if !self.impl_generics.iter().any(|g| generic == g) {
            return None;
        }
        let (name, args) = type_name(self.self_type.as_ref()?)?;
        let position = args.iter().position(|a| is_ident(a, generic))?;
        Some((name, position))
    }

    /// Where requests on `ty` go: a kind of the crate, or of Kubernetes.
    /// The struct whose `Api` field `field` a value of type `name<args>`
    /// reads: its own, or, through `impl Deref for Controller { type Target
    /// = Context; }`, the one it derefs to. `None` when neither declares it.
    pub(super) fn with_field(
        &self,
        name: &str,
        args: &[syn::Type],
        field: &str,
    ) -> Option<(String, Vec<syn::Type>)> {
        let candidates = self.index.fields.get(field)?;
        let (mut name, mut args) = (name.to_string(), args.to_vec());
        for _ in 0..4 {
            if candidates.iter().any(|(s, _)| *s == name) {
                return Some((name, args));
            }
            (name, args) = self
                .index
                .assoc_types
                .get(&(name, "Target".to_string()))
                .and_then(|targets| targets.first())
                .and_then(type_name)?;
        }
        None
    }

    /// The kinds of the `Api`s of the tuple a call of the crate's function
    /// returns, by position.
    pub(super) fn tuple_returned(&self, expr: &syn::Expr) -> Option<Vec<Option<syn::Type>>> {
        match expr {
            syn::Expr::Try(t) => self.tuple_returned(&t.expr),
            syn::Expr::Await(a) => self.tuple_returned(&a.base),
            syn::Expr::Paren(p) => self.tuple_returned(&p.expr),
            syn::Expr::Call(c) => {
                let syn::Expr::Path(p) = &*c.func else {
                    return None;
                };
                let name = p.path.segments.last()?.ident.to_string();
                let owners = self.owners_of_path(&p.path);
                self.index
                    .tuple_returns
                    .at(&name, owners.as_deref())
                    .cloned()
            }
            syn::Expr::MethodCall(m) => {
                self.index.tuple_returns.get(&m.method.to_string()).cloned()
            }
            _ => None,
        }
    }

    /// Whether `path` (`Controller`, `runtime::Controller`) names kube's
    /// type `name`: itself, or a rename a `use` gives it (`use
    /// kube::runtime::Controller as RuntimeController`), and not a type of
    /// the crate's of that name.
    pub(super) fn names_type(&self, path: &[syn::PathSegment], name: &str) -> bool {
        let [prefix @ .., ident] = path else {
            return false;
        };
        let ident = &ident.ident;
        // kube's, also as a framework re-exports it
        // (`stackable_operator::kube::runtime::Controller`); not the crate's
        // own (`use controller::Controller` of a sibling module, a `mod
        // kube` of its own).
        let kubes = |path: &[String]| {
            path.first()
                .is_some_and(|first| !matches!(first.as_str(), "crate" | "self" | "super"))
                && path.iter().any(|segment| segment.starts_with("kube"))
        };
        if let Some(first) = prefix.first() {
            // `runtime::Controller` after `use kube::runtime`.
            let first = first.ident.to_string();
            let mut path = self.imports.get(&first).cloned().unwrap_or(vec![first]);
            path.extend(prefix[1..].iter().map(|s| s.ident.to_string()));
            return ident == name && kubes(&path);
        }
        match self.imports.get(&ident.to_string()) {
            Some(path) => path.last().is_some_and(|last| last == name) && kubes(path),
            // Not imported: the crate's own type of the name if it has one
            // (sart's `struct Controller` beside its reconcilers).
            None => ident == name && !self.defines(name),
        }
    }

    /// Whether the file's crate defines `name`, in any of its files.
    pub(super) fn defines(&self, name: &str) -> bool {
        self.index
            .defined
            .get(&self.krate)
            .is_some_and(|names| names.contains(name))
    }

    /// Whether a kind is one of the crate's own: its object is the one a
    /// controller reconciles, which exists when the code writes it.
    /// Whether `ty` names a kind by a type of its own that rsop does not
    /// read (not a type parameter, nor kube's dynamic objects, whose kind
    /// is a value).
    pub(super) fn names_unread_type(&self, ty: &syn::Type) -> bool {
        let syn::Type::Path(p) = ty else {
            return false;
        };
        let Some(last) = p.path.segments.last() else {
            return false;
        };
        let parameter = type_parameter(ty).is_some_and(|t| {
            self.generics
                .iter()
                .chain(&self.impl_generics)
                .any(|g| t == g)
                || self.in_trait.as_ref().is_some_and(|name| {
                    self.index
                        .trait_generics
                        .get(name)
                        .is_some_and(|g| g.iter().any(|g| t == g))
                })
        });
        // `T::Kind` of a type parameter, or a type the crate defines, is a
        // kind the code does not show, not one nothing declares.
        let associated = p.path.segments.len() > 1
            && self.generics.iter().any(|g| p.path.segments[0].ident == g);
        !parameter
            && !associated
            && !self.defines(&last.ident.to_string())
            && !matches!(
                last.ident.to_string().as_str(),
                "DynamicObject" | "Object" | "Self"
            )
    }

    /// The kind rustc infers for a generic function's `Api` the call names
    /// none of (`self.get_api(ns).get(name)` in `fn get<T>`): in a function
    /// with one type parameter, or one bound by `Resource` (`patch<T, P>`
    /// of a patch of any type), that one, the only kind its callers give.
    fn only_type_parameter(&self) -> Option<syn::Type> {
        let own: Vec<&String> = self
            .generics
            .iter()
            .filter(|g| !self.impl_generics.contains(g))
            .collect();
        let only = match (own.as_slice(), self.resource_generics.as_slice()) {
            ([only], _) => only.as_str(),
            (_, [only]) => only.as_str(),
            _ => return None,
        };
        syn::parse_str(only).ok()
    }

    pub(super) fn is_own(&self, group: &str, plural: &str) -> bool {
        self.own
            .iter()
            .any(|k| !k.foreign && k.group == group && k.plural == plural)
    }

    pub(super) fn target(&self, ty: &syn::Type) -> Option<Target> {
        let syn::Type::Path(p) = ty else {
            return None;
        };
        let last = p.path.segments.last()?;
        let name = last.ident.to_string();
        // `Api::<Self>` in an inherent `impl` of a kind.
        if p.path.is_ident("Self")
            && let Some(own) = &self.self_type
            && !matches!(own, syn::Type::Path(o) if o.path.is_ident("Self"))
        {
            return self.target(&own.clone());
        }
        // `Api<Self::Resource>`: the associated type the `impl` sets, or in
        // a trait's provided method, the one every `impl` of it sets.
        if let [first, assoc] = p.path.segments.iter().collect::<Vec<_>>().as_slice()
            && first.ident == "Self"
        {
            let assoc = assoc.ident.to_string();
            let owner = match (&self.self_type, &self.in_trait) {
                (Some(own), _) => type_name(own)?.0,
                (None, Some(name)) => name.clone(),
                (None, None) => return None,
            };
            let set = self.index.assoc_types.get(&(owner, assoc))?;
            return match set.as_slice() {
                [ty, rest @ ..] if rest.iter().all(|t| t == ty) => self.target(&ty.clone()),
                _ => None,
            };
        }
        // Metadata-only objects, and objects that may fail to deserialize,
        // are requests on the kind they wrap.
        if matches!(name.as_str(), "PartialObjectMeta" | "DeserializeGuard")
            && let Some(inner) = generic_args(&last.arguments).first()
        {
            return self.target(inner);
        }
        let written: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let full = if written.len() == 1 {
            self.imports.get(&name).cloned().unwrap_or(written)
        } else {
            written
        };
        if full.first().is_some_and(|f| f == "k8s_openapi") {
            return k8s_target(&full);
        }
        // The Gateway API's kinds, from the `gateway-api` crate, whose
        // sources cargo may not have downloaded.
        if full.first().is_some_and(|f| f == "gateway_api")
            && let Some(kind) = full.last()
            && let Some((_, plural, namespaced)) = GATEWAY_KINDS.iter().find(|(k, _, _)| k == kind)
        {
            return Some(Target {
                group: "gateway.networking.k8s.io".into(),
                plural: (*plural).to_string(),
                namespaced: *namespaced,
            });
        }
        // `use crate::api::Widget as W`: the kind is `Widget`.
        let name = full.last().cloned().unwrap_or(name);
        if let Some(own) = best_kind(self.own, &full, Some(self.path))
            // A kind only a CRD file names stands for a type rsop cannot
            // read, never for Kubernetes' kind of that name (Knative's
            // `Service` beside `core/v1`'s).
            && !(own.foreign && kubernetes_kind(&name).is_some())
        {
            return Some(Target {
                group: own.group.clone(),
                plural: own.plural.clone(),
                namespaced: own.namespaced,
            });
        }
        // Kinds of the crate's that the path does not tell apart: not
        // Kubernetes' kind of that name either.
        if self
            .own
            .iter()
            .any(|k| k.type_name() == name && !(k.foreign && kubernetes_kind(&name).is_some()))
        {
            return None;
        }
        kubernetes_kind(&name)
    }

    pub(super) fn location(&self, node: &impl Spanned) -> Location {
        let start = node.span().start();
        Location::new(self.path, start.line, start.column + 1)
    }
}
