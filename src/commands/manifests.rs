//! `rsop manifests`: CRDs, RBAC and webhook configurations derived from the project's sources, then
//! written, diffed or checked.

use std::io::Write;
use std::path::Path;

use crate::Result;
use crate::cli::ManifestsArgs;
use crate::manifests::{self, Derivation, ManifestsOptions};
use crate::output::{self, Mode, Outcome};
use crate::project::Project;

pub fn run(args: &ManifestsArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let root = cwd.join(&args.dir);
    // PROJECT is optional: any kube-rs crate can use `rsop manifests`.
    let project = Project::load_optional(&root)?;
    let opts = ManifestsOptions {
        root: root.clone(),
        crd_dir: args.crd_dir.clone(),
        rbac_dir: args.rbac_dir.clone(),
        webhook_dir: args.webhook_dir.clone(),
        namespaced: project.is_some_and(|p| p.namespaced),
        derivation: if args.cargo {
            Derivation::Cargo
        } else if args.r#static {
            Derivation::Static
        } else {
            Derivation::Hybrid
        },
    };
    // Notes go to stderr: stdout carries the diff of `--check` and `--diff`.
    let generated = manifests::generate(&opts, &mut anstream::stderr())?;
    let changes = manifests::changes(generated, &root)?;
    let mode = if args.check {
        Mode::Check
    } else if args.diff {
        Mode::Diff
    } else {
        Mode::Write
    };
    output::apply(&root, &changes, mode, out)
}
