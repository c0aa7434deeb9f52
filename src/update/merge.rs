//! The 3-way merge of a project, file by file: the ancestor is the scaffold
//! rsop wrote last, ours the user's tree, theirs the scaffold this rsop
//! writes. A file only one side changed takes that side; a file both changed
//! is merged, `Cargo.toml` by its keys and everything else by git's line
//! merge. Files the new scaffold moved (the flat layout's `src/leader.rs`
//! into `src/manager/leader.rs`) are paired by content, so that the user's
//! edits follow the file to its new place.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::git::{self, Style};
use super::toml_merge;
use crate::Result;
use crate::project::PROJECT_FILE;

/// A tree of text files by path relative to the project root.
pub type Texts = BTreeMap<PathBuf, String>;

/// What the update does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// The file gets `text`: the new scaffold's, or the merge of both sides.
    Update,
    /// A new file of the scaffold.
    Create,
    /// The scaffold no longer has the file, and the user left it as written.
    Delete,
    /// Both sides changed the same lines (or keys): the file holds conflict
    /// markers (for Cargo.toml, the user's values, the keys listed).
    Conflict(Vec<String>),
    /// The user's file stays as it is although the scaffold changed, for the
    /// reason given.
    Keep(String),
}

/// One file's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    pub action: Action,
    /// The file's new text, for `Update`, `Create` and `Conflict`.
    pub text: Option<String>,
    /// The path the file moved from, for a file the new scaffold moved.
    pub moved_from: Option<PathBuf>,
}

/// Labels of the sides in conflict markers.
#[derive(Debug, Clone)]
pub struct Labels {
    pub ours: String,
    pub base: String,
    pub theirs: String,
}

/// Whether `path` is one of the manifests `rsop manifests` derives from the
/// sources: those are derived again after the merge, not merged.
pub fn is_derived(path: &Path) -> bool {
    path.starts_with("config/crd/bases")
        || path == Path::new("config/rbac/role.yaml")
        || path == Path::new("config/webhook/manifests.yaml")
}

/// The entries of every file that changes, in path order. `ours` needs to
/// hold only the paths of `base` and `theirs`.
pub fn merge(base: &Texts, ours: &Texts, theirs: &Texts, labels: &Labels) -> Result<Vec<Entry>> {
    let moves = moves(base, ours, theirs);
    let moved_to: BTreeMap<&PathBuf, &PathBuf> =
        moves.iter().map(|(from, to)| (to, from)).collect();
    let paths: BTreeSet<&PathBuf> = base
        .keys()
        .chain(ours.keys())
        .chain(theirs.keys())
        .collect();
    let mut entries = Vec::new();
    for path in paths {
        if let Some(from) = moved_to.get(path) {
            let (Some(b), Some(o), Some(t)) = (base.get(*from), ours.get(*from), theirs.get(path))
            else {
                continue;
            };
            let mut entry =
                merge_file(path, Some(b), Some(o), Some(t), labels)?.unwrap_or_else(|| Entry {
                    path: path.clone(),
                    action: Action::Create,
                    text: Some(o.clone()),
                    moved_from: None,
                });
            if entry.action == Action::Update {
                entry.action = Action::Create;
            }
            entry.moved_from = Some((*from).clone());
            entries.push(entry);
            continue;
        }
        if moves.contains_key(path) {
            entries.push(Entry {
                path: path.clone(),
                action: Action::Delete,
                text: None,
                moved_from: None,
            });
            continue;
        }
        if let Some(entry) = merge_file(
            path,
            base.get(path),
            ours.get(path),
            theirs.get(path),
            labels,
        )? {
            entries.push(entry);
        }
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

fn merge_file(
    path: &Path,
    base: Option<&String>,
    ours: Option<&String>,
    theirs: Option<&String>,
    labels: &Labels,
) -> Result<Option<Entry>> {
    let entry = |action: Action, text: Option<String>| {
        Some(Entry {
            path: path.to_path_buf(),
            action,
            text,
            moved_from: None,
        })
    };
    if ours == theirs || base == theirs {
        return Ok(None);
    }
    // Derived manifests the user changed are derived again afterwards.
    if is_derived(path) && base != ours {
        return Ok(None);
    }
    // PROJECT is made from the user's own PROJECT: the new one is theirs.
    if base == ours || path == Path::new(PROJECT_FILE) {
        return Ok(match (ours, theirs) {
            (None, Some(t)) => entry(Action::Create, Some(t.clone())),
            (Some(_), Some(t)) => entry(Action::Update, Some(t.clone())),
            (Some(_), None) => entry(Action::Delete, None),
            (None, None) => None,
        });
    }
    Ok(match (base, ours, theirs) {
        (Some(_), None, Some(_)) => entry(
            Action::Keep("you deleted it; the new scaffold changed it".into()),
            None,
        ),
        (Some(_), Some(_), None) => entry(
            Action::Keep(match replaced_by(path) {
                Some(replacement) => format!(
                    "you edited it; {replacement} replaces it, and the project no longer builds it"
                ),
                None => "the new scaffold no longer has it; your edits keep it".into(),
            }),
            None,
        ),
        (b, Some(o), Some(t)) => {
            let b = b.map_or("", String::as_str);
            if path.file_name().is_some_and(|n| n == "Cargo.toml")
                && let Some(merged) = toml_merge::merge(b, o, t)
            {
                let action = if merged.conflicts.is_empty() {
                    Action::Update
                } else {
                    Action::Conflict(merged.conflicts)
                };
                return Ok(entry(action, Some(merged.text)));
            }
            let labels = [labels.ours.as_str(), &labels.base, &labels.theirs];
            let (mut text, mut conflicted) = git::merge_text(b, o, t, labels, Style::Markers)?;
            // In a list of blocks, where both sides only added lines, both
            // additions are kept; a line both changed still conflicts.
            if conflicted && base.is_some() && is_block_list(path) {
                let (diff3, _) = git::merge_text(b, o, t, labels, Style::Diff3)?;
                if only_additions(&diff3) {
                    (text, conflicted) = git::merge_text(b, o, t, labels, Style::Union)?;
                }
            }
            let action = if conflicted {
                Action::Conflict(Vec::new())
            } else {
                Action::Update
            };
            entry(action, Some(text))
        }
        _ => None,
    })
}

/// What of rsop-runtime replaces `path`, a file of the manager's machinery that projects held
/// before they depended on the crate (`src/manager/`, the flat layout's `src/`, the test harnesses).
pub fn replaced_by(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let dir = path.parent()?;
    let module = if dir == Path::new("src/manager") || dir == Path::new("src") {
        match stem {
            "mod" | "manager" if dir == Path::new("src/manager") || stem == "manager" => {
                "`rsop_runtime::Manager` (`src/main.rs` registers the controllers with it)"
            }
            "cli" => "`rsop_runtime::Flags`",
            "context" => "`rsop_runtime::Context`",
            "leader" => "`rsop_runtime::leader`",
            "shard" => "`rsop_runtime::shard`",
            "metrics" => "`rsop_runtime::metrics`",
            "server" => "`rsop_runtime::server`",
            "tls" => "`rsop_runtime::tls`",
            "auth" => "`rsop_runtime::auth`",
            "logging" => "`rsop_runtime::logging`",
            "webhook" => "`rsop_runtime::webhook`",
            "backoff" | "cache" | "conditions" | "watch" => {
                return Some(format!("`rsop_runtime::controller::{stem}`"));
            }
            "testing" => "`rsop_runtime::testing`",
            _ => return None,
        }
    } else if dir == Path::new("tests/envtest") {
        match stem {
            "harness" | "support" => "`rsop_runtime::envtest`",
            "webhooks" => "`rsop_runtime::envtest::Served`",
            _ => return None,
        }
    } else if dir == Path::new("tests/e2e") {
        match stem {
            "checks" => "`rsop_runtime::e2e`",
            "recorded" => "rsop-runtime's own tests of its e2e checks",
            _ => return None,
        }
    } else {
        return None;
    };
    Some(module.to_owned())
}

/// Whether every conflict of a `--diff3` merge has an empty base: both
/// sides added lines at one place, and neither changed a line of the base.
fn only_additions(diff3: &str) -> bool {
    let mut in_base = false;
    for line in diff3.lines() {
        if line.starts_with("|||||||") {
            in_base = true;
        } else if line.starts_with("=======") {
            in_base = false;
        } else if in_base {
            return false;
        }
    }
    true
}

/// Whether `path` is a list of independent blocks, where lines both sides
/// added at one place are all kept, the user's first: a Makefile's targets,
/// an ignore file's patterns. Code still conflicts.
fn is_block_list(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|name| {
            matches!(name, "Makefile" | "GNUmakefile" | "makefile")
                || Path::new(name)
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("mk"))
                || (name.starts_with('.') && name.ends_with("ignore"))
        })
}

/// Files the new scaffold moved: a path of the old scaffold that the new one
/// lacks, paired with a new path whose text is most like it (at least half
/// the lines alike, the same extension). `from -> to`.
fn moves(base: &Texts, ours: &Texts, theirs: &Texts) -> BTreeMap<PathBuf, PathBuf> {
    let gone: Vec<&PathBuf> = base
        .keys()
        .filter(|p| !theirs.contains_key(*p) && ours.contains_key(*p))
        .collect();
    let new: Vec<&PathBuf> = theirs
        .keys()
        .filter(|p| !base.contains_key(*p) && !ours.contains_key(*p))
        .collect();
    let mut pairs: Vec<(f32, &PathBuf, &PathBuf)> = Vec::new();
    for from in &gone {
        for to in &new {
            if from.extension() != to.extension() {
                continue;
            }
            let ratio = similar::TextDiff::from_lines(&base[*from], &theirs[*to]).ratio();
            if ratio >= 0.5 {
                pairs.push((ratio, from, to));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let mut taken = BTreeSet::new();
    let mut out = BTreeMap::new();
    for (_, from, to) in pairs {
        if out.contains_key(from) || taken.contains(to) {
            continue;
        }
        taken.insert(to);
        out.insert(from.clone(), to.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(files: &[(&str, &str)]) -> Texts {
        files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), (*t).to_string()))
            .collect()
    }

    fn labels() -> Labels {
        Labels {
            ours: "yours".into(),
            base: "old".into(),
            theirs: "new".into(),
        }
    }

    #[test]
    fn one_sided_changes_take_that_side() {
        let base = texts(&[("a", "1\n"), ("b", "1\n"), ("gone", "x\n")]);
        let ours = texts(&[
            ("a", "1 mine\n"),
            ("b", "1\n"),
            ("gone", "x\n"),
            ("own", "o\n"),
        ]);
        let theirs = texts(&[("a", "1\n"), ("b", "2\n"), ("new", "n\n")]);
        let entries = merge(&base, &ours, &theirs, &labels()).unwrap();
        let summary: Vec<(String, Action)> = entries
            .into_iter()
            .map(|e| (e.path.display().to_string(), e.action))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("b".into(), Action::Update),
                ("gone".into(), Action::Delete),
                ("new".into(), Action::Create),
            ]
        );
    }

    #[test]
    fn a_moved_file_keeps_the_users_edits() {
        let body = "fn a() {}\nfn b() {}\nfn c() {}\nfn d() {}\n";
        let base = texts(&[("src/leader.rs", body)]);
        let ours = texts(&[(
            "src/leader.rs",
            &body.replace("fn a() {}", "fn a() { mine() }"),
        )]);
        let theirs = texts(&[(
            "src/manager/leader.rs",
            &body.replace("fn d() {}", "fn d() { new() }"),
        )]);
        let entries = merge(&base, &ours, &theirs, &labels()).unwrap();
        assert_eq!(entries.len(), 2, "{entries:#?}");
        let moved = entries
            .iter()
            .find(|e| e.path == Path::new("src/manager/leader.rs"))
            .unwrap();
        assert_eq!(
            moved.moved_from.as_deref(),
            Some(Path::new("src/leader.rs"))
        );
        assert_eq!(
            moved.text.as_deref(),
            Some("fn a() { mine() }\nfn b() {}\nfn c() {}\nfn d() { new() }\n")
        );
        assert!(
            entries
                .iter()
                .any(|e| e.path == Path::new("src/leader.rs") && e.action == Action::Delete)
        );
    }

    #[test]
    fn additions_at_one_place_of_a_makefile_or_ignore_file_are_all_kept() {
        let makefile = "build:\n\tcargo build\n\ntest:\n\tcargo test\n";
        let user = "\nbench: ## Mine\n\tcargo bench\n";
        let scaffold = "\ntest-e2e: ## The scaffold's\n\tcargo test --test e2e\n";
        let ignore = "/target\n";
        let base = texts(&[
            ("Makefile", makefile),
            (".dockerignore", ignore),
            ("src/a.rs", "a\n"),
        ]);
        let ours = texts(&[
            ("Makefile", &format!("{makefile}{user}")),
            (".dockerignore", "/target\n/notes\n"),
            ("src/a.rs", "a\nmine\n"),
        ]);
        let theirs = texts(&[
            ("Makefile", &format!("{makefile}{scaffold}")),
            (".dockerignore", "/target\n/dist\n"),
            ("src/a.rs", "a\nnew\n"),
        ]);
        let entries = merge(&base, &ours, &theirs, &labels()).unwrap();
        let by_path = |p: &str| entries.iter().find(|e| e.path == Path::new(p)).unwrap();
        assert_eq!(by_path("Makefile").action, Action::Update);
        // The blank line both added is one line in common, as git sees it.
        assert_eq!(
            by_path("Makefile").text.as_deref(),
            Some(format!("{makefile}{user}{}", &scaffold[1..]).as_str())
        );
        assert_eq!(by_path(".dockerignore").action, Action::Update);
        assert_eq!(
            by_path(".dockerignore").text.as_deref(),
            Some("/target\n/notes\n/dist\n")
        );
        assert_eq!(by_path("src/a.rs").action, Action::Conflict(Vec::new()));

        // A line both sides changed is a conflict in a Makefile too, and a
        // Makefile both sides made has no base to tell additions by.
        let base = texts(&[("Makefile", "build:\n\tcargo build --release\n")]);
        let ours = texts(&[("Makefile", "build:\n\tcargo build --release --features x\n")]);
        let theirs = texts(&[("Makefile", "build:\n\tcargo build --release --locked\n")]);
        let entries = merge(&base, &ours, &theirs, &labels()).unwrap();
        assert_eq!(entries[0].action, Action::Conflict(Vec::new()));
        let entries = merge(&texts(&[]), &ours, &theirs, &labels()).unwrap();
        assert_eq!(entries[0].action, Action::Conflict(Vec::new()));
    }

    #[test]
    fn same_lines_changed_on_both_sides_conflict() {
        let base = texts(&[("f", "a\nb\nc\n")]);
        let ours = texts(&[("f", "a\nmine\nc\n")]);
        let theirs = texts(&[("f", "a\nnew\nc\n")]);
        let entries = merge(&base, &ours, &theirs, &labels()).unwrap();
        assert_eq!(entries[0].action, Action::Conflict(Vec::new()));
        assert_eq!(
            entries[0].text.as_deref(),
            Some("a\n<<<<<<< yours\nmine\n=======\nnew\n>>>>>>> new\nc\n")
        );
    }
}
