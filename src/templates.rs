//! The built-in templates: tera files under `templates/`, embedded in the
//! binary, named by the path they produce (`init/src/main.rs.tera` makes
//! `src/main.rs`). Scaffolding plans render them, and so does
//! `generate helm` for the chart's own files (`templates/helm/`).

use std::collections::HashMap;

use include_dir::{Dir, include_dir};

use crate::{Error, Result};

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");

/// The template engine, loaded with every built-in template.
#[derive(Debug)]
pub struct Templates {
    tera: tera::Tera,
}

impl Templates {
    /// Loads every built-in template, named by its path under `templates/`.
    pub fn load() -> Result<Self> {
        Self::load_dirs(&[""])
    }

    /// Loads the templates under the given directories of `templates/` only:
    /// a command parses just what it renders.
    pub fn load_dirs(dirs: &[&str]) -> Result<Self> {
        let mut tera = tera::Tera::default();
        // Nothing rsop renders is HTML; escaping would corrupt YAML and Rust.
        tera.autoescape_on(Vec::new());
        tera.register_filter("toml_str", toml_str);
        tera.register_filter("yaml_str", yaml_str);
        let mut sources = Vec::new();
        collect(&TEMPLATES, &mut sources);
        sources.retain(|(name, _)| dirs.iter().any(|d| name.starts_with(d)));
        tera.add_raw_templates(sources)
            .map_err(|source| Error::Template {
                name: "templates/".to_string(),
                source,
            })?;
        Ok(Templates { tera })
    }

    /// Renders one template.
    pub fn render(&self, name: &str, ctx: &tera::Context) -> Result<String> {
        self.tera
            .render(name, ctx)
            .map_err(|source| Error::Template {
                name: name.to_string(),
                source,
            })
    }

    /// The names of the templates under `prefix`, each with the path it
    /// produces (the name without `prefix` and without `.tera`).
    pub fn under<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let mut names: Vec<&str> = self
            .tera
            .get_template_names()
            .filter(|name| name.starts_with(prefix))
            .collect();
        names.sort_unstable();
        names.into_iter().filter_map(move |name| {
            let output = name.strip_prefix(prefix)?.strip_suffix(".tera")?;
            Some((name, output))
        })
    }
}

fn collect(dir: &'static Dir<'static>, out: &mut Vec<(&'static str, &'static str)>) {
    for file in dir.files() {
        let (Some(name), Some(body)) = (file.path().to_str(), file.contents_utf8()) else {
            continue;
        };
        out.push((name, body));
    }
    for sub in dir.dirs() {
        collect(sub, out);
    }
}

/// `{{ value | toml_str }}`: a TOML basic string literal, quotes included.
fn toml_str(value: &tera::Value, _: &HashMap<String, tera::Value>) -> tera::Result<tera::Value> {
    let s = value
        .as_str()
        .ok_or_else(|| tera::Error::msg("toml_str expects a string"))?;
    Ok(tera::Value::String(toml_edit::Value::from(s).to_string()))
}

/// `{{ value | yaml_str }}`: a YAML scalar, quoted when a YAML 1.1 reader
/// would take it for something else than the string (a project named `no`
/// or `on`, a plural `yes`), as [`crate::yaml::to_string`] writes it.
fn yaml_str(value: &tera::Value, _: &HashMap<String, tera::Value>) -> tera::Result<tera::Value> {
    let s = value
        .as_str()
        .ok_or_else(|| tera::Error::msg("yaml_str expects a string"))?;
    let yaml = crate::yaml::to_string(s).map_err(|e| tera::Error::msg(e.to_string()))?;
    Ok(tera::Value::String(yaml.trim_end().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_parses() {
        Templates::load().unwrap();
    }

    #[test]
    fn yaml_str_quotes_what_yaml_1_1_misreads() {
        let quote = |s: &str| yaml_str(&tera::Value::from(s), &HashMap::new()).unwrap();
        assert_eq!(quote("memcached-operator"), "memcached-operator");
        assert_eq!(quote("no"), "'no'");
        assert_eq!(quote("on"), "'on'");
        assert_eq!(quote("true"), "'true'");
    }
}
