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
    if args.verify {
        return verify(&opts, out);
    }
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

/// `--verify`: the CRDs of a hybrid run (static wherever rsop can) against
/// those of `--cargo` (every schema from `K::crd()`), file by file.
fn verify(opts: &ManifestsOptions, out: &mut dyn Write) -> Result<Outcome> {
    let mut notes = anstream::stderr();
    let ours = manifests::generate(opts, &mut notes)?;
    let built = manifests::generate(
        &ManifestsOptions {
            derivation: Derivation::Cargo,
            ..opts.clone()
        },
        &mut notes,
    )?;
    let crds = |files: Vec<(std::path::PathBuf, String)>| -> std::collections::BTreeMap<_, _> {
        files
            .into_iter()
            .filter(|(path, _)| path.starts_with(&opts.crd_dir))
            .collect()
    };
    let (ours, built) = (crds(ours.files), crds(built.files));
    let mut differ = 0;
    for (path, theirs) in &built {
        let mine = ours.get(path).map_or("", String::as_str);
        if mine != theirs {
            differ += 1;
            let name = path.display().to_string();
            let diff = similar::TextDiff::from_lines(theirs.as_str(), mine)
                .unified_diff()
                .context_radius(3)
                .header(&format!("kube-derive {name}"), &format!("rsop {name}"))
                .to_string();
            out.write_all(diff.as_bytes())
                .map_err(|e| crate::Error::io("write", Path::new("<stdout>"), e))?;
        }
    }
    writeln!(
        out,
        "verify: {} CRDs, {differ} differ from the project's kube-derive",
        built.len()
    )
    .map_err(|e| crate::Error::io("write", Path::new("<stdout>"), e))?;
    Ok(if differ == 0 {
        Outcome::Done
    } else {
        Outcome::Drift
    })
}
