//! The crdgen build: what `K::crd()` returns, for the kinds whose schema
//! needs code to run (or for every kind with `--cargo`), taken from the
//! project's own kube-derive, schemars and k8s-openapi.
//!
//! The project is compiled as `cargo build` compiles it (its features, no
//! test code, no dev-dependency), not as a library seen from outside, so
//! that binary crates, private modules and workspace members all work: the
//! workspace is mirrored under the target directory (symbolic links, except
//! for copies of the manifests and of the files rsop adds to), each file
//! that declares kinds gets a function that prints their CRDs, and a crdgen
//! binary added to the package calls them (see [`schemas`]). The mirror,
//! the project's `Cargo.lock` and its target directory are reused, so once
//! the project is built only its own crate and the crdgen binary compile;
//! nothing is written into the project's own files.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::manifests::emit::crd::Version;
use crate::manifests::read::modules::{self, BuildConfig};
use crate::paths::lexical;
use crate::{Error, Result};

/// The package name and library name of the project, from Cargo.toml.
#[derive(Debug, Clone)]
pub struct Package {
    pub name: String,
    pub lib: String,
    /// `package.version`, when it is a plain string.
    pub version: Option<String>,
}

/// The name of the function added to each file that declares a kind (it
/// prints that file's CRDs), and of the one added to a library's root
/// (it calls them all); the crdgen binaries carry this name too.
const HOOK: &str = "__rsop_crdgen";
/// The prefix of each line the hooks print: `RSOP-CRDGEN <key> <crd json>`.
const MARKER: &str = "RSOP-CRDGEN ";

/// Builds the project as `cargo build` does, with a crdgen binary that prints
/// the CRD of each of `versions`, runs it, and returns each version's whole
/// `K::crd()`, keyed like [`Version::key`].
///
/// The binary is added to the package in the mirror: for kinds of the
/// library, a `main` that calls a hook appended to the library's root, which
/// calls one appended to each file that declares kinds; for kinds of a
/// binary, a copy of that binary's root without its `main`, with a `main`
/// that calls the hooks. The modules on the way to a hook are made
/// `pub(crate)` in the copies, so that private modules work. Nothing else
/// changes: no test build, no dev-dependency, and the dependencies the
/// project's own `cargo build` compiled are reused from its target
/// directory.
pub fn schemas(root: &Path, versions: &[&Version]) -> Result<BTreeMap<String, Value>> {
    let meta = Metadata::read(root)?;
    let overlay = meta.overlay_dir();
    let manifest_path = meta.package_dir.join("Cargo.toml");
    let package_doc = std::fs::read_to_string(&manifest_path)
        .ok()
        .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok());
    let config = BuildConfig::from_manifest(package_doc.as_ref());

    // The module tree of each target: file -> module path.
    let tree = |root_file: &Path| -> Result<BTreeMap<PathBuf, Vec<String>>> {
        Ok(
            modules::reachable(&[root_file.to_path_buf()], &[], &config)?
                .into_iter()
                .map(|f| (lexical(&f.path), f.module))
                .collect(),
        )
    };
    let lib = match &meta.lib {
        Some((name, src)) => Some((name.clone(), src.clone(), tree(src)?)),
        None => None,
    };
    let mut bins = Vec::new();
    for (_, src) in &meta.bins {
        bins.push((src.clone(), tree(src)?));
    }

    let mut by_file: BTreeMap<PathBuf, Vec<&Version>> = BTreeMap::new();
    for v in versions {
        by_file
            .entry(lexical(&meta.package_dir.join(&v.location.file)))
            .or_default()
            .push(v);
    }
    let mut plan = Plan::default();
    let mut lib_calls = Vec::new();
    let mut bin_calls: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut unbuilt = Vec::new();
    for (file, kinds) in &by_file {
        let (files, calls) =
            if let Some((_, _, files)) = lib.as_ref().filter(|l| l.2.contains_key(file)) {
                (files, &mut lib_calls)
            } else if let Some(i) = bins.iter().position(|(_, files)| files.contains_key(file)) {
                (&bins[i].1, bin_calls.entry(i).or_default())
            } else {
                unbuilt.extend(kinds.iter().copied());
                continue;
            };
        let module = &files[file];
        plan.append(file, &hook(kinds));
        calls.push(
            std::iter::once("crate".to_string())
                .chain(module.iter().cloned())
                .chain(std::iter::once(format!("{HOOK}_kinds")))
                .collect::<Vec<_>>()
                .join("::"),
        );
        // Every module from the crate root to the kind's: reachable from
        // the root, where the hooks are called.
        for v in kinds {
            let inline: Vec<String> = v.path_in_file.split("::").map(str::to_string).collect();
            let full: Vec<String> = module
                .iter()
                .cloned()
                .chain(inline[..inline.len() - 1].iter().cloned())
                .collect();
            for i in 1..=full.len() {
                plan.open_module(files, &full[..i], &config)?;
            }
        }
    }
    if !unbuilt.is_empty() {
        return Err(Error::user(format!(
            "the crdgen build cannot reach {}: its file is not compiled into the crate's library or binaries",
            unbuilt
                .iter()
                .map(|v| format!("`{}` ({})", v.attrs.kind, v.location.file.display()))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }

    // The entry points, as binaries of the package.
    let mut entries: Vec<(String, PathBuf)> = Vec::new();
    if let Some((name, src, _)) = lib.as_ref().filter(|_| !lib_calls.is_empty()) {
        plan.append(src, &aggregator(&lib_calls, "pub fn", HOOK));
        let main = meta.package_dir.join(format!("{HOOK}.rs"));
        plan.create(
            &main,
            format!("fn main() {{\n    ::{name}::{HOOK}();\n}}\n"),
        );
        entries.push((format!("{HOOK}_{}", meta.key()), main));
    }
    for (i, calls) in &bin_calls {
        let src = &bins[*i].0;
        let name = format!("{HOOK}_{}_{i}", meta.key());
        // A copy of the binary's root next to it (its `mod`s resolve the
        // same), whose `main` is rsop's. Named as its target, so that where
        // cargo finds binaries by themselves (`src/bin/`) it finds this one
        // as the same target.
        let copy = src.with_file_name(format!("{name}.rs"));
        let text = plan.take_text(src)?;
        let text = without_main(&text).unwrap_or(text);
        plan.create(&copy, text + &aggregator(calls, "fn", "main"));
        entries.push((name, copy));
    }

    let mut copies = plan.finish()?;
    for manifest in &meta.manifests {
        let text = std::fs::read_to_string(manifest).map_err(|e| Error::io("read", manifest, e))?;
        let is_root = manifest.parent() == Some(meta.workspace_root.as_path());
        let parse_error = |e| Error::Parse {
            path: manifest.clone(),
            help: Some("fix the TOML syntax error".into()),
            source: Box::new(e),
        };
        let mut rewritten = rewrite_manifest(
            &text,
            manifest,
            &meta.workspace_root,
            is_root && meta.single,
        )
        .map_err(parse_error)?;
        if *manifest == manifest_path {
            rewritten = add_bins(&rewritten, &meta.package_dir, &entries).map_err(parse_error)?;
        }
        copies.insert(manifest.clone(), rewritten);
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
    let mut out = BTreeMap::new();
    for (name, _) in &entries {
        let executable = build(&meta, &member, name, versions)?;
        let mut run = Command::new(&executable);
        run.current_dir(&meta.package_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let output = run_killing_on_signal(&mut run)?;
        if !output.status.success() {
            let _ = std::io::Write::write_all(&mut std::io::stderr(), &output.stderr);
            return Err(build_failure(
                versions,
                format!("the crdgen binary `{name}` failed; its output is above"),
            ));
        }
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            if let Some(rest) = line.strip_prefix(MARKER)
                && let Some((key, json)) = rest.split_once(' ')
                && let Ok(crd) = serde_json::from_str::<Value>(json)
            {
                out.insert(key.to_string(), crd);
            }
        }
    }
    let missing: Vec<&&Version> = versions
        .iter()
        .filter(|v| !out.contains_key(&v.key()))
        .collect();
    if !missing.is_empty() {
        return Err(build_failure(
            versions,
            format!(
                "the crdgen build printed no CRD for {}",
                missing
                    .iter()
                    .map(|v| format!("`{}` ({})", v.attrs.kind, v.location.file.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(out)
}

/// Compiles the crdgen binary `name` of the mirrored package `member` as
/// `cargo build` compiles the project (the binary itself with its lints
/// capped: its copy of a binary's root lacks the `main` the rest was
/// written for), and returns the executable's path. On failure cargo's
/// messages are shown as cargo shows them.
fn build(meta: &Metadata, member: &Path, name: &str, versions: &[&Version]) -> Result<PathBuf> {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo
        .args(["rustc", "--quiet", "--bin", name, "--manifest-path"])
        .arg(member.join("Cargo.toml"))
        .arg("--message-format=json-render-diagnostics");
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        cargo.arg("--color=always");
    }
    cargo
        .args(["--", "--cap-lints=warn"])
        .env("CARGO_TARGET_DIR", &meta.target_directory)
        // From the package, as the user's own `cargo build` runs: rustup
        // reads `rust-toolchain.toml` and cargo reads `.cargo/config.toml`
        // from the working directory up, not from the manifest's.
        .current_dir(&meta.package_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = run_killing_on_signal(&mut cargo)?;
    let executable = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from));
    match executable {
        Some(path) if output.status.success() => Ok(path),
        _ => {
            let _ = std::io::Write::write_all(&mut std::io::stderr(), &output.stderr);
            let kinds: Vec<String> = versions
                .iter()
                .map(|v| format!("`{}`", v.attrs.kind))
                .collect();
            Err(build_failure(
                versions,
                format!(
                    "the crdgen build of {} failed; cargo's output is above",
                    kinds.join(", ")
                ),
            ))
        }
    }
}

/// The error of a failed crdgen build, with why the kinds were built.
fn build_failure(versions: &[&Version], message: String) -> Error {
    let why = versions
        .iter()
        .find_map(|v| v.needs_code.first())
        .map_or_else(
            || "`--cargo` builds every kind".to_string(),
            |d| format!("{}: {}", d.location, d.message),
        );
    Error::User {
        message,
        help: Some(format!(
            "rsop builds these kinds because their schema needs code to run ({why}); fix the build, or make that construct static"
        )),
    }
}

/// The hook appended to a file that declares `kinds`: it prints each one's
/// CRD, naming it by its path within the file.
fn hook(kinds: &[&Version]) -> String {
    let mut body = String::new();
    for v in kinds {
        let _ = writeln!(
            body,
            "    println!(\"{MARKER}{{}} {{}}\", {:?}, {}::serde_json::to_string(&<self::{} as {}::CustomResourceExt>::crd()).unwrap());",
            v.key(),
            v.attrs.crate_path("k8s_openapi"),
            v.path_in_file,
            v.attrs.crate_path("kube_core"),
        );
    }
    format!(
        "\n// Added by `rsop manifests` to this copy under the target directory.\n\
         #[doc(hidden)]\n#[allow(warnings, clippy::all, clippy::pedantic)]\n\
         pub(crate) fn {HOOK}_kinds() {{\n{body}}}\n"
    )
}

/// A function `signature name` that calls each of `calls`.
fn aggregator(calls: &[String], signature: &str, name: &str) -> String {
    let mut body = String::new();
    for call in calls {
        let _ = writeln!(body, "    {call}();");
    }
    format!(
        "\n// Added by `rsop manifests` to this copy under the target directory.\n\
         /// Prints the CRDs of the crate's kinds.\n#[doc(hidden)]\n\
         #[allow(warnings, clippy::all, clippy::pedantic)]\n{signature} {name}() {{\n{body}}}\n"
    )
}

/// The package manifest with a `[[bin]]` for each crdgen entry point.
fn add_bins(
    text: &str,
    package_dir: &Path,
    entries: &[(String, PathBuf)],
) -> std::result::Result<String, toml_edit::TomlError> {
    let mut doc: toml_edit::DocumentMut = text.parse()?;
    // `bin = [{ .. }]` is as valid as `[[bin]]`: made the latter.
    let mut bins = match doc.remove("bin") {
        Some(toml_edit::Item::ArrayOfTables(tables)) => tables,
        Some(toml_edit::Item::Value(toml_edit::Value::Array(inline))) => inline
            .iter()
            .filter_map(|v| v.as_inline_table().map(|t| t.clone().into_table()))
            .collect(),
        _ => toml_edit::ArrayOfTables::new(),
    };
    for (name, path) in entries {
        let mut bin = toml_edit::Table::new();
        bin.insert("name", toml_edit::value(name.as_str()));
        let relative = path.strip_prefix(package_dir).unwrap_or(path);
        bin.insert("path", toml_edit::value(relative.display().to_string()));
        bin.insert("test", toml_edit::value(false));
        bin.insert("doc", toml_edit::value(false));
        bins.push(bin);
    }
    doc.insert("bin", toml_edit::Item::ArrayOfTables(bins));
    Ok(doc.to_string())
}

/// The files the build changes, by their original path: edits at byte
/// offsets of the original text, text appended, and new files.
#[derive(Default)]
struct Plan {
    edits: BTreeMap<PathBuf, BTreeMap<usize, (usize, String)>>,
    appended: BTreeMap<PathBuf, String>,
    created: BTreeMap<PathBuf, String>,
    parsed: std::collections::HashMap<PathBuf, (String, syn::File)>,
}

impl Plan {
    fn append(&mut self, file: &Path, text: &str) {
        self.appended
            .entry(file.to_path_buf())
            .or_default()
            .push_str(text);
    }

    fn create(&mut self, file: &Path, text: String) {
        self.created.insert(file.to_path_buf(), text);
    }

    fn source(&mut self, file: &Path) -> Result<&(String, syn::File)> {
        if !self.parsed.contains_key(file) {
            let text = std::fs::read_to_string(file).map_err(|e| Error::io("read", file, e))?;
            let parsed = syn::parse_file(&text)
                .map_err(|e| Error::user(format!("cannot parse `{}`: {e}", file.display())))?;
            self.parsed.insert(file.to_path_buf(), (text, parsed));
        }
        Ok(&self.parsed[file])
    }

    /// Makes the module `path` visible from the crate root: its `mod`
    /// declaration, in the file (of `files`, the target's module tree) that
    /// holds its parent, becomes `pub(crate)` unless it is public already.
    fn open_module(
        &mut self,
        files: &BTreeMap<PathBuf, Vec<String>>,
        path: &[String],
        config: &BuildConfig,
    ) -> Result<()> {
        let Some((name, parent)) = path.split_last() else {
            return Ok(());
        };
        // The file of the innermost module that holds the parent.
        let Some((file, module)) = files
            .iter()
            .filter(|(_, m)| parent.starts_with(m))
            .max_by_key(|(_, m)| m.len())
        else {
            return Ok(());
        };
        let file = file.clone();
        let inline = parent[module.len()..].to_vec();
        let (text, parsed) = self.source(&file)?;
        let mut items = &parsed.items;
        for segment in &inline {
            let Some(inner) = items.iter().find_map(|i| match i {
                syn::Item::Mod(m) if ident_is(&m.ident, segment) && config.enabled(&m.attrs) => {
                    m.content.as_ref().map(|(_, inner)| inner)
                }
                _ => None,
            }) else {
                return Ok(());
            };
            items = inner;
        }
        let Some(declaration) = items.iter().find_map(|i| match i {
            syn::Item::Mod(m) if ident_is(&m.ident, name) && config.enabled(&m.attrs) => Some(m),
            _ => None,
        }) else {
            return Ok(());
        };
        let edit = match &declaration.vis {
            syn::Visibility::Public(_) => None,
            syn::Visibility::Inherited => {
                offset(text, declaration.mod_token.span.start()).map(|at| (at, 0))
            }
            syn::Visibility::Restricted(r) => {
                use syn::spanned::Spanned;
                let span = r.span();
                offset(text, span.start())
                    .zip(offset(text, span.end()))
                    .map(|(start, end)| (start, end - start))
            }
        };
        if let Some((at, removed)) = edit {
            let insert = if removed == 0 {
                "pub(crate) "
            } else {
                "pub(crate)"
            };
            self.edits
                .entry(file)
                .or_default()
                .insert(at, (removed, insert.to_string()));
        }
        Ok(())
    }

    /// The text of `file` with its edits and appended text, taken out of
    /// the plan (for a binary's root, whose copy is a new file).
    fn take_text(&mut self, file: &Path) -> Result<String> {
        let original = match self.parsed.get(file) {
            Some((text, _)) => text.clone(),
            None => std::fs::read_to_string(file).map_err(|e| Error::io("read", file, e))?,
        };
        let edits = self.edits.remove(file).unwrap_or_default();
        let mut text = apply(&original, &edits);
        if let Some(tail) = self.appended.remove(file) {
            text.push_str(&tail);
        }
        Ok(text)
    }

    /// Every changed and new file with its text, by original path.
    fn finish(mut self) -> Result<BTreeMap<PathBuf, String>> {
        let mut out = std::mem::take(&mut self.created);
        let changed: BTreeSet<PathBuf> = self
            .edits
            .keys()
            .chain(self.appended.keys())
            .cloned()
            .collect();
        for file in changed {
            let text = self.take_text(&file)?;
            out.insert(file, text);
        }
        Ok(out)
    }
}

fn ident_is(ident: &syn::Ident, name: &str) -> bool {
    let text = ident.to_string();
    text.strip_prefix("r#").unwrap_or(&text) == name
}

/// `text` with `edits` (offset -> (bytes removed, text inserted)) applied.
fn apply(text: &str, edits: &BTreeMap<usize, (usize, String)>) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (&start, (removed, insert)) in edits {
        if start < at || start + removed > text.len() {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(insert);
        at = start + removed;
    }
    out.push_str(&text[at..]);
    out
}

/// The byte offset of a span position (1-based line, 0-based column in
/// characters) in `text`.
fn offset(text: &str, lc: proc_macro2::LineColumn) -> Option<usize> {
    // syn reads a file without its byte order mark.
    let bom = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let start = text
        .split_inclusive('\n')
        .take(lc.line.checked_sub(1)?)
        .map(str::len)
        .sum::<usize>();
    let start = if lc.line == 1 { bom } else { start };
    Some(
        start
            + text
                .get(start..)?
                .chars()
                .take(lc.column)
                .map(char::len_utf8)
                .sum::<usize>(),
    )
}

/// `text` (a binary's root) without its `fn main` items (one per `cfg`, if
/// several), whose lines are kept blank so that messages keep their line
/// numbers; `None` when it has none or does not parse.
fn without_main(text: &str) -> Option<String> {
    use syn::spanned::Spanned;
    let file = syn::parse_file(text).ok()?;
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for main in file.items.iter().filter_map(|i| match i {
        syn::Item::Fn(f) if f.sig.ident == "main" => Some(f),
        _ => None,
    }) {
        let span = main.span();
        let (start, end) = (offset(text, span.start())?, offset(text, span.end())?);
        if start < at {
            return None;
        }
        out.push_str(&text[at..start]);
        out.extend(text[start..end].chars().filter(|c| *c == '\n'));
        at = end;
    }
    if at == 0 {
        return None;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// What `cargo metadata` says about the project.
#[derive(Debug)]
struct Metadata {
    workspace_root: PathBuf,
    target_directory: PathBuf,
    package_dir: PathBuf,
    /// Every workspace member's Cargo.toml, and the root's.
    manifests: BTreeSet<PathBuf>,
    /// The library target's crate name and root file, when it is a Rust
    /// library (a `cdylib` alone cannot be linked by a binary).
    lib: Option<(String, PathBuf)>,
    /// Each binary target's name and root file.
    bins: Vec<(String, PathBuf)>,
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
            // From the package, as the build runs: `.cargo/config.toml` may
            // move the target directory.
            .current_dir(manifest.parent().unwrap_or(root))
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
        let src = |t: &Value| path(&t["src_path"]);
        let name = |t: &Value| t["name"].as_str().unwrap_or_default().replace('-', "_");
        let lib = targets
            .iter()
            .find(|t| {
                kinds(t)
                    .iter()
                    .any(|k| matches!(k.as_str(), "lib" | "rlib" | "dylib" | "proc-macro"))
                    && !kinds(t).iter().any(|k| k == "proc-macro")
            })
            .and_then(|t| Some((name(t), src(t)?)));
        let bins = targets
            .iter()
            .filter(|t| kinds(t).iter().any(|k| k == "bin"))
            .filter_map(|t| Some((name(t), src(t)?)))
            .collect();
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
            lib,
            bins,
            single,
        })
    }

    /// The mirror of the workspace: under the target directory, one per
    /// workspace (a target directory may be shared), kept between runs.
    fn overlay_dir(&self) -> PathBuf {
        self.target_directory.join("rsop-crdgen").join(self.key())
    }

    /// A name for this workspace among those that share the target
    /// directory: its mirror's, and part of its crdgen binaries' names,
    /// which cargo copies to one place for all.
    fn key(&self) -> String {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.workspace_root.hash(&mut hasher);
        format!("{:016x}", hasher.finish())
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
    // Files that exist only in the mirror, such as rsop's crdgen roots.
    for (path, text) in copies {
        if path.parent() != Some(src) || path.exists() {
            continue;
        }
        let Some(name) = path.file_name() else {
            continue;
        };
        let to = dst.join(name);
        kept.insert(name.to_os_string());
        if std::fs::read_to_string(&to).is_ok_and(|old| old == *text) {
            continue;
        }
        if to.is_symlink() || to.is_dir() {
            remove(&to)?;
        }
        std::fs::write(&to, text).map_err(|e| Error::io("write", &to, e))?;
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
    fn a_binary_root_loses_its_main_line_for_line() {
        let text = "//! The operator.\nmod api;\n\n#[tokio::main]\nasync fn main() {\n    run().await;\n}\n\nfn helper() {}\n";
        let out = without_main(text).unwrap();
        assert_eq!(out.lines().count(), text.lines().count(), "{out}");
        assert!(
            !out.contains("main") && out.contains("mod api;") && out.contains("fn helper"),
            "{out}"
        );
        assert!(without_main("fn other() {}\n").is_none());
        // One `main` per platform: both go.
        let text =
            "#[cfg(not(unix))]\nfn main() {}\n#[cfg(unix)]\nfn main() { run(); }\nfn run() {}\n";
        let out = without_main(text).unwrap();
        assert!(!out.contains("main") && out.contains("fn run"), "{out}");
    }

    #[test]
    fn a_byte_order_mark_does_not_shift_the_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib.rs");
        std::fs::write(&lib, "\u{feff}mod a;\npub(super) mod b;\n").unwrap();
        let files = BTreeMap::from([(lib.clone(), Vec::new())]);
        let mut plan = Plan::default();
        for name in ["a", "b"] {
            plan.open_module(&files, &[name.to_string()], &BuildConfig::default())
                .unwrap();
        }
        assert_eq!(
            plan.finish().unwrap()[&lib],
            "\u{feff}pub(crate) mod a;\npub(crate) mod b;\n"
        );
    }

    #[test]
    fn crdgen_binaries_join_the_binaries_in_either_form() {
        let entries = [(
            "__rsop_crdgen_x".to_string(),
            PathBuf::from("/p/__rsop_crdgen.rs"),
        )];
        for manifest in [
            "bin = [{ name = \"op\", path = \"src/op.rs\" }]\n\n[package]\nname = \"p\"\n",
            "[package]\nname = \"p\"\n\n[[bin]]\nname = \"op\"\npath = \"src/op.rs\"\n",
        ] {
            let out = add_bins(manifest, Path::new("/p"), &entries).unwrap();
            let doc: toml_edit::DocumentMut = out.parse().unwrap();
            let names: Vec<&str> = doc["bin"]
                .as_array_of_tables()
                .unwrap()
                .iter()
                .filter_map(|b| b.get("name")?.as_str())
                .collect();
            assert_eq!(names, ["op", "__rsop_crdgen_x"], "{out}");
        }
    }

    #[test]
    fn private_modules_on_the_way_to_a_kind_become_pub_crate() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib.rs");
        std::fs::write(
            &lib,
            "mod a;\npub(super) mod b {\n    mod c {}\n}\npub mod d;\n",
        )
        .unwrap();
        let files = BTreeMap::from([(lib.clone(), Vec::new())]);
        let mut plan = Plan::default();
        let config = BuildConfig::default();
        for path in [&["a"][..], &["b"], &["b", "c"], &["d"]] {
            let path: Vec<String> = path.iter().map(ToString::to_string).collect();
            plan.open_module(&files, &path, &config).unwrap();
        }
        let out = plan.finish().unwrap();
        assert_eq!(
            out[&lib],
            "pub(crate) mod a;\npub(crate) mod b {\n    pub(crate) mod c {}\n}\npub mod d;\n"
        );
    }
}
