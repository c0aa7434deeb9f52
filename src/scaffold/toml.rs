//! Edits of TOML files (the generated project's Cargo.toml) that keep the
//! user's formatting and comments, through `toml_edit`. Every edit is a no-op
//! when it is already applied.

use std::path::Path;

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, Value};

use crate::{Error, Result};

/// One edit of a TOML document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TomlEdit {
    /// Make sure the dependency table `table` (`dependencies`,
    /// `dev-dependencies`) has `name` with at least these features. An
    /// existing entry keeps its version; missing features are added.
    Dependency {
        table: &'static str,
        name: String,
        version: String,
        default_features: bool,
        features: Vec<String>,
    },
    /// Make cargo take the crate `name` from the folder `path` wherever crates.io's is asked for:
    /// `[patch.crates-io]` of a cargo configuration file.
    CratesIoPatch { name: String, path: String },
}

impl TomlEdit {
    /// `name` in `[dependencies]` at rsop's pinned version, with these features.
    pub fn dependency(name: &str, default_features: bool, features: &[&str]) -> Self {
        TomlEdit::Dependency {
            table: "dependencies",
            name: name.to_owned(),
            version: crate::versions::crate_version(name).to_owned(),
            default_features,
            features: features.iter().map(|f| (*f).to_owned()).collect(),
        }
    }

    /// `name` in `[dev-dependencies]` at rsop's pinned version, with its default features and
    /// `features`: for a crate the project depends on already, the features its tests alone use.
    pub fn dev_dependency_with(name: &str, features: &[&str]) -> Self {
        TomlEdit::Dependency {
            table: "dev-dependencies",
            name: name.to_owned(),
            version: crate::versions::crate_version(name).to_owned(),
            default_features: true,
            features: features.iter().map(|f| (*f).to_owned()).collect(),
        }
    }

    /// `name` in `[dev-dependencies]` at rsop's pinned version, with its default features.
    pub fn dev_dependency(name: &str) -> Self {
        TomlEdit::Dependency {
            table: "dev-dependencies",
            name: name.to_owned(),
            version: crate::versions::crate_version(name).to_owned(),
            default_features: true,
            features: Vec::new(),
        }
    }

    /// Applies the edit to `text`; `path` is only used in messages.
    pub fn apply(&self, path: &Path, text: &str) -> Result<String> {
        let mut doc: DocumentMut = text.parse().map_err(|source| Error::Parse {
            path: path.to_path_buf(),
            help: Some("fix the TOML syntax error, then run the command again".into()),
            source: Box::new(source),
        })?;
        match self {
            TomlEdit::CratesIoPatch { name, path: dir } => {
                let crates_io = doc
                    .entry("patch")
                    .or_insert_with(|| {
                        let mut table = Table::new();
                        table.set_implicit(true);
                        Item::Table(table)
                    })
                    .as_table_like_mut()
                    .and_then(|table| {
                        table
                            .entry("crates-io")
                            .or_insert(Item::Table(Table::new()))
                            .as_table_like_mut()
                    })
                    .ok_or_else(|| {
                        Error::user_with_help(
                            format!("`{}`: `patch.crates-io` is not a table", path.display()),
                            "make `[patch.crates-io]` a table",
                        )
                    })?;
                let mut entry = InlineTable::new();
                entry.insert("path", dir.as_str().into());
                crates_io.insert(name, Item::Value(Value::InlineTable(entry)));
                return Ok(doc.to_string());
            }
            TomlEdit::Dependency {
                table,
                name,
                version,
                default_features,
                features,
            } => {
                // A normal dependency serves the tests too: a dev-dependency on it says nothing.
                let normal = doc
                    .get("dependencies")
                    .and_then(Item::as_table_like)
                    .is_some_and(|t| t.contains_key(name));
                if *table == "dev-dependencies" && normal && features.is_empty() {
                    return Ok(doc.to_string());
                }
                let deps = doc
                    .entry(table)
                    .or_insert_with(|| Item::Table(Table::new()))
                    .as_table_like_mut()
                    .ok_or_else(|| {
                        Error::user_with_help(
                            format!("`{}`: `{table}` is not a table", path.display()),
                            format!("make `[{table}]` a table"),
                        )
                    })?;
                let was_sorted = is_sorted(deps.iter().map(|(k, _)| k));
                match deps.get_mut(name) {
                    None => {
                        deps.insert(name, new_dependency(version, *default_features, features));
                        // Like `cargo add`: keep a sorted table sorted.
                        if was_sorted {
                            deps.sort_values();
                        }
                    }
                    Some(existing) => add_features(path, name, existing, features)?,
                }
            }
        }
        Ok(doc.to_string())
    }
}

fn is_sorted<'a>(mut keys: impl Iterator<Item = &'a str>) -> bool {
    let Some(mut prev) = keys.next() else {
        return true;
    };
    for key in keys {
        if key < prev {
            return false;
        }
        prev = key;
    }
    true
}

fn new_dependency(version: &str, default_features: bool, features: &[String]) -> Item {
    if default_features && features.is_empty() {
        return toml_edit::value(version);
    }
    let mut table = InlineTable::new();
    table.insert("version", version.into());
    if !default_features {
        table.insert("default-features", false.into());
    }
    if !features.is_empty() {
        table.insert("features", Value::Array(features.iter().collect::<Array>()));
    }
    Item::Value(Value::InlineTable(table))
}

fn add_features(path: &Path, name: &str, existing: &mut Item, features: &[String]) -> Result<()> {
    if features.is_empty() {
        return Ok(());
    }
    if let Some(version) = existing.as_str() {
        // `name = "1"` has no room for features: widen it to a table.
        let mut table = InlineTable::new();
        table.insert("version", version.into());
        *existing = Item::Value(Value::InlineTable(table));
    }
    let table = existing.as_table_like_mut().ok_or_else(|| {
        Error::user_with_help(
            format!(
                "`{}`: the `{name}` dependency is neither a version string nor a table",
                path.display()
            ),
            format!("write `{name}` as `{name} = {{ version = \"...\" }}`"),
        )
    })?;
    let list = table
        .entry("features")
        .or_insert(Item::Value(Value::Array(Array::new())))
        .as_array_mut()
        .ok_or_else(|| {
            Error::user_with_help(
                format!(
                    "`{}`: `features` of the `{name}` dependency is not an array",
                    path.display()
                ),
                "write the features as an array of strings",
            )
        })?;
    for feature in features {
        if !list.iter().any(|f| f.as_str() == Some(feature)) {
            list.push(feature.as_str());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dep(name: &str, features: &[&str]) -> TomlEdit {
        TomlEdit::Dependency {
            table: "dependencies",
            name: name.into(),
            version: "1.0".into(),
            default_features: true,
            features: features.iter().map(|f| (*f).to_string()).collect(),
        }
    }

    #[test]
    fn a_dev_dependency_on_a_normal_dependency_is_not_added() {
        let text = "[dependencies]\nhttp = \"1.3\"\n\n[dev-dependencies]\ntokio = \"1\"\n";
        let dev = |name: &str| TomlEdit::Dependency {
            table: "dev-dependencies",
            name: name.into(),
            version: "1.0".into(),
            default_features: true,
            features: Vec::new(),
        };
        let path = Path::new("Cargo.toml");
        assert_eq!(dev("http").apply(path, text).unwrap(), text);
        let added = dev("tower-test").apply(path, text).unwrap();
        assert!(
            added.ends_with("tokio = \"1\"\ntower-test = \"1.0\"\n"),
            "{added}"
        );
    }

    #[test]
    fn adds_a_missing_dependency_and_is_idempotent() {
        let text = "[package]\nname = \"x\"\n\n[dependencies]\n# pinned\nanyhow = \"1\"\n";
        let once = dep("serde", &["derive"])
            .apply(Path::new("Cargo.toml"), text)
            .unwrap();
        assert!(once.contains("# pinned\nanyhow = \"1\"\n"), "{once}");
        assert!(
            once.contains("serde = { version = \"1.0\", features = [\"derive\"] }"),
            "{once}"
        );
        let twice = dep("serde", &["derive"])
            .apply(Path::new("Cargo.toml"), &once)
            .unwrap();
        assert_eq!(once, twice);
    }

    #[test]
    fn adds_features_to_an_existing_dependency() {
        let text = "[dependencies]\nkube = { version = \"5\", features = [\"runtime\"] }\n";
        let out = dep("kube", &["runtime", "derive"])
            .apply(Path::new("Cargo.toml"), text)
            .unwrap();
        assert_eq!(
            out,
            "[dependencies]\nkube = { version = \"5\", features = [\"runtime\", \"derive\"] }\n"
        );
    }

    #[test]
    fn reports_syntax_errors_with_the_path() {
        let err = dep("a", &[])
            .apply(Path::new("Cargo.toml"), "[dependencies\n")
            .unwrap_err();
        assert!(err.to_string().contains("`Cargo.toml`"), "{err}");
    }
}
