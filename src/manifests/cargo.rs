//! The crdgen build: what `K::crd()` returns, for the kinds whose schema
//! needs code to run (or for every kind with `--cargo`), taken from the
//! project's own kube-derive, schemars and k8s-openapi.
//!
//! The project is compiled as it is, not as a library seen from outside, so
//! that binary crates, private modules and workspace members all work: the
//! workspace is mirrored under the target directory (symbolic links, except
//! for the manifests and the files that declare the kinds, which are
//! copied), each such file gets a `#[cfg(test)]` module that prints its
//! kinds' CRDs, and `cargo test` runs just those tests. The mirror, the
//! project's `Cargo.lock` and its target directory are reused from run to
//! run, so a second build is incremental; nothing is written into the
//! project's own files.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::crd::Version;
use super::source;
use crate::{Error, Result};

/// The package name and library name of the project, from Cargo.toml.
#[derive(Debug, Clone)]
pub struct Package {
    pub name: String,
    pub lib: String,
    /// `package.version`, when it is a plain string.
    pub version: Option<String>,
}

/// The name of the test module added to each file that declares a kind,
/// and the test filter that runs only those tests.
const MODULE: &str = "__rsop_crdgen";
/// The prefix of each line the tests print: `RSOP-CRDGEN <key> <crd json>`.
const MARKER: &str = "RSOP-CRDGEN ";

/// Builds the project with a crdgen test next to each of `versions`, runs
/// it, and returns each version's `schema` entry, keyed like [`Version::key`].
pub fn schemas(root: &Path, versions: &[&Version]) -> Result<BTreeMap<String, Value>> {
    let meta = Metadata::read(root)?;
    let overlay = meta.overlay_dir();
    let mut copies: BTreeMap<PathBuf, String> = BTreeMap::new();

    // One test module per file, naming each kind by its path from there.
    let mut by_file: BTreeMap<&Path, Vec<&Version>> = BTreeMap::new();
    for v in versions {
        by_file
            .entry(v.location.file.as_path())
            .or_default()
            .push(v);
    }
    // The build is a test build, but the project's own tests are not
    // rsop's to compile (they may not build where the code does): every
    // source of the package is copied without its `#[cfg(test)]` items.
    let mut sources = Vec::new();
    source::collect_rs_files(&meta.package_dir.join("src"), &mut sources)?;
    for original in sources {
        let text =
            std::fs::read_to_string(&original).map_err(|e| Error::io("read", &original, e))?;
        if let Some(stripped) = without_tests(&text) {
            copies.insert(original, stripped);
        }
    }
    for (file, kinds) in by_file {
        let original = meta.package_dir.join(file);
        let text = match copies.remove(&original) {
            Some(stripped) => stripped,
            None => {
                std::fs::read_to_string(&original).map_err(|e| Error::io("read", &original, e))?
            }
        };
        copies.insert(original, text + &test_module(&kinds));
    }
    for manifest in &meta.manifests {
        let text = std::fs::read_to_string(manifest).map_err(|e| Error::io("read", manifest, e))?;
        let is_root = manifest.parent() == Some(meta.workspace_root.as_path());
        copies.insert(
            manifest.clone(),
            rewrite_manifest(
                &text,
                manifest,
                &meta.workspace_root,
                is_root && meta.single,
            )
            .map_err(|e| Error::Parse {
                path: manifest.clone(),
                help: Some("fix the TOML syntax error".into()),
                source: Box::new(e),
            })?,
        );
    }
    let lock = meta.workspace_root.join("Cargo.lock");
    if let Ok(text) = std::fs::read_to_string(&lock) {
        copies.insert(lock, text);
    }
    let skip: Vec<PathBuf> = vec![meta.target_directory.clone()];
    std::fs::create_dir_all(&overlay).map_err(|e| Error::io("create directory", &overlay, e))?;
    mirror(&meta.workspace_root, &overlay, &copies, &skip)?;

    let member = overlay.join(
        meta.package_dir
            .strip_prefix(&meta.workspace_root)
            .unwrap_or(Path::new("")),
    );
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo
        .arg("test")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(member.join("Cargo.toml"));
    if meta.has_lib {
        cargo.arg("--lib");
    }
    if meta.has_bins {
        cargo.arg("--bins");
    }
    // cargo's own output is kept for a failure: on success it would only
    // repeat the warnings of a test build (where everything looks unused).
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        cargo.arg("--color=always");
    }
    cargo
        .args(["--", MODULE, "--nocapture", "--test-threads=1"])
        .env("CARGO_TARGET_DIR", &meta.target_directory)
        // From the package, as the user's own `cargo build` runs: rustup
        // reads `rust-toolchain.toml` and cargo reads `.cargo/config.toml`
        // from the working directory up, not from the manifest's.
        .current_dir(&meta.package_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = run_killing_on_signal(&mut cargo)?;
    let success = output.status.success();
    let stdout = String::from_utf8_lossy(&output.stdout);

    let mut out = BTreeMap::new();
    let mut other = String::new();
    for line in stdout.lines() {
        // The test harness writes its progress on the same lines.
        if let Some(at) = line.find(MARKER)
            && let Some((key, json)) = line[at + MARKER.len()..].split_once(' ')
            && let Ok(crd) = serde_json::from_str::<Value>(json)
        {
            out.insert(
                key.to_string(),
                crd["spec"]["versions"][0]["schema"].clone(),
            );
        } else if !line.starts_with("running ") && !line.trim().is_empty() {
            other.push_str(line);
            other.push('\n');
        }
    }
    let missing: Vec<&&Version> = versions
        .iter()
        .filter(|v| !out.contains_key(&v.key()))
        .collect();
    if !success || !missing.is_empty() {
        let kinds: Vec<String> = versions
            .iter()
            .map(|v| format!("`{}`", v.attrs.kind))
            .collect();
        let why = versions
            .iter()
            .find_map(|v| v.needs_code.first())
            .map_or_else(
                || "`--cargo` builds every kind".to_string(),
                |d| format!("{}: {}", d.location, d.message),
            );
        if !success {
            let mut err = std::io::stderr();
            let _ = std::io::Write::write_all(&mut err, &output.stderr);
        }
        let message = if success {
            format!(
                "the crdgen build printed no CRD for {}: its file is not compiled into the crate's library or binaries",
                missing
                    .iter()
                    .map(|v| format!("`{}` ({})", v.attrs.kind, v.location.file.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            format!(
                "the crdgen build of {} failed{}",
                kinds.join(", "),
                if other.is_empty() {
                    "; cargo's output is above".to_string()
                } else {
                    format!(":\n{}", other.trim_end())
                }
            )
        };
        return Err(Error::User {
            message,
            help: Some(format!(
                "rsop builds these kinds because their schema needs code to run ({why}); fix the build, or make that construct static"
            )),
        });
    }
    Ok(out)
}

/// `text` as a normal build compiles it: without what `#[cfg(test)]` (or
/// `#[cfg(all(test, ..))]`) guards, wherever such an attribute stands (items
/// at any depth, impl and trait items, statements, fields, variants, match
/// arms, struct literal fields and patterns), and without the attributes that
/// `#[cfg_attr(test, ..)]` adds. Each removal leaves its line breaks, so that
/// cargo's messages keep their line numbers. `None` when there is nothing
/// to remove (or the file does not parse: cargo will say why).
fn without_tests(text: &str) -> Option<String> {
    use syn::visit::Visit;
    if !text.contains("test") {
        return None;
    }
    let file = syn::parse_file(text).ok()?;
    let mut found = TestOnly::default();
    found.visit_file(&file);
    let mut ranges = found.ranges;
    if ranges.is_empty() {
        return None;
    }
    ranges.sort_by_key(|(start, _, _)| (start.line, start.column));
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let offset = |lc: proc_macro2::LineColumn| -> Option<usize> {
        let start = *line_starts.get(lc.line.checked_sub(1)?)?;
        // Columns count characters.
        Some(
            start
                + text[start..]
                    .chars()
                    .take(lc.column)
                    .map(char::len_utf8)
                    .sum::<usize>(),
        )
    };
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, separated) in ranges {
        let (start, mut end) = (offset(start)?, offset(end)?);
        if start < at || end > text.len() {
            return None;
        }
        // A list element takes its separating comma along.
        if separated {
            let rest = &text[end..];
            let gap = rest.len() - rest.trim_start().len();
            if rest[gap..].starts_with(',') {
                end += gap + 1;
            }
        }
        out.push_str(&text[at..start]);
        out.extend(text[start..end].chars().filter(|c| *c == '\n'));
        at = end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// The spans a normal build leaves out, found by [`without_tests`]: each
/// with whether it is a comma-separated list element.
#[derive(Default)]
struct TestOnly {
    ranges: Vec<(proc_macro2::LineColumn, proc_macro2::LineColumn, bool)>,
}

impl TestOnly {
    /// Records `node` when `attrs` make it test-only; returns whether it did.
    fn take(
        &mut self,
        attrs: &[syn::Attribute],
        node: &impl syn::spanned::Spanned,
        separated: bool,
    ) -> bool {
        if !attrs.iter().any(is_test_only) {
            return false;
        }
        let span = node.span();
        self.ranges.push((span.start(), span.end(), separated));
        true
    }
}

impl<'ast> syn::visit::Visit<'ast> for TestOnly {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !self.take(item_attrs(item), item, false) {
            syn::visit::visit_item(self, item);
        }
    }
    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs: &[syn::Attribute] = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !self.take(attrs, item, false) {
            syn::visit::visit_impl_item(self, item);
        }
    }
    fn visit_trait_item(&mut self, item: &'ast syn::TraitItem) {
        let attrs: &[syn::Attribute] = match item {
            syn::TraitItem::Const(i) => &i.attrs,
            syn::TraitItem::Fn(i) => &i.attrs,
            syn::TraitItem::Type(i) => &i.attrs,
            syn::TraitItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !self.take(attrs, item, false) {
            syn::visit::visit_trait_item(self, item);
        }
    }
    fn visit_stmt(&mut self, stmt: &'ast syn::Stmt) {
        let attrs: &[syn::Attribute] = match stmt {
            syn::Stmt::Local(l) => &l.attrs,
            syn::Stmt::Macro(m) => &m.attrs,
            syn::Stmt::Expr(e, _) => expr_attrs(e),
            // Items are taken by `visit_item`.
            syn::Stmt::Item(_) => &[],
        };
        if !self.take(attrs, stmt, false) {
            syn::visit::visit_stmt(self, stmt);
        }
    }
    fn visit_field(&mut self, field: &'ast syn::Field) {
        if !self.take(&field.attrs, field, true) {
            syn::visit::visit_field(self, field);
        }
    }
    fn visit_variant(&mut self, variant: &'ast syn::Variant) {
        if !self.take(&variant.attrs, variant, true) {
            syn::visit::visit_variant(self, variant);
        }
    }
    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        if !self.take(&arm.attrs, arm, true) {
            syn::visit::visit_arm(self, arm);
        }
    }
    fn visit_field_value(&mut self, field: &'ast syn::FieldValue) {
        if !self.take(&field.attrs, field, true) {
            syn::visit::visit_field_value(self, field);
        }
    }
    fn visit_field_pat(&mut self, field: &'ast syn::FieldPat) {
        if !self.take(&field.attrs, field, true) {
            syn::visit::visit_field_pat(self, field);
        }
    }
    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        // `#[cfg_attr(test, ...)]` adds its attributes in tests only.
        if attr.path().is_ident("cfg_attr")
            && let Ok(args) = attr.parse_args_with(
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            )
            && args.first().is_some_and(predicate_is_test_only)
        {
            let span = syn::spanned::Spanned::span(attr);
            self.ranges.push((span.start(), span.end(), false));
        }
    }
}

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

/// The outer attributes of an expression statement.
fn expr_attrs(expr: &syn::Expr) -> &[syn::Attribute] {
    match expr {
        syn::Expr::Assign(e) => &e.attrs,
        syn::Expr::Async(e) => &e.attrs,
        syn::Expr::Await(e) => &e.attrs,
        syn::Expr::Binary(e) => &e.attrs,
        syn::Expr::Block(e) => &e.attrs,
        syn::Expr::Call(e) => &e.attrs,
        syn::Expr::ForLoop(e) => &e.attrs,
        syn::Expr::If(e) => &e.attrs,
        syn::Expr::Loop(e) => &e.attrs,
        syn::Expr::Macro(e) => &e.attrs,
        syn::Expr::Match(e) => &e.attrs,
        syn::Expr::MethodCall(e) => &e.attrs,
        syn::Expr::Path(e) => &e.attrs,
        syn::Expr::Return(e) => &e.attrs,
        syn::Expr::Try(e) => &e.attrs,
        syn::Expr::Unsafe(e) => &e.attrs,
        syn::Expr::While(e) => &e.attrs,
        _ => &[],
    }
}

/// `#[cfg(test)]`, or `#[cfg(all(.., test, ..))]`: compiled only in tests.
fn is_test_only(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("cfg")
        && attr
            .parse_args::<syn::Meta>()
            .is_ok_and(|meta| predicate_is_test_only(&meta))
}

/// `test`, or `all(.., test, ..)`: a cfg predicate that holds only in tests.
fn predicate_is_test_only(meta: &syn::Meta) -> bool {
    match meta {
        syn::Meta::Path(p) => p.is_ident("test"),
        syn::Meta::List(l) if l.path.is_ident("all") => l
            .parse_args_with(
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            )
            .is_ok_and(|ms| ms.iter().any(|m| m.path().is_ident("test"))),
        _ => false,
    }
}

/// The test module appended to `file` (relative to the package root): it
/// prints the CRD of each kind the file declares, through the derive's own
/// `CustomResourceExt` and k8s-openapi's `serde_json`.
fn test_module(kinds: &[&Version]) -> String {
    let mut body = String::new();
    for v in kinds {
        let within = &v.path_in_file;
        let _ = writeln!(
            body,
            "        println!(\"{MARKER}{{}} {{}}\", {:?}, {}::serde_json::to_string(&<super::{within} as {}::CustomResourceExt>::crd()).unwrap());",
            v.key(),
            v.attrs.crate_path("k8s_openapi"),
            v.attrs.crate_path("kube_core"),
        );
    }
    format!(
        "\n// Added by `rsop manifests` to this copy under the target directory.\n\
         #[cfg(test)]\n#[doc(hidden)]\n#[allow(warnings, clippy::all, clippy::pedantic)]\n\
         mod {MODULE} {{\n    #[test]\n    fn crds() {{\n{body}    }}\n}}\n"
    )
}

/// What `cargo metadata` says about the project.
#[derive(Debug)]
struct Metadata {
    workspace_root: PathBuf,
    target_directory: PathBuf,
    package_dir: PathBuf,
    /// Every workspace member's Cargo.toml, and the root's.
    manifests: BTreeSet<PathBuf>,
    has_lib: bool,
    has_bins: bool,
    /// The package is not part of a workspace.
    single: bool,
}

impl Metadata {
    fn read(root: &Path) -> Result<Self> {
        let manifest = std::fs::canonicalize(root.join("Cargo.toml"))
            .map_err(|e| Error::io("resolve", root.join("Cargo.toml"), e))?;
        let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args([
                "metadata",
                "--no-deps",
                "--format-version",
                "1",
                "--manifest-path",
            ])
            .arg(&manifest)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Error::io("run", "cargo metadata", e))?;
        if !output.status.success() {
            return Err(Error::user_with_help(
                format!(
                    "`cargo metadata` failed on `{}`:\n{}",
                    manifest.display(),
                    String::from_utf8_lossy(&output.stderr).trim_end()
                ),
                "the crdgen build needs a manifest cargo accepts; fix it, or run with `--static`",
            ));
        }
        let meta: Value = serde_json::from_slice(&output.stdout).map_err(|e| Error::Parse {
            path: manifest.clone(),
            help: Some("`cargo metadata` printed something other than JSON".into()),
            source: Box::new(e),
        })?;
        let path = |v: &Value| v.as_str().map(PathBuf::from);
        let (Some(workspace_root), Some(target_directory)) = (
            path(&meta["workspace_root"]),
            path(&meta["target_directory"]),
        ) else {
            return Err(Error::user(
                "`cargo metadata` gave no workspace root or target directory",
            ));
        };
        let packages = meta["packages"].as_array().cloned().unwrap_or_default();
        let Some(package) = packages
            .iter()
            .find(|p| path(&p["manifest_path"]).as_deref() == Some(manifest.as_path()))
        else {
            return Err(Error::user(format!(
                "`cargo metadata` does not list the package of `{}`",
                manifest.display()
            )));
        };
        let kinds = |t: &Value| -> Vec<String> {
            t["kind"]
                .as_array()
                .map(|k| {
                    k.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let targets = package["targets"].as_array().cloned().unwrap_or_default();
        let has_lib = targets.iter().any(|t| {
            kinds(t).iter().any(|k| {
                matches!(
                    k.as_str(),
                    "lib" | "rlib" | "dylib" | "cdylib" | "staticlib"
                )
            })
        });
        let has_bins = targets.iter().any(|t| kinds(t).iter().any(|k| k == "bin"));
        let mut manifests: BTreeSet<PathBuf> = packages
            .iter()
            .filter_map(|p| path(&p["manifest_path"]))
            .collect();
        let root_manifest = workspace_root.join("Cargo.toml");
        let single = packages.len() == 1 && manifests.contains(&root_manifest);
        if root_manifest.is_file() {
            manifests.insert(root_manifest);
        }
        Ok(Metadata {
            package_dir: manifest.parent().unwrap_or(root).to_path_buf(),
            workspace_root,
            target_directory,
            manifests,
            has_lib,
            has_bins,
            single,
        })
    }

    /// The mirror of the workspace: under the target directory, one per
    /// workspace (a target directory may be shared), kept between runs.
    fn overlay_dir(&self) -> PathBuf {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.workspace_root.hash(&mut hasher);
        self.target_directory
            .join("rsop-crdgen")
            .join(format!("{:016x}", hasher.finish()))
    }
}

/// The manifest as the mirror needs it: relative `path`s that leave the
/// workspace made absolute (the mirror lives elsewhere), and a package that
/// belongs to no workspace made its own root, so that cargo does not look
/// for one above the target directory.
fn rewrite_manifest(
    text: &str,
    manifest: &Path,
    workspace_root: &Path,
    standalone: bool,
) -> std::result::Result<String, toml_edit::TomlError> {
    let mut doc: toml_edit::DocumentMut = text.parse()?;
    let dir = manifest.parent().unwrap_or(Path::new("."));
    absolutize_paths(doc.as_item_mut(), dir, workspace_root);
    if standalone && doc.get("workspace").is_none() {
        doc.insert("workspace", toml_edit::table());
    }
    Ok(doc.to_string())
}

fn absolutize_paths(item: &mut toml_edit::Item, dir: &Path, workspace_root: &Path) {
    use toml_edit::visit_mut::{VisitMut, visit_table_like_kv_mut};

    struct Paths<'p> {
        dir: &'p Path,
        workspace_root: &'p Path,
    }

    impl VisitMut for Paths<'_> {
        fn visit_table_like_kv_mut(
            &mut self,
            key: toml_edit::KeyMut<'_>,
            node: &mut toml_edit::Item,
        ) {
            if key.get() == "path"
                && let Some(value) = node.as_value_mut()
                && let Some(p) = value.as_str()
            {
                let joined = self.dir.join(p);
                let resolved = std::fs::canonicalize(&joined).unwrap_or_else(|_| lexical(&joined));
                if Path::new(p).is_relative() && !resolved.starts_with(self.workspace_root) {
                    *value = toml_edit::Value::from(resolved.display().to_string());
                }
                return;
            }
            visit_table_like_kv_mut(self, key, node);
        }
    }

    Paths {
        dir,
        workspace_root,
    }
    .visit_item_mut(item);
}

/// `path` with `.` and `..` resolved by its text, for a path that does not
/// exist (yet).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Makes `dst` mirror `src`: each file in `copies` (keyed by its path under
/// `src`) is written with the given text, each directory on the way to one
/// is a real directory, and everything else is a symbolic link to the
/// original. Entries of `dst` that `src` no longer has are removed. Copies
/// are written only when they change, so cargo's fingerprints stay valid.
fn mirror(
    src: &Path,
    dst: &Path,
    copies: &BTreeMap<PathBuf, String>,
    skip: &[PathBuf],
) -> Result<()> {
    let entries = std::fs::read_dir(src).map_err(|e| Error::io("read directory", src, e))?;
    let mut kept = BTreeSet::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("read directory", src, e))?;
        let name = entry.file_name();
        let from = entry.path();
        if name == ".git" || skip.contains(&from) || from.join("CACHEDIR.TAG").is_file() {
            continue;
        }
        let to = dst.join(&name);
        kept.insert(name);
        if let Some(text) = copies.get(&from) {
            if to.is_symlink() || to.is_dir() {
                remove(&to)?;
            }
            if std::fs::read_to_string(&to).is_ok_and(|old| old == *text) {
                continue;
            }
            std::fs::write(&to, text).map_err(|e| Error::io("write", &to, e))?;
        } else if copies.keys().any(|c| c.starts_with(&from)) {
            if to.is_symlink() || to.is_file() {
                remove(&to)?;
            }
            std::fs::create_dir_all(&to).map_err(|e| Error::io("create directory", &to, e))?;
            mirror(&from, &to, copies, skip)?;
        } else {
            if std::fs::read_link(&to).is_ok_and(|target| target == from) {
                continue;
            }
            if to.exists() || to.is_symlink() {
                remove(&to)?;
            }
            std::os::unix::fs::symlink(&from, &to).map_err(|e| Error::io("link", &to, e))?;
        }
    }
    for entry in std::fs::read_dir(dst).map_err(|e| Error::io("read directory", dst, e))? {
        let entry = entry.map_err(|e| Error::io("read directory", dst, e))?;
        if !kept.contains(&entry.file_name()) {
            remove(&entry.path())?;
        }
    }
    Ok(())
}

fn remove(path: &Path) -> Result<()> {
    let result = if path.is_dir() && !path.is_symlink() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    result.map_err(|e| Error::io("remove", path, e))
}

/// Runs the build in its own process group, its output captured; SIGINT, SIGTERM or SIGHUP to rsop stop the whole group
/// (cargo, rustc, the test binary) before rsop exits, so that no process
/// outlives an interrupted run.
fn run_killing_on_signal(command: &mut Command) -> Result<std::process::Output> {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use std::os::unix::process::CommandExt as _;

    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .map_err(|e| Error::io("listen for", "signals", e))?;
    let child = command
        .process_group(0)
        .spawn()
        .map_err(|e| Error::io("run", "cargo", e))?;
    let group = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let handle = signals.handle();
    let watcher = std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let _ = killpg(group, Signal::SIGKILL);
            // The conventional exit status of a process ended by a signal.
            std::process::exit(128 + signal);
        }
    });
    let output = child.wait_with_output();
    handle.close();
    let _ = watcher.join();
    output.map_err(|e| Error::io("wait for", "cargo", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_projects_tests_are_left_out_line_for_line() {
        let text = "use a::b;\n\n#[cfg(test)]\nuse x::y;\n\npub fn f() {}\n\n#[cfg(all(test, feature = \"z\"))]\nmod t {\n    #[test]\n    fn t() { assert!(false); }\n}\n\n#[cfg(not(test))]\nfn g() {}\nmod inner {\n    #[cfg(test)]\n    mod tests {}\n    pub struct É; // ünïcode\n}\n";
        let out = without_tests(text).unwrap();
        assert_eq!(out.lines().count(), text.lines().count(), "{out}");
        assert!(
            !out.contains("use x::y") && !out.contains("assert!"),
            "{out}"
        );
        assert!(!out.contains("mod tests"), "{out}");
        assert!(
            out.contains("fn g()") && out.contains("pub fn f()") && out.contains("pub struct É"),
            "{out}"
        );
        syn::parse_file(&out).unwrap();
        assert!(without_tests("pub fn f() {}\n").is_none());
    }

    /// What a normal build leaves out goes wherever the attribute stands: a
    /// statement that uses a test-only static, fields, variants, arms,
    /// struct literal fields, impl items, and `cfg_attr(test, ..)`.
    #[test]
    fn test_only_code_is_left_out_at_every_position() {
        let text = "#[cfg(test)]\nstatic CALLS: u32 = 0;\n\
            pub fn f(x: u8) -> u8 {\n    #[cfg(test)]\n    let _ = CALLS;\n    #[cfg(test)]\n    println!(\"{CALLS}\");\n    #[cfg(test)]\n    { let _c = CALLS; }\n\
            match x {\n        #[cfg(test)]\n        0 => CALLS as u8,\n        _ => x,\n    }\n}\n\
            #[cfg_attr(test, derive(Debug))]\npub struct S {\n    #[cfg(test)]\n    pub calls: u32, pub b: u8 }\n\
            pub enum E { #[cfg(test)] T, A }\n\
            impl S {\n    #[cfg(all(test, unix))]\n    fn t() {}\n    pub fn new() -> Self { S { #[cfg(test)] calls: CALLS, b: 1 } }\n}\n";
        let out = without_tests(text).unwrap();
        assert_eq!(out.lines().count(), text.lines().count(), "{out}");
        assert!(!out.contains("CALLS"), "{out}");
        assert!(!out.contains("Debug") && !out.contains("fn t()"), "{out}");
        assert!(
            out.contains("pub b: u8") && out.contains("_ => x") && out.contains("b: 1"),
            "{out}"
        );
        assert!(!out.contains("{ , ") && !out.contains("{ ,"), "{out}");
        syn::parse_file(&out).unwrap();
    }

    #[test]
    fn paths_that_leave_the_workspace_become_absolute() {
        let text = "[package]\nname = \"op\"\n\n[dependencies]\ninside = { path = \"../api\" }\n\
                    outside = { path = \"../../vendor/x\" }\n\n[target.'cfg(unix)'.dependencies.deep]\npath = \"../../deep\"\n";
        let out = rewrite_manifest(
            text,
            Path::new("/ws/members/op/Cargo.toml"),
            Path::new("/ws/members"),
            false,
        )
        .unwrap();
        assert!(out.contains("inside = { path = \"../api\" }"), "{out}");
        assert!(
            out.contains("outside = { path = \"/ws/vendor/x\" }"),
            "{out}"
        );
        assert!(out.contains("path = \"/ws/deep\""), "{out}");
        assert!(!out.contains("[workspace]"), "{out}");
        let standalone = rewrite_manifest(
            "[package]\nname = \"op\"\n",
            Path::new("/p/Cargo.toml"),
            Path::new("/p"),
            true,
        )
        .unwrap();
        assert!(standalone.contains("[workspace]"), "{standalone}");
    }
}
