//! Command-line arguments, as clap parses them. These `*Args` structs are raw
//! input; each command turns its own into validated options before planning.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Scaffold, derive manifests for, and package Kubernetes operators written
/// in Rust on kube-rs.
#[derive(Debug, Parser)]
#[command(name = "rsop", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a new operator project
    Init(InitArgs),
    /// Generate CRDs and RBAC from the Rust sources, without compiling
    Manifests(ManifestsArgs),
    /// Print a shell completion script to standard output
    Completion(CompletionArgs),
    /// Print rsop's version and the versions of what it generates
    Version,
}

/// License of a new project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum License {
    /// Apache License 2.0
    Apache2,
    /// MIT License
    Mit,
    /// No license file
    None,
}

/// Arguments of `rsop init`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  rsop init --domain example.com\n  \
                  rsop init --domain example.com --project-name memcached-operator --dir memcached-operator")]
pub struct InitArgs {
    /// Domain of the project's API groups: groups are named <group>.<domain>
    #[arg(long, value_name = "DOMAIN")]
    pub domain: String,

    /// Project name (DNS-1123 label); defaults to the directory's name
    #[arg(long, value_name = "NAME")]
    pub project_name: Option<String>,

    /// URL of the project's source repository, written to Cargo.toml
    #[arg(long, value_name = "URL")]
    pub repo: Option<String>,

    /// Copyright owner, written to the license and Cargo.toml
    #[arg(long, value_name = "NAME")]
    pub owner: Option<String>,

    /// License of the project
    #[arg(long, value_enum, default_value_t = License::Apache2)]
    pub license: License,

    /// Watch only the manager's own namespace, with a Role instead of a cluster role
    #[arg(long)]
    pub namespaced: bool,

    /// Lay out API types by group: src/api/<group>/<version>/
    #[arg(long)]
    pub multigroup: bool,

    /// Directory to create the project in (created if missing)
    #[arg(long, value_name = "PATH", default_value = ".")]
    pub dir: PathBuf,

    /// Overwrite an existing project's files
    #[arg(long)]
    pub force: bool,

    /// List the files that would be written, and write none
    #[arg(long)]
    pub dry_run: bool,
}

/// Arguments of `rsop completion`.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `rsop manifests`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  rsop manifests\n  rsop manifests --check   # in CI: fail with a diff when the committed manifests are stale"
)]
pub struct ManifestsArgs {
    /// Write nothing; print a diff of each file that would change and exit 1 if any would
    #[arg(long, conflicts_with = "diff")]
    pub check: bool,

    /// Print a diff of each file that changes, then write
    #[arg(long)]
    pub diff: bool,

    /// Directory of the CRD files, relative to the project root
    #[arg(long, value_name = "DIR", default_value = "config/crd/bases")]
    pub crd_dir: PathBuf,

    /// Directory of role.yaml, relative to the project root
    #[arg(long, value_name = "DIR", default_value = "config/rbac")]
    pub rbac_dir: PathBuf,

    /// The project root (where Cargo.toml is)
    #[arg(long, value_name = "PATH", default_value = ".")]
    pub dir: PathBuf,
}
