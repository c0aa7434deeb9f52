//! The programs a project builds, and the requests each one makes.
//!
//! A package's requests are found once, over all of its code and the
//! sibling crates it depends on ([`calls`]). Which of them a binary makes
//! follows from what its `main` reaches: functions are followed by name,
//! narrowed by the path a call writes (`bootstrap::run`, `Store::new`), over
//! the files the binary compiles. A binary whose `main` dispatches on a
//! clap `Subcommand` enum has a program per subcommand: the arms of the
//! other subcommands are left out.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::Result;
use crate::calls::{self, Analysis, Call, Unchecked};
use crate::manifests::diagnostics::Diagnostics;
use crate::manifests::read::modules::{self, BuildConfig};
use crate::manifests::read::source::{self, Sources};

/// A package with binaries, and the requests of its code.
#[derive(Debug)]
pub struct Package {
    /// The package's folder, relative to the project root (`""` for it).
    pub dir: PathBuf,
    pub binaries: Vec<Binary>,
    pub analysis: Analysis,
    graph: Graph,
}

/// A binary target.
#[derive(Debug, Clone)]
pub struct Binary {
    pub name: String,
    /// Its root file, relative to the project root.
    pub root: PathBuf,
    /// Its clap subcommands, by the name they are run with.
    pub subcommands: BTreeSet<String>,
    /// Its root file parses: its `main` is known.
    pub parsed: bool,
    /// The files it compiles (relative to the project root).
    files: HashSet<PathBuf>,
}

/// The packages under `root` that build binaries: the package there, or
/// the members of the workspace there.
pub fn packages(root: &Path) -> Result<Vec<Package>> {
    let mut dirs = Vec::new();
    let manifest: Option<toml_edit::DocumentMut> = std::fs::read_to_string(root.join("Cargo.toml"))
        .ok()
        .and_then(|t| t.parse().ok());
    let Some(manifest) = manifest else {
        return Err(crate::Error::user_with_help(
            format!("`{}` has no Cargo.toml", root.display()),
            "run `rsop rbac` at the root of the operator's repository, or pass it with `--dir`",
        ));
    };
    if manifest.get("package").is_some() {
        dirs.push(PathBuf::new());
    }
    dirs.extend(
        source::workspace_members(root, &manifest)
            .into_iter()
            .filter_map(|dir| dir.strip_prefix(root).ok().map(Path::to_path_buf)),
    );
    dirs.dedup();
    let mut packages = Vec::new();
    for dir in dirs {
        if let Some(package) = package(root, &dir)? {
            packages.push(package);
        }
    }
    Ok(packages)
}

/// The package in `dir` (relative to `root`), if it builds a binary.
fn package(root: &Path, dir: &Path) -> Result<Option<Package>> {
    let at = root.join(dir);
    let (targets, library) = source::targets(&at)?;
    if targets.is_empty() {
        return Ok(None);
    }
    let mut diagnostics = Diagnostics::default();
    let sources = Sources::load(&at, None, &mut diagnostics)?;
    // Paths as the project root shows them.
    let shown = |path: &Path| crate::paths::lexical(&dir.join(path));
    let files: Vec<(PathBuf, &str, Option<&BuildConfig>)> = sources
        .files
        .iter()
        .map(|f| (shown(&f.path), f.text.as_str(), f.config.as_deref()))
        .collect();
    let with_config: Vec<calls::CrateFile<'_>> = files
        .iter()
        .map(|(p, t, c)| (p.as_path(), *t, *c))
        .collect();
    let analysis = calls::analyze_when(&with_config, &[], || Some(Vec::new())).unwrap_or_default();
    let refs: Vec<(&Path, &str)> = files.iter().map(|(p, t, _)| (p.as_path(), *t)).collect();
    let graph = Graph::of(&refs);
    let manifest = std::fs::read_to_string(at.join("Cargo.toml"))
        .ok()
        .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok());
    let config = BuildConfig::from_manifest(manifest.as_ref());
    // Every binary compiles the library and the sibling crates.
    let mut shared: HashSet<PathBuf> = sources
        .files
        .iter()
        .filter(|f| f.dependency)
        .map(|f| shown(&f.path))
        .collect();
    if let Some(library) = &library {
        for file in modules::reachable(std::slice::from_ref(library), &[], &config)? {
            shared.insert(shown(file.path.strip_prefix(&at).unwrap_or(&file.path)));
        }
    }
    let mut binaries = Vec::new();
    for (name, path) in targets {
        let mut files = shared.clone();
        for file in modules::reachable(std::slice::from_ref(&path), &[], &config)? {
            files.insert(shown(file.path.strip_prefix(&at).unwrap_or(&file.path)));
        }
        let root_file = shown(path.strip_prefix(&at).unwrap_or(&path));
        let subcommands = graph.subcommands_of(&root_file, &files);
        binaries.push(Binary {
            name,
            parsed: !graph.unparsed.iter().any(|(f, _)| *f == root_file),
            root: root_file,
            subcommands,
            files,
        });
    }
    Ok(Some(Package {
        dir: dir.to_path_buf(),
        binaries,
        analysis,
        graph,
    }))
}

impl Package {
    /// The files that do not parse, each as `file:line:column: complaint`.
    pub fn unparsed(&self) -> impl Iterator<Item = &str> {
        self.graph.unparsed.iter().map(|(_, why)| why.as_str())
    }

    /// The requests `binary` makes when run with `subcommand` (every
    /// subcommand's with `None`), and its calls whose kind is not shown.
    pub fn requests(
        &self,
        binary: &Binary,
        subcommand: Option<&str>,
    ) -> (Vec<&Call>, Vec<&Unchecked>) {
        let reached = self.graph.reach(binary, subcommand);
        let made = |file: &Path, function: &str, line: usize| {
            reached
                .functions
                .contains(&(file.to_path_buf(), function.to_string()))
                && !reached
                    .excluded
                    .iter()
                    .any(|(f, from, to)| f == file && (*from..=*to).contains(&line))
        };
        // A generic function's request with one caller's kind is made
        // where that caller calls it.
        let calls = self
            .analysis
            .calls
            .iter()
            .filter(|c| match &c.site {
                Some((at, function)) => made(&at.file, function, at.line),
                None => made(&c.location.file, &c.function, c.location.line),
            })
            .collect();
        let unchecked = self
            .analysis
            .unchecked
            .iter()
            .filter(|u| made(&u.location.file, &u.function, u.location.line))
            .collect();
        (calls, unchecked)
    }
}

/// What a function refers to, by name.
#[derive(Debug, Default, Clone)]
struct Refs {
    /// `f(..)`, `a::f(..)`, `Type::f(..)`, and functions named as values
    /// (`Controller::run(reconcile, ..)`): the segment before the name
    /// (`None` for a bare name) and the name.
    paths: HashSet<(Option<String>, String)>,
    /// `x.f(..)`.
    methods: HashSet<String>,
    /// Names in macro bodies, which are not parsed: any function of that
    /// name.
    loose: HashSet<String>,
}

/// A function of the crate.
#[derive(Debug)]
struct Function {
    file: PathBuf,
    name: String,
    /// The type its `impl` is for.
    owner: Option<String>,
    refs: Refs,
    /// Arms of a `match` on a clap subcommand: (subcommand, first line,
    /// last line, what the arm refers to).
    arms: Vec<(String, usize, usize, Refs)>,
}

/// The crate's functions and its clap subcommands.
#[derive(Debug, Default)]
struct Graph {
    functions: Vec<Function>,
    by_name: HashMap<String, Vec<usize>>,
    /// Subcommand enum -> variant -> the name it is run with.
    subcommands: HashMap<String, HashMap<String, String>>,
    /// Files that do not parse, with rustc's complaint: their requests are
    /// not known.
    unparsed: Vec<(PathBuf, String)>,
    /// `use a::run as run_a`: the name a function is also called by ->
    /// its own names.
    aliases: HashMap<String, Vec<String>>,
}

/// What a program reaches.
struct Reached {
    functions: HashSet<(PathBuf, String)>,
    /// Lines of arms of other subcommands: (file, first, last).
    excluded: Vec<(PathBuf, usize, usize)>,
}

impl Graph {
    fn of(files: &[(&Path, &str)]) -> Graph {
        let mut graph = Graph::default();
        let mut parsed: Vec<(&Path, syn::File)> = Vec::new();
        // Files without a function (kopium's types) are not parsed.
        for (path, text) in files.iter().filter(|(_, t)| t.contains("fn ")) {
            match syn::parse_file(text) {
                Ok(file) => parsed.push((path, file)),
                Err(e) => {
                    let at = e.span().start();
                    graph.unparsed.push((
                        path.to_path_buf(),
                        format!("{}:{}:{}: {e}", path.display(), at.line, at.column + 1),
                    ));
                }
            }
        }
        for (_, file) in &parsed {
            graph.collect_subcommands(file);
            graph.collect_aliases(file);
        }
        for (path, file) in &parsed {
            let mut collector = Collector {
                graph: &mut graph,
                file: path,
                owner: None,
            };
            collector.visit_file(file);
        }
        for (i, f) in graph.functions.iter().enumerate() {
            graph.by_name.entry(f.name.clone()).or_default().push(i);
        }
        graph
    }

    /// Enums that derive clap's `Subcommand`, with each variant's name on
    /// the command line (kebab-case, or `#[command(name = "..")]`).
    fn collect_subcommands(&mut self, file: &syn::File) {
        struct Enums<'g>(&'g mut HashMap<String, HashMap<String, String>>);
        impl<'ast> Visit<'ast> for Enums<'_> {
            fn visit_item_enum(&mut self, item: &'ast syn::ItemEnum) {
                let derives_subcommand = item.attrs.iter().any(|a| {
                    a.path().is_ident("derive")
                        && quote::ToTokens::to_token_stream(&a.meta)
                            .to_string()
                            .contains("Subcommand")
                });
                if derives_subcommand {
                    let variants = item
                        .variants
                        .iter()
                        .map(|v| {
                            let name = command_name(&v.attrs).unwrap_or_else(|| {
                                heck::ToKebabCase::to_kebab_case(v.ident.to_string().as_str())
                            });
                            (v.ident.to_string(), name)
                        })
                        .collect();
                    self.0.insert(item.ident.to_string(), variants);
                }
                syn::visit::visit_item_enum(self, item);
            }
        }
        Enums(&mut self.subcommands).visit_file(file);
    }

    /// The renames of `use` items.
    fn collect_aliases(&mut self, file: &syn::File) {
        fn walk(tree: &syn::UseTree, out: &mut HashMap<String, Vec<String>>) {
            match tree {
                syn::UseTree::Path(p) => walk(&p.tree, out),
                syn::UseTree::Rename(r) => out
                    .entry(r.rename.to_string())
                    .or_default()
                    .push(r.ident.to_string()),
                syn::UseTree::Group(g) => g.items.iter().for_each(|t| walk(t, out)),
                syn::UseTree::Name(_) | syn::UseTree::Glob(_) => {}
            }
        }
        struct Uses<'a>(&'a mut HashMap<String, Vec<String>>);
        impl<'ast> Visit<'ast> for Uses<'_> {
            fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
                walk(&u.tree, self.0);
            }
        }
        Uses(&mut self.aliases).visit_file(file);
    }

    /// The subcommands a binary's `main` dispatches on.
    fn subcommands_of(&self, root: &Path, files: &HashSet<PathBuf>) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let reached = self.reach_from(root, files, None);
        for f in &self.functions {
            if reached.contains(&(f.file.clone(), f.name.clone())) {
                out.extend(f.arms.iter().map(|(name, ..)| name.clone()));
            }
        }
        out
    }

    fn reach(&self, binary: &Binary, subcommand: Option<&str>) -> Reached {
        let functions = self.reach_from(&binary.root, &binary.files, subcommand);
        let mut excluded = Vec::new();
        if let Some(subcommand) = subcommand {
            for f in &self.functions {
                if functions.contains(&(f.file.clone(), f.name.clone())) {
                    for (name, from, to, _) in &f.arms {
                        if name != subcommand {
                            excluded.push((f.file.clone(), *from, *to));
                        }
                    }
                }
            }
        }
        Reached {
            functions,
            excluded,
        }
    }

    /// The functions reached from the `main` of `root`, over `files`.
    fn reach_from(
        &self,
        root: &Path,
        files: &HashSet<PathBuf>,
        subcommand: Option<&str>,
    ) -> HashSet<(PathBuf, String)> {
        let mut seen: HashSet<usize> = HashSet::new();
        let mut queue: Vec<usize> = self
            .functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.file == root && f.name == "main" && f.owner.is_none())
            .map(|(i, _)| i)
            .collect();
        while let Some(i) = queue.pop() {
            if !seen.insert(i) {
                continue;
            }
            let f = &self.functions[i];
            let mut refs = vec![&f.refs];
            for (name, _, _, arm) in &f.arms {
                if subcommand.is_none_or(|s| s == name) {
                    refs.push(arm);
                }
            }
            for r in refs {
                for target in self.targets(f, r, files) {
                    if !seen.contains(&target) {
                        queue.push(target);
                    }
                }
            }
        }
        seen.into_iter()
            .map(|i| {
                (
                    self.functions[i].file.clone(),
                    self.functions[i].name.clone(),
                )
            })
            .collect()
    }

    /// The functions `refs`, written in `from`, may name.
    fn targets(&self, from: &Function, refs: &Refs, files: &HashSet<PathBuf>) -> Vec<usize> {
        let mut out = Vec::new();
        let visible = |i: &usize| files.contains(&self.functions[*i].file);
        for (qualifier, name) in &refs.paths {
            // A name a `use .. as` gave stands for the function it renames.
            let names = std::iter::once(name).chain(self.aliases.get(name).into_iter().flatten());
            let candidates: Vec<usize> = names
                .filter_map(|n| self.by_name.get(n))
                .flatten()
                .copied()
                .filter(visible)
                .collect();
            if candidates.is_empty() {
                continue;
            }
            let chosen: Vec<usize> = match qualifier.as_deref() {
                Some("Self") => candidates
                    .iter()
                    .copied()
                    .filter(|&i| self.functions[i].owner == from.owner)
                    .collect(),
                Some(q) => {
                    let by_qualifier: Vec<usize> = candidates
                        .iter()
                        .copied()
                        .filter(|&i| {
                            let f = &self.functions[i];
                            f.owner.as_deref() == Some(q) || module_name(&f.file) == Some(q)
                        })
                        .collect();
                    // `PatchParams::apply` names a type of another crate
                    // when no function of the crate's types matches; a
                    // module the files do not show by name may still be
                    // the crate's.
                    if !by_qualifier.is_empty() {
                        by_qualifier
                    } else if q.starts_with(|c: char| c.is_ascii_uppercase()) {
                        Vec::new()
                    } else {
                        candidates
                    }
                }
                None => {
                    let same_file: Vec<usize> = candidates
                        .iter()
                        .copied()
                        .filter(|&i| {
                            self.functions[i].file == from.file && self.functions[i].owner.is_none()
                        })
                        .collect();
                    if same_file.is_empty() {
                        candidates
                            .into_iter()
                            .filter(|&i| self.functions[i].owner.is_none())
                            .collect()
                    } else {
                        same_file
                    }
                }
            };
            out.extend(chosen);
        }
        for name in refs.methods.iter().chain(&refs.loose) {
            if let Some(candidates) = self.by_name.get(name) {
                out.extend(candidates.iter().copied().filter(visible));
            }
        }
        out
    }
}

/// The module a file is: its stem, or its folder's name for `mod.rs`.
fn module_name(file: &Path) -> Option<&str> {
    let stem = file.file_stem()?.to_str()?;
    if stem == "mod" {
        file.parent()?.file_name()?.to_str()
    } else {
        Some(stem)
    }
}

/// `"x"` or `Some("x")`, as a pattern.
fn literal_pattern(pat: &syn::Pat) -> Option<String> {
    match pat {
        syn::Pat::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        syn::Pat::TupleStruct(t) if t.elems.len() == 1 => literal_pattern(&t.elems[0]),
        _ => None,
    }
}

/// `#[command(name = "x")]` or `#[clap(name = "x")]`.
fn command_name(attrs: &[syn::Attribute]) -> Option<String> {
    let mut found = None;
    for attr in attrs {
        if attr.path().is_ident("command") || attr.path().is_ident("clap") {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("name") {
                    let value: syn::LitStr = meta.value()?.parse()?;
                    found = Some(value.value());
                } else if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
                Ok(())
            });
        }
    }
    found
}

/// Collects the functions of one file.
struct Collector<'g> {
    graph: &'g mut Graph,
    file: &'g Path,
    owner: Option<String>,
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        let outer = self.owner.take();
        if let syn::Type::Path(p) = &*item.self_ty {
            self.owner = p.path.segments.last().map(|s| s.ident.to_string());
        }
        syn::visit::visit_item_impl(self, item);
        self.owner = outer;
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.function(&f.sig, &f.block, None);
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let owner = self.owner.clone();
        self.function(&f.sig, &f.block, owner);
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.function(&f.sig, block, None);
        }
    }
}

impl Collector<'_> {
    fn function(&mut self, sig: &syn::Signature, block: &syn::Block, owner: Option<String>) {
        let mut refs = RefsVisitor {
            refs: Refs::default(),
            arms: Vec::new(),
            subcommands: &self.graph.subcommands,
        };
        refs.visit_block(block);
        self.graph.functions.push(Function {
            file: self.file.to_path_buf(),
            name: sig.ident.to_string(),
            owner,
            refs: refs.refs,
            arms: refs.arms,
        });
        // Functions nested in the body are functions too.
        let mut nested = Nested { collector: self };
        nested.visit_block(block);
    }
}

/// Items declared inside a function body.
struct Nested<'c, 'g> {
    collector: &'c mut Collector<'g>,
}

impl<'ast> Visit<'ast> for Nested<'_, '_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.collector.function(&f.sig, &f.block, None);
    }
    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        self.collector.visit_item_impl(item);
    }
}

/// The names a function body refers to.
struct RefsVisitor<'s> {
    refs: Refs,
    arms: Vec<(String, usize, usize, Refs)>,
    subcommands: &'s HashMap<String, HashMap<String, String>>,
}

impl RefsVisitor<'_> {
    fn path(&mut self, path: &syn::Path) {
        let segments: Vec<&syn::PathSegment> = path.segments.iter().collect();
        if let [.., last] = segments.as_slice() {
            let qualifier = segments
                .len()
                .checked_sub(2)
                .map(|i| segments[i].ident.to_string());
            self.refs.paths.insert((qualifier, last.ident.to_string()));
        }
    }

    /// The subcommand a `match` arm's pattern names, if it is a variant of
    /// a `Subcommand` enum.
    fn subcommand(&self, pat: &syn::Pat) -> Option<String> {
        let path = match pat {
            syn::Pat::Path(p) => &p.path,
            syn::Pat::TupleStruct(p) => &p.path,
            syn::Pat::Struct(p) => &p.path,
            syn::Pat::Ident(p) => return p.subpat.as_ref().and_then(|(_, s)| self.subcommand(s)),
            _ => return None,
        };
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        match segments.as_slice() {
            [.., enum_name, variant] => self.subcommands.get(enum_name)?.get(variant).cloned(),
            [variant] => self
                .subcommands
                .values()
                .find_map(|variants| variants.get(variant).cloned()),
            [] => None,
        }
    }
}

impl<'ast> Visit<'ast> for RefsVisitor<'_> {
    fn visit_expr_path(&mut self, e: &'ast syn::ExprPath) {
        self.path(&e.path);
        syn::visit::visit_expr_path(self, e);
    }
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        self.refs.methods.insert(call.method.to_string());
        syn::visit::visit_expr_method_call(self, call);
    }
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        fn idents(tokens: proc_macro2::TokenStream, out: &mut HashSet<String>) {
            for tree in tokens {
                match tree {
                    proc_macro2::TokenTree::Ident(i) => {
                        out.insert(i.to_string());
                    }
                    proc_macro2::TokenTree::Group(g) => idents(g.stream(), out),
                    _ => {}
                }
            }
        }
        idents(mac.tokens.clone(), &mut self.refs.loose);
    }
    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        // `match std::env::args().nth(1).as_deref() { Some("serve") => .. }`
        // dispatches on a subcommand by hand.
        let on_args = quote::ToTokens::to_token_stream(&m.expr)
            .to_string()
            .contains("args");
        let names: Vec<Option<String>> = m
            .arms
            .iter()
            .map(|a| {
                self.subcommand(&a.pat)
                    .or_else(|| on_args.then(|| literal_pattern(&a.pat)).flatten())
            })
            .collect();
        if names.iter().all(Option::is_none) {
            syn::visit::visit_expr_match(self, m);
            return;
        }
        self.visit_expr(&m.expr);
        for (arm, name) in m.arms.iter().zip(names) {
            let Some(name) = name else {
                syn::visit::visit_arm(self, arm);
                continue;
            };
            let outer = std::mem::take(&mut self.refs);
            syn::visit::visit_arm(self, arm);
            let refs = std::mem::replace(&mut self.refs, outer);
            let span = arm.span();
            self.arms
                .push((name, span.start().line, span.end().line, refs));
        }
    }
    fn visit_item_fn(&mut self, _: &'ast syn::ItemFn) {
        // A nested function is a function of its own.
    }
    fn visit_item_impl(&mut self, _: &'ast syn::ItemImpl) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The functions each subcommand of `main.rs` reaches.
    fn reached(files: &[(&str, &str)], subcommand: &str) -> Vec<String> {
        let files: Vec<(&Path, &str)> = files.iter().map(|(p, t)| (Path::new(*p), *t)).collect();
        let graph = Graph::of(&files);
        let all: HashSet<PathBuf> = files.iter().map(|(p, _)| p.to_path_buf()).collect();
        let mut names: Vec<String> = graph
            .reach_from(Path::new("src/main.rs"), &all, Some(subcommand))
            .into_iter()
            .map(|(file, name)| format!("{}:{name}", file.display()))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn subcommands_dispatched_by_hand_or_by_clap_reach_their_own_code() {
        let by_hand = r#"
            mod mint; mod serve;
            #[tokio::main]
            async fn main() -> anyhow::Result<()> {
                match std::env::args().nth(1).as_deref() {
                    Some("mint") => mint::run().await,
                    Some("serve") => serve::run().await,
                    other => bail!("usage"),
                }
            }
        "#;
        let files = [
            ("src/main.rs", by_hand),
            (
                "src/mint.rs",
                "pub async fn run() { issue().await }\nasync fn issue() {}",
            ),
            (
                "src/serve.rs",
                "pub async fn run() { listen().await }\nasync fn listen() {}",
            ),
        ];
        assert_eq!(
            reached(&files, "serve"),
            [
                "src/main.rs:main",
                "src/serve.rs:listen",
                "src/serve.rs:run"
            ]
        );
        let clap = r"
            #[derive(clap::Subcommand)]
            enum Command { Mint, #[command(name = 'listen')] Serve { port: u16 } }
            fn main() {
                match Cli::parse().command {
                    Command::Mint => mint::run(),
                    Command::Serve { port } => serve::run(port),
                }
            }
        "
        .replace('\'', "\"");
        let files = [("src/main.rs", clap.as_str()), files[1], files[2]];
        assert_eq!(
            reached(&files, "mint"),
            ["src/main.rs:main", "src/mint.rs:issue", "src/mint.rs:run"]
        );
        assert_eq!(
            reached(&files, "listen"),
            [
                "src/main.rs:main",
                "src/serve.rs:listen",
                "src/serve.rs:run"
            ]
        );
    }
}
