//! Insertion markers: named comment lines (`// +rsop:scaffold:controllers`,
//! `# +rsop:scaffold:crd-resources`) that mark where later commands add code.
//!
//! An insert goes just before its marker, indented like it, and is skipped
//! when its lines are already in the file, so re-running a command changes
//! nothing.

use std::path::Path;

use crate::{Error, Result};

/// A named insertion point. Its comment syntax follows the file it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    name: &'static str,
}

impl Marker {
    pub const fn new(name: &'static str) -> Self {
        Marker { name }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The marker line's text (trimmed) in the given file.
    pub fn comment_for(&self, path: &Path) -> String {
        let prefix = match path.extension().and_then(|e| e.to_str()) {
            Some("rs") => "//",
            _ => "#",
        };
        format!("{prefix} +rsop:scaffold:{}", self.name)
    }

    /// Inserts `fragment` before the marker line of `text`, unless every line
    /// of it is already there in sequence.
    pub fn insert(&self, path: &Path, text: &str, fragment: &str) -> Result<String> {
        let comment = self.comment_for(path);
        let lines: Vec<&str> = text.lines().collect();
        let Some(at) = lines.iter().position(|line| line.trim() == comment) else {
            return Err(Error::user_with_help(
                format!("`{}` has no `{comment}` marker line", path.display()),
                format!(
                    "rsop inserts new entries just before that line; put it back on a line \
                     of its own where the entries belong (see a freshly generated project), \
                     or add this by hand:\n{fragment}"
                ),
            ));
        };
        if contains_sequence(&lines, fragment) {
            return Ok(text.to_string());
        }
        let marker_line = lines[at];
        let indent = &marker_line[..marker_line.len() - marker_line.trim_start().len()];
        let mut out = String::with_capacity(text.len() + fragment.len() + 64);
        for line in &lines[..at] {
            out.push_str(line);
            out.push('\n');
        }
        for line in fragment.lines() {
            if !line.trim().is_empty() {
                out.push_str(indent);
                out.push_str(line);
            }
            out.push('\n');
        }
        for line in &lines[at..] {
            out.push_str(line);
            out.push('\n');
        }
        if !text.ends_with('\n') {
            out.pop();
        }
        Ok(out)
    }
}

impl Marker {
    /// Inserts the one-line `fragment` into the block of lines just above
    /// the marker, at its sorted place, unless it is already there. For
    /// declarations rustfmt sorts (`pub mod a;`, `pub use a::*;`), so that
    /// any order of commands gives a rustfmt-clean file.
    pub fn insert_sorted(&self, path: &Path, text: &str, fragment: &str) -> Result<String> {
        let comment = self.comment_for(path);
        let lines: Vec<&str> = text.lines().collect();
        let Some(at) = lines.iter().position(|line| line.trim() == comment) else {
            return self.insert(path, text, fragment);
        };
        if contains_sequence(&lines, fragment) {
            return Ok(text.to_string());
        }
        let mut start = at;
        while start > 0
            && !lines[start - 1].trim().is_empty()
            && !lines[start - 1].trim_start().starts_with("//")
        {
            start -= 1;
        }
        let wanted = fragment.trim();
        let pos = (start..at)
            .find(|&i| lines[i].trim() > wanted)
            .unwrap_or(at);
        let marker_line = lines[at];
        let indent = &marker_line[..marker_line.len() - marker_line.trim_start().len()];
        let mut out: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
        out.insert(pos, format!("{indent}{wanted}"));
        let mut joined = out.join("\n");
        if text.ends_with('\n') {
            joined.push('\n');
        }
        Ok(joined)
    }
}

/// Whether the non-blank lines of `fragment`, trimmed, occur consecutively
/// among the non-blank trimmed lines of the file.
fn contains_sequence(lines: &[&str], fragment: &str) -> bool {
    let needle: Vec<&str> = fragment
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if needle.is_empty() {
        return true;
    }
    let hay: Vec<&str> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    hay.windows(needle.len()).any(|w| w == needle.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKER: Marker = Marker::new("things");

    #[test]
    fn inserts_before_the_marker_with_its_indentation() {
        let text = "fn f() {\n    // +rsop:scaffold:things\n}\n";
        let out = MARKER
            .insert(Path::new("a.rs"), text, "one();\ntwo();")
            .unwrap();
        assert_eq!(
            out,
            "fn f() {\n    one();\n    two();\n    // +rsop:scaffold:things\n}\n"
        );
    }

    #[test]
    fn is_idempotent() {
        let text = "resources:\n- a.yaml\n# +rsop:scaffold:things\n";
        let once = MARKER
            .insert(Path::new("k.yaml"), text, "- b.yaml")
            .unwrap();
        let twice = MARKER
            .insert(Path::new("k.yaml"), &once, "- b.yaml")
            .unwrap();
        assert_eq!(once, twice);
        assert_eq!(
            once,
            "resources:\n- a.yaml\n- b.yaml\n# +rsop:scaffold:things\n"
        );
    }

    #[test]
    fn uses_the_comment_syntax_of_the_file() {
        let err = MARKER
            .insert(Path::new("x.yaml"), "// +rsop:scaffold:things\n", "- a")
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("`x.yaml` has no `# +rsop:scaffold:things` marker line"),
            "{err}"
        );
    }

    #[test]
    fn sorted_inserts_keep_the_block_sorted() {
        let text = "//! Doc.\n\npub mod b;\n// +rsop:scaffold:things\n";
        let once = MARKER
            .insert_sorted(Path::new("m.rs"), text, "pub mod a;")
            .unwrap();
        let twice = MARKER
            .insert_sorted(Path::new("m.rs"), &once, "pub mod c;")
            .unwrap();
        assert_eq!(
            twice,
            "//! Doc.\n\npub mod a;\npub mod b;\npub mod c;\n// +rsop:scaffold:things\n"
        );
        assert_eq!(
            MARKER
                .insert_sorted(Path::new("m.rs"), &twice, "pub mod b;")
                .unwrap(),
            twice
        );
    }

    #[test]
    fn keeps_a_missing_final_newline_missing() {
        let out = MARKER
            .insert(Path::new("a.rs"), "// +rsop:scaffold:things", "x();")
            .unwrap();
        assert_eq!(out, "x();\n// +rsop:scaffold:things");
    }
}
