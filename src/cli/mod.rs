//! Command-line arguments, as clap parses them. These `*Args` structs are raw
//! input; each command's module in `commands/` turns its own into the
//! core's validated options, and no code below that layer sees them.

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
    /// Add to the project
    #[command(subcommand)]
    Create(CreateCommand),
    /// Change project-wide settings recorded in PROJECT
    Edit(EditArgs),
    /// Bring the project's scaffold to this rsop, keeping your edits
    Update(UpdateArgs),
    /// Generate CRDs and RBAC from the Rust sources, without compiling
    Manifests(ManifestsArgs),
    /// Check the RBAC the project ships (YAML, kustomize, Helm charts) against the
    /// requests its code makes, in any kube-rs operator
    Rbac(RbacArgs),
    /// Package the operator: a one-file installer, an OLM bundle, a Helm chart
    #[command(subcommand)]
    Generate(GenerateCommand),
    /// Get and cache kube-apiserver, etcd and kubectl for API server tests, as
    /// setup-envtest does
    #[command(subcommand)]
    Envtest(EnvtestCommand),
    /// Print a shell completion script to standard output
    Completion(CompletionArgs),
    /// Write rsop's man pages (rsop.1, rsop-init.1, ...) into a directory, for packagers
    #[command(hide = true)]
    Man(ManArgs),
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

    /// Add a scheduled GitHub Actions workflow that runs `rsop update` and
    /// opens a pull request
    #[arg(long)]
    pub autoupdate: bool,

    /// Write Grafana dashboards of the manager's metrics under grafana/
    /// (`--grafana=false` to leave them out)
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_value_t = true, default_missing_value = "true")]
    pub grafana: bool,

    /// Write an end-to-end test suite (tests/e2e, `make test-e2e` on Kind, a
    /// GitHub workflow) that `create api` and `create webhook` extend
    /// (`--e2e=false` to leave it out)
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_value_t = true, default_missing_value = "true")]
    pub e2e: bool,

    /// Write a devcontainer (.devcontainer/) with Rust, Docker, kubectl, Kind
    /// and rsop (`--devcontainer=false` to leave it out)
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_value_t = true, default_missing_value = "true")]
    pub devcontainer: bool,

    /// Create a git repository for the project unless its directory is in
    /// one already; it also keeps the scaffold `rsop update` merges from
    #[arg(long, value_enum, default_value_t = Vcs::Git)]
    pub vcs: Vcs,

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

/// The version control `rsop init` sets up, as `cargo new --vcs` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Vcs {
    Git,
    None,
}

/// Arguments of `rsop update`.
#[derive(Debug, Args)]
#[command(
    after_help = "rsop keeps the scaffold it wrote last in git (refs/rsop/scaffold) and merges from it:\n\
                  the new scaffold's changes arrive, your edits stay, and lines both changed get\n\
                  conflict markers. docs/updating.md tells the whole story.\n\n\
                  Examples:\n  rsop update\n  rsop update --dry-run\n  \
                  rsop update --base v0.1.0   # a project made before rsop recorded its scaffold\n  \
                  rsop update --continue      # once the conflicts are resolved\n  \
                  rsop update --check         # in CI: fail when the scaffold is behind this rsop\n  \
                  rsop update --regenerate /tmp/fresh   # the scaffold alone, from PROJECT"
)]
pub struct UpdateArgs {
    /// The commit that holds the scaffold as rsop wrote it, for a project
    /// made before rsop recorded it (the commit right after `rsop init` and
    /// `rsop create api`)
    #[arg(long, value_name = "REV", conflicts_with_all = ["regenerate", "continue_"])]
    pub base: Option<String>,

    /// Write the scaffold of every command PROJECT records, with this rsop,
    /// into DIR, and nothing else
    #[arg(long, value_name = "DIR", conflicts_with_all = ["check", "continue_", "dry_run", "force"])]
    pub regenerate: Option<PathBuf>,

    /// Once the conflicts of the last update are resolved: derive the
    /// manifests and record the new scaffold
    #[arg(long = "continue", conflicts_with_all = ["check", "dry_run"])]
    pub continue_: bool,

    /// List what would change; write nothing
    #[arg(long, conflicts_with = "check")]
    pub dry_run: bool,

    /// Exit 1 when the scaffold is behind this rsop; write nothing
    #[arg(long)]
    pub check: bool,

    /// Update a work tree with uncommitted changes, saying which of them
    /// the update overwrote
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `rsop completion`.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `rsop man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The directory to write the pages into; created if missing
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// Arguments of `rsop edit`.
#[derive(Debug, Args)]
pub struct EditArgs {
    /// Lay out API types by group (`src/api/<group>/<version>/`) from now on
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub multigroup: Option<bool>,

    /// Add (or, with `=false`, remove) the scheduled workflow that runs
    /// `rsop update` and opens a pull request
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub autoupdate: Option<bool>,

    /// Write (or, with `=false`, remove) the Grafana dashboards under
    /// grafana/; also makes the custom dashboard from
    /// grafana/custom-metrics/config.yaml
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub grafana: Option<bool>,

    /// Write (or, with `=false`, remove) the end-to-end suite: tests/e2e with
    /// a test of each kind, `make test-e2e` and its workflow
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub e2e: Option<bool>,

    /// Write (or, with `=false`, remove) the devcontainer under .devcontainer/
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub devcontainer: Option<bool>,
}

/// Arguments of `rsop manifests`.
#[derive(Debug, Args)]
#[command(
    after_help = "Kinds whose schema needs code to run (a hand-written JsonSchema impl, a schema_with\n\
                  function, a type rsop has no schema for) are built with cargo, and a note names\n\
                  each construct; the others are derived from the sources in milliseconds.\n\n\
                  Examples:\n  rsop manifests\n  rsop manifests --check   # in CI: fail with a diff when the committed manifests are stale\n  \
                  rsop manifests --check --static   # in CI, and never compile"
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

    /// Directory of manifests.yaml, the webhook configurations, relative to the project root
    #[arg(long, value_name = "DIR", default_value = "config/webhook")]
    pub webhook_dir: PathBuf,

    /// Derive from the sources only: fail, listing them, on kinds whose schema needs
    /// code to run, instead of building those with cargo (for CI jobs that must stay fast)
    #[arg(long, conflicts_with = "cargo")]
    pub r#static: bool,

    /// Take every CRD schema from the project's own kube-derive, by building and
    /// running a throwaway crdgen binary (slow; the exact reference)
    #[arg(long)]
    pub cargo: bool,

    /// The project root (where Cargo.toml is)
    #[arg(long, value_name = "PATH", default_value = ".")]
    pub dir: PathBuf,

    /// rsop's self-check: write nothing, derive every CRD both from the
    /// sources and with the project's own kube-derive, print a diff of each
    /// CRD where they differ, and exit 1 if any does
    #[arg(long, hide = true, conflicts_with_all = ["check", "diff", "static", "cargo"])]
    pub verify: bool,

    /// What the role is made from: `markers` alone; `check` the code's
    /// Kubernetes calls against them (a call no rule grants is an error);
    /// `warn` (the same, as warnings); `infer` (the calls and the markers).
    /// Default: `check` in an rsop project, `markers` in any other crate
    #[arg(long, value_enum, value_name = "MODE")]
    pub rbac: Option<RbacMode>,
}

/// Arguments of `rsop rbac`.
#[derive(Debug, Args)]
#[command(
    after_help = "The roles are found wherever the project keeps them: YAML files, kustomize\n\
                  layouts, and Helm charts (rendered with their default values by a `helm` on\n\
                  PATH, else read from their templates). Each workload that runs one of the\n\
                  crate's binaries (by its command, arguments, image, or the image the\n\
                  repository's Dockerfile builds) is checked against the roles bound to its\n\
                  ServiceAccount; a binary's modes (subcommands, flag values) are checked apart.\n\
                  A rule naming nothing the API serves is an error too. No CRD is derived and\n\
                  nothing is compiled or written.\n\n\
                  Exit status: 1 when a request is not granted or a rule names nothing, else 0.\n\n\
                  Examples:\n  rsop rbac\n  rsop rbac --format github   # in a GitHub workflow: annotations on the pull request\n  \
                  rsop rbac --format sarif > rbac.sarif   # for code scanning"
)]
pub struct RbacArgs {
    /// The repository root (where Cargo.toml is, or a folder that holds it)
    #[arg(long, value_name = "PATH", default_value = ".")]
    pub dir: PathBuf,

    /// How to print the findings
    #[arg(long, value_enum, default_value_t = RbacFormat::Text)]
    pub format: RbacFormat,
}

/// What `rsop envtest` does.
#[derive(Debug, Subcommand)]
pub enum EnvtestCommand {
    /// Get a release's binaries (unless cached) and print where they are
    #[command(
        after_help = "VERSION is `latest` (the default), a minor release (`1.34`, \
                  `1.34.x`) or a release (`1.34.1`). A release already cached is used \
                  without asking the index.\n\n\
                  Examples:\n  rsop envtest use 1.34.1\n  \
                  export KUBEBUILDER_ASSETS=\"$(rsop envtest use 1.34.x -p path)\"\n  \
                  source <(rsop envtest use -i -p env)   # offline: the newest cached release"
    )]
    Use(EnvtestUseArgs),
    /// List the cached releases and those the index offers
    #[command(after_help = "Examples:\n  rsop envtest list\n  rsop envtest list -i 1.34")]
    List(EnvtestListArgs),
}

/// Where `rsop envtest` caches and finds the binaries.
#[derive(Debug, Args)]
pub struct EnvtestStoreArgs {
    /// Use only the cached binaries: ask no index, download nothing
    #[arg(short = 'i', long, env = "ENVTEST_INSTALLED_ONLY", value_parser = clap::builder::FalseyValueParser::new())]
    pub installed_only: bool,

    /// The store: setup-envtest's own by default, so that both tools share it
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,

    /// The release index (setup-envtest's format)
    #[arg(long, value_name = "URL", default_value = crate::envtest::DEFAULT_INDEX)]
    pub index: String,

    /// Operating system of the binaries, as Go names it (linux, darwin)
    #[arg(long, value_name = "OS")]
    pub os: Option<String>,

    /// Architecture of the binaries, as Go names it (amd64, arm64)
    #[arg(long, value_name = "ARCH")]
    pub arch: Option<String>,
}

/// Arguments of `rsop envtest use`.
#[derive(Debug, Args)]
pub struct EnvtestUseArgs {
    /// The Kubernetes release
    #[arg(value_name = "VERSION")]
    pub release: Option<String>,

    #[command(flatten)]
    pub store: EnvtestStoreArgs,

    /// What to print: an overview, the binaries' folder, or a line for the
    /// shell that sets `KUBEBUILDER_ASSETS`
    #[arg(short = 'p', long = "print", value_enum, default_value_t = EnvtestPrint::Overview)]
    pub print: EnvtestPrint,

    /// When `KUBEBUILDER_ASSETS` is set, use its folder as it is
    #[arg(long, env = "ENVTEST_USE_ENV", value_parser = clap::builder::FalseyValueParser::new())]
    pub use_env: bool,
}

/// Arguments of `rsop envtest list`.
#[derive(Debug, Args)]
pub struct EnvtestListArgs {
    /// Only the releases that match (`1.34`, `1.34.1`)
    #[arg(value_name = "VERSION")]
    pub release: Option<String>,

    #[command(flatten)]
    pub store: EnvtestStoreArgs,
}

/// `rsop envtest use --print`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EnvtestPrint {
    /// The release, platform and folder, for people
    Overview,
    /// The folder of the binaries alone
    Path,
    /// `export KUBEBUILDER_ASSETS='<folder>'`, for the shell to source
    Env,
}

/// `rsop rbac --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RbacFormat {
    /// Messages with the file and line, for people
    Text,
    /// GitHub Actions workflow commands: annotations on the changed lines
    Github,
    /// SARIF 2.1.0, for code scanning
    Sarif,
}

/// `rsop manifests --rbac`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RbacMode {
    Markers,
    Check,
    Warn,
    Infer,
}

/// What `rsop generate` packages.
#[derive(Debug, Subcommand)]
pub enum GenerateCommand {
    /// Write dist/install.yaml: everything config/default renders, in one file
    Installer(GenerateInstallerArgs),
    /// Write kustomize bases the other generators build on
    #[command(subcommand)]
    Kustomize(KustomizeCommand),
    /// Write an OLM bundle (bundle/, bundle.Dockerfile) from config/manifests
    Bundle(GenerateBundleArgs),
    /// Write a Helm chart (dist/chart) made from what config/default renders
    Helm(GenerateHelmArgs),
}

/// What `rsop generate kustomize` writes.
#[derive(Debug, Subcommand)]
pub enum KustomizeCommand {
    /// Write config/manifests: the `ClusterServiceVersion` base of the OLM bundle, which
    /// you edit; a re-run keeps your edits and adds what new kinds need
    Manifests(OutputModeArgs),
}

/// How a generator writes: the modes `rsop manifests` has, plus --dry-run.
#[derive(Debug, Args)]
pub struct OutputModeArgs {
    /// Write nothing; print a diff of each file that would change and exit 1 if any would
    #[arg(long, conflicts_with_all = ["diff", "dry_run"])]
    pub check: bool,

    /// Print a diff of each file that changes, then write
    #[arg(long, conflicts_with = "dry_run")]
    pub diff: bool,

    /// List what would be written; write nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// Arguments of `rsop generate installer`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  rsop generate installer --img quay.io/example/memcached-operator:v0.1.0\n  \
                  rsop generate installer --check   # in CI: fail with a diff when dist/install.yaml is stale"
)]
pub struct GenerateInstallerArgs {
    /// The manager's image; without it, the image config/manager names
    #[arg(long, value_name = "IMAGE")]
    pub img: Option<String>,

    #[command(flatten)]
    pub mode: OutputModeArgs,
}

/// Arguments of `rsop generate bundle`.
#[derive(Debug, Args)]
#[command(
    // `--version` is the bundle's version here, not rsop's.
    disable_version_flag = true,
    after_help = "Examples:\n  rsop generate kustomize manifests   # once: the CSV base to fill in\n  \
                  rsop generate bundle --version 0.1.0 --channels alpha,stable --default-channel alpha \\\n      --img quay.io/example/memcached-operator:v0.1.0"
)]
pub struct GenerateBundleArgs {
    /// The bundle's semantic version (X.Y.Z); defaults to Cargo.toml's package.version
    #[arg(long, value_name = "X.Y.Z")]
    pub version: Option<String>,

    /// The channels the bundle is published in, separated by commas [default: alpha]
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub channels: Vec<String>,

    /// The channel OLM subscribes to by default; one of --channels
    #[arg(long, value_name = "CHANNEL")]
    pub default_channel: Option<String>,

    /// The OLM package name; defaults to the project name
    #[arg(long, value_name = "NAME")]
    pub package: Option<String>,

    /// The manager's image; without it, the image config/manager names
    #[arg(long, value_name = "IMAGE")]
    pub img: Option<String>,

    #[command(flatten)]
    pub mode: OutputModeArgs,
}

/// Arguments of `rsop generate helm`.
#[derive(Debug, Args)]
#[command(
    after_help = "Chart.yaml and values.yaml are yours once written: re-runs keep them, --force writes them again.\n\n\
                  Examples:\n  rsop generate helm --img quay.io/example/memcached-operator:v0.1.0\n  \
                  rsop generate helm --check   # in CI: fail with a diff when the templates are stale"
)]
pub struct GenerateHelmArgs {
    /// The chart's directory
    #[arg(long, value_name = "DIR", default_value = crate::generate::helm::DEFAULT_OUTPUT_DIR)]
    pub output_dir: PathBuf,

    /// Write Chart.yaml and values.yaml even when they exist, replacing your edits
    #[arg(long)]
    pub force: bool,

    /// The manager's image in a new values.yaml; without it, the image config/manager names
    #[arg(long, value_name = "IMAGE")]
    pub img: Option<String>,

    #[command(flatten)]
    pub mode: OutputModeArgs,
}

impl OutputModeArgs {
    pub fn mode(&self) -> crate::output::Mode {
        use crate::output::Mode;
        if self.check {
            Mode::Check
        } else if self.diff {
            Mode::Diff
        } else if self.dry_run {
            Mode::DryRun
        } else {
            Mode::Write
        }
    }
}

/// What `rsop create` adds.
#[derive(Debug, Subcommand)]
pub enum CreateCommand {
    /// Add an API kind: its types, controller, sample, roles and wiring
    Api(CreateApiArgs),
    /// Add a kind's defaulting, validating or conversion webhook, served by the manager
    Webhook(CreateWebhookArgs),
}

/// Arguments of `rsop create webhook`.
#[derive(Debug, Args)]
#[command(
    // `--version` is the API version here, not rsop's.
    disable_version_flag = true,
    after_help = "Examples:\n  rsop create webhook --group cache --version v1alpha1 --kind Memcached --defaulting --programmatic-validation\n  \
                  rsop create webhook --group cache --version v1alpha1 --kind Memcached --conversion --spoke v1\n  \
                  rsop create webhook --group core --version v1 --kind Pod --defaulting   # a webhook on a Kubernetes kind"
)]
pub struct CreateWebhookArgs {
    /// API group, without the domain (`core`, `apps`, ... for Kubernetes' kinds)
    #[arg(long, value_name = "GROUP")]
    pub group: String,

    /// API version of the kind; with `--conversion`, the hub: the storage version
    #[arg(long, value_name = "VERSION")]
    pub version: String,

    /// Kind, in upper camel case (`Memcached`)
    #[arg(long, value_name = "KIND")]
    pub kind: String,

    /// A mutating webhook that fills in defaults
    #[arg(long)]
    pub defaulting: bool,

    /// A validating webhook that checks creations, updates and deletions
    #[arg(long)]
    pub programmatic_validation: bool,

    /// A conversion webhook between the kind's versions, through `--version` as the hub
    #[arg(long)]
    pub conversion: bool,

    /// The versions converted to and from the hub (default: every other version of the kind)
    #[arg(
        long,
        value_name = "VERSION,...",
        value_delimiter = ',',
        requires = "conversion"
    )]
    pub spoke: Vec<String>,

    /// Generate the webhook's files again if they exist
    #[arg(long)]
    pub force: bool,

    /// List the files that would be written, and write none
    #[arg(long)]
    pub dry_run: bool,
}

/// Arguments of `rsop create api`.
#[derive(Debug, Args)]
#[command(
    // `--version` is the API version here, not rsop's.
    disable_version_flag = true,
    after_help = "Examples:\n  rsop create api --group cache --version v1alpha1 --kind Memcached\n  \
                  rsop create api --group cache --version v1alpha1 --kind Memcached --image memcached:1.6.26-alpine --image-container-port 11211\n  \
                  rsop create api --group apps --version v1 --kind Deployment --resource=false   # a controller on a Kubernetes kind\n  \
                  rsop create api --group monitoring --version v1alpha1 --kind Exporter --owns v1/ConfigMap --watches v1/Pod\n  \
                  rsop create api --external-api-crd certificates.yaml --resource=false   # a controller on another project's kind"
)]
pub struct CreateApiArgs {
    /// API group, without the domain: the kind's group is <group>.<domain>
    #[arg(
        long,
        value_name = "GROUP",
        required_unless_present = "external_api_crd"
    )]
    pub group: Option<String>,

    /// API version, such as v1, v1beta1 or v1alpha1 (with `--external-api-crd`: the CRD's
    /// version to generate types for, if not its storage version)
    #[arg(
        long,
        value_name = "VERSION",
        required_unless_present = "external_api_crd"
    )]
    pub version: Option<String>,

    /// Kind, in upper camel case (`Memcached`; with `--external-api-crd`: the CRD's kind, when
    /// the file holds several)
    #[arg(
        long,
        value_name = "KIND",
        required_unless_present = "external_api_crd"
    )]
    pub kind: Option<String>,

    /// A kind another project defines, from its CRD (a YAML file, or a directory of them): its
    /// Rust types are generated under `src/external/`, and its CRD is left to that project.
    /// Needs `--resource=false`
    #[arg(long, value_name = "PATH_OR_FILE")]
    pub external_api_crd: Option<std::path::PathBuf>,

    /// Generate the kind's types (`--resource=false`: a controller for a kind that exists: the
    /// project's own, or one of Kubernetes', such as `--group apps --version v1 --kind Deployment`)
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub resource: bool,

    /// Generate a controller for the kind
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub controller: bool,

    /// The kind is namespaced (`--namespaced=false`: cluster-scoped)
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub namespaced: bool,

    /// Plural of the kind, if not kube-derive's default
    #[arg(long, value_name = "PLURAL")]
    pub plural: Option<String>,

    /// Container image the controller deploys (kubebuilder's deploy-image): the controller
    /// then owns a Deployment running it with `spec.size` replicas
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,

    /// Container port of the image
    #[arg(long, value_name = "PORT", requires = "image")]
    pub image_container_port: Option<u16>,

    /// Command of the image's container (split on spaces)
    #[arg(long, value_name = "CMD", requires = "image")]
    pub image_container_command: Option<String>,

    /// User ID the image's container runs as
    #[arg(long, value_name = "UID", requires = "image")]
    pub run_as_user: Option<u32>,

    /// Name of the controller (a DNS-1123 label), if not the kind's: one kind can then have
    /// several controllers, each in its own module
    #[arg(long, value_name = "NAME")]
    pub controller_name: Option<String>,

    /// Kinds the controller owns (`apps/v1/Deployment,v1/ConfigMap`): watched, cached, and
    /// routed to their owner through owner references
    #[arg(long, value_name = "GROUP/VERSION/KIND,...", value_delimiter = ',')]
    pub owns: Vec<String>,

    /// Kinds the controller watches without owning them (`v1/Pod`): cached, and mapped to the
    /// objects to reconcile by a function you complete
    #[arg(long, value_name = "GROUP/VERSION/KIND,...", value_delimiter = ',')]
    pub watches: Vec<String>,

    /// Overwrite the kind's files if they exist
    #[arg(long)]
    pub force: bool,

    /// List the files that would be written, and write none
    #[arg(long)]
    pub dry_run: bool,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
