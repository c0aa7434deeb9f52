//! Proof that the kind's templates are already laid out as rustfmt would
//! lay them out for every name within [`LAYOUT_BOUNDS`], which is what lets
//! `create api` skip its rustfmt process for them.
//!
//! Every name is swept over its whole range, once with the other names at
//! their shortest and once at their longest, through every variant of the
//! templates; the Rust files a real `create api` plan would write (the
//! kind's files and the inserts into existing modules and the manager) go
//! through one `rustfmt --check`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::output::{self, Mode};
use crate::scaffold::plans::init::{self, InitOptions, License};

/// One `create api` on a fresh project.
#[derive(Debug, Clone)]
struct Sample {
    project_name: String,
    domain: String,
    multigroup: bool,
    group: String,
    version: String,
    kind: String,
    plural: Option<String>,
    namespaced: bool,
    image: Option<String>,
    port: Option<u16>,
    run_as_user: Option<u32>,
}

impl Sample {
    fn describe(&self) -> String {
        format!("{self:?}")
    }

    fn init_key(&self) -> (String, String, bool) {
        (
            self.project_name.clone(),
            self.domain.clone(),
            self.multigroup,
        )
    }

    /// The options `create api` makes of this sample's arguments on the
    /// fresh project at `root`, the names checked as it checks them.
    fn options(&self, root: &Path) -> Result<CreateApiOptions> {
        let project = Project::load(root, "create api")?;
        let plural = names::validate_kind_names(
            &self.group,
            &self.version,
            &self.kind,
            self.plural.as_deref(),
        )?;
        let resource = Resource {
            group: self.group.clone(),
            version: self.version.clone(),
            kind: self.kind.clone(),
            plural,
            api: true,
            namespaced: self.namespaced,
            controller: true,
            controller_name: None,
            path: None,
            external: false,
            domain: None,
            webhooks: None,
            ..Resource::default()
        };
        let image = self.image.clone().map(|image| ImageOptions {
            image,
            container_port: self.port,
            command: Vec::new(),
            run_as_user: self.run_as_user.unwrap_or(1001),
        });
        Ok(CreateApiOptions {
            root: root.to_path_buf(),
            project,
            resource,
            image,
            additional_version: false,
            controller_only: false,
            force: false,
            related: Vec::new(),
            external: None,
        })
    }
}

/// A kind of `len` characters; `humps` gives the longest module name
/// (`AbAbA` -> `ab_ab_a`), otherwise one word (`Aaaaa`).
fn kind_of(len: usize, humps: bool) -> String {
    (0..len)
        .map(|i| match (i, humps) {
            (0, _) => 'A',
            (i, true) if i % 2 == 0 => 'A',
            (_, true) => 'b',
            (_, false) => 'a',
        })
        .collect()
}

fn label_of(len: usize) -> String {
    "g".repeat(len)
}

fn version_of(len: usize) -> String {
    match len {
        0..=6 => format!("v{}", "1".repeat(len.max(2) - 1)),
        7 => "v1beta1".into(),
        _ => format!("v1alpha{}", "1".repeat(len - 7)),
    }
}

fn domain_of(len: usize) -> String {
    // `d.io` at its shortest; a DNS name of dotted labels otherwise.
    let mut d = "io".to_string();
    while d.len() + 2 <= len {
        d.insert_str(0, "d.");
    }
    if d.len() < len {
        d.insert(0, 'd');
    }
    d
}

fn image_of(len: usize) -> String {
    let base = "r.io/i:1";
    if len <= base.len() {
        return "i".repeat(len.max(1));
    }
    format!("r.io/{}:1", "i".repeat(len - base.len() + 1))
}

/// The Rust files `sample` would write, as a fresh project gets them.
fn rendered(sample: &Sample, root: &Path, templates: &Templates) -> Vec<(PathBuf, String)> {
    let opts = sample
        .options(root)
        .unwrap_or_else(|e| panic!("{}: {e}", sample.describe()));
    // Only the manager's start line limits a multigroup path; every other
    // sample must take the path without rustfmt.
    let fast = layout_stable(&opts, &Layout::new(&opts.project, &opts.resource));
    assert!(
        fast || sample.multigroup,
        "{} is out of bounds",
        sample.describe()
    );
    let (plan, formatting) = plan(&opts, templates).expect("plan");
    let mut changes = scaffold::resolve(&plan, &Disk::new(root)).expect("resolve");
    formatting.finish(&mut changes).expect("rustfmt");
    changes
        .into_iter()
        .filter(|c| c.path.extension().is_some_and(|e| e == "rs"))
        .map(|c| (c.path, c.after))
        .collect()
}

/// The project `rsop init --domain <domain> --project-name <name>
/// [--multigroup]` writes in `dir`.
fn init_project(dir: &Path, project_name: &str, domain: &str, multigroup: bool) {
    names::validate_domain(domain).expect("valid domain");
    names::validate_project_name(project_name).expect("valid project name");
    let mut project = Project::new(domain, project_name);
    project.multigroup = multigroup;
    // The e2e suite's kind tests go through rustfmt on every run.
    project.e2e = false;
    let opts = InitOptions {
        dir: dir.to_path_buf(),
        project,
        owner: format!("The {project_name} Authors"),
        license: Some(License::Apache2),
        force: false,
    };
    let templates = Templates::load_dirs(init::TEMPLATE_DIRS).expect("templates");
    let disk = init::disk(&opts, dir);
    let plan = init::plan(&opts, &templates, &disk).expect("plan");
    let changes = scaffold::resolve(&plan, &disk).expect("resolve");
    output::apply(disk.root(), &changes, Mode::Write, &mut Vec::new()).expect("init");
}

/// Runs the samples and returns rustfmt's complaints, by sample.
fn rustfmt_problems(samples: &[Sample]) -> String {
    let work = tempfile::tempdir().expect("temp dir");
    let templates = Templates::load_dirs(&["create-api/"]).expect("templates");
    let mut projects: Vec<((String, String, bool), PathBuf)> = Vec::new();
    let mut files = Vec::new();
    for (i, sample) in samples.iter().enumerate() {
        let key = sample.init_key();
        let root = if let Some((_, root)) = projects.iter().find(|(k, _)| *k == key) {
            root.clone()
        } else {
            let root = work.path().join(format!("project{}", projects.len()));
            init_project(&root, &key.0, &key.1, key.2);
            projects.push((key, root.clone()));
            root
        };
        let rendered = rendered(sample, &root, &templates);
        // rustfmt checks the modules a file declares along with it, so only
        // the files no other changed module declares are passed; `lib.rs`
        // declares `init`'s modules, which are not in the sample.
        let roots: Vec<PathBuf> = rendered
            .iter()
            .map(|(p, _)| p.clone())
            .filter(|p| {
                p != Path::new("src/lib.rs")
                    && !rendered.iter().any(|(other, _)| {
                        other != p
                            && other.file_name().is_some_and(|n| n == "mod.rs")
                            && p.starts_with(other.parent().unwrap())
                    })
            })
            .collect();
        let paths: Vec<PathBuf> = rendered.iter().map(|(p, _)| p.clone()).collect();
        for (path, text) in rendered {
            let out = work.path().join(format!("sample{i}")).join(&path);
            std::fs::create_dir_all(out.parent().unwrap()).unwrap();
            std::fs::write(&out, &text).unwrap();
            // The envtest suite's entry declares the modules of the kinds' tests.
            if path == Path::new(ENVTEST_MAIN) {
                for module in text.lines().filter_map(|l| l.strip_prefix("mod ")) {
                    let file = format!("{}.rs", module.trim_end_matches(';'));
                    if !paths.contains(&path.with_file_name(&file)) {
                        std::fs::write(out.with_file_name(file), "//! A stand-in.\n").unwrap();
                    }
                }
            }
            if roots.contains(&path) {
                files.push(out);
            }
        }
    }
    let mut problems = String::new();
    for chunk in files.chunks(200) {
        let output = Command::new(std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into()))
            .args(["--check", "--edition", "2024"])
            .args(chunk)
            .output()
            .expect("rustfmt runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        for line in stdout.lines() {
            if let Some(rest) = line.strip_prefix("Diff in ") {
                let rel = rest.trim_start_matches(&*work.path().display().to_string());
                let index: usize = rel
                    .trim_start_matches("/sample")
                    .split('/')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(usize::MAX);
                let _ = writeln!(
                    problems,
                    "{rel}\n    {}",
                    samples
                        .get(index)
                        .map_or_else(String::new, Sample::describe)
                );
            }
        }
        if std::env::var_os("RSOP_LAYOUT_DIFF").is_some() {
            problems.push_str(&stdout);
        }
        if !output.status.success() && stdout.is_empty() {
            let _ = writeln!(
                problems,
                "rustfmt failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
    problems
}

/// The shortest value of each bounded name: kind, plural, project name,
/// full group, version, image.
const MIN: [usize; 6] = [1, 1, 1, 6, 2, 1];

fn max() -> [usize; 6] {
    let b = &LAYOUT_BOUNDS;
    [
        b.kind,
        b.plural,
        b.project_name,
        b.group_full,
        b.version,
        b.image,
    ]
}

/// A sample whose names have the given lengths; `variant` picks the
/// template variant.
fn sample(len: [usize; 6], humps: bool, variant: usize, explicit_plural: bool) -> Sample {
    let group = ((len[3] - 4) / 2).max(1);
    let image = matches!(variant, 3 | 4).then(|| image_of(len[5]));
    let long = len[0] > MIN[0] + (max()[0] - MIN[0]) / 2;
    Sample {
        project_name: label_of(len[2]),
        domain: domain_of(len[3] - group - 1),
        multigroup: variant == 2,
        group: label_of(group),
        version: version_of(len[4]),
        kind: kind_of(len[0], humps),
        plural: explicit_plural.then(|| label_of(len[1])),
        namespaced: variant != 1,
        port: (variant == 3).then_some(if long { 65535 } else { 1 }),
        run_as_user: (variant == 3).then_some(if long { u32::MAX } else { 0 }),
        image,
    }
}

/// rustfmt lays a construct out by whether it fits, so a layout that holds
/// at both ends of a range of widths holds in between: the names grow
/// together in steps, and each name also goes to one end while the others
/// sit at the other.
#[test]
fn kind_templates_are_rustfmt_clean_within_the_layout_bounds() {
    const STEPS: usize = 12;
    let (min, max) = (MIN, max());
    let mut lengths: Vec<[usize; 6]> = (0..=STEPS)
        .map(|step| std::array::from_fn(|i| min[i] + (max[i] - min[i]) * step / STEPS))
        .collect();
    for i in 0..6 {
        let mut low = min;
        low[i] = max[i];
        let mut high = max;
        high[i] = min[i];
        lengths.extend([low, high]);
    }
    let mut samples = Vec::new();
    for (n, len) in lengths.iter().enumerate() {
        for variant in 0..5 {
            for humps in [false, true] {
                samples.push(sample(*len, humps, variant, (n + variant) % 2 == 0));
            }
        }
    }
    let problems = rustfmt_problems(&samples);
    assert!(
        problems.is_empty(),
        "{} samples; rustfmt would change:\n{problems}",
        samples.len()
    );
}
