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
pub fn calls(files: &[SourceFile]) -> Vec<StorageChoice> {
    let mut out = Vec::new();
    for file in files.iter().filter(|f| !f.dependency) {
        if !file.text.contains("merge_crds") {
            continue;
        }
        let Ok(parsed) = syn::parse_file(&file.text) else {
            continue;
        };
        let default = BuildConfig::default();
        let mut finder = Finder {
            file: file.path.clone(),
            config: file.config.as_deref().unwrap_or(&default),
            out: &mut out,
        };
        finder.visit_file(&parsed);
    }
    out
}

struct Finder<'a> {
    file: std::path::PathBuf,
    /// What a normal build of the file's package compiles: a call in test
    /// code or behind a feature that is off never runs.
    config: &'a BuildConfig,
    out: &'a mut Vec<StorageChoice>,
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let test = f.attrs.iter().any(|a| a.path().is_ident("test"));
        if !test && self.config.enabled(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
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
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(version),
            ..
        }) = version
        else {
            return;
        };
        let roots: Vec<String> = elements(list).iter().filter_map(crd_root).collect();
        if roots.is_empty() {
            return;
        }
        self.out.push(StorageChoice {
            roots,
            version: version.value(),
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
}
