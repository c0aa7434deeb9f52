//! First stage of `rsop manifests`: the files of the project's module tree
//! (those rustc compiles, see [`crate::manifests::read::modules`]), parsed with syn, and
//! an index that resolves type names the way rustc would for the cases that
//! matter to CRD types: local items, `use` (renames, groups, globs),
//! `crate::`/`super::`/`self::` paths, re-exports and type aliases.
//!
//! Nothing is compiled; a name that cannot be resolved statically is
//! reported, never guessed.
//!
//! Every lookup goes through a hash map (names of each module, its imports,
//! its child modules; the crate's hand-written impls), so that deriving a
//! crate costs time linear in its size.
//!
//! Two types share the work. [`Sources`] holds the text of every file and
//! what must be known of the whole crate before any kind is derived: the
//! module layout, the hand-written impls, the files that define
//! `macro_rules!`. A [`Crate`] reads the crate for one thread: it parses a
//! module's files the first time a lookup reaches them. syn's syntax trees
//! stay on the thread that parsed them (proc-macro2 keeps a source map per
//! thread), so threads share [`Sources`] and each parses what it needs; and
//! a thread starts a new [`Crate`] once it has parsed [`PARSE_BUDGET`] bytes,
//! which frees the trees: those of a 100 MB crate of kopium output would take
//! 2 GB.

use std::cell::{Cell, OnceCell};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use syn::spanned::Spanned;

use super::ownership::EXTERNAL_DIR;
use crate::manifests::diagnostics::{Diagnostic, Diagnostics, Location};
use crate::manifests::read::macros::Macros;
use crate::manifests::read::modules::{self, BuildConfig};
use crate::{Error, Result};

/// How much source text one [`Crate`] parses before its thread starts a new
/// one: syntax trees take about twenty times their text.
const PARSE_BUDGET: usize = 1 << 20;

/// A file as read: its path, text, module path (`None` for a binary read
/// for its markers only) and build configuration.
type LoadedFile = (
    PathBuf,
    String,
    Option<Vec<String>>,
    Option<std::sync::Arc<BuildConfig>>,
);

/// One source file.
#[derive(Debug)]
pub struct SourceFile {
    /// Path relative to the project root, for messages (`src/api/v1/app.rs`).
    pub path: PathBuf,
    pub text: String,
    /// The file belongs to a path dependency (a sibling workspace crate),
    /// read for its types only: its kinds and markers are that crate's.
    pub dependency: bool,
    /// What a normal build of its package enables, to leave out the items
    /// under a `#[cfg]` that does not hold; `None` keeps every item.
    pub config: Option<std::sync::Arc<BuildConfig>>,
}

/// The files of one module path: one file, except for a crate root made of
/// both `src/lib.rs` and `src/main.rs`. A file's inline modules are part of
/// its group.
#[derive(Debug)]
struct Group {
    path: Vec<String>,
    /// Indexes into [`Sources::files`], in load order.
    files: Vec<usize>,
    /// The crate's own files that may declare kinds: they mention
    /// `CustomResource`, or a macro of the crate could write the derive.
    kinds: bool,
    /// Parsed while loading, for the crate-wide impl index and to report
    /// the files' problems: every group of a crate whose `macro_rules!` can
    /// write an impl anywhere. Otherwise a group is parsed when a thread
    /// first needs it (its kinds, a type, or an impl of a type it names),
    /// and that parse reports its problems.
    loaded: bool,
    /// The identifiers in its files' impl headers (see [`impl_headers`]):
    /// a type none of them names has no impl block here.
    impl_names: HashSet<String>,
}

/// Where an item is: its group, its module among the group's modules, and
/// its place among the module's items.
#[derive(Debug, Clone, Copy)]
struct ItemAt {
    group: usize,
    module: usize,
    item: usize,
}

/// A module's identity within a [`Crate`]: (group, module of the group).
type ModuleId = (usize, usize);

/// A module: its path from the crate root and the items declared in it.
#[derive(Debug)]
pub struct Module {
    /// `["api", "v1"]` for `crate::api::v1`; empty for the crate root.
    pub path: Vec<String>,
    /// Index into [`Sources::files`].
    pub file: usize,
    pub items: Vec<syn::Item>,
    id: ModuleId,
    index: ModuleIndex,
}

/// The names a module declares and imports, each bound to its first
/// declaration (in item order).
#[derive(Debug, Default)]
struct ModuleIndex {
    /// Structs, enums and type aliases: name -> index into `items`.
    types: HashMap<String, usize>,
    /// Functions: name -> index into `items`.
    fns: HashMap<String, usize>,
    /// Names bound by `use`: name -> the full path it stands for.
    imports: HashMap<String, Vec<String>>,
    /// The paths glob-imported (`use a::b::*;` gives `["a", "b"]`), in order.
    globs: Vec<Vec<String>>,
    /// Those of `globs` a `pub use` (of any `pub(..)`) imports.
    pub_globs: Vec<Vec<String>>,
    /// Child modules, inline or in their own files.
    children: HashSet<String>,
}

/// The `impl` blocks of one group, by the last segment of their self type;
/// the first declaration (in item order) wins, as the first group (in load
/// order) that has one does across the crate.
#[derive(Debug, Default)]
struct ImplIndex {
    /// Trait name -> self type name -> the first `impl Trait for Type`.
    traits: HashMap<String, HashMap<String, ItemAt>>,
    /// Self type name -> function name -> the first impl (inherent or of a
    /// trait) defining it, and the function's place among the impl's items.
    fns: HashMap<String, HashMap<String, (ItemAt, usize)>>,
    /// Self type name -> constant name -> the first inherent impl defining
    /// it, and the constant's place among the impl's items.
    consts: HashMap<String, HashMap<String, (ItemAt, usize)>>,
}

impl ImplIndex {
    fn add(&mut self, at: ItemAt, imp: &syn::ItemImpl) {
        let syn::Type::Path(p) = imp.self_ty.as_ref() else {
            return;
        };
        let Some(self_name) = p.path.segments.last().map(|s| s.ident.to_string()) else {
            return;
        };
        if let Some((_, trait_path, _)) = &imp.trait_
            && let Some(trait_name) = trait_path.segments.last()
        {
            self.traits
                .entry(trait_name.ident.to_string())
                .or_default()
                .entry(self_name.clone())
                .or_insert(at);
        }
        for (j, it) in imp.items.iter().enumerate() {
            match it {
                syn::ImplItem::Fn(f) => {
                    self.fns
                        .entry(self_name.clone())
                        .or_default()
                        .entry(f.sig.ident.to_string())
                        .or_insert((at, j));
                }
                syn::ImplItem::Const(c) if imp.trait_.is_none() => {
                    self.consts
                        .entry(self_name.clone())
                        .or_default()
                        .entry(c.ident.to_string())
                        .or_insert((at, j));
                }
                _ => {}
            }
        }
    }

    /// The index of the impl blocks of group `g`, parsed as `modules`.
    fn of(g: usize, modules: &[Module]) -> Self {
        let mut impls = ImplIndex::default();
        for (m, module) in modules.iter().enumerate() {
            for (i, item) in module.items.iter().enumerate() {
                if let syn::Item::Impl(imp) = item {
                    impls.add(
                        ItemAt {
                            group: g,
                            module: m,
                            item: i,
                        },
                        imp,
                    );
                }
            }
        }
        impls
    }
}

/// The crate's files and its crate-wide indexes, shared by the threads that
/// derive its kinds.
#[derive(Debug)]
pub struct Sources {
    /// The Rust name of the library crate (`my_operator`): paths starting
    /// with it are paths into this crate, as written in `src/main.rs`.
    pub crate_name: Option<String>,
    pub files: Vec<SourceFile>,
    groups: Vec<Group>,
    group_by_path: HashMap<Vec<String>, usize>,
    /// Module path -> the names of its children that have files of their own.
    file_children: HashMap<Vec<String>, Vec<String>>,
    /// Each group's impl index, made by the first thread that needs it.
    impls: Vec<OnceLock<ImplIndex>>,
    /// Type name -> the groups that may implement something for it: those
    /// with an `impl` that name the type (every group, with macros).
    impl_groups: Mutex<HashMap<String, Arc<[usize]>>>,
    /// The problems of groups that are neither loaded nor hold kinds, from
    /// the first parse that needed them, by group.
    late_problems: Mutex<BTreeMap<usize, Vec<Diagnostic>>>,
    /// Files that define `macro_rules!`: every [`Crate`] expands their
    /// macros where they are invoked at item position.
    macro_files: Vec<usize>,
    /// The path dependencies read with the crate, by the name code uses
    /// for them; their modules live under the path `[DEPENDENCY, name]`.
    dependencies: Vec<String>,
    /// Syntax errors come with a `help:`.
    helpful: bool,
    /// [`PARSE_BUDGET`], or less in tests.
    parse_budget: usize,
}

/// An error for each `include!("file")` of `file` (relative to `root`)
/// whose file declares kinds: rsop reads the module tree, not the files
/// macros paste into it, and a kind must never go missing without a word.
fn included_kinds(root: &Path, file: &Path, text: &str, diagnostics: &mut Diagnostics) {
    fn walk(tokens: proc_macro2::TokenStream, found: &mut Vec<(String, proc_macro2::Span)>) {
        let trees: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
        for (i, t) in trees.iter().enumerate() {
            match t {
                proc_macro2::TokenTree::Ident(id) if id == "include" => {
                    if let (
                        Some(proc_macro2::TokenTree::Punct(bang)),
                        Some(proc_macro2::TokenTree::Group(args)),
                    ) = (trees.get(i + 1), trees.get(i + 2))
                        && bang.as_char() == '!'
                        && let Ok(lit) = syn::parse2::<syn::LitStr>(args.stream())
                    {
                        found.push((lit.value(), id.span()));
                    }
                }
                proc_macro2::TokenTree::Group(g) => walk(g.stream(), found),
                _ => {}
            }
        }
    }
    let Ok(tokens) = text.parse::<proc_macro2::TokenStream>() else {
        return;
    };
    let mut found = Vec::new();
    walk(tokens, &mut found);
    let dir = root.join(file);
    let dir = dir.parent().unwrap_or(root);
    for (included, span) in found {
        let Ok(included_text) = std::fs::read_to_string(dir.join(&included)) else {
            continue;
        };
        if crate::manifests::read::ownership::count_kind_derives(&included_text) == 0 {
            continue;
        }
        diagnostics.push(
            Diagnostic::new(
                Location::of_span(file, span),
                format!(
                    "`include!(\"{included}\")` pastes kinds into this module, and rsop reads modules, not the files macros paste"
                ),
            )
            .with_help(
                "make the included file a module of its own (`#[path = \"...\"] mod name;`), which rustc compiles the same and rsop reads",
            ),
        );
    }
}

/// The first segment of a path dependency's modules: not an identifier, so
/// it never meets a name from the sources.
const DEPENDENCY: &str = "::";

/// Where a name was found.
#[derive(Debug, Clone, Copy)]
pub struct ItemRef<'a> {
    pub module: &'a Module,
    pub item: &'a syn::Item,
}

/// A resolved type path.
#[derive(Debug, Clone)]
pub enum Resolved<'a> {
    /// A struct, enum or type alias of this crate.
    Local(ItemRef<'a>),
    /// A path into another crate, made absolute (`["k8s_openapi", "api", ...]`),
    /// or a name from the prelude / a primitive (`["String"]`).
    External(Vec<String>),
}

impl Sources {
    /// Reads the files of the crate's module tree as rustc would compile it
    /// (see [`modules`]), its path dependencies', and those of the
    /// downloaded dependencies worth `reading`, and parses those the
    /// crate-wide indexes need. Syntax errors are collected into
    /// `diagnostics`; I/O errors end the run.
    pub fn load(
        root: &Path,
        crate_name: Option<String>,
        reading: Reading,
        diagnostics: &mut Diagnostics,
    ) -> Result<Self> {
        let package = manifest(&root.join("Cargo.toml"))?;
        let config = BuildConfig::from_manifest(package.as_ref());
        let shared = std::sync::Arc::new(BuildConfig::from_manifest(package.as_ref()));
        let library = library_root(root, package.as_ref());
        let binaries = binary_roots(root, package.as_ref())?;
        // The library and `src/main.rs` hold the kinds; a crate without a
        // library has them in its binaries, wherever `[[bin]] path` says.
        let mut roots = vec![root.join("src/main.rs")];
        if library.is_file() {
            roots.insert(0, library);
        } else {
            roots.extend(binaries.iter().cloned());
        }
        let relative = |path: &Path| path.strip_prefix(root).unwrap_or(path).to_path_buf();
        let mut sources = Vec::new();
        let mut seen = HashSet::new();
        for file in modules::reachable(&roots, &[], &config)? {
            seen.insert(file.path.clone());
            sources.push((
                relative(&file.path),
                file.text,
                Some(file.module),
                Some(shared.clone()),
            ));
        }
        // The other binaries' modules: read for their RBAC markers, not for
        // types, which live in the library the binaries share.
        for file in modules::reachable(&binaries, &[], &config)? {
            if seen.insert(file.path.clone()) {
                sources.push((relative(&file.path), file.text, None, Some(shared.clone())));
            }
        }
        for (file, text, module, _) in &sources {
            if module.is_some() && text.contains("include!") {
                included_kinds(root, file, text, diagnostics);
            }
        }
        let mut dependencies = path_dependencies(root)?;
        let texts: Vec<&str> = sources
            .iter()
            .map(|(_, text, _, _)| text.as_str())
            .collect();
        let (fetched, unread) = fetched_dependencies(root, &texts, reading)?;
        for dependency in fetched {
            if !dependencies.iter().any(|d| d.name == dependency.name) {
                dependencies.push(dependency);
            }
        }
        if !unread.is_empty() {
            let mut config = BuildConfig::from_manifest(package.as_ref());
            config.unread = unread;
            let config = std::sync::Arc::new(config);
            for (_, _, _, file_config) in &mut sources {
                *file_config = Some(config.clone());
            }
        }
        let mut names = Vec::new();
        for Dependency {
            name,
            dir,
            features,
            defaults,
        } in &dependencies
        {
            // A dependency is read as a library: its binary is not.
            let package = manifest(&dir.join("Cargo.toml"))?;
            // A proc-macro crate exports no type a kind can hold.
            let proc_macro = package.as_ref().is_some_and(|p| {
                p.get("lib")
                    .and_then(|l| l.get("proc-macro").or_else(|| l.get("proc_macro")))
                    .and_then(toml_edit::Item::as_bool)
                    == Some(true)
            });
            if proc_macro {
                continue;
            }
            let mut config = BuildConfig::with_features(package.as_ref(), features, *defaults);
            config.dependency = Some(name.clone());
            let roots = [library_root(dir, package.as_ref())];
            let prefix = [DEPENDENCY.to_string(), name.clone()];
            let files = modules::reachable(&roots, &prefix, &config)?;
            let config = std::sync::Arc::new(config);
            for file in files {
                let shown = pathdiff::diff_paths(&file.path, root).unwrap_or(file.path.clone());
                sources.push((shown, file.text, Some(file.module), Some(config.clone())));
            }
            names.push(name.clone());
        }
        Ok(Sources::new(sources, crate_name, diagnostics, true, names))
    }

    /// Builds a crate from in-memory sources (path relative to the project
    /// root, text); for `create api`, tests and benchmarks.
    pub fn from_sources(
        sources: &[(&str, &str)],
        crate_name: Option<String>,
        diagnostics: &mut Diagnostics,
    ) -> Self {
        let sources = sources
            .iter()
            .map(|(p, t)| {
                let path = PathBuf::from(p);
                let module = module_path_of(&path);
                (path, (*t).to_string(), module, None)
            })
            .collect();
        Sources::new(sources, crate_name, diagnostics, false, Vec::new())
    }

    /// Groups the files by module, tells the groups that may declare kinds
    /// from the others, and parses the groups the crate-wide indexes need,
    /// on all cores.
    fn new(
        sources: Vec<LoadedFile>,
        crate_name: Option<String>,
        diagnostics: &mut Diagnostics,
        helpful: bool,
        dependencies: Vec<String>,
    ) -> Self {
        let mut files = Vec::with_capacity(sources.len());
        let mut groups: Vec<Group> = Vec::new();
        let mut group_by_path: HashMap<Vec<String>, usize> = HashMap::new();
        for (path, text, module, config) in sources {
            let file = files.len();
            files.push(SourceFile {
                path,
                text,
                dependency: module.as_ref().is_some_and(|m| is_dependency_path(m)),
                config,
            });
            let Some(module) = module else { continue };
            if let Some(&g) = group_by_path.get(&module) {
                groups[g].files.push(file);
            } else {
                group_by_path.insert(module.clone(), groups.len());
                groups.push(Group {
                    path: module,
                    files: vec![file],
                    kinds: false,
                    loaded: false,
                    impl_names: HashSet::new(),
                });
            }
        }
        let macro_files: Vec<usize> = groups
            .iter()
            .flat_map(|g| g.files.iter().copied())
            .filter(|&f| files[f].text.contains("macro_rules"))
            .collect();
        // A macro can write a derive or an impl anywhere it is invoked.
        let macros = !macro_files.is_empty();
        for group in &mut groups {
            let mut texts = group.files.iter().map(|&f| files[f].text.as_str());
            // A path dependency's kinds are that crate's to publish, and the
            // types under `src/external/` are other projects' kinds, whose
            // CRDs those projects install.
            let own = !is_dependency_path(&group.path)
                && !files[group.files[0]].path.starts_with(EXTERNAL_DIR);
            group.kinds = own && (macros || texts.any(|t| t.contains("CustomResource")));
            group.impl_names = group
                .files
                .iter()
                .flat_map(|&f| impl_headers(&files[f].text))
                .flat_map(|header| header.split(|c: char| !(c.is_alphanumeric() || c == '_')))
                .filter(|word| !word.is_empty())
                .map(str::to_string)
                .collect();
            group.loaded = macros;
        }
        let mut file_children: HashMap<Vec<String>, Vec<String>> = HashMap::new();
        for group in &groups {
            if let Some((name, parent)) = group.path.split_last() {
                file_children
                    .entry(parent.to_vec())
                    .or_default()
                    .push(name.clone());
            }
        }
        let groups_len = groups.len();
        let sources = Sources {
            crate_name,
            files,
            groups,
            group_by_path,
            file_children,
            impls: (0..groups_len).map(|_| OnceLock::new()).collect(),
            impl_groups: Mutex::default(),
            late_problems: Mutex::default(),
            macro_files,
            dependencies,
            helpful,
            parse_budget: PARSE_BUDGET,
        };
        let loaded: Vec<usize> = (0..sources.groups.len())
            .filter(|&g| sources.groups[g].loaded)
            .collect();
        let loaded_groups = loaded.clone();
        let found = sources.for_each_group(loaded, |krate, g| {
            // Parsed for the index only: this `Crate` looks nothing up.
            let Parsed { modules, problems } = krate.parse_group(g);
            (problems, ImplIndex::of(g, &modules))
        });
        for (g, (problems, impls)) in loaded_groups.into_iter().zip(found) {
            for p in problems {
                diagnostics.push(p);
            }
            let _ = sources.impls[g].set(impls);
        }
        sources
    }

    /// These sources, read by threads that start a new [`Crate`] once they
    /// have parsed `bytes` (0: for every group).
    #[cfg(test)]
    #[must_use]
    pub fn with_parse_budget(mut self, bytes: usize) -> Self {
        self.parse_budget = bytes;
        self
    }

    /// How many kinds the files under `src/external/` declare: other
    /// projects' kinds, which are not parsed (see [`crate::manifests::read::ownership`]).
    pub fn external_kind_count(&self) -> usize {
        self.files
            .iter()
            .filter(|f| !f.dependency && f.path.starts_with(EXTERNAL_DIR))
            .map(|f| crate::manifests::read::ownership::count_kind_derives(&f.text))
            .sum()
    }

    /// The files of binaries that are read for their markers only (the
    /// crate's kinds are its library's) and that declare kinds all the
    /// same: those kinds get no CRD, which the run says.
    pub fn binary_only_kind_files(&self) -> Vec<&Path> {
        let grouped: HashSet<usize> = self
            .groups
            .iter()
            .flat_map(|g| g.files.iter().copied())
            .collect();
        self.files
            .iter()
            .enumerate()
            .filter(|(i, f)| {
                !grouped.contains(i)
                    && !f.dependency
                    && crate::manifests::read::ownership::count_kind_derives(&f.text) > 0
            })
            .map(|(_, f)| f.path.as_path())
            .collect()
    }

    /// The groups whose files may declare kinds, in load order.
    /// The groups that may hold an impl block for the type `name`, in load
    /// order: those with an `impl` header that names the type. With
    /// `macro_rules!` in the crate, every group (a macro may write the impl).
    fn impl_groups(&self, name: &str) -> Arc<[usize]> {
        let mut cache = self
            .impl_groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(groups) = cache.get(name) {
            return groups.clone();
        }
        let groups: Arc<[usize]> = (0..self.groups.len())
            .filter(|&g| !self.macro_files.is_empty() || self.groups[g].impl_names.contains(name))
            .collect();
        cache.insert(name.to_string(), groups.clone());
        groups
    }

    /// The problems of the groups parsed only because a lookup needed them
    /// (their files hold no kind): a file rsop read for an impl, a type or
    /// a constant, and could not parse, must not be skipped without a word.
    pub fn late_problems(&self) -> Vec<Diagnostic> {
        self.late_problems
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .flatten()
            .cloned()
            .collect()
    }

    pub fn kind_groups(&self) -> Vec<usize> {
        (0..self.groups.len())
            .filter(|&g| self.groups[g].kinds)
            .collect()
    }

    /// Runs `work` on each of `groups` on all cores, and returns the results
    /// in the order of `groups`. Each worker thread reads the crate through a
    /// [`Crate`] of its own, renewed once it has parsed [`PARSE_BUDGET`]
    /// bytes.
    pub fn for_each_group<T: Send>(
        &self,
        groups: Vec<usize>,
        work: impl Fn(&Crate<'_>, usize) -> T + Sync,
    ) -> Vec<T> {
        crate::parallel::map(
            groups,
            || Crate::new(self),
            |krate, g| {
                if krate.parsed_bytes.get() > self.parse_budget {
                    *krate = Crate::new(self);
                    // The old trees are gone, and with them every span into
                    // the thread's source map: drop the map's files too.
                    proc_macro2::extra::invalidate_current_thread_spans();
                }
                work(krate, g)
            },
        )
    }
}

/// The text from each `impl` keyword of `text` (followed by a space or
/// generics) to the `{` or `;` after it: the header of an impl block, or a
/// mention in a comment, which only costs a parse.
fn impl_headers(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("impl").filter_map(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + 4..].chars().next();
        let keyword = !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && after.is_some_and(|c| c.is_whitespace() || c == '<');
        keyword.then(|| {
            let rest = &text[at..];
            &rest[..rest.find(['{', ';']).unwrap_or(rest.len())]
        })
    })
}

/// A module group as one [`Crate`] parsed it: its modules, and the problems
/// found on the way.
#[derive(Debug)]
struct Parsed {
    modules: Vec<Module>,
    problems: Vec<Diagnostic>,
}

/// The crate as one thread reads it: the [`Sources`], and the modules parsed
/// so far (each group the first time a lookup reaches it).
#[derive(Debug)]
pub struct Crate<'s> {
    sources: &'s Sources,
    groups: Vec<OnceCell<Parsed>>,
    macros: OnceCell<Macros>,
    /// Bytes of source parsed, for [`PARSE_BUDGET`].
    parsed_bytes: Cell<usize>,
}

impl<'s> Crate<'s> {
    pub fn new(sources: &'s Sources) -> Self {
        Crate {
            sources,
            groups: sources.groups.iter().map(|_| OnceCell::new()).collect(),
            macros: OnceCell::new(),
            parsed_bytes: Cell::new(0),
        }
    }

    /// The modules of group `g`, parsed on first use.
    pub fn group_modules(&self, g: usize) -> &[Module] {
        &self.parsed(g).modules
    }

    /// The problems of group `g` that nobody reported while loading: those
    /// of a group of kinds that loading did not parse. The one thread that
    /// derives the group's kinds reports them.
    pub fn unreported_problems(&self, g: usize) -> Vec<Diagnostic> {
        if self.sources.groups[g].loaded {
            Vec::new()
        } else {
            self.parsed(g).problems.clone()
        }
    }

    fn parsed(&self, g: usize) -> &Parsed {
        self.groups[g].get_or_init(|| {
            let parsed = self.parse_group(g);
            let group = &self.sources.groups[g];
            if !group.loaded && !group.kinds && !parsed.problems.is_empty() {
                self.sources
                    .late_problems
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .entry(g)
                    .or_insert_with(|| parsed.problems.clone());
            }
            parsed
        })
    }

    /// The first impl entry `find` picks for the type `name`, among the
    /// groups that may have one, in load order; each group's index is made
    /// (and the group parsed) on first use.
    fn find_impl<T>(&self, name: &str, find: impl Fn(&ImplIndex) -> Option<T>) -> Option<T> {
        self.sources.impl_groups(name).iter().find_map(|&g| {
            find(self.sources.impls[g].get_or_init(|| ImplIndex::of(g, &self.parsed(g).modules)))
        })
    }

    /// The crate's `macro_rules!`, parsed on first use.
    fn macros(&self) -> &Macros {
        self.macros.get_or_init(|| {
            let mut macros = Macros::default();
            for &f in &self.sources.macro_files {
                if let Ok(file) = syn::parse_file(&self.sources.files[f].text) {
                    macros.collect(&file.items);
                }
            }
            macros
        })
    }

    /// Parses the files of group `g`, expands the item macros that declare
    /// kinds, and indexes the modules.
    fn parse_group(&self, g: usize) -> Parsed {
        let sources = self.sources;
        let group = &sources.groups[g];
        let mut modules = Vec::new();
        let mut problems = Vec::new();
        for &file in &group.files {
            let source = &sources.files[file];
            self.parsed_bytes
                .set(self.parsed_bytes.get() + source.text.len());
            let items = match syn::parse_file(&source.text) {
                Ok(ast) => ast.items,
                Err(e) => {
                    let d = Diagnostic::new(
                        Location::of_span(&source.path, e.span()),
                        parse_message(&e),
                    );
                    problems.push(if sources.helpful {
                        d.with_help("fix the syntax error; rsop reads the sources as rustc would")
                    } else {
                        d
                    });
                    continue;
                }
            };
            let macros = self.macros();
            let items = if macros.is_empty() {
                items
            } else {
                let mut unexpanded = Vec::new();
                let expanded = macros.expand(items, &mut unexpanded);
                for p in unexpanded {
                    problems.push(
                        Diagnostic::new(Location::of_span(&source.path, p.span), p.message)
                            .with_help("declare the kind with `#[derive(CustomResource)]` outside the macro, or keep to `macro_rules!` arms of fragments and `$(...)` repetitions, which rsop expands"),
                    );
                }
                expanded
            };
            let items = match &source.config {
                Some(config) => config.keep_enabled(items),
                None => items,
            };
            add_module(&mut modules, g, group.path.clone(), file, items);
        }
        for module in &mut modules {
            module.index = index_module(&module.items);
            if let Some(names) = sources.file_children.get(&module.path) {
                module.index.children.extend(names.iter().cloned());
            }
        }
        for m in 0..modules.len() {
            if let Some((name, parent)) = modules[m].path.split_last()
                && let Some(p) = modules.iter().position(|other| other.path == parent)
            {
                let name = name.clone();
                modules[p].index.children.insert(name);
            }
        }
        check_module_files(sources, &modules, &mut problems);
        Parsed { modules, problems }
    }

    /// The module at `path`, parsing the files that hold it if no lookup has
    /// reached them yet: its own, or for an inline module its nearest file
    /// module's.
    pub fn module(&self, path: &[String]) -> Option<&Module> {
        let g = (0..=path.len())
            .rev()
            .find_map(|n| self.sources.group_by_path.get(&path[..n]))?;
        self.group_modules(*g).iter().find(|m| m.path == path)
    }

    fn module_by_id(&self, (group, module): ModuleId) -> &Module {
        &self.group_modules(group)[module]
    }

    fn item_at(&self, at: ItemAt) -> (&Module, &syn::Item) {
        let module = self.module_by_id((at.group, at.module));
        (module, &module.items[at.item])
    }

    pub fn file_of(&self, module: &Module) -> &'s SourceFile {
        &self.sources.files[module.file]
    }

    /// Whether the one-segment type name `name`, used in `module`, is one
    /// rustc could not find (E0412): no item, import, glob, child module or
    /// prelude name of the module binds it, no macro invocation among the
    /// module's items could declare it, and no `#[kube(kind = ..)]` (or
    /// other attribute) of the crate names it, as a derive's generated type
    /// would be named.
    pub fn unbound_type(&self, module: &Module, name: &str) -> bool {
        let index = &module.index;
        if PRELUDE_TYPES.contains(&name)
            || name == "Self"
            || index.types.contains_key(name)
            || index.imports.contains_key(name)
            || index.children.contains(name)
            || !index.globs.is_empty()
        {
            return false;
        }
        let declares = module.items.iter().any(|item| match item {
            syn::Item::Union(u) => u.ident == name,
            syn::Item::Trait(t) => t.ident == name,
            syn::Item::TraitAlias(t) => t.ident == name,
            // `macro_rules!` definitions declare no type; any invocation may.
            syn::Item::Macro(m) => m.ident.is_none(),
            syn::Item::Verbatim(_) => true,
            _ => false,
        });
        let quoted = format!("\"{name}\"");
        !declares && !self.sources.files.iter().any(|f| f.text.contains(&quoted))
    }

    /// Resolves a type path used in `module`. A path this crate does not
    /// define is taken as external (a prelude name, or a path into another
    /// crate), for the schema stage to recognise or report.
    pub fn resolve<'a>(&'a self, module: &'a Module, path: &syn::Path) -> Option<Resolved<'a>> {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if path.leading_colon.is_some() {
            return self.resolve_absolute(&segments, &mut Vec::new());
        }
        let mut visited = Vec::new();
        self.resolve_in(module, &segments, &mut visited)
            .or_else(|| match segments.first().map(String::as_str) {
                Some("crate" | "self" | "super") => None,
                _ => Some(Resolved::External(segments.clone())),
            })
    }

    /// Resolves `segments` in `module`'s scope; `None` when it is not
    /// found there. `visited` (module, name) pairs stop `use` cycles.
    fn resolve_in<'a>(
        &'a self,
        module: &'a Module,
        segments: &[String],
        visited: &mut Vec<(ModuleId, Vec<String>)>,
    ) -> Option<Resolved<'a>> {
        let first = segments.first()?.as_str();
        if visited.len() > 256
            || visited
                .iter()
                .any(|(id, seen)| *id == module.id && seen == segments)
        {
            return None;
        }
        visited.push((module.id, segments.to_vec()));
        match first {
            "crate" => return self.resolve_from(&root_of(module), &segments[1..], visited),
            "self" => return self.resolve_from(&module.path, &segments[1..], visited),
            "super" => {
                let mut base = module.path.clone();
                let mut rest = segments;
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                return self.resolve_from(&base, rest, visited);
            }
            _ => {}
        }
        // An item of this module.
        if segments.len() == 1
            && let Some(&i) = module.index.types.get(first)
        {
            let item = &module.items[i];
            return Some(Resolved::Local(ItemRef { module, item }));
        }
        // A child module.
        if module.index.children.contains(first)
            && let Some(child) = self.module(&child_path(module, first))
        {
            return if segments.len() > 1 {
                self.resolve_in(child, &segments[1..], visited)
            } else {
                None
            };
        }
        // A `use` import.
        if let Some(target) = module.index.imports.get(first) {
            let mut full = target.clone();
            full.extend(segments[1..].iter().cloned());
            return if self.is_local_path(module, &full) {
                self.resolve_in(module, &full, visited)
            } else {
                Some(Resolved::External(full))
            };
        }
        if segments.len() == 1 && PRELUDE_TYPES.contains(&first) {
            return Some(Resolved::External(vec![first.to_string()]));
        }
        // A path into this crate or a dependency by its name: before the
        // globs, which would otherwise each be tried as its prefix.
        if segments.len() > 1 {
            if self.sources.crate_name.as_deref() == Some(first) {
                return self.resolve_from(&[], &segments[1..], visited);
            }
            if self.sources.dependencies.iter().any(|d| d == first) {
                return self.resolve_from(&dependency_root(first), &segments[1..], visited);
            }
        }
        // Glob imports: this crate's modules first, then other crates'.
        let globs = &module.index.globs;
        for glob in globs.iter().filter(|g| self.is_local_path(module, g)) {
            let mut full = glob.clone();
            full.extend(segments.iter().cloned());
            if let Some(found) = self.resolve_in(module, &full, visited) {
                return Some(found);
            }
        }
        // Another crate's glob is taken to bind the name, as rsop cannot
        // list that crate's items; a private one only where it is visible:
        // in its module and the modules under it, not from a module that
        // reaches this one through a path or a `pub use ..::*`.
        let visible = |glob: &Vec<String>| {
            module.index.pub_globs.contains(glob)
                || visited.first().is_none_or(|(origin, _)| {
                    self.module_by_id(*origin).path.starts_with(&module.path)
                })
        };
        if segments.len() == 1
            && let Some(glob) = globs
                .iter()
                .find(|g| !self.is_local_path(module, g) && visible(g))
        {
            let mut full = glob.clone();
            full.push(first.to_string());
            return Some(Resolved::External(full));
        }
        None
    }

    /// Whether a `use` path points into this crate.
    fn is_local_path(&self, module: &Module, path: &[String]) -> bool {
        match path.first().map(String::as_str) {
            Some("crate" | "self" | "super") => true,
            Some(first) => {
                self.sources.crate_name.as_deref() == Some(first)
                    || self.sources.dependencies.iter().any(|d| d == first)
                    || module.index.children.contains(first)
            }
            None => false,
        }
    }

    fn resolve_from<'a>(
        &'a self,
        base: &[String],
        rest: &[String],
        visited: &mut Vec<(ModuleId, Vec<String>)>,
    ) -> Option<Resolved<'a>> {
        let module = self.module(base)?;
        if rest.is_empty() {
            return None;
        }
        self.resolve_in(module, rest, visited)
    }

    /// A path that starts with a crate name.
    fn resolve_absolute<'a>(
        &'a self,
        segments: &[String],
        visited: &mut Vec<(ModuleId, Vec<String>)>,
    ) -> Option<Resolved<'a>> {
        if segments.is_empty() {
            return None;
        }
        if self.sources.crate_name.as_deref() == Some(segments[0].as_str()) {
            return self.resolve_from(&[], &segments[1..], visited);
        }
        if self.sources.dependencies.contains(&segments[0]) {
            return self.resolve_from(&dependency_root(&segments[0]), &segments[1..], visited);
        }
        Some(Resolved::External(segments.to_vec()))
    }

    /// A function of this crate, for evaluating `default = "path"`.
    pub fn resolve_fn<'a>(
        &'a self,
        module: &'a Module,
        path: &[String],
    ) -> Option<(&'a Module, &'a syn::ItemFn)> {
        self.resolve_fn_within(module, path, 0)
    }

    /// [`Self::resolve_fn`], following `use` imports to a depth of 8.
    fn resolve_fn_within<'a>(
        &'a self,
        module: &'a Module,
        path: &[String],
        depth: usize,
    ) -> Option<(&'a Module, &'a syn::ItemFn)> {
        if depth > 8 {
            return None;
        }
        let (last, parent) = path.split_last()?;
        let target = if parent.is_empty() {
            module
        } else {
            self.module_in(module, parent, depth)?
        };
        if let Some(&i) = target.index.fns.get(last)
            && let syn::Item::Fn(f) = &target.items[i]
        {
            return Some((target, f));
        }
        // `use crate::util::is_default;` in that module.
        if let Some(imported) = target.index.imports.get(last) {
            if imported.len() > 1 && self.is_local_path(target, imported) {
                return self.resolve_fn_within(target, imported, depth + 1);
            }
            return None;
        }
        // `use super::*;`: a function of a glob-imported module.
        if !parent.is_empty() {
            return None;
        }
        target
            .index
            .globs
            .iter()
            .filter(|g| self.is_local_path(target, g))
            .find_map(|glob| {
                let mut full = glob.clone();
                full.push(last.clone());
                self.resolve_fn_within(target, &full, depth + 1)
            })
    }

    /// A function `path` names in `module`: a free function of the crate, or
    /// an associated function `Type::name`; its signature and body.
    pub fn callable<'a>(
        &'a self,
        module: &'a Module,
        path: &[String],
    ) -> Option<(&'a Module, &'a syn::Signature, &'a syn::Block)> {
        if let Some((m, f)) = self.resolve_fn(module, path) {
            return Some((m, &f.sig, &f.block));
        }
        let [ty, name] = path else { return None };
        self.resolve_assoc_fn(ty, name)
            .map(|(m, f)| (m, &f.sig, &f.block))
    }

    /// An associated function `Type::name` of a local type (`impl Type { fn name() }`).
    pub fn resolve_assoc_fn<'a>(
        &'a self,
        ty: &str,
        name: &str,
    ) -> Option<(&'a Module, &'a syn::ImplItemFn)> {
        let (at, j) = self.find_impl(ty, |index| index.fns.get(ty)?.get(name).copied())?;
        match self.item_at(at) {
            (module, syn::Item::Impl(imp)) => match &imp.items[j] {
                syn::ImplItem::Fn(f) => Some((module, f)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether a local type has a hand-written `impl Default`.
    pub fn has_manual_default(&self, name: &str) -> bool {
        self.manual_impl_of(name, "Default").is_some()
    }

    /// A hand-written `impl Trait for Name` anywhere in the crate.
    pub fn manual_impl_of(
        &self,
        name: &str,
        trait_name: &str,
    ) -> Option<(&Module, &syn::ItemImpl)> {
        let at = self.find_impl(name, |index| {
            index.traits.get(trait_name)?.get(name).copied()
        })?;
        match self.item_at(at) {
            (module, syn::Item::Impl(imp)) => Some((module, imp)),
            _ => None,
        }
    }

    /// The value expression of a `const` or `static` of this crate that
    /// `path` names in `module`: an item of a module (through `use`,
    /// `crate::`, `self::`, `super::` and re-exports) or an associated
    /// constant `Type::NAME` of a local type.
    pub fn resolve_const<'a>(
        &'a self,
        module: &'a Module,
        path: &syn::Path,
    ) -> Option<(&'a Module, &'a syn::Expr)> {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.const_in(module, &segments, 0)
    }

    fn const_in<'a>(
        &'a self,
        module: &'a Module,
        segments: &[String],
        depth: usize,
    ) -> Option<(&'a Module, &'a syn::Expr)> {
        if depth > 32 {
            return None;
        }
        let (last, parent) = segments.split_last()?;
        if parent.is_empty() {
            if let Some(expr) = find_const(module, last) {
                return Some((module, expr));
            }
            if let Some(target) = module.index.imports.get(last.as_str()) {
                return self
                    .is_local_path(module, target)
                    .then(|| self.const_in(module, target, depth + 1))
                    .flatten();
            }
            return module
                .index
                .globs
                .iter()
                .filter(|g| self.is_local_path(module, g))
                .find_map(|glob| {
                    let mut full = glob.clone();
                    full.push(last.clone());
                    self.const_in(module, &full, depth + 1)
                });
        }
        if let Some(target) = self.module_in(module, parent, depth) {
            return self.const_in(target, std::slice::from_ref(last), depth + 1);
        }
        // `Type::NAME`: an associated constant of a local type.
        let type_path = syn::Path {
            leading_colon: None,
            segments: parent
                .iter()
                .map(|s| syn::PathSegment::from(syn::Ident::new(s, proc_macro2::Span::call_site())))
                .collect(),
        };
        let Some(Resolved::Local(found)) = self.resolve(module, &type_path) else {
            return None;
        };
        let ty = match found.item {
            syn::Item::Struct(s) => &s.ident,
            syn::Item::Enum(e) => &e.ident,
            _ => return None,
        };
        let ty = ty.to_string();
        let (at, j) = self.find_impl(&ty, |index| {
            index.consts.get(&ty)?.get(last.as_str()).copied()
        })?;
        match self.item_at(at) {
            (m, syn::Item::Impl(imp)) => match &imp.items[j] {
                syn::ImplItem::Const(c) => Some((m, &c.expr)),
                _ => None,
            },
            _ => None,
        }
    }

    /// The module of this crate that `segments` names in `module`'s scope.
    fn module_in<'a>(
        &'a self,
        module: &'a Module,
        segments: &[String],
        depth: usize,
    ) -> Option<&'a Module> {
        if depth > 32 {
            return None;
        }
        let (first, rest) = segments.split_first()?;
        let base: Vec<String> = match first.as_str() {
            "crate" => root_of(module),
            "self" => module.path.clone(),
            "super" => {
                let mut base = module.path.clone();
                base.pop()?;
                let mut rest = rest;
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                return self.module(&base);
            }
            name if self.sources.crate_name.as_deref() == Some(name) => Vec::new(),
            name if self.sources.dependencies.iter().any(|d| d == name) => dependency_root(name),
            name => {
                let child = child_path(module, name);
                if self.module(&child).is_some() {
                    child
                } else {
                    let mut target = module.index.imports.get(name)?.clone();
                    if !self.is_local_path(module, &target) {
                        return None;
                    }
                    target.extend(rest.iter().cloned());
                    return self.module_in(module, &target, depth + 1);
                }
            }
        };
        let mut full = base;
        full.extend(rest.iter().cloned());
        self.module(&full)
    }
}

/// The path of `module`'s child `name`.
fn child_path(module: &Module, name: &str) -> Vec<String> {
    let mut path = module.path.clone();
    path.push(name.to_string());
    path
}

/// Adds a module of group `group` to `modules` and, recursively, the inline
/// `mod x { ... }` in it. Items of a path already there (the crate root's,
/// from `src/lib.rs` then `src/main.rs`) join that module's.
fn add_module(
    modules: &mut Vec<Module>,
    group: usize,
    path: Vec<String>,
    file: usize,
    items: Vec<syn::Item>,
) {
    let mut own = Vec::with_capacity(items.len());
    for item in items {
        match item {
            syn::Item::Mod(syn::ItemMod {
                ident,
                content: Some((_, inner)),
                ..
            }) => {
                let mut child = path.clone();
                child.push(ident.to_string());
                add_module(modules, group, child, file, inner);
            }
            other => own.push(other),
        }
    }
    if let Some(existing) = modules.iter_mut().find(|m| m.path == path) {
        existing.items.extend(own);
        return;
    }
    let id = (group, modules.len());
    modules.push(Module {
        path,
        file,
        items: own,
        id,
        index: ModuleIndex::default(),
    });
}

/// Reports each `mod x;` of `modules` whose file rsop did not find under
/// `src/` (unless it is behind `#[cfg]` or placed with `#[path]`), so that
/// its types are not mistaken for another crate's.
fn check_module_files(sources: &Sources, modules: &[Module], problems: &mut Vec<Diagnostic>) {
    for module in modules {
        for item in &module.items {
            let syn::Item::Mod(m) = item else { continue };
            if m.content.is_some()
                || m.attrs
                    .iter()
                    .any(|a| a.path().is_ident("cfg") || a.path().is_ident("path"))
            {
                continue;
            }
            // Its children: the modules of files, and the inline ones
            // (`mod r#enum;` is the module `enum`, in `enum.rs`).
            let raw = m.ident.to_string();
            let name = raw.strip_prefix("r#").unwrap_or(&raw).to_string();
            if module.index.children.contains(&name) {
                continue;
            }
            let file = &sources.files[module.file].path;
            // Where rustc looks: next to a `mod.rs`, `lib.rs` or `main.rs`,
            // else in the folder named after the declaring file.
            let parent = file.parent().unwrap_or(Path::new(""));
            let owns_folder = file
                .file_name()
                .is_some_and(|f| f == "mod.rs" || f == "lib.rs" || f == "main.rs");
            let folder = if owns_folder {
                parent.to_path_buf()
            } else {
                parent.join(file.file_stem().unwrap_or_default())
            };
            let dir = folder.join(&name);
            problems.push(
                Diagnostic::new(
                    Location::of_span(file, m.ident.span()),
                    format!(
                        "`mod {};` has no file: neither `{}.rs` nor `{}` exists",
                        m.ident,
                        dir.display(),
                        dir.join("mod.rs").display()
                    ),
                )
                .with_help("create the module's file, or remove the declaration"),
            );
        }
    }
}

/// The value of a `const` or `static` item named `name` in `module`.
fn find_const<'a>(module: &'a Module, name: &str) -> Option<&'a syn::Expr> {
    module.items.iter().find_map(|item| match item {
        syn::Item::Const(c) if c.ident == name => Some(c.expr.as_ref()),
        syn::Item::Static(s) if s.ident == name => Some(s.expr.as_ref()),
        _ => None,
    })
}

/// The path of the crate root `module` belongs to: empty for the crate's
/// own modules, `[DEPENDENCY, name]` for a path dependency's.
fn root_of(module: &Module) -> Vec<String> {
    if is_dependency_path(&module.path) {
        module.path[..2].to_vec()
    } else {
        Vec::new()
    }
}

fn is_dependency_path(path: &[String]) -> bool {
    path.first().is_some_and(|p| p == DEPENDENCY)
}

fn dependency_root(name: &str) -> Vec<String> {
    vec![DEPENDENCY.to_string(), name.to_string()]
}

/// A crate the package depends on, read for its types: the name code uses
/// for it, its folder, and the features the package enables on it.
struct Dependency {
    name: String,
    dir: PathBuf,
    features: Vec<String>,
    defaults: bool,
}

/// The features a dependency entry (and the workspace entry it inherits)
/// enables, and whether the default ones are kept.
fn enabled_features(specs: &[&dyn toml_edit::TableLike]) -> (Vec<String>, bool) {
    let features = specs
        .iter()
        .filter_map(|s| s.get("features").and_then(toml_edit::Item::as_array))
        .flat_map(|a| a.iter().filter_map(|f| f.as_str().map(str::to_string)))
        .collect();
    let defaults = specs
        .iter()
        .find_map(|s| s.get("default-features").and_then(toml_edit::Item::as_bool))
        .unwrap_or(true);
    (features, defaults)
}

/// The crate's path dependencies (`foo = { path = ".." }`, or
/// `foo = { workspace = true }` where the workspace gives a path), and
/// theirs in turn. A sibling workspace crate's types are read from its
/// sources like the crate's own.
fn path_dependencies(root: &Path) -> Result<Vec<Dependency>> {
    let mut out: Vec<Dependency> = Vec::new();
    let mut queue = vec![root.to_path_buf()];
    let mut seen = vec![std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())];
    while let Some(dir) = queue.pop() {
        let Some(doc) = manifest(&dir.join("Cargo.toml"))? else {
            continue;
        };
        let workspace_doc = workspace_manifest(&dir)?;
        let workspace = workspace_dependencies(workspace_doc.as_ref());
        let Some(deps) = doc
            .get("dependencies")
            .and_then(toml_edit::Item::as_table_like)
        else {
            continue;
        };
        for (key, spec) in deps.iter() {
            let Some(spec) = spec.as_table_like() else {
                continue;
            };
            // `{ workspace = true, features = [..] }` adds to the features
            // of the workspace's entry.
            let inherited = (spec.get("workspace").and_then(toml_edit::Item::as_bool)
                == Some(true))
            .then(|| {
                workspace_doc
                    .as_ref()?
                    .1
                    .get("workspace")?
                    .get("dependencies")?
                    .get(key)?
                    .as_table_like()
            })
            .flatten();
            let path = match spec.get("path").and_then(toml_edit::Item::as_str) {
                Some(p) => Some(dir.join(p)),
                None if spec.get("workspace").and_then(toml_edit::Item::as_bool) == Some(true) => {
                    workspace.get(key).cloned()
                }
                None => None,
            };
            let Some(path) = path else { continue };
            let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if seen.contains(&canonical) || out.len() >= 64 {
                continue;
            }
            seen.push(canonical);
            // Code names a dependency by its key, or by its library's name
            // when the key is not a rename.
            let lib = manifest(&path.join("Cargo.toml"))?
                .and_then(|d| d.get("lib")?.get("name")?.as_str().map(str::to_string));
            let name = match (spec.get("package"), lib) {
                (None, Some(lib)) => lib,
                _ => key.to_string(),
            }
            .replace('-', "_");
            let specs: Vec<&dyn toml_edit::TableLike> =
                std::iter::once(spec).chain(inherited).collect();
            let (features, defaults) = enabled_features(&specs);
            out.push(Dependency {
                name,
                dir: path.clone(),
                features,
                defaults,
            });
            queue.push(path);
        }
    }
    unify_workspace_features(root, &mut out)?;
    Ok(out)
}

/// A workspace builds its members together, and cargo compiles a path
/// dependency once, with the features any member enables on it: a member
/// may use a module of a sibling that only another member's features turn on.
fn unify_workspace_features(root: &Path, dependencies: &mut [Dependency]) -> Result<()> {
    let Some((workspace_dir, workspace_doc)) = workspace_manifest(root)? else {
        return Ok(());
    };
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let wanted: Vec<PathBuf> = dependencies.iter().map(|d| canonical(&d.dir)).collect();
    for member in workspace_members(&workspace_dir, &workspace_doc) {
        let Some(doc) = manifest(&member.join("Cargo.toml"))? else {
            continue;
        };
        let Some(deps) = doc
            .get("dependencies")
            .and_then(toml_edit::Item::as_table_like)
        else {
            continue;
        };
        for (_, spec) in deps.iter() {
            let Some(spec) = spec.as_table_like() else {
                continue;
            };
            let Some(path) = spec.get("path").and_then(toml_edit::Item::as_str) else {
                continue;
            };
            let dir = canonical(&member.join(path));
            let Some(at) = wanted.iter().position(|w| *w == dir) else {
                continue;
            };
            let (features, defaults) = enabled_features(&[spec]);
            let dependency = &mut dependencies[at];
            for feature in features {
                if !dependency.features.contains(&feature) {
                    dependency.features.push(feature);
                }
            }
            dependency.defaults |= defaults;
        }
    }
    Ok(())
}

/// What the dependencies cargo has downloaded are read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// The types a kind may embed: crates that derive `JsonSchema`.
    Kinds,
    /// Those, and the requests a crate that depends on kube sends when
    /// the package calls it (a helper library's `create_or_update(&api,
    /// ..)`).
    Requests,
}

/// The registry and git dependencies of the package at `root` that the
/// sources name (`gateway_api::...`, in `texts`) and that are worth
/// reading for `reading`: those that derive `JsonSchema` themselves (they
/// depend on schemars), and for [`Reading::Requests`] those that depend on
/// kube. They are read from the sources cargo has downloaded for the
/// release Cargo.lock holds (a `[patch]` too), each with the features the
/// package enables on it. A crate cargo has not downloaded yet is left
/// out: its types then need the build, and its requests are noted.
fn fetched_dependencies(
    root: &Path,
    texts: &[&str],
    reading: Reading,
) -> Result<(Vec<Dependency>, Vec<String>)> {
    let Some(doc) = manifest(&root.join("Cargo.toml"))? else {
        return Ok((Vec::new(), Vec::new()));
    };
    let Some(deps) = doc
        .get("dependencies")
        .and_then(toml_edit::Item::as_table_like)
    else {
        return Ok((Vec::new(), Vec::new()));
    };
    let home = cargo_home();
    let registry: Vec<PathBuf> = home
        .iter()
        .filter_map(|home| std::fs::read_dir(home.join("registry/src")).ok())
        .flatten()
        .filter_map(|e| Some(e.ok()?.path()))
        .collect();
    let workspace = workspace_manifest(root)?;
    let mut lock: Option<Option<toml_edit::DocumentMut>> = None;
    let mut out = Vec::new();
    let mut unread = Vec::new();
    for (key, spec) in deps.iter() {
        let inherited = (spec.get("workspace").and_then(toml_edit::Item::as_bool) == Some(true))
            .then(|| {
                workspace
                    .as_ref()?
                    .1
                    .get("workspace")?
                    .get("dependencies")?
                    .get(key)
                    .cloned()
            })
            .flatten();
        let specs: Vec<&toml_edit::Item> =
            std::iter::once(spec).chain(inherited.as_ref()).collect();
        if specs.iter().any(|s| s.get("path").is_some()) {
            continue;
        }
        let package = specs
            .iter()
            .find_map(|s| s.get("package").and_then(toml_edit::Item::as_str))
            .unwrap_or(key)
            .to_string();
        let name = key.replace('-', "_");
        if is_modelled_crate(&package) || !texts.iter().any(|t| t.contains(&format!("{name}::"))) {
            continue;
        }
        let lock = lock.get_or_insert_with(|| {
            std::fs::canonicalize(root)
                .unwrap_or_else(|_| root.to_path_buf())
                .ancestors()
                .map(|d| d.join("Cargo.lock"))
                .find_map(|p| std::fs::read_to_string(p).ok())
                .and_then(|text| text.parse().ok())
        });
        let Some(dir) = lock
            .as_ref()
            .and_then(|l| downloaded(l, &package, &registry, home.as_deref()?))
        else {
            // Its requests go unread, which is said where the code calls it.
            if reading == Reading::Requests
                && !MODELLED_REQUESTS.contains(&package.as_str())
                && lock
                    .as_ref()
                    .is_some_and(|l| locked_dependency_on_kube(l, &package))
            {
                unread.push(name);
            }
            continue;
        };
        let depends = |crates: &[&str]| {
            manifest(&dir.join("Cargo.toml")).is_ok_and(|m| {
                m.is_some_and(|m| {
                    m.get("dependencies")
                        .and_then(toml_edit::Item::as_table_like)
                        .is_some_and(|d| {
                            d.iter().any(|(key, spec)| {
                                let package = spec
                                    .get("package")
                                    .and_then(toml_edit::Item::as_str)
                                    .unwrap_or(key);
                                crates.contains(&package)
                            })
                        })
                })
            })
        };
        // Its dependency on schemars may be renamed (`schemars1 = { package
        // = "schemars" }`, behind a feature).
        let wanted = depends(&["schemars"])
            || (reading == Reading::Requests && depends(&["kube", "kube-client", "kube-runtime"]));
        if !wanted {
            continue;
        }
        let tables: Vec<&dyn toml_edit::TableLike> =
            specs.iter().filter_map(|s| s.as_table_like()).collect();
        let (features, defaults) = enabled_features(&tables);
        out.push(Dependency {
            name,
            dir,
            features,
            defaults,
        });
        if out.len() >= 8 {
            break;
        }
    }
    Ok((out, unread))
}

/// The crates whose requests rsop knows without reading them: the leader
/// electors' Lease requests, and rsop-runtime's manager.
const MODELLED_REQUESTS: &[&str] = &["kube-leader-election", "kube-lease-manager", "rsop-runtime"];

/// Whether the release of `package` a Cargo.lock holds depends on kube
/// itself (its `dependencies` list, `"kube"` or `"kube 0.99.0"`).
fn locked_dependency_on_kube(lock: &toml_edit::DocumentMut, package: &str) -> bool {
    lock.get("package")
        .and_then(toml_edit::Item::as_array_of_tables)
        .into_iter()
        .flatten()
        .filter(|p| p.get("name").and_then(toml_edit::Item::as_str) == Some(package))
        .filter_map(|p| p.get("dependencies").and_then(toml_edit::Item::as_array))
        .flatten()
        .filter_map(toml_edit::Value::as_str)
        .filter_map(|d| d.split(' ').next())
        .any(|d| matches!(d, "kube" | "kube-client" | "kube-runtime"))
}

/// The crates whose types rsop knows without reading them: k8s-openapi's
/// tables, and those schemars implements `JsonSchema` for.
fn is_modelled_crate(package: &str) -> bool {
    matches!(
        package,
        "k8s-openapi"
            | "kube"
            | "kube-core"
            | "kube-derive"
            | "kube-runtime"
            | "kube-client"
            | "schemars"
            | "serde"
            | "serde_json"
            | "chrono"
            | "jiff"
            | "uuid"
            | "url"
            | "semver"
            | "bytes"
            | "rust_decimal"
            | "bigdecimal"
            | "smol_str"
            | "arrayvec"
            | "indexmap"
            | "smallvec"
            | "either"
    )
}

/// Where cargo has downloaded the sources of the release of `package`
/// that a Cargo.lock holds (the highest, if several): under the registry's
/// `src/`, or a git checkout of its commit (`git/checkouts/<repo>-<hash>/
/// <short commit>/`, the package in the repository's root or a folder of
/// its workspace).
fn downloaded(
    lock: &toml_edit::DocumentMut,
    package: &str,
    registry: &[PathBuf],
    home: &Path,
) -> Option<PathBuf> {
    let (version, source) = lock
        .get("package")?
        .as_array_of_tables()?
        .iter()
        .filter(|p| p.get("name").and_then(toml_edit::Item::as_str) == Some(package))
        .filter_map(|p| {
            let version = semver::Version::parse(p.get("version")?.as_str()?).ok()?;
            let source = p.get("source")?.as_str()?;
            Some((version, source))
        })
        .max_by(|a, b| a.0.cmp(&b.0))?;
    if source.starts_with("registry+") || source.starts_with("sparse+") {
        return registry
            .iter()
            .map(|index| index.join(format!("{package}-{version}")))
            .find(|d| d.join("Cargo.toml").is_file());
    }
    let (url, commit) = source.strip_prefix("git+")?.split_once('#')?;
    let url = url.split('?').next()?;
    let repository = url
        .trim_end_matches('/')
        .rsplit('/')
        .next()?
        .trim_end_matches(".git");
    let checkouts = std::fs::read_dir(home.join("git/checkouts")).ok()?;
    checkouts
        .filter_map(std::result::Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.rsplit_once('-'))
                // cargo names the folder for the URL lowercased on GitHub.
                .is_some_and(|(repo, _)| repo.eq_ignore_ascii_case(repository))
        })
        .filter_map(|e| std::fs::read_dir(e.path()).ok())
        .flatten()
        .filter_map(std::result::Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|short| short.len() >= 7 && commit.starts_with(short))
        })
        .find_map(|checkout| package_in(&checkout.path(), package))
}

/// The folder of `package` in a checkout of its repository: the root, or
/// one at most three folders down.
fn package_in(checkout: &Path, package: &str) -> Option<PathBuf> {
    walkdir::WalkDir::new(checkout)
        .max_depth(4)
        .into_iter()
        .filter_entry(|e| e.file_name() != "target" && e.file_name() != ".git")
        .filter_map(std::result::Result::ok)
        .filter(|e| e.file_name() == "Cargo.toml")
        .find(|e| {
            manifest(e.path()).ok().flatten().is_some_and(|m| {
                m.get("package")
                    .and_then(|p| p.get("name"))
                    .and_then(toml_edit::Item::as_str)
                    == Some(package)
            })
        })
        .and_then(|e| e.path().parent().map(Path::to_path_buf))
}

/// Cargo's home: `$CARGO_HOME`, or `~/.cargo`.
fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
}

/// The member folders a workspace manifest at `root` lists, in its order:
/// `crates/*` names each folder of `crates/` with a Cargo.toml (sorted),
/// any other entry its own folder.
pub fn workspace_members(root: &Path, doc: &toml_edit::DocumentMut) -> Vec<PathBuf> {
    let patterns = doc
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(toml_edit::Item::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.as_str());
    let mut members = Vec::new();
    for pattern in patterns {
        match pattern.strip_suffix("/*") {
            Some(parent) => {
                let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(parent))
                    .into_iter()
                    .flatten()
                    .filter_map(|e| Some(e.ok()?.path()))
                    .filter(|p| p.join("Cargo.toml").is_file())
                    .collect();
                found.sort();
                members.extend(found);
            }
            None => members.push(root.join(pattern)),
        }
    }
    members
}

/// The folder and manifest of the workspace above `dir` (the first upward
/// with a `[workspace]` table).
fn workspace_manifest(dir: &Path) -> Result<Option<(PathBuf, toml_edit::DocumentMut)>> {
    let start = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    for ancestor in start.ancestors() {
        if let Some(doc) = manifest(&ancestor.join("Cargo.toml"))?
            && doc.get("workspace").is_some()
        {
            return Ok(Some((ancestor.to_path_buf(), doc)));
        }
    }
    Ok(None)
}

fn manifest(path: &Path) -> Result<Option<toml_edit::DocumentMut>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text.parse().ok()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("read", path, e)),
    }
}

/// A package's binaries (name, root file) and its library's root file.
pub type Targets = (Vec<(String, PathBuf)>, Option<PathBuf>);

/// The targets of the package at `root`: each binary's name and root file
/// (`[[bin]]` entries, `src/main.rs` as the package's name, `src/bin/*`),
/// and the library's root file when it has one.
pub fn targets(root: &Path) -> Result<Targets> {
    let package = manifest(&root.join("Cargo.toml"))?;
    let package = package.as_ref();
    let package_name = package
        .and_then(|p| p.get("package")?.get("name")?.as_str())
        .unwrap_or_default()
        .to_string();
    let mut named: Vec<(String, PathBuf)> = Vec::new();
    for bin in package
        .and_then(|p| p.get("bin")?.as_array_of_tables())
        .into_iter()
        .flat_map(|a| a.iter())
    {
        let Some(name) = bin.get("name").and_then(|n| n.as_str()) else {
            continue;
        };
        let path = match bin.get("path").and_then(|p| p.as_str()) {
            Some(path) => root.join(path),
            None => [
                root.join(format!("src/bin/{name}.rs")),
                root.join(format!("src/bin/{name}/main.rs")),
                root.join("src/main.rs"),
            ]
            .into_iter()
            .find(|c| c.is_file())
            .unwrap_or_default(),
        };
        named.push((name.to_string(), path));
    }
    let main = root.join("src/main.rs");
    if main.is_file() && !named.iter().any(|(_, p)| *p == main) {
        named.push((package_name, main));
    }
    for path in binary_roots(root, package)? {
        if named.iter().any(|(_, p)| *p == path) {
            continue;
        }
        let name = if path.file_name().is_some_and(|n| n == "main.rs") {
            path.parent().and_then(Path::file_name)
        } else {
            path.file_stem()
        };
        if let Some(name) = name {
            named.push((name.to_string_lossy().into_owned(), path));
        }
    }
    named.retain(|(_, p)| p.is_file());
    let library = library_root(root, package);
    Ok((named, library.is_file().then_some(library)))
}

/// The roots of the binaries under `src/bin/`: `src/bin/x.rs` and
/// `src/bin/x/main.rs`.
fn binary_roots(root: &Path, package: Option<&toml_edit::DocumentMut>) -> Result<Vec<PathBuf>> {
    let mut roots = Vec::new();
    // `[[bin]]` targets: their `path`, else cargo's place for their name.
    let package_name = package
        .and_then(|p| p.get("package")?.get("name")?.as_str())
        .unwrap_or_default();
    for bin in package
        .and_then(|p| p.get("bin")?.as_array_of_tables())
        .into_iter()
        .flat_map(|a| a.iter())
    {
        if let Some(path) = bin.get("path").and_then(|p| p.as_str()) {
            roots.push(root.join(path));
        } else if let Some(name) = bin.get("name").and_then(|n| n.as_str()) {
            let candidates = [
                root.join(format!("src/bin/{name}.rs")),
                root.join(format!("src/bin/{name}/main.rs")),
            ];
            match candidates.into_iter().find(|c| c.is_file()) {
                Some(found) => roots.push(found),
                None if name == package_name => roots.push(root.join("src/main.rs")),
                None => {}
            }
        }
    }
    // And, unless `autobins = false`, every file and folder of `src/bin/`.
    let autobins = package
        .and_then(|p| p.get("package")?.get("autobins")?.as_bool())
        .unwrap_or(true);
    let dir = root.join("src/bin");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) if autobins => Some(entries),
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io("read directory", &dir, e)),
    };
    for entry in entries.into_iter().flatten() {
        let path = entry
            .map_err(|e| Error::io("read directory", &dir, e))?
            .path();
        if path.extension().is_some_and(|e| e == "rs") {
            roots.push(path);
        } else if path.join("main.rs").is_file() {
            roots.push(path.join("main.rs"));
        }
    }
    let main = root.join("src/main.rs");
    roots.retain(|r| r.is_file() && *r != main);
    roots.sort();
    roots.dedup();
    Ok(roots)
}

/// The root file of the library of the package in `dir`: `[lib] path`, or
/// `src/lib.rs`.
fn library_root(dir: &Path, package: Option<&toml_edit::DocumentMut>) -> PathBuf {
    let path = package
        .and_then(|p| p.get("lib")?.get("path")?.as_str().map(str::to_string))
        .unwrap_or_else(|| "src/lib.rs".to_string());
    dir.join(path)
}

/// The `[workspace.dependencies]` entries with a path of `workspace` (see
/// [`workspace_manifest`]), by key.
fn workspace_dependencies(
    workspace: Option<&(PathBuf, toml_edit::DocumentMut)>,
) -> HashMap<String, PathBuf> {
    let Some((dir, doc)) = workspace else {
        return HashMap::new();
    };
    doc.get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(toml_edit::Item::as_table_like)
        .into_iter()
        .flat_map(|deps| deps.iter())
        .filter_map(|(key, spec)| {
            let path = spec.as_table_like()?.get("path")?.as_str()?;
            Some((key.to_string(), dir.join(path)))
        })
        .collect()
}

/// syn's message, with its lexer failure made readable.
fn parse_message(e: &syn::Error) -> String {
    let text = e.to_string();
    if text == "cannot parse string into token stream" {
        "cannot parse Rust: unbalanced delimiters or an invalid token".into()
    } else {
        format!("cannot parse Rust: {text}")
    }
}

/// Type names in scope everywhere: the prelude's and the primitives.
const PRELUDE_TYPES: &[&str] = &[
    "String", "Vec", "Option", "Result", "Box", "bool", "char", "str", "i8", "i16", "i32", "i64",
    "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32", "f64",
];

/// The index of one module's items.
fn index_module(items: &[syn::Item]) -> ModuleIndex {
    let mut index = ModuleIndex::default();
    for (i, item) in items.iter().enumerate() {
        let ident = match item {
            syn::Item::Struct(s) => &s.ident,
            syn::Item::Enum(e) => &e.ident,
            syn::Item::Type(t) => &t.ident,
            syn::Item::Fn(f) => {
                index.fns.entry(f.sig.ident.to_string()).or_insert(i);
                continue;
            }
            syn::Item::Use(u) => {
                let globs = index.globs.len();
                index_use_tree(&u.tree, &mut Vec::new(), &mut index);
                if !matches!(u.vis, syn::Visibility::Inherited) {
                    let new: Vec<Vec<String>> = index.globs[globs..].to_vec();
                    index.pub_globs.extend(new);
                }
                continue;
            }
            _ => continue,
        };
        index.types.entry(ident.to_string()).or_insert(i);
    }
    index
}

/// Records the names a `use` tree binds, and its globs.
fn index_use_tree(tree: &syn::UseTree, prefix: &mut Vec<String>, index: &mut ModuleIndex) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            index_use_tree(&p.tree, prefix, index);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            // `use a::b::{self}` binds `b` to `a::b`.
            let (name, full) = if n.ident == "self" {
                let Some(last) = prefix.last() else { return };
                (last.clone(), prefix.clone())
            } else {
                let mut full = prefix.clone();
                full.push(n.ident.to_string());
                (n.ident.to_string(), full)
            };
            index.imports.entry(name).or_insert(full);
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix.clone();
            if r.ident != "self" {
                full.push(r.ident.to_string());
            }
            index.imports.entry(r.rename.to_string()).or_insert(full);
        }
        syn::UseTree::Group(g) => {
            for t in &g.items {
                index_use_tree(t, prefix, index);
            }
        }
        syn::UseTree::Glob(_) => index.globs.push(prefix.clone()),
    }
}

/// The module path of a file under `src/` by Rust's default layout:
/// `src/lib.rs` and `src/main.rs` are the root, `src/a/b.rs` and
/// `src/a/b/mod.rs` are `a::b`. Files under `src/bin/` are other crates.
pub(crate) fn module_path_of(rel: &Path) -> Option<Vec<String>> {
    let rel = rel.strip_prefix("src").ok()?;
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    match (parts.is_empty(), stem) {
        (true, "lib" | "main") => {}
        (_, "mod") => {}
        _ => parts.push(stem.to_string()),
    }
    Some(parts)
}

/// The location of anything with a span, in the file of `module`.
pub fn location(krate: &Crate, module: &Module, node: &impl Spanned) -> Location {
    Location::of_span(&krate.file_of(module).path, node.span())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_paths_follow_the_default_layout() {
        let p = |s: &str| module_path_of(Path::new(s));
        assert_eq!(p("src/lib.rs"), Some(vec![]));
        assert_eq!(p("src/main.rs"), Some(vec![]));
        assert_eq!(p("src/api/mod.rs"), Some(vec!["api".to_string()]));
        assert_eq!(
            p("src/api/v1/app.rs"),
            Some(vec!["api".to_string(), "v1".to_string(), "app".to_string()])
        );
        assert_eq!(p("src/bin/tool.rs"), None);
    }

    #[test]
    fn a_path_dependency_has_the_features_every_workspace_member_enables() {
        let tmp = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = tmp.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "Cargo.toml",
            "[workspace]\nmembers = [\"server\", \"controller\", \"lib\"]\n",
        );
        write(
            "lib/Cargo.toml",
            "[package]\nname = \"core\"\n[features]\nclient = []\nresources = []\n",
        );
        write(
            "server/Cargo.toml",
            "[package]\nname = \"server\"\n[dependencies]\ncore = { path = \"../lib\", features = [\"client\"], default-features = false }\n",
        );
        write(
            "controller/Cargo.toml",
            "[package]\nname = \"controller\"\n[dependencies]\ncore = { path = \"../lib\", features = [\"resources\"] }\n",
        );
        // Built at the workspace root, as its Dockerfile builds it, the
        // server's `core` has the controller's features too.
        let dependencies = path_dependencies(&tmp.path().join("server")).unwrap();
        let [core] = dependencies.as_slice() else {
            panic!("{:?}", dependencies.len())
        };
        assert_eq!(core.features, ["client", "resources"]);
        assert!(core.defaults);
    }

    fn name_of(r: &Resolved<'_>) -> String {
        match r {
            Resolved::Local(item) => match item.item {
                syn::Item::Struct(s) => format!("{}::{}", item.module.path.join("::"), s.ident),
                syn::Item::Enum(e) => format!("{}::{}", item.module.path.join("::"), e.ident),
                syn::Item::Type(t) => format!("{}::{}", item.module.path.join("::"), t.ident),
                _ => "?".into(),
            },
            Resolved::External(p) => p.join("::"),
        }
    }

    #[test]
    fn resolves_through_use_paths_and_modules() {
        let mut diags = Diagnostics::default();
        let sources = Sources::from_sources(
            &[
                (
                    "src/lib.rs",
                    "pub mod api; pub mod types; mod inline { pub struct In; }",
                ),
                ("src/api/mod.rs", "pub mod v1;"),
                (
                    "src/api/v1/mod.rs",
                    "use crate::types::{Shared, Other as Renamed};\n\
                     use super::super::types::*;\n\
                     use k8s_openapi::api::core::v1 as corev1;\n\
                     use k8s_openapi::apimachinery::pkg::apis::meta::v1::*;\n\
                     type Alias = Shared;\n\
                     pub struct Local;",
                ),
                (
                    "src/types.rs",
                    "pub struct Shared; pub struct Other; pub enum Globbed { A }",
                ),
            ],
            Some("demo".into()),
            &mut diags,
        );
        assert!(diags.is_empty());
        let krate = Crate::new(&sources);
        let m = krate.module(&["api".into(), "v1".into()]).unwrap();
        let r = |s: &str| {
            let path: syn::Path = syn::parse_str(s).unwrap();
            krate
                .resolve(m, &path)
                .map(|r| name_of(&r))
                .unwrap_or_default()
        };
        assert_eq!(r("Local"), "api::v1::Local");
        assert_eq!(r("Shared"), "types::Shared");
        assert_eq!(r("Renamed"), "types::Other");
        assert_eq!(r("Globbed"), "types::Globbed");
        assert_eq!(r("Alias"), "api::v1::Alias");
        assert_eq!(r("crate::inline::In"), "inline::In");
        assert_eq!(r("self::Local"), "api::v1::Local");
        assert_eq!(r("super::super::types::Other"), "types::Other");
        assert_eq!(r("demo::types::Shared"), "types::Shared");
        assert_eq!(r("corev1::PodSpec"), "k8s_openapi::api::core::v1::PodSpec");
        assert_eq!(
            r("Condition"),
            "k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition"
        );
        assert_eq!(r("String"), "String");
    }
}
