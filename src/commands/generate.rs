//! `rsop generate` and its subcommands: packaging derived from the project's
//! `config/`, each written, listed, diffed or checked by the mode flags.

use std::io::Write;
use std::path::Path;

use super::say;
use crate::Result;
use crate::cli::{
    GenerateBundleArgs, GenerateCommand, GenerateHelmArgs, GenerateInstallerArgs, KustomizeCommand,
    OutputModeArgs,
};
use crate::generate::{self, bundle::BundleOptions, helm::HelmOptions};
use crate::output::{self, Outcome};
use crate::project::Project;

pub fn run(command: &GenerateCommand, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    match command {
        GenerateCommand::Installer(args) => installer(args, cwd, out),
        GenerateCommand::Kustomize(KustomizeCommand::Manifests(mode)) => {
            kustomize_manifests(mode, cwd, out)
        }
        GenerateCommand::Bundle(args) => bundle(args, cwd, out),
        GenerateCommand::Helm(args) => helm(args, cwd, out),
    }
}

/// `rsop generate installer`: `dist/install.yaml`.
fn installer(args: &GenerateInstallerArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    Project::load(cwd, "generate installer")?;
    let changes = generate::installer(cwd, args.img.as_deref())?;
    output::apply(cwd, &changes, args.mode.mode(), out)
}

/// `rsop generate kustomize manifests`: the CSV base under `config/manifests`.
fn kustomize_manifests(mode: &OutputModeArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let project = Project::load(cwd, "generate kustomize manifests")?;
    let changes = generate::csv::plan(cwd, &project)?;
    output::apply(cwd, &changes, mode.mode(), out)
}

/// `rsop generate bundle`: the OLM bundle.
fn bundle(args: &GenerateBundleArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let project = Project::load(cwd, "generate bundle")?;
    let opts = BundleOptions::new(
        cwd,
        &project,
        args.version.as_deref(),
        &args.channels,
        args.default_channel.as_deref(),
        args.package.as_deref(),
        args.img.as_deref(),
    )?;
    let changes = generate::bundle::plan(cwd, &project, &opts)?;
    output::apply(cwd, &changes, args.mode.mode(), out)
}

/// `rsop generate helm`: the chart, then its notes.
fn helm(args: &GenerateHelmArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let project = Project::load(cwd, "generate helm")?;
    let opts = HelmOptions {
        output_dir: args.output_dir.clone(),
        force: args.force,
        image: args.img.clone(),
    };
    let planned = generate::helm::plan(cwd, &project, &opts)?;
    let outcome = output::apply(cwd, &planned.changes, args.mode.mode(), out)?;
    for note in planned.notes {
        say(out, &format!("{note}\n"))?;
    }
    Ok(outcome)
}
