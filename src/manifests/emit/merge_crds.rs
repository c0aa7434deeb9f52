//! The storage version a project chooses in code. Projects written before
//! kube-derive's `storage` key (and many since) merge their versions
//! themselves, in a crdgen binary or at start-up:
//!
//! ```text
//! let crd = merge_crds(vec![v1::Widget::crd(), v2::Widget::crd()], "v2")?;
//! ```
//!
//! kube's `merge_crds` marks the named version as the storage version and
//! every other one as not stored, whatever their `#[kube(storage)]` says.
//! rsop finds such calls in the sources and does the same.

use std::path::Path;

use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::manifests::diagnostics::Location;
use crate::manifests::read::modules::BuildConfig;
use crate::manifests::read::source::SourceFile;

/// One `merge_crds(vec![A::crd(), B::crd()], "v2")` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageChoice {
    /// The names of the types whose `crd()` the call merges (the last
    /// segment of each path: the kind's generated struct).
    pub roots: Vec<String>,
    /// The version it stores.
    pub version: String,
    pub location: Location,
}

/// Every `merge_crds` call of the crate's own files (binaries included),
/// whose arguments rsop can read.
///
/// The list may be a `let` binding of the function (`let crds = vec![..];
/// merge_crds(crds, ..)`), and the version a string constant of the crate
/// (`merge_crds(.., latest::VERSION)`), found by its name when every
/// constant of that name has the one value.
pub fn calls(files: &[SourceFile]) -> Vec<StorageChoice> {
    crate::parallel::isolated(|| calls_here(files))
}

fn calls_here(files: &[SourceFile]) -> Vec<StorageChoice> {
    let mut out = Vec::new();
    let mut parsed_files = Vec::new();
    for file in files.iter().filter(|f| !f.dependency) {
        if !file.text.contains("merge_crds") {
            continue;
        }
        let Ok(parsed) = syn::parse_file(&file.text) else {
            continue;
        };
        parsed_files.push((file, parsed));
    }
    if parsed_files.is_empty() {
        return out;
    }
    let constants = string_constants(files);
    for (file, parsed) in &parsed_files {
        let default = BuildConfig::default();
        let mut finder = Finder {
            file: file.path.clone(),
            config: file.config.as_deref().unwrap_or(&default),
            constants: &constants,
            lets: Vec::new(),
            out: &mut out,
        };
        finder.visit_file(parsed);
    }
    out
}

/// A `const NAME: &str = "..";` item of the crate: its file, the inline
/// modules around it in that file, and its value.
#[derive(Debug)]
struct Constant {
    file: std::path::PathBuf,
    modules: Vec<String>,
    value: String,
}

/// The crate's string constants, by name.
fn string_constants(files: &[SourceFile]) -> std::collections::HashMap<String, Vec<Constant>> {
    struct Constants<'f> {
        file: &'f Path,
        modules: Vec<String>,
        out: std::collections::HashMap<String, Vec<Constant>>,
    }
    impl<'ast> Visit<'ast> for Constants<'_> {
        fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
            self.modules.push(m.ident.to_string());
            syn::visit::visit_item_mod(self, m);
            self.modules.pop();
        }
        fn visit_item_const(&mut self, c: &'ast syn::ItemConst) {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(value),
                ..
            }) = &*c.expr
            {
                self.out
                    .entry(c.ident.to_string())
                    .or_default()
                    .push(Constant {
                        file: self.file.to_path_buf(),
                        modules: self.modules.clone(),
                        value: value.value(),
                    });
            }
        }
    }
    let mut out = std::collections::HashMap::new();
    for file in files.iter().filter(|f| !f.dependency) {
        if !file.text.contains("const ") {
            continue;
        }
        if let Ok(parsed) = syn::parse_file(&file.text) {
            let mut constants = Constants {
                file: &file.path,
                modules: Vec::new(),
                out,
            };
            constants.visit_file(&parsed);
            out = constants.out;
        }
    }
    out
}

/// The `let name = value;` bindings of a function body, by name (the last
/// one wins).
fn bindings(block: &syn::Block) -> std::collections::HashMap<String, syn::Expr> {
    struct Lets(std::collections::HashMap<String, syn::Expr>);
    impl<'ast> Visit<'ast> for Lets {
        fn visit_local(&mut self, local: &'ast syn::Local) {
            syn::visit::visit_local(self, local);
            let pat = match &local.pat {
                syn::Pat::Type(t) => &*t.pat,
                other => other,
            };
            if let (syn::Pat::Ident(name), Some(init)) = (pat, &local.init) {
                self.0.insert(name.ident.to_string(), (*init.expr).clone());
            }
        }
        // A closure or nested function has bindings of its own.
        fn visit_item_fn(&mut self, _: &'ast syn::ItemFn) {}
    }
    let mut lets = Lets(std::collections::HashMap::new());
    lets.visit_block(block);
    lets.0
}

struct Finder<'a> {
    file: std::path::PathBuf,
    /// What a normal build of the file's package compiles: a call in test
    /// code or behind a feature that is off never runs.
    config: &'a BuildConfig,
    constants: &'a std::collections::HashMap<String, Vec<Constant>>,
    /// The bindings of the functions the visit is in, innermost last.
    lets: Vec<std::collections::HashMap<String, syn::Expr>>,
    out: &'a mut Vec<StorageChoice>,
}

impl Finder<'_> {
    /// The list a call merges: written in place, or a binding's value.
    fn list(&self, list: &syn::Expr) -> Vec<syn::Expr> {
        match list {
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|name| self.lets.last()?.get(&name.to_string()))
                .map(elements)
                .unwrap_or_default(),
            syn::Expr::Reference(r) => self.list(&r.expr),
            syn::Expr::MethodCall(m)
                if m.args.is_empty()
                    && matches!(m.method.to_string().as_str(), "to_vec" | "clone" | "into") =>
            {
                self.list(&m.receiver)
            }
            _ => elements(list),
        }
    }

    /// The stored version: a string literal, or a constant of the crate
    /// with one value (`.to_string()`/`.into()` aside).
    fn version(&self, version: &syn::Expr) -> Option<String> {
        match version {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(version),
                ..
            }) => Some(version.value()),
            // The constant the path names in this file (`latest::VERSION`
            // of an inline `mod latest`), else the crate's one value of
            // that name.
            syn::Expr::Path(p) => {
                let (last, modules) = p
                    .path
                    .segments
                    .pairs()
                    .collect::<Vec<_>>()
                    .split_last()
                    .map(|(last, modules)| {
                        (
                            last.value().ident.to_string(),
                            modules
                                .iter()
                                .map(|m| m.value().ident.to_string())
                                .filter(|m| m != "self")
                                .collect::<Vec<_>>(),
                        )
                    })?;
                let candidates = self.constants.get(&last)?;
                let here: Vec<&Constant> = candidates
                    .iter()
                    .filter(|c| c.file == self.file && c.modules == modules)
                    .collect();
                let chosen: Vec<&str> = if here.is_empty() {
                    candidates.iter().map(|c| c.value.as_str()).collect()
                } else {
                    here.iter().map(|c| c.value.as_str()).collect()
                };
                let first = *chosen.first()?;
                chosen
                    .iter()
                    .all(|v| *v == first)
                    .then(|| first.to_string())
            }
            syn::Expr::Reference(r) => self.version(&r.expr),
            syn::Expr::MethodCall(m)
                if m.args.is_empty()
                    && matches!(
                        m.method.to_string().as_str(),
                        "to_string" | "to_owned" | "into"
                    ) =>
            {
                self.version(&m.receiver)
            }
            _ => None,
        }
    }
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let test = f.attrs.iter().any(|a| a.path().is_ident("test"));
        if !test && self.config.enabled(&f.attrs) {
            self.lets.push(bindings(&f.block));
            syn::visit::visit_item_fn(self, f);
            self.lets.pop();
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if self.config.enabled(&f.attrs) {
            self.lets.push(bindings(&f.block));
            syn::visit::visit_impl_item_fn(self, f);
            self.lets.pop();
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if self.config.enabled(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        syn::visit::visit_expr_call(self, call);
        let syn::Expr::Path(func) = &*call.func else {
            return;
        };
        if func
            .path
            .segments
            .last()
            .is_none_or(|s| s.ident != "merge_crds")
        {
            return;
        }
        let mut args = call.args.iter();
        let (Some(list), Some(version)) = (args.next(), args.next()) else {
            return;
        };
        let Some(version) = self.version(version) else {
            return;
        };
        let roots: Vec<String> = self.list(list).iter().filter_map(crd_root).collect();
        if roots.is_empty() {
            return;
        }
        self.out.push(StorageChoice {
            roots,
            version,
            location: Location::of_span(&self.file, call.span()),
        });
    }
}

/// The elements of `vec![..]` or `[..]`.
fn elements(list: &syn::Expr) -> Vec<syn::Expr> {
    match list {
        syn::Expr::Macro(m) if m.mac.path.is_ident("vec") => m
            .mac
            .parse_body_with(
                syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
            )
            .map(|p| p.into_iter().collect())
            .unwrap_or_default(),
        syn::Expr::Array(a) => a.elems.iter().cloned().collect(),
        syn::Expr::Reference(r) => elements(&r.expr),
        _ => Vec::new(),
    }
}

/// `v1::Widget::crd()` (or `<v1::Widget as CustomResourceExt>::crd()`):
/// `Widget`.
fn crd_root(expr: &syn::Expr) -> Option<String> {
    let syn::Expr::Call(call) = expr else {
        return None;
    };
    let syn::Expr::Path(path) = &*call.func else {
        return None;
    };
    let segments: Vec<&syn::PathSegment> = path.path.segments.iter().collect();
    let [.., ty, method] = segments.as_slice() else {
        return path
            .qself
            .as_ref()
            .filter(|_| segments.last().is_some_and(|s| s.ident == "crd"))
            .and_then(|q| match &*q.ty {
                syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                _ => None,
            });
    };
    if method.ident != "crd" {
        return None;
    }
    if let Some(q) = &path.qself
        && let syn::Type::Path(p) = &*q.ty
    {
        return p.path.segments.last().map(|s| s.ident.to_string());
    }
    Some(ty.ident.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> SourceFile {
        SourceFile {
            path: "src/bin/crdgen.rs".into(),
            text: text.into(),
            dependency: false,
            config: None,
        }
    }

    #[test]
    fn calls_name_their_kinds_and_stored_version() {
        let text = "use kube::core::crd::merge_crds;\nfn main() {\n    let crd = merge_crds(vec![v1::Widget::crd(), v2::Widget::crd()], \"v2\").unwrap();\n    let other = kube::core::crd::merge_crds(vec![<a::Gadget as CustomResourceExt>::crd()], \"v1\");\n    let skipped = merge_crds(crds, \"v1\");\n}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { merge_crds(vec![v1::Widget::crd()], \"v1\"); }\n}\n#[test]\nfn u() { merge_crds(vec![v1::Widget::crd()], \"v1\"); }\n";
        let found = calls(&[file(text)]);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].roots, ["Widget", "Widget"]);
        assert_eq!(found[0].version, "v2");
        assert_eq!(found[0].location.line, 3);
        assert_eq!(found[1].roots, ["Gadget"]);
    }

    /// The list bound to a name first, the version a constant of a module.
    #[test]
    fn a_bound_list_and_a_constant_version_are_read() {
        let text = "mod latest {\n    pub const VERSION: &str = \"v2\";\n}\n\
                    async fn install() {\n    let versions = vec![v1::Widget::crd(), v2::Widget::crd()];\n    \
                    let crd = merge_crds(versions, latest::VERSION)?;\n}\n\
                    impl Installer {\n    fn gadget(&self) {\n        let list = [a::Gadget::crd()];\n        \
                    merge_crds(list.to_vec(), OTHER.to_string());\n        merge_crds(vec![a::Gadget::crd()], AMBIGUOUS);\n    }\n}\n\
                    const OTHER: &str = \"v1\";\nmod b { const AMBIGUOUS: &str = \"v1\"; }\nmod c { const AMBIGUOUS: &str = \"v2\"; }\n";
        let found = calls(&[file(text)]);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].roots, ["Widget", "Widget"]);
        assert_eq!(found[0].version, "v2");
        assert_eq!(found[0].location.line, 6);
        // `list.to_vec()` of a bound array, and a constant of the file.
        assert_eq!(found[1].roots, ["Gadget"]);
        assert_eq!(found[1].version, "v1");
    }
}
