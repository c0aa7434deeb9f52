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

use syn::visit::Visit;

use crate::manifests::diagnostics::Location;
use crate::manifests::read::modules::BuildConfig;

mod instantiate;
mod kinds;
mod literals;
pub(crate) mod macros;
mod reach;
mod requests;
mod syntax;
mod walk;

use kinds::Typing;
use kinds::{best_kind, declared_kinds, implemented_kinds, inherited_kinds, kubernetes_kind};
use literals::{Known, literal_parts, string_consts};
use reach::{
    Index, called_names, find_remote_params, mentions_kube, module_calls, spread_remote_fns,
};
use requests::Deferred;
pub(crate) use requests::method_requests;
pub(crate) use syntax::{imports, module_path, type_param_names};
use syntax::{imports_in, module_in, without_tests};
use walk::{FileWalker, GENERIC_DEPTH, PathBufLine};

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
    pub unknown: Unknown,
    /// The group and resource it is on, when the kind is known and its
    /// verbs are not.
    pub resource: Option<(String, String)>,
    /// For [`Unknown::Crate`]: the dependency, by the name code calls it.
    pub dependency: Option<String>,
    /// A server-side apply, which creates the object it does not find.
    pub applies: bool,
}

/// What the code does not show of a call that is not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknown {
    /// The kind of its `Api`.
    Kind,
    /// The kind of the type it names, which neither the sources rsop
    /// reads nor a CRD file of the repository declare (one generated at
    /// build time from a CRD elsewhere).
    Type,
    /// The request an `Api` method rsop does not know sends.
    Method,
    /// The subresource, computed where `get_subresource(..)` names it.
    Subresource,
    /// The requests of another crate's function the `Api` is given to.
    Function,
    /// The requests of another crate's function a `Client` is given to.
    Client,
    /// A request the code builds by hand (`client.request(Request::new(
    /// path).get(..))`): its resource and verb are in a path rsop does not
    /// read.
    Raw,
    /// The requests of an awaited function or method of a dependency that
    /// depends on kube and that cargo has not downloaded: it may send any,
    /// with a client it is given, holds or makes.
    Crate,
}

impl Unknown {
    /// What is not shown, as a clause.
    pub fn clause(self) -> &'static str {
        match self {
            Unknown::Kind => "the code does not show the kind of its `Api`",
            Unknown::Type => {
                "neither the sources nor a CRD file of the repository declare the kind of the type it names"
            }
            Unknown::Method => "rsop does not know the request this `Api` method sends",
            Unknown::Subresource => "the code computes the subresource it names",
            Unknown::Function => {
                "it is a function of another crate given an `Api`, and rsop has not read that crate"
            }
            Unknown::Client => {
                "it is a function of another crate given a `Client`, and rsop has not read that crate"
            }
            Unknown::Raw => {
                "it sends a request the code builds by hand, whose resource and verb rsop does not read"
            }
            Unknown::Crate => {
                "it is a function of a dependency that depends on kube and that cargo has not downloaded for rsop to read"
            }
        }
    }

    /// How to make it checked.
    pub fn help(self) -> &'static str {
        match self {
            Unknown::Type => {
                "add the kind's CRD to the repository (the one a build script generates the type from), or declare the kind with `#[kube(..)]`"
            }
            Unknown::Kind => {
                "write the kind where the `Api` is made (`Api::<K>::namespaced(..)`) or in its type"
            }
            Unknown::Method => {
                "grant what it needs by hand, and report the method to rsop so the check learns it"
            }
            Unknown::Subresource => "name the subresource with a string literal",
            // rsop reads a dependency that depends on kube once cargo has
            // downloaded its sources.
            Unknown::Raw => {
                "grant what the request needs by hand, or send it with a typed `Api` so the check reads it"
            }
            Unknown::Function | Unknown::Client | Unknown::Crate => {
                "let cargo download the crate (`cargo fetch`) so rsop reads its requests, or grant what the function needs by hand"
            }
        }
    }
}

/// What the analysis found.
#[derive(Debug, Default)]
pub struct Analysis {
    pub calls: Vec<Call>,
    pub unchecked: Vec<Unchecked>,
    /// The kinds the crate declares (its own, and those it types for other
    /// projects' APIs): group and plural.
    pub kinds: Vec<(String, String)>,
    /// The code writes owner references that may block their owner's
    /// deletion, on owners whose kind it does not show (`OwnerReference {
    /// .. }` by hand with `block_owner_deletion`).
    pub owner_references: bool,
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
    /// Known only from a CRD file of the repository (another project's
    /// kind, whose type a build script generates): the crate requests it
    /// but does not own it.
    pub foreign: bool,
}

impl OwnKind {
    /// The name the crate's code calls the kind by.
    fn type_name(&self) -> &str {
        self.root.as_deref().unwrap_or(&self.kind)
    }
}

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
    // The crate's `macro_rules!` bodies are read where they are invoked.
    let defining: Vec<syn::File> = files
        .iter()
        .filter(|(_, text, _)| text.contains("macro_rules!"))
        .filter_map(|(path, text, _)| parse(path, text).map(|(_, file)| file))
        .collect();
    let macros = macros::collect(&defining);
    let parse = |path, text| {
        let (path, mut file) = parse(path, text)?;
        macros::expand(&macros, &mut file);
        syntax::unalias_kube(&mut file);
        Some((path, file))
    };
    // Dependencies rsop has not read, whose awaited functions are noted.
    let unread: HashSet<String> = files
        .iter()
        .filter_map(|(_, _, config)| config.as_ref())
        .flat_map(|config| config.unread.iter().cloned())
        .collect();
    let mut parsed: Vec<(&Path, syn::File)> = files
        .iter()
        .filter(|(_, text, _)| {
            mentions_kube(text) || unread.iter().any(|c| text.contains(&format!("{c}::")))
        })
        .filter_map(|(path, text, _)| parse(path, text))
        .collect();
    // The files of the dependencies read with the crate, by the name the
    // crate calls each by.
    let crates: HashMap<&Path, &str> = files
        .iter()
        .filter_map(|(path, _, config)| Some((*path, config.as_ref()?.dependency.as_deref()?)))
        .collect();
    let crate_of = |path: &Path| crates.get(path).copied();
    let mut index = Index {
        publishes: files.iter().any(|(_, text, _)| publishes(text)),
        unread,
        // Per crate: a dependency's `struct Controller` says nothing of
        // the package's `Controller`.
        defined: {
            let mut defined: HashMap<String, HashSet<String>> = HashMap::new();
            for (path, text, _) in files {
                defined
                    .entry(crate_of(path).unwrap_or_default().to_string())
                    .or_default()
                    .extend(reach::defined_names(text).map(str::to_string));
            }
            defined
        },
        ..Index::default()
    };
    for (path, file) in &parsed {
        let name = crate_of(path);
        index.collect(file, module_in(path, name), imports_in(file, name));
    }
    let indexed = parsed.len();
    // A file that names no `Api` can still call the crate's functions that
    // return one (`let nodes = helpers::nodes(client); nodes.list(..)`), or
    // use one a struct of the crate holds.
    let helpers: Vec<String> = index
        .returns
        .keys()
        .map(|name| format!("{name}("))
        // Or read an `Api` field of the crate's structs (`self.0.configmaps`).
        .chain(
            index
                .fields
                .keys()
                .filter(|name| !name.starts_with(|c: char| c.is_ascii_digit()))
                .map(|name| format!(".{name}")),
        )
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
    // Down the modules named by the files read from `from` on, to those
    // that call none.
    let read_named = |parsed: &mut Vec<_>, mut from: usize| loop {
        let named: Vec<_> = named_modules(files, &crates, &parsed[from..])
            .filter(|(path, _, _)| !parsed.iter().any(|(p, _)| p == path))
            .filter_map(|(path, text, _)| parse(path, text))
            .collect();
        if named.is_empty() {
            break;
        }
        from = parsed.len();
        parsed.extend(named);
    };
    read_named(&mut parsed, 0);
    for (path, file) in &parsed[indexed..] {
        let name = crate_of(path);
        index.collect(file, module_in(path, name), imports_in(file, name));
    }

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
                    // The crate declares the kind whose CRD it ships.
                    known.foreign = false;
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
                foreign: false,
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
    let mut analysis = Analysis {
        kinds: own
            .iter()
            .map(|k| (k.group.clone(), k.plural.clone()))
            .collect(),
        ..Analysis::default()
    };
    let mut deferred = Vec::new();
    // Each file's `use`s, read once for both walks.
    let mut file_imports: Vec<HashMap<String, Vec<String>>> = parsed
        .iter()
        .map(|(path, file)| imports_in(file, crate_of(path)))
        .collect();
    for ((path, file), imports) in parsed.iter().zip(&file_imports) {
        let mut walker = FileWalker {
            cx: Typing::new(path, &index, own, imports, crate_of(path)),
            analysis: &mut analysis,
            deferred: &mut deferred,
            instantiate: None,
        };
        walker.visit_file(file);
    }
    // The requests of generic functions, with the kinds their callers give.
    // A generic caller that passes on its own type parameter makes them
    // its own requests, for its callers in the next round.
    if !deferred.is_empty() {
        let calls_before = analysis.calls.len();
        let mut round = deferred.clone();
        // A request lifted through two callers of one name (a function and
        // its `#[cfg(not(..))]` twin), at any depth, is kept for each.
        let mut seen: HashSet<(String, String, PathBufLine, Vec<PathBufLine>)> = HashSet::new();
        for _ in 0..GENERIC_DEPTH {
            if round.is_empty() {
                break;
            }
            let mut by_function: HashMap<String, Vec<Deferred>> = HashMap::new();
            for d in round {
                by_function.entry(d.function.clone()).or_default().push(d);
            }
            // A file that names no `Api` can still call a generic function
            // that makes requests, with the kind they wait for, and take
            // the value it passes from a module that names none either.
            let callers: Vec<(&Path, syn::File)> = files
                .iter()
                .filter(|(path, text, _)| {
                    !parsed.iter().any(|(p, _)| p == path)
                        && by_function.keys().any(|name| {
                            text.contains(&format!("{name}("))
                                || text.contains(&format!("{name}::<"))
                        })
                })
                .filter_map(|(path, text, _)| parse(path, text))
                .collect();
            if !callers.is_empty() {
                let before = parsed.len();
                parsed.extend(callers);
                read_named(&mut parsed, before);
                for (path, file) in &parsed[before..] {
                    let name = crate_of(path);
                    let imports = imports_in(file, name);
                    index.collect(file, module_in(path, name), imports.clone());
                    file_imports.push(imports);
                }
            }
            let mut lifted = Vec::new();
            for ((path, file), imports) in parsed.iter().zip(&file_imports) {
                let mut walker = FileWalker {
                    cx: Typing::new(path, &index, own, imports, crate_of(path)),
                    analysis: &mut analysis,
                    deferred: &mut lifted,
                    instantiate: Some(&by_function),
                };
                walker.visit_file(file);
            }
            round = lifted
                .into_iter()
                .filter(|d| {
                    let at = (d.location.file.clone(), d.location.line, d.location.column);
                    let via = d
                        .through
                        .iter()
                        .map(|t| (t.file.clone(), t.line, t.column))
                        .collect();
                    seen.insert((d.function.clone(), d.generic.clone(), at, via))
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
            if called.may_call(&d.function, d.associated) {
                analysis.unchecked.push(Unchecked {
                    location: d.location,
                    function: d.function,
                    via: d.via,
                    gated: None,
                    unknown: Unknown::Kind,
                    resource: None,
                    dependency: None,
                    applies: false,
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
    // A controller that owns a stream (`owns_shared_stream(..)`) owns kinds
    // its calls do not show: every kind may be one it makes.
    if !files
        .iter()
        .any(|(_, text, _)| text.contains("owns_stream") || text.contains("owns_shared_stream"))
    {
        applies_to_what_it_reads(&mut analysis.calls, &analysis.kinds);
    }
    analysis.calls.sort();
    analysis.calls.dedup();
    Some(analysis)
}

/// A server-side apply's `create` on a kind the code watches (a cache of
/// pods it annotates) and no controller of it owns is one a rule may grant
/// and none has to: the objects it applies to are those it read. On a kind
/// it owns, or never reads, the first apply creates the object. The
/// crate's own kinds are decided where they are applied (a child made
/// with an owner reference needs its `create`).
fn applies_to_what_it_reads(calls: &mut [Call], own: &[(String, String)]) {
    let kind = |c: &Call| (c.group.clone(), c.resource.clone());
    let watched: HashSet<(String, String)> = calls
        .iter()
        .filter(|c| c.verb == "watch" && !c.via.starts_with("Controller::owns"))
        .map(kind)
        .collect();
    let owned: HashSet<(String, String)> = calls
        .iter()
        .filter(|c| c.verb == "watch" && c.via.starts_with("Controller::owns"))
        .map(kind)
        .collect();
    let patched: std::collections::BTreeSet<(Location, String, String)> = calls
        .iter()
        .filter(|c| c.verb == "patch")
        .map(|c| (c.location.clone(), c.group.clone(), c.resource.clone()))
        .collect();
    for call in calls.iter_mut() {
        if call.verb == "create"
            && !call.optional
            && !own.contains(&kind(call))
            && patched.contains(&(
                call.location.clone(),
                call.group.clone(),
                call.resource.clone(),
            ))
            && watched.contains(&kind(call))
            && !owned.contains(&kind(call))
        {
            call.optional = true;
        }
    }
}

/// Whether `text` publishes an event, or gives a recorder to a function
/// that may (`report_controller_reconciled(&event_recorder, ..)`).
fn publishes(text: &str) -> bool {
    struct Given(bool);
    impl<'ast> Visit<'ast> for Given {
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            self.0 |= call.method == "publish" || call.args.iter().any(names_recorder);
            syn::visit::visit_expr_method_call(self, call);
        }
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            // Not `Arc::new(recorder)`, which keeps it.
            let keeps = matches!(&*call.func, syn::Expr::Path(p)
                if p.path.segments.last().is_some_and(|s| s.ident == "new"));
            self.0 |= !keeps && call.args.iter().any(names_recorder);
            syn::visit::visit_expr_call(self, call);
        }
    }
    fn names_recorder(expr: &syn::Expr) -> bool {
        match expr {
            syn::Expr::Reference(r) => names_recorder(&r.expr),
            syn::Expr::MethodCall(m) if m.method == "clone" => names_recorder(&m.receiver),
            syn::Expr::Path(p) => p.path.segments.last().is_some_and(|s| {
                s.ident
                    .to_string()
                    .to_ascii_lowercase()
                    .contains("recorder")
            }),
            syn::Expr::Field(f) => matches!(&f.member, syn::Member::Named(n)
                if n.to_string().to_ascii_lowercase().contains("recorder")),
            _ => false,
        }
    }
    if text.contains(".publish(") {
        return true;
    }
    if !text.contains("ecorder") {
        return false;
    }
    let mut given = Given(false);
    if let Ok(file) = syn::parse_file(text) {
        given.visit_file(&file);
    }
    given.0
}

/// The files of `files` that define a function the files of `parsed` call
/// by a module path (`secret::new(..)`): what it returns
/// is read there, though the module names no `Api`.
fn named_modules<'f>(
    files: &'f [CrateFile<'f>],
    crates: &HashMap<&Path, &str>,
    parsed: &[(&Path, syn::File)],
) -> impl Iterator<Item = &'f CrateFile<'f>> {
    let named: HashSet<(Vec<String>, String)> = parsed
        .iter()
        .flat_map(|(path, file)| module_calls(file, &imports_in(file, crates.get(path).copied())))
        .collect();
    files.iter().filter(move |(path, text, _)| {
        if named.is_empty() {
            return false;
        }
        let module = module_in(path, crates.get(path).copied());
        named.iter().any(|(m, name)| {
            (module.ends_with(m) || (!module.is_empty() && m.ends_with(&module)))
                && text.contains(&format!("fn {name}"))
        })
    })
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
