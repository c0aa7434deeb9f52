//! Generated Rust goes through rustfmt, so that names of any length give
//! code `cargo fmt --check` accepts. rustfmt ships with every Rust
//! toolchain; without it the code is written as rendered (it compiles, and
//! `cargo fmt` tidies it).

use std::collections::HashMap;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::sync::{LazyLock, Mutex, PoisonError};

use crate::{Error, Result};

/// rustfmt (`$RUSTFMT` if set) for edition 2024, quiet.
fn rustfmt() -> Command {
    let mut command = Command::new(std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into()));
    command.args(["--edition", "2024", "--quiet"]);
    command
}

/// What rustfmt made of each input this process has formatted. A command
/// that scaffolds plans the same files twice (for the project, then for the
/// pristine scaffold it records in git), and rustfmt, a process of its own,
/// is the costliest step of both: the second plan finds its texts here.
static FORMATTED: LazyLock<Mutex<HashMap<Vec<String>, Vec<String>>>> =
    LazyLock::new(Mutex::default);

/// `format` of `texts`, or what it gave for the same texts before.
fn memoized(
    texts: Vec<String>,
    format: impl FnOnce() -> Result<Vec<String>>,
) -> Result<Vec<String>> {
    let done = || FORMATTED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(formatted) = done().get(&texts) {
        return Ok(formatted.clone());
    }
    let formatted = format()?;
    done().insert(texts, formatted.clone());
    Ok(formatted)
}

/// The error of rustfmt refusing what the template `name` rendered, with what it said.
fn rejected(name: &str, stderr: &[u8]) -> Error {
    Error::Template {
        name: name.to_owned(),
        source: tera::Error::msg(format!(
            "rustfmt rejected the rendered code: {}",
            String::from_utf8_lossy(stderr)
        )),
    }
}

/// The texts formatted by rustfmt (edition 2024), in one rustfmt process;
/// unchanged when rustfmt is not installed. `names` are for the error a
/// template bug would cause.
pub fn format_all(files: &[(String, String)]) -> Result<Vec<String>> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let texts = files.iter().map(|(_, text)| text.clone()).collect();
    memoized(texts, || format_files(files))
}

fn format_files(files: &[(String, String)]) -> Result<Vec<String>> {
    let dir = tempfile::Builder::new()
        .prefix("rsop-fmt-")
        .tempdir()
        .map_err(|e| Error::io("create a directory in", std::env::temp_dir(), e))?;
    let paths: Vec<std::path::PathBuf> = (0..files.len())
        .map(|i| dir.path().join(format!("f{i}.rs")))
        .collect();
    // rustfmt takes each file for a crate root and follows its `mod x;` to
    // `x.rs` beside it, which is not there: such a declaration is written as
    // an empty inline module, and put back once formatted.
    for (path, (_, text)) in paths.iter().zip(files) {
        let inlined = text
            .split_inclusive('\n')
            .map(|line| match out_of_line_module(line) {
                Some(declaration) => format!("{declaration} {{}}\n"),
                None => line.to_string(),
            })
            .collect::<String>();
        std::fs::write(path, inlined).map_err(|e| Error::io("write", path, e))?;
    }
    let result = rustfmt()
        .args(&paths)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    // `dir` and its files go when it drops, after they are read.
    match result {
        // No rustfmt: the code is written as rendered.
        Err(_) => Ok(files.iter().map(|(_, t)| t.clone()).collect()),
        Ok(output) if !output.status.success() => {
            let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
            Err(rejected(&names.join(", "), &output.stderr))
        }
        Ok(_) => paths
            .iter()
            .zip(files)
            .map(|(p, (_, text))| {
                let formatted = std::fs::read_to_string(p).map_err(|e| Error::io("read", p, e))?;
                let declared: Vec<&str> = text.lines().filter_map(out_of_line_module).collect();
                Ok(formatted
                    .split_inclusive('\n')
                    .map(|line| {
                        let content = line.trim_end_matches(['\n', '\r']);
                        match content.strip_suffix(" {}") {
                            Some(declaration) if declared.contains(&declaration) => {
                                format!("{declaration};{}", &line[content.len()..])
                            }
                            _ => line.to_string(),
                        }
                    })
                    .collect())
            })
            .collect(),
    }
}

/// `mod tests;` or `pub mod x;` alone on its line: the declaration without
/// its `;`.
fn out_of_line_module(line: &str) -> Option<&str> {
    let declaration = line.trim_end_matches(['\n', '\r']).strip_suffix(';')?;
    let name = declaration
        .strip_prefix("pub mod ")
        .or_else(|| declaration.strip_prefix("mod "))?;
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(declaration)
}

/// Items (functions, for instance) formatted by rustfmt (edition 2024) as
/// they are laid out at the top level of a file, each followed by a blank
/// line, in one rustfmt process fed through stdin. Unchanged when rustfmt is
/// not installed.
pub fn format_items(name: &str, items: &[String]) -> Result<Vec<String>> {
    if items.is_empty() {
        return Ok(Vec::new());
    }
    // Keyed apart from `format_all`'s whole files by the separator.
    let mut key = vec![SEPARATOR.to_string()];
    key.extend_from_slice(items);
    memoized(key, || format_stdin(name, items))
}

fn format_stdin(name: &str, items: &[String]) -> Result<Vec<String>> {
    let text = items.join(&format!("\n{SEPARATOR}\n"));
    let Ok(mut child) = rustfmt()
        .args(["--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        return Ok(items.to_vec());
    };
    // rustfmt reads all of its input before it writes: no deadlock on the pipes.
    let written = match child.stdin.take() {
        Some(mut stdin) => stdin.write_all(text.as_bytes()),
        None => Err(std::io::ErrorKind::BrokenPipe.into()),
    };
    let output = child
        .wait_with_output()
        .map_err(|e| Error::io("run", std::path::Path::new("rustfmt"), e))?;
    if written.is_err() || !output.status.success() {
        return Err(rejected(name, &output.stderr));
    }
    let formatted = String::from_utf8_lossy(&output.stdout);
    let mut out: Vec<String> = formatted
        .split(&format!("\n{SEPARATOR}\n"))
        .map(|item| format!("{}\n\n", item.trim_matches('\n')))
        .collect();
    if out.len() != items.len() {
        // A separator moved: keep the items as rendered rather than guess.
        out = items.to_vec();
    }
    Ok(out)
}

/// A line between items, which rustfmt leaves where it is.
const SEPARATOR: &str = "// rsop: next item";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_declares_its_tests_apart_is_formatted_as_it_stands() {
        let text = "pub fn  run( ) {}\n\n#[cfg(test)]\nmod tests;\npub mod more;\n";
        let formatted = format_all(&[("src/a.rs".into(), text.into())]).unwrap();
        // Without rustfmt the text stays as rendered.
        if Command::new("rustfmt").arg("--version").output().is_ok() {
            assert_eq!(
                formatted,
                ["pub fn run() {}\n\n#[cfg(test)]\nmod tests;\npub mod more;\n"]
            );
        }
    }
}
