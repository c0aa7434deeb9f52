//! The files rustc compiles: the module tree of a package's library and
//! binary, followed from its crate roots through `mod` declarations as a
//! normal build resolves them.
//!
//! A repository often keeps `.rs` files that no `mod` reaches (a type that
//! moved, a draft, a generated file no longer used); rustc never reads them,
//! and neither does `rsop manifests`. A declaration counts when its `#[cfg]`
//! holds for a normal build of the package on this machine: `test` is off,
//! the features are the package's default ones, and `unix`, `target_os` and
//! the like are this machine's. `#[path = "..."]` (also in `cfg_attr`) moves
//! a module's file as rustc does.
//!
//! Only the declarations are read, with proc-macro2's lexer (no parse), and
//! only in files whose text has `mod name;` somewhere.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

use crate::error::{Error, Result};

/// One file of the module tree.
#[derive(Debug)]
pub struct ModuleFile {
    pub path: PathBuf,
    pub text: String,
    /// Its module path, `[]` for a crate root.
    pub module: Vec<String>,
}

/// What a normal build of one package enables.
#[derive(Debug, Default)]
pub struct BuildConfig {
    features: BTreeSet<String>,
    /// The name the depending crate's code calls the package by, when it
    /// is read as a dependency: the first segment of its modules' paths.
    pub dependency: Option<String>,
    /// The registry and git dependencies the package's code names that
    /// depend on kube and that cargo has not downloaded, by the name code
    /// calls each by: requests their functions send are not read.
    pub unread: Vec<String>,
}

impl BuildConfig {
    /// The default features of the package whose manifest is `manifest`,
    /// with the features they enable in turn.
    pub fn from_manifest(manifest: Option<&toml_edit::DocumentMut>) -> Self {
        Self::with_features(manifest, &[], true)
    }

    /// The features of the package whose manifest is `manifest` as a
    /// dependent enables them: `features`, and the default ones unless
    /// `default-features = false`, with the features they enable in turn.
    pub fn with_features(
        manifest: Option<&toml_edit::DocumentMut>,
        features: &[String],
        defaults: bool,
    ) -> Self {
        let requested = features;
        let mut features = BTreeSet::new();
        let Some(table) = manifest
            .and_then(|m| m.get("features"))
            .and_then(toml_edit::Item::as_table_like)
        else {
            // No `[features]`: what is asked for are the implicit features
            // of optional dependencies.
            features.extend(requested.iter().cloned());
            return Self {
                features,
                dependency: None,
                unread: Vec::new(),
            };
        };
        let mut queue: Vec<String> = requested.to_vec();
        if defaults {
            queue.push("default".to_string());
        }
        while let Some(feature) = queue.pop() {
            if !features.insert(feature.clone()) {
                continue;
            }
            let Some(enables) = table.get(&feature).and_then(toml_edit::Item::as_array) else {
                continue;
            };
            for enabled in enables.iter().filter_map(toml_edit::Value::as_str) {
                // `dep:x` and `x/feature` name dependencies, not features of
                // this package; an optional dependency `x` is also a feature.
                if let Some(name) = enabled.split('/').next().filter(|n| !n.starts_with("dep:")) {
                    queue.push(name.trim_end_matches('?').to_string());
                }
            }
        }
        features.remove("default");
        Self {
            features,
            dependency: None,
            unread: Vec::new(),
        }
    }

    /// Whether every `#[cfg(...)]` of `attrs` holds: whether a normal build
    /// compiles the item they stand on.
    pub fn enabled(&self, attrs: &[syn::Attribute]) -> bool {
        attrs.iter().all(|a| {
            if !a.path().is_ident("cfg") {
                return true;
            }
            match &a.meta {
                syn::Meta::List(list) => {
                    let predicate: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
                    self.holds(&predicate)
                }
                _ => true,
            }
        })
    }

    /// `items` as a normal build compiles them: without the items, fields
    /// and variants whose `#[cfg(...)]` does not hold (at any depth of
    /// inline modules), and with each `#[cfg_attr(pred, attrs..)]` replaced
    /// by its attributes where `pred` holds and dropped where it does not
    /// (`#[cfg_attr(feature = "schemars", schemars(extend(..)))]`).
    pub fn keep_enabled(&self, items: Vec<syn::Item>) -> Vec<syn::Item> {
        use syn::visit_mut::VisitMut;
        let mut items: Vec<syn::Item> = items
            .into_iter()
            .filter(|item| self.enabled(item_attrs(item)))
            .collect();
        let mut expand = CfgExpander { config: self };
        for item in &mut items {
            expand.visit_item_mut(item);
        }
        items
    }

    /// The code of `file` a normal build leaves out for its features: the
    /// items, `impl` members, statements and `match` arms under a
    /// `#[cfg(...)]` on a feature that does not hold, each as its first and
    /// last line and the `cfg` predicate (`feature = "gateway"`). A request
    /// there is one the default build does not make. Other predicates
    /// (the target, `debug_assertions`) are those of the build that ships,
    /// which this machine's are not: they leave the code in.
    pub fn disabled_spans(&self, file: &syn::File) -> Vec<(usize, usize, String)> {
        use syn::spanned::Spanned;
        use syn::visit::Visit;
        struct Spans<'a> {
            config: &'a BuildConfig,
            found: Vec<(usize, usize, String)>,
        }
        impl Spans<'_> {
            /// Whether `node` is compiled; if not, its span is recorded.
            /// Only a feature decides: the target and `debug_assertions` of
            /// the build that ships are not this machine's.
            fn kept(&mut self, attrs: &[syn::Attribute], node: &impl Spanned) -> bool {
                let by_feature = |a: &&syn::Attribute| {
                    a.path().is_ident("cfg")
                        && matches!(&a.meta, syn::Meta::List(list) if {
                            let predicate: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
                            self.config.off_by_features(&predicate)
                        })
                };
                let predicate = attrs.iter().find(by_feature).and_then(|a| match &a.meta {
                    syn::Meta::List(list) => Some(list.tokens.to_string()),
                    _ => None,
                });
                let Some(predicate) = predicate else {
                    return true;
                };
                let span = node.span();
                self.found
                    .push((span.start().line, span.end().line, predicate));
                false
            }
        }
        impl<'ast> Visit<'ast> for Spans<'_> {
            fn visit_item(&mut self, item: &'ast syn::Item) {
                if self.kept(item_attrs(item), item) {
                    syn::visit::visit_item(self, item);
                }
            }
            fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
                let attrs: &[syn::Attribute] = match item {
                    syn::ImplItem::Const(c) => &c.attrs,
                    syn::ImplItem::Fn(f) => &f.attrs,
                    syn::ImplItem::Type(t) => &t.attrs,
                    syn::ImplItem::Macro(m) => &m.attrs,
                    _ => &[],
                };
                if self.kept(attrs, item) {
                    syn::visit::visit_impl_item(self, item);
                }
            }
            fn visit_trait_item(&mut self, item: &'ast syn::TraitItem) {
                let attrs: &[syn::Attribute] = match item {
                    syn::TraitItem::Const(c) => &c.attrs,
                    syn::TraitItem::Fn(f) => &f.attrs,
                    syn::TraitItem::Type(t) => &t.attrs,
                    syn::TraitItem::Macro(m) => &m.attrs,
                    _ => &[],
                };
                if self.kept(attrs, item) {
                    syn::visit::visit_trait_item(self, item);
                }
            }
            fn visit_stmt(&mut self, stmt: &'ast syn::Stmt) {
                let attrs: &[syn::Attribute] = match stmt {
                    syn::Stmt::Local(l) => &l.attrs,
                    // An item is weighed where it is visited.
                    syn::Stmt::Item(_) => &[],
                    syn::Stmt::Expr(e, _) => expr_attrs(e),
                    syn::Stmt::Macro(m) => &m.attrs,
                };
                if self.kept(attrs, stmt) {
                    syn::visit::visit_stmt(self, stmt);
                }
            }
            fn visit_arm(&mut self, arm: &'ast syn::Arm) {
                if self.kept(&arm.attrs, arm) {
                    syn::visit::visit_arm(self, arm);
                }
            }
        }
        let mut spans = Spans {
            config: self,
            found: Vec::new(),
        };
        spans.visit_file(file);
        spans.found
    }

    /// `attrs` with each `cfg_attr` expanded as a normal build expands it.
    fn expand_cfg_attr(&self, attrs: &mut Vec<syn::Attribute>) {
        if !attrs.iter().any(|a| a.path().is_ident("cfg_attr")) {
            return;
        }
        let mut out = Vec::with_capacity(attrs.len());
        let mut pending: Vec<syn::Attribute> = std::mem::take(attrs);
        pending.reverse();
        while let Some(attr) = pending.pop() {
            if !attr.path().is_ident("cfg_attr") {
                out.push(attr);
                continue;
            }
            let Ok(args) = attr.parse_args_with(
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            ) else {
                // Not the `cfg_attr` rustc knows: left for the reader to judge.
                out.push(attr);
                continue;
            };
            let mut args = args.into_iter();
            let Some(predicate) = args.next() else {
                continue;
            };
            let predicate: Vec<TokenTree> = quote::ToTokens::to_token_stream(&predicate)
                .into_iter()
                .collect();
            if !self.holds(&predicate) {
                continue;
            }
            // In order, and expanded again if they are `cfg_attr` too.
            let expanded: Vec<syn::Attribute> = args
                .map(|meta| syn::Attribute {
                    pound_token: attr.pound_token,
                    style: attr.style,
                    bracket_token: attr.bracket_token,
                    meta,
                })
                .collect();
            pending.extend(expanded.into_iter().rev());
        }
        *attrs = out;
    }

    /// Whether the predicate of a `#[cfg(...)]` holds.
    /// [`Self::holds`] with every option but `feature` taken as `others`.
    fn holds_by_features(&self, predicate: &[TokenTree], others: bool) -> bool {
        combine(
            predicate,
            true,
            &|name, rest, positive| match (name, rest) {
                ("feature", [TokenTree::Punct(eq), TokenTree::Literal(value)])
                    if eq.as_char() == '=' =>
                {
                    self.features.contains(&unquote(&value.to_string()))
                }
                // Under a `not`, the bound taken is the other one.
                _ => others == positive,
            },
        )
    }

    /// Whether the features alone make `#[cfg(predicate)]` false, whatever
    /// the target and profile.
    fn off_by_features(&self, predicate: &[TokenTree]) -> bool {
        !self.holds_by_features(predicate, true) && !self.holds_by_features(predicate, false)
    }

    fn holds(&self, predicate: &[TokenTree]) -> bool {
        combine(predicate, true, &|name, rest, _| match rest {
            [] => {
                name == "debug_assertions"
                    || (name == "unix" && cfg!(unix))
                    || (name == "windows" && cfg!(windows))
            }
            [TokenTree::Punct(eq), TokenTree::Literal(value)] if eq.as_char() == '=' => {
                let value = unquote(&value.to_string());
                match name {
                    "feature" => self.features.contains(&value),
                    "target_os" => value == std::env::consts::OS,
                    "target_family" => value == std::env::consts::FAMILY,
                    "target_arch" => value == std::env::consts::ARCH,
                    "target_pointer_width" => value == (usize::BITS).to_string(),
                    "panic" => value == "unwind",
                    // Other names are unset unless a build script sets them,
                    // which a static reading cannot know: like rustc, false.
                    _ => false,
                }
            }
            _ => false,
        })
    }
}

/// A `cfg` predicate with `all`, `any` and `not` applied, each other option
/// given by `option(name, rest, positive)`: `positive` is false under an odd
/// number of `not`s, and `name` is empty for what is not an option.
fn combine(
    predicate: &[TokenTree],
    positive: bool,
    option: &dyn Fn(&str, &[TokenTree], bool) -> bool,
) -> bool {
    let [TokenTree::Ident(name), rest @ ..] = predicate else {
        return option("", predicate, positive);
    };
    let name = name.to_string();
    match (name.as_str(), rest) {
        ("all", [TokenTree::Group(g)]) => split_commas(g.stream())
            .iter()
            .all(|p| combine(p, positive, option)),
        ("any", [TokenTree::Group(g)]) => split_commas(g.stream())
            .iter()
            .any(|p| combine(p, positive, option)),
        ("not", [TokenTree::Group(g)]) => {
            let inner = split_commas(g.stream());
            inner.len() == 1 && !combine(&inner[0], !positive, option)
        }
        _ => option(&name, rest, positive),
    }
}

/// Applies [`BuildConfig::expand_cfg_attr`] to every attribute list, and
/// `#[cfg]` to fields and variants, of the items it visits.
struct CfgExpander<'a> {
    config: &'a BuildConfig,
}

impl syn::visit_mut::VisitMut for CfgExpander<'_> {
    fn visit_attributes_mut(&mut self, attrs: &mut Vec<syn::Attribute>) {
        self.config.expand_cfg_attr(attrs);
    }

    fn visit_item_mut(&mut self, item: &mut syn::Item) {
        // An inline module's items: those that are compiled, each visited
        // once by the generic walk below.
        if let syn::Item::Mod(m) = item
            && let Some((_, inner)) = m.content.as_mut()
        {
            inner.retain(|i| self.config.enabled(item_attrs(i)));
        }
        syn::visit_mut::visit_item_mut(self, item);
    }

    fn visit_fields_named_mut(&mut self, fields: &mut syn::FieldsNamed) {
        fields.named = std::mem::take(&mut fields.named)
            .into_iter()
            .filter(|f| self.config.enabled(&f.attrs))
            .collect();
        syn::visit_mut::visit_fields_named_mut(self, fields);
    }

    fn visit_fields_unnamed_mut(&mut self, fields: &mut syn::FieldsUnnamed) {
        fields.unnamed = std::mem::take(&mut fields.unnamed)
            .into_iter()
            .filter(|f| self.config.enabled(&f.attrs))
            .collect();
        syn::visit_mut::visit_fields_unnamed_mut(self, fields);
    }

    fn visit_item_enum_mut(&mut self, e: &mut syn::ItemEnum) {
        e.variants = std::mem::take(&mut e.variants)
            .into_iter()
            .filter(|v| self.config.enabled(&v.attrs))
            .collect();
        syn::visit_mut::visit_item_enum_mut(self, e);
    }

    // Function bodies hold no types a schema reads.
    fn visit_block_mut(&mut self, _: &mut syn::Block) {}
}

/// The outer attributes of an expression that can stand as a statement.
fn expr_attrs(expr: &syn::Expr) -> &[syn::Attribute] {
    match expr {
        syn::Expr::Async(e) => &e.attrs,
        syn::Expr::Await(e) => &e.attrs,
        syn::Expr::Assign(e) => &e.attrs,
        syn::Expr::Block(e) => &e.attrs,
        syn::Expr::Call(e) => &e.attrs,
        syn::Expr::ForLoop(e) => &e.attrs,
        syn::Expr::If(e) => &e.attrs,
        syn::Expr::Let(e) => &e.attrs,
        syn::Expr::Loop(e) => &e.attrs,
        syn::Expr::Macro(e) => &e.attrs,
        syn::Expr::Match(e) => &e.attrs,
        syn::Expr::MethodCall(e) => &e.attrs,
        syn::Expr::Return(e) => &e.attrs,
        syn::Expr::Try(e) => &e.attrs,
        syn::Expr::Unsafe(e) => &e.attrs,
        syn::Expr::While(e) => &e.attrs,
        _ => &[],
    }
}

/// The outer attributes of an item.
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Reads the module tree from `roots` (a crate's `lib.rs` and `main.rs`,
/// each the module `[]`), with every path under `prefix`.
pub fn reachable(
    roots: &[PathBuf],
    prefix: &[String],
    config: &BuildConfig,
) -> Result<Vec<ModuleFile>> {
    // Every file is tokenized here: on a thread of its own, whose copy of
    // the texts goes with it.
    crate::parallel::isolated(|| reachable_here(roots, prefix, config))
}

fn reachable_here(
    roots: &[PathBuf],
    prefix: &[String],
    config: &BuildConfig,
) -> Result<Vec<ModuleFile>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    // (file, module path, whether its children live in its own directory)
    let mut queue: Vec<(PathBuf, Vec<String>, bool)> = roots
        .iter()
        .map(|root| (root.clone(), prefix.to_vec(), true))
        .collect();
    while let Some((path, module, mod_rs)) = queue.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            // rustc reports a declared module without a file; so does the
            // module check later, by the declaration.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io("read", &path, e)),
        };
        let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
        // The directory of this file's child modules.
        let children_dir = if mod_rs {
            dir.clone()
        } else {
            let stem = path.file_stem().unwrap_or_default();
            dir.join(stem)
        };
        if mentions_mod(&text)
            && let Ok(tokens) = TokenStream::from_str(&text)
        {
            let mut found = Vec::new();
            declarations(tokens, config, &mut Vec::new(), &mut found);
            for declared in found {
                let mut child = module.clone();
                child.extend(declared.inline.iter().cloned());
                child.push(declared.name.clone());
                let file = match &declared.path {
                    // Relative to this file's directory, outside inline
                    // modules; within one, to the inline module's.
                    Some(p) if declared.inline.is_empty() => (dir.join(p), true),
                    Some(p) => (children_dir.join(declared.inline.join("/")).join(p), true),
                    None => {
                        let base = children_dir.join(declared.inline.join("/"));
                        let flat = base.join(format!("{}.rs", declared.name));
                        if flat.is_file() {
                            (flat, false)
                        } else {
                            (base.join(&declared.name).join("mod.rs"), true)
                        }
                    }
                };
                queue.push((file.0, child, file.1));
            }
        }
        out.push(ModuleFile { path, text, module });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Whether `text` may declare an out-of-line module: the word `mod`, a
/// name and `;`, as text. Files without one (most generated type files,
/// whose inline `mod prelude { ... }` is no such declaration) are not lexed.
fn mentions_mod(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memmem::find_iter(bytes, b"mod").any(|at| {
        let before = text[..at].chars().next_back();
        if before.is_some_and(is_ident_char) {
            return false;
        }
        let rest = &text[at + 3..];
        let name = rest.trim_start();
        if name.len() == rest.len() {
            return false;
        }
        let name = name.strip_prefix("r#").unwrap_or(name);
        let after = name.trim_start_matches(is_ident_char);
        after.len() < name.len() && after.trim_start().starts_with(';')
    })
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// An out-of-line `mod name;` whose `cfg` holds.
struct Declared {
    /// The inline modules it is declared in, outermost first.
    inline: Vec<String>,
    name: String,
    /// Its `#[path]`.
    path: Option<String>,
}

/// Collects the out-of-line module declarations of `tokens`, descending
/// into inline modules whose `cfg` holds.
fn declarations(
    tokens: TokenStream,
    config: &BuildConfig,
    inline: &mut Vec<String>,
    found: &mut Vec<Declared>,
) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut attrs: Vec<TokenStream> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                // `#[...]` is an outer attribute; `#![...]` an inner one,
                // which says nothing of the next item.
                match tokens.get(i + 1) {
                    Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket => {
                        attrs.push(g.stream());
                        i += 2;
                        continue;
                    }
                    _ => {}
                }
            }
            TokenTree::Ident(ident) if *ident == "mod" => {
                if let Some(TokenTree::Ident(name)) = tokens.get(i + 1) {
                    let name = name.to_string();
                    let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
                    let (enabled, path) = evaluate(&attrs, config);
                    match tokens.get(i + 2) {
                        Some(TokenTree::Punct(p)) if p.as_char() == ';' && enabled => {
                            found.push(Declared {
                                inline: inline.clone(),
                                name,
                                path,
                            });
                        }
                        Some(TokenTree::Group(g))
                            if g.delimiter() == Delimiter::Brace && enabled =>
                        {
                            inline.push(name);
                            declarations(g.stream(), config, inline, found);
                            inline.pop();
                        }
                        _ => {}
                    }
                    attrs.clear();
                    i += 3;
                    continue;
                }
            }
            // The end of an item: its attributes are spent.
            TokenTree::Punct(p) if p.as_char() == ';' => attrs.clear(),
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => attrs.clear(),
            _ => {}
        }
        i += 1;
    }
}

/// Whether an item with `attrs` is compiled, and its `#[path]` if any.
fn evaluate(attrs: &[TokenStream], config: &BuildConfig) -> (bool, Option<String>) {
    let mut enabled = true;
    let mut path = None;
    let mut pending: Vec<Vec<TokenTree>> = attrs
        .iter()
        .map(|a| a.clone().into_iter().collect())
        .collect();
    while let Some(attr) = pending.pop() {
        match attr.as_slice() {
            [TokenTree::Ident(name), TokenTree::Group(g)] if *name == "cfg" => {
                let predicate = split_commas(g.stream());
                enabled &= predicate.len() == 1 && config.holds(&predicate[0]);
            }
            [TokenTree::Ident(name), TokenTree::Group(g)] if *name == "cfg_attr" => {
                let mut parts = split_commas(g.stream()).into_iter();
                if let Some(predicate) = parts.next()
                    && config.holds(&predicate)
                {
                    pending.extend(parts);
                }
            }
            [
                TokenTree::Ident(name),
                TokenTree::Punct(eq),
                TokenTree::Literal(value),
            ] if *name == "path" && eq.as_char() == '=' => {
                path = Some(unquote(&value.to_string()));
            }
            _ => {}
        }
    }
    (enabled, path)
}

/// The comma-separated parts of a token stream.
fn split_commas(tokens: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut parts = vec![Vec::new()];
    for token in tokens {
        match &token {
            TokenTree::Punct(p) if p.as_char() == ',' => parts.push(Vec::new()),
            _ => parts.last_mut().expect("one part at least").push(token),
        }
    }
    parts.retain(|p| !p.is_empty());
    parts
}

/// The value of a string literal token, escapes aside (paths and feature
/// names have none).
fn unquote(literal: &str) -> String {
    literal.trim_matches('"').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(manifest: &str) -> BuildConfig {
        BuildConfig::from_manifest(Some(&manifest.parse().unwrap()))
    }

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    fn modules(dir: &Path, config: &BuildConfig) -> Vec<(String, String)> {
        let roots = [dir.join("src/lib.rs"), dir.join("src/main.rs")];
        reachable(&roots, &[], config)
            .unwrap()
            .into_iter()
            .map(|f| {
                let path = f.path.strip_prefix(dir).unwrap().display().to_string();
                (path, f.module.join("::"))
            })
            .collect()
    }

    #[test]
    fn only_declared_modules_are_read_where_rustc_finds_them() {
        let tmp = tempfile::tempdir().unwrap();
        write(
            tmp.path(),
            &[
                (
                    "src/lib.rs",
                    "//! mod in a comment: not a declaration\npub mod api;\n#[path = \"gen/client.rs\"]\nmod client;\nmod inline { pub mod nested; }\n",
                ),
                ("src/main.rs", "mod args;\nfn main() {}\n"),
                ("src/args.rs", "fn f() {}\n"),
                ("src/api/mod.rs", "pub mod v1;\n"),
                ("src/api/v1.rs", "mod types;\n"),
                ("src/api/v1/types.rs", "pub struct A;\n"),
                ("src/gen/client.rs", "mod helpers;\n"),
                ("src/gen/helpers.rs", ""),
                ("src/inline/nested.rs", ""),
                // Never declared: rustc never reads it.
                ("src/types.rs", "pub struct Stale;\n"),
                ("src/api/old.rs", "pub struct Stale;\n"),
            ],
        );
        let found = modules(tmp.path(), &BuildConfig::default());
        let expected = [
            ("src/api/mod.rs", "api"),
            // Paths sort by component: `v1` before `v1.rs`.
            ("src/api/v1/types.rs", "api::v1::types"),
            ("src/api/v1.rs", "api::v1"),
            ("src/args.rs", "args"),
            ("src/gen/client.rs", "client"),
            ("src/gen/helpers.rs", "client::helpers"),
            ("src/inline/nested.rs", "inline::nested"),
            ("src/lib.rs", ""),
            ("src/main.rs", ""),
        ];
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(p, m)| ((*p).to_string(), (*m).to_string()))
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn only_files_that_may_declare_a_module_are_lexed() {
        for text in ["mod a;", "pub mod  r#type ;", "x\n#[cfg(test)]\nmod tests;"] {
            assert!(mentions_mod(text), "{text}");
        }
        for text in [
            "mod prelude {",
            "// a model;",
            "pub mod;",
            "fn f() {}",
            "mode x;",
        ] {
            assert!(!mentions_mod(text), "{text}");
        }
    }

    /// Without a `[features]` table, the features a dependent asks for are
    /// the implicit ones of optional dependencies, and they hold.
    #[test]
    fn requested_features_hold_without_a_features_table() {
        let manifest: toml_edit::DocumentMut =
            "[dependencies]\nschemars = { version = \"1\", optional = true }\n"
                .parse()
                .unwrap();
        let config = BuildConfig::with_features(Some(&manifest), &["schemars".to_string()], true);
        let attr: syn::Attribute = syn::parse_quote!(#[cfg(feature = "schemars")]);
        assert!(config.enabled(&[attr]));
    }

    /// Items, fields and variants under a `cfg` that does not hold are
    /// left out, and `cfg_attr` becomes its attributes where its predicate
    /// holds (nested ones too) and nothing where it does not.
    #[test]
    fn cfg_and_cfg_attr_apply_inside_items() {
        let manifest: toml_edit::DocumentMut =
            "[features]\ndefault = [\"on\"]\non = []\noff = []\n"
                .parse()
                .unwrap();
        let config = BuildConfig::from_manifest(Some(&manifest));
        let file: syn::File = syn::parse_str(
            "#[cfg_attr(feature = \"on\", serde(rename_all = \"camelCase\"))]\n\
             pub struct S {\n\
                 #[cfg_attr(feature = \"on\", schemars(range(max = 3)), serde(default))]\n\
                 #[cfg_attr(feature = \"off\", schemars(range(max = 9)))]\n\
                 pub a: i32,\n\
                 #[cfg(feature = \"off\")]\n pub b: i32,\n\
                 #[cfg_attr(feature = \"on\", cfg_attr(unix, doc = \"x\"))]\n pub c: i32,\n}\n\
             pub enum E { A, #[cfg(feature = \"off\")] B }\n\
             #[cfg(feature = \"off\")]\npub struct Gone;\n",
        )
        .unwrap();
        let items = config.keep_enabled(file.items);
        let text = quote::ToTokens::to_token_stream(&syn::File {
            shebang: None,
            attrs: Vec::new(),
            items,
        })
        .to_string();
        assert!(
            text.contains("serde (rename_all = \"camelCase\")"),
            "{text}"
        );
        assert!(
            text.contains("schemars (range (max = 3))") && text.contains("serde (default)"),
            "{text}"
        );
        assert!(
            !text.contains("max = 9") && !text.contains("pub b") && !text.contains(" B "),
            "{text}"
        );
        assert!(
            !text.contains("Gone") && !text.contains("cfg_attr"),
            "{text}"
        );
        assert_eq!(text.contains("doc = \"x\""), cfg!(unix), "{text}");
    }

    #[test]
    fn cfg_is_evaluated_as_a_normal_build_with_default_features() {
        let tmp = tempfile::tempdir().unwrap();
        write(
            tmp.path(),
            &[
                (
                    "src/lib.rs",
                    "#[cfg(test)]\nmod tests;\n#[cfg(feature = \"extra\")]\nmod extra;\n#[cfg(feature = \"off\")]\nmod off;\n#[cfg(all(unix, not(test)))]\nmod host;\n#[cfg(docsrs)]\nmod docs;\n#[cfg_attr(feature = \"extra\", path = \"alt.rs\")]\nmod moved;\n#[cfg(test)]\nmod inline_tests { mod fixtures; }\n",
                ),
                ("src/tests.rs", ""),
                ("src/extra.rs", ""),
                ("src/off.rs", ""),
                ("src/host.rs", ""),
                ("src/docs.rs", ""),
                ("src/alt.rs", ""),
                ("src/moved.rs", ""),
                ("src/inline_tests/fixtures.rs", ""),
            ],
        );
        let manifest = "[features]\ndefault = [\"std\"]\nstd = [\"extra\", \"dep:serde\", \"kube/ws\"]\nextra = []\noff = []\n";
        let found: Vec<String> = modules(tmp.path(), &config(manifest))
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        let mut expected = vec!["src/alt.rs", "src/extra.rs", "src/lib.rs"];
        if cfg!(unix) {
            expected.insert(2, "src/host.rs");
        }
        assert_eq!(found, expected);
    }
}
