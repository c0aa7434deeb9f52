//! The end-to-end suite of a project (`--e2e`): `tests/e2e/`, its workflow and
//! the Makefile's `test-e2e`, with a test for each kind's sample and webhooks,
//! added by `create api` and `create webhook` at the suite's marker.

use std::path::Path;

use heck::ToSnakeCase;

use crate::Result;
use crate::output::Disk;
use crate::project::{Project, Resource};
use crate::scaffold::{IfExists, Marker, Plan, TomlEdit, rustfmt};
use crate::templates::Templates;

/// The suite's entry, where the kinds' tests go.
pub const MAIN: &str = "tests/e2e/main.rs";
/// The files of the suite, as `rsop edit --e2e=false` removes them.
pub const FILES: [&str; 4] = [
    MAIN,
    "tests/e2e/checks.rs",
    "tests/e2e/recorded.rs",
    ".github/workflows/test-e2e.yml",
];
pub const TESTS: Marker = Marker::new("e2e-tests");
/// What marks a Makefile that has the suite's targets.
const MAKEFILE_TARGET: &str = "\ntest-e2e:";
/// The template directories the suite is rendered from.
pub const TEMPLATE_DIRS: [&str; 2] = ["e2e/", "e2e-fragments/"];
const MAKEFILE_SECTION: &str = "e2e-fragments/makefile.tera";

/// The Makefile's e2e section.
pub fn makefile_section(templates: &Templates, ctx: &tera::Context) -> Result<String> {
    templates.render(MAKEFILE_SECTION, ctx)
}

/// Plans the whole suite for `project` as it stands: its files and a test for
/// each kind. The kinds' types are read from `disk`, to know which examples
/// their webhooks have.
pub fn plan(
    plan: &mut Plan,
    templates: &Templates,
    ctx: &tera::Context,
    project: &Project,
    disk: &Disk,
    if_exists: IfExists,
) -> Result<()> {
    super::plans::init::plan_dir(plan, templates, ctx, "e2e/", if_exists)?;
    for name in ["serde_yaml_ng", "tower-test"] {
        plan.edit_toml("Cargo.toml", TomlEdit::dev_dependency(name));
    }
    let mut tests = Vec::new();
    for r in &project.resources {
        tests.extend(sample_test(templates, project, r)?);
        // The types of the project's own kinds tell which examples their webhooks have.
        let own = r.api && r.path.is_none();
        let types = own.then(|| disk.read(Path::new(&project.types_path(r))));
        let example = match types.transpose()? {
            Some(Some(source)) => {
                super::plans::create_webhook::Shape::of(&source)
                    == super::plans::create_webhook::Shape::Example
            }
            _ => false,
        };
        tests.extend(webhook_tests(templates, project, r, example)?);
    }
    insert_tests(plan, &tests)
}

/// Appends the suite's targets to a Makefile without them.
pub fn plan_makefile(
    plan: &mut Plan,
    templates: &Templates,
    ctx: &tera::Context,
    disk: &Disk,
) -> Result<()> {
    if let Some(makefile) = disk.read(Path::new("Makefile"))?
        && !makefile.contains(MAKEFILE_TARGET)
    {
        let section = makefile_section(templates, ctx)?;
        let separator = if makefile.ends_with("\n\n") { "" } else { "\n" };
        plan.create(
            "Makefile",
            format!("{makefile}{separator}{section}"),
            IfExists::Overwrite,
        );
    }
    Ok(())
}

/// `makefile` without the suite's targets as rsop wrote them (`section`) and the blank line
/// before them, as `plan_makefile` appended them; `None` when they are not there as written, so
/// that edited targets stay.
pub fn without_makefile_section(makefile: &str, section: &str) -> Option<String> {
    let start = makefile.find(section)?;
    let before = &makefile[..start];
    let before = if before.ends_with("\n\n") {
        &before[..start - 1]
    } else {
        before
    };
    Some(format!("{before}{}", &makefile[start + section.len()..]))
}

/// Whether a command adding a kind to `project` (at `root`) extends its suite.
pub fn extends(project: &Project, root: &Path) -> bool {
    project.e2e && root.join(MAIN).is_file()
}

/// The Rust path of a kind's own types, from the tests' crate: the path `create api` gives it
/// within the crate, under the crate's name.
fn kind_path(project: &Project, r: &Resource) -> String {
    let within = super::plans::create_api::Related::of_project(project, r, false).rust_path;
    match within.strip_prefix("crate::") {
        Some(rest) => format!("{}::{rest}", project.crate_name()),
        None => within,
    }
}

/// `cache_v1alpha1_memcached`: the sample's name, and its tests'.
fn stem(r: &Resource) -> String {
    format!(
        "{}_{}_{}",
        r.group_module(),
        r.version,
        r.kind.to_snake_case()
    )
    .to_ascii_lowercase()
}

fn sample_path(r: &Resource) -> String {
    format!(
        "config/samples/{}_{}_{}.yaml",
        r.group,
        r.version,
        r.kind.to_ascii_lowercase()
    )
}

/// The test that a kind's sample reconciles, for a kind of the project's own
/// with a controller.
pub fn sample_test(
    templates: &Templates,
    project: &Project,
    r: &Resource,
) -> Result<Option<String>> {
    if !(r.api && r.controller && r.path.is_none()) {
        return Ok(None);
    }
    let mut ctx = tera::Context::new();
    ctx.insert("kind", &r.kind);
    ctx.insert("kind_path", &kind_path(project, r));
    ctx.insert("sample_path", &sample_path(r));
    ctx.insert("sample_stem", &stem(r));
    ctx.insert("namespaced", &r.namespaced);
    // The `--image` controller reports the Deployment's availability.
    let condition = if r.image.is_some() {
        "Available"
    } else {
        "Ready"
    };
    ctx.insert("condition", condition);
    templates
        .render("e2e-fragments/sample_test.rs.tera", &ctx)
        .map(Some)
}

/// The tests of a kind's webhooks, one per webhook. `example` says whether the
/// kind has `create api`'s example fields, on which its webhooks' examples work.
pub fn webhook_tests(
    templates: &Templates,
    project: &Project,
    r: &Resource,
    example: bool,
) -> Result<Vec<String>> {
    let Some(webhooks) = &r.webhooks else {
        return Ok(Vec::new());
    };
    let group_full = r.full_group(&project.domain);
    let kind_lower = r.kind.to_ascii_lowercase();
    let (mutate_path, validate_path) = super::plans::create_webhook::webhook_paths(project, r);
    let own = r.api && r.path.is_none();
    let mut ctx = tera::Context::new();
    ctx.insert("kind", &r.kind);
    ctx.insert("kind_lower", &kind_lower);
    ctx.insert("kind_path", &kind_path(project, r));
    ctx.insert("stem", &stem(r));
    ctx.insert("namespaced", &r.namespaced);
    ctx.insert("example", &(own && example));
    ctx.insert("sample_path", &(own.then(|| sample_path(r))));
    ctx.insert("crd_name", &format!("{}.{group_full}", r.plural));
    let mut tests = Vec::new();
    for (which, on, path) in [
        ("defaulting", webhooks.defaulting, mutate_path),
        ("validation", webhooks.validation, validate_path),
        ("conversion", webhooks.conversion, String::new()),
    ] {
        if on {
            ctx.insert("which", which);
            ctx.insert("path", &path);
            tests.push(templates.render("e2e-fragments/webhook_test.rs.tera", &ctx)?);
        }
    }
    Ok(tests)
}

/// Inserts the kinds' tests into the suite's entry, laid out by rustfmt first:
/// their names' lengths decide where rustfmt breaks their lines, and a test
/// already there as rustfmt lays it out is not inserted again.
pub fn insert_tests(plan: &mut Plan, tests: &[String]) -> Result<()> {
    for test in rustfmt::format_items(MAIN, tests)? {
        plan.insert(MAIN, TESTS, test);
    }
    Ok(())
}
