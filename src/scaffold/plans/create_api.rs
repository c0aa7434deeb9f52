//! `rsop create api`: one API kind's types, controller, sample and roles,
//! wired into the project at its markers, then the manifests derived from
//! the resulting tree, all in one plan.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use heck::ToSnakeCase;

use crate::manifests::{
    self, Derivation, ManifestsOptions, diagnostics::Diagnostics, read::source::Sources,
};
use crate::output::{Disk, FileChange};
use crate::project::k8s_kinds::K8sKind;
use crate::project::{Project, Resource, names};
use crate::scaffold::external::ExternalKind;
use crate::scaffold::{self, IfExists, Marker, Plan, TomlEdit, e2e};
use crate::templates::Templates;
use crate::{Error, Result};

/// The `manager` binary, where each controller is registered with the manager.
pub const MAIN: &str = "src/main.rs";

pub const MODULES: Marker = Marker::new("modules");
pub const API_MODULES: Marker = Marker::new("api-modules");
pub const KINDS: Marker = Marker::new("kinds");
pub const KIND_EXPORTS: Marker = Marker::new("kind-exports");
pub const CONTROLLER_MODULES: Marker = Marker::new("controller-modules");
pub const CONTROLLERS: Marker = Marker::new("controllers");
pub const CRD_RESOURCES: Marker = Marker::new("crd-resources");
pub const SAMPLES: Marker = Marker::new("samples");
pub const RBAC_RESOURCES: Marker = Marker::new("rbac-resources");
/// Where the kinds' envtest modules are declared, in [`ENVTEST_MAIN`].
pub const ENVTEST_MODULES: Marker = Marker::new("envtest-modules");
/// The entry of the tests against a real API server (`tests/envtest/`).
pub const ENVTEST_MAIN: &str = "tests/envtest/main.rs";

/// Validated input of `rsop create api`; see `commands::create_api` for
/// the rules.
#[derive(Debug, Clone)]
pub struct CreateApiOptions {
    pub root: PathBuf,
    pub project: Project,
    pub resource: Resource,
    pub image: Option<ImageOptions>,
    /// Another version of this group and kind already exists: this one is
    /// not the storage version.
    pub additional_version: bool,
    /// Only the controller is new (`--resource=false`): the types exist.
    pub controller_only: bool,
    pub force: bool,
    /// The kinds of `--owns` and `--watches`.
    pub related: Vec<Related>,
    /// `--external-api-crd`: the types of another project's kind.
    pub external: Option<ExternalTypes>,
}

/// The types generated from another project's CRD.
#[derive(Debug, Clone)]
pub struct ExternalTypes {
    pub kind: ExternalKind,
    /// Write them, replacing those of an earlier run (the first run, or
    /// `--force`); else the project's are kept.
    pub regenerate: bool,
    /// `--controller=false`: the types alone, whatever controller PROJECT
    /// records for the kind.
    pub types_only: bool,
}

/// A kind the controller owns (`--owns`) or watches (`--watches`), as the
/// templates name it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Related {
    pub kind: String,
    /// `k8s_openapi::api::core::v1::Pod`.
    pub rust_path: String,
    /// `apps/v1/Deployment`, `v1/Pod`.
    pub reference: String,
    /// The group as an RBAC marker names it (`core` for the legacy group).
    pub rbac_group: String,
    pub plural: String,
    pub namespaced: bool,
    /// `--owns` (else `--watches`).
    pub owned: bool,
    /// `config_map`: the kind in snake case, for function names.
    pub singular: String,
    /// `config_maps`: the field of the controller's state that caches them.
    pub field: String,
    /// A kind of the project's own, whose types have no `Default`: the
    /// tests make an object of it from JSON.
    pub own: bool,
    /// Its types are in the crate (`crate::...`): imported with the
    /// crate's own modules.
    pub local: bool,
}

impl Related {
    /// A Kubernetes kind.
    pub fn new(k: &K8sKind, owned: bool) -> Self {
        Self::with(
            k.kind,
            k.rust_path(),
            k.reference(),
            k.group,
            k.plural,
            k.namespaced,
            owned,
        )
    }

    /// A kind of the project's PROJECT file: its own, or an external one.
    pub fn of_project(project: &Project, r: &Resource, owned: bool) -> Self {
        let module = match &r.path {
            Some(path) => path.clone(),
            None => Layout::new(project, r).api_module,
        };
        let group = r.full_group(&project.domain);
        let mut related = Self::with(
            &r.kind,
            format!("{module}::{}", r.kind),
            format!("{group}/{}/{}", r.version, r.kind),
            &group,
            &r.plural,
            r.namespaced,
            owned,
        );
        related.own = r.api;
        related.local = related.rust_path.starts_with("crate::");
        related
    }

    fn with(
        kind: &str,
        rust_path: String,
        reference: String,
        rbac_group: &str,
        plural: &str,
        namespaced: bool,
        owned: bool,
    ) -> Self {
        let singular = kind.to_snake_case();
        // `Endpoints` is its own plural.
        let field = if plural == kind.to_ascii_lowercase() {
            singular.clone()
        } else {
            names::to_plural(&singular)
        };
        Related {
            kind: kind.to_string(),
            rust_path,
            reference,
            rbac_group: rbac_group.to_string(),
            plural: plural.to_string(),
            namespaced,
            owned,
            singular,
            field,
            own: false,
            local: false,
        }
    }
}

/// `--image` and its companions.
#[derive(Debug, Clone)]
pub struct ImageOptions {
    pub image: String,
    pub container_port: Option<u16>,
    pub command: Vec<String>,
    pub run_as_user: u32,
}

/// Name lengths (in bytes) within which the kind's Rust templates render
/// exactly as rustfmt lays them out, so that `create api` needs no rustfmt
/// process: `layout_tests` sweeps every length in these ranges through
/// `rustfmt --check`. Longer names, and container commands (whose layout
/// depends on their words), go through rustfmt.
pub(crate) struct LayoutBounds {
    pub kind: usize,
    pub plural: usize,
    pub project_name: usize,
    pub group_full: usize,
    pub version: usize,
    pub image: usize,
}

pub(crate) const LAYOUT_BOUNDS: LayoutBounds = LayoutBounds {
    kind: 20,
    plural: 40,
    // Every project name rsop accepts.
    project_name: names::MAX_PROJECT_NAME_LEN,
    group_full: 56,
    version: 12,
    image: 70,
};

/// rustfmt's `max_width`: `main`'s registration of the controller keeps its
/// layout while its lines, `        .controller(<module>::run)` and
/// `        .shard::<<kind>>();`, fit.
const MAX_WIDTH: usize = 100;

/// Whether the rendered templates need no rustfmt (see [`LAYOUT_BOUNDS`]).
fn layout_stable(opts: &CreateApiOptions, layout: &Layout) -> bool {
    let b = &LAYOUT_BOUNDS;
    let r = &opts.resource;
    // A Kubernetes kind's controller and the watches of related kinds are
    // not swept: they always go through rustfmt.
    r.path.is_none()
        && opts.related.is_empty()
        && registration(opts, layout)
            .lines()
            .all(|line| 4 + line.len() <= MAX_WIDTH)
        && r.kind.len() <= b.kind
        && r.plural.len() <= b.plural
        && opts.project.project_name.len() <= b.project_name
        && names::group_full(&r.group, &opts.project.domain).len() <= b.group_full
        && r.version.len() <= b.version
        && opts
            .image
            .as_ref()
            .is_none_or(|i| i.image.len() <= b.image && i.command.is_empty())
}

/// Paths of the kind's Rust modules in this project's layout.
struct Layout {
    /// `src/api/<version>` or `src/api/<group>/<version>`.
    api_dir: String,
    /// `crate::api::v1` or `crate::api::cache::v1`.
    api_module: String,
    /// `src/controllers` or `src/controllers/<group>`.
    controllers_dir: String,
    controller_module: String,
}

impl Layout {
    fn new(project: &Project, r: &Resource) -> Self {
        let group = r.group_module();
        if project.multigroup {
            Layout {
                api_dir: format!("src/api/{group}/{}", r.version),
                api_module: format!("crate::api::{group}::{}", r.version),
                controllers_dir: format!("src/controllers/{group}"),
                controller_module: format!(
                    "crate::controllers::{group}::{}",
                    r.controller_module()
                ),
            }
        } else {
            Layout {
                api_dir: format!("src/api/{}", r.version),
                api_module: format!("crate::api::{}", r.version),
                controllers_dir: "src/controllers".into(),
                controller_module: format!("crate::controllers::{}", r.controller_module()),
            }
        }
    }
}

/// The template context of one kind.
fn context(opts: &CreateApiOptions, layout: &Layout) -> tera::Context {
    let project = &opts.project;
    let r = &opts.resource;
    let mut ctx = super::init::context(project, "", None);
    ctx.insert("group", &r.group);
    let group_full = names::group_full(&r.group, &project.domain);
    // A protected group's CRD needs the approval annotation, or `make install`
    // fails; scaffold the value the API server accepts for an API not yet
    // reviewed, with a TODO, as Kubernetes' sample-controller does.
    if names::is_protected_group(&group_full) {
        ctx.insert("api_approval_annotation", names::API_APPROVED_ANNOTATION);
        ctx.insert("api_approval", names::API_UNAPPROVED_VALUE);
    } else {
        ctx.insert("api_approval", &false);
    }
    ctx.insert("group_full", &group_full);
    ctx.insert("version", &r.version);
    ctx.insert("kind", &r.kind);
    ctx.insert("kind_snake", &r.kind.to_snake_case());
    ctx.insert("kind_lower", &r.kind.to_ascii_lowercase());
    ctx.insert("plural", &r.plural);
    ctx.insert(
        "default_plural",
        &(r.plural == names::to_plural(&r.kind.to_ascii_lowercase())),
    );
    ctx.insert("namespaced", &r.namespaced);
    ctx.insert("project_namespaced", &project.namespaced);
    ctx.insert("storage", &!opts.additional_version);
    ctx.insert("api_module", &layout.api_module);
    ctx.insert("controller_module", &layout.controller_module);
    ctx.insert("controller_name", &r.controller_name());
    ctx.insert("k8s_kind", &r.path.is_some());
    ctx.insert("external", &r.external);
    ctx.insert("external_group", &r.full_group(&project.domain));
    if let Some(path) = &r.path {
        // A Kubernetes kind or another project's: its group is not under
        // the project's domain.
        let rbac_group = r.full_group(&project.domain);
        ctx.insert("kind_path", &format!("{path}::{}", r.kind));
        ctx.insert("api_version", &names::api_version(&rbac_group, &r.version));
        ctx.insert("rbac_group", &rbac_group);
        ctx.insert(
            "relation_label",
            &format!("{}/{}", project.domain, r.controller_name()),
        );
    } else {
        ctx.insert(
            "relation_label",
            &format!("{group_full}/{}", r.kind.to_ascii_lowercase()),
        );
    }
    let owns: Vec<&Related> = opts.related.iter().filter(|x| x.owned).collect();
    let watches: Vec<&Related> = opts.related.iter().filter(|x| !x.owned).collect();
    ctx.insert("related", &opts.related);
    ctx.insert("owns", &owns);
    ctx.insert("watches", &watches);
    // The envtest suite reaches the kind and its controller from outside the crate.
    ctx.insert("test_kind_path", &e2e::kind_path(project, r));
    ctx.insert(
        "test_controller_module",
        &e2e::from_outside(project, &layout.controller_module),
    );
    ctx.insert("controller_fn", &r.controller_module());
    ctx.insert("sample_path", &e2e::sample_path(r));
    ctx.insert("watch", if r.namespaced { "Some(&ns)" } else { "None" });
    if let Some(image) = &opts.image {
        ctx.insert("image", &image.image);
        ctx.insert("container_port", &image.container_port);
        ctx.insert("container_command", &image.command);
        ctx.insert("run_as_user", &image.run_as_user);
    }
    ctx
}

/// Plans the kind's files and inserts (without the manifests).
/// The kind's Rust files on their way through rustfmt, which runs in the
/// background while the rest of the plan is resolved and the manifests are
/// derived (parsing does not need the formatted text).
#[derive(Debug)]
pub struct Formatting {
    paths: Vec<PathBuf>,
    /// The manager's lines for the kind's controller (its start, its
    /// sharding), each formatted as the body of a function after the files.
    manager_lines: Vec<String>,
    job: Option<std::thread::JoinHandle<Result<Vec<String>>>>,
}

impl Drop for Formatting {
    /// Waits for rustfmt even when the command fails before using its
    /// output, so that its temporary files are gone when rsop exits.
    fn drop(&mut self) {
        if let Some(job) = self.job.take() {
            let _ = job.join();
        }
    }
}

impl Formatting {
    /// Puts the formatted texts into `changes`.
    pub fn finish(mut self, changes: &mut [FileChange]) -> Result<()> {
        let Some(job) = self.job.take() else {
            return Ok(());
        };
        let texts = job.join().map_err(|_| Error::Template {
            name: "create-api".into(),
            source: tera::Error::msg("the rustfmt thread panicked"),
        })??;
        let mut texts = texts.into_iter();
        for (path, text) in self.paths.iter().zip(texts.by_ref()) {
            if let Some(change) = changes.iter_mut().find(|c| &c.path == path) {
                change.after = text;
            }
        }
        for (line, wrapped) in self.manager_lines.iter().zip(texts) {
            if let Some(change) = changes.iter_mut().find(|c| c.path == Path::new(MAIN)) {
                let body: Vec<&str> = wrapped.lines().collect();
                let formatted = body[1..body.len().saturating_sub(1)].join("\n");
                change.after = change.after.replace(line.as_str(), &formatted);
            }
        }
        Ok(())
    }
}

/// Refuses a controller module named `mod`, which would be
/// `src/controllers/mod.rs`, the list of the controllers.
fn refuse_helper_names(kind: &str, controller: &str, renamable: bool) -> Result<()> {
    if controller != "mod" {
        return Ok(());
    }
    let help = if renamable {
        format!(
            "give the controller a module of its own with `--controller-name {controller}-controller`"
        )
    } else {
        format!("name the kind otherwise (`{kind}Set` or `{kind}Policy`, say)")
    };
    Err(crate::Error::user_with_help(
        format!(
            "the controller module `{controller}` would be `src/controllers/{controller}.rs`, which rsop's own module list holds"
        ),
        help,
    ))
}

/// Plans the kind's files and inserts (without the manifests); the kind's
/// Rust files are planned as rendered and formatted by the returned job.
pub fn plan(opts: &CreateApiOptions, templates: &Templates) -> Result<(Plan, Formatting)> {
    let r = &opts.resource;
    let layout = Layout::new(&opts.project, r);
    let ctx = context(opts, &layout);
    let kind_file = r.kind.to_snake_case();
    let controller_file = r.controller_module();
    let controller = r.controller && !opts.external.as_ref().is_some_and(|e| e.types_only);
    // In a multigroup project the controller lives in its group's folder.
    if controller && !opts.project.multigroup {
        // `--controller-name` is for kinds defined elsewhere.
        let renamable = r.path.is_some() || opts.external.is_some();
        refuse_helper_names(&r.kind, &controller_file, renamable)?;
    }
    let if_exists = IfExists::from_force(opts.force);
    let mut plan = Plan::new();
    let render = |name: &str| templates.render(&format!("create-api/{name}.tera"), &ctx);
    // The kind's types and controller carry its names, whose lengths change
    // how rustfmt lays the code out: they go through rustfmt together.
    let mut formatted: Vec<(String, String)> = Vec::new();
    let mut kind_files: Vec<(String, IfExists)> = Vec::new();

    if r.api && !opts.controller_only {
        plan.insert_sorted("src/lib.rs", MODULES, "pub mod api;");
        plan.create("src/api/mod.rs", render("src/api/mod.rs")?, IfExists::Keep);
        if opts.project.multigroup {
            let group = r.group.replace('-', "_");
            plan.insert_sorted("src/api/mod.rs", API_MODULES, format!("pub mod {group};"));
            plan.create(
                format!("src/api/{group}/mod.rs"),
                render("src/api/group/mod.rs")?,
                IfExists::Keep,
            );
            plan.insert_sorted(
                format!("src/api/{group}/mod.rs"),
                API_MODULES,
                format!("pub mod {};", r.version),
            );
        } else {
            plan.insert_sorted(
                "src/api/mod.rs",
                API_MODULES,
                format!("pub mod {};", r.version),
            );
        }
        let version_mod = format!("{}/mod.rs", layout.api_dir);
        plan.create(
            &version_mod,
            render("src/api/version/mod.rs")?,
            IfExists::Keep,
        );
        plan.insert_sorted(&version_mod, KINDS, format!("pub mod {kind_file};"));
        plan.insert_sorted(
            &version_mod,
            KIND_EXPORTS,
            format!("pub use {kind_file}::*;"),
        );
        let types = if opts.image.is_some() {
            "src/api/version/kind_image.rs"
        } else {
            "src/api/version/kind.rs"
        };
        formatted.push((types.to_string(), render(types)?));
        kind_files.push((format!("{}/{kind_file}.rs", layout.api_dir), if_exists));

        let sample = format!(
            "{}_{}_{}.yaml",
            r.group,
            r.version,
            r.kind.to_ascii_lowercase()
        );
        plan.create(
            format!("config/samples/{sample}"),
            render(if opts.image.is_some() {
                "sample_image.yaml"
            } else {
                "sample.yaml"
            })?,
            if_exists,
        );
        plan.insert(
            "config/samples/kustomization.yaml",
            SAMPLES,
            format!("- {sample}"),
        );
        plan.insert(
            "config/crd/kustomization.yaml",
            CRD_RESOURCES,
            format!(
                "- bases/{}_{}.yaml",
                names::group_full(&r.group, &opts.project.domain),
                r.plural
            ),
        );
        // The roles are per kind: a second version shares the first's.
        let roles_if_exist = if opts.additional_version {
            IfExists::Keep
        } else {
            if_exists
        };
        for role in ["admin", "editor", "viewer"] {
            let file = format!("{kind_file}_{role}_role.yaml");
            plan.create(
                format!("config/rbac/{file}"),
                render(&format!("{role}_role.yaml"))?,
                roles_if_exist,
            );
            plan.insert(
                "config/rbac/kustomization.yaml",
                RBAC_RESOURCES,
                format!("- {file}"),
            );
        }
    }
    if let Some(external) = &opts.external {
        let k = &external.kind;
        let group = k.group_module();
        plan.insert_sorted("src/lib.rs", MODULES, "pub mod external;");
        plan.create(
            "src/external/mod.rs",
            render("src/external/mod.rs")?,
            IfExists::Keep,
        );
        plan.insert_sorted(
            "src/external/mod.rs",
            API_MODULES,
            format!("pub mod {group};"),
        );
        let group_mod = format!("src/external/{group}/mod.rs");
        plan.create(
            &group_mod,
            render("src/external/group/mod.rs")?,
            IfExists::Keep,
        );
        plan.insert_sorted(&group_mod, API_MODULES, format!("pub mod {};", k.version));
        let version_mod = format!("src/external/{group}/{}/mod.rs", k.version);
        plan.create(
            &version_mod,
            render("src/external/version/mod.rs")?,
            IfExists::Keep,
        );
        plan.insert_sorted(&version_mod, KINDS, format!("pub mod {kind_file};"));
        plan.insert_sorted(
            &version_mod,
            KIND_EXPORTS,
            format!("pub use {kind_file}::*;"),
        );
        if external.regenerate {
            formatted.push((k.source.display().to_string(), k.code.clone()));
            kind_files.push((
                format!("src/external/{group}/{}/{kind_file}.rs", k.version),
                if_exists,
            ));
        }
    }
    if controller {
        plan.insert_sorted("src/lib.rs", MODULES, "pub mod controllers;");
        plan.create(
            "src/controllers/mod.rs",
            render("src/controllers/mod.rs")?,
            IfExists::Keep,
        );
        if opts.project.multigroup {
            let group = r.group_module();
            plan.insert_sorted(
                "src/controllers/mod.rs",
                CONTROLLER_MODULES,
                format!("pub mod {group};"),
            );
            let group_mod = format!("{}/mod.rs", layout.controllers_dir);
            plan.create(
                &group_mod,
                render("src/controllers/group/mod.rs")?,
                IfExists::Keep,
            );
            plan.insert_sorted(
                &group_mod,
                CONTROLLER_MODULES,
                format!("pub mod {controller_file};"),
            );
        } else {
            plan.insert_sorted(
                "src/controllers/mod.rs",
                CONTROLLER_MODULES,
                format!("pub mod {controller_file};"),
            );
        }
        let controller = if opts.image.is_some() {
            "src/controllers/kind_image.rs"
        } else if r.path.is_some() {
            "src/controllers/kind_k8s.rs"
        } else {
            "src/controllers/kind.rs"
        };
        formatted.push((controller.to_string(), render(controller)?));
        kind_files.push((
            format!("{}/{controller_file}.rs", layout.controllers_dir),
            if_exists,
        ));
        // The tests sit apart (`mod tests;`), so that the file the user edits
        // holds the controller alone.
        let tests = format!("{}/tests.rs", controller.trim_end_matches(".rs"));
        formatted.push((tests.clone(), render(&tests)?));
        kind_files.push((
            format!("{}/{controller_file}/tests.rs", layout.controllers_dir),
            if_exists,
        ));
        plan.insert(MAIN, CONTROLLERS, registration(opts, &layout));
    }
    if e2e::extends(&opts.project, &opts.root)
        && let Some(test) = e2e::sample_test(templates, &opts.project, r)?
    {
        e2e::insert_tests(&mut plan, &[test])?;
    }
    // The kind's tests against a real API server, in a project that has the suite: every project
    // since rsop made one, and older ones once `rsop update` brings it.
    if controller && e2e::has_sample(r) && opts.root.join(ENVTEST_MAIN).is_file() {
        let stem = e2e::stem(r);
        plan.insert_sorted(ENVTEST_MAIN, ENVTEST_MODULES, format!("mod {stem};"));
        let tests = if opts.image.is_some() {
            "tests/envtest/kind_image.rs"
        } else {
            "tests/envtest/kind.rs"
        };
        formatted.push((tests.to_string(), render(tests)?));
        kind_files.push((format!("tests/envtest/{stem}.rs"), if_exists));
    }
    let mut paths = Vec::with_capacity(kind_files.len());
    for ((path, if_exists), (_, text)) in kind_files.into_iter().zip(&formatted) {
        paths.push(PathBuf::from(&path));
        plan.create(path, text.clone(), if_exists);
    }
    let fast = layout_stable(opts, &layout);
    // The registration in `main` is formatted in a function body of its indentation, then put in
    // place of the inserted one.
    let manager_lines: Vec<String> = if !fast && controller {
        vec![indented(&registration(opts, &layout))]
    } else {
        Vec::new()
    };
    for line in &manager_lines {
        formatted.push((MAIN.into(), format!("fn main() {{\n{line}\n}}\n")));
    }
    let job =
        (!fast).then(|| std::thread::spawn(move || scaffold::rustfmt::format_all(&formatted)));
    for edit in cargo_edits(opts) {
        plan.edit_toml("Cargo.toml", edit);
    }
    scaffold::runtime::plan(&mut plan)?;
    let mut project = opts.project.clone();
    // A kind made again with `--force` keeps its place, so that an unchanged
    // project's PROJECT file stays byte for byte the same.
    match project.resources.iter_mut().find(|x| x.same_entry(r)) {
        // Its webhooks stay: `create api` does not touch them.
        Some(existing) => {
            let webhooks = existing.webhooks.take();
            *existing = r.clone();
            existing.webhooks = webhooks;
        }
        None => project.resources.push(r.clone()),
    }
    plan.save_project(project);
    Ok((
        plan,
        Formatting {
            paths,
            manager_lines,
            job,
        },
    ))
}

/// The lines of `main` that register the kind's controller with the manager, and give the
/// manager its kind to shard; laid out as rustfmt lays them out (a chain too wide for a line).
fn registration(opts: &CreateApiOptions, layout: &Layout) -> String {
    let controller = e2e::from_outside(&opts.project, &layout.controller_module);
    let kind = e2e::kind_path(&opts.project, &opts.resource);
    format!("let manager = manager\n    .controller({controller}::run)\n    .shard::<{kind}>();")
}

/// `lines` indented as the body of a function.
fn indented(lines: &str) -> String {
    lines
        .lines()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The dependencies the kind's code needs, added to Cargo.toml.
fn cargo_edits(opts: &CreateApiOptions) -> Vec<TomlEdit> {
    let dep = TomlEdit::dependency;
    let dev = TomlEdit::dev_dependency;
    let mut edits = vec![
        dep("k8s-openapi", false, &["schemars"]),
        dep("kube", false, &["derive"]),
        dep("schemars", true, &[]),
        dep("serde", true, &["derive"]),
        dep("serde_json", true, &[]),
    ];
    if opts.resource.controller {
        // `Controller::for_stream` and `owns_stream`, for watches with a backoff of their own.
        edits.push(dep("kube", false, &["unstable-runtime"]));
        edits.push(dep("futures", false, &["std"]));
        edits.push(dep("thiserror", true, &[]));
        edits.push(dep("tracing", true, &[]));
        // The controllers' unit tests, on kube's mock client.
        edits.push(TomlEdit::dev_dependency_with("rsop-runtime", &["testing"]));
        edits.push(dev("http"));
    }
    edits
}

/// Resolves the plan, then derives the manifests from the tree as it will
/// be, so that one apply writes a consistent project.
pub fn resolve_with_manifests(opts: &CreateApiOptions, plan: &Plan) -> Result<Vec<FileChange>> {
    resolve_plan_with_manifests(&opts.root, &opts.project, plan)
}

/// Resolves `plan` against the project at `root`, then derives the
/// manifests from the tree as it will be.
pub fn resolve_plan_with_manifests(
    root: &Path,
    project: &Project,
    plan: &Plan,
) -> Result<Vec<FileChange>> {
    let disk = Disk::new(root);
    let mut changes = scaffold::resolve(plan, &disk)?;
    let overlay: BTreeMap<PathBuf, String> = changes
        .iter()
        .map(|c| (c.path.clone(), c.after.clone()))
        .collect();
    let mut sources: Vec<(String, String)> = Vec::new();
    collect_sources(root, Path::new("src"), &overlay, &mut sources)?;
    for (path, text) in &overlay {
        if path.starts_with("src")
            && path.extension().is_some_and(|e| e == "rs")
            && !sources.iter().any(|(p, _)| Path::new(p) == path)
        {
            sources.push((path.display().to_string(), text.clone()));
        }
    }
    sources.sort();
    let borrowed: Vec<(&str, &str)> = sources
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let mut diagnostics = Diagnostics::default();
    let sources = Sources::from_sources(&borrowed, Some(project.crate_name()), &mut diagnostics);
    let mopts = ManifestsOptions {
        root: root.to_path_buf(),
        crd_dir: "config/crd/bases".into(),
        rbac_dir: "config/rbac".into(),
        webhook_dir: "config/webhook".into(),
        namespaced: project.namespaced,
        derivation: Derivation::Deferred,
        rbac: crate::manifests::check::rbac_check::Mode::Markers,
    };
    let generated =
        manifests::generate_from(&sources, &mopts, diagnostics, &mut anstream::stderr())?;
    for change in manifests::changes(generated.files, root)? {
        changes.retain(|c| c.path != change.path);
        changes.push(change);
    }
    Ok(changes)
}

fn collect_sources(
    root: &Path,
    rel: &Path,
    overlay: &BTreeMap<PathBuf, String>,
    out: &mut Vec<(String, String)>,
) -> Result<()> {
    let dir = root.join(rel);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(());
    };
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("read directory", &dir, e))?;
        let path = rel.join(entry.file_name());
        if entry.path().is_dir() {
            collect_sources(root, &path, overlay, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = match overlay.get(&path) {
                Some(t) => t.clone(),
                None => std::fs::read_to_string(entry.path())
                    .map_err(|e| Error::io("read", entry.path(), e))?,
            };
            out.push((path.display().to_string(), text));
        }
    }
    Ok(())
}

#[cfg(test)]
mod layout_tests;
