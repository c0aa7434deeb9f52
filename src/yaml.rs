//! The one YAML writer: every YAML text rsop writes comes from [`to_string`].
//!
//! `serde_yaml_ng` quotes a string only when a YAML 1.2 reader would take it
//! for something else (`true`, `null`, `1.5`, `0o17`, `012`). Many readers
//! still follow YAML 1.1 — `PyYAML` (and so ansible, pre-commit's
//! check-yaml, kubernetes-validate), go-yaml v2 behind `sigs.k8s.io/yaml` in
//! Helm, `SnakeYAML` — and resolve more plain scalars: `y`, `no`, `on` are booleans,
//! `1:20` is 80, `0755` is octal, `2001-12-14` a date, `<<` a merge key and
//! `=` a "value" that `PyYAML`'s `safe_load` cannot even construct. Quoting
//! those too makes every reader see the same document; a quoted scalar is a
//! string to all of them.
//!
//! `serde_yaml_ng` has no option to force a scalar's style, so the writer
//! works as the Helm template writer does: each such scalar (a key or a
//! value) is swapped for a token serde writes plain, and the token is then
//! replaced in the text by the quoted scalar. Multi-line strings need
//! nothing: serde writes them as block scalars, which are strings to every
//! reader, and no scalar that needs quoting has a line break.

mod direct;

pub use direct::to_string as json_to_string;

use serde::Serialize;
use serde_yaml_ng::{Mapping, Value};

/// The value at a path of mapping keys, if every step exists.
pub fn get<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(*key))
}

/// The string at a path of mapping keys.
pub fn get_str<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    get(value, path).and_then(Value::as_str)
}

/// The start of every token; a number that no string of the document
/// contains follows it, so a token cannot be confused with content.
const TOKEN: &str = "rsopyamlquote";

/// `value` as one YAML document, read alike by YAML 1.1 and 1.2 readers.
pub fn to_string<T: ?Sized + Serialize>(value: &T) -> Result<String, serde_yaml_ng::Error> {
    let mut value = serde_yaml_ng::to_value(value)?;
    let prefix = unused_prefix(&value);
    let mut fills = Vec::new();
    swap(&mut value, &prefix, &mut fills);
    #[allow(
        clippy::disallowed_methods,
        reason = "this is the one place that calls serde's writer"
    )]
    let text = serde_yaml_ng::to_string(&value)?;
    Ok(if fills.is_empty() {
        text
    } else {
        fill(&text, &prefix, &fills)
    })
}

/// Whether a YAML 1.1 reader takes the plain scalar `text` for something
/// other than the string `text`. The rule is the union of YAML 1.1's
/// implicit types (yaml.org/type) and of what `PyYAML`, go-yaml v2 and
/// `SnakeYAML` resolve, widened where that is simpler (any letter case for
/// the words, a sign on any number): quoting a string no reader would have
/// misread costs nothing.
pub fn is_ambiguous(text: &str) -> bool {
    // Compared without allocating: this runs for every scalar written.
    let word = [
        "", "~", "null", "y", "n", "yes", "no", "true", "false", "on", "off",
        // The merge key and the "value" key of YAML 1.1.
        "<<", "=",
    ]
    .iter()
    .any(|w| text.eq_ignore_ascii_case(w));
    word || is_number(text) || is_timestamp(text)
}

/// YAML 1.1's int and float forms: binary, octal (`0755`), hexadecimal,
/// decimal with `_` separators, base 60 (`1:20`, `1:20.5`), `.inf`, `.nan`,
/// and YAML 1.2's `0o17` and exponents.
fn is_number(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if unsigned.eq_ignore_ascii_case(".inf") || unsigned.eq_ignore_ascii_case(".nan") {
        return true;
    }
    let radix = |prefix: &str, digit: fn(&u8) -> bool| {
        unsigned.strip_prefix(prefix).is_some_and(|rest| {
            rest.bytes().any(|b| digit(&b)) && rest.bytes().all(|b| b == b'_' || digit(&b))
        })
    };
    if radix("0b", |b| matches!(b, b'0' | b'1'))
        || radix("0o", |b| matches!(b, b'0'..=b'7'))
        || radix("0x", u8::is_ascii_hexdigit)
    {
        return true;
    }
    let mut rest = unsigned.as_bytes();
    // The integer part, or `.` and a digit when there is none.
    let integer = leading(&mut rest, |b| b.is_ascii_digit() || b == b'_');
    if integer.first().is_some_and(u8::is_ascii_digit) {
        // Base 60: `:` and one or two digits, the first 0 to 5, repeated.
        while let Some(after) = rest.strip_prefix(b":") {
            rest = after;
            match leading(&mut rest, |b| b.is_ascii_digit()) {
                [_] | [b'0'..=b'5', _] => {}
                _ => return false,
            }
        }
        if let Some(after) = rest.strip_prefix(b".") {
            rest = after;
            leading(&mut rest, |b| b.is_ascii_digit() || b == b'_');
        }
    } else if !integer.is_empty() {
        return false;
    } else if let Some(after) = rest.strip_prefix(b".")
        && after.first().is_some_and(u8::is_ascii_digit)
    {
        rest = after;
        leading(&mut rest, |b| b.is_ascii_digit() || b == b'_');
    } else {
        return false;
    }
    if let Some(after) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        rest = after
            .strip_prefix(b"+")
            .or_else(|| after.strip_prefix(b"-"))
            .unwrap_or(after);
        if leading(&mut rest, |b| b.is_ascii_digit()).is_empty() {
            return false;
        }
    }
    rest.is_empty()
}

/// YAML 1.1's timestamp: a date `2001-12-14`, alone or followed by a time
/// (`T`, `t` or blanks, then anything: any such text is quoted).
fn is_timestamp(text: &str) -> bool {
    let mut rest = text.as_bytes();
    let year = leading(&mut rest, |b| b.is_ascii_digit());
    if year.len() != 4 {
        return false;
    }
    for _ in 0..2 {
        let Some(after) = rest.strip_prefix(b"-") else {
            return false;
        };
        rest = after;
        if !(1..=2).contains(&leading(&mut rest, |b| b.is_ascii_digit()).len()) {
            return false;
        }
    }
    matches!(rest.first(), None | Some(b'T' | b't' | b' ' | b'\t'))
}

/// Takes the longest prefix of `rest` whose bytes satisfy `accept`.
fn leading<'a>(rest: &mut &'a [u8], accept: impl Fn(u8) -> bool) -> &'a [u8] {
    let n = rest.iter().take_while(|&&b| accept(b)).count();
    let (taken, left) = rest.split_at(n);
    *rest = left;
    taken
}

/// `TOKEN` and the first number that makes a prefix no string of `value`
/// (key or value) contains.
fn unused_prefix(value: &Value) -> String {
    let mut strings = Vec::new();
    collect_strings(value, &mut strings);
    let mut n = 0_usize;
    loop {
        let prefix = format!("{TOKEN}{n}x");
        if !strings.iter().any(|s| s.contains(&prefix)) {
            return prefix;
        }
        n += 1;
    }
}

fn collect_strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Sequence(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Mapping(map) => {
            for (k, v) in map {
                collect_strings(k, out);
                collect_strings(v, out);
            }
        }
        Value::Tagged(tagged) => collect_strings(&tagged.value, out),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Replaces every scalar that needs another spelling than serde's by a
/// token `prefix` + its index in `fills`, where its text goes.
fn swap(value: &mut Value, prefix: &str, fills: &mut Vec<String>) {
    let fill = match value {
        Value::String(s) if is_ambiguous(s) => Some(single_quoted(s)),
        Value::Number(n) => n.as_f64().filter(|_| n.is_f64()).and_then(float_1_1),
        Value::Sequence(items) => {
            for item in items {
                swap(item, prefix, fills);
            }
            None
        }
        Value::Mapping(map) => {
            *map = std::mem::take(map)
                .into_iter()
                .map(|(mut k, mut v)| {
                    swap(&mut k, prefix, fills);
                    swap(&mut v, prefix, fills);
                    (k, v)
                })
                .collect::<Mapping>();
            None
        }
        Value::Tagged(tagged) => {
            swap(&mut tagged.value, prefix, fills);
            None
        }
        Value::String(_) | Value::Null | Value::Bool(_) => None,
    };
    if let Some(text) = fill {
        *value = Value::String(format!("{prefix}{}", fills.len()));
        fills.push(text);
    }
}

/// A float as YAML 1.1 reads it, when serde's spelling is not: serde writes
/// `1e16` and `1.5e-7`, which `PyYAML` reads as strings (its floats need a `.`
/// and a signed exponent); `1.0e+16` and `1.5e-7` read alike everywhere.
fn float_1_1(float: f64) -> Option<String> {
    #[allow(
        clippy::disallowed_methods,
        reason = "serde's own spelling of the float"
    )]
    let text = serde_yaml_ng::to_string(&float).ok()?;
    let (mantissa, exponent) = text.trim_end().split_once('e')?;
    let point = if mantissa.contains('.') { "" } else { ".0" };
    let sign = if exponent.starts_with('-') { "" } else { "+" };
    Some(format!("{mantissa}{point}e{sign}{exponent}"))
}

/// `text` as a single-quoted YAML scalar.
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// `text` with every token `prefix` + index replaced by `fills[index]`. A
/// token is a whole scalar, so the byte after its digits is never a digit.
fn fill(text: &str, prefix: &str, fills: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        out.push_str(&rest[..at]);
        rest = &rest[at + prefix.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let index: usize = rest[..digits].parse().expect("a token ends in its index");
        out.push_str(&fills[index]);
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_1_1_scalars_are_ambiguous() {
        for text in [
            "",
            "~",
            "null",
            "Null",
            "NULL",
            "nUlL",
            "y",
            "Y",
            "n",
            "N",
            "yes",
            "Yes",
            "YES",
            "no",
            "No",
            "NO",
            "on",
            "On",
            "ON",
            "off",
            "Off",
            "OFF",
            "true",
            "True",
            "TRUE",
            "tRuE",
            "false",
            "FALSE",
            "fAlSe",
            "<<",
            "=",
            "0",
            "12",
            "+1",
            "-1",
            "1_000",
            "0755",
            "0b101",
            "-0b1_01",
            "0x1F",
            "0x_1f",
            "0o17",
            "1:20",
            "-1:20",
            "190:20:30",
            "1:20.5",
            "1.5",
            "1.",
            ".5",
            "+.5",
            "1_0.0_1",
            "1e5",
            "1.5e-7",
            "1.0e+16",
            ".inf",
            "-.inf",
            "+.Inf",
            ".NaN",
            ".nan",
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14 21:59:43.10 -5",
            "2001-1-1",
        ] {
            assert!(is_ambiguous(text), "{text:?} should be quoted");
        }
    }

    #[test]
    fn other_scalars_are_not() {
        for text in [
            "a",
            "yes!",
            "none",
            "nil",
            "=a",
            "<",
            "<<<",
            "v1",
            "0.1.0",
            "1.2.3",
            "1:60",
            "1:2:345",
            "8080:80",
            "0x",
            "0b",
            "0b2",
            "0xg",
            "_1",
            "1a",
            "1e",
            "1e+",
            ".",
            "..5",
            "-",
            "+",
            "inf",
            "nan",
            "2001-12-14x",
            "12001-12-14",
            "2001-123-14",
            "multi\nline",
            "x-kubernetes-int-or-string",
        ] {
            assert!(!is_ambiguous(text), "{text:?} should stay plain");
        }
    }

    #[test]
    fn ambiguous_keys_and_values_are_quoted_and_others_kept() {
        let value = serde_json::json!({
            "enum": ["=", "y", "no", "on", "~", "<<", "plain", "1:20", "0755"],
            "on": {"y": "=", "<<": 1},
            "description": "first line\nsecond line: y\n",
            "list": ["it's", "2001-12-14"],
        });
        let text = to_string(&value).unwrap();
        assert_eq!(
            text,
            "\
description: |
  first line
  second line: y
enum:
- '='
- 'y'
- 'no'
- 'on'
- '~'
- '<<'
- plain
- '1:20'
- '0755'
list:
- it's
- '2001-12-14'
'on':
  '<<': 1
  'y': '='
"
        );
        let back: serde_json::Value = serde_yaml_ng::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn floats_are_written_as_yaml_1_1_reads_them() {
        let value = serde_json::json!([1e16, 1.5e-7, -2e30, 0.5, 100.0, 3]);
        let text = to_string(&value).unwrap();
        assert_eq!(
            text,
            "- 1.0e+16\n- 1.5e-7\n- -2.0e+30\n- 0.5\n- 100.0\n- 3\n"
        );
        let back: serde_json::Value = serde_yaml_ng::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn content_that_looks_like_a_token_is_kept() {
        let value = serde_json::json!({"a": "rsopyamlquote0x0", "b": "y"});
        let text = to_string(&value).unwrap();
        assert_eq!(text, "a: rsopyamlquote0x0\nb: 'y'\n");
    }

    #[test]
    fn structs_serialize_as_serde_writes_them() {
        #[derive(Serialize)]
        struct Doc<'a> {
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            missing: Option<u8>,
            values: Vec<&'a str>,
        }
        let doc = Doc {
            name: "n",
            missing: None,
            values: vec!["off", "kept"],
        };
        assert_eq!(
            to_string(&doc).unwrap(),
            "name: 'n'\nvalues:\n- 'off'\n- kept\n"
        );
    }
}
