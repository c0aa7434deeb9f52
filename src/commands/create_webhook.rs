//! `rsop create webhook`: the arguments checked against the project into
//! [`CreateWebhookOptions`], the webhooks planned and resolved together with
//! the manifests derived from the tree they make, then written (or listed,
//! with `--dry-run`).

use std::io::Write;
use std::path::Path;

use super::{say, write_unless_dry_run};
use crate::cli::CreateWebhookArgs;
use crate::output::{self, Mode, Outcome};
use crate::project::{Project, Resource, k8s_kinds, names};
use crate::scaffold::plans::create_webhook::{
    self, Admission, CreateWebhookOptions, Shape, merged_webhooks,
};
use crate::templates::Templates;
use crate::{Error, Result};

pub fn run(args: &CreateWebhookArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let opts = options(args, cwd)?;
    let templates = Templates::load_dirs(&["create-webhook/", "e2e-fragments/"])?;
    let plan = create_webhook::plan(&opts, &templates)?;
    let changes = create_webhook::resolve_with_manifests(&opts, &plan)?;
    let mode = write_unless_dry_run(args.dry_run);
    if mode == Mode::Write {
        crate::scaffold::runtime::install()?;
    }
    let outcome = output::apply(cwd, &changes, mode, out)?;
    if mode == Mode::Write {
        say(out, &next_steps(&opts))?;
    }
    Ok(outcome)
}

/// Validates the arguments against the project at `root`.
fn options(args: &CreateWebhookArgs, root: &Path) -> Result<CreateWebhookOptions> {
    let project = Project::load(root, "create webhook")?;
    if !args.defaulting && !args.programmatic_validation && !args.conversion {
        return Err(Error::user_with_help(
            "no webhook to create",
            "pass `--defaulting`, `--programmatic-validation` or `--conversion`",
        ));
    }
    names::validate_kind_syntax(&args.kind)?;
    names::validate_version(&args.version)?;
    let own = project.resources.iter().find(|r| {
        r.api && r.group == args.group && r.version == args.version && r.kind == args.kind
    });
    let resource = match own {
        Some(r) => r.clone(),
        None => k8s_resource(args, &project)?,
    };
    if args.conversion && resource.path.is_some() {
        return Err(Error::user_with_help(
            format!(
                "`{}` is a Kubernetes kind: the API server converts its versions itself",
                resource.kind
            ),
            "drop `--conversion`; it is for the project's own kinds",
        ));
    }
    let existing = resource.webhooks.clone().unwrap_or_default();
    let admission_asked = args.defaulting || args.programmatic_validation;
    if admission_asked {
        refuse_twice(args, &resource, &existing)?;
        refuse_other_version(&project, &resource)?;
    }
    let admission = admission_asked.then_some(Admission {
        // The file is rendered whole: with what it had and what is asked.
        defaulting: args.defaulting || (args.force && existing.defaulting),
        validation: args.programmatic_validation || (args.force && existing.validation),
    });
    let conversion = if args.conversion {
        Some(spokes(args, &project, &resource, root)?)
    } else {
        None
    };
    let shape = match &resource.path {
        Some(_) => Shape::Other,
        None => Shape::of(&read_types(&project, &resource, root)?),
    };
    let mut resource = resource;
    resource.webhooks = Some(merged_webhooks(
        resource.webhooks.as_ref(),
        admission,
        conversion.as_deref(),
    ));
    Ok(CreateWebhookOptions {
        root: root.to_path_buf(),
        project,
        resource,
        admission,
        conversion,
        shape,
        force: args.force,
    })
}

/// The entry of a Kubernetes kind: the project's own entry for it (a
/// controller's) if there is one, else a new one without a controller.
fn k8s_resource(args: &CreateWebhookArgs, project: &Project) -> Result<Resource> {
    let Some(k) = k8s_kinds::find(&args.group, &args.version, &args.kind) else {
        if project
            .resources
            .iter()
            .any(|r| r.api && r.group == args.group && r.kind == args.kind)
        {
            let versions: Vec<&str> = project
                .resources
                .iter()
                .filter(|r| r.api && r.group == args.group && r.kind == args.kind)
                .map(|r| r.version.as_str())
                .collect();
            return Err(Error::user_with_help(
                format!(
                    "the project's kind `{}` has no version `{}`",
                    args.kind, args.version
                ),
                format!("its versions are {}", versions.join(", ")),
            ));
        }
        if k8s_kinds::is_k8s_group(&args.group) {
            return Err(k8s_kinds::unknown(
                "unknown Kubernetes kind",
                &args.group,
                &args.version,
                &args.kind,
            ));
        }
        return Err(Error::user_with_help(
            format!(
                "the project has no kind `{}` in group `{}` version `{}`",
                args.kind,
                names::group_full(&args.group, &project.domain),
                args.version
            ),
            "create it first with `rsop create api`, or name a kind of PROJECT",
        ));
    };
    let found = project.resources.iter().find(|r| {
        r.path.is_some()
            && r.group == k.group
            && r.version == k.version
            && r.kind == k.kind
            && r.controller_name.is_none()
    });
    Ok(found.cloned().unwrap_or_else(|| Resource {
        group: k.group.to_string(),
        version: k.version.to_string(),
        kind: k.kind.to_string(),
        plural: k.plural.to_string(),
        api: false,
        namespaced: k.namespaced,
        controller: false,
        controller_name: None,
        path: Some(k.module()),
        external: false,
        domain: None,
        webhooks: None,
        ..Resource::default()
    }))
}

/// The same admission webhook twice, or a new one in a file that exists,
/// needs `--force`: the kind's file is generated again, whole.
fn refuse_twice(
    args: &CreateWebhookArgs,
    resource: &Resource,
    existing: &crate::project::Webhooks,
) -> Result<()> {
    if args.force {
        return Ok(());
    }
    let mut twice = Vec::new();
    if args.defaulting && existing.defaulting {
        twice.push("defaulting");
    }
    if args.programmatic_validation && existing.validation {
        twice.push("validating");
    }
    if !twice.is_empty() {
        return Err(Error::user_with_help(
            format!(
                "the kind `{}` ({}) already has a {} webhook",
                resource.kind,
                resource.version,
                twice.join(" and a ")
            ),
            "pass `--force` to generate its file again (your edits to it are lost)",
        ));
    }
    if existing.defaulting || existing.validation {
        return Err(Error::user_with_help(
            format!(
                "the kind `{}` ({}) already has admission webhooks, in one file with the new one",
                resource.kind, resource.version
            ),
            "pass `--force` with every flag the file should have, such as `--defaulting --programmatic-validation` (your edits to it are lost)",
        ));
    }
    Ok(())
}

/// A kind's admission webhooks live in one module: one version has them.
fn refuse_other_version(project: &Project, resource: &Resource) -> Result<()> {
    let other = project.resources.iter().find(|r| {
        r.group == resource.group
            && r.kind == resource.kind
            && r.version != resource.version
            && r.webhooks
                .as_ref()
                .is_some_and(|w| w.defaulting || w.validation)
    });
    match other {
        Some(other) => Err(Error::user_with_help(
            format!(
                "the admission webhooks of `{}` are for its version `{}` already",
                resource.kind, other.version
            ),
            format!(
                "add to them with `--version {} --force`; the API server converts other versions to it first",
                other.version
            ),
        )),
        None => Ok(()),
    }
}

/// The versions converted through the hub `--version`: `--spoke`, else every
/// other version of the kind, checked against PROJECT and the sources.
fn spokes(
    args: &CreateWebhookArgs,
    project: &Project,
    hub: &Resource,
    root: &Path,
) -> Result<Vec<String>> {
    let versions: Vec<&str> = project
        .resources
        .iter()
        .filter(|r| r.api && r.group == hub.group && r.kind == hub.kind)
        .map(|r| r.version.as_str())
        .collect();
    if versions.len() < 2 {
        return Err(Error::user_with_help(
            format!(
                "the kind `{}` has one version, `{}`: there is nothing to convert",
                hub.kind, hub.version
            ),
            format!(
                "add a version first, such as `rsop create api --group {} --version v2 --kind {} --controller=false`",
                hub.group, hub.kind
            ),
        ));
    }
    let types = read_types(project, hub, root)?;
    if types.contains("storage = false") {
        let stored = versions
            .iter()
            .filter(|v| **v != hub.version)
            .find(|v| {
                let mut other = hub.clone();
                other.version = (**v).to_string();
                read_types(project, &other, root).is_ok_and(|t| !t.contains("storage = false"))
            })
            .copied()
            .unwrap_or("the stored one");
        return Err(Error::user_with_help(
            format!(
                "`{}` is not the storage version of `{}`: the hub of the conversion must be",
                hub.version, hub.kind
            ),
            format!("pass `--version {stored}`"),
        ));
    }
    let spokes: Vec<String> = if args.spoke.is_empty() {
        versions
            .iter()
            .filter(|v| **v != hub.version)
            .map(|v| (*v).to_string())
            .collect()
    } else {
        args.spoke.clone()
    };
    for spoke in &spokes {
        if *spoke == hub.version {
            return Err(Error::user_with_help(
                format!("`--spoke {spoke}` is the hub itself"),
                "name the other versions in `--spoke`",
            ));
        }
        if !versions.contains(&spoke.as_str()) {
            return Err(Error::user_with_help(
                format!(
                    "`--spoke {spoke}`: the kind `{}` has no such version",
                    hub.kind
                ),
                format!("its versions are {}", versions.join(", ")),
            ));
        }
    }
    let existing = hub.webhooks.clone().unwrap_or_default();
    if existing.conversion && !args.force && spokes.iter().all(|s| existing.spoke.contains(s)) {
        return Err(Error::user_with_help(
            format!(
                "the kind `{}` already converts through `{}` to {}",
                hub.kind,
                hub.version,
                existing.spoke.join(", ")
            ),
            "pass `--force` to generate its conversion module again (your edits to it are lost)",
        ));
    }
    if existing.conversion && !args.force {
        return Err(Error::user_with_help(
            format!(
                "the kind `{}` has a conversion module already, which a new spoke changes",
                hub.kind
            ),
            "pass `--force` to generate it again with every spoke (your edits to it are lost)",
        ));
    }
    // The module converts every spoke, the earlier ones too.
    let mut all = existing.spoke;
    for spoke in spokes {
        if !all.contains(&spoke) {
            all.push(spoke);
        }
    }
    Ok(all)
}

/// The text of the module that defines the kind's version.
fn read_types(project: &Project, r: &Resource, root: &Path) -> Result<String> {
    let path = project.types_path(r);
    std::fs::read_to_string(root.join(&path)).map_err(|e| {
        Error::user_with_help(
            format!(
                "cannot read `{path}`, the types of `{}` {}: {e}",
                r.kind, r.version
            ),
            "rsop reads the kind's types where `rsop create api` put them",
        )
    })
}

/// What to do next: edit the webhooks, derive the manifests, test, deploy
/// with cert-manager.
fn next_steps(opts: &CreateWebhookOptions) -> String {
    let dir = if opts.project.multigroup {
        format!("src/webhooks/{}", opts.resource.group_module())
    } else {
        "src/webhooks".to_string()
    };
    let file = format!(
        "{dir}/{}",
        heck::ToSnakeCase::to_snake_case(opts.resource.kind.as_str())
    );
    format!(
        "\nnext steps:\n  edit `{file}*.rs`, then run `rsop manifests`\n  make test\n  \
         install cert-manager in the cluster, then `make deploy`: config/default now includes the webhooks\n"
    )
}
