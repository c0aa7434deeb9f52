//! `rsop create api`: the arguments checked against the project into
//! [`CreateApiOptions`], the kind planned and resolved together with the
//! manifests derived from the tree it makes, then written (or listed, with
//! `--dry-run`).

use std::io::Write;
use std::path::Path;

use super::{say, write_unless_dry_run};
use crate::cli::CreateApiArgs;
use crate::output::{self, FileChange, Mode, Outcome};
use crate::project::{Project, Resource, names};
use crate::scaffold::plans::create_api::{self, CreateApiOptions, ImageOptions};
use crate::templates::Templates;
use crate::{Error, Result};

pub fn run(args: &CreateApiArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let opts = options(args, cwd)?;
    let templates = Templates::load_dirs(&["create-api/"])?;
    let (plan, formatting) = create_api::plan(&opts, &templates)?;
    let mut changes = create_api::resolve_with_manifests(&opts, &plan)?;
    formatting.finish(&mut changes)?;
    let mode = write_unless_dry_run(args.dry_run);
    let outcome = output::apply(cwd, &changes, mode, out)?;
    if mode == Mode::Write {
        say(out, &next_steps(&changes))?;
    }
    Ok(outcome)
}

/// Validates the arguments against the project at `root`.
fn options(args: &CreateApiArgs, root: &Path) -> Result<CreateApiOptions> {
    let project = Project::load(root, "create api")?;
    let plural = names::validate_kind_names(
        &args.group,
        &args.version,
        &args.kind,
        args.plural.as_deref(),
    )?;
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
    let resource = Resource {
        group: args.group.clone(),
        version: args.version.clone(),
        kind: args.kind.clone(),
        plural,
        api: args.resource,
        namespaced: args.namespaced,
        controller: args.controller,
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
    Ok(CreateApiOptions {
        root: root.to_path_buf(),
        project,
        resource,
        image,
        additional_version,
        controller_only: !args.resource,
        force: args.force,
    })
}

/// What to do next: edit the kind's types (or its controller, when only
/// that is new), then derive the manifests, test and run.
fn next_steps(changes: &[FileChange]) -> String {
    let edit = changes
        .iter()
        .find(|c| c.path.starts_with("src/api") && !c.path.ends_with("mod.rs"))
        .map_or_else(
            || "the controller".to_string(),
            |c| format!("`{}`", c.path.display()),
        );
    format!(
        "\nnext steps:\n  edit {edit}, then run `rsop manifests`\n  make test\n  \
         make install run   # against your current kube context\n"
    )
}
