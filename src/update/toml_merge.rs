//! `Cargo.toml` merged by its keys rather than its lines: a dependency
//! version or feature the new scaffold changed is taken, what the user added
//! or changed is kept, and a key both changed to different values is a
//! conflict, reported by its dotted path with the user's value kept. Lists of
//! strings (`features`) merge as sets: the user's additions and removals and
//! the scaffold's both apply. Comments and layout are the user's file's.

use toml_edit::{DocumentMut, Item, Value};

/// The merged text and the keys that conflict.
#[derive(Debug)]
pub struct Merged {
    pub text: String,
    pub conflicts: Vec<String>,
}

/// Merges, or `None` when a side is not valid TOML (the line merge then
/// takes over and shows the user where).
pub fn merge(base: &str, ours: &str, theirs: &str) -> Option<Merged> {
    let base: DocumentMut = base.parse().ok()?;
    let mut merged: DocumentMut = ours.parse().ok()?;
    let theirs: DocumentMut = theirs.parse().ok()?;
    let mut conflicts = Vec::new();
    merge_table(
        Some(base.as_table()),
        merged.as_table_mut(),
        Some(theirs.as_table()),
        "",
        &mut conflicts,
    );
    Some(Merged {
        text: merged.to_string(),
        conflicts,
    })
}

fn merge_table(
    base: Option<&dyn toml_edit::TableLike>,
    ours: &mut dyn toml_edit::TableLike,
    theirs: Option<&dyn toml_edit::TableLike>,
    path: &str,
    conflicts: &mut Vec<String>,
) {
    let mut keys: Vec<String> = Vec::new();
    for table in [base, Some(&*ours as &dyn toml_edit::TableLike), theirs]
        .into_iter()
        .flatten()
    {
        for (key, _) in table.iter() {
            if !keys.iter().any(|k| k == key) {
                keys.push(key.to_string());
            }
        }
    }
    for key in keys {
        let dotted = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        let b = base.and_then(|t| t.get(&key));
        let t = theirs.and_then(|t| t.get(&key));
        let o = ours.get(&key);
        if same(o, t) || same(b, t) {
            continue;
        }
        if same(b, o) {
            match t {
                Some(t) => {
                    // A value keeps the user's spacing and comments around it.
                    match (ours.get_mut(&key), t) {
                        (Some(Item::Value(o)), Item::Value(t)) => {
                            let decor = o.decor().clone();
                            *o = t.clone();
                            *o.decor_mut() = decor;
                        }
                        _ => {
                            ours.insert(&key, t.clone());
                        }
                    }
                }
                None => {
                    ours.remove(&key);
                }
            }
            continue;
        }
        // Both changed: tables merge key by key, string lists as sets.
        let (Some(o_item), Some(t)) = (ours.get_mut(&key), t) else {
            conflicts.push(conflict(&dotted, ours.get(&key), t));
            continue;
        };
        if let (Some(o_table), Some(t_table)) = (o_item.as_table_like_mut(), t.as_table_like()) {
            merge_table(
                b.and_then(Item::as_table_like),
                o_table,
                Some(t_table),
                &dotted,
                conflicts,
            );
            continue;
        }
        if let (Some(Value::Array(o_array)), Some(Value::Array(t_array))) =
            (o_item.as_value_mut(), t.as_value())
            && let Some(merged) = merge_strings(
                b.and_then(Item::as_value).and_then(Value::as_array),
                o_array,
                t_array,
            )
        {
            *o_array = merged;
            continue;
        }
        conflicts.push(conflict(&dotted, ours.get(&key), Some(t)));
    }
}

/// A list of strings merged as a set: the new scaffold's entries in its
/// order, less those the user removed, then the user's own additions.
fn merge_strings(
    base: Option<&toml_edit::Array>,
    ours: &toml_edit::Array,
    theirs: &toml_edit::Array,
) -> Option<toml_edit::Array> {
    let strings = |a: &toml_edit::Array| -> Option<Vec<String>> {
        a.iter().map(|v| v.as_str().map(str::to_string)).collect()
    };
    let base = base.map_or(Some(Vec::new()), strings)?;
    let ours_list = strings(ours)?;
    let theirs = strings(theirs)?;
    let mut out: Vec<String> = theirs
        .into_iter()
        .filter(|s| !base.contains(s) || ours_list.contains(s))
        .collect();
    for s in &ours_list {
        if !base.contains(s) && !out.contains(s) {
            out.push(s.clone());
        }
    }
    let mut array: toml_edit::Array = out.iter().map(String::as_str).collect();
    *array.decor_mut() = ours.decor().clone();
    Some(array)
}

fn conflict(path: &str, ours: Option<&Item>, theirs: Option<&Item>) -> String {
    let show = |item: Option<&Item>| item.map_or_else(|| "(removed)".to_string(), render);
    format!(
        "`{path}`: yours is {}, the new scaffold's is {}",
        show(ours),
        show(theirs)
    )
}

/// An item's text without the whitespace and comments around it.
fn render(item: &Item) -> String {
    match item {
        Item::Value(v) => {
            let mut v = v.clone();
            v.decor_mut().clear();
            v.to_string()
        }
        Item::Table(t) => {
            let mut inline = t.clone().into_inline_table();
            inline.fmt();
            inline.to_string()
        }
        other => other.to_string().trim().to_string(),
    }
}

/// Whether two items mean the same, whatever their layout: a table and the
/// inline table of the same keys are the same.
fn same(a: Option<&Item>, b: Option<&Item>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => match (a.as_table_like(), b.as_table_like()) {
            (Some(a), Some(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| same(Some(v), b.get(k)))
            }
            (None, None) => render(a) == render(b),
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"[package]
name = "demo"
version = "0.1.0"

[dependencies]
kube = { version = "3.0", features = ["runtime", "derive"] }
serde = "1.0"
tokio = { version = "1", features = ["macros"] }
"#;

    #[test]
    fn scaffold_versions_arrive_and_user_additions_stay() {
        let ours = BASE
            .replace("version = \"0.1.0\"", "version = \"0.4.2\"")
            .replace(
                "tokio = { version = \"1\", features = [\"macros\"] }",
                "tokio = { version = \"1\", features = [\"macros\", \"fs\"] }\n# Ours.\nreqwest = \"0.12\"",
            );
        let theirs = BASE
            .replace("version = \"3.0\"", "version = \"5.0\"")
            .replace("[\"macros\"]", "[\"macros\", \"signal\"]")
            .replace("serde = \"1.0\"\n", "");
        let merged = merge(BASE, &ours, &theirs).unwrap();
        assert!(merged.conflicts.is_empty(), "{:?}", merged.conflicts);
        assert_eq!(
            merged.text,
            r#"[package]
name = "demo"
version = "0.4.2"

[dependencies]
kube = { version = "5.0", features = ["runtime", "derive"] }
tokio = { version = "1", features = ["macros", "signal", "fs"] }
# Ours.
reqwest = "0.12"
"#
        );
    }

    #[test]
    fn a_key_both_changed_is_a_conflict_that_keeps_yours() {
        let ours = BASE.replace("serde = \"1.0\"", "serde = \"=1.0.200\"");
        let theirs = BASE.replace("serde = \"1.0\"", "serde = \"1.1\"");
        let merged = merge(BASE, &ours, &theirs).unwrap();
        assert_eq!(
            merged.conflicts,
            vec!["`dependencies.serde`: yours is \"=1.0.200\", the new scaffold's is \"1.1\""]
        );
        assert_eq!(merged.text, ours);
    }
}
