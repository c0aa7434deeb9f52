//! `rsop create api`: the arguments checked against the project into
//! [`CreateApiOptions`], the kind planned and resolved together with the
//! manifests derived from the tree it makes, then written (or listed, with
//! `--dry-run`).

use std::io::Write;
use std::path::Path;

use super::{say, write_unless_dry_run};
use crate::cli::CreateApiArgs;
use crate::output::{self, FileChange, Mode, Outcome};
use crate::project::{ImageRecord, Project, Resource, k8s_kinds, names};
use crate::scaffold::external::{self, ExternalKind};
use crate::scaffold::plans::create_api::{
    self, CreateApiOptions, ExternalTypes, ImageOptions, Related,
};
use crate::templates::Templates;
use crate::{Error, Result};

pub fn run(args: &CreateApiArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let opts = options(args, cwd)?;
    let templates = Templates::load_dirs(&["create-api/", "e2e-fragments/"])?;
    let (plan, formatting) = create_api::plan(&opts, &templates)?;
    let mut changes = create_api::resolve_with_manifests(&opts, &plan)?;
    formatting.finish(&mut changes)?;
    let mode = write_unless_dry_run(args.dry_run);
    if mode == Mode::Write {
        crate::scaffold::runtime::install()?;
    }
    let outcome = output::apply(cwd, &changes, mode, out)?;
    if mode == Mode::Write {
        say(out, &next_steps(&changes))?;
    }
    Ok(outcome)
}

/// Validates the arguments against the project at `root`.
fn options(args: &CreateApiArgs, root: &Path) -> Result<CreateApiOptions> {
    let project = Project::load(root, "create api")?;
    if let Some(crd) = &args.external_api_crd {
        return external_options(args, root, project, crd);
    }
    let (Some(group), Some(version), Some(kind)) = (
        args.group.as_deref(),
        args.version.as_deref(),
        args.kind.as_deref(),
    ) else {
        return Err(Error::user_with_help(
            "`--group`, `--version` and `--kind` name the kind to create",
            "pass all three, or `--external-api-crd` for a kind of another project's CRD",
        ));
    };
    if !args.resource && !args.controller {
        return Err(Error::user_with_help(
            "`--resource=false` and `--controller=false` together leave nothing to create",
            "drop one of them",
        ));
    }
    if args.image.is_some() && !args.namespaced {
        return Err(Error::user_with_help(
            "`--image` needs a namespaced kind: its Deployment lives in the kind's namespace",
            "drop `--namespaced=false`, or `--image` to get a controller skeleton",
        ));
    }
    if args.image.is_some() && !(args.resource && args.controller) {
        return Err(Error::user_with_help(
            "`--image` needs both the kind's types and its controller",
            "drop `--resource=false` / `--controller=false`, or `--image`",
        ));
    }
    if let Some(image) = &args.image
        && (image.is_empty() || image.chars().any(char::is_whitespace))
    {
        return Err(Error::user_with_help(
            format!("invalid image `{image}`: it must be an image reference without spaces"),
            "pass an image such as `memcached:1.6.26-alpine`",
        ));
    }
    if !args.resource
        && !project.resources.iter().any(|r| {
            (r.api || r.external) && r.group == group && r.version == version && r.kind == kind
        })
        && (k8s_kinds::is_k8s_group(group) || k8s_kinds::KINDS.iter().any(|k| k.kind == kind))
    {
        return k8s_kind_options(args, root, project, (group, version, kind));
    }
    if args.controller_name.is_some() {
        return Err(Error::user_with_help(
            "`--controller-name` is for a second controller of a kind defined elsewhere, such as Kubernetes' `Deployment`",
            "drop it: a kind of the project has one controller, which owns its status and finalizer",
        ));
    }
    let plural = names::validate_kind_names(group, version, kind, args.plural.as_deref())?;
    let resource = Resource {
        group: group.to_string(),
        version: version.to_string(),
        kind: kind.to_string(),
        plural,
        api: args.resource,
        namespaced: args.namespaced,
        controller: args.controller,
        controller_name: None,
        path: None,
        external: false,
        domain: None,
        webhooks: None,
        ..Resource::default()
    };
    let existing = project.resources.iter().find(|r| r.same_kind(&resource));
    // `--resource=false`: a controller for a kind whose types the project
    // already has (made with `--controller=false`).
    let mut resource = resource;
    if !args.resource {
        let Some(types) = existing.filter(|r| r.api) else {
            return Err(Error::user_with_help(
                format!(
                    "`--resource=false` needs the project's own `{}/{}` kind `{}`, which it does not have",
                    names::group_full(&resource.group, &project.domain),
                    resource.version,
                    resource.kind
                ),
                "create the kind with `--controller=false` first; rsop scaffolds controllers for the kinds whose types it made",
            ));
        };
        if types.controller && !args.force {
            return Err(Error::user_with_help(
                format!("the kind `{}` already has a controller", resource.kind),
                "pass `--force` to generate it again",
            ));
        }
        resource.api = true;
        resource.namespaced = types.namespaced;
        resource.plural.clone_from(&types.plural);
    } else if existing.is_some() && !args.force {
        return Err(Error::user_with_help(
            format!(
                "the project already has `{}/{}` kind `{}`",
                names::group_full(&resource.group, &project.domain),
                resource.version,
                resource.kind
            ),
            "pass `--force` to generate its files again",
        ));
    }
    if let Some(other) = project.resources.iter().find(|r| {
        r.group == resource.group && r.kind == resource.kind && r.version != resource.version
    }) && (other.namespaced != resource.namespaced || other.plural != resource.plural)
    {
        return Err(Error::user_with_help(
            format!(
                "version `{}` of `{}` has another scope or plural than this one",
                other.version, resource.kind
            ),
            "all versions of a kind share `--namespaced` and `--plural`",
        ));
    }
    let additional_version = project.resources.iter().any(|r| {
        r.group == resource.group
            && r.kind == resource.kind
            && r.version != resource.version
            && r.api
    });
    let image = args.image.as_ref().map(|image| ImageOptions {
        image: image.clone(),
        container_port: args.image_container_port,
        command: args
            .image_container_command
            .as_deref()
            .map(|c| c.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        run_as_user: args.run_as_user.unwrap_or(1001),
    });
    resource.image = image.as_ref().map(|_| ImageRecord {
        image: args.image.clone().unwrap_or_default(),
        container_port: args.image_container_port,
        command: args.image_container_command.clone(),
        run_as_user: args.run_as_user,
    });
    let related = related_kinds(args, &resource, &project)?;
    record_related(&mut resource, &related);
    if !related.is_empty() && !resource.controller {
        return Err(Error::user_with_help(
            "`--owns` and `--watches` need a controller",
            "drop `--controller=false`",
        ));
    }
    if !related.is_empty() && image.is_some() {
        return Err(Error::user_with_help(
            "`--owns` and `--watches` do not combine with `--image`, whose controller owns its Deployment and watches its pods already",
            "drop `--image` for a controller skeleton with these watches",
        ));
    }
    let controller_module_taken = resource.controller
        && project.resources.iter().any(|r| {
            r.controller
                && !r.same_entry(&resource)
                && r.controller_module() == resource.controller_module()
                && (!project.multigroup || r.group == resource.group)
        });
    if controller_module_taken {
        return Err(module_taken(&resource));
    }
    Ok(CreateApiOptions {
        root: root.to_path_buf(),
        project,
        resource,
        image,
        additional_version,
        controller_only: !args.resource,
        force: args.force,
        related,
        external: None,
    })
}

/// `--resource=false` on a Kubernetes kind: a controller on its k8s-openapi
/// type, with no types and no CRD of the project's.
fn k8s_kind_options(
    args: &CreateApiArgs,
    root: &Path,
    project: Project,
    (group, version, kind): (&str, &str, &str),
) -> Result<CreateApiOptions> {
    names::validate_kind_syntax(kind)?;
    names::validate_version(version)?;
    let Some(k) = k8s_kinds::find(group, version, kind) else {
        return Err(k8s_kinds::unknown(
            "unknown Kubernetes kind",
            group,
            version,
            kind,
        ));
    };
    if args.image.is_some() {
        return Err(Error::user_with_help(
            "`--image` needs a kind of the project's own: its controller writes the kind's status",
            "drop `--image`",
        ));
    }
    if let Some(plural) = &args.plural
        && plural != k.plural
    {
        return Err(Error::user_with_help(
            format!(
                "the plural of `{}` is `{}`, not `{plural}`",
                k.kind, k.plural
            ),
            "drop `--plural`: Kubernetes' kinds have theirs",
        ));
    }
    let resource = Resource {
        group: k.group.to_string(),
        version: k.version.to_string(),
        kind: k.kind.to_string(),
        plural: k.plural.to_string(),
        api: false,
        namespaced: k.namespaced,
        controller: true,
        controller_name: args.controller_name.clone(),
        path: Some(k.module()),
        external: false,
        domain: None,
        webhooks: None,
        ..Resource::default()
    };
    foreign_kind_options(args, root, project, resource, &k.reference(), None)
}

/// `--external-api-crd`: a kind another project defines, whose types are
/// generated from its CRD under `src/external/`, with a controller unless
/// `--controller=false`.
fn external_options(
    args: &CreateApiArgs,
    root: &Path,
    project: Project,
    crd: &Path,
) -> Result<CreateApiOptions> {
    if args.resource {
        return Err(Error::user_with_help(
            "`--external-api-crd` is for a kind another project defines, not one of this project's",
            "add `--resource=false`: the types are generated from the CRD, which stays the other project's",
        ));
    }
    if args.image.is_some() {
        return Err(Error::user_with_help(
            "`--image` needs a kind of the project's own: its controller writes the kind's status",
            "drop `--image`",
        ));
    }
    let external = external::read(
        &root.join(crd),
        args.kind.as_deref(),
        args.version.as_deref(),
    )
    .map_err(|e| match e {
        // The path as the user gave it, not joined to the project root.
        Error::User { message, help } => Error::User {
            message: message.replace(
                &root.join(crd).display().to_string(),
                &crd.display().to_string(),
            ),
            help,
        },
        other => other,
    })?;
    if let Some(group) = &args.group
        && group != &external.group
    {
        return Err(Error::user_with_help(
            format!("the CRD's group is `{}`, not `{group}`", external.group),
            "drop `--group`: the CRD names the group",
        ));
    }
    if let Some(plural) = &args.plural
        && plural != &external.plural
    {
        return Err(Error::user_with_help(
            format!(
                "the plural of `{}` is `{}`, not `{plural}`",
                external.kind, external.plural
            ),
            "drop `--plural`: the CRD names the plural",
        ));
    }
    names::validate_kind(&external.kind)?;
    // A CRD's group always has a dot: kubebuilder's `group` and `domain`.
    let (group, domain) = external
        .group
        .split_once('.')
        .unwrap_or((external.group.as_str(), ""));
    let resource = Resource {
        group: group.to_string(),
        version: external.version.clone(),
        kind: external.kind.clone(),
        plural: external.plural.clone(),
        api: false,
        namespaced: external.namespaced,
        controller: args.controller,
        controller_name: args.controller_name.clone(),
        path: Some(format!(
            "crate::external::{}::{}",
            external.group_module(),
            external.version
        )),
        external: true,
        domain: Some(domain.to_string()),
        webhooks: None,
        external_api_crd: Some(recorded_path(root, crd)),
        ..Resource::default()
    };
    let related_asked = !args.owns.is_empty() || !args.watches.is_empty();
    if related_asked && !args.controller {
        return Err(Error::user_with_help(
            "`--owns` and `--watches` need a controller",
            "drop `--controller=false`",
        ));
    }
    let reference = format!("{}/{}/{}", external.group, external.version, external.kind);
    foreign_kind_options(args, root, project, resource, &reference, Some(external))
}

/// What controllers on kinds the project does not define share: a
/// controller name that makes a module, one entry per controller, and the
/// kinds it owns and watches.
fn foreign_kind_options(
    args: &CreateApiArgs,
    root: &Path,
    project: Project,
    resource: Resource,
    reference: &str,
    external: Option<ExternalKind>,
) -> Result<CreateApiOptions> {
    if let Some(name) = &args.controller_name {
        names::validate_dns1123_label("controller name", name)?;
        let module = heck::ToSnakeCase::to_snake_case(name.as_str());
        if names::RUST_KEYWORDS.contains(&module.as_str()) {
            return Err(Error::user_with_help(
                format!(
                    "invalid controller name `{name}`: its module name `{module}` is a Rust keyword"
                ),
                "pick another name, such as `deployment-scaler`",
            ));
        }
    }
    if project
        .resources
        .iter()
        .any(|r| r.same_entry(&resource) && (r.controller || !resource.controller))
        && !args.force
    {
        return Err(Error::user_with_help(
            if resource.controller {
                format!(
                    "the project already has the controller `{}` of `{reference}`",
                    resource.controller_name(),
                )
            } else {
                format!("the project already has the types of `{reference}`")
            },
            if resource.controller {
                "pass `--force` to generate it again, or `--controller-name` for another controller of the kind"
            } else {
                "pass `--force` to generate the types again, from the CRD as it is now"
            },
        ));
    }
    if resource.controller
        && project.resources.iter().any(|r| {
            r.controller
                && !r.same_entry(&resource)
                && r.controller_module() == resource.controller_module()
                && (!project.multigroup || r.group == resource.group)
        })
    {
        return Err(module_taken(&resource));
    }
    let related = related_kinds(args, &resource, &project)?;
    let mut resource = resource;
    record_related(&mut resource, &related);
    // The types of an external kind are generated again only when PROJECT
    // does not have them yet, or with `--force`.
    let recorded = project
        .resources
        .iter()
        .find(|r| r.external && r.same_entry(&resource));
    let external = external.map(|kind| ExternalTypes {
        kind,
        regenerate: args.force || recorded.is_none(),
        types_only: !resource.controller,
    });
    // Types made again with `--controller=false` keep the kind's controller,
    // and its watches.
    if let Some(recorded) = recorded
        && !resource.controller
    {
        resource.controller = recorded.controller;
        resource.owns.clone_from(&recorded.owns);
        resource.watches.clone_from(&recorded.watches);
    }
    Ok(CreateApiOptions {
        root: root.to_path_buf(),
        project,
        resource,
        image: None,
        additional_version: false,
        controller_only: false,
        force: args.force,
        related,
        external,
    })
}

/// The CRD path as PROJECT records it: relative to the project root when
/// it lies under it, so that the record holds on another checkout.
fn recorded_path(root: &Path, crd: &Path) -> String {
    let full = crate::paths::lexical(&root.join(crd));
    pathdiff::diff_paths(&full, crate::paths::lexical(root))
        .unwrap_or(full)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Records `--owns` and `--watches` in the kind's PROJECT entry, as the
/// references they resolved to, so that the controller can be made again.
fn record_related(resource: &mut Resource, related: &[Related]) {
    resource.owns = related
        .iter()
        .filter(|r| r.owned)
        .map(|r| r.reference.clone())
        .collect();
    resource.watches = related
        .iter()
        .filter(|r| !r.owned)
        .map(|r| r.reference.clone())
        .collect();
}

fn module_taken(resource: &Resource) -> Error {
    Error::user_with_help(
        format!(
            "another controller of the project lives in the module `{}`",
            resource.controller_module()
        ),
        "name this one with `--controller-name`, such as `--controller-name my-deployments`",
    )
}

/// The kinds of `--owns` and `--watches`, checked: kinds of the project's
/// PROJECT (its own and external ones) or Kubernetes kinds rsop knows, each
/// named once, none the controller's own kind, and no cluster-scoped kind
/// owned by a namespaced one.
fn related_kinds(
    args: &CreateApiArgs,
    primary: &Resource,
    project: &Project,
) -> Result<Vec<Related>> {
    let mut out: Vec<Related> = Vec::new();
    for (flag, values, owned) in [
        ("owns", &args.owns, true),
        ("watches", &args.watches, false),
    ] {
        for value in values {
            let (group, version, kind) = k8s_kinds::parse_reference(flag, value)?;
            let related = resolve_related(project, flag, value, (&group, &version, &kind), owned)?;
            if related.kind == primary.kind {
                return Err(Error::user_with_help(
                    format!(
                        "`--{flag} {value}`: `{}` is the controller's own kind",
                        related.kind
                    ),
                    "drop it: the controller watches its own kind already",
                ));
            }
            if out.iter().any(|r| r.kind == related.kind) {
                return Err(Error::user_with_help(
                    format!(
                        "`{}` is named twice in `--owns` and `--watches`",
                        related.reference
                    ),
                    "name each kind once: an owned kind is watched too",
                ));
            }
            if owned && primary.namespaced && !related.namespaced {
                return Err(Error::user_with_help(
                    format!(
                        "`--owns {value}`: a namespaced `{}` cannot own a cluster-scoped `{}`; the garbage collector ignores such owner references",
                        primary.kind, related.kind
                    ),
                    format!("watch it with `--watches {value}` instead"),
                ));
            }
            out.push(related);
        }
    }
    Ok(out)
}

/// The kind `group/version/Kind` of an `--owns` or `--watches` value: one
/// of the project's (its group given in full or, for its own kinds, without
/// the domain), else one of Kubernetes'.
fn resolve_related(
    project: &Project,
    flag: &str,
    value: &str,
    (group, version, kind): (&str, &str, &str),
    owned: bool,
) -> Result<Related> {
    let mut seen = std::collections::BTreeSet::new();
    let known: Vec<&Resource> = project
        .resources
        .iter()
        .filter(|r| (r.api || r.external) && seen.insert((&r.group, &r.version, &r.kind)))
        .collect();
    if let Some(r) = known.iter().find(|r| {
        r.version == version
            && r.kind == kind
            && (r.full_group(&project.domain) == group || (r.api && r.group == group))
    }) {
        return Ok(Related::of_project(project, r, owned));
    }
    if let Some(k) = k8s_kinds::find(group, version, kind) {
        return Ok(Related::new(k, owned));
    }
    if k8s_kinds::is_k8s_group(group) {
        return Err(k8s_kinds::unknown(
            &format!("`--{flag} {value}`"),
            group,
            version,
            kind,
        ));
    }
    let references: Vec<String> = known
        .iter()
        .map(|r| format!("{}/{}/{}", r.full_group(&project.domain), r.version, r.kind))
        .collect();
    let help = match known.iter().find(|r| r.kind == kind) {
        Some(_) => format!("the project's kinds are: {}", references.join(", ")),
        None => "create it first: `rsop create api` for a kind of this project, or `rsop create api --external-api-crd <crd.yaml> --resource=false --controller=false` for another project's".to_string(),
    };
    Err(Error::user_with_help(
        format!("`--{flag} {value}`: the project has no kind `{kind}` in `{group}/{version}`"),
        help,
    ))
}

/// What to do next: edit the kind's types (or its controller, when only
/// that is new), then derive the manifests, test and run.
fn next_steps(changes: &[FileChange]) -> String {
    let file = |dir: &str| {
        changes
            .iter()
            .find(|c| c.path.starts_with(dir) && !c.path.ends_with("mod.rs"))
    };
    let controller = file("src/controllers");
    let edit = match (file("src/api"), file("src/external")) {
        (Some(types), _) => format!("`{}`", types.path.display()),
        // Generated types are not edited: a controller uses them.
        (None, Some(types)) if controller.is_none() => format!(
            "a controller that uses `{}` (`--owns` or `--watches` of its kind)",
            types.path.display()
        ),
        _ => "the controller".to_string(),
    };
    format!(
        "\nnext steps:\n  edit {edit}, then run `rsop manifests`\n  make test\n  \
         make install run   # against your current kube context\n"
    )
}
