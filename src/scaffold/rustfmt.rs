//! Generated Rust goes through rustfmt, so that names of any length give
//! code `cargo fmt --check` accepts. rustfmt ships with every Rust
//! toolchain; without it the code is written as rendered (it compiles, and
//! `cargo fmt` tidies it).

use std::io::Write;
use std::process::{Command, Stdio};

use crate::{Error, Result};

/// `text` formatted by rustfmt (edition 2024), or unchanged when rustfmt is
/// not installed. `name` is the template, for the error a bug would cause.
///
/// # Panics
/// Never: stdin is always piped.
pub fn format(name: &str, text: String) -> Result<String> {
    let rustfmt = std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into());
    let Ok(mut child) = Command::new(rustfmt)
        .args(["--edition", "2024", "--emit", "stdout", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        return Ok(text);
    };
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = text.clone();
    // Write from another thread: rustfmt may fill its stdout pipe before
    // it has read all of its input.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child
        .wait_with_output()
        .map_err(|e| Error::io("run", "rustfmt", e))?;
    let _ = writer.join();
    if !output.status.success() {
        return Err(Error::Template {
            name: name.to_string(),
            source: tera::Error::msg(format!(
                "rustfmt rejected the rendered code: {}",
                String::from_utf8_lossy(&output.stderr)
            )),
        });
    }
    String::from_utf8(output.stdout).map_err(|e| Error::Template {
        name: name.to_string(),
        source: tera::Error::msg(e.to_string()),
    })
}
