//! Which requests each call sends: the verbs and resources of `Api`'s
//! methods in the project's kube release, of the runtime's and kube-runtime's
//! helpers, and of rsop-runtime's manager and reconciler.

use std::collections::HashSet;

use syn::spanned::Spanned;
use syn::visit::Visit;

use super::kinds::{ApiKind, Scope, Target, Typing, start};
use super::reach::{Owner, TraitImpl};
use super::syntax::{
    api_constructor_call, flag_condition, macro_exprs, receiver_text, strip_wrappers, turbofish,
    type_name, type_parameter, variable,
};
use super::{Analysis, Call, Unchecked, Unknown};
use crate::manifests::diagnostics::Location;
use crate::project::names;

/// The request methods of `Api<K>` in kube 0.70 to 5.0 (no release
/// renamed or removed one): name -> (verbs, subresource).
pub(crate) fn method_requests(
    method: &str,
) -> Option<(&'static [&'static str], Option<&'static str>)> {
    Some(match method {
        "get"
        | "get_opt"
        | "get_with"
        | "get_metadata"
        | "get_metadata_opt"
        | "get_metadata_with"
        | "get_metadata_opt_with" => (&["get"], None),
        "list" | "list_metadata" => (&["list"], None),
        "watch" | "watch_metadata" => (&["watch"], None),
        "create" => (&["create"], None),
        "replace" => (&["update"], None),
        // `restart` patches a workload's pod template; `cordon` and
        // `uncordon` a node's `spec.unschedulable`.
        "patch" | "patch_metadata" | "restart" | "cordon" | "uncordon" => (&["patch"], None),
        "delete" => (&["delete"], None),
        "delete_collection" => (&["deletecollection"], None),
        "get_status" => (&["get"], Some("status")),
        "patch_status" => (&["patch"], Some("status")),
        "replace_status" => (&["update"], Some("status")),
        "get_scale" => (&["get"], Some("scale")),
        "patch_scale" => (&["patch"], Some("scale")),
        "replace_scale" => (&["update"], Some("scale")),
        "get_ephemeral_containers" => (&["get"], Some("ephemeralcontainers")),
        "patch_ephemeral_containers" => (&["patch"], Some("ephemeralcontainers")),
        "replace_ephemeral_containers" => (&["update"], Some("ephemeralcontainers")),
        "get_resize" => (&["get"], Some("resize")),
        "patch_resize" => (&["patch"], Some("resize")),
        "replace_resize" => (&["update"], Some("resize")),
        "create_token_request" => (&["create"], Some("token")),
        "get_approval" => (&["get"], Some("approval")),
        "patch_approval" => (&["patch"], Some("approval")),
        "evict" => (&["create"], Some("eviction")),
        "logs" | "log_stream" => (&["get"], Some("log")),
        // kube-rs opens these as a WebSocket `GET`, authorized as `get`, and
        // from Kubernetes 1.35 as `create` too.
        "exec" => (&["get", "create"], Some("exec")),
        "attach" => (&["get", "create"], Some("attach")),
        "portforward" => (&["get", "create"], Some("portforward")),
        // `Entry::commit` creates a missing object and replaces one found.
        "entry" => (&["get", "create", "update"], None),
        _ => return None,
    })
}

/// Functions of kube and the standard library that take an `Api` and send
/// no request of their own (`Arc::new(api)`, `Some(api)`), or whose
/// requests are read above.
const KNOWN_FUNCTIONS: &[&str] = &[
    "new",
    "Some",
    "Ok",
    "Box",
    "from",
    "clone",
    "drop",
    "identity",
    "reflector",
    "stream",
    "into",
];

/// Types of kube and of the crates rsop reads whose functions take a
/// `Client` and send nothing of their own, or what is read above.
const KNOWN_CLIENT_TAKERS: &[&str] = &[
    "Api",
    "Recorder",
    "Reporter",
    "Discovery",
    "Controller",
    "LeaseManager",
    "LeaseManagerBuilder",
    "LeaseLock",
    // Wrappers that hold the client for code rsop reads where it takes
    // it out again: std's, and web frameworks' shared state (actix-web's
    // `Data`, axum's `Extension` and `State`).
    "Arc",
    "Rc",
    "Box",
    "Mutex",
    "RwLock",
    "RefCell",
    "Cell",
    "Some",
    "Ok",
    "Data",
    "Extension",
    "State",
    "Context",
    "Manager",
    "Sharder",
    // kube's discovery (`discovery::pinned_kind(&client, &gvk)`,
    // `oneshot::group(..)`): it asks the API server what it serves, which
    // every authenticated user may (`system:discovery`).
    "discovery",
    "oneshot",
];

/// The methods of an `Api` value that send no request: its accessors, the
/// 5.0 scope changes, and the traits it implements.
const LOCAL_METHODS: &[&str] = &[
    "as_ref",
    "borrow",
    "clone",
    "constrain",
    "constrain_default",
    "fmt",
    "into",
    "into_client",
    "namespace",
    "resource_url",
    "to_owned",
    "unconstrain",
];

/// The one kind that has `method` (`create_token_request` is
/// `Api<ServiceAccount>`'s alone).
fn only_kind(method: &str) -> Option<&'static str> {
    Some(match method {
        "create_token_request" => "ServiceAccount",
        "evict"
        | "logs"
        | "log_stream"
        | "exec"
        | "attach"
        | "portforward"
        | "get_ephemeral_containers"
        | "patch_ephemeral_containers"
        | "replace_ephemeral_containers"
        | "get_resize"
        | "patch_resize"
        | "replace_resize" => "Pod",
        "cordon" | "uncordon" => "Node",
        _ => return None,
    })
}

/// The verbs of a watch: the initial list and the watch.
pub(super) const WATCH: &[&str] = &["list", "watch"];

/// The requests of a function body.
pub(super) struct Requests<'w, 'a> {
    pub(super) cx: &'w Typing<'a>,
    pub(super) analysis: &'w mut Analysis,
    /// Requests on the `Api` of a type parameter, waiting for its callers.
    pub(super) deferred: &'w mut Vec<Deferred>,
    pub(super) scope: &'w Scope,
    /// The conditions on the function's `bool` parameters the visit is
    /// under (see [`Deferred::flags`]).
    pub(super) flags: Vec<(usize, bool)>,
}

impl<'ast> Visit<'ast> for Requests<'_, '_> {
    fn visit_expr_if(&mut self, e: &'ast syn::ExprIf) {
        let flag = flag_condition(&e.cond, &self.cx.flags);
        visit_if(self, e, flag, |v| &mut v.flags);
    }
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // An owner reference written as JSON (`json!({"ownerReferences":
        // [{.., "blockOwnerDeletion": true}]})`), on an owner whose kind is
        // a value, as by hand.
        if mac.path.segments.last().is_some_and(|s| s.ident == "json")
            && mac
                .tokens
                .to_string()
                .replace(char::is_whitespace, "")
                .contains("\"blockOwnerDeletion\":true")
        {
            self.analysis.owner_references = true;
        }
        for expr in macro_exprs(mac).iter().flatten() {
            self.visit_expr(expr);
        }
    }
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let method = call.method.to_string();
        let via = |receiver: &str| format!("{receiver}.{method}");
        // `client.request(Request::new(path).get(..))`: a request built by
        // hand, noted (reqwest's `request(method, url)` takes two).
        if matches!(
            method.as_str(),
            "request" | "request_text" | "request_status" | "request_stream" | "request_events"
        ) && call.args.len() == 1
            && self.is_client(&call.receiver)
        {
            self.unchecked(
                &call.method,
                via(&receiver_text(&call.receiver)),
                Unknown::Raw,
                None,
            );
        }
        if let Some((verbs, sub)) = method_requests(&method)
            && let Some(kind) = self.cx.kind_of(&call.receiver, self.scope)
        {
            // A method only one kind has tells an inferred `Api`'s kind.
            let kind = match (kind, only_kind(&method)) {
                (ApiKind::Inferred(cluster), Some(only)) => ApiKind::Known(
                    Box::new(syn::Type::Path(syn::TypePath {
                        qself: None,
                        path: syn::Ident::new(only, proc_macro2::Span::call_site()).into(),
                    })),
                    cluster,
                ),
                (ApiKind::Inferred(cluster), None) => match self.sent_kind(&method, &call.args) {
                    Some(sent) => ApiKind::Known(Box::new(sent), cluster),
                    None => ApiKind::Inferred(cluster),
                },
                (kind, _) => kind,
            };
            let first = self.analysis.calls.len();
            let remote = variable(&call.receiver)
                .is_some_and(|v| self.scope.remote_apis.contains(&v))
                || api_constructor_call(&call.receiver)
                    .and_then(variable)
                    .is_some_and(|c| self.scope.remote_clients.contains(&c));
            let via = via(&receiver_text(&call.receiver));
            self.push(&kind, verbs, sub, &call.method, via.clone());
            // A server-side apply creates the object it does not find, which
            // the API server then authorizes as a `create` too. (A
            // subresource's apply never creates its object.)
            if method == "patch" && applies(&call.args, &self.scope.applies) {
                let child = makes_child(&call.args, &self.scope.children);
                self.apply_creates(&kind, child, &call.method, via);
            }
            if remote {
                for call in &mut self.analysis.calls[first..] {
                    call.remote = true;
                }
            }
        } else if let Some(verb) = match method.as_str() {
            "get_subresource" => Some("get"),
            "create_subresource" => Some("create"),
            "patch_subresource" => Some("patch"),
            "replace_subresource" => Some("update"),
            _ => None,
        } && let Some(kind) = self.cx.kind_of(&call.receiver, self.scope)
        {
            let sub = match call.args.first() {
                Some(syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                })) => Some(s.value()),
                _ => None,
            };
            match sub {
                Some(sub) => self.push(
                    &kind,
                    &[verb],
                    Some(&sub),
                    &call.method,
                    via(&receiver_text(&call.receiver)),
                ),
                None => self.unchecked(
                    &call.method,
                    via(&receiver_text(&call.receiver)),
                    Unknown::Subresource,
                    None,
                ),
            }
        } else if matches!(
            method.as_str(),
            "owns" | "watches" | "owns_with" | "watches_with"
        ) && let Some(api) = call.args.first()
        {
            // `.owns::<Pod>(Api::namespaced(client, ns), ..)`: the kind is
            // the turbofish's.
            let kind = match (
                self.cx.kind_of(api, self.scope),
                turbofish(call.turbofish.as_ref()),
            ) {
                (Some(ApiKind::Inferred(cluster)), Some(written)) => {
                    Some(ApiKind::Known(Box::new(written), cluster))
                }
                (kind, _) => kind,
            };
            match kind {
                Some(kind) => self.push(
                    &kind,
                    WATCH,
                    None,
                    &call.method,
                    format!("Controller::{method}"),
                ),
                // A controller's watch on an `Api` whose kind the code does
                // not show is named, not dropped (another builder's `owns`
                // is none of rsop's business).
                None if method.ends_with("_with") || built_by_controller(&call.receiver) => self
                    .unchecked(
                        &call.method,
                        format!("Controller::{method}"),
                        Unknown::Kind,
                        None,
                    ),
                None => {}
            }
        } else if let Some(runtime) = self.runtime_request(call) {
            let (kind, verbs, sub, via) = runtime;
            self.push(&kind, verbs, sub, &call.method, via.clone());
            if method == "apply" {
                // Server-side apply: a `create` too when the object is not there yet.
                let child = makes_child(&call.args, &self.scope.children);
                self.apply_creates(&kind, child, &call.method, via.clone());
            }
            if method == "write_status" {
                // Each condition transition is announced with an event, in the object's namespace.
                self.runtime_event(&call.method);
            }
        } else if !LOCAL_METHODS.contains(&method.as_str())
            && !self.cx.index.functions.contains_key(&method)
            && !self.guessed_field(&call.receiver)
            && let Some(kind @ (ApiKind::Known(..) | ApiKind::Dynamic(..))) =
                self.cx.kind_of(&call.receiver, self.scope)
        {
            // A method of a kube release newer than this table, or of a
            // trait of another crate's for `Api`: its request is not known.
            // (The crate's own are walked where they are written.)
            let resource = self.resource_of(&kind);
            self.unchecked(
                &call.method,
                via(&receiver_text(&call.receiver)),
                Unknown::Method,
                resource,
            );
        }
        syn::visit::visit_expr_method_call(self, call);
    }

    /// `OwnerReference { block_owner_deletion: Some(true), .. }` written by
    /// hand: its owner's kind is a value the code computes.
    fn visit_expr_struct(&mut self, e: &'ast syn::ExprStruct) {
        if e.path
            .segments
            .last()
            .is_some_and(|s| s.ident == "OwnerReference")
            && e.fields
                .iter()
                .any(|f| matches!(&f.member, syn::Member::Named(n) if n == "block_owner_deletion"))
        {
            self.analysis.owner_references = true;
        }
        syn::visit::visit_expr_struct(self, e);
    }
    /// An awaited function or method of a dependency rsop has not read
    /// may send requests with a client of its own (a framework's
    /// `initialize_operator(..).await`, or `client.apply_patch(..).await`
    /// on its client type): noted, so that the requests it makes are not
    /// left out in silence.
    fn visit_expr_await(&mut self, e: &'ast syn::ExprAwait) {
        let unread = match &*e.base {
            syn::Expr::Call(call) => match &*call.func {
                syn::Expr::Path(p)
                    if !self.crates_function(
                        &p.path,
                        &p.path
                            .segments
                            .last()
                            .map(|s| s.ident.to_string())
                            .unwrap_or_default(),
                    ) && !self.gives_away(&call.args) =>
                {
                    self.unread_crate(&p.path).map(|krate| {
                        (
                            krate.to_string(),
                            path_text(&p.path),
                            p.path.segments.last().map(|s| s.ident.span()),
                        )
                    })
                }
                _ => None,
            },
            // A method is noted given a `Client` too: no other note names
            // a method of another crate's type.
            syn::Expr::MethodCall(m) => match self.cx.type_of(&m.receiver, self.scope) {
                Some(syn::Type::Path(t)) => self.unread_crate(&t.path).map(|krate| {
                    (
                        krate.to_string(),
                        format!("{}.{}", receiver_text(&m.receiver), m.method),
                        Some(m.method.span()),
                    )
                }),
                _ => None,
            },
            _ => None,
        };
        if let Some((krate, via, Some(span))) = unread {
            self.analysis.unchecked.push(Unchecked {
                location: self.cx.location(&span),
                function: self.cx.function.clone(),
                via,
                gated: None,
                unknown: Unknown::Crate,
                resource: None,
                dependency: Some(krate),
                applies: false,
            });
        }
        syn::visit::visit_expr_await(self, e);
    }
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*call.func
            && let Some(last) = p.path.segments.last()
        {
            let name = last.ident.to_string();
            let segments = p.path.segments.len();
            let first = call.args.first();
            match name.as_str() {
                // `await_condition` watches the one object.
                "watcher" | "metadata_watcher" | "await_condition" => {
                    match first.and_then(|a| self.cx.kind_of(a, self.scope)) {
                        Some(kind) => self.push(&kind, WATCH, None, &last.ident, name.clone()),
                        // kube-runtime's watch on an `Api` whose kind the
                        // code does not show (one another crate made) is
                        // named, not dropped.
                        None if first.is_some() && !self.cx.index.functions.contains_key(&name) => {
                            self.unchecked(&last.ident, name.clone(), Unknown::Kind, None);
                        }
                        None => {}
                    }
                }
                "new"
                    if segments >= 2
                        && self.cx.names_type(
                            &p.path
                                .segments
                                .iter()
                                .take(segments - 1)
                                .cloned()
                                .collect::<Vec<_>>(),
                            "Controller",
                        ) =>
                {
                    let kind = first.and_then(|a| self.cx.kind_of(a, self.scope));
                    if kind.is_none() && first.is_some() {
                        self.unchecked(&last.ident, "Controller::new".into(), Unknown::Kind, None);
                    }
                    if let Some(kind) = kind {
                        // `Controller::new(Api::all(client), ..)` in a function
                        // that returns `Controller<K>`: the kind is `K`.
                        // `Controller::<K>::new(Api::all(client), ..)`: `K`.
                        let written = match &p.path.segments[segments - 2].arguments {
                            syn::PathArguments::AngleBracketed(args) => turbofish(Some(args)),
                            _ => None,
                        };
                        let kind =
                            match (kind, written.or_else(|| self.returned_kind("Controller"))) {
                                (ApiKind::Inferred(cluster), Some(returned)) => {
                                    ApiKind::Known(Box::new(returned), cluster)
                                }
                                (kind, _) => kind,
                            };
                        self.push(&kind, WATCH, None, &last.ident, "Controller::new".into());
                    }
                }
                // A Recorder sends events only when it publishes one: in a
                // crate that never calls `publish` it sends none.
                "new"
                    if segments >= 2
                        && p.path.segments[segments - 2].ident == "Recorder"
                        && self.cx.index.publishes =>
                {
                    let location = self.cx.location(&last.ident);
                    // A `Recorder::new` given the object's reference (kube-runtime
                    // 0.95 and before) only creates events; one given none (0.98
                    // on) patches an event that repeats into a series.
                    let verbs: &[&str] = if call.args.len() >= 3 {
                        &["create"]
                    } else {
                        &["create", "patch"]
                    };
                    for &verb in verbs {
                        self.analysis.calls.push(Call {
                            group: "events.k8s.io".into(),
                            resource: "events".into(),
                            verb,
                            cluster: false,
                            objects_namespace: true,
                            location: location.clone(),
                            function: self.cx.function.clone(),
                            via: "Recorder::new".into(),
                            // A recorder bound in the function that only
                            // publishes with it ends with the function: its
                            // cache of events, which turns a repeat into a
                            // patch, never sees one.
                            optional: verb == "patch"
                                && self.scope.passing_recorders.contains(&start(call)),
                            remote: false,
                            site: None,
                            gated: None,
                            through: Vec::new(),
                        });
                    }
                }
                // kube-lease-manager reads, creates and patches its Lease
                // (in its namespace), and deletes it when released;
                // kube-leader-election's `LeaseLock` reads, creates and
                // patches it.
                "new"
                    if segments >= 2
                        && matches!(
                            p.path.segments[segments - 2].ident.to_string().as_str(),
                            "LeaseManagerBuilder" | "LeaseManager" | "LeaseLock"
                        ) =>
                {
                    let lock = p.path.segments[segments - 2].ident == "LeaseLock";
                    let verbs: &[(&str, bool)] = if lock {
                        &[("get", false), ("create", false), ("patch", false)]
                    } else {
                        &[
                            ("get", false),
                            ("create", false),
                            ("patch", false),
                            ("delete", true),
                        ]
                    };
                    let via = if lock {
                        "kube-leader-election"
                    } else {
                        "kube-lease-manager"
                    };
                    for &(verb, optional) in verbs {
                        self.fixed(
                            "coordination.k8s.io",
                            "leases",
                            verb,
                            false,
                            optional,
                            &last.ident,
                            via,
                        );
                    }
                }
                // rsop-runtime's manager: leader election through a Lease in its namespace (the
                // shard Leases' watch too, when it is sharded), and the metrics server's
                // authentication and authorization of each scrape.
                "new"
                    if segments >= 2
                        && p.path.segments[segments - 2].ident == "Manager"
                        && self.cx.runtime =>
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
                "can_list" if self.cx.runtime => {
                    if let Some(kind) = first.and_then(|a| self.cx.kind_of(a, self.scope)) {
                        self.push(&kind, &["list"], None, &last.ident, "can_list".into());
                    }
                }
                "finalizer" => {
                    if let Some(kind) = first.and_then(|a| self.cx.kind_of(a, self.scope)) {
                        self.push(&kind, &["patch"], None, &last.ident, "finalizer".into());
                    }
                }
                // A function of another crate given an `Api` (a helper
                // library's `create_or_update(&api, ..)`) sends requests
                // rsop cannot read: noted, not left out.
                _ if !self.crates_function(&p.path, &name)
                    && !name.starts_with(|c: char| c.is_ascii_uppercase()) =>
                {
                    let known = KNOWN_FUNCTIONS.contains(&name.as_str());
                    let given = call.args.iter().filter(|_| !known).find_map(|arg| {
                        self.cx
                            .kind_of(arg, self.scope)
                            .filter(|k| matches!(k, ApiKind::Known(..) | ApiKind::Dynamic(..)))
                    });
                    // A `Client` given to another crate's function (a
                    // leader elector, a framework's runtime) sends what
                    // that crate sends.
                    let client = call.args.iter().any(|arg| self.is_client(arg));
                    if given.is_none()
                        && client
                        && !matches!(
                            name.as_str(),
                            "clone" | "drop" | "from" | "into" | "identity"
                        )
                        && (segments < 2
                            || !KNOWN_CLIENT_TAKERS.contains(
                                &p.path.segments[segments - 2].ident.to_string().as_str(),
                            ))
                    {
                        self.unchecked(&last.ident, path_text(&p.path), Unknown::Client, None);
                    }
                    if let Some(kind) = given {
                        let resource = self.resource_of(&kind);
                        self.unchecked(
                            &last.ident,
                            path_text(&p.path),
                            Unknown::Function,
                            resource,
                        );
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
pub(super) const RUNTIME_MANAGER_REQUESTS: &[(&str, &str, &str, bool, bool)] = &[
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

/// The `Patch` a `patch` call sends: `&Patch::Merge(..)` and the like.
fn patch_value(arg: &syn::Expr) -> Option<(&syn::PathSegment, Option<&syn::Expr>)> {
    let arg = match arg {
        syn::Expr::Reference(r) => &*r.expr,
        other => other,
    };
    let syn::Expr::Call(c) = arg else {
        return None;
    };
    let syn::Expr::Path(p) = &*c.func else {
        return None;
    };
    let segments: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
    match segments.as_slice() {
        [.., patch, variant] if patch.ident == "Patch" => Some((variant, c.args.first())),
        _ => None,
    }
}

/// Whether a path starting with `name` is kube's (`kube::Client`,
/// `kube_client::Client`).
fn is_kube_crate(name: &str) -> bool {
    name == "kube" || name == "kube_client"
}

/// Whether `expr` is a controller being built: a chain of methods on
/// `Controller::new(..)`.
fn built_by_controller(expr: &syn::Expr) -> bool {
    match expr {
        syn::Expr::MethodCall(m) => built_by_controller(&m.receiver),
        syn::Expr::Call(c) => matches!(&*c.func, syn::Expr::Path(p)
            if p.path.segments.len() >= 2
                && p.path.segments[p.path.segments.len() - 2].ident == "Controller"),
        _ => false,
    }
}

impl Requests<'_, '_> {
    /// The `create` of a server-side apply, which the API server
    /// authorizes when the object is not there yet. The object of one of
    /// the crate's own kinds is the one its controller reconciles, there
    /// already: a rule may grant that `create`, none has to. The objects it
    /// makes (a Deployment, a Secret) are created by their first apply.
    /// `child`: the object applied is made with an owner reference.
    fn apply_creates(&mut self, kind: &ApiKind, child: bool, method: &syn::Ident, via: String) {
        let (calls, deferred, unchecked) = (
            self.analysis.calls.len(),
            self.deferred.len(),
            self.analysis.unchecked.len(),
        );
        self.push(kind, &["create"], None, method, via);
        // Of a kind rsop cannot tell: it may create whatever it is.
        for u in &mut self.analysis.unchecked[unchecked..] {
            u.applies = true;
        }
        // The crate's own kind is one its users make, unless the object
        // applied is made as another object's child (with an owner
        // reference).
        for call in &mut self.analysis.calls[calls..] {
            call.optional = self.cx.is_own(&call.group, &call.resource) && !child;
        }
        // A generic function's: decided by the kind each caller gives.
        for call in &mut self.deferred[deferred..] {
            call.optional = true;
        }
    }
}

impl Requests<'_, '_> {
    /// Whether a call gives away a `Client` or an `Api`, which is noted
    /// for that already.
    fn gives_away(&self, args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>) -> bool {
        args.iter()
            .any(|a| self.is_client(a) || self.cx.kind_of(a, self.scope).is_some())
    }

    /// The dependency rsop has not read that `path` names a function or
    /// type of, directly or through a `use`.
    fn unread_crate(&self, path: &syn::Path) -> Option<&str> {
        let first = path.segments.first()?.ident.to_string();
        let krate = match self.cx.imports.get(&first) {
            Some(imported) => imported.first()?.clone(),
            None if path.segments.len() >= 2 => first,
            None => return None,
        };
        self.cx.index.unread.get(&krate).map(String::as_str)
    }

    /// Whether `path`, a call of `name`, is of one of the crate's
    /// functions: one of the name, through a type the crate implements it
    /// for when the path names a type (`MutatingWebhook::new` of another
    /// crate is not the crate's `Widget::new`).
    fn crates_function(&self, path: &syn::Path, name: &str) -> bool {
        let segments = path.segments.len();
        let qualifier = (segments >= 2).then(|| path.segments[segments - 2].ident.to_string());
        // Defined in a file the walk does not read (one that names kube
        // only through a prelude): by a type or function of the crate.
        match &qualifier {
            Some(q) if q.starts_with(|c: char| c.is_ascii_uppercase()) && self.cx.defines(q) => {
                return true;
            }
            None if self.cx.defines(name) => return true,
            _ => {}
        }
        let Some(owners) = self.cx.index.functions.get(name) else {
            return false;
        };
        if segments < 2 {
            return true;
        }
        let qualifier = path.segments[segments - 2].ident.to_string();
        // `R::get_api(..)` of a type parameter is its trait's.
        if qualifier == "Self"
            || !qualifier.starts_with(|c: char| c.is_ascii_uppercase())
            || self.cx.generics.contains(&qualifier)
        {
            return true;
        }
        owners.iter().any(|owner| owner.last() == Some(&qualifier))
            || self.cx.imports.get(&qualifier).is_some_and(|path| {
                path.first()
                    .is_some_and(|first| matches!(first.as_str(), "crate" | "self" | "super"))
            })
    }

    /// The kind rustc infers for an `Api` written without one from the
    /// object a call sends: `create(&pp, &secret)`, `replace(name, &pp,
    /// &obj)`, `patch(name, &pp, &Patch::Json::<T>(..))` or
    /// `&Patch::Apply(&obj)` with `obj`'s type shown.
    fn sent_kind(
        &self,
        method: &str,
        args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
    ) -> Option<syn::Type> {
        let typed = |expr: &syn::Expr| {
            self.cx
                .type_of(expr, self.scope)
                .filter(|ty| self.cx.target(ty).is_some() || type_parameter(ty).is_some())
        };
        match method {
            "create" => typed(args.iter().nth(1)?),
            "replace" | "replace_status" => typed(args.iter().nth(2)?),
            "patch" | "patch_status" => {
                let (variant, value) = patch_value(args.iter().nth(2)?)?;
                if let syn::PathArguments::AngleBracketed(a) = &variant.arguments
                    && let Some(syn::GenericArgument::Type(ty)) = a.args.first()
                {
                    return Some(ty.clone());
                }
                typed(value?)
            }
            _ => None,
        }
    }

    /// `K` of the function's return type when it is `wrapper<K>` (or a
    /// `Result` of one).
    fn returned_kind(&self, wrapper: &str) -> Option<syn::Type> {
        let output = self.cx.output.as_ref()?;
        let (name, args) = type_name(super::syntax::unwrap_result(output))?;
        match args.as_slice() {
            [kind] if name == wrapper => Some(kind.clone()),
            _ => None,
        }
    }

    /// Whether `expr` is a field (`task.spec.data_sets`) of a struct the
    /// code does not show, or of another crate's: it is taken for an `Api`
    /// by its name alone, and a method no `Api` has (`iter`, `is_empty`)
    /// shows it is something else.
    fn guessed_field(&self, expr: &syn::Expr) -> bool {
        match expr {
            syn::Expr::Reference(r) => self.guessed_field(&r.expr),
            syn::Expr::Paren(p) => self.guessed_field(&p.expr),
            syn::Expr::MethodCall(m)
                if matches!(m.method.to_string().as_str(), "clone" | "as_ref") =>
            {
                self.guessed_field(&m.receiver)
            }
            syn::Expr::Field(f) => {
                let syn::Member::Named(name) = &f.member else {
                    return false;
                };
                match self
                    .cx
                    .type_of(&f.base, self.scope)
                    .as_ref()
                    .and_then(type_name)
                {
                    Some((owner, args)) => self
                        .cx
                        .with_field(&owner, &args, &name.to_string())
                        .is_none(),
                    None => true,
                }
            }
            _ => false,
        }
    }

    /// Whether `expr` is a `kube::Client`: a value of that type, or, where
    /// its type is not shown, one named `client` (`ctx.client.clone()`) in
    /// a file that imports kube. A database's or a registry's `Client` is
    /// not one.
    fn is_client(&self, expr: &syn::Expr) -> bool {
        match expr {
            syn::Expr::Reference(r) => self.is_client(&r.expr),
            syn::Expr::Paren(p) => self.is_client(&p.expr),
            syn::Expr::MethodCall(m) if m.method == "clone" => self.is_client(&m.receiver),
            syn::Expr::Field(f) => match self.cx.type_of(expr, self.scope) {
                Some(ty) => self.is_kube_client_type(&ty),
                None => {
                    matches!(&f.member, syn::Member::Named(n) if n == "client")
                        && self.imports_kube()
                }
            },
            syn::Expr::Path(p) => p.path.get_ident().is_some_and(|name| {
                match self.scope.values.get(&name.to_string(), start(p)) {
                    Some(ty) => self.is_kube_client_type(ty),
                    None => name == "client" && self.imports_kube(),
                }
            }),
            _ => false,
        }
    }

    /// Whether the file imports anything of kube's.
    fn imports_kube(&self) -> bool {
        self.cx
            .imports
            .values()
            .any(|path| path.first().is_some_and(|f| is_kube_crate(f)))
    }

    /// Whether `ty` is kube's `Client`: written `kube::Client`, or `Client`
    /// not imported from another crate here (a field's type may be written
    /// in another file).
    fn is_kube_client_type(&self, ty: &syn::Type) -> bool {
        if !super::reach::is_client_type(ty) {
            return false;
        }
        let syn::Type::Path(p) = strip_wrappers(ty) else {
            return false;
        };
        // kube's, also as another crate re-exports it
        // (`stackable_operator::kube::Client`).
        if p.path.segments.len() > 1 {
            return p
                .path
                .segments
                .iter()
                .any(|s| is_kube_crate(&s.ident.to_string()));
        }
        match self.cx.imports.get(&p.path.segments[0].ident.to_string()) {
            Some(path) => path.iter().any(|s| is_kube_crate(s)),
            None => true,
        }
    }

    /// The group and resource of an `Api` of `kind`, if the code shows it.
    fn resource_of(&self, kind: &ApiKind) -> Option<(String, String)> {
        match kind {
            ApiKind::Known(ty, _) => self.cx.target(ty).map(|t| (t.group, t.plural)),
            ApiKind::Dynamic(group, kind, plural, _) => Some((
                group.clone(),
                plural
                    .clone()
                    .unwrap_or_else(|| names::to_plural(&kind.to_ascii_lowercase())),
            )),
            ApiKind::Inferred(_) => None,
        }
    }

    pub(super) fn push(
        &mut self,
        kind: &ApiKind,
        verbs: &[&'static str],
        subresource: Option<&str>,
        at: &impl Spanned,
        via: String,
    ) {
        // In a trait's provided method, a request on the `Api` of the
        // trait's type parameter is sent with each kind its `impl`s give it
        // (`impl Collect<Node> for Info`).
        let cx = self.cx;
        if let ApiKind::Known(ty, cluster) = kind
            && let Some(ident) = type_parameter(ty)
            && let Some(name) = &cx.in_trait
            && let Some(generics) = cx.index.trait_generics.get(name)
            && let Some(place) = generics.iter().position(|g| ident == g)
        {
            let mut generic_impl = false;
            for TraitImpl { args, generics } in cx.index.trait_impls.get(name).into_iter().flatten()
            {
                match args.get(place) {
                    Some(arg)
                        if type_parameter(arg).is_none_or(|p| !generics.iter().any(|g| p == g)) =>
                    {
                        self.push(
                            &ApiKind::Known(Box::new(arg.clone()), *cluster),
                            verbs,
                            subresource,
                            at,
                            via.clone(),
                        );
                    }
                    // An `impl` generic in it too (`impl<K> Manager<K> for
                    // Runner<K>`): the kind its callers name
                    // (`Runner::<Widget>::run(..)`).
                    _ => generic_impl = true,
                }
            }
            if !generic_impl || !cx.generics.iter().any(|g| ident == g) {
                if generic_impl {
                    self.unchecked(at, via.clone(), Unknown::Kind, None);
                }
                return;
            }
        }
        let location = self.cx.location(at);
        // A request on the `Api` of a type parameter waits for its callers.
        if let ApiKind::Known(ty, _) = kind
            && let Some(ident) = type_parameter(ty)
            && self.cx.generics.iter().any(|g| ident == g)
        {
            self.deferred.push(Deferred {
                associated: self.cx.associated,
                function: self.cx.function.clone(),
                defined_in: self.cx.owner(),
                generic: ident.to_string(),
                owner: self.cx.owner_of(ident),
                verbs: verbs.to_vec(),
                subresource: subresource.map(str::to_string),
                location,
                via,
                optional: false,
                through: Vec::new(),
                flags: self.flags.clone(),
            });
            return;
        }
        let (target, cluster) = match kind {
            ApiKind::Known(ty, cluster) => (self.cx.target(ty), *cluster),
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
            // A kind written as a type rsop cannot read, or one rustc infers.
            let unknown = match kind {
                ApiKind::Known(ty, _) if self.cx.names_unread_type(ty) => Unknown::Type,
                _ => Unknown::Kind,
            };
            self.unchecked(at, via, unknown, None);
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
                function: self.cx.function.clone(),
                via: via.clone(),
                optional: false,
                remote: false,
                site: None,
                gated: None,
                through: Vec::new(),
            });
        }
    }

    /// The requests of a method of rsop-runtime's a controller calls: the kind, verbs and
    /// subresource, and what to call it in messages.
    ///
    /// - `reconciler.write_status(obj, ..)`: a `patch` of the kind's `status` (and an event);
    /// - `reconciler.apply(owner, desired, ..)`: a server-side apply of `desired`'s kind;
    /// - `manager.shard::<K>()`: the sharder lists, watches and labels the objects of `K`, and the
    ///   replica that has one hands it over with a `patch`.
    pub(super) fn runtime_request(
        &self,
        call: &syn::ExprMethodCall,
    ) -> Option<(
        ApiKind,
        &'static [&'static str],
        Option<&'static str>,
        String,
    )> {
        if !self.cx.runtime {
            return None;
        }
        let method = call.method.to_string();
        let receiver = || self.cx.type_of(&call.receiver, self.scope);
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
                    .cx
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
                let desired = self.cx.type_of(&call.args[1], self.scope);
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
    pub(super) fn runtime_event(&mut self, at: &impl Spanned) {
        let location = self.cx.location(at);
        self.analysis.calls.push(Call {
            group: "events.k8s.io".into(),
            resource: "events".into(),
            verb: "create",
            cluster: false,
            objects_namespace: true,
            location,
            function: self.cx.function.clone(),
            via: "Reconciler::write_status".into(),
            optional: false,
            remote: false,
            site: None,
            gated: None,
            through: Vec::new(),
        });
    }

    /// A call that is not checked, and why.
    fn unchecked(
        &mut self,
        at: &impl Spanned,
        via: String,
        unknown: Unknown,
        resource: Option<(String, String)>,
    ) {
        self.analysis.unchecked.push(Unchecked {
            location: self.cx.location(at),
            function: self.cx.function.clone(),
            via,
            gated: None,
            unknown,
            resource,
            dependency: None,
            applies: false,
        });
    }

    /// A request of a fixed resource.
    #[expect(clippy::too_many_arguments, reason = "one request, spelled out")]
    pub(super) fn fixed(
        &mut self,
        group: &str,
        resource: &str,
        verb: &'static str,
        cluster: bool,
        optional: bool,
        at: &impl Spanned,
        via: &str,
    ) {
        let location = self.cx.location(at);
        self.analysis.calls.push(Call {
            group: group.into(),
            resource: resource.into(),
            verb,
            cluster,
            objects_namespace: false,
            location,
            function: self.cx.function.clone(),
            via: via.into(),
            optional,
            remote: false,
            site: None,
            gated: None,
            through: Vec::new(),
        });
    }
}

/// A path as written, without spaces (`LeaderElector::spawn`).
fn path_text(path: &syn::Path) -> String {
    quote::ToTokens::to_token_stream(path)
        .to_string()
        .replace(' ', "")
}

/// Whether a `patch` call's arguments make it a server-side apply
/// (`Patch::Apply(..)`).
pub(super) fn applies<'a>(
    args: impl IntoIterator<Item = &'a syn::Expr>,
    variables: &HashSet<String>,
) -> bool {
    struct Finder<'v>(bool, &'v HashSet<String>);
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_path(&mut self, path: &'ast syn::Path) {
            let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            if segments.ends_with(&["Patch".to_string(), "Apply".to_string()])
                || path
                    .get_ident()
                    .is_some_and(|i| self.1.contains(&i.to_string()))
            {
                self.0 = true;
            }
            syn::visit::visit_path(self, path);
        }
    }
    let mut finder = Finder(false, variables);
    for arg in args {
        finder.visit_expr(arg);
    }
    finder.0
}

/// Whether `args` hold an object made with an owner reference
/// (`owner_ref`, `controller_owner_ref`, `owner_references`,
/// `OwnerReference`) or a variable of `children` made so.
pub(super) fn makes_child<'a>(
    args: impl IntoIterator<Item = &'a syn::Expr>,
    children: &HashSet<String>,
) -> bool {
    fn child(tree: &proc_macro2::TokenTree, children: &HashSet<String>) -> bool {
        match tree {
            proc_macro2::TokenTree::Ident(i) => children.contains(&i.to_string()),
            proc_macro2::TokenTree::Group(g) => g.stream().into_iter().any(|t| child(&t, children)),
            _ => false,
        }
    }
    args.into_iter().any(|arg| {
        quote::ToTokens::to_token_stream(arg)
            .into_iter()
            .any(|tree| super::syntax::names_owner_reference(&tree) || child(&tree, children))
    })
}

/// An `if` visited with `flag` (a condition on a `bool` parameter) on the
/// visitor's stack of conditions in its branch, and the opposite in its
/// `else`.
pub(super) fn visit_if<'ast, V: Visit<'ast>>(
    v: &mut V,
    e: &'ast syn::ExprIf,
    flag: Option<(usize, bool)>,
    flags: fn(&mut V) -> &mut Vec<(usize, bool)>,
) {
    v.visit_expr(&e.cond);
    flags(v).extend(flag);
    v.visit_block(&e.then_branch);
    if let Some((_, other)) = &e.else_branch {
        if let Some((at, value)) = flag {
            flags(v).pop();
            flags(v).push((at, !value));
        }
        v.visit_expr(other);
    }
    if flag.is_some() {
        flags(v).pop();
    }
}

/// A request of a generic function, on the `Api` of its type parameter
/// `generic`, waiting for the kinds its callers give it.
#[derive(Debug, Clone)]
pub(super) struct Deferred {
    /// Made in a function of an `impl` or a trait (see
    /// [`Typing::associated`]).
    pub(super) associated: bool,
    pub(super) function: String,
    /// Where the function is: a call whose path names another function of
    /// the same name does not give it a kind.
    pub(super) defined_in: Owner,
    pub(super) generic: String,
    /// A type parameter of the `impl`, not of the function: the struct the
    /// `impl` is for, and the parameter's place among its type arguments
    /// (`Wrapper<K>`'s 0), read off each caller's receiver.
    pub(super) owner: Option<(String, usize)>,
    pub(super) verbs: Vec<&'static str>,
    pub(super) subresource: Option<String>,
    pub(super) location: Location,
    pub(super) via: String,
    pub(super) optional: bool,
    /// The calls of generic callers it was passed up through.
    pub(super) through: Vec<Location>,
    /// The `bool` parameters of `function` it is made under, by place, and
    /// the value each must have (`if status { .. }`): a caller that passes
    /// another literal does not make it.
    pub(super) flags: Vec<(usize, bool)>,
}
