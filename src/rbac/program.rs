//! The programs a project builds, and the requests each one makes.
//!
//! A package's requests are found once, over all of its code and the
//! sibling crates it depends on ([`calls`]). Which of them a binary makes
//! follows from what its `main` reaches: functions are followed by name,
//! narrowed by the path a call writes (`bootstrap::run`, `Store::new`), over
//! the files the binary compiles. A binary run in modes has a program per
//! mode, chosen by the words a workload passes: a clap `Subcommand`, a
//! flag's value (a `ValueEnum`, a string compared in a `match` or an
//! `if`), or a word `std::env::args()` is searched for. The branches of the
//! modes a workload's words rule out are left out.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::Result;
use crate::calls::{self, Analysis, Call, Unchecked};
use crate::manifests::diagnostics::Diagnostics;
use crate::manifests::read::modules::{self, BuildConfig};
use crate::manifests::read::source::{self, Reading, Sources};

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
    /// The words that choose its modes: subcommands (`serve`) and flag
    /// values (`--mode=controller`).
    pub modes: BTreeSet<String>,
    /// Its root file parses: its `main` is known.
    pub parsed: bool,
    /// The files it compiles (relative to the project root).
    files: HashSet<PathBuf>,
}

/// The packages under `root` that build binaries: the package there, or
/// the members of the workspace there; in a repository whose Rust code sits
/// in a folder of its own (`ctrl/`, `operator/`) beside its charts and
/// Dockerfile, those of the folders nearest the root that hold one (as deep
/// as `components/operators/widget/code/`).
pub fn packages(root: &Path, crd_kinds: &[calls::OwnKind]) -> Result<Vec<Package>> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if root.join("Cargo.toml").is_file() {
        roots.push(PathBuf::new());
    } else {
        for entry in super::shipped::searched(root, 6, &["target", "node_modules", "vendor"]) {
            if entry.file_name() == "Cargo.toml"
                && let Ok(dir) = entry.path().parent().unwrap_or(root).strip_prefix(root)
                && !roots.iter().any(|r| dir.starts_with(r))
            {
                roots.push(dir.to_path_buf());
            }
        }
    }
    if roots.is_empty() {
        return Err(crate::Error::user_with_help(
            format!(
                "`{}` has no Cargo.toml, nor a folder under it",
                root.display()
            ),
            "run `rsop rbac` at the root of the operator's repository, or pass it with `--dir`",
        ));
    }
    let mut packages = Vec::new();
    for crate_root in roots {
        packages.extend(packages_at(root, &crate_root, crd_kinds)?);
    }
    Ok(packages)
}

/// The packages of the Cargo project in `at` (relative to `root`): its
/// package and its workspace's members; `crd_kinds` are the kinds of the
/// repository's CRD files.
fn packages_at(root: &Path, at: &Path, crd_kinds: &[calls::OwnKind]) -> Result<Vec<Package>> {
    let mut dirs = Vec::new();
    let manifest: Option<toml_edit::DocumentMut> =
        std::fs::read_to_string(root.join(at).join("Cargo.toml"))
            .ok()
            .and_then(|t| t.parse().ok());
    let Some(manifest) = manifest else {
        return Err(crate::Error::user_with_help(
            format!(
                "`{}` is not a Cargo manifest rsop can read",
                root.join(at).join("Cargo.toml").display()
            ),
            "fix its TOML (cargo refuses it too)",
        ));
    };
    if manifest.get("package").is_some() {
        dirs.push(at.to_path_buf());
    }
    dirs.extend(
        source::workspace_members(&root.join(at), &manifest)
            .into_iter()
            .filter_map(|dir| dir.strip_prefix(root).ok().map(Path::to_path_buf)),
    );
    dirs.dedup();
    let mut packages = Vec::new();
    for dir in dirs {
        if let Some(package) = package(root, &dir, crd_kinds)? {
            packages.push(package);
        }
    }
    Ok(packages)
}

/// The package in `dir` (relative to `root`), if it builds a binary.
fn package(root: &Path, dir: &Path, crd_kinds: &[calls::OwnKind]) -> Result<Option<Package>> {
    let at = root.join(dir);
    let (targets, library) = source::targets(&at)?;
    if targets.is_empty() {
        return Ok(None);
    }
    let mut diagnostics = Diagnostics::default();
    let sources = Sources::load(&at, None, Reading::Requests, &mut diagnostics)?;
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
    // The kinds of the repository's CRD files stand for types rsop cannot
    // read; the kinds the sources declare refine them.
    let analysis =
        calls::analyze_when(&with_config, &[], || Some(crd_kinds.to_vec())).unwrap_or_default();
    let refs: Vec<(&Path, &str)> = files.iter().map(|(p, t, _)| (p.as_path(), *t)).collect();
    let crates = files
        .iter()
        .filter_map(|(p, _, c)| Some((p.clone(), c.as_ref()?.dependency.clone()?)))
        .collect();
    let graph = Graph::of_crates(&refs, crates);
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
        let modes = graph.modes_of(&root_file, &files);
        binaries.push(Binary {
            name,
            parsed: !graph.unparsed.iter().any(|(f, _)| *f == root_file),
            root: root_file,
            modes,
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

    /// The requests `binary` makes when run with `words` (every mode's
    /// with `None`), and its calls whose kind is not shown.
    pub fn requests(
        &self,
        binary: &Binary,
        words: Option<&Words>,
    ) -> (Vec<&Call>, Vec<&Unchecked>) {
        let reached = self.graph.reach(binary, words);
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
    /// (`None` for a bare name), the name, and the segments before the
    /// qualifier (`sartd_fib` of `sartd_fib::server::start`): the crate
    /// or modules it starts from.
    paths: HashSet<(Option<String>, String, Vec<String>)>,
    /// `x.f(..)`.
    methods: HashSet<String>,
    /// Names in macro bodies, which are not parsed: any function of that
    /// name.
    loose: HashSet<String>,
    /// The types whose values it builds: `T { .. }`, `T(..)`, `T::new(..)`.
    types: HashSet<String>,
}

/// The words of a container's command line, as a mode is chosen by them:
/// each word, a path's file name, `--flag value` also as `--flag=value`,
/// and the value of each `--flag=value`.
#[derive(Debug, Clone, Default)]
pub struct Words(HashSet<String>);

impl Words {
    pub fn new<'w>(words: impl IntoIterator<Item = &'w String>) -> Words {
        let words: Vec<&String> = words.into_iter().collect();
        let mut out = HashSet::new();
        for (i, word) in words.iter().enumerate() {
            out.insert((*word).clone());
            // `$MODE=agent` of the environment: `$MODE` is set. Its value is
            // no word of the command line (`$CONFIG=/etc/agent`).
            if word.starts_with('$') {
                if let Some((variable, _)) = word.split_once('=') {
                    out.insert(variable.to_string());
                }
                continue;
            }
            if !word.starts_with('-') {
                out.insert(word.rsplit('/').next().unwrap_or(word).to_string());
            }
            if let Some((flag, value)) = word.split_once('=')
                && flag.starts_with('-')
            {
                out.insert(value.to_string());
            } else if word.starts_with("--")
                && let Some(value) = words.get(i + 1).filter(|v| !v.starts_with('-'))
            {
                out.insert(format!("{word}={value}"));
            }
        }
        Words(out)
    }

    pub fn has(&self, word: &str) -> bool {
        self.0.contains(word) || self.undecided(word)
    }

    /// Whether `word` tests the environment for a value it may hold but
    /// does not show: a variable set from elsewhere (`valueFrom`), or any
    /// variable of a container that takes a config map's or secret's whole
    /// (`envFrom`, written `$*`).
    fn undecided(&self, word: &str) -> bool {
        let Some(variable) = word
            .strip_prefix('$')
            .map(|rest| rest.split_once('=').map_or(rest, |(v, _)| v))
        else {
            return false;
        };
        let shown = |w: &String| {
            w.strip_prefix('$')
                .and_then(|rest| rest.split_once('='))
                .is_some_and(|(v, _)| v == variable)
        };
        (self.0.contains(&format!("${variable}")) && !self.0.iter().any(shown))
            || (self.0.contains("$*") && !self.0.iter().any(shown))
    }

    /// The words that choose among `modes`: a mode's own, or another value
    /// of a mode's flag (`--mode=agent` where `--mode=controller` is one).
    pub fn choosing(&self, modes: &BTreeSet<String>) -> Vec<String> {
        let flag = |w: &str| w.split_once('=').map(|(f, _)| f.to_string());
        let flags: HashSet<String> = modes.iter().filter_map(|m| flag(m)).collect();
        let mut chosen: Vec<String> = self
            .0
            .iter()
            .filter(|w| modes.contains(*w) || flag(w).is_some_and(|f| flags.contains(&f)))
            .cloned()
            .collect();
        chosen.sort();
        // `agent` is shown once, as `--mode=agent`.
        let values: HashSet<String> = chosen
            .iter()
            .filter_map(|w| w.split_once('=').map(|(_, v)| v.to_string()))
            .collect();
        chosen.retain(|w| w.contains('=') || !values.contains(w));
        chosen
    }

    /// The words give `--flag=value`'s flag (or `$VAR=value`'s variable)
    /// another value.
    fn rule_out(&self, name: &str) -> bool {
        // A flag, or a variable of the environment the workload sets to
        // another value.
        let Some((flag, value)) = name
            .split_once('=')
            .filter(|(f, _)| f.starts_with("--") || f.starts_with('$'))
        else {
            return false;
        };
        self.0.iter().any(|w| {
            w.split_once('=')
                .is_some_and(|(f, v)| f == flag && v != value)
        })
    }
}

/// A branch of a function that runs in some modes only: an arm of a
/// `match` on a subcommand or a flag's value, or a branch of an `if` on
/// one.
#[derive(Debug, Clone)]
struct Arm {
    /// The words that choose it (`serve`, `--mode=controller`).
    names: Vec<String>,
    /// The words of the other arms of its `match`, which rule it out.
    rivals: Vec<String>,
    /// The `else` of an `if` on `names`: taken unless one of them is passed.
    otherwise: bool,
    /// The words are read from `std::env::args()` itself, so a workload
    /// that does not pass them does not run the branch (a clap field may
    /// have a default, or be read from the environment).
    definitive: bool,
    /// The arm this one is nested in.
    parent: Option<usize>,
    /// Its first and last line.
    lines: (usize, usize),
    refs: Refs,
}

impl Arm {
    /// Whether a program run with `words` may take this branch, its
    /// enclosing ones aside.
    fn taken(&self, words: Option<&Words>) -> bool {
        let Some(words) = words else {
            return true;
        };
        let passed = self.names.iter().any(|n| words.has(n));
        if self.otherwise {
            // A variable that may hold any value may also hold another.
            return !passed || self.names.iter().any(|n| words.undecided(n));
        }
        passed
            || !(self.definitive
                || self.rivals.iter().any(|r| words.has(r))
                || self.names.iter().all(|n| words.rule_out(n)))
    }
}

/// A function of the crate.
#[derive(Debug)]
struct Function {
    file: PathBuf,
    name: String,
    /// The type its `impl` is for.
    owner: Option<String>,
    /// A method of a trait's `impl`: code of another crate may call it
    /// (a server's handler, a tonic service), once the crate builds a
    /// value of its type.
    implements: bool,
    /// A method a trait provides to the types that implement it, called
    /// as `Type::method(..)`.
    provided: bool,
    /// Its type parameters and its `impl`'s: `R::reconcile(..)` calls the
    /// method of whichever type implements the trait.
    generics: HashSet<String>,
    refs: Refs,
    /// Its branches that run in some modes only.
    arms: Vec<Arm>,
}

impl Function {
    /// Whether arm `i` and those it is nested in are taken.
    fn takes(&self, i: usize, words: Option<&Words>) -> bool {
        let arm = &self.arms[i];
        arm.taken(words) && arm.parent.is_none_or(|p| self.takes(p, words))
    }
}

/// The crate's functions and how its programs choose their modes.
#[derive(Debug, Default)]
struct Graph {
    functions: Vec<Function>,
    by_name: HashMap<String, Vec<usize>>,
    /// The functions of each type's `impl`s.
    by_owner: HashMap<String, Vec<usize>>,
    /// Item-position macros of other crates that register functions
    /// (`deno_core::extension!(checks, ops = [op_get])`): the item they
    /// make (`checks`) and the names they are given. Code of that crate may
    /// call the functions once the program uses the item.
    registered: Vec<(String, HashSet<String>)>,
    /// Subcommand enum -> variant -> the name it is run with.
    subcommands: HashMap<String, HashMap<String, String>>,
    /// `ValueEnum` enum -> variant -> the value that chooses it.
    values: HashMap<String, HashMap<String, String>>,
    /// Structs that clap parses a command line into.
    parsers: HashSet<String>,
    /// Files that do not parse, with rustc's complaint: their requests are
    /// not known.
    unparsed: Vec<(PathBuf, String)>,
    /// `use a::run as run_a`: the name a function is also called by ->
    /// its own names.
    aliases: HashMap<String, Vec<String>>,
    /// The files of the dependencies read with the package (path,
    /// registry or git): file -> the name the package's code calls its
    /// crate by.
    crates: HashMap<PathBuf, String>,
    /// Those names, once each.
    crate_names: HashSet<String>,
    /// Each file's `use`s: name -> the path it stands for.
    imports: HashMap<PathBuf, HashMap<String, Vec<String>>>,
    /// The dependency crates each crate's code names (`None`: the
    /// package's own): the only ones whose functions it can call, but
    /// for trait methods a crate that depends on it implements.
    uses: HashMap<Option<String>, HashSet<String>>,
}

/// What a program reaches.
struct Reached {
    functions: HashSet<(PathBuf, String)>,
    /// Lines of arms of other subcommands: (file, first, last).
    excluded: Vec<(PathBuf, usize, usize)>,
}

impl Graph {
    #[cfg(test)]
    fn of(files: &[(&Path, &str)]) -> Graph {
        Graph::of_crates(files, HashMap::new())
    }

    /// The graph of `files`, those of dependencies with their crate's name
    /// in `crates`.
    fn of_crates(files: &[(&Path, &str)], crates: HashMap<PathBuf, String>) -> Graph {
        let crate_names: HashSet<String> = crates.values().cloned().collect();
        let mut uses: HashMap<Option<String>, HashSet<String>> = HashMap::new();
        // The package's own code may name any of them.
        for (path, text) in files.iter().filter(|(path, _)| crates.contains_key(*path)) {
            let named = uses.entry(crates.get(*path).cloned()).or_default();
            named.extend(
                crate_names
                    .iter()
                    .filter(|c| text.contains(&format!("{c}::")))
                    .cloned(),
            );
        }
        let mut graph = Graph {
            crates,
            crate_names,
            uses,
            ..Graph::default()
        };
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
        // The crate's `macro_rules!` bodies are read where they are invoked.
        let macros = calls::macros::collect(parsed.iter().map(|(_, f)| f));
        for (_, file) in &mut parsed {
            calls::macros::expand(&macros, file);
        }
        let mut argh = Argh::default();
        for (path, file) in &parsed {
            graph.collect_subcommands(file);
            argh.collect(path, file);
            graph.collect_aliases(file);
            graph
                .imports
                .insert(path.to_path_buf(), calls::imports(file));
        }
        argh.resolve(&mut graph.subcommands);
        for (path, file) in &parsed {
            let mut collector = Collector {
                graph: &mut graph,
                file: path,
                owner: None,
                implements: false,
                in_trait: false,
                impl_generics: Vec::new(),
            };
            collector.visit_file(file);
        }
        for (i, f) in graph.functions.iter().enumerate() {
            graph.by_name.entry(f.name.clone()).or_default().push(i);
            if let Some(owner) = &f.owner {
                graph.by_owner.entry(owner.clone()).or_default().push(i);
            }
        }
        graph
    }

    /// Enums that derive clap's `Subcommand` or `ValueEnum`, with each
    /// variant's name on the command line (kebab-case, or
    /// `#[command(name = "..")]`, `#[value(name = "..")]`), and the structs
    /// clap parses.
    fn collect_subcommands(&mut self, file: &syn::File) {
        fn derives(attrs: &[syn::Attribute], names: &[&str]) -> bool {
            attrs.iter().any(|a| {
                a.path().is_ident("derive")
                    && quote::ToTokens::to_token_stream(&a.meta)
                        .to_string()
                        .split(|c: char| !c.is_alphanumeric() && c != '_')
                        .any(|w| names.contains(&w))
            })
        }
        struct Items<'g>(&'g mut Graph);
        impl<'ast> Visit<'ast> for Items<'_> {
            fn visit_item_enum(&mut self, item: &'ast syn::ItemEnum) {
                let subcommand = derives(&item.attrs, &["Subcommand", "StructOpt"]);
                let value = derives(&item.attrs, &["ValueEnum", "ArgEnum"]);
                if subcommand || value {
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
                    let map = if value {
                        &mut self.0.values
                    } else {
                        &mut self.0.subcommands
                    };
                    map.insert(item.ident.to_string(), variants);
                }
                syn::visit::visit_item_enum(self, item);
            }
            fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
                if derives(&item.attrs, &["Parser", "Args", "StructOpt", "Clap"]) {
                    self.0.parsers.insert(item.ident.to_string());
                }
            }
        }
        Items(self).visit_file(file);
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

    /// The words that choose the modes a binary's `main` reaches.
    fn modes_of(&self, root: &Path, files: &HashSet<PathBuf>) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let reached = self.reach_from(root, files, None);
        for f in &self.functions {
            if reached.contains(&(f.file.clone(), f.name.clone())) {
                out.extend(f.arms.iter().flat_map(|a| a.names.iter().cloned()));
            }
        }
        out
    }

    fn reach(&self, binary: &Binary, words: Option<&Words>) -> Reached {
        let functions = self.reach_from(&binary.root, &binary.files, words);
        let mut excluded = Vec::new();
        for f in &self.functions {
            if functions.contains(&(f.file.clone(), f.name.clone())) {
                for (i, arm) in f.arms.iter().enumerate() {
                    if !f.takes(i, words) {
                        excluded.push((f.file.clone(), arm.lines.0, arm.lines.1));
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
        words: Option<&Words>,
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
            for (i, arm) in f.arms.iter().enumerate() {
                if f.takes(i, words) {
                    refs.push(&arm.refs);
                }
            }
            // The functions a registration macro names, once the program
            // uses the item it makes (`checks::init_ops()`).
            for (handle, names) in &self.registered {
                let used = refs.iter().any(|r| {
                    r.paths
                        .iter()
                        .any(|(q, n, _)| q.as_deref() == Some(handle.as_str()) || n == handle)
                        || r.loose.contains(handle)
                        || r.types.contains(handle)
                });
                if used {
                    queue.extend(self.functions.iter().enumerate().filter_map(|(i, g)| {
                        (names.contains(&g.name)
                            && g.owner.is_none()
                            && files.contains(&g.file)
                            && !seen.contains(&i))
                        .then_some(i)
                    }));
                }
            }
            for r in refs {
                for target in self.targets(f, r, files) {
                    if !seen.contains(&target) {
                        queue.push(target);
                    }
                }
                // The trait methods of the values it builds, which another
                // crate's code may call.
                for ty in &r.types {
                    queue.extend(self.by_owner.get(ty).into_iter().flatten().copied().filter(
                        |&t| {
                            self.functions[t].implements
                                && files.contains(&self.functions[t].file)
                                && !seen.contains(&t)
                        },
                    ));
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

    /// `name` and what it stands for where a `use .. as` gave it.
    fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> {
        std::iter::once(name).chain(
            self.aliases
                .get(name)
                .into_iter()
                .flatten()
                .map(String::as_str),
        )
    }

    /// The functions `refs`, written in `from`, may name.
    fn targets(&self, from: &Function, refs: &Refs, files: &HashSet<PathBuf>) -> Vec<usize> {
        let mut out = Vec::new();
        let crate_of = |file: &Path| self.crates.get(file).map(String::as_str);
        // A function of a crate the caller's does not name is out of its
        // reach by name (bgp's `client.export_peer_state(..)` is none of
        // the kubernetes crate's methods); a trait method that crate
        // implements runs once a value of its type is built (see
        // `Refs::types`).
        let from_crate = crate_of(&from.file);
        let reachable = |f: &Function| {
            let to = crate_of(&f.file);
            to == from_crate
                || from_crate.is_none()
                || to.is_some_and(|to| {
                    self.uses
                        .get(&from_crate.map(str::to_string))
                        .is_some_and(|u| u.contains(to))
                })
        };
        let visible =
            |i: &usize| files.contains(&self.functions[*i].file) && reachable(&self.functions[*i]);
        let imports = self.imports.get(&from.file);
        for (qualifier, name, head) in &refs.paths {
            // The crate the path names: by its first segment, or the
            // first of what a `use` gave it (`use sartd_bgp::server;` then
            // `server::start(..)`); the calling function's own when the
            // path starts in it.
            let first = head.first().or(qualifier.as_ref()).unwrap_or(name);
            let first = imports
                .and_then(|i| i.get(first))
                .and_then(|path| path.first())
                .unwrap_or(first);
            // The modules the path names, from its crate's root
            // (`agent::server` of `sartd_kubernetes::agent::server::start`).
            let modules: Vec<String> = match qualifier {
                Some(q) if !q.starts_with(|c: char| c.is_ascii_uppercase()) => {
                    let mut path: Vec<String> = head.clone();
                    path.push(q.clone());
                    if let Some(full) = imports.and_then(|i| i.get(&path[0])) {
                        path.splice(..1, full.iter().cloned());
                    }
                    path.into_iter()
                        .skip_while(|s| {
                            matches!(s.as_str(), "crate" | "self" | "super")
                                || self.crate_names.contains(s)
                        })
                        .collect()
                }
                _ => Vec::new(),
            };
            let named_crate = if self.crate_names.contains(first) {
                Some(Some(first.as_str()))
            } else if matches!(first.as_str(), "crate" | "self" | "super") {
                Some(crate_of(&from.file))
            } else {
                None
            };
            // A name a `use .. as` gave stands for the function it renames.
            let names = self.named(name);
            // `R::reconcile` in a generic function of a crate the package
            // depends on may run the package's own implementation.
            let generic = qualifier
                .as_ref()
                .is_some_and(|q| from.generics.contains(q));
            let candidates: Vec<usize> = names
                .filter_map(|n| self.by_name.get(n))
                .flatten()
                .copied()
                .filter(|i| {
                    if generic {
                        files.contains(&self.functions[*i].file)
                    } else {
                        visible(i)
                    }
                })
                .collect();
            if candidates.is_empty() {
                continue;
            }
            let chosen: Vec<usize> = match qualifier.as_deref() {
                // `Self::upsert(..)` in a trait's provided method: the
                // method of each type that implements a trait.
                Some("Self") if from.provided => candidates
                    .iter()
                    .copied()
                    .filter(|&i| self.functions[i].implements || self.functions[i].provided)
                    .collect(),
                Some("Self") => candidates
                    .iter()
                    .copied()
                    .filter(|&i| self.functions[i].owner == from.owner)
                    .collect(),
                // `R::reconcile(..)` in `fn run<R: Reconciler>`: each
                // implementation's method.
                Some(q) if from.generics.contains(q) => candidates
                    .iter()
                    .copied()
                    .filter(|&i| self.functions[i].implements || self.functions[i].provided)
                    .collect(),
                Some(q) => {
                    // `AuthentikManager::new` after `pub use
                    // authentik::Manager as AuthentikManager`.
                    let qualifiers: Vec<&str> = self.named(q).collect();
                    let by_qualifier: Vec<usize> = candidates
                        .iter()
                        .copied()
                        .filter(|&i| {
                            let f = &self.functions[i];
                            qualifiers.iter().any(|q| {
                                f.owner.as_deref() == Some(*q) || module_name(&f.file) == Some(*q)
                            })
                        })
                        .collect();
                    // `PatchParams::apply` names a type of another crate
                    // when no function of the crate's types matches; a
                    // module the files do not show by name may still be
                    // the crate's.
                    if !by_qualifier.is_empty() {
                        by_qualifier
                    } else if q.starts_with(|c: char| c.is_ascii_uppercase()) {
                        // `Job::controller(..)`: a method a trait of the
                        // crate provides to the type.
                        candidates
                            .iter()
                            .copied()
                            .filter(|&i| self.functions[i].provided)
                            .collect()
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
            // In the modules the path names, when it names more than one
            // (`agent::server::start`, not `controller::server::start`).
            let chosen: Vec<usize> = if modules.len() > 1 {
                let within: Vec<usize> = chosen
                    .iter()
                    .copied()
                    .filter(|&i| calls::module_path(&self.functions[i].file).ends_with(&modules))
                    .collect();
                if within.is_empty() { chosen } else { within }
            } else {
                chosen
            };
            // Of the crate the path names (a crate with no function of the
            // name re-exports another's: `pub use vynil_core::k8s as
            // k8sworkload`); else, where the package reads crates of the
            // same module names (`server::start` in each), of the caller's
            // crate when it has one.
            let wanted = named_crate.unwrap_or_else(|| crate_of(&from.file));
            let of_wanted: Vec<usize> = chosen
                .iter()
                .copied()
                .filter(|&i| crate_of(&self.functions[i].file) == wanted)
                .collect();
            let chosen = if of_wanted.is_empty() {
                chosen
            } else {
                of_wanted
            };
            out.extend(chosen);
        }
        // `x.run()` calls a method: a function of an `impl` or a trait,
        // never a free function of the name (`warp::serve(api).run(..)` is
        // not the crate's `controller::run`). A name in a macro body may be
        // either.
        let methods = refs.methods.iter().map(|name| (name, true));
        for (name, method) in methods.chain(refs.loose.iter().map(|name| (name, false))) {
            // A name a `use .. as` gave stands for the function it renames.
            let names = self.named(name);
            for name in names {
                if let Some(candidates) = self.by_name.get(name) {
                    out.extend(
                        candidates
                            .iter()
                            .copied()
                            .filter(|&i| {
                                let f = &self.functions[i];
                                !method || f.owner.is_some() || f.provided || f.implements
                            })
                            .filter(visible),
                    );
                }
            }
        }
        out
    }
}

/// argh's subcommands: an enum that derives `FromArgs` with
/// `#[argh(subcommand)]`, each variant wrapping a struct named on the
/// command line by its own `#[argh(subcommand, name = "..")]`.
#[derive(Default)]
struct Argh {
    /// (module, struct) -> the name it is run with.
    names: HashMap<(String, String), String>,
    /// Each enum, its variants, and the enum's own module.
    enums: Vec<(String, Vec<Variant>, String)>,
}

/// A variant of an argh subcommand enum: its name, and the module (if its
/// path names one) and name of the struct it wraps.
type Variant = (String, Option<String>, String);

impl Argh {
    fn collect(&mut self, path: &Path, file: &syn::File) {
        fn argh(attrs: &[syn::Attribute]) -> Option<(bool, Option<String>)> {
            let mut found = None;
            for attr in attrs.iter().filter(|a| a.path().is_ident("argh")) {
                let mut subcommand = false;
                let mut name = None;
                let _ = attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("subcommand") {
                        subcommand = true;
                    } else if meta.path.is_ident("name") {
                        name = Some(meta.value()?.parse::<syn::LitStr>()?.value());
                    } else if meta.input.peek(syn::Token![=]) {
                        let _: syn::Expr = meta.value()?.parse()?;
                    }
                    Ok(())
                });
                if subcommand {
                    found = Some((true, name.or(found.and_then(|(_, n)| n))));
                }
            }
            found
        }
        struct Items<'a> {
            argh: &'a mut Argh,
            module: String,
        }
        impl<'ast> Visit<'ast> for Items<'_> {
            fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
                if let Some((_, Some(name))) = argh(&item.attrs) {
                    self.argh
                        .names
                        .insert((self.module.clone(), item.ident.to_string()), name);
                }
            }
            fn visit_item_enum(&mut self, item: &'ast syn::ItemEnum) {
                if argh(&item.attrs).is_none() {
                    return;
                }
                let variants = item
                    .variants
                    .iter()
                    .filter_map(|v| {
                        let syn::Fields::Unnamed(fields) = &v.fields else {
                            return None;
                        };
                        let syn::Type::Path(ty) = &fields.unnamed.first()?.ty else {
                            return None;
                        };
                        let segments: Vec<String> = ty
                            .path
                            .segments
                            .iter()
                            .map(|s| s.ident.to_string())
                            .collect();
                        let (name, module) = match segments.as_slice() {
                            [.., module, name] => (name.clone(), Some(module.clone())),
                            [name] => (name.clone(), None),
                            [] => return None,
                        };
                        Some((v.ident.to_string(), module, name))
                    })
                    .collect();
                self.argh
                    .enums
                    .push((item.ident.to_string(), variants, self.module.clone()));
            }
        }
        let module = module_name(path).unwrap_or_default().to_string();
        Items { argh: self, module }.visit_file(file);
    }

    /// The enums' variants by the names they are run with.
    fn resolve(self, subcommands: &mut HashMap<String, HashMap<String, String>>) {
        for (name, variants, module) in self.enums {
            let resolved = variants
                .into_iter()
                .filter_map(|(variant, of, ty)| {
                    let of = of.unwrap_or_else(|| module.clone());
                    let named = self.names.get(&(of, ty.clone())).or_else(|| {
                        let mut same = self.names.iter().filter(|((_, t), _)| *t == ty);
                        match (same.next(), same.next()) {
                            (Some((_, only)), None) => Some(only),
                            _ => None,
                        }
                    })?;
                    Some((variant, named.clone()))
                })
                .collect();
            subcommands.insert(name, resolved);
        }
    }
}

/// The identifiers in `tokens`, at any depth.
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

/// The module a file is: its stem, or its folder's name for `mod.rs`.
fn module_name(file: &Path) -> Option<&str> {
    let stem = file.file_stem()?.to_str()?;
    if stem == "mod" {
        file.parent()?.file_name()?.to_str()
    } else {
        Some(stem)
    }
}

/// `#[command(name = "x")]`, `#[clap(name = "x")]` or `#[value(name = "x")]`.
fn command_name(attrs: &[syn::Attribute]) -> Option<String> {
    let mut found = None;
    for attr in attrs {
        if ["command", "clap", "value", "arg_enum"]
            .iter()
            .any(|name| attr.path().is_ident(name))
        {
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

/// The names a pattern binds.
struct Locals(HashSet<String>);

impl<'ast> Visit<'ast> for Locals {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        self.0.insert(p.ident.to_string());
        syn::visit::visit_pat_ident(self, p);
    }
}

/// Collects the functions of one file.
struct Collector<'g> {
    graph: &'g mut Graph,
    file: &'g Path,
    owner: Option<String>,
    /// The `impl` being read is of a trait.
    implements: bool,
    /// A trait's body is being read: its methods with a body are provided
    /// to every type that implements it.
    in_trait: bool,
    /// The type parameters of the `impl` being read.
    impl_generics: Vec<String>,
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        let outer = (self.owner.take(), self.implements);
        if let syn::Type::Path(p) = &*item.self_ty {
            self.owner = p.path.segments.last().map(|s| s.ident.to_string());
        }
        self.implements = item.trait_.is_some();
        let outer_generics = std::mem::replace(
            &mut self.impl_generics,
            calls::type_param_names(&item.generics),
        );
        syn::visit::visit_item_impl(self, item);
        (self.owner, self.implements) = outer;
        self.impl_generics = outer_generics;
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.function(&f.sig, &f.block, None);
    }
    fn visit_item_macro(&mut self, item: &'ast syn::ItemMacro) {
        if item.ident.is_none()
            && let Some(proc_macro2::TokenTree::Ident(handle)) =
                item.mac.tokens.clone().into_iter().next()
        {
            let mut names = HashSet::new();
            idents(item.mac.tokens.clone(), &mut names);
            self.graph.registered.push((handle.to_string(), names));
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let owner = self.owner.clone();
        self.function(&f.sig, &f.block, owner);
    }
    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        let outer = std::mem::replace(&mut self.in_trait, true);
        syn::visit::visit_item_trait(self, item);
        self.in_trait = outer;
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.function(&f.sig, block, None);
        }
    }
}

impl Collector<'_> {
    fn function(&mut self, sig: &syn::Signature, block: &syn::Block, owner: Option<String>) {
        let mut refs = RefsVisitor::new(self.graph, sig);
        refs.visit_block(block);
        let generics = calls::type_param_names(&sig.generics)
            .into_iter()
            .chain(self.impl_generics.iter().cloned())
            .collect();
        self.graph.functions.push(Function {
            file: self.file.to_path_buf(),
            name: sig.ident.to_string(),
            generics,
            implements: self.implements && owner.is_some(),
            provided: self.in_trait && owner.is_none(),
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

/// Where a value comes from on the command line.
#[derive(Debug, Clone)]
struct Source {
    /// The flag it is the value of (`--mode`), if a clap field shows it.
    flag: Option<String>,
    /// Read from `std::env::args()` itself (see [`Arm::definitive`]).
    definitive: bool,
}

/// The names a function body refers to, and its branches that run in some
/// modes only.
struct RefsVisitor<'g> {
    refs: Refs,
    arms: Vec<Arm>,
    /// The arm being visited.
    arm: Option<usize>,
    graph: &'g Graph,
    /// Local values read from the command line.
    command_line: HashMap<String, Source>,
    /// Local `bool`s that test the command line (`let is_controller =
    /// node_id == "controller"`): the words and whether they are definitive,
    /// as [`RefsVisitor::condition`] gives them.
    tests: HashMap<String, (Vec<String>, bool)>,
    /// The function's parameters and the names it binds: `start` in
    /// `u32::from(start)` is a value, not the function `start`.
    locals: HashSet<String>,
}

impl<'g> RefsVisitor<'g> {
    fn new(graph: &'g Graph, sig: &syn::Signature) -> Self {
        // A parameter of a type clap parses is the command line.
        let command_line = sig
            .inputs
            .iter()
            .filter_map(|arg| match arg {
                syn::FnArg::Typed(t) => Some(t),
                syn::FnArg::Receiver(_) => None,
            })
            .filter(|t| {
                quote::ToTokens::to_token_stream(&t.ty)
                    .into_iter()
                    .any(|tree| matches!(tree, proc_macro2::TokenTree::Ident(i) if graph.parsers.contains(&i.to_string())))
            })
            .filter_map(|t| match &*t.pat {
                syn::Pat::Ident(p) => Some((
                    p.ident.to_string(),
                    Source {
                        flag: None,
                        definitive: false,
                    },
                )),
                _ => None,
            })
            .collect();
        let mut locals = Locals(HashSet::new());
        for input in &sig.inputs {
            if let syn::FnArg::Typed(t) = input {
                locals.visit_pat(&t.pat);
            }
        }
        RefsVisitor {
            refs: Refs::default(),
            arms: Vec::new(),
            arm: None,
            graph,
            command_line,
            tests: HashMap::new(),
            locals: locals.0,
        }
    }

    fn path(&mut self, path: &syn::Path) {
        let segments: Vec<&syn::PathSegment> = path.segments.iter().collect();
        if let [.., last] = segments.as_slice() {
            let qualifier = segments
                .len()
                .checked_sub(2)
                .map(|i| segments[i].ident.to_string());
            // `T::new(..)`, a unit struct `T`, a tuple struct's `T(..)`.
            let upper = |s: &str| s.starts_with(|c: char| c.is_ascii_uppercase());
            let name = last.ident.to_string();
            match &qualifier {
                Some(q) if upper(q) && q != "Self" => {
                    self.refs.types.insert(q.clone());
                }
                _ if upper(&name) => {
                    self.refs.types.insert(name.clone());
                }
                _ => {}
            }
            let head = segments[..segments.len().saturating_sub(2)]
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            self.refs.paths.insert((qualifier, name, head));
        }
    }

    /// The value of a variant of a `Subcommand` (`None`) or `ValueEnum`
    /// (`Some(true)`) enum that `path` names.
    fn variant(&self, path: &syn::Path) -> Option<(String, bool)> {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let find = |maps: &HashMap<String, HashMap<String, String>>| match segments.as_slice() {
            [.., enum_name, variant] => maps.get(enum_name)?.get(variant).cloned(),
            [variant] => maps
                .values()
                .find_map(|variants| variants.get(variant).cloned()),
            [] => None,
        };
        find(&self.graph.subcommands)
            .map(|name| (name, false))
            .or_else(|| find(&self.graph.values).map(|value| (value, true)))
    }

    /// The words a pattern matches: a subcommand's name, a value enum's
    /// value, or, where `source` reads the command line, string literals.
    fn pattern_names(&self, pat: &syn::Pat, source: Option<&Source>) -> Vec<String> {
        let word = |value: String, of_flag: bool| match source.and_then(|s| s.flag.as_ref()) {
            Some(flag) if of_flag && !value.starts_with('-') => format!("{flag}={value}"),
            _ => value,
        };
        match pat {
            syn::Pat::Or(or) => or
                .cases
                .iter()
                .flat_map(|p| self.pattern_names(p, source))
                .collect(),
            syn::Pat::Ident(p) => p
                .subpat
                .as_ref()
                .map(|(_, s)| self.pattern_names(s, source))
                .unwrap_or_default(),
            syn::Pat::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) if source.is_some() => vec![word(s.value(), true)],
            syn::Pat::TupleStruct(t) if t.path.is_ident("Some") && t.elems.len() == 1 => {
                self.pattern_names(&t.elems[0], source)
            }
            syn::Pat::Path(syn::PatPath { path, .. })
            | syn::Pat::TupleStruct(syn::PatTupleStruct { path, .. })
            | syn::Pat::Struct(syn::PatStruct { path, .. }) => self
                .variant(path)
                .map(|(value, of_flag)| vec![word(value, of_flag)])
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// Where `expr` reads the command line: a value of `std::env::args()`,
    /// of a struct clap parses, or a field of one (the flag's value).
    fn source(&self, expr: &syn::Expr) -> Option<Source> {
        let mut flag = None;
        // Built by clap's builder: `Command::new(..).arg(..).get_matches()`.
        let mut parsed = false;
        let mut at = expr;
        loop {
            at = match at {
                syn::Expr::MethodCall(m) => {
                    let method = m.method.to_string();
                    // `matches.get_one::<String>("node-id")`: the flag's value.
                    if flag.is_none()
                        && CLAP_ACCESSORS.contains(&method.as_str())
                        && let Some(Compared::Literal(id)) = m.args.first().and_then(compared)
                    {
                        flag = Some(format!("--{id}"));
                    }
                    parsed |=
                        method.starts_with("get_matches") || method.starts_with("try_get_matches");
                    &m.receiver
                }
                syn::Expr::Field(f) => {
                    if flag.is_none()
                        && let syn::Member::Named(name) = &f.member
                    {
                        flag = Some(format!(
                            "--{}",
                            heck::ToKebabCase::to_kebab_case(name.to_string().as_str())
                        ));
                    }
                    &f.base
                }
                syn::Expr::Reference(r) => &r.expr,
                syn::Expr::Paren(p) => &p.expr,
                syn::Expr::Try(t) => &t.expr,
                syn::Expr::Index(i) => &i.expr,
                syn::Expr::Path(p) => {
                    let found = self.command_line.get(&p.path.get_ident()?.to_string())?;
                    return Some(Source {
                        flag: flag.or_else(|| found.flag.clone()),
                        definitive: found.definitive,
                    });
                }
                syn::Expr::Call(c) => {
                    let syn::Expr::Path(func) = &*c.func else {
                        return None;
                    };
                    let segments: Vec<String> = func
                        .path
                        .segments
                        .iter()
                        .map(|s| s.ident.to_string())
                        .collect();
                    // `env::var("MODE")`: the container's environment, unset
                    // unless the workload sets it.
                    if matches!(segments.last().map(String::as_str), Some("var" | "var_os"))
                        && (segments.len() == 1 || segments[segments.len() - 2] == "env")
                        && let Some(Compared::Literal(name)) = c.args.first().and_then(compared)
                    {
                        return Some(Source {
                            flag: Some(format!("${name}")),
                            definitive: true,
                        });
                    }
                    return match segments.as_slice() {
                        [.., last] if last == "args" || last == "args_os" => Some(Source {
                            flag: None,
                            definitive: flag.is_none(),
                        }),
                        [.., parser, _] if self.graph.parsers.contains(parser) => Some(Source {
                            flag,
                            definitive: false,
                        }),
                        [.., builder, new]
                            if parsed
                                && new == "new"
                                && (builder == "Command" || builder == "App") =>
                        {
                            Some(Source {
                                flag,
                                definitive: false,
                            })
                        }
                        _ => None,
                    };
                }
                _ => return None,
            };
        }
    }

    /// The words an `if` condition tests the command line for, and whether
    /// it reads them from `std::env::args()` itself.
    fn condition(&self, cond: &syn::Expr) -> Option<(Vec<String>, bool)> {
        let word = |value: String, source: &Source| match &source.flag {
            Some(flag) if !value.starts_with('-') => format!("{flag}={value}"),
            _ => value,
        };
        match cond {
            syn::Expr::Paren(p) => self.condition(&p.expr),
            syn::Expr::Path(p) => self.tests.get(&p.path.get_ident()?.to_string()).cloned(),
            // `matches!(node_id.as_str(), "controller" | "both")`.
            syn::Expr::Macro(m) if m.mac.path.is_ident("matches") => {
                let (scrutinee, pat) = m
                    .mac
                    .parse_body_with(|input: syn::parse::ParseStream<'_>| {
                        let scrutinee: syn::Expr = input.parse()?;
                        input.parse::<syn::Token![,]>()?;
                        let pat = syn::Pat::parse_multi_with_leading_vert(input)?;
                        input.parse::<proc_macro2::TokenStream>()?;
                        Ok((scrutinee, pat))
                    })
                    .ok()?;
                let source = self.source(&scrutinee)?;
                let names = self.pattern_names(&pat, Some(&source));
                (!names.is_empty()).then_some((names, source.definitive))
            }
            // `if cli.install_crd { .. }`: a clap switch is off unless the
            // workload passes it.
            syn::Expr::Field(_) => {
                let flag = self.source(cond)?.flag?;
                Some((vec![flag], true))
            }
            syn::Expr::Binary(b) if matches!(b.op, syn::BinOp::Or(_)) => {
                let (mut left, a) = self.condition(&b.left)?;
                let (right, b) = self.condition(&b.right)?;
                left.extend(right);
                Some((left, a && b))
            }
            syn::Expr::Binary(b) if matches!(b.op, syn::BinOp::Eq(_)) => {
                let (value, other) = match (compared(&b.left), compared(&b.right)) {
                    (Some(v), None) => (v, &*b.right),
                    (None, Some(v)) => (v, &*b.left),
                    _ => return None,
                };
                let source = self.source(other)?;
                let value = match value {
                    Compared::Literal(s) => s,
                    Compared::Path(path) => self.variant(&path)?.0,
                };
                // `env::var("MODE").unwrap_or("controller".into()) ==
                // "controller"`: taken where the workload leaves it unset.
                let definitive = source.definitive && !env_defaults(other).contains(&value);
                Some((vec![word(value, &source)], definitive))
            }
            syn::Expr::Let(l) => {
                let source = self.source(&l.expr)?;
                let names = self.pattern_names(&l.pat, Some(&source));
                (!names.is_empty()).then_some((names, source.definitive))
            }
            // `args.iter().any(|a| a == "--controller")`,
            // `args.contains(&"--controller".to_string())`.
            syn::Expr::MethodCall(m) => {
                let source = self.source(&m.receiver)?;
                // `env::var("K8S_MODE").is_ok()`, and `env::var("K8S_MODE")
                // .unwrap_or_default().parse::<bool>().unwrap_or(false)`.
                if let Some(variable) = source.flag.as_ref().filter(|f| f.starts_with('$')) {
                    let method = m.method.to_string();
                    if matches!(method.as_str(), "is_ok" | "is_some") {
                        return Some((vec![variable.clone()], true));
                    }
                    if parses_bool(cond) {
                        // Unset, the default decides (`.unwrap_or(true)`).
                        let defaults = env_defaults(cond);
                        let definitive = !defaults.iter().any(|d| d == "true");
                        return Some((vec![format!("{variable}=true")], definitive));
                    }
                }
                let mut names = Vec::new();
                match (m.method.to_string().as_str(), m.args.first()) {
                    ("any", Some(syn::Expr::Closure(c))) => {
                        struct Literals<'n>(&'n mut Vec<String>);
                        impl<'ast> Visit<'ast> for Literals<'_> {
                            fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
                                if matches!(b.op, syn::BinOp::Eq(_))
                                    && let Some(Compared::Literal(s)) =
                                        compared(&b.left).or_else(|| compared(&b.right))
                                {
                                    self.0.push(s);
                                }
                                syn::visit::visit_expr_binary(self, b);
                            }
                        }
                        Literals(&mut names).visit_expr(&c.body);
                    }
                    ("contains", Some(arg)) => {
                        if let Some(Compared::Literal(s)) = compared(arg) {
                            names.push(s);
                        }
                    }
                    _ => {}
                }
                let names: Vec<String> = names.into_iter().map(|n| word(n, &source)).collect();
                (!names.is_empty()).then_some((names, source.definitive))
            }
            _ => None,
        }
    }

    /// Visits `node` as a branch that runs in the modes `names` choose.
    fn arm(
        &mut self,
        names: Vec<String>,
        rivals: Vec<String>,
        otherwise: bool,
        definitive: bool,
        span: proc_macro2::Span,
        visit: impl FnOnce(&mut Self),
    ) {
        let index = self.arms.len();
        self.arms.push(Arm {
            names,
            rivals,
            otherwise,
            definitive,
            parent: self.arm,
            lines: (span.start().line, span.end().line),
            refs: Refs::default(),
        });
        let outer_refs = std::mem::take(&mut self.refs);
        let outer_arm = self.arm.replace(index);
        visit(self);
        self.arm = outer_arm;
        self.arms[index].refs = std::mem::replace(&mut self.refs, outer_refs);
    }
}

/// The defaults a chain of method calls gives a value it reads
/// (`.unwrap_or("controller".into())`, `.unwrap_or_else(|_| "false".into())`,
/// `.unwrap_or(true)`), as text.
fn env_defaults(expr: &syn::Expr) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = expr;
    while let syn::Expr::MethodCall(m) = at {
        if matches!(
            m.method.to_string().as_str(),
            "unwrap_or" | "unwrap_or_else" | "or" | "or_else" | "map_or"
        ) && let Some(arg) = m.args.first()
        {
            let value = match arg {
                syn::Expr::Closure(c) => &*c.body,
                other => other,
            };
            match value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Bool(b),
                    ..
                }) => out.push(b.value.to_string()),
                other => {
                    if let Some(Compared::Literal(s)) = compared(other) {
                        out.push(s);
                    }
                }
            }
        }
        at = &m.receiver;
    }
    out
}

/// Whether `expr` reads a `bool` by `parse::<bool>()` somewhere down its
/// chain of method calls.
fn parses_bool(expr: &syn::Expr) -> bool {
    let mut at = expr;
    while let syn::Expr::MethodCall(m) = at {
        if m.method == "parse"
            && m.turbofish.as_ref().is_some_and(|t| {
                matches!(t.args.first(), Some(syn::GenericArgument::Type(syn::Type::Path(p))) if p.path.is_ident("bool"))
            })
        {
            return true;
        }
        at = &m.receiver;
    }
    false
}

/// The methods of clap's `ArgMatches` that read an argument by its id
/// (old and new releases).
const CLAP_ACCESSORS: &[&str] = &[
    "get_one",
    "get_many",
    "get_flag",
    "get_raw",
    "contains_id",
    "value_of",
    "values_of",
    "is_present",
];

/// A value a condition compares with: a string literal or a path.
enum Compared {
    Literal(String),
    Path(syn::Path),
}

fn compared(expr: &syn::Expr) -> Option<Compared> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(Compared::Literal(s.value())),
        syn::Expr::Path(p) if p.path.segments.len() > 1 => Some(Compared::Path(p.path.clone())),
        syn::Expr::Reference(r) => compared(&r.expr),
        syn::Expr::Paren(p) => compared(&p.expr),
        // `"x".to_string()`, `String::from("x")`, `Some("x")`.
        syn::Expr::MethodCall(m) if m.args.is_empty() => compared(&m.receiver),
        // Not `env::var("ROLE")`, which reads a value.
        syn::Expr::Call(c)
            if c.args.len() == 1
                && matches!(&*c.func, syn::Expr::Path(p)
                    if p.path.segments.last().is_some_and(|s| matches!(s.ident.to_string().as_str(), "from" | "Some" | "Ok" | "new"))) =>
        {
            compared(&c.args[0])
        }
        _ => None,
    }
}

impl<'ast> Visit<'ast> for RefsVisitor<'_> {
    fn visit_expr_path(&mut self, e: &'ast syn::ExprPath) {
        let local = e
            .path
            .get_ident()
            .is_some_and(|name| self.locals.contains(&name.to_string()));
        if !local {
            self.path(&e.path);
        }
        syn::visit::visit_expr_path(self, e);
    }
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        // `let app = app(state)`: the callee is the function, though a
        // binding of its name is in scope.
        if let syn::Expr::Path(f) = &*call.func {
            self.path(&f.path);
            for arg in &call.args {
                self.visit_expr(arg);
            }
            return;
        }
        syn::visit::visit_expr_call(self, call);
    }
    fn visit_pat(&mut self, pat: &'ast syn::Pat) {
        // `let start = ..`, `|start| ..`, `for start in ..`, a match arm's
        // `Some(start)`.
        let mut locals = Locals(HashSet::new());
        locals.visit_pat(pat);
        self.locals.extend(locals.0);
        syn::visit::visit_pat(self, pat);
    }
    fn visit_expr_struct(&mut self, e: &'ast syn::ExprStruct) {
        if let Some(last) = e.path.segments.last()
            && last.ident != "Self"
        {
            self.refs.types.insert(last.ident.to_string());
        }
        syn::visit::visit_expr_struct(self, e);
    }
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        self.refs.methods.insert(call.method.to_string());
        syn::visit::visit_expr_method_call(self, call);
    }
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        idents(mac.tokens.clone(), &mut self.refs.loose);
    }
    fn visit_local(&mut self, local: &'ast syn::Local) {
        // `let cli = Cli::parse();`, `let args: Vec<String> = env::args().collect();`,
        // `let mode = cli.mode;`
        let mut pat = &local.pat;
        if let syn::Pat::Type(t) = pat {
            pat = &t.pat;
        }
        if let syn::Pat::Ident(p) = pat
            && let Some(init) = &local.init
        {
            // `let k8s_mode = env::var(..)..parse::<bool>()..`: a test.
            let parsed_bool = parses_bool(&init.expr);
            if let Some(source) = self.source(&init.expr).filter(|_| !parsed_bool) {
                self.command_line.insert(p.ident.to_string(), source);
            } else if let Some(test) = self.condition(&init.expr) {
                self.tests.insert(p.ident.to_string(), test);
            }
        }
        syn::visit::visit_local(self, local);
    }
    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        // `match std::env::args().nth(1).as_deref() { Some("serve") => .. }`
        // dispatches on a subcommand by hand; `match cli.mode { Mode::Agent
        // => .. }` on a flag's value. The older test, any scrutinee that
        // names `args`, stays for values the bindings do not trace.
        let source = self.source(&m.expr).or_else(|| {
            quote::ToTokens::to_token_stream(&m.expr)
                .to_string()
                .contains("args")
                .then_some(Source {
                    flag: None,
                    definitive: false,
                })
        });
        let names: Vec<Vec<String>> = m
            .arms
            .iter()
            .map(|a| self.pattern_names(&a.pat, source.as_ref()))
            .collect();
        if names.iter().all(Vec::is_empty) {
            syn::visit::visit_expr_match(self, m);
            return;
        }
        // Only a literal read from `std::env::args()` rules out an arm by
        // its absence.
        let definitive = source.as_ref().is_some_and(|s| s.definitive)
            && m.arms.iter().all(|a| {
                !matches!(&a.pat, syn::Pat::Path(_) | syn::Pat::Struct(_))
                    && !matches!(&a.pat, syn::Pat::TupleStruct(t) if !t.path.is_ident("Some"))
            });
        self.visit_expr(&m.expr);
        let all: Vec<String> = names.iter().flatten().cloned().collect();
        for (arm, names) in m.arms.iter().zip(names) {
            if names.is_empty() {
                syn::visit::visit_arm(self, arm);
                continue;
            }
            let rivals = all.iter().filter(|n| !names.contains(n)).cloned().collect();
            self.arm(names, rivals, false, definitive, arm.span(), |v| {
                syn::visit::visit_arm(v, arm);
            });
        }
    }
    fn visit_expr_if(&mut self, e: &'ast syn::ExprIf) {
        // `if !is_controller { .. }`: the branch of the other modes.
        let (cond, negated) = match &*e.cond {
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => (&*u.expr, true),
            cond => (cond, false),
        };
        let Some((names, definitive)) = self.condition(cond) else {
            syn::visit::visit_expr_if(self, e);
            return;
        };
        self.visit_expr(&e.cond);
        let then = &e.then_branch;
        self.arm(
            names.clone(),
            Vec::new(),
            negated,
            definitive,
            then.span(),
            |v| {
                v.visit_block(then);
            },
        );
        if let Some((_, otherwise)) = &e.else_branch {
            self.arm(
                names,
                Vec::new(),
                !negated,
                definitive,
                otherwise.span(),
                |v| {
                    v.visit_expr(otherwise);
                },
            );
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

    /// The functions `main.rs` reaches when run with `words`.
    fn reached(files: &[(&str, &str)], words: &[&str]) -> Vec<String> {
        let words: Vec<String> = words.iter().map(ToString::to_string).collect();
        let words = Words::new(&words);
        let files: Vec<(&Path, &str)> = files.iter().map(|(p, t)| (Path::new(*p), *t)).collect();
        let graph = Graph::of(&files);
        let all: HashSet<PathBuf> = files.iter().map(|(p, _)| p.to_path_buf()).collect();
        let mut names: Vec<String> = graph
            .reach_from(Path::new("src/main.rs"), &all, Some(&words))
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
            reached(&files, &["serve"]),
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
            reached(&files, &["mint"]),
            ["src/main.rs:main", "src/mint.rs:issue", "src/mint.rs:run"]
        );
        assert_eq!(
            reached(&files, &["listen"]),
            [
                "src/main.rs:main",
                "src/serve.rs:listen",
                "src/serve.rs:run"
            ]
        );
    }
    #[test]
    fn modes_chosen_by_a_flags_value_reach_their_own_code() {
        let modules = [
            (
                "src/controller.rs",
                "pub async fn run() { reconcile().await }\nasync fn reconcile() {}",
            ),
            (
                "src/agent.rs",
                "pub async fn run() { report().await }\nasync fn report() {}",
            ),
        ];
        let controller = ["src/controller.rs:reconcile", "src/controller.rs:run"];
        let agent = ["src/agent.rs:report", "src/agent.rs:run"];
        let with_main = |main: &'static str| [("src/main.rs", main), modules[0], modules[1]];
        let only = |names: &[&str]| {
            let mut all: Vec<String> = std::iter::once("src/main.rs:main")
                .chain(names.iter().copied())
                .map(String::from)
                .collect();
            all.sort();
            all
        };
        let both = only(&[agent, controller].concat());

        // Read from `std::env::args()`: a workload that does not pass the
        // word does not run the branch.
        let by_hand = with_main(
            r#"
            async fn main() {
                if std::env::args().any(|a| a == "--mode=controller") {
                    controller::run().await
                } else {
                    agent::run().await
                }
            }"#,
        );
        assert_eq!(reached(&by_hand, &["--mode=controller"]), only(&controller));
        assert_eq!(reached(&by_hand, &["--mode", "agent"]), only(&agent));
        assert_eq!(reached(&by_hand, &[]), only(&agent));

        // A clap `ValueEnum` field: `--mode node-agent` or `--mode=controller`;
        // with no value passed, its default is not known.
        let value_enum = with_main(
            r#"
            #[derive(Clone, clap::ValueEnum)]
            enum Mode { Controller, #[value(name = "node-agent")] Agent }
            #[derive(clap::Parser)]
            struct Cli { #[arg(long, value_enum, default_value = "controller")] mode: Mode }
            async fn main() {
                let cli = Cli::parse();
                match cli.mode {
                    Mode::Controller => controller::run().await,
                    Mode::Agent => agent::run().await,
                }
            }"#,
        );
        assert_eq!(
            reached(&value_enum, &["--mode", "node-agent"]),
            only(&agent)
        );
        assert_eq!(
            reached(&value_enum, &["--mode=controller"]),
            only(&controller)
        );
        assert_eq!(reached(&value_enum, &["--verbose"]), both);

        // A string field compared in an `if`: another value of the flag rules
        // the branch out.
        let compared = with_main(
            r#"
            #[derive(clap::Parser)]
            struct Args { #[arg(long, env = "MODE")] mode: String }
            async fn main() {
                let args = Args::parse();
                if args.mode.as_str() == "agent" {
                    agent::run().await;
                } else {
                    controller::run().await;
                }
            }"#,
        );
        assert_eq!(reached(&compared, &["--mode=agent"]), only(&agent));
        assert_eq!(
            reached(&compared, &["--mode=controller"]),
            only(&controller)
        );
        assert_eq!(reached(&compared, &[]), both);
    }
    #[test]
    fn trait_methods_of_a_value_the_program_builds_are_reached() {
        // A tonic service: generated code of another crate calls `rotate`.
        let main = r"
            mod service;
            #[tokio::main]
            async fn main() {
                let keeper = service::Keeper { client: Client::try_default().await.unwrap() };
                Server::builder().add_service(KeeperServer::new(keeper)).serve(addr).await;
            }";
        let service = r"
            pub struct Keeper { pub client: Client }
            #[tonic::async_trait]
            impl keeper_server::Keeper for Keeper {
                async fn rotate(&self, request: Request<Rotate>) -> Result<Response<Done>, Status> {
                    self.drop_old().await
                }
            }
            impl Keeper {
                async fn drop_old(&self) {}
                async fn never(&self) {}
            }
            pub struct Unbuilt;
            impl std::fmt::Display for Unbuilt {
                fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { Ok(()) }
            }";
        let files = [("src/main.rs", main), ("src/service.rs", service)];
        assert_eq!(
            reached(&files, &[]),
            [
                "src/main.rs:main",
                "src/service.rs:drop_old",
                "src/service.rs:rotate"
            ]
        );
    }
    #[test]
    fn a_method_call_reaches_no_free_function_of_its_name() {
        // `warp::serve(api).run(..)` is warp's method, not `controller::run`.
        let main = r"
            mod controller;
            #[tokio::main]
            async fn main() {
                warp::serve(routes()).run(([0, 0, 0, 0], 3030)).await;
            }
            fn routes() {}";
        let controller = r"
            pub async fn run(client: Client) {}
            pub struct Runner;
            impl Runner { pub fn start(&self) {} }";
        let files = [("src/main.rs", main), ("src/controller.rs", controller)];
        assert_eq!(
            reached(&files, &[]),
            ["src/main.rs:main", "src/main.rs:routes"]
        );
    }
    #[test]
    fn a_path_reaches_the_crate_and_modules_it_names() {
        let main = r"
            use bgp::server;
            fn main() {
                server::start();
                kubernetes::agent::server::start();
            }";
        let bgp = r"
            pub fn start() { let peer = Peer::new(); peer.export(); }
            pub struct Peer;
            impl Peer { pub fn new() -> Peer { Peer } }";
        let agent = r"
            pub fn start() {}";
        let controller = r"
            pub fn start() {}";
        let exporter = r"
            pub struct Watcher;
            impl Watcher { pub fn export(&self) {} }";
        let files = [
            (Path::new("src/main.rs"), main),
            (Path::new("bgp/src/server.rs"), bgp),
            (Path::new("kubernetes/src/agent/server.rs"), agent),
            (Path::new("kubernetes/src/controller/server.rs"), controller),
            (Path::new("kubernetes/src/agent/exporter.rs"), exporter),
        ];
        let crates = files[1..]
            .iter()
            .map(|(path, _)| {
                let name = path.iter().next().unwrap().to_string_lossy().to_string();
                (path.to_path_buf(), name)
            })
            .collect();
        let graph = Graph::of_crates(&files, crates);
        let all: HashSet<PathBuf> = files.iter().map(|(p, _)| p.to_path_buf()).collect();
        let mut names: Vec<String> = graph
            .reach_from(Path::new("src/main.rs"), &all, None)
            .into_iter()
            .map(|(file, name)| format!("{}:{name}", file.display()))
            .collect();
        names.sort();
        // bgp's `peer.export()` is not the kubernetes crate's method, which
        // bgp does not name.
        assert_eq!(
            names,
            [
                "bgp/src/server.rs:new",
                "bgp/src/server.rs:start",
                "kubernetes/src/agent/server.rs:start",
                "src/main.rs:main"
            ]
        );
    }
    #[test]
    fn a_type_parameters_method_is_each_implementations() {
        let main = r"
            mod controller;
            struct Reconciler;
            impl controller::Reconcile for Reconciler {
                fn reconcile(obj: Arc<Service>) {}
            }
            fn main() { controller::run::<Reconciler>(); }";
        let controller = r"
            pub trait Reconcile { fn reconcile(obj: Arc<Service>); }
            pub fn run<R: Reconcile>() {
                Controller::new(api, cfg).run(R::reconcile, policy, ctx);
            }";
        let files = [("src/main.rs", main), ("src/controller.rs", controller)];
        assert_eq!(
            reached(&files, &[]),
            [
                "src/controller.rs:run",
                "src/main.rs:main",
                "src/main.rs:reconcile"
            ]
        );
    }
    #[test]
    fn a_local_value_is_no_function_of_its_name() {
        // `start` here is a number, not `agent::start`.
        let main = r"
            mod agent;
            fn main() { let start = 10u32; let block = u128::from(start); }";
        let agent = r"
            pub fn start() {}";
        let files = [("src/main.rs", main), ("src/agent.rs", agent)];
        assert_eq!(reached(&files, &[]), ["src/main.rs:main"]);
        // A call's callee is the function, though its result takes its name.
        let main = r"
            mod agent;
            fn main() { let start = agent::start(); let app = app(start); }
            fn app(start: u32) {}";
        let files = [("src/main.rs", main), ("src/agent.rs", agent)];
        assert_eq!(
            reached(&files, &[]),
            ["src/agent.rs:start", "src/main.rs:app", "src/main.rs:main"]
        );
    }
    #[test]
    fn a_mode_chosen_by_the_environment_is_taken_where_the_workload_sets_it() {
        let main = r#"
            fn main() {
                let k8s_mode = std::env::var("K8S_MODE")
                    .unwrap_or_else(|_| "false".to_string())
                    .parse::<bool>()
                    .unwrap_or(false);
                if k8s_mode { controllers(); }
                if env::var("AGENT").is_ok() { agent(); }
                if env::var("ROLE").unwrap_or_default() == "web" { web(); }
            }
            fn controllers() {}
            fn agent() {}
            fn web() {}"#;
        let files = [("src/main.rs", main)];
        assert_eq!(reached(&files, &[]), ["src/main.rs:main"]);
        assert_eq!(
            reached(&files, &["$K8S_MODE=true", "$ROLE=web"]),
            [
                "src/main.rs:controllers",
                "src/main.rs:main",
                "src/main.rs:web"
            ]
        );
        assert_eq!(
            reached(&files, &["$K8S_MODE=false", "$AGENT=1"]),
            ["src/main.rs:agent", "src/main.rs:main"]
        );
        // Set from a secret (`valueFrom`): any value.
        assert_eq!(
            reached(&files, &["$ROLE"]),
            ["src/main.rs:main", "src/main.rs:web"]
        );
        // A default decides where the workload leaves it unset; a variable
        // of any value takes either branch; `envFrom` may set any variable.
        let main = r#"
            fn main() {
                if env::var("MODE").unwrap_or("controller".into()) == "controller" {
                    controller();
                }
                if env::var("ROLE").unwrap_or_default() == "web" { web(); } else { worker(); }
            }
            fn controller() {}
            fn web() {}
            fn worker() {}"#;
        let files = [("src/main.rs", main)];
        assert_eq!(
            reached(&files, &[]),
            [
                "src/main.rs:controller",
                "src/main.rs:main",
                "src/main.rs:worker"
            ]
        );
        assert_eq!(
            reached(&files, &["$MODE=agent", "$ROLE"]),
            ["src/main.rs:main", "src/main.rs:web", "src/main.rs:worker"]
        );
        assert_eq!(
            reached(&files, &["$*"]),
            [
                "src/main.rs:controller",
                "src/main.rs:main",
                "src/main.rs:web",
                "src/main.rs:worker"
            ]
        );
    }
    #[test]
    fn argh_subcommands_reach_their_own_code() {
        let main = r"
            mod mint; mod serve;
            #[derive(FromArgs)]
            struct Top { #[argh(subcommand)] command: Command }
            #[derive(FromArgs)]
            #[argh(subcommand)]
            enum Command { Mint(mint::Args), Serve(serve::Args) }
            fn main() {
                let top: Top = argh::from_env();
                match top.command {
                    Command::Mint(args) => mint::run(args),
                    Command::Serve(args) => serve::run(args),
                }
            }";
        let files = [
            ("src/main.rs", main),
            (
                "src/mint.rs",
                "#[derive(FromArgs)]\n#[argh(subcommand, name = \"mint-token\")]\npub struct Args {}\npub fn run(a: Args) { issue() }\nfn issue() {}",
            ),
            (
                "src/serve.rs",
                "#[derive(FromArgs)]\n#[argh(subcommand, name = \"serve\")]\npub struct Args {}\npub fn run(a: Args) { listen() }\nfn listen() {}",
            ),
        ];
        assert_eq!(
            reached(&files, &["mint-token"]),
            ["src/main.rs:main", "src/mint.rs:issue", "src/mint.rs:run"]
        );
    }
    #[test]
    fn a_method_a_trait_provides_is_reached_through_the_type() {
        let main = "mod job;\nfn main() { job::Job::controller(ctx) }";
        let job = r"
            pub trait Remote {
                fn controller(ctx: Ctx) { Self::reconcile_all() }
                fn reconcile_all() { sync() }
            }
            pub struct Job;
            impl Remote for Job {}
            fn sync() {}
            fn unused() {}
        ";
        let files = [("src/main.rs", main), ("src/job.rs", job)];
        assert_eq!(
            reached(&files, &[]),
            [
                "src/job.rs:controller",
                "src/job.rs:reconcile_all",
                "src/job.rs:sync",
                "src/main.rs:main"
            ]
        );
    }
    /// A mode chosen by the value of a flag clap's builder reads, tested
    /// once into a `bool`: each workload runs the branch its value picks.
    #[test]
    fn a_flag_value_tested_into_a_bool_chooses_the_branch() {
        let main = r#"
            mod controller; mod node;
            fn main() {
                let matches = Command::new("csi")
                    .arg(Arg::new("node-id").long("node-id").default_value("node-1"))
                    .get_matches();
                let node_id = matches.get_one::<String>("node-id").unwrap();
                let is_controller = matches!(node_id.as_str(), "controller");
                if !is_controller {
                    node::run();
                } else {
                    controller::run();
                }
            }"#;
        let files = [
            ("src/main.rs", main),
            ("src/controller.rs", "pub fn run() {}"),
            ("src/node.rs", "pub fn run() {}"),
        ];
        assert_eq!(
            reached(&files, &["--node-id=controller"]),
            ["src/controller.rs:run", "src/main.rs:main"]
        );
        assert_eq!(
            reached(&files, &["--node-id=$(NODE_ID)"]),
            ["src/main.rs:main", "src/node.rs:run"]
        );
    }
    /// A type renamed by a `use .. as` is reached by its new name.
    #[test]
    fn a_renamed_type_is_reached_by_its_new_name() {
        let main = "mod resources;\nfn main() { resources::AuthentikManager::new(c) }";
        let resources = r"
            pub use authentik::Manager as AuthentikManager;
            mod authentik {
                pub struct Manager;
                impl Manager { pub fn new(c: Client) { run() } }
                fn run() {}
            }
        ";
        let files = [("src/main.rs", main), ("src/resources.rs", resources)];
        assert_eq!(
            reached(&files, &[]),
            [
                "src/main.rs:main",
                "src/resources.rs:new",
                "src/resources.rs:run"
            ]
        );
    }
    /// `Self::upsert(..)` in a provided method runs each implementation's
    /// `upsert`, not a free function of the name.
    #[test]
    fn self_in_a_provided_method_calls_the_implementations() {
        let main = "mod k8s; mod widget;\nfn main() { widget::Widget::reconcile(obj) }";
        let k8s = r"
            pub trait Reconciler {
                async fn upsert(obj: Obj);
                fn reconcile(obj: Obj) { Self::upsert(obj) }
            }
            pub fn upsert(obj: Obj) {}
        ";
        let widget = r"
            pub struct Widget;
            impl k8s::Reconciler for Widget {
                async fn upsert(obj: Obj) { apply(obj) }
            }
            fn apply(obj: Obj) {}
        ";
        let files = [
            ("src/main.rs", main),
            ("src/k8s.rs", k8s),
            ("src/widget.rs", widget),
        ];
        assert_eq!(
            reached(&files, &[]),
            [
                "src/k8s.rs:reconcile",
                "src/main.rs:main",
                "src/widget.rs:apply",
                "src/widget.rs:upsert"
            ]
        );
    }
    #[test]
    fn a_switch_runs_its_branch_only_when_passed() {
        let main = r"
            mod install; mod serve;
            #[derive(clap::Parser)]
            struct Cli { #[arg(long)] install_crd: bool }
            fn main() {
                let cli = Cli::parse();
                if cli.install_crd {
                    install::run();
                    return;
                }
                serve::run();
            }";
        let files = [
            ("src/main.rs", main),
            ("src/install.rs", "pub fn run() {}"),
            ("src/serve.rs", "pub fn run() {}"),
        ];
        assert_eq!(
            reached(&files, &["--install-crd"]),
            ["src/install.rs:run", "src/main.rs:main", "src/serve.rs:run"]
        );
        assert_eq!(
            reached(&files, &[]),
            ["src/main.rs:main", "src/serve.rs:run"]
        );
    }
    #[test]
    fn functions_a_registration_macro_names_run_once_its_item_is_used() {
        let ops = r"
            deno_core::extension!(checks, ops = [op_get, op_list]);
            fn op_get() { fetch() }
            fn op_list() {}
            fn fetch() {}
        ";
        let uses =
            "mod ops;\nfn main() { let runtime = JsRuntime::new(vec![ops::checks::init_ops()]); }";
        let ignores = "mod ops;\nfn main() {}";
        assert_eq!(
            reached(&[("src/main.rs", uses), ("src/ops.rs", ops)], &[]),
            [
                "src/main.rs:main",
                "src/ops.rs:fetch",
                "src/ops.rs:op_get",
                "src/ops.rs:op_list"
            ]
        );
        assert_eq!(
            reached(&[("src/main.rs", ignores), ("src/ops.rs", ops)], &[]),
            ["src/main.rs:main"]
        );
    }
}
