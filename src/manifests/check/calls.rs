//! The Kubernetes requests the crate's code can make, found in its sources:
//! every kube-rs call whose kind the types show, as the verb, group and
//! resource the API server authorizes it by, at its file and line.
//!
//! kube-rs calls are typed: an `Api<K>` names its kind, and each of its
//! methods is one request (`patch_status` is a `patch` on `<plural>/status`).
//! The kind of an `Api` value is read from its constructor's turbofish, a
//! `let` annotation, a function parameter or a struct field typed `Api<K>`,
//! a function of the crate that returns one (`ctx.api::<K>()`), or, for an
//! `Api::namespaced(..)` with no turbofish, the parameter it is passed to.
//! A call whose kind none of these shows is reported as not checked, never
//! guessed. Test code (`#[cfg(test)]`, `#[test]`) makes no request of the
//! operator's and is skipped.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::manifests::derive::schema::generic_args;
use crate::manifests::diagnostics::Location;
use crate::manifests::read::modules::BuildConfig;
use crate::project::{k8s_kinds, names};

/// One request the code makes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Call {
    /// The API group, `""` for the core group.
    pub group: String,
    /// The resource, with its subresource (`deployments/status`).
    pub resource: String,
    pub verb: &'static str,
    /// Made through `Api::all` on a namespaced kind, or on a cluster-scoped
    /// kind: it needs a `ClusterRole`.
    pub cluster: bool,
    /// Made in the namespace of each object it is about (a `Recorder`'s
    /// events): in a project that watches the whole cluster, any
    /// namespace, which a `Role` in the manager's own cannot grant.
    pub objects_namespace: bool,
    pub location: Location,
    /// The function the request is made in (a generic function's, for the
    /// kinds its callers give it): which binaries make it follows from who
    /// calls that function.
    pub function: String,
    /// What the source calls (`api.patch_status`), for messages.
    pub via: String,
    /// The request is sent only in some cases the code cannot show: the
    /// `create` of a server-side apply, which the API server authorizes
    /// only when the object does not exist yet. A rule may grant it; none
    /// has to.
    pub optional: bool,
    /// Made with a client of another cluster (built from a kubeconfig the
    /// code reads), which the operator's role does not govern.
    pub remote: bool,
    /// A generic function's request made with the kind one caller gives:
    /// that call's place and the function it is in, which decide whether a
    /// program makes it.
    pub site: Option<(Location, String)>,
    /// Made in code a normal build leaves out: the `cfg` predicate that
    /// does not hold (`feature = "gateway"`, a feature off by default).
    pub gated: Option<String>,
    /// The calls of the generic functions between the request and `site`,
    /// which a `cfg` may leave out too.
    pub through: Vec<Location>,
}

/// A call whose kind the sources do not show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unchecked {
    pub location: Location,
    /// The function the call is in.
    pub function: String,
    pub via: String,
    /// As [`Call::gated`].
    pub gated: Option<String>,
}

/// What the analysis found.
#[derive(Debug, Default)]
pub struct Analysis {
    pub calls: Vec<Call>,
    pub unchecked: Vec<Unchecked>,
}

/// A kind of the crate's own, from the CRD derivation.
#[derive(Debug, Clone)]
pub struct OwnKind {
    pub kind: String,
    pub group: String,
    pub plural: String,
    pub namespaced: bool,
    /// The name of the Rust type when `#[kube(root = "..")]` gives it one
    /// other than the kind's.
    pub root: Option<String>,
    /// The file that declares it, to tell apart kinds of the same name
    /// (cluster-api's `Cluster` and Fleet's) by the path the code names.
    pub declared_in: Option<std::path::PathBuf>,
}

impl OwnKind {
    /// The name the crate's code calls the kind by.
    fn type_name(&self) -> &str {
        self.root.as_deref().unwrap_or(&self.kind)
    }
}

/// Where a kind's requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    group: String,
    plural: String,
    namespaced: bool,
}

/// The kind of an `Api` value, as far as the sources show it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ApiKind {
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

/// The request methods of `Api<K>`: name -> (verbs, subresource).
pub(crate) fn method_requests(
    method: &str,
) -> Option<(&'static [&'static str], Option<&'static str>)> {
    Some(match method {
        "get" | "get_opt" | "get_metadata" | "get_metadata_opt" => (&["get"], None),
        "list" | "list_metadata" => (&["list"], None),
        "watch" | "watch_metadata" => (&["watch"], None),
        "create" => (&["create"], None),
        "replace" => (&["update"], None),
        "patch" | "patch_metadata" => (&["patch"], None),
        "delete" => (&["delete"], None),
        "delete_collection" => (&["deletecollection"], None),
        "get_status" => (&["get"], Some("status")),
        "patch_status" => (&["patch"], Some("status")),
        "replace_status" => (&["update"], Some("status")),
        "get_scale" => (&["get"], Some("scale")),
        "patch_scale" => (&["patch"], Some("scale")),
        "replace_scale" => (&["update"], Some("scale")),
        "evict" => (&["create"], Some("eviction")),
        "logs" | "log_stream" => (&["get"], Some("log")),
        "exec" => (&["create"], Some("exec")),
        "attach" => (&["create"], Some("attach")),
        "portforward" => (&["create"], Some("portforward")),
        // `Entry::commit` creates a missing object and replaces one found.
        "entry" => (&["get", "create", "update"], None),
        _ => return None,
    })
}

/// The verbs of a watch: the initial list and the watch.
const WATCH: &[&str] = &["list", "watch"];

/// The requests of the crate in `files` (path relative to the project root,
/// text); `own` are the crate's kinds.
pub fn analyze(files: &[(&Path, &str)], own: &[OwnKind]) -> Analysis {
    let files: Vec<CrateFile<'_>> = files.iter().map(|(p, t)| (*p, *t, None)).collect();
    analyze_when(&files, &[], || Some(own.to_vec())).unwrap_or_default()
}

/// A file of the crate: its path relative to the project root, its text,
/// and what a normal build of its package enables (`None`: every `#[cfg]`
/// is taken to hold).
pub type CrateFile<'a> = (&'a Path, &'a str, Option<&'a BuildConfig>);

/// [`analyze`], with the crate's kinds given by `own` once they are known:
/// the files are parsed (the costly part) before `own` is asked for, so
/// that the parse can run beside the derivation that finds the kinds.
/// `None` from `own`: the analysis is not wanted after all.
///
/// `kind_files` are read for the kinds they declare only: the sibling
/// crates a kind of the requests may come from.
pub fn analyze_when(
    files: &[CrateFile<'_>],
    kind_files: &[(&Path, &str)],
    own: impl FnOnce() -> Option<Vec<OwnKind>>,
) -> Option<Analysis> {
    fn parse<'p>(path: &'p Path, text: &str) -> Option<(&'p Path, syn::File)> {
        without_tests(text).map(|f| (path, f))
    }
    let mut parsed: Vec<(&Path, syn::File)> = files
        .iter()
        .filter(|(_, text, _)| mentions_kube(text))
        .filter_map(|(path, text, _)| parse(path, text))
        .collect();
    let mut index = Index::default();
    for (_, file) in &parsed {
        index.collect(file);
    }
    // A file that names no `Api` can still call the crate's functions that
    // return one (`let nodes = helpers::nodes(client); nodes.list(..)`).
    let helpers: Vec<String> = index
        .returns
        .keys()
        .map(|name| format!("{name}("))
        .collect();
    let more: Vec<(&Path, syn::File)> = files
        .iter()
        .filter(|(path, text, _)| {
            !parsed.iter().any(|(p, _)| p == path)
                && helpers.iter().any(|call| text.contains(call.as_str()))
        })
        .filter_map(|(path, text, _)| parse(path, text))
        .collect();
    parsed.extend(more);
    spread_remote_fns(&mut index);
    index.consts = string_consts(
        files
            .iter()
            .map(|(_, t, _)| *t)
            .filter(|t| t.contains("const ")),
    );
    let empty = HashMap::new();
    let no_functions = HashMap::new();
    for (name, body) in std::mem::take(&mut index.resource_fns) {
        let known = Known {
            vars: &empty,
            consts: &index.consts,
            functions: &no_functions,
        };
        let literal = literal_parts(
            [&syn::Expr::Block(syn::ExprBlock {
                attrs: Vec::new(),
                label: None,
                block: body,
            })],
            &known,
        );
        if literal.group.is_some() && literal.kind.is_some() {
            index.literal_fns.insert(name, literal);
        }
    }
    find_remote_params(&parsed, &mut index);
    // Kinds the crate uses but does not own (`src/external/`, kopium's) are
    // declared with `#[kube(..)]` too; the CRD derivation's own come first.
    let mut own = own()?;
    let texts = files
        .iter()
        .map(|(p, t, _)| (*p, *t))
        .chain(kind_files.iter().copied());
    let mut inherits = Vec::new();
    for (path, text) in texts {
        let mut kinds = if text.contains("#[kube(") {
            declared_kinds(text)
        } else {
            Vec::new()
        };
        if text.contains("Resource for ") {
            kinds.extend(implemented_kinds(text));
        }
        if text.contains("#[resource(") {
            inherits.extend(inherited_kinds(text).into_iter().map(|(s, p)| (s, p, path)));
        }
        for mut kind in kinds {
            kind.declared_in = Some(path.to_path_buf());
            // The CRD derivation's kinds (no file) name the kind, not its type.
            match own.iter_mut().find(|o| {
                o.kind == kind.kind
                    && o.group == kind.group
                    && (o.declared_in.is_none() || o.type_name() == kind.type_name())
            }) {
                // The CRD derivation names the kind, not its Rust type or file.
                Some(known) => {
                    known.root = known.root.take().or(kind.root);
                    known.declared_in = known.declared_in.take().or(kind.declared_in);
                }
                None => own.push(kind),
            }
        }
    }
    // `#[derive(Resource)] #[resource(inherit = other::Kind)]`: a type of
    // the crate's that is requested as the kind it inherits.
    for (name, path, file) in inherits {
        let builtin = || {
            let kind = path.last()?;
            let target = kubernetes_kind(kind)?;
            Some(OwnKind {
                kind: kind.clone(),
                group: target.group,
                plural: target.plural,
                namespaced: target.namespaced,
                root: None,
                declared_in: None,
            })
        };
        if let Some(kind) = best_kind(&own, &path, None).cloned().or_else(builtin) {
            let mut kind = kind;
            kind.root = (name != kind.kind).then_some(name);
            kind.declared_in = Some(file.to_path_buf());
            own.push(kind);
        }
    }
    let own = own.as_slice();
    let mut analysis = Analysis::default();
    let mut deferred = Vec::new();
    for (path, file) in &parsed {
        let imports = imports(file);
        let mut walker = FileWalker {
            path,
            index: &index,
            own,
            imports: &imports,
            analysis: &mut analysis,
            function: String::new(),
            generics: Vec::new(),
            self_type: None,
            impl_generics: Vec::new(),
            deferred: &mut deferred,
            instantiate: None,
            runtime: uses_runtime(&imports),
        };
        walker.visit_file(file);
    }
    // The requests of generic functions, with the kinds their callers give.
    // A generic caller that passes on its own type parameter makes them
    // its own requests, for its callers in the next round.
    if !deferred.is_empty() {
        let calls_before = analysis.calls.len();
        let mut round = deferred.clone();
        let mut seen: HashSet<(String, String, PathBufLine)> = HashSet::new();
        for _ in 0..GENERIC_DEPTH {
            if round.is_empty() {
                break;
            }
            let mut by_function: HashMap<String, Vec<Deferred>> = HashMap::new();
            for d in round {
                by_function.entry(d.function.clone()).or_default().push(d);
            }
            let mut lifted = Vec::new();
            for (path, file) in &parsed {
                let imports = imports(file);
                let mut walker = FileWalker {
                    path,
                    index: &index,
                    own,
                    imports: &imports,
                    analysis: &mut analysis,
                    function: String::new(),
                    generics: Vec::new(),
                    self_type: None,
                    impl_generics: Vec::new(),
                    deferred: &mut lifted,
                    instantiate: Some(&by_function),
                    runtime: uses_runtime(&imports),
                };
                walker.visit_file(file);
            }
            round = lifted
                .into_iter()
                .filter(|d| {
                    let at = (d.location.file.clone(), d.location.line, d.location.column);
                    seen.insert((d.function.clone(), d.generic.clone(), at))
                })
                .collect();
        }
        // A generic function no caller gives a kind is not checked; one that
        // nothing calls makes no request.
        let instantiated: Vec<Location> = analysis.calls[calls_before..]
            .iter()
            .map(|c| c.location.clone())
            .collect();
        let mut called = None;
        for d in deferred {
            if instantiated.contains(&d.location) {
                continue;
            }
            let called =
                called.get_or_insert_with(|| called_names(parsed.iter().map(|(_, file)| file)));
            if called.contains(&d.function) {
                analysis.unchecked.push(Unchecked {
                    location: d.location,
                    function: d.function,
                    via: d.via,
                    gated: None,
                });
            }
        }
    }
    // What a normal build leaves out is marked, not dropped: a rule may
    // grant it for the builds that enable it.
    let gates: HashMap<&Path, Vec<(usize, usize, String)>> = files
        .iter()
        .filter_map(|(path, _, config)| {
            let config = (*config)?;
            let (_, file) = parsed.iter().find(|(p, _)| p == path)?;
            let spans = config.disabled_spans(file);
            (!spans.is_empty()).then_some((*path, spans))
        })
        .collect();
    let gate = |at: &Location| {
        gates.get(at.file.as_path()).and_then(|spans| {
            spans
                .iter()
                .find(|(from, to, _)| (*from..=*to).contains(&at.line))
                .map(|(_, _, predicate)| predicate.clone())
        })
    };
    if !gates.is_empty() {
        for call in &mut analysis.calls {
            call.gated = gate(&call.location)
                .or_else(|| call.site.as_ref().and_then(|(at, _)| gate(at)))
                .or_else(|| call.through.iter().find_map(gate));
        }
        for unchecked in &mut analysis.unchecked {
            unchecked.gated = gate(&unchecked.location);
        }
    }
    analysis.calls.sort();
    analysis.calls.dedup();
    Some(analysis)
}

/// The kinds a file declares with `#[kube(..)]`, each attribute read alone
/// (a kopium file can run to megabytes: it is not parsed whole for this) by
/// the CRD derivation's own attribute parser; the plural defaults as there.
fn declared_kinds(text: &str) -> Vec<OwnKind> {
    // Each item's `#[kube(..)]` attributes, which may be several
    // (`#[kube(group = ..)]` then `#[kube(namespaced)]`).
    let mut items: Vec<Vec<&str>> = Vec::new();
    let mut rest = text;
    let mut gap_ends_item = true;
    while let Some(start) = rest.find("#[kube(") {
        let gap = &rest[..start];
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
fn lenient_kind(attrs: &[syn::Attribute]) -> Option<OwnKind> {
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
    })
}

/// The structs of a file that `#[derive(Resource)]` with
/// `#[resource(inherit = path::Kind)]`, each with the path it inherits.
fn inherited_kinds(text: &str) -> Vec<(String, Vec<String>)> {
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
fn best_kind<'k>(own: &'k [OwnKind], path: &[String], from: Option<&Path>) -> Option<&'k OwnKind> {
    let name = path.last()?;
    let candidates: Vec<&OwnKind> = own.iter().filter(|k| k.type_name() == name).collect();
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
fn path_words(path: &Path) -> Vec<String> {
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
fn implemented_kinds(text: &str) -> Vec<OwnKind> {
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

/// The file parsed without its `#[cfg(test)] mod ..` modules: they make no
/// request of the operator's, and in a scaffolded controller they are half
/// the text. The tokens are read once; only the others are parsed.
fn without_tests(text: &str) -> Option<syn::File> {
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

/// Whether a file can make a request at all: it names kube's API types or
/// the functions that take them.
fn mentions_kube(text: &str) -> bool {
    [
        "Api<",
        "Api::",
        "api::<",
        "Controller::new",
        "watcher(",
        "Recorder::new",
        "finalizer(",
        "controller_owner_ref(",
        // A function that returns the `ApiResource` a dynamic `Api` is of.
        "-> ApiResource",
        "-> GroupVersionKind",
        // rsop-runtime's manager and reconciler.
        "rsop_runtime",
    ]
    .iter()
    .any(|needle| text.contains(needle))
}

/// The crate-wide facts the walk needs: functions that return an `Api`,
/// functions' parameters typed `Api<K>`, and struct fields typed `Api<K>`.
#[derive(Debug, Default)]
struct Index {
    /// Function name -> the `K` it returns an `Api` of (`None`: generic, read
    /// from the call's turbofish), and whether it is made with `Api::all`.
    returns: HashMap<String, (Option<syn::Type>, Option<bool>)>,
    /// Function name -> the `K` of each parameter typed `Api<K>`, by position
    /// (a method's `self` left out).
    params: HashMap<String, Vec<Option<syn::Type>>>,
    /// Generic function -> its type parameters in order, and for each of
    /// its parameters the type parameter it is a value of (`obj: &T`,
    /// `obj: Arc<T>`), for the kinds its callers' values have.
    generic_values: HashMap<String, (Vec<String>, Vec<Option<String>>)>,
    /// Field name -> each struct with a field of that name typed `Api<K>`,
    /// and its `K`: the struct an expression's value is decides which.
    fields: HashMap<String, Vec<(String, syn::Type)>>,
    /// (struct, field) -> the field's type, for the value of `self.ctx.api`.
    field_types: HashMap<(String, String), syn::Type>,
    /// Struct -> its type parameters, to give a generic struct's `Api<K>`
    /// field the kind its type names (`Wrapper<Pod>`).
    struct_generics: HashMap<String, Vec<String>>,
    /// Functions that return a client of another cluster: one built from a
    /// kubeconfig the code reads.
    remote_fns: HashSet<String>,
    /// Function -> the places of its parameters typed `Client`.
    client_params: HashMap<String, Vec<usize>>,
    /// (function, place) of the `Client` parameters every caller passes a
    /// client of another cluster.
    remote_params: HashSet<(String, usize)>,
    /// The bodies of the other functions that return a `Client`: one that
    /// calls a function of `remote_fns` joins them.
    client_fns: Vec<(String, syn::Block)>,
    /// The crate's string constants.
    consts: HashMap<String, String>,
    /// Functions that return an `ApiResource` or `GroupVersionKind` made of
    /// literals, and what they return.
    literal_fns: HashMap<String, Literal>,
    /// The bodies of functions that return an `ApiResource` or
    /// `GroupVersionKind`, read once the constants are known.
    resource_fns: Vec<(String, syn::Block)>,
    /// Function -> the type of the value it returns, for the kind of
    /// `let sa = build_service_account(..)` a generic function is given;
    /// `None` when functions of that name return different types.
    value_fns: HashMap<String, Option<syn::Type>>,
}

impl Index {
    fn collect(&mut self, file: &syn::File) {
        /// The index, and the type parameters of the `impl` being read.
        struct Collector<'a>(&'a mut Index, Vec<syn::Ident>);
        impl<'ast> Visit<'ast> for Collector<'_> {
            fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
                let outer = std::mem::replace(
                    &mut self.1,
                    item.generics
                        .type_params()
                        .map(|p| p.ident.clone())
                        .collect(),
                );
                syn::visit::visit_item_impl(self, item);
                self.1 = outer;
            }
            fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
                if !is_test(&m.attrs) {
                    syn::visit::visit_item_mod(self, m);
                }
            }
            fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
                if !is_test(&f.attrs) {
                    self.0.signature(&f.sig, Some(&f.block));
                    syn::visit::visit_item_fn(self, f);
                }
            }
            fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
                if !is_test(&f.attrs) {
                    self.0.signature_in(&f.sig, Some(&f.block), &self.1);
                    syn::visit::visit_impl_item_fn(self, f);
                }
            }
            fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
                if !is_test(&f.attrs) {
                    self.0.signature(&f.sig, f.default.as_ref());
                    syn::visit::visit_trait_item_fn(self, f);
                }
            }
            fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
                let owner = item.ident.to_string();
                let generics: Vec<String> = item
                    .generics
                    .type_params()
                    .map(|p| p.ident.to_string())
                    .collect();
                if !generics.is_empty() {
                    self.0.struct_generics.insert(owner.clone(), generics);
                }
                for field in &item.fields {
                    let Some(name) = &field.ident else { continue };
                    let name = name.to_string();
                    if let Some(kind) = api_type(&field.ty) {
                        let entry = self.0.fields.entry(name.clone()).or_default();
                        if !entry.iter().any(|(o, _)| *o == owner) {
                            entry.push((owner.clone(), kind));
                        }
                    }
                    self.0
                        .field_types
                        .insert((owner.clone(), name), field.ty.clone());
                }
                syn::visit::visit_item_struct(self, item);
            }
        }
        Collector(self, Vec::new()).visit_file(file);
    }

    fn signature(&mut self, sig: &syn::Signature, body: Option<&syn::Block>) {
        self.signature_in(sig, body, &[]);
    }

    /// A function's signature, read in an `impl` with the type parameters
    /// `impl_generics`.
    fn signature_in(
        &mut self,
        sig: &syn::Signature,
        body: Option<&syn::Block>,
        impl_generics: &[syn::Ident],
    ) {
        let name = sig.ident.to_string();
        let generics: Vec<String> = sig
            .generics
            .type_params()
            .map(|p| p.ident.to_string())
            .collect();
        if !generics.is_empty() {
            let values: Vec<Option<String>> = sig
                .inputs
                .iter()
                .filter_map(|arg| match arg {
                    syn::FnArg::Typed(t) => Some(match strip_wrappers(&t.ty) {
                        syn::Type::Path(p) => p
                            .path
                            .get_ident()
                            .map(ToString::to_string)
                            .filter(|i| generics.contains(i)),
                        _ => None,
                    }),
                    syn::FnArg::Receiver(_) => None,
                })
                .collect();
            self.generic_values.insert(name.clone(), (generics, values));
        }
        if let syn::ReturnType::Type(_, ty) = &sig.output {
            let value = strip_wrappers(unwrap_result(ty));
            let generic = sig.generics.type_params().any(|p| {
                quote::ToTokens::to_token_stream(&value)
                    .into_iter()
                    .any(|t| matches!(&t, proc_macro2::TokenTree::Ident(i) if *i == p.ident))
            });
            if matches!(&value, syn::Type::Path(p) if p.qself.is_none()) && !generic {
                self.value_fns
                    .entry(name.clone())
                    .and_modify(|known| {
                        if known.as_ref() != Some(&value) {
                            *known = None;
                        }
                    })
                    .or_insert(Some(value));
            }
        }
        let clients: Vec<usize> = sig
            .inputs
            .iter()
            .filter(|arg| matches!(arg, syn::FnArg::Typed(_)))
            .enumerate()
            .filter_map(|(i, arg)| match arg {
                syn::FnArg::Typed(t) if is_client_type(&t.ty) => Some(i),
                _ => None,
            })
            .collect();
        if !clients.is_empty() {
            self.client_params.insert(name.clone(), clients);
        }
        if let syn::ReturnType::Type(_, ty) = &sig.output
            && let syn::Type::Path(p) = unwrap_result(ty)
            && p.path
                .segments
                .last()
                .is_some_and(|s| s.ident == "ApiResource" || s.ident == "GroupVersionKind")
            && let Some(body) = body
        {
            self.resource_fns.push((name.clone(), body.clone()));
        }
        if let syn::ReturnType::Type(_, ty) = &sig.output
            && is_client_type(unwrap_result(ty))
            && let Some(body) = body
        {
            if mentions_remote(body, &HashSet::new(), &HashSet::new()) {
                self.remote_fns.insert(name.clone());
            } else {
                self.client_fns.push((name.clone(), body.clone()));
            }
        }
        let params: Vec<Option<syn::Type>> = sig
            .inputs
            .iter()
            .filter_map(|arg| match arg {
                syn::FnArg::Typed(t) => Some(api_type(&t.ty)),
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        if params.iter().any(Option::is_some) {
            self.params.insert(name.clone(), params);
        }
        if let syn::ReturnType::Type(_, ty) = &sig.output
            && let Some(kind) = api_type(unwrap_result(ty))
        {
            let generic = sig
                .generics
                .type_params()
                .any(|p| is_ident(&kind, &p.ident));
            let cluster = body.and_then(constructor_scope);
            // A trait's `fn get_api() -> Api<Self>` says most of the kind;
            // another trait's method of the same name that returns an
            // associated type does not replace it.
            let says_less = |k: &syn::Type| {
                matches!(k, syn::Type::Path(p) if p.path.segments.len() > 1
                    && p.path.segments[0].ident == "Self")
            };
            // `impl<K> Helper for (K, Scope) { fn get_api() -> Api<K> }`:
            // the kind is the `impl`'s parameter, which a call does not name.
            let of_impl = impl_generics.iter().any(|g| is_ident(&kind, g));
            let keep = self.returns.get(&name).is_some_and(|(k, _)| {
                k.as_ref().is_some_and(is_self) && (says_less(&kind) || of_impl)
            });
            if !keep {
                self.returns.insert(
                    name,
                    (if generic || of_impl { None } else { Some(kind) }, cluster),
                );
            }
        }
    }
}

/// `Self`.
fn is_self(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self"))
}

/// `Client`, `&Client`, `kube::Client`.
fn is_client_type(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Reference(r) => is_client_type(&r.elem),
        syn::Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Client"),
        _ => false,
    }
}

/// Whether code builds a client of another cluster: it reads a kubeconfig
/// (`Config::from_custom_kubeconfig`, `Kubeconfig::from_yaml`, ..), calls a
/// function of `remote_fns`, or uses a variable of `remote_vars`.
fn mentions_remote(
    node: &syn::Block,
    remote_fns: &HashSet<String>,
    remote_vars: &HashSet<String>,
) -> bool {
    let mut finder = RemoteFinder {
        remote_fns,
        remote_vars,
        found: false,
    };
    finder.visit_block(node);
    finder.found
}

/// [`mentions_remote`] of one expression.
fn expr_mentions_remote(
    expr: &syn::Expr,
    remote_fns: &HashSet<String>,
    remote_vars: &HashSet<String>,
) -> bool {
    let mut finder = RemoteFinder {
        remote_fns,
        remote_vars,
        found: false,
    };
    finder.visit_expr(expr);
    finder.found
}

struct RemoteFinder<'a> {
    remote_fns: &'a HashSet<String>,
    remote_vars: &'a HashSet<String>,
    found: bool,
}

impl<'ast> Visit<'ast> for RemoteFinder<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let last = names.last().map(String::as_str).unwrap_or_default();
        let kubeconfig = names.iter().any(|n| n == "Kubeconfig")
            && matches!(last, "read_from" | "from_yaml" | "read");
        if kubeconfig
            || matches!(last, "from_custom_kubeconfig" | "from_kubeconfig")
            || self.remote_fns.contains(last)
            || (names.len() == 1 && self.remote_vars.contains(last))
        {
            self.found = true;
        }
        syn::visit::visit_path(self, path);
    }
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        if self.remote_fns.contains(&call.method.to_string()) {
            self.found = true;
        }
        syn::visit::visit_expr_method_call(self, call);
    }
}

/// The variables of a function that hold a client of another cluster:
/// its parameters every caller gives one (`params`), and the `let`s whose
/// value is built from a kubeconfig or from such a variable.
fn remote_locals(block: &syn::Block, index: &Index, params: HashSet<String>) -> HashSet<String> {
    struct Locals<'i> {
        index: &'i Index,
        vars: HashSet<String>,
    }
    impl<'ast> Visit<'ast> for Locals<'_> {
        fn visit_local(&mut self, local: &'ast syn::Local) {
            let name = match &local.pat {
                syn::Pat::Ident(i) => Some(i.ident.to_string()),
                syn::Pat::Type(t) => match &*t.pat {
                    syn::Pat::Ident(i) => Some(i.ident.to_string()),
                    _ => None,
                },
                _ => None,
            };
            if let (Some(name), Some(init)) = (name, &local.init) {
                // An `Api` is tracked apart; a client is what is made here.
                if api_constructor_call(&init.expr).is_none()
                    && expr_mentions_remote(&init.expr, &self.index.remote_fns, &self.vars)
                {
                    self.vars.insert(name);
                }
            }
            syn::visit::visit_local(self, local);
        }
    }
    // Most functions build no client at all.
    if params.is_empty() && !mentions_remote(block, &index.remote_fns, &HashSet::new()) {
        return params;
    }
    let mut locals = Locals {
        index,
        vars: params,
    };
    locals.visit_block(block);
    locals.vars
}

/// An `Api::namespaced(client, ..)` call (behind `?` and the like), and
/// the client it is given.
fn api_constructor_call(expr: &syn::Expr) -> Option<&syn::Expr> {
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

/// Adds to the remote functions those that return what one gives.
fn spread_remote_fns(index: &mut Index) {
    // A function that returns what a remote function gives is remote too.
    loop {
        let found: Vec<String> = index
            .client_fns
            .iter()
            .filter(|(name, body)| {
                !index.remote_fns.contains(name)
                    && mentions_remote(body, &index.remote_fns, &HashSet::new())
            })
            .map(|(name, _)| name.clone())
            .collect();
        if found.is_empty() {
            break;
        }
        index.remote_fns.extend(found);
    }
}

/// The `Client` parameters every caller passes a client of another
/// cluster, found over `files` (two rounds, so that such a client passed
/// on once more is followed too).
fn find_remote_params(files: &[(&Path, syn::File)], index: &mut Index) {
    struct Votes<'i> {
        index: &'i Index,
        function: String,
        remote: HashSet<String>,
        tally: &'i mut HashMap<(String, usize), (usize, usize)>,
    }
    impl Votes<'_> {
        fn function(&mut self, sig: &syn::Signature, block: &syn::Block) {
            let name = sig.ident.to_string();
            let params: HashSet<String> = sig
                .inputs
                .iter()
                .filter(|arg| matches!(arg, syn::FnArg::Typed(_)))
                .enumerate()
                .filter_map(|(i, arg)| match arg {
                    syn::FnArg::Typed(t) => match &*t.pat {
                        syn::Pat::Ident(p)
                            if self.index.remote_params.contains(&(name.clone(), i)) =>
                        {
                            Some(p.ident.to_string())
                        }
                        _ => None,
                    },
                    syn::FnArg::Receiver(_) => None,
                })
                .collect();
            self.remote = remote_locals(block, self.index, params);
            self.function = name;
            self.visit_block(block);
        }
        fn vote(
            &mut self,
            callee: &str,
            args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
        ) {
            let Some(places) = self.index.client_params.get(callee) else {
                return;
            };
            for &i in places {
                let Some(arg) = args.iter().nth(i) else {
                    continue;
                };
                let remote = variable(arg).is_some_and(|v| self.remote.contains(&v));
                let entry = self.tally.entry((callee.to_string(), i)).or_default();
                if remote {
                    entry.0 += 1;
                } else {
                    entry.1 += 1;
                }
            }
        }
    }
    impl<'ast> Visit<'ast> for Votes<'_> {
        fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
            if !is_test(&f.attrs) {
                self.function(&f.sig, &f.block);
            }
        }
        fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
            if !is_test(&f.attrs) {
                self.function(&f.sig, &f.block);
            }
        }
        fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
            if !is_test(&m.attrs) {
                syn::visit::visit_item_mod(self, m);
            }
        }
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = &*call.func
                && let Some(last) = p.path.segments.last()
            {
                self.vote(&last.ident.to_string(), &call.args);
            }
            syn::visit::visit_expr_call(self, call);
        }
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            self.vote(&call.method.to_string(), &call.args);
            syn::visit::visit_expr_method_call(self, call);
        }
    }
    if index.remote_fns.is_empty()
        && !files.iter().any(|(_, f)| {
            let mut finder = RemoteFinder {
                remote_fns: &index.remote_fns,
                remote_vars: &HashSet::new(),
                found: false,
            };
            finder.visit_file(f);
            finder.found
        })
    {
        return;
    }
    for _ in 0..2 {
        let mut votes = HashMap::new();
        for (_, file) in files {
            let mut walk = Votes {
                index,
                function: String::new(),
                remote: HashSet::new(),
                tally: &mut votes,
            };
            walk.visit_file(file);
        }
        index.remote_params = votes
            .into_iter()
            .filter(|(_, (remote, local))| *remote > 0 && *local == 0)
            .map(|(key, _)| key)
            .collect();
    }
}

/// The expressions of a macro whose body is a comma-separated list of
/// them (`tokio::join!(a, b)`, `vec![..]`, `format!(..)`), which syn leaves
/// as tokens.
fn macro_exprs(mac: &syn::Macro) -> Option<syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>> {
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
fn unwrap_result(ty: &syn::Type) -> &syn::Type {
    if let syn::Type::Path(p) = ty
        && let Some(last) = p.path.segments.last()
        && matches!(last.ident.to_string().as_str(), "Result" | "Option")
        && let Some(inner) = generic_args(&last.arguments).first()
    {
        return inner;
    }
    ty
}

/// `K` of `Api<K>`, `&Api<K>`, `kube::Api<K>`.
fn api_type(ty: &syn::Type) -> Option<syn::Type> {
    match ty {
        syn::Type::Reference(r) => api_type(&r.elem),
        syn::Type::Path(p) => {
            let last = p.path.segments.last()?;
            if last.ident != "Api" {
                return None;
            }
            generic_args(&last.arguments).first().map(|t| (*t).clone())
        }
        _ => None,
    }
}

/// The name of every function and method the files call, outside tests.
fn called_names<'f>(files: impl Iterator<Item = &'f syn::File>) -> HashSet<String> {
    struct Calls(HashSet<String>);
    impl<'ast> Visit<'ast> for Calls {
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            for expr in macro_exprs(mac).iter().flatten() {
                self.visit_expr(expr);
            }
        }
        fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
            if !is_test(&m.attrs) {
                syn::visit::visit_item_mod(self, m);
            }
        }
        fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
            if !is_test(&f.attrs) {
                syn::visit::visit_item_fn(self, f);
            }
        }
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = &*call.func
                && let Some(last) = p.path.segments.last()
            {
                self.0.insert(last.ident.to_string());
            }
            syn::visit::visit_expr_call(self, call);
        }
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            self.0.insert(call.method.to_string());
            syn::visit::visit_expr_method_call(self, call);
        }
    }
    let mut calls = Calls(HashSet::new());
    for file in files {
        calls.visit_file(file);
    }
    calls.0
}

/// The type parameter an `Api`'s kind is written with: `K` in `Api<K>` and
/// in `Api<PartialObjectMeta<K>>`, whose requests are on `K`'s resource.
fn type_parameter(ty: &syn::Type) -> Option<&syn::Ident> {
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

fn is_ident(ty: &syn::Type, ident: &syn::Ident) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident(ident))
}

/// Whether a function that returns an `Api` makes it with `Api::all`
/// (`Some(true)`), `Api::namespaced` (`Some(false)`), or either.
fn constructor_scope(block: &syn::Block) -> Option<bool> {
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
fn api_constructor(func: &syn::Expr) -> Option<(Option<syn::Type>, bool)> {
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

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg")
                && a.parse_args::<syn::Meta>()
                    .is_ok_and(|m| m.path().is_ident("test")))
    })
}

/// The names a file imports: name -> full path (`Deployment` ->
/// `k8s_openapi::api::apps::v1::Deployment`).
fn imports(file: &syn::File) -> HashMap<String, Vec<String>> {
    fn walk(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut HashMap<String, Vec<String>>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
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
    uses.0
}

struct FileWalker<'a> {
    path: &'a Path,
    index: &'a Index,
    own: &'a [OwnKind],
    imports: &'a HashMap<String, Vec<String>>,
    analysis: &'a mut Analysis,
    /// The function being walked, and its type parameters (with those of
    /// its `impl`).
    function: String,
    generics: Vec<String>,
    /// The `impl` being walked: its self type and its type parameters.
    self_type: Option<syn::Type>,
    impl_generics: Vec<String>,
    /// Requests on an `Api<K>` whose `K` is a type parameter, found in the
    /// first walk; the second walk gives them the kinds the crate calls
    /// their functions with.
    deferred: &'a mut Vec<Deferred>,
    /// In the second walk: the deferred requests by function.
    instantiate: Option<&'a HashMap<String, Vec<Deferred>>>,
    /// The file uses rsop-runtime, whose manager and reconciler make requests of their own.
    runtime: bool,
}

/// Whether a file's `use`s bring in rsop-runtime.
fn uses_runtime(imports: &HashMap<String, Vec<String>>) -> bool {
    imports
        .values()
        .any(|path| path.first().is_some_and(|first| first == "rsop_runtime"))
}

/// How many generic functions deep a kind is passed down: `main` calls
/// `run::<Widget>`, which runs `reconcile::<T>`, which calls `apply::<T>`.
const GENERIC_DEPTH: usize = 4;

/// A place in a file: path, line, column.
type PathBufLine = (std::path::PathBuf, usize, usize);

/// A request of a generic function, on the `Api` of its type parameter
/// `generic`, waiting for the kinds its callers give it.
#[derive(Debug, Clone)]
struct Deferred {
    function: String,
    generic: String,
    /// A type parameter of the `impl`, not of the function: the struct the
    /// `impl` is for, and the parameter's place among its type arguments
    /// (`Wrapper<K>`'s 0), read off each caller's receiver.
    owner: Option<(String, usize)>,
    verbs: Vec<&'static str>,
    subresource: Option<String>,
    location: Location,
    via: String,
    optional: bool,
    /// The calls of generic callers it was passed up through.
    through: Vec<Location>,
}

impl<'ast> Visit<'ast> for FileWalker<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            self.function(&f.sig, &f.block);
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            self.function(&f.sig, &f.block);
        }
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        // A trait's provided method runs for every type that takes it.
        if let Some(block) = &f.default
            && !is_test(&f.attrs)
        {
            self.function(&f.sig, block);
        }
    }
    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if is_test(&item.attrs) {
            return;
        }
        let outer = (
            self.self_type.take(),
            std::mem::take(&mut self.impl_generics),
        );
        self.self_type = Some((*item.self_ty).clone());
        self.impl_generics = item
            .generics
            .type_params()
            .map(|p| p.ident.to_string())
            .collect();
        syn::visit::visit_item_impl(self, item);
        (self.self_type, self.impl_generics) = outer;
    }
}

impl FileWalker<'_> {
    fn function(&mut self, sig: &syn::Signature, block: &syn::Block) {
        self.function = sig.ident.to_string();
        self.generics = self
            .impl_generics
            .iter()
            .cloned()
            .chain(sig.generics.type_params().map(|p| p.ident.to_string()))
            .collect();
        let mut scope = Scope::default();
        if let Some(ty) = &self.self_type {
            scope.values.insert("self".into(), ty.clone());
        }
        let remote_params: HashSet<String> = sig
            .inputs
            .iter()
            .filter(|arg| matches!(arg, syn::FnArg::Typed(_)))
            .enumerate()
            .filter_map(|(i, arg)| match arg {
                syn::FnArg::Typed(t)
                    if self
                        .index
                        .remote_params
                        .contains(&(self.function.clone(), i)) =>
                {
                    match &*t.pat {
                        syn::Pat::Ident(p) => Some(p.ident.to_string()),
                        _ => None,
                    }
                }
                _ => None,
            })
            .collect();
        scope.remote_clients = remote_locals(block, self.index, remote_params);
        for arg in &sig.inputs {
            if let syn::FnArg::Typed(t) = arg
                && let syn::Pat::Ident(name) = &*t.pat
            {
                if let Some(kind) = api_type(&t.ty) {
                    scope
                        .apis
                        .insert(name.ident.to_string(), ApiKind::Known(Box::new(kind), None));
                } else {
                    scope.values.insert(name.ident.to_string(), (*t.ty).clone());
                }
            }
        }
        // Bindings first, then the uses that settle inferred kinds, then the
        // requests.
        let mut bindings = Bindings {
            walker: self,
            scope: &mut scope,
        };
        bindings.visit_block(block);
        let mut settle = Settle {
            index: self.index,
            scope: &mut scope,
        };
        settle.visit_block(block);
        if let Some(deferred) = self.instantiate {
            let mut calls = Instantiations {
                walker: self,
                scope: &scope,
                deferred,
            };
            calls.visit_block(block);
        } else {
            let mut requests = Requests {
                walker: self,
                scope: &scope,
            };
            requests.visit_block(block);
        }
    }

    /// The kind of an `Api` expression.
    fn kind_of(&self, expr: &syn::Expr, scope: &Scope) -> Option<ApiKind> {
        match expr {
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|i| scope.apis.get(&i.to_string()).cloned()),
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
                    && let Some((_, kind)) = candidates.iter().find(|(s, _)| *s == struct_name)
                {
                    let kind = self.substitute(kind, &struct_name, &args);
                    return Some(ApiKind::Known(Box::new(kind), None));
                }
                match candidates.as_slice() {
                    [(_, kind), rest @ ..] if rest.iter().all(|(_, k)| k == kind) => {
                        Some(ApiKind::Known(Box::new(kind.clone()), None))
                    }
                    _ => Some(ApiKind::Inferred(None)),
                }
            }
            syn::Expr::MethodCall(m) => {
                let method = m.method.to_string();
                if matches!(method.as_str(), "clone" | "to_owned" | "as_ref") {
                    return self.kind_of(&m.receiver, scope);
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
                let (kind, cluster) = self.index.returns.get(&method)?;
                let kind = kind.clone().or_else(|| turbofish(m.turbofish.as_ref()))?;
                Some(ApiKind::Known(Box::new(kind), *cluster))
            }
            syn::Expr::Call(c) => {
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
                let (kind, cluster) = self.index.returns.get(&last.ident.to_string())?;
                let mut kind = kind
                    .clone()
                    .or_else(|| generic_args(&last.arguments).first().map(|t| (*t).clone()))?;
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
    fn type_of(&self, expr: &syn::Expr, scope: &Scope) -> Option<syn::Type> {
        match expr {
            syn::Expr::Path(p) => {
                let name = p.path.get_ident()?.to_string();
                scope.values.get(&name).map(strip_wrappers)
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
                self.index.value_fns.get(&name)?.clone()
            }
            syn::Expr::Field(f) => {
                let syn::Member::Named(name) = &f.member else {
                    return None;
                };
                let owner = self.type_of(&f.base, scope)?;
                let (struct_name, args) = type_name(&owner)?;
                let ty = self
                    .index
                    .field_types
                    .get(&(struct_name.clone(), name.to_string()))?;
                Some(strip_wrappers(&self.substitute(ty, &struct_name, &args)))
            }
            _ => None,
        }
    }

    /// `ty` written in `struct_name`'s definition, with its type parameters
    /// replaced by `args` (a `K` field of `Wrapper<Pod>` is a `Pod`).
    fn substitute(&self, ty: &syn::Type, struct_name: &str, args: &[syn::Type]) -> syn::Type {
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
    fn owner_of(&self, generic: &syn::Ident) -> Option<(String, usize)> {
        if !self.impl_generics.iter().any(|g| generic == g) {
            return None;
        }
        let (name, args) = type_name(self.self_type.as_ref()?)?;
        let position = args.iter().position(|a| is_ident(a, generic))?;
        Some((name, position))
    }

    /// Where requests on `ty` go: a kind of the crate, or of Kubernetes.
    fn target(&self, ty: &syn::Type) -> Option<Target> {
        let syn::Type::Path(p) = ty else {
            return None;
        };
        let last = p.path.segments.last()?;
        let name = last.ident.to_string();
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
        if let Some(own) = best_kind(self.own, &full, Some(self.path)) {
            return Some(Target {
                group: own.group.clone(),
                plural: own.plural.clone(),
                namespaced: own.namespaced,
            });
        }
        // Kinds of the crate's that the path does not tell apart: not
        // Kubernetes' kind of that name either.
        if self.own.iter().any(|k| k.type_name() == name) {
            return None;
        }
        kubernetes_kind(&name)
    }

    fn location(&self, node: &impl Spanned) -> Location {
        let start = node.span().start();
        Location::new(self.path, start.line, start.column + 1)
    }

    fn push(
        &mut self,
        kind: &ApiKind,
        verbs: &[&'static str],
        subresource: Option<&str>,
        at: &impl Spanned,
        via: String,
    ) {
        let location = self.location(at);
        // A request on the `Api` of a type parameter waits for its callers.
        if let ApiKind::Known(ty, _) = kind
            && let Some(ident) = type_parameter(ty)
            && self.generics.iter().any(|g| ident == g)
        {
            self.deferred.push(Deferred {
                function: self.function.clone(),
                generic: ident.to_string(),
                owner: self.owner_of(ident),
                verbs: verbs.to_vec(),
                subresource: subresource.map(str::to_string),
                location,
                via,
                optional: false,
                through: Vec::new(),
            });
            return;
        }
        let (target, cluster) = match kind {
            ApiKind::Known(ty, cluster) => (self.target(ty), *cluster),
            ApiKind::Dynamic(group, kind, plural, cluster) => (
                Some(Target {
                    group: group.clone(),
                    plural: plural
                        .clone()
                        .unwrap_or_else(|| names::to_plural(&kind.to_ascii_lowercase())),
                    namespaced: true,
                }),
                Some(*cluster),
            ),
            ApiKind::Inferred(_) => (None, None),
        };
        let Some(target) = target else {
            self.analysis.unchecked.push(Unchecked {
                location,
                function: self.function.clone(),
                via,
                gated: None,
            });
            return;
        };
        for verb in verbs {
            self.analysis.calls.push(Call {
                group: target.group.clone(),
                resource: match subresource {
                    Some(sub) => format!("{}/{sub}", target.plural),
                    None => target.plural.clone(),
                },
                verb,
                cluster: !target.namespaced || cluster.unwrap_or(false),
                objects_namespace: false,
                location: location.clone(),
                function: self.function.clone(),
                via: via.clone(),
                optional: false,
                remote: false,
                site: None,
                gated: None,
                through: Vec::new(),
            });
        }
    }
}

/// A group, kind and plural written as literals: the parts a
/// `GroupVersionKind` or an `ApiResource` is made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Literal {
    group: Option<String>,
    kind: Option<String>,
    plural: Option<String>,
}

impl Literal {
    fn or(self, other: &Literal) -> Literal {
        Literal {
            group: self.group.or_else(|| other.group.clone()),
            kind: self.kind.or_else(|| other.kind.clone()),
            plural: self.plural.or_else(|| other.plural.clone()),
        }
    }
}

/// A string literal, also as `"x".into()`, `"x".to_string()`,
/// `String::from("x")`.
fn string_value(expr: &syn::Expr) -> Option<String> {
    string_in(expr, &HashMap::new())
}

/// [`string_value`], with the crate's string constants `consts` read too
/// (`VELERO_GROUP.into()`).
fn string_in(expr: &syn::Expr, consts: &HashMap<String, String>) -> Option<String> {
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
fn literal_parts<'e>(exprs: impl IntoIterator<Item = &'e syn::Expr>, known: &Known<'_>) -> Literal {
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

/// The `K` of an `ApiResource::erase::<K>(..)` in `args`.
fn erased_kind(args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>) -> Option<syn::Type> {
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

/// What literal values are known where an expression is read: the
/// function's variables that hold one, the crate's string constants, and
/// its functions that return one.
struct Known<'a> {
    vars: &'a HashMap<String, Literal>,
    consts: &'a HashMap<String, String>,
    functions: &'a HashMap<String, Literal>,
}

/// The crate's string constants (`const GROUP: &str = "velero.io";`), read
/// line by line from every file; a name two constants share is left out.
fn string_consts<'t>(texts: impl Iterator<Item = &'t str>) -> HashMap<String, String> {
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

fn turbofish(t: Option<&syn::AngleBracketedGenericArguments>) -> Option<syn::Type> {
    match t?.args.first()? {
        syn::GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    }
}

/// Where the requests on Kubernetes' own kind `kind` go, from rsop's table.
fn kubernetes_kind(kind: &str) -> Option<Target> {
    let k = k8s_kinds::KINDS.iter().find(|k| k.kind == kind)?;
    Some(Target {
        group: names::api_group(k.group).to_string(),
        plural: k.plural.to_string(),
        namespaced: k.namespaced,
    })
}

/// A k8s-openapi type's group and plural, from its module path
/// (`k8s_openapi::api::apps::v1::Deployment`).
fn k8s_target(path: &[String]) -> Option<Target> {
    let kind = path.last()?;
    if let Some(target) = kubernetes_kind(kind) {
        return Some(target);
    }
    let module = match path {
        [_, api, module, ..] if api == "api" => module.as_str(),
        [_, ext, ..] if ext == "apiextensions_apiserver" => "apiextensions",
        [_, agg, ..] if agg == "kube_aggregator" => "apiregistration",
        _ => return None,
    };
    let group = match module {
        "core" => String::new(),
        "apps" | "batch" | "autoscaling" | "policy" => module.to_string(),
        "rbac" => "rbac.authorization.k8s.io".to_string(),
        "flowcontrol" => "flowcontrol.apiserver.k8s.io".to_string(),
        "apiserverinternal" => "internal.apiserver.k8s.io".to_string(),
        other => format!("{other}.k8s.io"),
    };
    Some(Target {
        group,
        plural: names::to_plural(&kind.to_ascii_lowercase()),
        namespaced: !CLUSTER_KINDS.contains(&kind.as_str()),
    })
}

/// The kinds of the Gateway API (`gateway.networking.k8s.io`): kind,
/// plural, namespaced.
const GATEWAY_KINDS: &[(&str, &str, bool)] = &[
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
const CLUSTER_KINDS: &[&str] = &[
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
/// values by their written type (for `obj.controller_owner_ref(..)`).
#[derive(Debug, Default)]
struct Scope {
    apis: HashMap<String, ApiKind>,
    values: HashMap<String, syn::Type>,
    /// Variables that hold a literal `GroupVersionKind` or `ApiResource`.
    literals: HashMap<String, Literal>,
    /// Variables that hold a client of another cluster, and `Api`s made
    /// with one.
    remote_clients: HashSet<String>,
    remote_apis: HashSet<String>,
}

/// `let` bindings of `Api` values.
struct Bindings<'w, 'a> {
    walker: &'w FileWalker<'a>,
    scope: &'w mut Scope,
}

impl<'ast> Visit<'ast> for Bindings<'_, '_> {
    fn visit_local(&mut self, local: &'ast syn::Local) {
        let (pat, annotated) = match &local.pat {
            syn::Pat::Type(t) => (&*t.pat, api_type(&t.ty)),
            other => (other, None),
        };
        if let syn::Pat::Ident(name) = pat {
            let name = name.ident.to_string();
            let from_init = local
                .init
                .as_ref()
                .and_then(|init| self.walker.kind_of(&init.expr, self.scope));
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
                        consts: &self.walker.index.consts,
                        functions: &self.walker.index.literal_fns,
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
                self.scope.apis.insert(name, kind);
            } else if literal != Literal::default() {
                self.scope.literals.insert(name, literal);
            } else if let syn::Pat::Type(t) = &local.pat {
                self.scope.values.insert(name, (*t.ty).clone());
            } else if let Some(ty) = local.init.as_ref().and_then(|init| {
                constructed_type(&init.expr).or_else(|| self.walker.type_of(&init.expr, self.scope))
            }) {
                self.scope.values.insert(name, ty);
            }
        }
        syn::visit::visit_local(self, local);
    }
    fn visit_expr_closure(&mut self, closure: &'ast syn::ExprClosure) {
        for input in &closure.inputs {
            let syn::Pat::Type(t) = input else { continue };
            let syn::Pat::Ident(name) = &*t.pat else {
                continue;
            };
            let name = name.ident.to_string();
            match api_type(&t.ty) {
                Some(kind) => {
                    self.scope
                        .apis
                        .insert(name, ApiKind::Known(Box::new(kind), None));
                }
                // `|obj: Arc<T>, ctx| reconcile(obj, ctx)`. The function's
                // scope is flat: a variable of the same name outside the
                // closure keeps its type.
                None => {
                    self.scope
                        .values
                        .entry(name)
                        .or_insert_with(|| (*t.ty).clone());
                }
            }
        }
        syn::visit::visit_expr_closure(self, closure);
    }
}

/// An `Api` whose kind rustc infers takes the kind of the parameter it is
/// passed to.
struct Settle<'w> {
    index: &'w Index,
    scope: &'w mut Scope,
}

impl Settle<'_> {
    fn settle(
        &mut self,
        callee: &str,
        args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
    ) {
        let Some(params) = self.index.params.get(callee) else {
            return;
        };
        for (arg, param) in args.iter().zip(params) {
            let (Some(param), Some(name)) = (param, variable(arg)) else {
                continue;
            };
            if let Some(ApiKind::Inferred(cluster)) = self.scope.apis.get(&name) {
                let cluster = *cluster;
                self.scope
                    .apis
                    .insert(name, ApiKind::Known(Box::new(param.clone()), cluster));
            }
        }
    }
}

impl<'ast> Visit<'ast> for Settle<'_> {
    /// `let secret: Secret = api.get(..).await?`: an `Api` whose kind rustc
    /// infers is of the kind its answer is bound to.
    fn visit_local(&mut self, local: &'ast syn::Local) {
        if let syn::Pat::Type(t) = &local.pat
            && let Some(init) = &local.init
            && let Some((api, method)) = answered_call(&init.expr)
            && let Some(ApiKind::Inferred(cluster)) = self.scope.apis.get(&api)
            && let Some(kind) = answer_kind(&t.ty, &method)
        {
            let kind = ApiKind::Known(Box::new(kind), *cluster);
            self.scope.apis.insert(api, kind);
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
            self.settle(&last.ident.to_string(), &call.args);
            // `finalizer(&api, name, obj, ..)`: the `Api` is of the object's kind.
            if last.ident == "finalizer"
                && let (Some(api), Some(obj)) = (
                    call.args.first().and_then(variable),
                    call.args.iter().nth(2).and_then(variable),
                )
                && let Some(ApiKind::Inferred(cluster)) = self.scope.apis.get(&api)
                && let Some(ty) = self.scope.values.get(&obj)
            {
                let kind = ApiKind::Known(Box::new(strip_wrappers(ty)), *cluster);
                self.scope.apis.insert(api, kind);
            }
        }
        syn::visit::visit_expr_call(self, call);
    }
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        self.settle(&call.method.to_string(), &call.args);
        syn::visit::visit_expr_method_call(self, call);
    }
}

/// The `Api` variable and method of `api.get(..).await?` (also with
/// `.unwrap()` or `.expect(..)`).
fn answered_call(expr: &syn::Expr) -> Option<(String, String)> {
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
fn answer_kind(ty: &syn::Type, method: &str) -> Option<syn::Type> {
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

/// The variable an argument names: `api`, `&api`, `api.clone()`.
fn variable(expr: &syn::Expr) -> Option<String> {
    match expr {
        syn::Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
        syn::Expr::Reference(r) => variable(&r.expr),
        syn::Expr::MethodCall(m) if m.method == "clone" => variable(&m.receiver),
        _ => None,
    }
}

/// The requests of a function body.
struct Requests<'w, 'a> {
    walker: &'w mut FileWalker<'a>,
    scope: &'w Scope,
}

impl<'ast> Visit<'ast> for Requests<'_, '_> {
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        for expr in macro_exprs(mac).iter().flatten() {
            self.visit_expr(expr);
        }
    }
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let method = call.method.to_string();
        let via = |receiver: &str| format!("{receiver}.{method}");
        if let Some((verbs, sub)) = method_requests(&method)
            && let Some(kind) = self.walker.kind_of(&call.receiver, self.scope)
        {
            let first = self.walker.analysis.calls.len();
            let remote = variable(&call.receiver)
                .is_some_and(|v| self.scope.remote_apis.contains(&v))
                || api_constructor_call(&call.receiver)
                    .and_then(variable)
                    .is_some_and(|c| self.scope.remote_clients.contains(&c));
            let via = via(&receiver_text(&call.receiver));
            self.walker
                .push(&kind, verbs, sub, &call.method, via.clone());
            // A server-side apply creates the object it does not find, which
            // the API server then authorizes as a `create` too. (A
            // subresource's apply never creates its object.)
            if method == "patch" && applies(&call.args) {
                let (calls, deferred) =
                    (self.walker.analysis.calls.len(), self.walker.deferred.len());
                self.walker
                    .push(&kind, &["create"], None, &call.method, via);
                for call in &mut self.walker.analysis.calls[calls..] {
                    call.optional = true;
                }
                for call in &mut self.walker.deferred[deferred..] {
                    call.optional = true;
                }
            }
            if remote {
                for call in &mut self.walker.analysis.calls[first..] {
                    call.remote = true;
                }
            }
        } else if let Some(verb) = match method.as_str() {
            "get_subresource" => Some("get"),
            "create_subresource" => Some("create"),
            "patch_subresource" => Some("patch"),
            "replace_subresource" => Some("update"),
            _ => None,
        } && let Some(kind) = self.walker.kind_of(&call.receiver, self.scope)
        {
            let sub = match call.args.first() {
                Some(syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                })) => Some(s.value()),
                _ => None,
            };
            match sub {
                Some(sub) => self.walker.push(
                    &kind,
                    &[verb],
                    Some(&sub),
                    &call.method,
                    via(&receiver_text(&call.receiver)),
                ),
                None => self.walker.analysis.unchecked.push(Unchecked {
                    location: self.walker.location(&call.method),
                    function: self.walker.function.clone(),
                    via: via(&receiver_text(&call.receiver)),
                    gated: None,
                }),
            }
        } else if matches!(method.as_str(), "owns" | "watches")
            && let Some(api) = call.args.first()
            && let Some(kind) = self.walker.kind_of(api, self.scope)
        {
            self.walker.push(
                &kind,
                WATCH,
                None,
                &call.method,
                format!("Controller::{method}"),
            );
        } else if let Some(runtime) = self.runtime_request(call) {
            let (kind, verbs, sub, via) = runtime;
            self.walker
                .push(&kind, verbs, sub, &call.method, via.clone());
            if method == "apply" {
                // Server-side apply: a `create` too when the object is not there yet.
                let (calls, deferred) =
                    (self.walker.analysis.calls.len(), self.walker.deferred.len());
                self.walker
                    .push(&kind, &["create"], None, &call.method, via.clone());
                for call in &mut self.walker.analysis.calls[calls..] {
                    call.optional = true;
                }
                for call in &mut self.walker.deferred[deferred..] {
                    call.optional = true;
                }
            }
            if method == "write_status" {
                // Each condition transition is announced with an event, in the object's namespace.
                self.runtime_event(&call.method);
            }
        } else if method == "controller_owner_ref"
            && let Some(name) = variable(&call.receiver)
            && let Some(ty) = self.scope.values.get(&name)
        {
            // An owner reference with `blockOwnerDeletion` needs the right to
            // update the owner's finalizers.
            let owner = strip_wrappers(ty);
            self.walker.push(
                &ApiKind::Known(Box::new(owner), None),
                &["update"],
                Some("finalizers"),
                &call.method,
                format!("{name}.controller_owner_ref"),
            );
        }
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*call.func
            && let Some(last) = p.path.segments.last()
        {
            let name = last.ident.to_string();
            let segments = p.path.segments.len();
            let first = call.args.first();
            match name.as_str() {
                "watcher" | "metadata_watcher" => {
                    if let Some(kind) = first.and_then(|a| self.walker.kind_of(a, self.scope)) {
                        self.walker
                            .push(&kind, WATCH, None, &last.ident, name.clone());
                    }
                }
                "new" if segments >= 2 && p.path.segments[segments - 2].ident == "Controller" => {
                    if let Some(kind) = first.and_then(|a| self.walker.kind_of(a, self.scope)) {
                        self.walker
                            .push(&kind, WATCH, None, &last.ident, "Controller::new".into());
                    }
                }
                "new" if segments >= 2 && p.path.segments[segments - 2].ident == "Recorder" => {
                    let location = self.walker.location(&last.ident);
                    // A `Recorder::new` given the object's reference (kube-runtime
                    // 0.95 and before) only creates events; one given none (0.98
                    // on) patches an event that repeats into a series.
                    let verbs: &[&str] = if call.args.len() >= 3 {
                        &["create"]
                    } else {
                        &["create", "patch"]
                    };
                    for &verb in verbs {
                        self.walker.analysis.calls.push(Call {
                            group: "events.k8s.io".into(),
                            resource: "events".into(),
                            verb,
                            cluster: false,
                            objects_namespace: true,
                            location: location.clone(),
                            function: self.walker.function.clone(),
                            via: "Recorder::new".into(),
                            optional: false,
                            remote: false,
                            site: None,
                            gated: None,
                            through: Vec::new(),
                        });
                    }
                }
                // kube-lease-manager reads, creates and patches its Lease
                // (in its namespace), and deletes it when released.
                "new"
                    if segments >= 2
                        && matches!(
                            p.path.segments[segments - 2].ident.to_string().as_str(),
                            "LeaseManagerBuilder" | "LeaseManager"
                        ) =>
                {
                    let location = self.walker.location(&last.ident);
                    for (verb, optional) in [
                        ("get", false),
                        ("create", false),
                        ("patch", false),
                        ("delete", true),
                    ] {
                        self.walker.analysis.calls.push(Call {
                            group: "coordination.k8s.io".into(),
                            resource: "leases".into(),
                            verb,
                            cluster: false,
                            objects_namespace: false,
                            location: location.clone(),
                            function: self.walker.function.clone(),
                            via: "kube-lease-manager".into(),
                            optional,
                            remote: false,
                            site: None,
                            gated: None,
                            through: Vec::new(),
                        });
                    }
                }
                // rsop-runtime's manager: leader election through a Lease in its namespace (the
                // shard Leases' watch too, when it is sharded), and the metrics server's
                // authentication and authorization of each scrape.
                "new"
                    if segments >= 2
                        && p.path.segments[segments - 2].ident == "Manager"
                        && self.walker.runtime =>
                {
                    for (group, resource, verb, cluster, optional) in RUNTIME_MANAGER_REQUESTS {
                        self.fixed(
                            group,
                            resource,
                            verb,
                            *cluster,
                            *optional,
                            &last.ident,
                            "rsop_runtime::Manager",
                        );
                    }
                }
                // rsop-runtime's check that a controller's kind can be listed.
                "can_list" if self.walker.runtime => {
                    if let Some(kind) = first.and_then(|a| self.walker.kind_of(a, self.scope)) {
                        self.walker
                            .push(&kind, &["list"], None, &last.ident, "can_list".into());
                    }
                }
                "finalizer" => {
                    if let Some(kind) = first.and_then(|a| self.walker.kind_of(a, self.scope)) {
                        self.walker
                            .push(&kind, &["patch"], None, &last.ident, "finalizer".into());
                    }
                }
                _ => {}
            }
        }
        syn::visit::visit_expr_call(self, call);
    }
}

/// The requests rsop-runtime's `Manager` makes, whatever its controllers: `(group, resource, verb,
/// across the cluster, optional)`. It gets, creates and updates its leader election Lease; with
/// `--shards` it watches the shard Leases, which a project that never runs sharded need not
/// grant. Its metrics server asks the API server who a scraper is and whether it may read.
const RUNTIME_MANAGER_REQUESTS: &[(&str, &str, &str, bool, bool)] = &[
    ("coordination.k8s.io", "leases", "get", false, false),
    ("coordination.k8s.io", "leases", "create", false, false),
    ("coordination.k8s.io", "leases", "update", false, false),
    ("coordination.k8s.io", "leases", "list", false, true),
    ("coordination.k8s.io", "leases", "watch", false, true),
    (
        "authentication.k8s.io",
        "tokenreviews",
        "create",
        true,
        false,
    ),
    (
        "authorization.k8s.io",
        "subjectaccessreviews",
        "create",
        true,
        false,
    ),
];

impl Requests<'_, '_> {
    /// The requests of a method of rsop-runtime's a controller calls: the kind, verbs and
    /// subresource, and what to call it in messages.
    ///
    /// - `reconciler.write_status(obj, ..)`: a `patch` of the kind's `status` (and an event);
    /// - `reconciler.apply(owner, desired, ..)`: a server-side apply of `desired`'s kind;
    /// - `manager.shard::<K>()`: the sharder lists, watches and labels the objects of `K`, and the
    ///   replica that has one hands it over with a `patch`.
    fn runtime_request(
        &self,
        call: &syn::ExprMethodCall,
    ) -> Option<(
        ApiKind,
        &'static [&'static str],
        Option<&'static str>,
        String,
    )> {
        if !self.walker.runtime {
            return None;
        }
        let method = call.method.to_string();
        let receiver = || self.walker.type_of(&call.receiver, self.scope);
        // The `K` of a `Reconciler<K>` receiver.
        let reconciled = || {
            let (name, args) = type_name(&receiver()?)?;
            (name == "Reconciler")
                .then(|| args.first().cloned())
                .flatten()
        };
        let via = format!("{}.{method}", receiver_text(&call.receiver));
        match method.as_str() {
            // The object written is of the kind; the receiver's type names it too, but a field
            // type is known by its struct's name alone, which every controller's `State` shares.
            "write_status" if call.args.len() == 3 => {
                let kind = self
                    .walker
                    .type_of(call.args.first()?, self.scope)
                    .or_else(reconciled)
                    .map(|ty| strip_wrappers(&ty))?;
                Some((
                    ApiKind::Known(Box::new(kind), None),
                    &["patch"],
                    Some("status"),
                    via,
                ))
            }
            "apply" if call.args.len() == 3 && reconciled().is_some() => {
                let desired = self.walker.type_of(&call.args[1], self.scope);
                let kind = desired.map_or(ApiKind::Inferred(None), |ty| {
                    ApiKind::Known(Box::new(strip_wrappers(&ty)), None)
                });
                Some((kind, &["patch"], None, via))
            }
            "shard" if call.args.is_empty() => {
                let kind = turbofish(call.turbofish.as_ref())?;
                Some((
                    ApiKind::Known(Box::new(kind), None),
                    &["list", "watch", "patch"],
                    None,
                    via,
                ))
            }
            _ => None,
        }
    }

    /// The event `Reconciler::write_status` publishes for a condition's transition.
    fn runtime_event(&mut self, at: &impl Spanned) {
        let location = self.walker.location(at);
        self.walker.analysis.calls.push(Call {
            group: "events.k8s.io".into(),
            resource: "events".into(),
            verb: "create",
            cluster: false,
            objects_namespace: true,
            location,
            function: self.walker.function.clone(),
            via: "Reconciler::write_status".into(),
            optional: false,
            remote: false,
            site: None,
            gated: None,
            through: Vec::new(),
        });
    }

    /// A request of a fixed resource.
    #[expect(clippy::too_many_arguments, reason = "one request, spelled out")]
    fn fixed(
        &mut self,
        group: &str,
        resource: &str,
        verb: &'static str,
        cluster: bool,
        optional: bool,
        at: &impl Spanned,
        via: &str,
    ) {
        let location = self.walker.location(at);
        self.walker.analysis.calls.push(Call {
            group: group.into(),
            resource: resource.into(),
            verb,
            cluster,
            objects_namespace: false,
            location,
            function: self.walker.function.clone(),
            via: via.into(),
            optional,
            remote: false,
            site: None,
            gated: None,
            through: Vec::new(),
        });
    }
}

/// Whether a `patch` call's arguments make it a server-side apply
/// (`Patch::Apply(..)`).
fn applies(args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>) -> bool {
    struct Finder(bool);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_path(&mut self, path: &'ast syn::Path) {
            let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            if segments.ends_with(&["Patch".to_string(), "Apply".to_string()]) {
                self.0 = true;
            }
            syn::visit::visit_path(self, path);
        }
    }
    let mut finder = Finder(false);
    for arg in args {
        finder.visit_expr(arg);
    }
    finder.0
}

/// The second walk: each call of a generic function whose requests wait
/// for a kind, with the kinds of the `Api`s passed to it.
struct Instantiations<'w, 'a> {
    walker: &'w mut FileWalker<'a>,
    scope: &'w Scope,
    deferred: &'w HashMap<String, Vec<Deferred>>,
}

impl Instantiations<'_, '_> {
    /// The requests of `callee`, a generic function, with the kinds of the
    /// `Api`s passed to it.
    fn instantiate(
        &mut self,
        callee: &str,
        args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
        at: &impl Spanned,
    ) {
        let (Some(requests), Some(params)) = (
            self.deferred.get(callee),
            self.walker.index.params.get(callee),
        ) else {
            return;
        };
        let site = self.walker.location(at);
        for (arg, param) in args.iter().zip(params) {
            let Some(generic) = param.as_ref().and_then(type_parameter) else {
                continue;
            };
            let generic = generic.to_string();
            let Some(ApiKind::Known(ty, cluster)) = self.walker.kind_of(arg, self.scope) else {
                continue;
            };
            for d in requests
                .iter()
                .filter(|d| d.owner.is_none() && d.generic == generic)
            {
                self.bind(d, &ty, cluster, callee, &site);
            }
        }
    }

    /// The requests of `callee`, a generic function, with the kinds its
    /// turbofish names (`ensure::<Widget>(..)`) or the values passed for
    /// parameters of its type parameters (`ensure(&client, &widget)`).
    fn instantiate_values(
        &mut self,
        callee: &str,
        turbofish: Option<&syn::AngleBracketedGenericArguments>,
        args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
        at: &impl Spanned,
    ) {
        let (Some(requests), Some((generics, values))) = (
            self.deferred.get(callee),
            self.walker.index.generic_values.get(callee),
        ) else {
            return;
        };
        let site = self.walker.location(at);
        let mut kinds: Vec<(String, syn::Type)> = Vec::new();
        if let Some(turbofish) = turbofish {
            for (generic, arg) in generics.iter().zip(&turbofish.args) {
                if let syn::GenericArgument::Type(ty) = arg {
                    kinds.push((generic.clone(), ty.clone()));
                }
            }
        }
        for (arg, generic) in args.iter().zip(values) {
            if let Some(generic) = generic
                && let Some(ty) = self.walker.type_of(arg, self.scope)
            {
                kinds.push((generic.clone(), ty));
            }
        }
        for (generic, ty) in kinds {
            for d in requests
                .iter()
                .filter(|d| d.owner.is_none() && d.generic == generic)
            {
                self.bind(d, &ty, None, callee, &site);
            }
        }
    }

    /// `Controller::new(api, ..).run(reconcile, ..)`: the reconciler's
    /// type parameter (that of its object) is the controller's kind.
    fn instantiate_reconciler(&mut self, call: &syn::ExprMethodCall) {
        if call.method != "run" {
            return;
        }
        let Some(syn::Expr::Path(f)) = call.args.first() else {
            return;
        };
        let Some(callee) = f.path.segments.last().map(|s| s.ident.to_string()) else {
            return;
        };
        let (Some(requests), Some((_, values))) = (
            self.deferred.get(&callee),
            self.walker.index.generic_values.get(&callee),
        ) else {
            return;
        };
        let Some(Some(generic)) = values.first() else {
            return;
        };
        // Down the builder chain to `Controller::new(api, ..)`.
        let mut receiver = &*call.receiver;
        let api = loop {
            match receiver {
                syn::Expr::MethodCall(m) => receiver = &m.receiver,
                syn::Expr::Call(c)
                    if matches!(&*c.func, syn::Expr::Path(p) if p.path.segments.len() >= 2
                        && p.path.segments.iter().rev().nth(1).is_some_and(|s| s.ident == "Controller")
                        && p.path.segments.last().is_some_and(|s| s.ident == "new")) =>
                {
                    break c.args.first();
                }
                _ => return,
            }
        };
        let Some(ApiKind::Known(ty, cluster)) =
            api.and_then(|api| self.walker.kind_of(api, self.scope))
        else {
            return;
        };
        let site = self.walker.location(&call.method);
        for d in requests
            .iter()
            .filter(|d| d.owner.is_none() && d.generic == *generic)
        {
            self.bind(d, &ty, cluster, &callee, &site);
        }
    }

    /// `d` made with the kind `ty`: a request, or, when `ty` is a type
    /// parameter of the generic function making the call, a request of
    /// that function, for its own callers to give the kind
    /// (`reconcile::<T>` called in `run<T>`, called with `Widget`).
    fn bind(
        &mut self,
        d: &Deferred,
        ty: &syn::Type,
        cluster: Option<bool>,
        callee: &str,
        site: &Location,
    ) {
        if let Some(param) = type_parameter(ty)
            && self.walker.generics.iter().any(|g| param == g)
            && !self.walker.impl_generics.iter().any(|g| param == g)
        {
            let mut through = d.through.clone();
            through.push(site.clone());
            self.walker.deferred.push(Deferred {
                function: self.walker.function.clone(),
                generic: param.to_string(),
                owner: None,
                through,
                via: format!(
                    "{} (from `{callee}` at {}:{})",
                    d.via,
                    self.walker.path.display(),
                    site.line
                ),
                ..d.clone()
            });
            return;
        }
        if let Some(target) = self.walker.target(ty) {
            self.emit(d, &target, cluster, callee, site);
        }
    }

    /// The requests of `callee`, a method of a generic struct that holds an
    /// `Api` of its type parameter, with the kind the receiver's type names
    /// (`pods.apply(..)` on a `Wrapper<Pod>`).
    fn instantiate_method(&mut self, callee: &str, receiver: &syn::Expr, at: &impl Spanned) {
        let Some(requests) = self.deferred.get(callee) else {
            return;
        };
        let Some((name, args)) = self
            .walker
            .type_of(receiver, self.scope)
            .as_ref()
            .and_then(type_name)
        else {
            return;
        };
        let site = self.walker.location(at);
        for d in requests {
            let Some((owner, position)) = &d.owner else {
                continue;
            };
            if *owner != name {
                continue;
            }
            let Some(target) = args.get(*position).and_then(|k| self.walker.target(k)) else {
                continue;
            };
            self.emit(d, &target, None, callee, &site);
        }
    }

    fn emit(
        &mut self,
        d: &Deferred,
        target: &Target,
        cluster: Option<bool>,
        callee: &str,
        site: &Location,
    ) {
        let line = site.line;
        for verb in &d.verbs {
            self.walker.analysis.calls.push(Call {
                group: target.group.clone(),
                resource: match &d.subresource {
                    Some(sub) => format!("{}/{sub}", target.plural),
                    None => target.plural.clone(),
                },
                verb,
                cluster: !target.namespaced || cluster.unwrap_or(false),
                objects_namespace: false,
                location: d.location.clone(),
                function: d.function.clone(),
                via: format!(
                    "{} (from `{callee}` at {}:{line})",
                    d.via,
                    self.walker.path.display()
                ),
                optional: d.optional,
                remote: false,
                site: Some((site.clone(), self.walker.function.clone())),
                gated: None,
                through: d.through.clone(),
            });
        }
    }
}

impl<'ast> Visit<'ast> for Instantiations<'_, '_> {
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        for expr in macro_exprs(mac).iter().flatten() {
            self.visit_expr(expr);
        }
    }
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*call.func
            && let Some(last) = p.path.segments.last()
        {
            let callee = last.ident.to_string();
            self.instantiate(&callee, &call.args, &last.ident);
            let turbofish = match &last.arguments {
                syn::PathArguments::AngleBracketed(a) => Some(a),
                _ => None,
            };
            self.instantiate_values(&callee, turbofish, &call.args, &last.ident);
        }
        syn::visit::visit_expr_call(self, call);
    }
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let callee = call.method.to_string();
        self.instantiate(&callee, &call.args, &call.method);
        self.instantiate_values(&callee, call.turbofish.as_ref(), &call.args, &call.method);
        self.instantiate_method(&callee, &call.receiver, &call.method);
        self.instantiate_reconciler(call);
        syn::visit::visit_expr_method_call(self, call);
    }
}

/// The name of a struct type and its type arguments (`Wrapper<Pod>`:
/// `Wrapper`, `[Pod]`), behind references and smart pointers.
fn type_name(ty: &syn::Type) -> Option<(String, Vec<syn::Type>)> {
    let syn::Type::Path(p) = strip_wrappers(ty) else {
        return None;
    };
    let last = p.path.segments.last()?;
    Some((
        last.ident.to_string(),
        generic_args(&last.arguments).into_iter().cloned().collect(),
    ))
}

/// The type an expression constructs: `Wrapper::<Pod>::new(..)` and
/// `Wrapper::new(..)` make a `Wrapper<Pod>` / `Wrapper`, `Wrapper { .. }` a
/// `Wrapper` (behind `?` and `.await`).
fn constructed_type(expr: &syn::Expr) -> Option<syn::Type> {
    match expr {
        syn::Expr::Try(t) => constructed_type(&t.expr),
        syn::Expr::Await(a) => constructed_type(&a.base),
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

/// `&K`, `Arc<K>`, `&Arc<K>`: `K`.
fn strip_wrappers(ty: &syn::Type) -> syn::Type {
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

fn receiver_text(expr: &syn::Expr) -> String {
    use quote::ToTokens;
    let text = expr.to_token_stream().to_string().replace(' ', "");
    if text.len() > 40 { "api".into() } else { text }
}

/// The calls, grouped by what they need: (group, resource, verb) -> the
/// first location that needs it.
pub fn needs(calls: &[Call]) -> BTreeMap<(String, String, &'static str), &Call> {
    let mut out = BTreeMap::new();
    for call in calls {
        out.entry((call.group.clone(), call.resource.clone(), call.verb))
            .or_insert(call);
    }
    out
}

#[cfg(test)]
mod tests;
