//! `rsop manifests`: CRDs, RBAC and webhook configurations derived from the project's sources, then
//! written, diffed or checked.

use std::io::Write;
use std::path::Path;

use crate::Result;
use crate::cli::{ManifestsArgs, RbacMode};
use crate::manifests::check::rbac_check;
use crate::manifests::{self, Derivation, ManifestsOptions};
use crate::output::{self, Mode, Outcome};
use crate::project::Project;

pub fn run(args: &ManifestsArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let root = cwd.join(&args.dir);
    // PROJECT is optional: any kube-rs crate can use `rsop manifests`,
    // one ported from a kubebuilder project (whose PROJECT is Go's) too.
    let project = Project::load_if_rsop(&root)?;
    let opts = ManifestsOptions {
        root: root.clone(),
        crd_dir: args.crd_dir.clone(),
        rbac_dir: args.rbac_dir.clone(),
        webhook_dir: args.webhook_dir.clone(),
        namespaced: project.as_ref().is_some_and(|p| p.namespaced),
        derivation: if args.cargo {
            Derivation::Cargo
        } else if args.r#static {
            Derivation::Static
        } else {
            Derivation::Hybrid
        },
        // A crate rsop did not make keeps its role elsewhere (a chart, say):
        // its calls are checked only when asked.
        rbac: match args.rbac.unwrap_or(if project.is_some() {
            RbacMode::Check
        } else {
            RbacMode::Markers
        }) {
            RbacMode::Markers => rbac_check::Mode::Markers,
            RbacMode::Check => rbac_check::Mode::Check,
            RbacMode::Warn => rbac_check::Mode::Warn,
            RbacMode::Infer => rbac_check::Mode::Infer,
        },
    };
    if args.verify {
        return verify(&opts, out);
    }
    // Notes go to stderr: stdout carries the diff of `--check` and `--diff`.
    let generated = manifests::generate(&opts, &mut anstream::stderr())?;
    let changes = manifests::changes(generated.files, &root)?;
    let mode = if args.check {
        Mode::Check
    } else if args.diff {
        Mode::Diff
    } else {
        Mode::Write
    };
    let outcome = output::apply(&root, &changes, mode, out)?;
    Ok(if generated.incomplete && outcome == Outcome::Done {
        Outcome::Incomplete
    } else {
        outcome
    })
}

/// `--verify`: every CRD version of a hybrid run (static wherever rsop can)
/// against the project's own `K::crd()` of that version, built with cargo,
/// whole (names, metadata, columns, subresources and schema; `storage`
/// aside, which merging the versions decides). Nothing is written.
fn verify(opts: &ManifestsOptions, out: &mut dyn Write) -> Result<Outcome> {
    let mut notes = anstream::stderr();
    let ours = manifests::generate(opts, &mut notes)?;
    let built = manifests::generate(
        &ManifestsOptions {
            derivation: Derivation::Cargo,
            ..opts.clone()
        },
        &mut notes,
    )?
    .built;
    // rsop's documents, one per version, shaped like a single `K::crd()`.
    let mut mine: std::collections::BTreeMap<String, serde_json::Value> =
        std::collections::BTreeMap::new();
    for (path, text) in &ours.files {
        if !path.starts_with(&opts.crd_dir) {
            continue;
        }
        let yaml = text
            .split_once("---\n")
            .map_or(text.as_str(), |(_, doc)| doc);
        let Ok(crd) = serde_yaml_ng::from_str::<serde_json::Value>(yaml) else {
            continue;
        };
        for version in crd["spec"]["versions"].as_array().into_iter().flatten() {
            let mut single = crd.clone();
            single["spec"]["versions"] = serde_json::json!([version]);
            let key = format!(
                "{}/{}/{}",
                crd["spec"]["group"].as_str().unwrap_or_default(),
                crd["spec"]["names"]["kind"].as_str().unwrap_or_default(),
                version["name"].as_str().unwrap_or_default()
            );
            mine.insert(key, single);
        }
    }
    let without_storage = |doc: &serde_json::Value| {
        let mut doc = doc.clone();
        if let Some(v) = doc["spec"]["versions"][0].as_object_mut() {
            v.remove("storage");
        }
        crate::yaml::json_to_string(&doc)
    };
    let write = |out: &mut dyn Write, text: &str| {
        out.write_all(text.as_bytes())
            .map_err(|e| crate::Error::io("write", Path::new("<stdout>"), e))
    };
    let mut differ = 0;
    for (key, theirs) in &built {
        let theirs = without_storage(theirs);
        let mine = mine.get(key).map(without_storage).unwrap_or_default();
        if mine != theirs {
            differ += 1;
            let diff = similar::TextDiff::from_lines(theirs.as_str(), mine.as_str())
                .unified_diff()
                .context_radius(3)
                .header(&format!("kube-derive {key}"), &format!("rsop {key}"))
                .to_string();
            write(out, &diff)?;
        }
    }
    write(
        out,
        &format!(
            "verify: {} CRD versions, {differ} differ from the project's kube-derive\n",
            built.len()
        ),
    )?;
    Ok(if differ == 0 {
        Outcome::Done
    } else {
        Outcome::Drift
    })
}
