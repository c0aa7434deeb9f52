//! The second walk's view of a call: the kinds a generic function's
//! requests wait for, read off the `Api`s and values its callers pass.

use std::collections::{HashMap, HashSet};

use syn::spanned::Spanned;
use syn::visit::Visit;

use super::kinds::{ApiKind, Place, Scope, Target, Typing, start};
use super::reach::Owner;
use super::requests::Deferred;
use super::requests::visit_if;
use super::syntax::{
    bool_literal, flag_condition, macro_exprs, strip_wrappers, type_name, type_parameter,
};
use super::{Analysis, Call, Unchecked, Unknown};
use crate::manifests::diagnostics::Location;

/// The second walk: each call of a generic function whose requests wait
/// for a kind, with the kinds of the `Api`s passed to it.
pub(super) struct Instantiations<'w, 'a> {
    pub(super) cx: &'w Typing<'a>,
    pub(super) analysis: &'w mut Analysis,
    /// Requests of a generic caller, passed up to its own callers.
    pub(super) pending: &'w mut Vec<Deferred>,
    pub(super) scope: &'w Scope,
    pub(super) deferred: &'w HashMap<String, Vec<Deferred>>,
    /// The conditions on the function's `bool` parameters the visit is
    /// under (see [`Deferred::flags`]).
    pub(super) flags: Vec<(usize, bool)>,
    /// Where the calls the function returns name their callee: their
    /// value is the function's.
    pub(super) tails: HashSet<Place>,
}

/// The calls whose value a function body returns as it is: its tail
/// expression's, through `.await`, blocks, `if` and `match` arms, and
/// every `return`'s; each by where it names its callee.
pub(super) fn returned_calls(block: &syn::Block) -> HashSet<Place> {
    fn tail(expr: &syn::Expr, out: &mut HashSet<Place>) {
        match expr {
            // Not through `?` or `Ok(..)`: they change the type, which the
            // caller's return type must match as it is.
            syn::Expr::Await(a) => tail(&a.base, out),
            syn::Expr::Paren(p) => tail(&p.expr, out),
            syn::Expr::Block(b) => block_tail(&b.block, out),
            syn::Expr::If(i) => {
                block_tail(&i.then_branch, out);
                if let Some((_, other)) = &i.else_branch {
                    tail(other, out);
                }
            }
            syn::Expr::Match(m) => {
                for arm in &m.arms {
                    tail(&arm.body, out);
                }
            }
            syn::Expr::Call(c) => {
                if let syn::Expr::Path(p) = &*c.func
                    && let Some(last) = p.path.segments.last()
                {
                    out.insert(start(&last.ident));
                }
            }
            syn::Expr::MethodCall(m) => {
                out.insert(start(&m.method));
            }
            _ => {}
        }
    }
    fn block_tail(block: &syn::Block, out: &mut HashSet<Place>) {
        if let Some(syn::Stmt::Expr(expr, None)) = block.stmts.last() {
            tail(expr, out);
        }
    }
    struct Returns<'o>(&'o mut HashSet<Place>);
    impl<'ast> Visit<'ast> for Returns<'_> {
        fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
            if let Some(expr) = &r.expr {
                tail(expr, self.0);
            }
            syn::visit::visit_expr_return(self, r);
        }
        // A closure's `return` is the closure's.
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut out = HashSet::new();
    block_tail(block, &mut out);
    Returns(&mut out).visit_block(block);
    out
}

/// The type arguments a call names: on the function
/// (`ensure::<Widget>(..)`) and on the type it is called through
/// (`Manager::<Widget>::run(..)`).
#[derive(Clone, Copy)]
pub(super) struct TypeArgs<'a> {
    pub(super) turbofish: Option<&'a syn::AngleBracketedGenericArguments>,
    pub(super) on_type: Option<&'a syn::AngleBracketedGenericArguments>,
}

impl Instantiations<'_, '_> {
    /// The requests of `callee`, a generic function, with the kinds of the
    /// `Api`s passed to it.
    /// `owners`: the crate's functions named `callee` the call may be of.
    pub(super) fn instantiate(
        &mut self,
        callee: &str,
        owners: Option<&[Owner]>,
        by_type: Option<bool>,
        args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
        at: &impl Spanned,
    ) {
        let (Some(requests), Some(params)) = (
            self.deferred.get(callee),
            self.cx.index.params.at(callee, owners),
        ) else {
            return;
        };
        let site = self.cx.location(at);
        for (arg, param) in args.iter().zip(params) {
            let Some(generic) = param.as_ref().and_then(type_parameter) else {
                continue;
            };
            let generic = generic.to_string();
            let Some(ApiKind::Known(ty, cluster)) = self.cx.kind_of(arg, self.scope) else {
                continue;
            };
            for d in requests.iter().filter(|d| {
                d.owner.is_none()
                    && d.generic == generic
                    && by_type.is_none_or(|t| d.associated == t)
                    && owners.is_none_or(|o| o.contains(&d.defined_in))
            }) {
                self.bind(d, &ty, cluster, callee, &site, Some(args));
            }
        }
    }

    /// The requests of `callee`, a generic function, with the kinds its
    /// turbofish names (`ensure::<Widget>(..)`) or the values passed for
    /// parameters of its type parameters (`ensure(&client, &widget)`).
    pub(super) fn instantiate_values(
        &mut self,
        callee: &str,
        owners: Option<&[Owner]>,
        by_type: Option<bool>,
        named: TypeArgs<'_>,
        args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
        at: &impl Spanned,
    ) {
        let TypeArgs { turbofish, on_type } = named;
        let Some(requests) = self.deferred.get(callee) else {
            return;
        };
        let no_values = (Vec::new(), Vec::new(), None);
        let (generics, values, output) = self
            .cx
            .index
            .generic_values
            .at(callee, owners)
            .unwrap_or(&no_values);
        let site = self.cx.location(at);
        let mut kinds: Vec<(String, syn::Type)> = Vec::new();
        // `Manager::<DataSource>::run(..)`: the type's arguments are its
        // `impl`'s or trait's type parameters.
        if let Some(on_type) = on_type
            && let Some(outer) = self.cx.index.outer_generics.at(callee, owners)
        {
            for (generic, arg) in outer.iter().zip(&on_type.args) {
                if let syn::GenericArgument::Type(ty) = arg {
                    kinds.push((generic.clone(), ty.clone()));
                }
            }
        }
        if let Some(turbofish) = turbofish {
            for (generic, arg) in generics.iter().zip(&turbofish.args) {
                if let syn::GenericArgument::Type(ty) = arg {
                    kinds.push((generic.clone(), ty.clone()));
                }
            }
        }
        for (arg, param) in args.iter().zip(values) {
            if let Some(ty) = self.cx.type_of(arg, self.scope) {
                bind_generics(param, &ty, generics, &mut kinds);
            }
        }
        // A call the caller returns (`get_or_create_convert(..).await` at
        // the end of a generic `get_or_create<T>`): rustc infers the
        // kinds its arguments leave open from the caller's return type.
        if let (Some(output), Some(returned)) = (output, &self.cx.output)
            && self.tails.contains(&start(at))
        {
            let open: Vec<String> = generics
                .iter()
                .filter(|g| !kinds.iter().any(|(bound, _)| bound == *g))
                .cloned()
                .collect();
            bind_generics(output, returned, &open, &mut kinds);
        }
        for (generic, ty) in kinds {
            for d in requests.iter().filter(|d| {
                d.owner.is_none()
                    && d.generic == generic
                    && by_type.is_none_or(|t| d.associated == t)
                    && owners.is_none_or(|o| o.contains(&d.defined_in))
            }) {
                self.bind(d, &ty, None, callee, &site, Some(args));
            }
        }
    }

    /// `Controller::new(api, ..).run(reconcile, ..)`: the reconciler's
    /// type parameter (that of its object) is the controller's kind.
    pub(super) fn instantiate_reconciler(&mut self, call: &syn::ExprMethodCall) {
        if call.method != "run" {
            return;
        }
        // `reconcile`, or `&Self::reconcile` in a trait's provided method.
        let Some(syn::Expr::Path(f)) = call.args.first().map(|arg| match arg {
            syn::Expr::Reference(r) => &*r.expr,
            other => other,
        }) else {
            return;
        };
        let Some(callee) = f.path.segments.last().map(|s| s.ident.to_string()) else {
            return;
        };
        let by_type = by_type(&f.path);
        let owners = self.cx.owners_of_path(&f.path);
        let (Some(requests), Some((_, values, _))) = (
            self.deferred.get(&callee),
            self.cx.index.generic_values.at(&callee, owners.as_deref()),
        ) else {
            return;
        };
        let Some(generic) = values.first().and_then(|object| {
            let object = strip_wrappers(object);
            type_parameter(&object).map(ToString::to_string)
        }) else {
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
            api.and_then(|api| self.cx.kind_of(api, self.scope))
        else {
            return;
        };
        let site = self.cx.location(&call.method);
        for d in requests
            .iter()
            .filter(|d| d.owner.is_none() && d.generic == *generic && d.associated == by_type)
        {
            self.bind(d, &ty, cluster, &callee, &site, None);
        }
    }

    /// `d` made with the kind `ty`: a request, or, when `ty` is a type
    /// parameter of the generic function making the call, a request of
    /// that function, for its own callers to give the kind
    /// (`reconcile::<T>` called in `run<T>`, called with `Widget`).
    /// `args`: the call's arguments, which decide the conditions on the
    /// callee's `bool` parameters the request is made under (`None`: a
    /// function passed as a value, called with arguments the code does not
    /// show).
    pub(super) fn bind(
        &mut self,
        d: &Deferred,
        ty: &syn::Type,
        cluster: Option<bool>,
        callee: &str,
        site: &Location,
        args: Option<&syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>>,
    ) {
        // `upsert(client, &event, false)` of a request made `if status`:
        // none. A flag the caller passes on from its own parameter is the
        // caller's condition; the caller's own `if`s around the call are too.
        let mut flags = self.flags.clone();
        for &(at, value) in &d.flags {
            match args.and_then(|args| args.iter().nth(at)) {
                Some(arg) if bool_literal(arg).is_some_and(|given| given != value) => return,
                Some(arg) => flags.extend(
                    flag_condition(arg, &self.cx.flags).map(|(at, given)| (at, given == value)),
                ),
                None => {}
            }
        }
        // A type parameter of the caller's own, or of its trait, which a
        // call names on the type (`Manager::<Widget>::run(..)`), waits for
        // the caller's callers; an `impl`'s is the receiver's.
        if let Some(param) = type_parameter(ty)
            && self.cx.generics.iter().any(|g| param == g)
            && (self.cx.in_trait.is_some() || !self.cx.impl_generics.iter().any(|g| param == g))
        {
            let mut through = d.through.clone();
            through.push(site.clone());
            self.pending.push(Deferred {
                associated: self.cx.associated,
                function: self.cx.function.clone(),
                defined_in: self.cx.owner(),
                generic: param.to_string(),
                owner: None,
                through,
                via: format!(
                    "{} (from `{callee}` at {}:{})",
                    d.via,
                    self.cx.path.display(),
                    site.line
                ),
                flags,
                ..d.clone()
            });
            return;
        }
        match self.cx.target(ty) {
            Some(target) => self.emit(d, &target, cluster, callee, site),
            None => self.unreadable_kind(ty, callee, site),
        }
    }

    /// A generic function given a kind rsop cannot read (a type a build
    /// script generates into `OUT_DIR`) is noted at the call that gives
    /// it, once.
    fn unreadable_kind(&mut self, ty: &syn::Type, callee: &str, site: &Location) {
        let parameter = type_parameter(ty).is_some_and(|p| {
            self.cx.generics.iter().any(|g| p == g) || self.cx.impl_generics.iter().any(|g| p == g)
        });
        if parameter || matches!(ty, syn::Type::Infer(_)) {
            return;
        }
        let unknown = if self.cx.names_unread_type(ty) {
            Unknown::Type
        } else {
            Unknown::Kind
        };
        let noted = self
            .analysis
            .unchecked
            .iter()
            .any(|u| u.location == *site && u.via == callee);
        if !noted {
            self.analysis.unchecked.push(Unchecked {
                location: site.clone(),
                function: self.cx.function.clone(),
                via: callee.to_string(),
                gated: None,
                unknown,
                resource: None,
                dependency: None,
                applies: false,
            });
        }
    }

    /// The requests of `callee`, a method of a generic struct that holds an
    /// `Api` of its type parameter, with the kind the receiver's type names
    /// (`pods.apply(..)` on a `Wrapper<Pod>`).
    pub(super) fn instantiate_method(
        &mut self,
        callee: &str,
        receiver: &syn::Expr,
        at: &impl Spanned,
    ) {
        let Some(requests) = self.deferred.get(callee) else {
            return;
        };
        // The receiver's type, or, for an `Api` value, `Api<K>` (a generic
        // method the crate adds to `Api<T>`).
        let Some((name, args)) = self
            .cx
            .type_of(receiver, self.scope)
            .as_ref()
            .and_then(type_name)
            .or_else(|| match self.cx.kind_of(receiver, self.scope)? {
                ApiKind::Known(kind, _) => Some(("Api".to_string(), vec![*kind])),
                _ => None,
            })
        else {
            return;
        };
        let site = self.cx.location(at);
        for d in requests {
            let Some((owner, position)) = &d.owner else {
                continue;
            };
            if *owner != name {
                continue;
            }
            let Some(kind) = args.get(*position) else {
                continue;
            };
            match self.cx.target(kind) {
                Some(target) => self.emit(d, &target, None, callee, &site),
                None => self.unreadable_kind(kind, callee, &site),
            }
        }
    }

    pub(super) fn emit(
        &mut self,
        d: &Deferred,
        target: &Target,
        cluster: Option<bool>,
        callee: &str,
        site: &Location,
    ) {
        let line = site.line;
        for verb in &d.verbs {
            self.analysis.calls.push(Call {
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
                    self.cx.path.display()
                ),
                // An apply's `create` is optional on the crate's own kinds
                // only (see `Requests::apply_creates`).
                optional: d.optional && self.cx.is_own(&target.group, &target.plural),
                remote: false,
                site: Some((site.clone(), self.cx.function.clone())),
                gated: None,
                through: d.through.clone(),
            });
        }
    }
}

/// Whether a path names a function through a type (`Self::reconcile`,
/// `Widget::reconcile`): an `impl`'s or a trait's, not a free function of
/// that name (`reconcile`, `controller::reconcile`).
fn by_type(path: &syn::Path) -> bool {
    let segments: Vec<&syn::PathSegment> = path.segments.iter().collect();
    matches!(segments.as_slice(), [.., owner, _] if owner.ident.to_string().starts_with(|c: char| c.is_ascii_uppercase()))
}

/// The type parameters of `generics` that `param`, a parameter's declared
/// type, takes from `arg`, the type of the value passed: `Option<&K>` given
/// an `Option<Service>` binds `K` to `Service`. References and smart
/// pointers are looked through on both sides.
fn bind_generics(
    param: &syn::Type,
    arg: &syn::Type,
    generics: &[String],
    out: &mut Vec<(String, syn::Type)>,
) {
    let (param, arg) = (strip_wrappers(param), strip_wrappers(arg));
    if let Some(ident) = type_parameter(&param)
        && generics.iter().any(|g| ident == g)
    {
        out.push((ident.to_string(), arg));
        return;
    }
    let (Some((name, params)), Some((arg_name, args))) = (type_name(&param), type_name(&arg))
    else {
        return;
    };
    // A crate's `Result<T>` alias is `Result<T, Error>`: the arguments
    // written line up from the first.
    if name == arg_name {
        for (p, a) in params.iter().zip(&args) {
            bind_generics(p, a, generics, out);
        }
    }
}

impl<'ast> Visit<'ast> for Instantiations<'_, '_> {
    fn visit_expr_if(&mut self, e: &'ast syn::ExprIf) {
        let flag = flag_condition(&e.cond, &self.cx.flags);
        visit_if(self, e, flag, |v| &mut v.flags);
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
            let callee = last.ident.to_string();
            let by_type = Some(by_type(&p.path));
            let owners = self.cx.owners_of_path(&p.path);
            let owners = owners.as_deref();
            self.instantiate(&callee, owners, by_type, &call.args, &last.ident);
            let turbofish = match &last.arguments {
                syn::PathArguments::AngleBracketed(a) => Some(a),
                _ => None,
            };
            let on_type = p.path.segments.len().checked_sub(2).and_then(|i| {
                match &p.path.segments[i].arguments {
                    syn::PathArguments::AngleBracketed(a) => Some(a),
                    _ => None,
                }
            });
            self.instantiate_values(
                &callee,
                owners,
                by_type,
                TypeArgs { turbofish, on_type },
                &call.args,
                &last.ident,
            );
            // The function's own path is not a value passed: its turbofish
            // is read above.
            for arg in &call.args {
                self.visit_expr(arg);
            }
            return;
        }
        syn::visit::visit_expr_call(self, call);
    }
    /// A generic function passed as a value with its kind
    /// (`run(client, reconcile::<Secret>)`).
    fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
        if let Some(last) = path.path.segments.last()
            && let syn::PathArguments::AngleBracketed(turbofish) = &last.arguments
        {
            let callee = last.ident.to_string();
            let owners = self.cx.owners_of_path(&path.path);
            self.instantiate_values(
                &callee,
                owners.as_deref(),
                Some(by_type(&path.path)),
                TypeArgs {
                    turbofish: Some(turbofish),
                    on_type: None,
                },
                &syn::punctuated::Punctuated::new(),
                &last.ident,
            );
        }
    }
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let callee = call.method.to_string();
        // `api.create(..)` on an `Api` is kube's request, not a call of
        // the crate's generic function of that name.
        if super::requests::method_requests(&callee).is_some()
            && self.cx.kind_of(&call.receiver, self.scope).is_some()
        {
            self.instantiate_method(&callee, &call.receiver, &call.method);
            syn::visit::visit_expr_method_call(self, call);
            return;
        }
        let owners = self
            .cx
            .owners_of_method(&callee, &call.receiver, self.scope);
        let owners = owners.as_deref();
        // A method call calls a method, never a free function of its name.
        self.instantiate(&callee, owners, Some(true), &call.args, &call.method);
        self.instantiate_values(
            &callee,
            owners,
            Some(true),
            TypeArgs {
                turbofish: call.turbofish.as_ref(),
                on_type: None,
            },
            &call.args,
            &call.method,
        );
        self.instantiate_method(&callee, &call.receiver, &call.method);
        self.instantiate_reconciler(call);
        syn::visit::visit_expr_method_call(self, call);
    }
}
