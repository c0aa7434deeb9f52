//! The built-in templates: tera files under `templates/`, embedded in the
//! binary, named by the path they produce (`init/src/main.rs.tera` makes
//! `src/main.rs`). Scaffolding plans render them, and so does
//! `generate helm` for the chart's own files (`templates/helm/`).

use std::cell::RefCell;
use std::collections::HashMap;

use include_dir::{Dir, include_dir};

use crate::{Error, Result};

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");

/// The template engine over the built-in templates.
///
/// Parsing a template with tera costs about as much as a whole small
/// command, so a template with no tera syntax at all is rendered as it is,
/// and the others are parsed the first time they are rendered (a command
/// renders only some of the ones it loads).
#[derive(Debug)]
pub struct Templates {
    /// Templates with no tera tag: name -> text, which is their rendering.
    plain: HashMap<&'static str, &'static str>,
    /// Templates with tags: name -> source, parsed into `tera` on first use.
    tagged: HashMap<&'static str, &'static str>,
    tera: RefCell<tera::Tera>,
}

impl Templates {
    /// Loads every built-in template, named by its path under `templates/`,
    /// and parses each, so that a syntax error shows at once.
    pub fn load() -> Result<Self> {
        let templates = Self::load_dirs(&[""])?;
        for name in templates.tagged.keys() {
            templates.parse(name)?;
        }
        Ok(templates)
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
        let (tagged, plain): (HashMap<_, _>, HashMap<_, _>) = sources
            .into_iter()
            .partition(|(_, body)| ["{{", "{%", "{#"].iter().any(|t| body.contains(t)));
        Ok(Templates {
            plain,
            tagged,
            tera: RefCell::new(tera),
        })
    }

    /// Parses a tagged template into the engine, once.
    fn parse(&self, name: &str) -> Result<()> {
        let tera = self.tera.borrow_mut();
        if tera.get_template_names().any(|n| n == name) {
            return Ok(());
        }
        let Some(source) = self.tagged.get(name) else {
            return Ok(());
        };
        drop(tera);
        // What it includes, imports or extends must be in the engine first,
        // plain or tagged.
        for other in referenced(source) {
            if let Some(text) = self.plain.get(other) {
                let mut tera = self.tera.borrow_mut();
                if !tera.get_template_names().any(|n| n == other) {
                    tera.add_raw_template(other, text)
                        .map_err(|source| Error::Template {
                            name: other.to_string(),
                            source,
                        })?;
                }
            } else {
                self.parse(other)?;
            }
        }
        self.tera
            .borrow_mut()
            .add_raw_template(name, source)
            .map_err(|source| Error::Template {
                name: name.to_string(),
                source,
            })
    }

    /// Renders one template.
    pub fn render(&self, name: &str, ctx: &tera::Context) -> Result<String> {
        if let Some(text) = self.plain.get(name) {
            return Ok((*text).to_string());
        }
        self.parse(name)?;
        self.tera
            .borrow()
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
            .plain
            .keys()
            .chain(self.tagged.keys())
            .copied()
            .filter(|name| name.starts_with(prefix))
            .collect();
        names.sort_unstable();
        names.into_iter().filter_map(move |name| {
            let output = name.strip_prefix(prefix)?.strip_suffix(".tera")?;
            Some((name, output))
        })
    }
}

/// The templates a source names in `{% include %}`, `{% import %}` and
/// `{% extends %}` tags.
fn referenced(source: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = source;
    while let Some(start) = rest.find("{%") {
        let Some(len) = rest[start..].find("%}") else {
            break;
        };
        let tag =
            rest[start + 2..start + len].trim_matches(|c: char| c == '-' || c.is_whitespace());
        if let Some(arg) = ["include", "import", "extends"].iter().find_map(|k| {
            tag.strip_prefix(k)
                .filter(|a| a.starts_with(char::is_whitespace))
        }) {
            let arg = arg.trim_start();
            if let Some(q) = arg.chars().next().filter(|c| *c == '"' || *c == '\'')
                && let Some(end) = arg[1..].find(q)
            {
                out.push(&arg[1..=end]);
            }
        }
        rest = &rest[start + len + 2..];
    }
    out
}

/// A fingerprint of this rsop's scaffold: its release and every built-in
/// template. Two builds with the same fingerprint scaffold alike, which
/// spares `rsop update`'s bookkeeping a second run of the recorded commands.
pub fn fingerprint() -> String {
    use std::hash::{Hash, Hasher};
    let mut sources = Vec::new();
    collect(&TEMPLATES, &mut sources);
    let mut hasher = std::hash::DefaultHasher::new();
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    sources.hash(&mut hasher);
    format!("{:016x}", hasher.finish())
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
    fn included_templates_are_found_for_lazy_parsing() {
        assert_eq!(
            referenced(
                "a {% include \"x/y.tera\" %} b {%- import 'm.tera' as m -%} {% if x %}{% endif %}"
            ),
            ["x/y.tera", "m.tera"]
        );
        let templates = Templates::load_dirs(&["create-api/"]).unwrap();
        let names: Vec<&str> = templates.tagged.keys().copied().collect();
        for name in names {
            templates.parse(name).unwrap();
        }
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
