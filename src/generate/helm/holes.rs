//! Helm template text from a Kubernetes object.
//!
//! The object is built as YAML data in which the parts Helm decides are
//! placeholders ("holes"): an inline hole is a token inside a scalar, a line
//! hole is a mapping key or sequence item of its own. serde writes the YAML,
//! so the object's own content keeps YAML's quoting rules; then each token is
//! replaced by its template text, line holes at the indentation the writer
//! gave them. Template actions that appear in the object's own text (a
//! `{{` in a CRD description) are escaped so Helm prints them as they are.

use serde_yaml_ng::Value;

use crate::{Error, Result};

/// A token is lowercase letters and digits, so YAML writes it unquoted, and
/// ends in `x`, so no token is the start of another.
const TOKEN: &str = "rsophole";

/// `text` with its template actions escaped, so Helm prints `{{` as it is.
pub fn escape(text: &str) -> String {
    text.replace("{{", "{{ \"{{\" }}")
}

/// Whether `text` is a hole's token.
pub fn is_token(text: &str) -> bool {
    text.strip_prefix(TOKEN)
        .and_then(|t| t.strip_suffix('x'))
        .is_some_and(|n| n.parse::<usize>().is_ok())
}

/// Lines of template text for a line hole, given the column it sits at.
type Lines = Box<dyn Fn(usize) -> Vec<String>>;

enum Fill {
    Inline(String),
    Lines(Lines),
}

/// The holes of one template.
#[derive(Default)]
pub struct Holes {
    fills: Vec<Fill>,
}

impl Holes {
    fn token(index: usize) -> String {
        format!("{TOKEN}{index}x")
    }

    fn push(&mut self, fill: Fill) -> String {
        self.fills.push(fill);
        Self::token(self.fills.len() - 1)
    }

    /// A token that becomes `text` where it stands inside a scalar.
    pub fn inline(&mut self, text: impl Into<String>) -> String {
        self.push(Fill::Inline(text.into()))
    }

    /// A mapping key (with a null value) or sequence item that becomes the
    /// lines `lines(column)` returns, each indented to that column. The key
    /// must not be the first of a mapping inside a sequence item, whose
    /// line starts with the item's `- `.
    pub fn lines(&mut self, lines: impl Fn(usize) -> Vec<String> + 'static) -> Value {
        Value::String(self.push(Fill::Lines(Box::new(lines))))
    }

    /// The template text of `object`.
    pub fn render(&self, object: &Value, path: &str) -> Result<String> {
        let yaml = crate::yaml::to_string(object).map_err(|e| Error::Parse {
            path: path.into(),
            help: None,
            source: Box::new(e),
        })?;
        let yaml = escape(&yaml);
        let mut out = String::with_capacity(yaml.len());
        for line in yaml.lines() {
            let body = line.trim_start();
            let column = line.len() - body.len();
            let item = body.strip_prefix("- ").unwrap_or(body);
            let token = item.strip_suffix(": null").unwrap_or(item);
            if let Some(lines) = self.line_fill(token) {
                for text in lines(column) {
                    out.push_str(&" ".repeat(column));
                    out.push_str(&text);
                    out.push('\n');
                }
            } else {
                out.push_str(line);
                out.push('\n');
            }
        }
        // Highest index first, though the trailing `x` already keeps token
        // 1 from matching the start of token 10.
        for (index, fill) in self.fills.iter().enumerate().rev() {
            if let Fill::Inline(text) = fill {
                out = out.replace(&Self::token(index), text);
            }
        }
        debug_assert!(!out.contains(TOKEN), "a hole was left in:\n{out}");
        Ok(out)
    }

    fn line_fill(&self, token: &str) -> Option<&Lines> {
        let index: usize = token.strip_prefix(TOKEN)?.strip_suffix('x')?.parse().ok()?;
        match self.fills.get(index)? {
            Fill::Lines(lines) => Some(lines),
            Fill::Inline(_) => None,
        }
    }
}

/// `{{- <expr> | nindent <column> }}`: a value rendered as YAML lines at
/// `column`, starting on a line of its own.
pub fn nindent(expr: &str, column: usize) -> String {
    format!("{{{{- {expr} | nindent {column} }}}}")
}

/// A block of lines shown only when `condition` holds (or, with `with`,
/// when a value is set, which then is `.` inside).
pub fn block(keyword: &str, condition: &str, body: Vec<String>) -> Vec<String> {
    let mut lines = vec![format!("{{{{- {keyword} {condition} }}}}")];
    lines.extend(body);
    lines.push("{{- end }}".to_string());
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_become_template_text_at_their_column() {
        let mut holes = Holes::default();
        let mut labels = serde_yaml_ng::Mapping::new();
        labels.insert(
            holes.lines(|c| vec![nindent("include \"x.labels\" .", c)]),
            Value::Null,
        );
        labels.insert("tier".into(), "web".into());
        let mut metadata = serde_yaml_ng::Mapping::new();
        metadata.insert("labels".into(), Value::Mapping(labels));
        metadata.insert(
            "name".into(),
            format!("{}-manager", holes.inline("{{ include \"x.fullname\" . }}")).into(),
        );
        metadata.insert("description".into(), "Uses {{ mustache }} in text".into());
        let mut args = vec![Value::from("--a")];
        args.push(holes.lines(|_| block("if", ".Values.b", vec!["- --b".into()])));
        let mut object = serde_yaml_ng::Mapping::new();
        object.insert("metadata".into(), Value::Mapping(metadata));
        object.insert("args".into(), Value::Sequence(args));
        let text = holes.render(&Value::Mapping(object), "t.yaml").unwrap();
        assert_eq!(
            text,
            "metadata:\n  labels:\n    {{- include \"x.labels\" . | nindent 4 }}\n    tier: web\n  \
             name: {{ include \"x.fullname\" . }}-manager\n  \
             description: Uses {{ \"{{\" }} mustache }} in text\n\
             args:\n- --a\n{{- if .Values.b }}\n- --b\n{{- end }}\n"
        );
    }

    #[test]
    fn many_tokens_do_not_collide() {
        let mut holes = Holes::default();
        let values: Vec<Value> = (0..12)
            .map(|i| Value::from(holes.inline(format!("v{i}"))))
            .collect();
        let text = holes.render(&Value::Sequence(values), "t").unwrap();
        let expected = (0..12)
            .map(|i| format!("- v{i}\n"))
            .collect::<Vec<_>>()
            .concat();
        assert_eq!(text, expected);
    }
}
