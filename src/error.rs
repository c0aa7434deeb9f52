//! Errors of the library: every failure a command can meet, with the `help:`
//! line the CLI prints under it.
//!
//! Messages follow cargo's style: lowercase, no trailing period, names in
//! backticks. The binary prints the message, then each cause, then the help.

use std::path::{Path, PathBuf};

/// The result type of every fallible function in rsop.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failure, with enough context for the user to act on it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user asked for something that cannot be done as asked.
    #[error("{message}")]
    User {
        message: String,
        help: Option<String>,
    },
    /// A file system operation failed.
    #[error("cannot {action} `{}`", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file rsop reads (PROJECT, Cargo.toml, ...) could not be understood.
    #[error("cannot parse `{}`", path.display())]
    Parse {
        path: PathBuf,
        help: Option<String>,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Problems in the user's sources, each with its location and help.
    #[error("{} in the sources", if .0.len() == 1 { "1 problem".to_string() } else { format!("{} problems", .0.len()) })]
    Diagnostics(Vec<crate::manifests::diagnostics::Diagnostic>),
    /// A built-in template failed to render: a bug in rsop, not in the input.
    #[error("cannot render the built-in template `{name}` (this is a bug in rsop)")]
    Template {
        name: String,
        #[source]
        source: tera::Error,
    },
}

impl Error {
    /// A user error with a message and no help line.
    pub fn user(message: impl Into<String>) -> Self {
        Error::User {
            message: message.into(),
            help: None,
        }
    }

    /// A user error with a `help:` line telling what to do.
    pub fn user_with_help(message: impl Into<String>, help: impl Into<String>) -> Self {
        Error::User {
            message: message.into(),
            help: Some(help.into()),
        }
    }

    /// Wraps an I/O error with the action and the path it concerned.
    pub fn io(action: &'static str, path: impl AsRef<Path>, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    /// The `help:` line printed under the error, if there is one.
    pub fn help(&self) -> Option<&str> {
        match self {
            Error::User { help, .. } | Error::Parse { help, .. } => help.as_deref(),
            Error::Io { .. } | Error::Template { .. } | Error::Diagnostics(_) => None,
        }
    }
}
