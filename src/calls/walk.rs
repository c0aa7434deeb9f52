//! The walk of each function of a file: it types the `Api` values in scope
//! (`kinds`), then records the requests of each call (`requests`), those of
//! a generic function waiting for its callers; a second walk gives them the
//! kinds the callers pass (`instantiate`).

use std::collections::{HashMap, HashSet};

use syn::visit::Visit;

use super::Analysis;
use super::instantiate::{Instantiations, returned_calls};
use super::kinds::{ApiKind, Bindings, Scope, Settle, Typing, passing_recorders};
use super::reach::remote_locals;
use super::requests::{Deferred, Requests};
use super::syntax::{api_type, is_test, type_param_names};

pub(super) struct FileWalker<'a> {
    pub(super) cx: Typing<'a>,
    pub(super) analysis: &'a mut Analysis,
    /// Requests on an `Api<K>` whose `K` is a type parameter, found in the
    /// first walk; the second walk gives them the kinds the crate calls
    /// their functions with.
    pub(super) deferred: &'a mut Vec<Deferred>,
    /// In the second walk: the deferred requests by function.
    pub(super) instantiate: Option<&'a HashMap<String, Vec<Deferred>>>,
}

/// How many generic functions deep a kind is passed down: `main` calls
/// `run::<Widget>`, which runs `reconcile::<T>`, which calls `apply::<T>`;
/// helper libraries stack `upsert::<T>` on `patch::<T>` on a request.
pub(super) const GENERIC_DEPTH: usize = 6;

/// A place in a file: path, line, column.
pub(super) type PathBufLine = (std::path::PathBuf, usize, usize);

impl<'ast> Visit<'ast> for FileWalker<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            self.cx.module.push(m.ident.to_string());
            syn::visit::visit_item_mod(self, m);
            self.cx.module.pop();
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
            let outer = std::mem::replace(&mut self.cx.associated, true);
            self.function(&f.sig, block);
            self.cx.associated = outer;
        }
    }
    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        let outer = self.cx.in_trait.replace(item.ident.to_string());
        // `trait Manager<K> { async fn run(..) { Api::<K>::all(..) } }`:
        // the trait's type parameters are its provided methods'.
        let generics =
            std::mem::replace(&mut self.cx.impl_generics, type_param_names(&item.generics));
        syn::visit::visit_item_trait(self, item);
        self.cx.in_trait = outer;
        self.cx.impl_generics = generics;
    }
    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if is_test(&item.attrs) {
            return;
        }
        let outer = (
            self.cx.self_type.take(),
            std::mem::take(&mut self.cx.impl_generics),
        );
        self.cx.self_type = Some((*item.self_ty).clone());
        let associated = std::mem::replace(&mut self.cx.associated, true);
        self.cx.impl_generics = type_param_names(&item.generics);
        syn::visit::visit_item_impl(self, item);
        (self.cx.self_type, self.cx.impl_generics) = outer;
        self.cx.associated = associated;
    }
}

impl FileWalker<'_> {
    pub(super) fn function(&mut self, sig: &syn::Signature, block: &syn::Block) {
        self.cx.function = sig.ident.to_string();
        self.cx.output = match &sig.output {
            syn::ReturnType::Type(_, ty) => Some((**ty).clone()),
            syn::ReturnType::Default => None,
        };
        self.cx.flags = sig
            .inputs
            .iter()
            .filter_map(|arg| match arg {
                syn::FnArg::Typed(t) => Some(match (&*t.pat, &*t.ty) {
                    (syn::Pat::Ident(name), syn::Type::Path(ty)) if ty.path.is_ident("bool") => {
                        name.ident.to_string()
                    }
                    _ => String::new(),
                }),
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        self.cx.generics = self
            .cx
            .impl_generics
            .iter()
            .cloned()
            .chain(type_param_names(&sig.generics))
            .collect();
        self.cx.resource_generics = resource_bound(&sig.generics);
        let mut scope = Scope::default();
        if let Some(ty) = &self.cx.self_type {
            scope.values.insert("self".into(), (0, 0), ty.clone());
            // A method the crate adds to `Api<K>` (an extension trait's).
            if let Some(kind) = api_type(ty) {
                scope
                    .apis
                    .insert("self".into(), (0, 0), ApiKind::Known(Box::new(kind), None));
            }
        }
        let remote_params: HashSet<String> = sig
            .inputs
            .iter()
            .filter(|arg| matches!(arg, syn::FnArg::Typed(_)))
            .enumerate()
            .filter_map(|(i, arg)| match arg {
                syn::FnArg::Typed(t)
                    if self
                        .cx
                        .index
                        .remote_params
                        .contains(&(self.cx.function.clone(), i)) =>
                {
                    match &*t.pat {
                        syn::Pat::Ident(p) => Some(p.ident.to_string()),
                        _ => None,
                    }
                }
                _ => None,
            })
            .collect();
        scope.remote_clients = remote_locals(block, self.cx.index, remote_params);
        scope.passing_recorders = passing_recorders(block);
        for arg in &sig.inputs {
            if let syn::FnArg::Typed(t) = arg
                && let syn::Pat::Ident(name) = &*t.pat
            {
                if let Some(kind) = api_type(&t.ty) {
                    scope.apis.insert(
                        name.ident.to_string(),
                        (0, 0),
                        ApiKind::Known(Box::new(kind), None),
                    );
                } else {
                    scope
                        .values
                        .insert(name.ident.to_string(), (0, 0), (*t.ty).clone());
                }
            }
        }
        // Bindings first, then the uses that settle inferred kinds, then the
        // requests.
        let mut bindings = Bindings {
            cx: &self.cx,
            scope: &mut scope,
            blocks: Vec::new(),
        };
        bindings.visit_block(block);
        let mut settle = Settle {
            cx: &self.cx,
            scope: &mut scope,
        };
        settle.visit_block(block);
        if let Some(deferred) = self.instantiate {
            let mut calls = Instantiations {
                cx: &self.cx,
                analysis: self.analysis,
                pending: self.deferred,
                scope: &scope,
                deferred,
                flags: Vec::new(),
                tails: returned_calls(block),
            };
            calls.visit_block(block);
        } else {
            let mut requests = Requests {
                cx: &self.cx,
                analysis: self.analysis,
                deferred: self.deferred,
                scope: &scope,
                flags: Vec::new(),
            };
            requests.visit_block(block);
        }
    }
}

/// The type parameters of `generics` bound by a `Resource` trait, inline
/// (`T: Resource`) or in the `where` clause.
fn resource_bound(generics: &syn::Generics) -> Vec<String> {
    let is_resource =
        |bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>| {
            bounds.iter().any(|b| {
                matches!(b, syn::TypeParamBound::Trait(t)
                if t.path.segments.last().is_some_and(|s| s.ident == "Resource"))
            })
        };
    let mut out: Vec<String> = generics
        .type_params()
        .filter(|p| is_resource(&p.bounds))
        .map(|p| p.ident.to_string())
        .collect();
    for predicate in generics.where_clause.iter().flat_map(|w| &w.predicates) {
        if let syn::WherePredicate::Type(t) = predicate
            && let syn::Type::Path(p) = &t.bounded_ty
            && let Some(ident) = p.path.get_ident()
            && is_resource(&t.bounds)
            && generics.type_params().any(|g| g.ident == *ident)
            && !out.contains(&ident.to_string())
        {
            out.push(ident.to_string());
        }
    }
    out
}
