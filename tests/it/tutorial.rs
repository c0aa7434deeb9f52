//! docs/tutorial.md, run: every command of its `sh` blocks, in order, in a
//! temporary directory; the `console` block needs a cluster and is not run.

use std::path::{Path, PathBuf};

use crate::support::{generated_target_dir, render_and_validate, rsop, run_tool};

/// The commands of a page's `sh` code blocks.
pub fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in text.lines() {
        match line.trim() {
            "```sh" => in_sh = true,
            "```" => in_sh = false,
            command if in_sh && !command.is_empty() => out.push(command.to_string()),
            _ => {}
        }
    }
    out
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

/// Runs `commands` (rsop, cd, cargo, `kubectl kustomize config/default`) from
/// `dir`, each of which must succeed; returns the directory they end in.
pub fn run_commands(commands: &[String], dir: &Path) -> PathBuf {
    let mut cwd = dir.to_path_buf();
    let target = generated_target_dir();
    for command in commands {
        let words = words(command);
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
                if args.first() == Some(&"manifests") {
                    assert_eq!(run.stdout, "", "`{command}` printed a diff");
                }
            }
            "cargo" => {
                run_tool(
                    &cwd,
                    "cargo",
                    &args,
                    &[("CARGO_TARGET_DIR", target.as_path())],
                );
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
