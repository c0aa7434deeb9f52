//! Generated Rust goes through rustfmt, so that names of any length give
//! code `cargo fmt --check` accepts. rustfmt ships with every Rust
//! toolchain; without it the code is written as rendered (it compiles, and
//! `cargo fmt` tidies it).

use std::process::{Command, Stdio};

use crate::{Error, Result};

/// The texts formatted by rustfmt (edition 2024), in one rustfmt process;
/// unchanged when rustfmt is not installed. `names` are for the error a
/// template bug would cause.
pub fn format_all(files: &[(String, String)]) -> Result<Vec<String>> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let dir = tempfile_dir()?;
    let paths: Vec<std::path::PathBuf> = (0..files.len())
        .map(|i| dir.join(format!("f{i}.rs")))
        .collect();
    for (path, (_, text)) in paths.iter().zip(files) {
        std::fs::write(path, text).map_err(|e| Error::io("write", path, e))?;
    }
    let rustfmt = std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into());
    let result = Command::new(rustfmt)
        .args(["--edition", "2024", "--quiet"])
        .args(&paths)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    let texts = match result {
        // No rustfmt: the code is written as rendered.
        Err(_) => Ok(files.iter().map(|(_, t)| t.clone()).collect()),
        Ok(output) if !output.status.success() => Err(Error::Template {
            name: files
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            source: tera::Error::msg(format!(
                "rustfmt rejected the rendered code: {}",
                String::from_utf8_lossy(&output.stderr)
            )),
        }),
        Ok(_) => paths
            .iter()
            .map(|p| std::fs::read_to_string(p).map_err(|e| Error::io("read", p, e)))
            .collect(),
    };
    let _ = std::fs::remove_dir_all(&dir);
    texts
}

/// A fresh private directory under the system's temporary directory.
fn tempfile_dir() -> Result<std::path::PathBuf> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "rsop-fmt-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create directory", &dir, e))?;
    Ok(dir)
}
