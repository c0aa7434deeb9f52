//! What a PROJECT file from before rsop recorded every option lacks, read
//! back from the scaffold that rsop wrote then: the license and its owner,
//! and the options of `create api --image`. Only what the files show
//! unambiguously is taken; anything else is asked for by name.

use std::path::{Path, PathBuf};

use heck::ToSnakeCase;
use syn::visit::Visit;

use super::merge::Texts;
use crate::project::{ImageRecord, LicenseRecord, PROJECT_FILE, Project, Resource};
use crate::{Error, Result};

/// Fills in what `project` lacks from `scaffold`, the files of the scaffold
/// it was made with. Returns a line for each option inferred.
pub fn complete(project: &mut Project, scaffold: &Texts) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    if project.license.is_none() {
        let license = scaffold.get(Path::new("LICENSE"));
        let (record, owner) = match license {
            None => (LicenseRecord::None, None),
            Some(text) if text.starts_with("MIT License") => {
                let owner = text
                    .lines()
                    .find_map(|l| l.strip_prefix("Copyright (c) "))
                    .map(|o| o.trim().to_string());
                (LicenseRecord::Mit, owner)
            }
            Some(text) if text.contains("Apache License") => (LicenseRecord::Apache2, None),
            Some(_) => {
                return Err(missing(
                    "the project's license: LICENSE is neither of the licenses rsop writes",
                    "license: none",
                ));
            }
        };
        notes.push(format!("license: {record:?}").to_ascii_lowercase());
        project.license = Some(record);
        if owner.is_some() && project.owner.is_none() {
            notes.push(format!("owner: {}", owner.as_deref().unwrap_or_default()));
            project.owner = owner;
        }
    }
    if project.cli_version.is_some() {
        return Ok(notes);
    }
    let domain = project.domain.clone();
    // The kinds of PROJECT an `--owns` or `--watches` can name: (group,
    // plural, reference).
    let kinds: Vec<(String, String, String)> = project
        .resources
        .iter()
        .filter(|r| r.api || r.external)
        .map(|r| {
            let group = r.full_group(&domain);
            (
                group.clone(),
                r.plural.clone(),
                format!("{group}/{}/{}", r.version, r.kind),
            )
        })
        .collect();
    for resource in &mut project.resources {
        if resource.external && resource.external_api_crd.is_none() {
            return Err(missing(
                &format!(
                    "the CRD the external kind `{}` was generated from",
                    resource.kind
                ),
                "externalApiCrd: <path of the CRD file>",
            ));
        }
        if resource.image.is_none()
            && resource.api
            && resource.controller
            && let Some(image) = image_options(resource, scaffold)?
        {
            notes.push(format!(
                "the `--image {}` options of {}",
                image.image, resource.kind
            ));
            resource.image = Some(image);
        }
        // `--image` controllers own their Deployment by themselves.
        if resource.image.is_none()
            && resource.controller
            && resource.owns.is_empty()
            && resource.watches.is_empty()
            && let Some((path, text)) =
                find(scaffold, "src/controllers/", &resource.controller_module())
            && [".owns(", ".owns_stream(", ".watches(", ".watches_stream("]
                .iter()
                .any(|call| text.contains(call))
        {
            let Some((owns, watches)) = related_from_markers(resource, &domain, &kinds, path, text)
            else {
                return Err(Error::user_with_help(
                    format!(
                        "`{PROJECT_FILE}` does not record the `--owns` and `--watches` of the controller `{}`, \
                         and rsop cannot read them back from `{}`",
                        resource.controller_name(),
                        path.display()
                    ),
                    format!(
                        "add them to its entry in `{PROJECT_FILE}` by hand (`owns: [apps/v1/Deployment, ...]`, \
                         `watches: [v1/Pod, ...]`), then run `rsop update` again"
                    ),
                ));
            };
            notes.push(format!(
                "the `--owns {}` and `--watches {}` of the controller `{}`",
                owns.join(","),
                watches.join(","),
                resource.controller_name()
            ));
            resource.owns = owns;
            resource.watches = watches;
        }
    }
    Ok(notes)
}

/// The `--owns` and `--watches` of a controller scaffolded before PROJECT
/// recorded them, read back from its RBAC markers as that scaffold wrote
/// them: after the markers of the controller's own kind and its events,
/// one marker per owned kind with every verb (`create` among them), then
/// one per watched kind with the read verbs. `None` when a marker names a
/// kind rsop cannot name back.
fn related_from_markers(
    resource: &Resource,
    domain: &str,
    kinds: &[(String, String, String)],
    path: &Path,
    text: &str,
) -> Option<(Vec<String>, Vec<String>)> {
    let mut problems = Vec::new();
    let rules = crate::manifests::emit::rbac::parse_markers(path, text, &mut problems);
    if !problems.is_empty() {
        return None;
    }
    let own_group = resource.full_group(domain);
    let own_group = if resource.path.is_some() && resource.group == "core" {
        String::new()
    } else {
        own_group
    };
    let (mut owns, mut watches) = (Vec::new(), Vec::new());
    for rule in rules {
        let [group] = rule.groups.as_slice() else {
            return None;
        };
        let [plural] = rule.resources.as_slice() else {
            return None;
        };
        let base = plural.split('/').next().unwrap_or(plural);
        if (*group == own_group && base == resource.plural)
            || (group == "events.k8s.io" && plural == "events")
        {
            continue;
        }
        let reference = crate::project::k8s_kinds::KINDS
            .iter()
            .find(|k| {
                k.plural == plural && (k.group == group || (k.group == "core" && group.is_empty()))
            })
            .map(crate::project::k8s_kinds::K8sKind::reference)
            .or_else(|| {
                kinds
                    .iter()
                    .find(|(g, p, _)| g == group && p == plural)
                    .map(|(_, _, reference)| reference.clone())
            })?;
        if rule.verbs.iter().any(|v| v == "create") {
            owns.push(reference);
        } else {
            watches.push(reference);
        }
    }
    (!owns.is_empty() || !watches.is_empty()).then_some((owns, watches))
}

/// The options of `create api --image` that made the kind, when its
/// scaffolded types show an image.
fn image_options(resource: &Resource, scaffold: &Texts) -> Result<Option<ImageRecord>> {
    let stem = resource.kind.to_snake_case();
    let Some((types_path, types)) = find(scaffold, "src/api/", &stem) else {
        return Ok(None);
    };
    let Ok(types_file) = syn::parse_file(types) else {
        return Ok(None);
    };
    let Some(image) = first_literal(&types_file, "default_image") else {
        return Ok(None);
    };
    let container_port =
        first_literal(&types_file, "default_container_port").and_then(|port| port.parse().ok());
    let controller = find(scaffold, "src/controllers/", &resource.controller_module())
        .and_then(|(_, text)| syn::parse_file(text).ok());
    let Some(controller) = controller else {
        return Err(missing(
            &format!(
                "the `--image` options of `{}` (its controller is not in the scaffold, and `{}` shows only the image)",
                resource.kind,
                types_path.display()
            ),
            "image: {image: ..., containerPort: ..., command: ..., runAsUser: ...}",
        ));
    };
    Ok(Some(ImageRecord {
        image,
        container_port,
        command: container_command(&controller),
        run_as_user: first_literal(&controller, "RUN_AS_USER").and_then(|u| u.parse().ok()),
    }))
}

fn missing(what: &str, field: &str) -> Error {
    Error::user_with_help(
        format!("`{PROJECT_FILE}` does not record {what}, and the scaffold does not show it"),
        format!("add it to `{PROJECT_FILE}` by hand (`{field}`), then run `rsop update` again"),
    )
}

fn find<'a>(files: &'a Texts, dir: &str, stem: &str) -> Option<(&'a PathBuf, &'a String)> {
    files
        .iter()
        .find(|(path, _)| path.starts_with(dir) && path.file_stem().is_some_and(|s| s == stem))
}

/// The first string or integer literal in the function or constant `name`.
fn first_literal(file: &syn::File, name: &str) -> Option<String> {
    struct Finder<'a> {
        name: &'a str,
        inside: bool,
        found: Option<String>,
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
            let was = self.inside;
            self.inside |= f.sig.ident == self.name;
            syn::visit::visit_item_fn(self, f);
            self.inside = was;
        }
        fn visit_item_const(&mut self, c: &'ast syn::ItemConst) {
            let was = self.inside;
            self.inside |= c.ident == self.name;
            syn::visit::visit_item_const(self, c);
            self.inside = was;
        }
        // Doc comments are string literals too.
        fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}
        fn visit_lit(&mut self, lit: &'ast syn::Lit) {
            if !self.inside || self.found.is_some() {
                return;
            }
            self.found = match lit {
                syn::Lit::Str(s) => Some(s.value()),
                syn::Lit::Int(i) => Some(i.base10_digits().to_string()),
                _ => None,
            };
        }
    }
    let mut finder = Finder {
        name,
        inside: false,
        found: None,
    };
    finder.visit_file(file);
    finder.found
}

/// The comma-separated expressions of a macro call such as `vec![..]`,
/// whose body syn leaves as tokens; none when it holds something else.
fn macro_args(mac: &syn::Macro) -> Vec<syn::Expr> {
    mac.parse_body_with(syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
        .map(|exprs| exprs.into_iter().collect())
        .unwrap_or_default()
}

/// The words of the container's `command: Some(vec![..])`, as the one
/// string `--image-container-command` took.
fn container_command(file: &syn::File) -> Option<String> {
    struct Finder {
        found: Option<String>,
    }
    impl<'ast> Visit<'ast> for Finder {
        fn visit_field_value(&mut self, field: &'ast syn::FieldValue) {
            if let syn::Member::Named(name) = &field.member
                && name == "command"
                && self.found.is_none()
            {
                let mut words = Words(Vec::new());
                words.visit_expr(&field.expr);
                if !words.0.is_empty() {
                    self.found = Some(words.0.join(" "));
                }
            }
            syn::visit::visit_field_value(self, field);
        }
        // The container is built inside `vec![..]`, whose body syn leaves
        // as tokens.
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            for expr in &macro_args(mac) {
                self.visit_expr(expr);
            }
        }
    }
    struct Words(Vec<String>);
    impl<'ast> Visit<'ast> for Words {
        fn visit_lit_str(&mut self, s: &'ast syn::LitStr) {
            self.0.push(s.value());
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            for expr in &macro_args(mac) {
                self.visit_expr(expr);
            }
        }
    }
    let mut finder = Finder { found: None };
    finder.visit_file(file);
    finder.found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_options_are_read_from_an_old_scaffold() {
        let mut project = Project::new("example.com", "memcached-operator");
        project.cli_version = None;
        project.resources.push(crate::project::Resource {
            group: "cache".into(),
            version: "v1alpha1".into(),
            kind: "Memcached".into(),
            plural: "memcacheds".into(),
            api: true,
            namespaced: true,
            controller: true,
            ..Default::default()
        });
        let scaffold: Texts = [
            (
                "src/api/v1alpha1/memcached.rs",
                "fn default_image() -> String {\n    \"memcached:1.6.26-alpine\".into()\n}\n\
                 fn default_container_port() -> Option<i32> {\n    Some(11211)\n}\n",
            ),
            (
                "src/controllers/memcached.rs",
                "/// The user.\nconst RUN_AS_USER: i64 = 1001;\nfn d() { let c = vec![Container { command: Some(vec![\"memcached\".into(), \"-m=64\".into()]), ..Default::default() }]; }\n",
            ),
            ("LICENSE", "MIT License\n\nCopyright (c) Acme Corp\n"),
        ]
        .into_iter()
        .map(|(p, t)| (PathBuf::from(p), t.to_string()))
        .collect();
        complete(&mut project, &scaffold).unwrap();
        assert_eq!(
            project.resources[0].image,
            Some(ImageRecord {
                image: "memcached:1.6.26-alpine".into(),
                container_port: Some(11211),
                command: Some("memcached -m=64".into()),
                run_as_user: Some(1001),
            })
        );
        assert_eq!(project.license, Some(LicenseRecord::Mit));
        assert_eq!(project.owner.as_deref(), Some("Acme Corp"));
    }

    #[test]
    fn watches_an_old_project_does_not_record_are_asked_for() {
        let mut project = Project::new("example.com", "exporter-operator");
        project.cli_version = None;
        project.resources.push(crate::project::Resource {
            group: "monitoring".into(),
            version: "v1alpha1".into(),
            kind: "Exporter".into(),
            plural: "exporters".into(),
            api: true,
            namespaced: true,
            controller: true,
            ..Default::default()
        });
        let scaffold: Texts = [
            ("LICENSE", "Apache License\n"),
            (
                "src/controllers/exporter.rs",
                "fn run() { Controller::new(api, wc).owns_stream(deployment_events); }\n",
            ),
        ]
        .into_iter()
        .map(|(p, t)| (PathBuf::from(p), t.to_string()))
        .collect();
        let err = complete(&mut project.clone(), &scaffold)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`--owns` and `--watches` of the controller `exporter`"),
            "{err}"
        );

        // The markers that scaffold wrote name them.
        let mut scaffold = scaffold;
        scaffold.insert(
            PathBuf::from("src/controllers/exporter.rs"),
            "// +rsop:rbac:groups=monitoring.example.com,resources=exporters,verbs=get;list;watch;create;update;patch;delete\n\
             // +rsop:rbac:groups=monitoring.example.com,resources=exporters/status,verbs=get;update;patch\n\
             // +rsop:rbac:groups=events.k8s.io,resources=events,verbs=create;patch\n\
             // +rsop:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete\n\
             // +rsop:rbac:groups=core,resources=pods,verbs=get;list;watch\n\
             fn run() { Controller::new(api, wc).owns_stream(deployment_events); }\n"
                .to_string(),
        );
        complete(&mut project, &scaffold).unwrap();
        assert_eq!(project.resources[0].owns, ["apps/v1/Deployment"]);
        assert_eq!(project.resources[0].watches, ["v1/Pod"]);
    }
}
