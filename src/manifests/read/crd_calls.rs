//! The kinds a crate writes CRDs for itself. Operators that install their
//! own CRDs print them with `K::crd()`: a crdgen binary, a `main` that
//! dumps them, `merge_crds(vec![v1::K::crd(), v2::K::crd()], ..)`, a test
//! that writes the YAML. When a crate has such calls, they name the kinds
//! it owns: a `#[derive(CustomResource)]` kind that none names is a client
//! type of another project's kind, written by hand (a partial Gateway API
//! route, another operator's policy), whose CRD is not this project's to
//! install.
//!
//! A call counts when the function around it puts CRDs out: it serializes
//! them to YAML or pretty JSON, writes them, merges them, returns
//! `CustomResourceDefinition`s, or is a `main`. Test code (a `#[test]`, a
//! function under `#[cfg(test)]`, a file under `tests/`) counts only when
//! it also writes a file, so a test that looks at one kind's CRD never makes
//! the others foreign. The calls are found in the token trees, so that calls
//! inside macros (`println!`, `vec!`) count; `use .. as` renames are
//! followed. Calls that name no kind of the crate (`Self::crd()`, a generic
//! helper nothing instantiates) decide nothing: the caller then treats the
//! crate as one without calls.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};

use crate::manifests::diagnostics::Location;

/// What the crate's generating functions call `crd()` on.
#[derive(Debug, Clone, Default)]
pub struct CrdCalls {
    /// The type names before `::crd()` (`Widget` of `v1::Widget::crd()`).
    pub named: BTreeSet<String>,
    /// Where each of `named` is first called, when a call names it itself
    /// (not through a generic helper's turbofish).
    pub at: BTreeMap<String, Location>,
    /// Where the first generating call is, for the note.
    pub first: Option<Location>,
    /// Where a generating function changes a CRD after `crd()` gave it
    /// (`crd.spec.names.categories = None`): what it prints then differs
    /// from `crd()`, which is what rsop writes.
    pub edited: Option<Location>,
}

impl CrdCalls {
    /// Whether the crate makes any generating call at all.
    pub fn any(&self) -> bool {
        self.first.is_some()
    }

    /// Whether the calls name the kind whose generated struct is `root`.
    pub fn names(&self, root: &str) -> bool {
        self.named.contains(root)
    }
}

/// Identifiers that, in a function's body, say it puts CRDs out: YAML
/// writers, pretty or streaming JSON, and kube's merge.
const EMITTING: &[&str] = &[
    "serde_yaml",
    "serde_yml",
    "serde_yaml_ng",
    "serde_norway",
    "to_string_pretty",
    "to_writer",
    "to_writer_pretty",
    "to_vec_pretty",
    "merge_crds",
];

/// Identifiers that, in test code, say it writes a file.
const WRITING: &[&str] = &["write", "write_all", "File", "OpenOptions"];

/// Finds the generating `crd()` calls in `files` (path relative to the
/// package root, text).
pub fn scan<'a>(files: impl IntoIterator<Item = (&'a Path, &'a str)> + Send) -> CrdCalls {
    crate::parallel::isolated(|| scan_here(files))
}

/// Whether `text` may call `crd()`: `X::crd()`, `K::crd ()`,
/// `X::crd::<..>`, but not a mention of `crd` in a path or a comment.
fn may_call_crd(text: &str) -> bool {
    text.match_indices("crd").any(|(at, _)| {
        let rest = text[at + 3..].trim_start();
        rest.starts_with('(') || rest.starts_with("::<")
    })
}

fn scan_here<'a>(files: impl IntoIterator<Item = (&'a Path, &'a str)>) -> CrdCalls {
    let mut out = CrdCalls::default();
    // Receivers that are type parameters (`K::crd()` in a generic helper):
    // the helper's callers name the kinds in their turbofish.
    let mut generic_helpers: BTreeSet<String> = BTreeSet::new();
    // The files, for the second pass, which tokenizes again only those
    // that name a generic helper: a crate's token trees together are
    // several times its text.
    let mut parsed: Vec<(&Path, &str)> = Vec::new();
    for (path, text) in files {
        parsed.push((path, text));
        if !may_call_crd(text) {
            continue;
        }
        let Ok(tokens) = text.parse::<TokenStream>() else {
            continue;
        };
        let aliases = renames(tokens.clone());
        let in_tests = path.starts_with("tests");
        let mut found = Vec::new();
        functions(tokens.clone(), in_tests, &mut found);
        for f in found {
            if !f.emits {
                continue;
            }
            if out.edited.is_none()
                && !f.receivers.is_empty()
                && let Some(span) = f.spec_edit
            {
                out.edited = Some(Location::of_span(path, span));
            }
            for (receiver, span) in f.receivers {
                if receiver == "Self" {
                    continue;
                }
                if f.generics.contains(&receiver) {
                    generic_helpers.insert(f.name.clone());
                    continue;
                }
                let name = aliases.get(&receiver).cloned().unwrap_or(receiver);
                out.at
                    .entry(name.clone())
                    .or_insert_with(|| Location::of_span(path, span));
                out.named.insert(name);
                if out.first.is_none() {
                    out.first = Some(Location::of_span(path, span));
                }
            }
        }
    }
    if !generic_helpers.is_empty() {
        for (path, text) in &parsed {
            if generic_helpers.iter().any(|h| text.contains(h.as_str())) {
                let tokens = text.parse::<TokenStream>().unwrap_or_default();
                let aliases = renames(tokens.clone());
                let mut named = BTreeSet::new();
                turbofish_args(tokens, &generic_helpers, &mut named);
                if out.first.is_none() && !named.is_empty() {
                    out.first = Some(Location::new(*path, 1, 1));
                }
                out.named.extend(
                    named
                        .into_iter()
                        .map(|n| aliases.get(&n).cloned().unwrap_or(n)),
                );
            }
        }
    }
    out
}

/// The types among `names` whose `crd()` the crate writes by hand: an
/// `impl CustomResourceExt for T`, or an impl of `T`'s own (inherent or of
/// another trait) with an associated `fn crd`. Each with where its impl is.
pub fn hand_written<'a>(
    files: impl IntoIterator<Item = (&'a Path, &'a str)> + Send,
    names: &BTreeSet<String>,
) -> Vec<(String, Location)> {
    crate::parallel::isolated(|| hand_written_here(files, names))
}

fn hand_written_here<'a>(
    files: impl IntoIterator<Item = (&'a Path, &'a str)>,
    names: &BTreeSet<String>,
) -> Vec<(String, Location)> {
    fn visit(
        items: &[syn::Item],
        path: &Path,
        names: &BTreeSet<String>,
        out: &mut Vec<(String, Location)>,
    ) {
        for item in items {
            match item {
                syn::Item::Impl(imp) => {
                    let syn::Type::Path(ty) = imp.self_ty.as_ref() else {
                        continue;
                    };
                    let Some(name) = ty.path.segments.last().map(|s| s.ident.to_string()) else {
                        continue;
                    };
                    if !names.contains(&name) || out.iter().any(|(n, _)| *n == name) {
                        continue;
                    }
                    let ext = imp.trait_.as_ref().is_some_and(|(_, t, _)| {
                        t.segments
                            .last()
                            .is_some_and(|s| s.ident == "CustomResourceExt")
                    });
                    let own_crd = imp
                        .items
                        .iter()
                        .any(|i| matches!(i, syn::ImplItem::Fn(f) if f.sig.ident == "crd"));
                    if ext || own_crd {
                        let span = syn::spanned::Spanned::span(&imp.impl_token);
                        out.push((name, Location::of_span(path, span)));
                    }
                }
                syn::Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        visit(items, path, names, out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    if names.is_empty() {
        return out;
    }
    for (path, text) in files {
        if !text.contains("fn crd") || !names.iter().any(|n| text.contains(n.as_str())) {
            continue;
        }
        if let Ok(file) = syn::parse_file(text) {
            visit(&file.items, path, names, &mut out);
        }
    }
    out
}

/// The renames of a file's `use` declarations: `WidgetV1` for
/// `use crate::v1::Widget as WidgetV1;`, mapped to `Widget`.
fn renames(tokens: TokenStream) -> std::collections::HashMap<String, String> {
    let mut out = std::collections::HashMap::new();
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in trees.iter().enumerate() {
        match t {
            TokenTree::Ident(id) if id == "as" && i > 0 => {
                if let (Some(TokenTree::Ident(original)), Some(TokenTree::Ident(alias))) =
                    (trees.get(i - 1), trees.get(i + 1))
                    && alias != "_"
                {
                    out.insert(alias.to_string(), original.to_string());
                }
            }
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                out.extend(renames(g.stream()));
            }
            _ => {}
        }
    }
    out
}

/// The `.rs` files under the package's `tests/`, `examples/` and its
/// `build.rs`, which `cargo metadata`'s targets do not put in the module
/// tree rsop reads (path relative to `root`, text).
pub fn extra_files(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    if let Ok(text) = std::fs::read_to_string(root.join("build.rs")) {
        out.push((PathBuf::from("build.rs"), text));
    }
    for dir in ["tests", "examples"] {
        for entry in walkdir::WalkDir::new(root.join(dir))
            .max_depth(4)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        {
            if let Ok(text) = std::fs::read_to_string(entry.path()) {
                let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
                out.push((relative.to_path_buf(), text));
            }
        }
    }
    out
}

/// A function found in the token trees.
struct Function {
    name: String,
    /// Its type parameters' names.
    generics: BTreeSet<String>,
    /// Whether it puts CRDs out (see the module's doc).
    emits: bool,
    /// The receivers of its `::crd()` calls.
    receivers: Vec<(String, proc_macro2::Span)>,
    /// An assignment to a `spec` field in its body.
    spec_edit: Option<proc_macro2::Span>,
}

/// Every `fn` in `tokens`, nested ones (in `mod` and `impl` blocks)
/// included; `in_tests` when the tokens are test code (a file under
/// `tests/`, a module under `#[cfg(test)]`).
fn functions(tokens: TokenStream, in_tests: bool, out: &mut Vec<Function>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            TokenTree::Ident(id) if id == "fn" => {
                let Some(TokenTree::Ident(name)) = trees.get(i + 1) else {
                    i += 1;
                    continue;
                };
                // The signature runs to the body, the first brace group.
                let mut j = i + 2;
                let mut signature = Vec::new();
                while j < trees.len() {
                    match &trees[j] {
                        TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => break,
                        TokenTree::Punct(p) if p.as_char() == ';' => break,
                        t => signature.push(t.clone()),
                    }
                    j += 1;
                }
                let Some(TokenTree::Group(body)) = trees.get(j) else {
                    i = j + 1;
                    continue;
                };
                let attributes = preceding_attributes(&trees[..i]);
                let test = in_tests
                    || attributes
                        .iter()
                        .any(|a| a.split('(').next().is_some_and(|p| p.ends_with("test")));
                let mut idents = BTreeSet::new();
                let mut receivers = Vec::new();
                walk(body.stream(), &mut idents, &mut receivers);
                let signature_idents: BTreeSet<String> = signature
                    .iter()
                    .flat_map(|t| {
                        let mut s = BTreeSet::new();
                        walk(
                            std::iter::once(t.clone()).collect(),
                            &mut s,
                            &mut Vec::new(),
                        );
                        s
                    })
                    .collect();
                let serializes = EMITTING.iter().any(|w| idents.contains(*w))
                    || (idents.contains("serde_json") && idents.contains("to_string"));
                let emits = if test {
                    serializes && WRITING.iter().any(|w| idents.contains(*w))
                } else {
                    name == "main"
                        || signature_idents.contains("CustomResourceDefinition")
                        || serializes
                };
                out.push(Function {
                    name: name.to_string(),
                    generics: generics(&signature),
                    emits,
                    spec_edit: spec_edit(body.stream()),
                    receivers,
                });
                // Functions nested in this one's body.
                functions(body.stream(), test, out);
                i = j + 1;
            }
            // `#[cfg(test)] mod tests { .. }`: test code.
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                let test_module = i >= 2
                    && matches!(&trees[i - 2], TokenTree::Ident(id) if id == "mod")
                    && preceding_attributes(&trees[..i - 2])
                        .iter()
                        .any(|a| a == "cfg(test)");
                functions(g.stream(), in_tests || test_module, out);
                i += 1;
            }
            TokenTree::Group(g) => {
                functions(g.stream(), in_tests, out);
                i += 1;
            }
            _ => i += 1,
        }
    }
}

/// The outer attributes right before `trees`' end, as their text without
/// spaces (`test`, `tokio::test(flavor="multi_thread")`, `cfg(test)`),
/// skipping visibility and qualifiers.
fn preceding_attributes(trees: &[TokenTree]) -> Vec<String> {
    let mut out = Vec::new();
    let mut k = trees.len();
    while k > 0 {
        match &trees[k - 1] {
            TokenTree::Ident(id)
                if [
                    "pub", "async", "const", "unsafe", "extern", "crate", "self", "super",
                ]
                .contains(&id.to_string().as_str()) =>
            {
                k -= 1;
            }
            TokenTree::Literal(_) => k -= 1,
            TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => k -= 1,
            TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket => {
                if k >= 2 && matches!(&trees[k - 2], TokenTree::Punct(p) if p.as_char() == '#') {
                    out.push(g.stream().to_string().replace(' ', ""));
                    k -= 2;
                } else {
                    break;
                }
            }
            _ => break,
        }
    }
    out
}

/// The names of the type parameters in a signature's leading `<...>`.
fn generics(signature: &[TokenTree]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let Some(TokenTree::Punct(open)) = signature.first() else {
        return out;
    };
    if open.as_char() != '<' {
        return out;
    }
    let mut depth = 0usize;
    let mut expect_name = true;
    for t in signature {
        match t {
            TokenTree::Punct(p) if p.as_char() == '<' => {
                depth += 1;
                expect_name = depth == 1;
            }
            TokenTree::Punct(p) if p.as_char() == '>' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            TokenTree::Punct(p) if p.as_char() == ',' && depth == 1 => expect_name = true,
            TokenTree::Ident(id) if expect_name && depth == 1 && id != "const" => {
                out.insert(id.to_string());
                expect_name = false;
            }
            TokenTree::Punct(p) if p.as_char() == '\'' => expect_name = false,
            _ => {}
        }
    }
    out
}

/// Collects every identifier in `tokens`, and the receivers of its
/// `X::crd()` and `<X as CustomResourceExt>::crd()` calls.
fn walk(
    tokens: TokenStream,
    idents: &mut BTreeSet<String>,
    receivers: &mut Vec<(String, proc_macro2::Span)>,
) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in trees.iter().enumerate() {
        match t {
            TokenTree::Ident(id) => {
                idents.insert(id.to_string());
                if id == "crd"
                    && matches!(trees.get(i + 1), Some(TokenTree::Group(g))
                        if g.delimiter() == Delimiter::Parenthesis && g.stream().is_empty())
                    && i >= 3
                    && is_path_sep(&trees[i - 2], &trees[i - 1])
                    && let Some(receiver) = receiver_before(&trees[..i - 2])
                {
                    receivers.push((receiver, id.span()));
                }
            }
            TokenTree::Group(g) => walk(g.stream(), idents, receivers),
            _ => {}
        }
    }
}

/// The first assignment to a field under `.spec` in `tokens`
/// (`crd.spec.versions[1].storage = false;`), by the span of `spec`.
fn spec_edit(tokens: TokenStream) -> Option<proc_macro2::Span> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in trees.iter().enumerate() {
        match t {
            TokenTree::Ident(id)
                if id == "spec"
                    && i > 0
                    && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '.') =>
            {
                // The rest of the statement: a lone `=` makes it an assignment.
                let rest = trees[i + 1..]
                    .iter()
                    .take_while(|t| !matches!(t, TokenTree::Punct(p) if p.as_char() == ';'));
                let mut previous: Option<char> = None;
                for t in rest {
                    if let TokenTree::Punct(p) = t {
                        let c = p.as_char();
                        if c == '='
                            && p.spacing() == proc_macro2::Spacing::Alone
                            && !matches!(
                                previous,
                                Some('=' | '<' | '>' | '!' | '+' | '-' | '*' | '/')
                            )
                        {
                            return Some(id.span());
                        }
                        previous = Some(c);
                    } else {
                        previous = None;
                    }
                }
            }
            TokenTree::Group(g) => {
                if let Some(span) = spec_edit(g.stream()) {
                    return Some(span);
                }
            }
            _ => {}
        }
    }
    None
}

fn is_path_sep(a: &TokenTree, b: &TokenTree) -> bool {
    matches!((a, b), (TokenTree::Punct(x), TokenTree::Punct(y)) if x.as_char() == ':' && y.as_char() == ':')
}

/// The type name a path ends with: `Widget` of `v1::Widget`, `X` of
/// `<X as CustomResourceExt>`.
fn receiver_before(trees: &[TokenTree]) -> Option<String> {
    match trees.last()? {
        TokenTree::Ident(id) => Some(id.to_string()),
        TokenTree::Punct(p) if p.as_char() == '>' => {
            // `<v1::X as Trait>`: the last identifier before `as`; `X::<T>`:
            // the identifier before `::<`.
            let mut depth = 0usize;
            for k in (0..trees.len()).rev() {
                match &trees[k] {
                    TokenTree::Punct(p) if p.as_char() == '>' => depth += 1,
                    TokenTree::Punct(p) if p.as_char() == '<' => {
                        depth -= 1;
                        if depth > 0 {
                            continue;
                        }
                        let inside = &trees[k + 1..];
                        if let Some(at) = inside
                            .iter()
                            .position(|t| matches!(t, TokenTree::Ident(id) if id == "as"))
                        {
                            return inside[..at].iter().rev().find_map(|t| match t {
                                TokenTree::Ident(id) => Some(id.to_string()),
                                _ => None,
                            });
                        }
                        // `X::<T>`: `<` follows `::`, which follows `X`.
                        return match trees.get(k.checked_sub(3)?) {
                            Some(TokenTree::Ident(id)) => Some(id.to_string()),
                            _ => None,
                        };
                    }
                    _ => {}
                }
            }
            None
        }
        _ => None,
    }
}

/// The last identifier of each type argument in `helper::<X, ..>` calls
/// to any of `helpers`.
fn turbofish_args(tokens: TokenStream, helpers: &BTreeSet<String>, out: &mut BTreeSet<String>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in trees.iter().enumerate() {
        match t {
            TokenTree::Ident(id)
                if helpers.contains(&id.to_string())
                    && trees.len() > i + 3
                    && is_path_sep(&trees[i + 1], &trees[i + 2])
                    && matches!(&trees[i + 3], TokenTree::Punct(p) if p.as_char() == '<') =>
            {
                let mut depth = 0usize;
                let mut last = None;
                for t in &trees[i + 3..] {
                    match t {
                        TokenTree::Punct(p) if p.as_char() == '<' => depth += 1,
                        TokenTree::Punct(p) if p.as_char() == '>' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        TokenTree::Punct(p) if p.as_char() == ',' && depth == 1 => {
                            out.extend(last.take());
                        }
                        TokenTree::Ident(id) if depth == 1 => last = Some(id.to_string()),
                        _ => {}
                    }
                }
                out.extend(last);
            }
            TokenTree::Group(g) => turbofish_args(g.stream(), helpers, out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(files: &[(&str, &str)]) -> Vec<String> {
        scan(files.iter().map(|(p, t)| (Path::new(*p), *t)))
            .named
            .into_iter()
            .collect()
    }

    #[test]
    fn a_crdgen_main_names_its_kinds() {
        let main = "use kube::CustomResourceExt;\n\
            fn main() {\n\
                print!(\"{}\", serde_yaml::to_string(&api::Widget::crd()).unwrap());\n\
                let gadget = <Gadget as CustomResourceExt>::crd();\n\
                println!(\"{}\", serde_yaml::to_string(&gadget).unwrap());\n\
            }\n";
        assert_eq!(named(&[("src/bin/crdgen.rs", main)]), ["Gadget", "Widget"]);
    }

    /// `<v1::Widget as CustomResourceExt>`, `Widget::<T>` and a `use .. as`
    /// rename all name `Widget`; `Self::crd()` names nothing.
    #[test]
    fn paths_renames_and_self_resolve_to_the_kind() {
        let main = "use crate::v2::Gadget as GadgetV2;\n\
            fn main() {\n\
                let a = <v1::Widget as kube::CustomResourceExt>::crd();\n\
                let b = Holder::<u8>::crd();\n\
                let merged = merge_crds(vec![a, b, GadgetV2::crd()], \"v1\");\n\
            }\n\
            impl Other { fn print() { println!(\"{}\", serde_yaml::to_string(&Self::crd()).unwrap()); } }\n";
        assert_eq!(
            named(&[("src/main.rs", main)]),
            ["Gadget", "Holder", "Widget"]
        );
    }

    #[test]
    fn merge_crds_and_functions_returning_crds_name_kinds() {
        let lib = "pub fn crds() -> Vec<CustomResourceDefinition> { vec![A::crd()] }\n\
            fn merged() -> X { merge_crds(vec![v1::B::crd(), v2::B::crd()], \"v2\").unwrap() }\n";
        assert_eq!(named(&[("src/lib.rs", lib)]), ["A", "B"]);
    }

    #[test]
    fn a_test_that_only_inspects_a_crd_names_nothing() {
        let lib = "#[cfg(test)] mod tests {\n\
            #[test] fn plural() { assert_eq!(A::crd().spec.names.plural, \"as\"); }\n\
            #[test] fn schema() { let v = serde_json::to_value(B::crd()).unwrap(); assert!(v.is_object()); }\n\
            #[test] fn writes() { std::fs::write(\"crd.yaml\", serde_yaml::to_string(&C::crd()).unwrap()).unwrap(); }\n\
            fn snapshot() -> String { serde_yaml::to_string(&D::crd()).unwrap() }\n\
            #[test] fn prints() { println!(\"{}\", serde_yaml::to_string(&E::crd()).unwrap()); }\n\
            }\n";
        let calls = scan([(Path::new("src/lib.rs"), lib)]);
        assert_eq!(calls.named.into_iter().collect::<Vec<_>>(), ["C"]);
        assert_eq!(calls.first.unwrap().line, 4);
        // A helper in `tests/` is test code too.
        let helper = "pub fn yaml() -> String { serde_yaml::to_string(&F::crd()).unwrap() }\n";
        assert!(!scan([(Path::new("tests/common.rs"), helper)]).any());
    }

    #[test]
    fn a_generic_helper_is_followed_to_its_turbofish_callers() {
        let bin = "fn write<K: CustomResourceExt>(dir: &Path) {\n\
                std::fs::write(dir.join(\"x.yaml\"), serde_yaml::to_string(&K::crd()).unwrap()).unwrap();\n\
            }\n\
            fn main() { write::<api::A>(p); write::<B>(p); }\n";
        assert_eq!(named(&[("src/main.rs", bin)]), ["A", "B"]);
    }

    /// A crdgen that changes the CRD `crd()` gave is found; one that only
    /// reads it is not.
    #[test]
    fn a_crdgen_that_edits_the_crd_is_found() {
        let edits = "fn main() {\n\
            let mut crd = Widget::crd();\n\
            crd.spec.names.categories = None;\n\
            print!(\"{}\", serde_yaml::to_string(&crd).unwrap());\n\
            }\n";
        let calls = scan([(Path::new("src/bin/crdgen.rs"), edits)]);
        assert_eq!(calls.edited.unwrap().line, 3);
        let reads = "fn main() {\n\
            let crd = Widget::crd();\n\
            if crd.spec.group == \"a.io\" { print!(\"{}\", serde_yaml::to_string(&crd).unwrap()); }\n\
            }\n";
        assert!(
            scan([(Path::new("src/bin/crdgen.rs"), reads)])
                .edited
                .is_none()
        );
    }

    #[test]
    fn code_without_calls_names_nothing() {
        let calls = scan([(Path::new("src/lib.rs"), "fn main() { run(); }")]);
        assert!(!calls.any());
    }
}
