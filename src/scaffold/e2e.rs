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
pub const FILES: [&str; 2] = [MAIN, ".github/workflows/test-e2e.yml"];
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
    // rsop-runtime's checks of a deployed operator.
    plan.edit_toml(
        "Cargo.toml",
        TomlEdit::dev_dependency_with("rsop-runtime", &["e2e"]),
    );
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
pub fn kind_path(project: &Project, r: &Resource) -> String {
    let within = super::plans::create_api::Related::of_project(project, r, false).rust_path;
    from_outside(project, &within)
}

/// `path`, a path within the project's crate (`crate::controllers::memcached`), as the crate's
/// tests name it (`memcached_operator::controllers::memcached`).
pub fn from_outside(project: &Project, path: &str) -> String {
    match path.strip_prefix("crate::") {
        Some(rest) => format!("{}::{rest}", project.crate_name()),
        None => path.to_owned(),
    }
}

/// Whether the kind is one of the project's own with a controller, whose sample it reconciles.
pub fn has_sample(r: &Resource) -> bool {
    r.api && r.controller && r.path.is_none()
}

/// `cache_v1alpha1_memcached`: the sample's name, and its tests'.
pub fn stem(r: &Resource) -> String {
    format!(
        "{}_{}_{}",
        r.group_module(),
        r.version,
        r.kind.to_snake_case()
    )
    .to_ascii_lowercase()
}

pub fn sample_path(r: &Resource) -> String {
    format!(
        "config/samples/{}_{}_{}.yaml",
        r.group,
        r.version,
        r.kind.to_ascii_lowercase()
    )
}

/// The test that a kind's sample reconciles, for a kind of the project's own
/// with a controller.
pub fn sample_test(templates: &Templates, project: &Project, r: &Resource) -> Result<Option<Test>> {
    if !has_sample(r) {
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
    let text = templates.render("e2e-fragments/sample_test.rs.tera", &ctx)?;
    Ok(Some(Test::rendered(text)))
}

/// rustfmt's `max_width` and `fn_call_width`, by default.
const MAX_WIDTH: usize = 100;
const FN_CALL_WIDTH: usize = 60;

/// A test for the suite's entry.
#[derive(Debug, Clone)]
pub struct Test {
    pub text: String,
    /// Whether `text` is already as rustfmt lays it out (proven by
    /// `tests_are_laid_out_as_rustfmt_lays_them_out`).
    pub laid_out: bool,
}

impl Test {
    /// A test rendered from the fragments, laid out as rustfmt would unless
    /// a line is too long for that (a long path or name): only rustfmt
    /// knows how to break it.
    fn rendered(text: String) -> Self {
        let laid_out = text.lines().all(|l| {
            // rustfmt breaks a chain (`call(..).await?;`) that reaches
            // `max_width` exactly: a line must stay below it.
            l.len() < MAX_WIDTH
                // A call of two or more arguments wider than
                // `fn_call_width` goes one argument per line.
                && !(l.contains("(&client, \"")
                    && call_args(l).is_some_and(|a| a.len() > FN_CALL_WIDTH))
        });
        Test { text, laid_out }
    }
}

/// The arguments of the call on `line` that takes `&client` first: from
/// after its `(` to its last `)`.
fn call_args(line: &str) -> Option<&str> {
    let start = line.find("(&client")? + 1;
    let end = line.rfind(')')?;
    line.get(start..end)
}

/// The tests of a kind's webhooks, one per webhook. `example` says whether the
/// kind has `create api`'s example fields, on which its webhooks' examples work.
pub fn webhook_tests(
    templates: &Templates,
    project: &Project,
    r: &Resource,
    example: bool,
) -> Result<Vec<Test>> {
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
            let text = templates.render("e2e-fragments/webhook_test.rs.tera", &ctx)?;
            tests.push(Test::rendered(text));
        }
    }
    Ok(tests)
}

/// Inserts the kinds' tests into the suite's entry, laid out by rustfmt first:
/// their names' lengths decide where rustfmt breaks their lines, and a test
/// already there as rustfmt lays it out is not inserted again.
pub fn insert_tests(plan: &mut Plan, tests: &[Test]) -> Result<()> {
    let unformatted: Vec<String> = tests
        .iter()
        .filter(|t| !t.laid_out)
        .map(|t| t.text.clone())
        .collect();
    let mut formatted = rustfmt::format_items(MAIN, &unformatted)?.into_iter();
    for test in tests {
        let text = if test.laid_out {
            format!("{}\n\n", test.text.trim_matches('\n'))
        } else {
            formatted.next().unwrap_or_else(|| test.text.clone())
        };
        plan.insert(MAIN, TESTS, text);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests of a kind of `kind_len` bytes, with every webhook, in a
    /// project and group whose names make the tests' paths and names long
    /// or short.
    fn tests_of(
        name_len: usize,
        kind_len: usize,
        namespaced: bool,
        multigroup: bool,
        example: bool,
    ) -> Vec<Test> {
        let templates = Templates::load_dirs(&TEMPLATE_DIRS).unwrap();
        let mut project = Project::new("example.com", &format!("p{}", "x".repeat(name_len - 1)));
        project.multigroup = multigroup;
        let kind = format!("K{}", "b".repeat(kind_len - 1));
        let r = Resource {
            group: format!("g{}", "r".repeat(name_len / 2)),
            version: "v1alpha1".into(),
            plural: format!("{}s", kind.to_ascii_lowercase()),
            kind,
            api: true,
            controller: true,
            namespaced,
            webhooks: Some(crate::project::Webhooks {
                defaulting: true,
                validation: true,
                conversion: true,
                webhook_version: "v1".into(),
                spoke: Vec::new(),
            }),
            ..Resource::default()
        };
        let mut tests: Vec<Test> = sample_test(&templates, &project, &r)
            .unwrap()
            .into_iter()
            .collect();
        tests.extend(webhook_tests(&templates, &project, &r, example).unwrap());
        tests
    }

    /// The sample and webhook tests a kind gets without rustfmt are, byte
    /// for byte, what rustfmt makes of them, for every kind length up to
    /// past where a call breaks and for names long enough
    /// that lines reach `max_width`; a test with a longer line is left to
    /// rustfmt.
    #[test]
    fn tests_are_laid_out_as_rustfmt_lays_them_out() {
        assert!(
            std::process::Command::new("rustfmt")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success()),
            "this proof needs rustfmt"
        );
        let mut tests = Vec::new();
        for name_len in [1, 10, 20, 30, 40, 50, 60] {
            for kind_len in 1..=48 {
                for (namespaced, multigroup, example) in [(true, false, true), (false, true, false)]
                {
                    tests.extend(tests_of(
                        name_len, kind_len, namespaced, multigroup, example,
                    ));
                }
            }
        }
        let laid_out: Vec<&Test> = tests.iter().filter(|t| t.laid_out).collect();
        // Tests laid out here, and tests left to rustfmt, are covered.
        assert!(
            laid_out
                .iter()
                .any(|t| t.text.contains("deployed().api(&client"))
        );
        assert!(tests.iter().any(|t| !t.laid_out));
        let inputs: Vec<String> = laid_out.iter().map(|t| t.text.clone()).collect();
        let formatted = rustfmt::format_items(MAIN, &inputs).unwrap();
        for (test, rustfmt) in inputs.iter().zip(&formatted) {
            let ours = format!("{}\n\n", test.trim_matches('\n'));
            assert_eq!(&ours, rustfmt, "rustfmt lays this test out otherwise");
        }
    }
}
