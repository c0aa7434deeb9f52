//! `rsop create webhook`: a kind's admission webhooks (defaulting,
//! validation) or its conversion webhook, the webhook server wired into the
//! manager at its markers the first time, and `config/` made to deploy them
//! with cert-manager.

use std::path::PathBuf;

use heck::ToSnakeCase;

use crate::Result;
use crate::output::FileChange;
use crate::project::{Project, Resource, Webhooks, names};
use crate::scaffold::plans::create_api::{CONTROLLERS, ENVTEST_MAIN, ENVTEST_MODULES, MAIN};
use crate::scaffold::{self, IfExists, Marker, Plan, TomlEdit, e2e, grafana};
use crate::templates::Templates;

use super::create_api::MODULES;

pub const WEBHOOK_MODULES: Marker = Marker::new("webhook-modules");
pub const WEBHOOKS: Marker = Marker::new("webhooks");
pub const WEBHOOK_RESOURCES: Marker = Marker::new("webhook-resources");
pub const WEBHOOK_PATCHES: Marker = Marker::new("webhook-patches");
pub const WEBHOOK_REPLACEMENTS: Marker = Marker::new("webhook-replacements");
pub const WEBHOOK_MANIFESTS: Marker = Marker::new("webhook-manifests");
pub const NETWORK_POLICIES: Marker = Marker::new("network-policies");
pub const CRD_PATCHES: Marker = Marker::new("crd-patches");

/// Validated input of `rsop create webhook`; see `commands::create_webhook`
/// for the rules.
#[derive(Debug, Clone)]
pub struct CreateWebhookOptions {
    pub root: PathBuf,
    pub project: Project,
    /// The kind's entry of PROJECT (a new one for a Kubernetes kind without
    /// one), with its webhooks as they will be.
    pub resource: Resource,
    /// The admission webhooks to generate now (the file has them all).
    pub admission: Option<Admission>,
    /// The hub's conversion to generate now, with its spokes.
    pub conversion: Option<Vec<String>>,
    /// What the kind's types look like, for the examples and tests.
    pub shape: Shape,
    pub force: bool,
}

/// The admission webhooks of the kind's file.
#[derive(Debug, Clone, Copy)]
pub struct Admission {
    pub defaulting: bool,
    pub validation: bool,
}

/// The fields the kind's spec has, as far as the examples need to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `create api`'s example fields, `foo` and `count`: the webhooks get
    /// working examples on them.
    Example,
    /// `create api --image`'s fields, `size` and `image`.
    Image,
    /// Anything else, such as a Kubernetes kind: skeletons only.
    Other,
}

impl Shape {
    /// The shape of the types in `source`, the text of the kind's module.
    pub fn of(source: &str) -> Self {
        if source.contains("pub foo: Option<String>,") && source.contains("pub count: i32,") {
            Shape::Example
        } else if source.contains("pub size: i32,") && source.contains("pub image: String,") {
            Shape::Image
        } else {
            Shape::Other
        }
    }

    /// A spec that decodes, for the tests' objects.
    fn spec_fixture(self) -> &'static str {
        match self {
            Shape::Example => r#"{"foo": "bar", "count": 1}"#,
            Shape::Image => r#"{"size": 1, "image": "example.com/app:1.0"}"#,
            Shape::Other => "{}",
        }
    }
}

/// Paths of the kind's modules in this project's layout.
struct Layout {
    /// `crate::api` or `crate::api::<group>`: the parent of the versions.
    api_parent: String,
    /// `src/webhooks` or `src/webhooks/<group>`.
    dir: String,
    /// How `src/webhooks/mod.rs` names the kind's modules: nothing, or `<group>::`.
    prefix: String,
    group_module: Option<String>,
}

impl Layout {
    fn new(project: &Project, r: &Resource) -> Self {
        let group = r.group_module();
        if project.multigroup {
            Layout {
                api_parent: format!("crate::api::{group}"),
                dir: format!("src/webhooks/{group}"),
                prefix: format!("{group}::"),
                group_module: Some(group),
            }
        } else {
            Layout {
                api_parent: "crate::api".into(),
                dir: "src/webhooks".into(),
                prefix: String::new(),
                group_module: None,
            }
        }
    }
}

/// The group as webhooks and API versions name it: the legacy group is empty.
fn api_group(project: &Project, r: &Resource) -> String {
    names::api_group(&r.full_group(&project.domain)).to_owned()
}

/// The paths the webhook server serves the kind's defaulting and validating webhooks at, as
/// kubebuilder names them: `/mutate-<group with dashes>-<version>-<kind>` and `/validate-...`.
pub fn webhook_paths(project: &Project, r: &Resource) -> (String, String) {
    let group = api_group(project, r).replace('.', "-");
    let segment = format!("{group}-{}-{}", r.version, r.kind.to_ascii_lowercase());
    (format!("/mutate-{segment}"), format!("/validate-{segment}"))
}

/// The template context of the kind's webhooks.
fn context(opts: &CreateWebhookOptions, layout: &Layout) -> tera::Context {
    let project = &opts.project;
    let r = &opts.resource;
    let mut ctx = super::init::context(project, "", None);
    let group = api_group(project, r);
    let kind_lower = r.kind.to_ascii_lowercase();
    let kind_snake = r.kind.to_snake_case();
    ctx.insert("kind", &r.kind);
    ctx.insert("kind_lower", &kind_lower);
    ctx.insert("kind_snake", &kind_snake);
    ctx.insert("version", &r.version);
    ctx.insert("plural", &r.plural);
    ctx.insert("group_full", &group);
    ctx.insert(
        "api_version",
        &if group.is_empty() {
            r.version.clone()
        } else {
            format!("{group}/{}", r.version)
        },
    );
    ctx.insert(
        "kind_path",
        &match &r.path {
            Some(path) => format!("{path}::{}", r.kind),
            None => format!("{}::{}::{}", layout.api_parent, r.version, r.kind),
        },
    );
    ctx.insert("api_parent", &layout.api_parent);
    ctx.insert("test_kind_path", &e2e::kind_path(project, r));
    ctx.insert("kind_namespaced", &r.namespaced);
    ctx.insert("kind_stem", &e2e::stem(r));
    ctx.insert("k8s_kind", &r.path.is_some());
    // The object's variable: the kind in snake case, unless that is a keyword.
    let var = if names::RUST_KEYWORDS.contains(&kind_snake.as_str()) {
        "object".to_string()
    } else {
        kind_snake
    };
    ctx.insert("var", &var);
    let (mutate_path, validate_path) = webhook_paths(project, r);
    ctx.insert("mutate_path", &mutate_path);
    ctx.insert("validate_path", &validate_path);
    ctx.insert("mutate_name", &format!("m{kind_lower}-{}.kb.io", r.version));
    ctx.insert(
        "validate_name",
        &format!("v{kind_lower}-{}.kb.io", r.version),
    );
    ctx.insert(
        "marker_group",
        &if group.is_empty() {
            "\"\"".to_string()
        } else {
            group.clone()
        },
    );
    ctx.insert("example", &(opts.shape == Shape::Example));
    ctx.insert("spec_fixture", opts.shape.spec_fixture());
    if let Some(admission) = opts.admission {
        ctx.insert("defaulting", &admission.defaulting);
        ctx.insert("validation", &admission.validation);
    }
    ctx.insert("hub", &r.version);
    ctx.insert("spokes", opts.conversion.as_deref().unwrap_or_default());
    ctx
}

/// Plans the webhooks' files and inserts (without the manifests).
pub fn plan(opts: &CreateWebhookOptions, templates: &Templates) -> Result<Plan> {
    let r = &opts.resource;
    let layout = Layout::new(&opts.project, r);
    let ctx = context(opts, &layout);
    let render = |name: &str| templates.render(&format!("create-webhook/{name}.tera"), &ctx);
    let if_exists = IfExists::from_force(opts.force);
    let mut plan = Plan::new();

    wire_server(&mut plan, &opts.project, &render)?;
    plan_config(&mut plan, &render)?;

    let kind_module = r.kind.to_snake_case();
    let mut modules: Vec<(String, String)> = Vec::new();
    if opts.admission.is_some() {
        modules.push((kind_module.clone(), render("src/webhooks/kind.rs")?));
        plan.insert(
            "config/webhook/kustomization.yaml",
            WEBHOOK_MANIFESTS,
            "- manifests.yaml",
        );
    }
    if opts.conversion.is_some() {
        modules.push((
            format!("{kind_module}_conversion"),
            render("src/webhooks/kind_conversion.rs")?,
        ));
        plan_conversion_config(&mut plan, opts, templates, &ctx)?;
    }
    if let Some(group) = &layout.group_module {
        plan.insert_sorted(
            "src/webhooks/mod.rs",
            WEBHOOK_MODULES,
            format!("pub mod {group};"),
        );
        plan.create(
            format!("{}/mod.rs", layout.dir),
            render("src/webhooks/group/mod.rs")?,
            IfExists::Keep,
        );
    }
    // The kind's names change how rustfmt lays its modules out.
    let texts: Vec<(String, String)> = modules
        .iter()
        .map(|(module, text)| (module.clone(), text.clone()))
        .collect();
    let formatted = scaffold::rustfmt::format_all(&texts)?;
    for ((module, _), text) in modules.iter().zip(formatted) {
        plan.create(format!("{}/{module}.rs", layout.dir), text, if_exists);
        plan.insert_sorted(
            format!("{}/mod.rs", layout.dir),
            WEBHOOK_MODULES,
            format!("pub mod {module};"),
        );
        plan.insert(
            "src/webhooks/mod.rs",
            WEBHOOKS,
            format!("{}{module}::register(&mut webhooks);", layout.prefix),
        );
    }

    for edit in cargo_edits() {
        plan.edit_toml("Cargo.toml", edit);
    }
    scaffold::runtime::plan(&mut plan)?;
    let mut project = opts.project.clone();
    match project.resources.iter_mut().find(|x| x.same_entry(r)) {
        Some(existing) => existing.webhooks.clone_from(&r.webhooks),
        None => project.resources.push(r.clone()),
    }
    if e2e::extends(&project, &opts.root) {
        let e2e_tests = e2e::webhook_tests(templates, &project, r, opts.shape == Shape::Example)?;
        e2e::insert_tests(&mut plan, &e2e_tests)?;
    }
    // The API server of the envtest suite calls the kind's admission webhooks, for a kind of the
    // project's with a controller, whose tests the suite shares what it needs with.
    if opts.admission.is_some() && e2e::has_sample(r) && opts.root.join(ENVTEST_MAIN).is_file() {
        let stem = format!("{}_webhooks", e2e::stem(r));
        plan.insert_sorted(ENVTEST_MAIN, ENVTEST_MODULES, format!("mod {stem};"));
        let kind_tests = [(stem.clone(), render("tests/envtest/kind_webhooks.rs")?)];
        for text in scaffold::rustfmt::format_all(&kind_tests)? {
            plan.create(format!("tests/envtest/{stem}.rs"), text, if_exists);
        }
    }
    if project.grafana {
        plan.create(
            grafana::WEBHOOKS,
            grafana::webhooks(&project.project_name),
            IfExists::Keep,
        );
    }
    plan.save_project(project);
    Ok(plan)
}

/// The webhook server: the project's webhooks, served by the manager; every insert is skipped once
/// it is there, so only the first webhook changes anything.
fn wire_server(
    plan: &mut Plan,
    project: &Project,
    render: &dyn Fn(&str) -> Result<String>,
) -> Result<()> {
    plan.insert(
        MAIN,
        CONTROLLERS,
        format!(
            "let webhooks = {}::webhooks::all();\nlet manager = manager.webhooks(webhooks);",
            project.crate_name()
        ),
    );
    plan.insert_sorted("src/lib.rs", MODULES, "pub mod webhooks;");
    plan.create(
        "src/webhooks/mod.rs",
        render("src/webhooks/mod.rs")?,
        IfExists::Keep,
    );
    Ok(())
}

/// `config/`: the webhook Service, cert-manager's Issuer and Certificates,
/// the manager's patch and the network policy, enabled in config/default.
fn plan_config(plan: &mut Plan, render: &dyn Fn(&str) -> Result<String>) -> Result<()> {
    for file in [
        "config/webhook/kustomization.yaml",
        "config/webhook/kustomizeconfig.yaml",
        "config/webhook/service.yaml",
        "config/certmanager/kustomization.yaml",
        "config/certmanager/kustomizeconfig.yaml",
        "config/certmanager/issuer.yaml",
        "config/certmanager/certificate-webhook.yaml",
        "config/certmanager/certificate-metrics.yaml",
        "config/default/manager_webhook_patch.yaml",
        "config/network-policy/allow-webhook-traffic.yaml",
    ] {
        plan.create(file, render(file)?, IfExists::Keep);
    }
    let default = "config/default/kustomization.yaml";
    plan.insert(default, WEBHOOK_RESOURCES, "- ../webhook\n- ../certmanager");
    plan.insert(
        default,
        WEBHOOK_PATCHES,
        "# [WEBHOOK] Serve the webhooks on :9443 with the certificate of\n\
         # config/certmanager, mounted from its Secret.\n\
         - path: manager_webhook_patch.yaml\n  target:\n    kind: Deployment",
    );
    plan.insert(
        default,
        WEBHOOK_REPLACEMENTS,
        render("fragments/default_replacements.yaml")?,
    );
    plan.insert(
        "config/network-policy/kustomization.yaml",
        NETWORK_POLICIES,
        "- allow-webhook-traffic.yaml",
    );
    Ok(())
}

/// The CRD patches that make the kind convert through the webhook, with
/// cert-manager's CA injection.
fn plan_conversion_config(
    plan: &mut Plan,
    opts: &CreateWebhookOptions,
    templates: &Templates,
    ctx: &tera::Context,
) -> Result<()> {
    let plural = &opts.resource.plural;
    let if_exists = IfExists::from_force(opts.force);
    for (template, prefix) in [
        ("webhook_in_kind", "webhook_in"),
        ("cainjection_in_kind", "cainjection_in"),
    ] {
        let path = format!("config/crd/patches/{prefix}_{plural}.yaml");
        plan.create(
            &path,
            templates.render(
                &format!("create-webhook/config/crd/patches/{template}.yaml.tera"),
                ctx,
            )?,
            if_exists,
        );
        plan.insert(
            "config/crd/kustomization.yaml",
            CRD_PATCHES,
            format!("- path: patches/{prefix}_{plural}.yaml"),
        );
    }
    plan.insert(
        "config/default/kustomization.yaml",
        WEBHOOK_REPLACEMENTS,
        templates.render(
            "create-webhook/fragments/crd_ca_replacements.yaml.tera",
            ctx,
        )?,
    );
    Ok(())
}

/// The crates the webhooks need, added to Cargo.toml: the webhook server, and its review helpers
/// for the tests.
fn cargo_edits() -> Vec<TomlEdit> {
    let dep = TomlEdit::dependency;
    vec![
        dep("rsop-runtime", true, &["webhook"]),
        TomlEdit::dev_dependency_with("rsop-runtime", &["testing"]),
        dep("serde", true, &["derive"]),
        dep("serde_json", true, &[]),
    ]
}

/// Resolves the plan, then derives the manifests (the webhook
/// configurations among them) from the tree as it will be.
pub fn resolve_with_manifests(opts: &CreateWebhookOptions, plan: &Plan) -> Result<Vec<FileChange>> {
    super::create_api::resolve_plan_with_manifests(&opts.root, &opts.project, plan)
}

/// The kind's webhooks once this command has run: those it had, and the new.
pub fn merged_webhooks(
    existing: Option<&Webhooks>,
    admission: Option<Admission>,
    spokes: Option<&[String]>,
) -> Webhooks {
    let mut webhooks = existing.cloned().unwrap_or_else(|| Webhooks {
        webhook_version: "v1".into(),
        ..Webhooks::default()
    });
    if let Some(admission) = admission {
        webhooks.defaulting |= admission.defaulting;
        webhooks.validation |= admission.validation;
    }
    if let Some(spokes) = spokes {
        webhooks.conversion = true;
        for spoke in spokes {
            if !webhooks.spoke.contains(spoke) {
                webhooks.spoke.push(spoke.clone());
            }
        }
    }
    webhooks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_told_apart_by_the_scaffolded_fields() {
        let example = "pub struct S {\n    pub foo: Option<String>,\n    pub count: i32,\n}";
        let image = "pub struct S {\n    pub size: i32,\n    pub image: String,\n}";
        assert_eq!(Shape::of(example), Shape::Example);
        assert_eq!(Shape::of(image), Shape::Image);
        assert_eq!(
            Shape::of("pub struct S {\n    pub foo: Option<String>,\n}"),
            Shape::Other
        );
    }

    #[test]
    fn webhooks_accumulate_and_spokes_stay_unique() {
        let first = merged_webhooks(
            None,
            Some(Admission {
                defaulting: true,
                validation: false,
            }),
            None,
        );
        assert!(first.defaulting && !first.validation && !first.conversion);
        assert_eq!(first.webhook_version, "v1");
        let spokes = ["v1".to_string(), "v2".to_string()];
        let second = merged_webhooks(Some(&first), None, Some(&spokes));
        let third = merged_webhooks(Some(&second), None, Some(&spokes[..1]));
        assert!(third.defaulting && third.conversion);
        assert_eq!(third.spoke, ["v1", "v2"]);
    }
}
