//! The tutorials, run: every command of their `sh` blocks, in order, in a
//! temporary directory, and every file block (```` ```rust file=<path> ````)
//! written into the project at that point; `console` blocks need a cluster
//! and are not run.

use std::path::{Path, PathBuf};

use crate::generated::cargo_gates;
use crate::support::{generated_cargo_env, render_and_validate, rsop, run_tool};

/// One step of a tutorial.
#[derive(Debug)]
pub enum Step {
    /// A line of an `sh` block.
    Command(String),
    /// A block with a `file=` path: the file's whole text.
    File { path: String, text: String },
}

/// The kind of fenced block being read.
enum Block {
    /// `sh`: commands, one a line.
    Commands,
    /// `file=<path>`: a file's text.
    File(String),
    /// Anything else (`console`, plain `rust`): not run.
    Skipped,
}

/// The steps of a tutorial, in order.
fn steps(text: &str) -> Vec<Step> {
    let mut out = Vec::new();
    let mut block: Option<Block> = None;
    let mut body = String::new();
    for line in text.lines() {
        match (block.take(), line.trim_end()) {
            (None, fence) if fence.starts_with("```") && fence.len() > 3 => {
                let info = &fence[3..];
                let file = info
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("file="));
                block = Some(match file {
                    Some(path) => Block::File(path.to_string()),
                    None if info == "sh" => Block::Commands,
                    None => Block::Skipped,
                });
                body.clear();
            }
            (Some(Block::File(path)), "```") => out.push(Step::File {
                path,
                text: std::mem::take(&mut body),
            }),
            (Some(Block::Commands), "```") => out.extend(
                body.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| Step::Command(l.trim().to_string())),
            ),
            (Some(Block::Skipped), "```") | (None, _) => {}
            (Some(open), _) => {
                body.push_str(line);
                body.push('\n');
                block = Some(open);
            }
        }
    }
    out
}

/// The commands of a page's `sh` code blocks.
pub fn commands(text: &str) -> Vec<String> {
    steps(text)
        .into_iter()
        .filter_map(|s| match s {
            Step::Command(c) => Some(c),
            Step::File { .. } => None,
        })
        .collect()
}

/// Splits a command line on spaces, keeping "quoted" words whole.
pub fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in command.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Runs the tutorial `doc` (under docs/) in `dir`, checking that it has at
/// least `min_commands` commands; returns the directory it ends in.
fn run_tutorial(doc: &str, dir: &Path, min_commands: usize) -> PathBuf {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").join(doc))
            .unwrap();
    let steps = steps(&text);
    let commands = steps
        .iter()
        .filter(|s| matches!(s, Step::Command(_)))
        .count();
    assert!(
        commands >= min_commands,
        "{doc} lost its commands: {steps:?}"
    );
    run_steps(steps, dir)
}

/// Runs `commands` (rsop, cd, cargo, `kubectl kustomize config/default`) from
/// `dir`, each of which must succeed; returns the directory they end in.
pub fn run_commands(commands: &[String], dir: &Path) -> PathBuf {
    run_steps(commands.iter().cloned().map(Step::Command).collect(), dir)
}

/// Runs `steps` from `dir`: each command must succeed, each file is written
/// over one the commands before made. Returns the directory they end in.
fn run_steps(steps: Vec<Step>, dir: &Path) -> PathBuf {
    let mut cwd = dir.to_path_buf();
    let envs = generated_cargo_env();
    for step in steps {
        let command = match step {
            Step::File { path, text } => {
                let file = cwd.join(&path);
                assert!(
                    file.is_file(),
                    "the page writes `{path}`, which the commands before it did not make"
                );
                std::fs::write(file, text).unwrap();
                continue;
            }
            Step::Command(command) => command,
        };
        let words = words(&command);
        let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
        match words[0].as_str() {
            "cd" => cwd = cwd.join(args[0]),
            "rsop" => {
                let run = rsop(&cwd, &args);
                assert_eq!(
                    run.code, 0,
                    "`{command}` failed:\n{}{}",
                    run.stdout, run.stderr
                );
                if args.first() == Some(&"manifests") && args.contains(&"--check") {
                    assert_eq!(run.stdout, "", "`{command}` printed a diff");
                }
                // The page's code passes the check of its calls against its
                // markers, with nothing to say.
                if args.first() == Some(&"manifests") {
                    crate::support::assert_no_rbac_findings(&run.stderr);
                }
            }
            "cargo" => {
                run_tool(&cwd, "cargo", &args, &envs);
            }
            "kubectl" if args == ["kustomize", "config/default"] => {
                render_and_validate(&cwd, "config/default");
            }
            other => {
                panic!("the page runs `{other}`, which this test does not know how to run")
            }
        }
    }
    cwd
}

#[test]
fn the_tutorial_runs() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tutorial.md"))
            .unwrap();
    let commands = commands(&text);
    assert!(
        commands.len() >= 7,
        "the tutorial lost its commands: {commands:?}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let cwd = run_commands(&commands, tmp.path());
    assert!(cwd.join("src/controllers/pod_set.rs").is_file());
}

/// The pod-selector tutorial's project, built from the files the document
/// shows, passes every gate of a generated project.
#[test]
fn the_pod_selector_tutorial_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = run_tutorial("tutorial-pod-selector.md", tmp.path(), 7);
    let controller =
        std::fs::read_to_string(cwd.join("src/controllers/prometheus_jmx_exporter.rs")).unwrap();
    assert!(
        controller.contains("fn relates_to_pod("),
        "the document's controller was not written"
    );
    let role = std::fs::read_to_string(cwd.join("config/rbac/role.yaml")).unwrap();
    assert!(
        role.contains("  - pods\n  verbs:\n  - list\n  - patch\n  - watch\n"),
        "{role}"
    );
    render_and_validate(&cwd, "config/samples");
    cargo_gates(&cwd);
}

#[test]
fn steps_are_commands_and_files_in_order() {
    let text = "intro\n```sh\nrsop init\n\ncd x\n```\n```rust file=src/a.rs\nfn a() {}\n\n```\n```console\nmake run\n```\n```rust\nnot a file\n```\n";
    let steps = steps(text);
    assert!(
        matches!(&steps[..], [Step::Command(a), Step::Command(b), Step::File { path, text }]
            if a == "rsop init" && b == "cd x" && path == "src/a.rs" && text == "fn a() {}\n\n"),
        "{steps:?}"
    );
}
