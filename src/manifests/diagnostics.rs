//! Problems found in the user's sources. They are collected, not thrown:
//! `rsop manifests` reports every one of them at once, each with its file,
//! line and column, the field path it concerns, and a `help:` line, and
//! writes nothing when there is any.

use std::fmt;
use std::path::PathBuf;

/// A position in a source file (1-based line, 1-based column).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
}

impl Location {
    pub fn new(file: impl Into<PathBuf>, line: usize, column: usize) -> Self {
        Location {
            file: file.into(),
            line,
            column,
        }
    }

    /// Byte `offset` of `text`, the text of `file`, as a line and a column
    /// (in characters).
    pub fn at_offset(file: impl Into<PathBuf>, text: &str, offset: usize) -> Self {
        let before = &text[..offset.min(text.len())];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Location::new(
            file,
            before.matches('\n').count() + 1,
            before[line_start..].chars().count() + 1,
        )
    }

    /// The start of a syn span in `file`.
    pub fn of_span(file: impl Into<PathBuf>, span: proc_macro2::Span) -> Self {
        let start = span.start();
        Location::new(file, start.line, start.column + 1)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// One problem in the sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub location: Location,
    /// What is wrong, cargo style: lowercase, names in backticks.
    pub message: String,
    /// The schema path concerned, such as `HelloApp.spec.replicas`, if any.
    pub field_path: Option<String>,
    /// What to do about it.
    pub help: Option<String>,
    /// The construct is valid Rust whose schema only running code can give
    /// (a hand `JsonSchema` impl, a function, a foreign type): rsop builds
    /// the kind with cargo instead of refusing it, unless `--static` is set.
    pub needs_code: bool,
}

impl Diagnostic {
    pub fn new(location: Location, message: impl Into<String>) -> Self {
        Diagnostic {
            location,
            message: message.into(),
            field_path: None,
            help: None,
            needs_code: false,
        }
    }

    #[must_use]
    pub fn needs_code(mut self) -> Self {
        self.needs_code = true;
        self
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    #[must_use]
    pub fn with_field_path(mut self, path: impl Into<String>) -> Self {
        self.field_path = Some(path.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error: {}", self.message)?;
        write!(f, "  --> {}", self.location)?;
        if let Some(path) = &self.field_path {
            write!(f, "\n  field: `{path}`")?;
        }
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

/// The problems of one run, in the order found; sorted by location on report.
#[derive(Debug, Default)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.items.push(diagnostic);
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// The diagnostics sorted by location, duplicates removed.
    pub fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.items
            .sort_by(|a, b| (&a.location, &a.message).cmp(&(&b.location, &b.message)));
        self.items.dedup();
        self.items
    }
}

/// "Did you mean" for an unknown key: the closest of `candidates`, if any is
/// close enough (Jaro-Winkler similarity above 0.8, as darling uses).
pub fn did_you_mean<'a>(unknown: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(unknown, c), *c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}
