//! Which functions run, and with what: the crate's functions and what they
//! return, the `Api`s their parameters and fields hold, calls made with a
//! client of another cluster, and the names the crate calls.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use syn::visit::Visit;
use syn::visit_mut::VisitMut;

use super::literals::Literal;
use super::syntax::{
    api_constructor_call, api_type, constructor_scope, is_ident, is_test, macro_exprs,
    strip_wrappers, type_param_names, unwrap_result, variable,
};

/// Whether a file can make a request at all: it names kube's API types or
/// the functions that take them.
pub(super) fn mentions_kube(text: &str) -> bool {
    [
        "Api<",
        "Api::",
        "api::<",
        "Controller::new",
        "watcher(",
        "Recorder::new",
        "finalizer(",
        "controller_owner_ref(",
        "OwnerReference {",
        "await_condition(",
        // Leader election crates' locks.
        "LeaseManager",
        "LeaseLock::new",
        // A function that returns the `ApiResource` a dynamic `Api` is of.
        "-> ApiResource",
        "-> GroupVersionKind",
        // rsop-runtime's manager and reconciler.
        "rsop_runtime",
    ]
    .iter()
    .any(|needle| text.contains(needle))
        // A function given kube's `Client` may hand it on, and is the
        // crate's own, not another crate's.
        || (text.contains("kube") && text.contains("Client"))
}

/// The type parameters `generics` declares, as identifiers.
fn type_param_idents(generics: &syn::Generics) -> Vec<syn::Ident> {
    generics.type_params().map(|p| p.ident.clone()).collect()
}

/// The names `text` defines with `fn`, `struct`, `enum`, `type` or
/// `trait`, read from the words alone.
pub(super) fn defined_names(text: &str) -> impl Iterator<Item = &str> {
    let mut words = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .peekable();
    std::iter::from_fn(move || {
        loop {
            let word = words.next()?;
            if matches!(word, "fn" | "struct" | "enum" | "type" | "trait")
                && let Some(name) = words.peek()
            {
                return Some(*name);
            }
        }
    })
}

/// A generic function's type parameters in order, the types of its
/// parameters, and the type it returns.
pub(super) type GenericValues = (Vec<String>, Vec<syn::Type>, Option<syn::Type>);

/// The crate-wide facts the walk needs: functions that return an `Api`,
/// functions' parameters typed `Api<K>`, and struct fields typed `Api<K>`.
#[derive(Debug, Default)]
pub(super) struct Index {
    /// Some file of the crate calls a `publish` method: its Recorders may
    /// send events.
    pub(super) publishes: bool,
    /// Dependencies that depend on kube and that rsop has not read (cargo
    /// has not downloaded them), by the name the code calls each by.
    pub(super) unread: HashSet<String>,
    /// The names of the functions and types every file of the crate
    /// defines, read or not (`ContextData::new` in a file that names kube
    /// only through a prelude is the crate's, not another crate's).
    pub(super) defined: HashMap<String, HashSet<String>>,
    /// The crate's functions and methods: name -> the owner of each
    /// function of that name (see [`ByName`]).
    pub(super) functions: HashMap<String, Vec<Owner>>,
    /// Function -> the `K` it returns an `Api` of (`None`: generic, read
    /// from the call's turbofish), and whether it is made with `Api::all`.
    pub(super) returns: ByName<(Option<syn::Type>, Option<bool>)>,
    /// Function -> the `K` of each `Api<K>` of the tuple it returns, by
    /// position (`-> (Api<DynamicObject>, ApiResource)`).
    pub(super) tuple_returns: ByName<Vec<Option<syn::Type>>>,
    /// Function -> the `K` of each parameter typed `Api<K>`, by position
    /// (a method's `self` left out).
    pub(super) params: ByName<Vec<Option<syn::Type>>>,
    /// Generic function -> its type parameters in order, and the types of
    /// its parameters (`obj: Arc<T>`, `keep: Option<&T>`), matched with
    /// the types of the values its callers pass.
    pub(super) generic_values: ByName<GenericValues>,
    /// Function -> the type parameters of its `impl` or trait, which a
    /// call names on the type (`Manager::<DataSource>::run(..)`).
    pub(super) outer_generics: ByName<Vec<String>>,
    /// Field name -> each struct with a field of that name typed `Api<K>`,
    /// and its `K`: the struct an expression's value is decides which.
    pub(super) fields: HashMap<String, Vec<(String, syn::Type)>>,
    /// Trait -> its type parameters, and the type arguments each of its
    /// `impl`s gives them (`impl Collect<Node> for Info`: `[Node]`).
    pub(super) trait_generics: HashMap<String, Vec<String>>,
    pub(super) trait_impls: HashMap<String, Vec<TraitImpl>>,
    /// (trait, method) -> the `K` of the `Api<K>` the trait's declaration of
    /// the method returns (`fn get_api(&self) -> Api<R>`).
    pub(super) trait_returns: HashMap<(String, String), syn::Type>,
    /// (trait, associated type) and (type, associated type) -> the types
    /// the `impl`s of the trait, or for the type, set it to.
    pub(super) assoc_types: HashMap<(String, String), Vec<syn::Type>>,
    /// The names of the crate's structs.
    pub(super) structs: HashSet<String>,
    /// (struct, field) -> the field's type, for the value of `self.ctx.api`.
    pub(super) field_types: HashMap<(String, String), syn::Type>,
    /// Struct -> its type parameters, to give a generic struct's `Api<K>`
    /// field the kind its type names (`Wrapper<Pod>`).
    pub(super) struct_generics: HashMap<String, Vec<String>>,
    /// Functions that return a client of another cluster: one built from a
    /// kubeconfig the code reads.
    pub(super) remote_fns: HashSet<String>,
    /// Function -> the places of its parameters typed `Client`.
    pub(super) client_params: HashMap<String, Vec<usize>>,
    /// (function, place) of the `Client` parameters every caller passes a
    /// client of another cluster.
    pub(super) remote_params: HashSet<(String, usize)>,
    /// The bodies of the other functions that return a `Client`: one that
    /// calls a function of `remote_fns` joins them.
    pub(super) client_fns: Vec<(String, syn::Block)>,
    /// The crate's string constants.
    pub(super) consts: HashMap<String, String>,
    /// Functions that return an `ApiResource` or `GroupVersionKind` made of
    /// literals, and what they return.
    pub(super) literal_fns: HashMap<String, Literal>,
    /// The bodies of functions that return an `ApiResource` or
    /// `GroupVersionKind`, read once the constants are known.
    pub(super) resource_fns: Vec<(String, syn::Block)>,
    /// Function -> the type of the value it returns, for the kind of
    /// `let sa = build_service_account(..)` a generic function is given;
    /// `None` when functions of that name return different types.
    pub(super) value_fns: ByName<Option<syn::Type>>,
}

/// Where a function is: the module path of a free function
/// (`["svc", "k8s", "secret"]`), with the type or trait of a method last
/// (`["reconciler", "Context"]`).
pub(super) type Owner = Vec<String>;

/// A fact about each of the crate's functions, by name and owner: a call
/// whose path or `use` tells which function it is gets that function's
/// fact, and one that does not the fact all functions of the name give
/// together (`merged`).
#[derive(Debug)]
pub(super) struct ByName<T> {
    merged: HashMap<String, T>,
    owned: HashMap<String, Vec<(Owner, T)>>,
}

impl<T> Default for ByName<T> {
    fn default() -> Self {
        ByName {
            merged: HashMap::new(),
            owned: HashMap::new(),
        }
    }
}

impl<T: Clone + PartialEq> ByName<T> {
    /// The fact of `owner`'s function `name`; `merge` folds it into what
    /// the other functions of the name say.
    pub(super) fn insert(
        &mut self,
        name: String,
        owner: &[String],
        value: T,
        merge: fn(&mut T, T),
    ) {
        let of_name = self.owned.entry(name.clone()).or_default();
        match of_name.iter_mut().find(|(o, _)| o == owner) {
            Some((_, known)) => merge(known, value.clone()),
            None => of_name.push((owner.to_vec(), value.clone())),
        }
        match self.merged.get_mut(&name) {
            Some(known) => merge(known, value),
            None => {
                self.merged.insert(name, value);
            }
        }
    }

    /// As [`ByName::insert`], the last function of the name read standing
    /// for all of them.
    pub(super) fn insert_last(&mut self, name: String, owner: &[String], value: T) {
        self.insert(name, owner, value, |known, new| *known = new);
    }

    /// What all functions of the name say together.
    pub(super) fn get(&self, name: &str) -> Option<&T> {
        self.merged.get(name)
    }

    pub(super) fn contains_key(&self, name: &str) -> bool {
        self.merged.contains_key(name)
    }

    pub(super) fn keys(&self) -> impl Iterator<Item = &String> {
        self.merged.keys()
    }

    /// The fact of the function a call names: `owners` are those the call
    /// may be of (`None`: its path does not tell). Functions of those
    /// owners with no fact give none; ones that disagree give what all
    /// functions of the name say.
    pub(super) fn at(&self, name: &str, owners: Option<&[Owner]>) -> Option<&T> {
        let Some(owners) = owners else {
            return self.get(name);
        };
        let mut facts = self
            .owned
            .get(name)
            .into_iter()
            .flatten()
            .filter(|(o, _)| owners.contains(o))
            .map(|(_, fact)| fact);
        let first = facts.next()?;
        if facts.all(|fact| fact == first) {
            Some(first)
        } else {
            self.get(name)
        }
    }
}

/// How a call names its function, to tell the crate's functions of one
/// name apart.
pub(super) struct Callee<'a> {
    /// The path written before the name, its first segment expanded by the
    /// file's `use`s, `crate`, `self` and `super` left out (`secret::new`
    /// in a file that has `use crate::svc::k8s::secret`: `svc::k8s::secret`).
    /// A method's: the type of its receiver, when the code shows it.
    pub(super) qualifier: Vec<String>,
    /// Called as a method (`x.f()`): found by the receiver's type, not by
    /// the modules in scope.
    pub(super) method: bool,
    /// The module of the call, and the file's `use`s.
    pub(super) module: &'a [String],
    pub(super) imports: &'a HashMap<String, Vec<String>>,
}

impl Index {
    /// The owners of the functions named `name` a call may be of; `None`
    /// when its path does not tell them apart, empty when it names a
    /// module none of the functions is in.
    pub(super) fn resolve(&self, name: &str, callee: &Callee<'_>) -> Option<Vec<Owner>> {
        let all = self.functions.get(name)?;
        let by_type = |ty: &str| -> Vec<Owner> {
            all.iter()
                .filter(|o| o.last().is_some_and(|last| last == ty))
                .cloned()
                .collect()
        };
        let by_module = |path: &[String]| -> Vec<Owner> {
            all.iter()
                .filter(|o| {
                    !path.is_empty() && (o.ends_with(path) || (!o.is_empty() && path.ends_with(o)))
                })
                .cloned()
                .collect()
        };
        let found = if callee.method {
            match callee.qualifier.last() {
                Some(ty) => by_type(ty),
                None => return None,
            }
        } else {
            let qualifier: Vec<String> = if callee.qualifier.is_empty() {
                // A plain call: a function of the call's module, or one
                // the file brings in by a `use`.
                match callee.imports.get(name) {
                    Some(path) => crate_relative(&path[..path.len() - 1]),
                    None => {
                        return Some(
                            all.iter()
                                .filter(|o| o.as_slice() == callee.module)
                                .cloned()
                                .collect(),
                        )
                        .filter(|found: &Vec<Owner>| !found.is_empty());
                    }
                }
            } else {
                callee.qualifier.clone()
            };
            match qualifier.last() {
                Some(last) if last.starts_with(char::is_uppercase) => by_type(last),
                // A module's function that none of the modules read
                // defines is another crate's, or one whose file is not
                // read: none of the crate's of the name.
                Some(_) => return Some(by_module(&qualifier)),
                None => return None,
            }
        };
        (!found.is_empty()).then_some(found)
    }
}

/// A path of a `use` or a call, from the crate's root: `crate`, `self` and
/// `super` left out.
pub(super) fn crate_relative(path: &[String]) -> Vec<String> {
    path.iter()
        .skip_while(|s| matches!(s.as_str(), "crate" | "self" | "super"))
        .cloned()
        .collect()
}

/// A path a file writes, from the crate's root: its first segment as the
/// file's `use`s give it (`secret::new` after `use crate::svc::k8s::secret`
/// is `svc::k8s::secret::new`).
pub(super) fn from_root(
    mut path: Vec<String>,
    imports: &HashMap<String, Vec<String>>,
) -> Vec<String> {
    if let Some(full) = path.first().and_then(|first| imports.get(first)) {
        path.splice(..1, full.iter().cloned());
    }
    crate_relative(&path)
}

/// An `impl` of a generic trait: the type arguments it gives the trait,
/// and its own type parameters (`impl<R> Collect<R> for Objects<R>`).
#[derive(Debug, Clone)]
pub(super) struct TraitImpl {
    pub(super) args: Vec<syn::Type>,
    pub(super) generics: Vec<String>,
}

impl Index {
    /// Reads a file whose module path is `module` and whose `use`s are
    /// `imports`.
    pub(super) fn collect(
        &mut self,
        file: &syn::File,
        module: Owner,
        imports: HashMap<String, Vec<String>>,
    ) {
        struct Collector<'a> {
            index: &'a mut Index,
            /// The type parameters of the `impl` being read.
            impl_generics: Vec<syn::Ident>,
            /// The file's `use`s.
            imports: HashMap<String, Vec<String>>,
            /// The owner of the functions being read: the module, and the
            /// type of the `impl` or the trait.
            owner: Owner,
        }
        impl<'ast> Visit<'ast> for Collector<'_> {
            fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
                if let Some((_, path, _)) = &item.trait_
                    && let Some(trait_name) = path.segments.last()
                {
                    // Written out in full: the trait's provided methods are
                    // read in another file, with other `use`s.
                    let args =
                        crate::manifests::derive::schema::generic_args(&trait_name.arguments)
                            .into_iter()
                            .map(|arg| {
                                let mut arg = arg.clone();
                                Qualify(&self.imports).visit_type_mut(&mut arg);
                                arg
                            })
                            .collect();
                    let generics = type_param_names(&item.generics);
                    self.index
                        .trait_impls
                        .entry(trait_name.ident.to_string())
                        .or_default()
                        .push(TraitImpl { args, generics });
                }
                if let Some((_, path, _)) = &item.trait_
                    && let Some(trait_name) = path.segments.last()
                    && let Some((own, _)) = super::syntax::type_name(&item.self_ty)
                {
                    for impl_item in &item.items {
                        if let syn::ImplItem::Type(t) = impl_item {
                            for owner in [trait_name.ident.to_string(), own.clone()] {
                                self.index
                                    .assoc_types
                                    .entry((owner, t.ident.to_string()))
                                    .or_default()
                                    .push(t.ty.clone());
                            }
                        }
                    }
                }
                let outer =
                    std::mem::replace(&mut self.impl_generics, type_param_idents(&item.generics));
                let ty = super::syntax::type_name(&item.self_ty).map(|(name, _)| name);
                self.owner.extend(ty.clone());
                syn::visit::visit_item_impl(self, item);
                if ty.is_some() {
                    self.owner.pop();
                }
                self.impl_generics = outer;
            }
            fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
                let name = item.ident.to_string();
                let generics = type_param_names(&item.generics);
                if !generics.is_empty() {
                    self.index.trait_generics.insert(name.clone(), generics);
                }
                for trait_item in &item.items {
                    if let syn::TraitItem::Fn(f) = trait_item
                        && let syn::ReturnType::Type(_, ty) = &f.sig.output
                        && let Some(kind) = api_type(unwrap_result(ty))
                    {
                        self.index
                            .trait_returns
                            .insert((name.clone(), f.sig.ident.to_string()), kind);
                    }
                }
                self.owner.push(name);
                let outer =
                    std::mem::replace(&mut self.impl_generics, type_param_idents(&item.generics));
                syn::visit::visit_item_trait(self, item);
                self.impl_generics = outer;
                self.owner.pop();
            }
            fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
                if !is_test(&m.attrs) {
                    self.owner.push(m.ident.to_string());
                    syn::visit::visit_item_mod(self, m);
                    self.owner.pop();
                }
            }
            fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
                if !is_test(&f.attrs) {
                    let sig = qualified(&f.sig, &self.imports);
                    self.index.signature(&sig, Some(&f.block), &self.owner);
                    syn::visit::visit_item_fn(self, f);
                }
            }
            fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
                if !is_test(&f.attrs) {
                    self.index.signature_in(
                        &qualified(&f.sig, &self.imports),
                        Some(&f.block),
                        &self.impl_generics,
                        &self.owner,
                    );
                    syn::visit::visit_impl_item_fn(self, f);
                }
            }
            fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
                if !is_test(&f.attrs) {
                    let sig = qualified(&f.sig, &self.imports);
                    self.index.signature_in(
                        &sig,
                        f.default.as_ref(),
                        &self.impl_generics,
                        &self.owner,
                    );
                    syn::visit::visit_trait_item_fn(self, f);
                }
            }
            fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
                let owner = item.ident.to_string();
                self.index.structs.insert(owner.clone());
                let generics = type_param_names(&item.generics);
                if !generics.is_empty() {
                    self.index.struct_generics.insert(owner.clone(), generics);
                }
                for (i, field) in item.fields.iter().enumerate() {
                    // A tuple struct's fields are named by their place.
                    let name = field
                        .ident
                        .as_ref()
                        .map_or_else(|| i.to_string(), ToString::to_string);
                    if let Some(kind) = api_type(&field.ty) {
                        let entry = self.index.fields.entry(name.clone()).or_default();
                        if !entry.iter().any(|(o, _)| *o == owner) {
                            entry.push((owner.clone(), kind));
                        }
                    }
                    self.index
                        .field_types
                        .insert((owner.clone(), name), field.ty.clone());
                }
                syn::visit::visit_item_struct(self, item);
            }
        }
        Collector {
            index: self,
            impl_generics: Vec::new(),
            imports,
            owner: module,
        }
        .visit_file(file);
    }

    pub(super) fn signature(
        &mut self,
        sig: &syn::Signature,
        body: Option<&syn::Block>,
        owner: &[String],
    ) {
        self.signature_in(sig, body, &[], owner);
    }

    /// A function's signature, read in an `impl` with the type parameters
    /// `impl_generics`; `owner` is where it is.
    pub(super) fn signature_in(
        &mut self,
        sig: &syn::Signature,
        body: Option<&syn::Block>,
        impl_generics: &[syn::Ident],
        owner: &[String],
    ) {
        let name = sig.ident.to_string();
        // A kind that is a type parameter of the function, or of its `impl`
        // (`impl<K> Helper for (K, Scope) { fn get_api() -> Api<K> }`), which
        // a call does not name.
        let type_param = |kind: &syn::Type| {
            sig.generics.type_params().any(|p| is_ident(kind, &p.ident))
                || impl_generics.iter().any(|g| is_ident(kind, g))
        };
        let owners = self.functions.entry(name.clone()).or_default();
        if !owners.iter().any(|o| o == owner) {
            owners.push(owner.to_vec());
        }
        if !impl_generics.is_empty() {
            self.outer_generics.insert_last(
                name.clone(),
                owner,
                impl_generics.iter().map(ToString::to_string).collect(),
            );
        }
        let generics = type_param_names(&sig.generics);
        // A method of a generic `impl` or trait takes its kinds as a
        // generic function does: its parameters' types name them.
        if !generics.is_empty() || !impl_generics.is_empty() {
            let values: Vec<syn::Type> = sig
                .inputs
                .iter()
                .filter_map(|arg| match arg {
                    syn::FnArg::Typed(t) => Some((*t.ty).clone()),
                    syn::FnArg::Receiver(_) => None,
                })
                .collect();
            let output = match &sig.output {
                syn::ReturnType::Type(_, ty) => Some((**ty).clone()),
                syn::ReturnType::Default => None,
            };
            self.generic_values
                .insert_last(name.clone(), owner, (generics, values, output));
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
                    .insert(name.clone(), owner, Some(value), |known, new| {
                        if *known != new {
                            *known = None;
                        }
                    });
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
            && p.path.segments.last().is_some_and(|s| {
                s.ident == "ApiResource"
                    || s.ident == "GroupVersionKind"
                    // `-> Api<DynamicObject>` made of a literal
                    // `GroupVersionKind` in its body.
                    || (s.ident == "Api"
                        && api_type(unwrap_result(ty)).is_some_and(|k| {
                            matches!(&k, syn::Type::Path(k) if k.path.segments.last().is_some_and(|l| l.ident == "DynamicObject"))
                        }))
            })
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
        if let syn::ReturnType::Type(_, ty) = &sig.output
            && let syn::Type::Tuple(tuple) = unwrap_result(ty)
        {
            let kinds: Vec<Option<syn::Type>> = tuple
                .elems
                .iter()
                .map(|elem| api_type(elem).filter(|kind| !type_param(kind)))
                .collect();
            if kinds.iter().any(Option::is_some) {
                self.tuple_returns.insert_last(name.clone(), owner, kinds);
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
            self.params.insert_last(name.clone(), owner, params);
        }
        if let syn::ReturnType::Type(_, ty) = &sig.output
            && let Some(kind) = api_type(unwrap_result(ty))
        {
            let cluster = body.and_then(constructor_scope);
            let value = (if type_param(&kind) { None } else { Some(kind) }, cluster);
            self.returns.insert(name, owner, value, |known, new| {
                // A trait's `fn get_api() -> Api<Self>` says most of the
                // kind; another function of the same name that returns an
                // associated type or an `impl`'s parameter does not replace
                // it.
                let says_less = new.0.as_ref().is_none_or(|k| {
                    matches!(k, syn::Type::Path(p) if p.path.segments.len() > 1
                        && p.path.segments[0].ident == "Self")
                });
                if !(known.0.as_ref().is_some_and(is_self) && says_less) {
                    *known = new;
                }
            });
        }
    }
}

/// A signature with the types its file brings in by `use` written out in
/// full (`Event` after `use k8s_openapi::api::core::v1::Event`): what a
/// function returns or takes is read in its callers' files, with other
/// `use`s.
fn qualified(sig: &syn::Signature, imports: &HashMap<String, Vec<String>>) -> syn::Signature {
    let mut sig = sig.clone();
    Qualify(imports).visit_signature_mut(&mut sig);
    sig
}

/// Writes out in full the types a file's `use`s bring in.
struct Qualify<'a>(&'a HashMap<String, Vec<String>>);

impl VisitMut for Qualify<'_> {
    fn visit_type_path_mut(&mut self, ty: &mut syn::TypePath) {
        syn::visit_mut::visit_type_path_mut(self, ty);
        if ty.qself.is_none()
            && ty.path.leading_colon.is_none()
            && let [only] = ty.path.segments.iter().collect::<Vec<_>>().as_slice()
            && let Some(full) = self.0.get(&only.ident.to_string())
            && let Ok(mut path) = syn::parse_str::<syn::Path>(&full.join("::"))
        {
            if let Some(last) = path.segments.last_mut() {
                last.arguments = only.arguments.clone();
            }
            ty.path = path;
        }
    }
}

/// `Self`.
pub(super) fn is_self(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self"))
}

/// `Client`, `&Client`, `kube::Client`, and kube's `APIClient` of before 0.30.
pub(super) fn is_client_type(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Reference(r) => is_client_type(&r.elem),
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "Client" || s.ident == "APIClient"),
        _ => false,
    }
}

/// Whether code builds a client of another cluster: it reads a kubeconfig
/// (`Config::from_custom_kubeconfig`, `Kubeconfig::from_yaml`, ..), calls a
/// function of `remote_fns`, or uses a variable of `remote_vars`.
pub(super) fn mentions_remote(
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
pub(super) fn expr_mentions_remote(
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

pub(super) struct RemoteFinder<'a> {
    pub(super) remote_fns: &'a HashSet<String>,
    pub(super) remote_vars: &'a HashSet<String>,
    pub(super) found: bool,
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
pub(super) fn remote_locals(
    block: &syn::Block,
    index: &Index,
    params: HashSet<String>,
) -> HashSet<String> {
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

/// Adds to the remote functions those that return what one gives.
pub(super) fn spread_remote_fns(index: &mut Index) {
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
pub(super) fn find_remote_params(files: &[(&Path, syn::File)], index: &mut Index) {
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

/// The names the files call, outside tests: those called (or passed) by
/// a path, and those called with method syntax.
#[derive(Default)]
pub(super) struct Called {
    pub(super) paths: HashSet<String>,
    pub(super) methods: HashSet<String>,
}

impl Called {
    /// Whether a function of this name may be called: a free function
    /// only through a path (`prune(..)`, `run(reconcile::<K>)`), never by
    /// another crate's method of its name (`builder.status(200)`).
    pub(super) fn may_call(&self, function: &str, associated: bool) -> bool {
        self.paths.contains(function) || (associated && self.methods.contains(function))
    }
}

/// What the files call, outside tests.
pub(super) fn called_names<'f>(files: impl Iterator<Item = &'f syn::File>) -> Called {
    struct Calls(Called);
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
        // A function called, or passed as a value (`run(reconcile::<K>)`).
        fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
            if let Some(last) = path.path.segments.last() {
                self.0.paths.insert(last.ident.to_string());
            }
            syn::visit::visit_expr_path(self, path);
        }
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            self.0.methods.insert(call.method.to_string());
            syn::visit::visit_expr_method_call(self, call);
        }
    }
    let mut calls = Calls(Called::default());
    for file in files {
        calls.visit_file(file);
    }
    calls.0
}

/// Whether a file's `use`s bring in rsop-runtime.
pub(super) fn uses_runtime(imports: &HashMap<String, Vec<String>>) -> bool {
    imports
        .values()
        .any(|path| path.first().is_some_and(|first| first == "rsop_runtime"))
}

/// The crate's functions a file names by a module path (`secret::new(..)`,
/// or `new(..)` after `use crate::svc::k8s::secret::new`): the module, from
/// the crate's root, and the name. The module's file is read for what they
/// return even when it makes no request itself.
pub(super) fn module_calls(
    file: &syn::File,
    imports: &HashMap<String, Vec<String>>,
) -> HashSet<(Vec<String>, String)> {
    struct Calls<'a> {
        imports: &'a HashMap<String, Vec<String>>,
        found: HashSet<(Vec<String>, String)>,
    }
    impl<'ast> Visit<'ast> for Calls<'_> {
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            for expr in macro_exprs(mac).iter().flatten() {
                self.visit_expr(expr);
            }
        }
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = &*call.func {
                let path = from_root(
                    p.path
                        .segments
                        .iter()
                        .map(|s| s.ident.to_string())
                        .collect(),
                    self.imports,
                );
                // Only a file of the crate whose module path ends so is
                // read: another crate's module (`std::mem`) has none.
                if let [module @ .., name] = path.as_slice()
                    && !module.is_empty()
                    && module.iter().all(|m| m.starts_with(char::is_lowercase))
                {
                    self.found.insert((module.to_vec(), name.clone()));
                }
            }
            syn::visit::visit_expr_call(self, call);
        }
    }
    let mut calls = Calls {
        imports,
        found: HashSet::new(),
    };
    calls.visit_file(file);
    calls.found
}
