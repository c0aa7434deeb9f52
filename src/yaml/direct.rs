//! A direct YAML writer for JSON documents (the CRDs `rsop manifests` makes),
//! byte for byte what [`crate::yaml::to_string`] writes for them.
//!
//! [`crate::yaml::to_string`] goes through `serde_yaml_ng`: the document is
//! converted into a YAML value, scalars that need quoting are swapped for
//! tokens, libyaml emits events and the tokens are replaced in the text.
//! For a CRD of a few thousand lines that is most of the run time of
//! `rsop manifests`. This writer walks the JSON value once and writes each
//! node as libyaml's block emitter does under `serde_yaml_ng`'s settings
//! (indent 2, unlimited width, unicode): the style of each scalar is chosen
//! by libyaml's own analysis (plain, single-quoted, double-quoted or
//! literal block), with the YAML 1.1 quoting of [`crate::yaml::is_ambiguous`].
//!
//! What it does not reproduce (a float, a character libyaml escapes, a key
//! that cannot be a simple key, a block scalar with kept trailing breaks)
//! makes [`to_string`] fall back to [`crate::yaml::to_string`] for the whole
//! document, so the output is the same either way.

use std::fmt::Write as _;

use serde_json::Value;

/// `value` as one YAML document, exactly as [`crate::yaml::to_string`]
/// writes it.
///
/// # Panics
/// Never: a JSON value always serializes to YAML.
pub fn to_string(value: &Value) -> String {
    let mut w = Writer::default();
    if w.document(value).is_some() {
        w.out
    } else {
        crate::yaml::to_string(value).expect("JSON values always serialize to YAML")
    }
}

/// Where a node stands, as libyaml's `emit_node` records it.
#[derive(Clone, Copy)]
struct Context {
    /// A value or key of a block mapping.
    mapping: bool,
    /// A key written without `? `.
    simple_key: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// libyaml's emitter state, for the parts this writer uses.
struct Writer {
    out: String,
    /// Characters written on the current line.
    column: usize,
    /// The last character written is a space or a line start.
    whitespace: bool,
    /// Only indentation (and `- ` indicators) written on this line so far.
    indention: bool,
    /// The current indentation; negative before the root node.
    indent: isize,
}

impl Default for Writer {
    fn default() -> Self {
        Writer {
            out: String::new(),
            column: 0,
            whitespace: true,
            indention: true,
            indent: -1,
        }
    }
}

/// libyaml's analysis of a scalar: which styles may write it.
#[allow(clippy::struct_excessive_bools, reason = "libyaml's flags, one each")]
#[derive(Debug, PartialEq, Eq)]
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

const BEST_INDENT: isize = 2;

impl Writer {
    fn document(&mut self, value: &Value) -> Option<()> {
        self.node(
            value,
            Context {
                mapping: false,
                simple_key: false,
            },
        )?;
        // The document end: a line break unless at a line start.
        self.indent = -1;
        self.write_indent();
        Some(())
    }

    fn node(&mut self, value: &Value, ctx: Context) -> Option<()> {
        match value {
            Value::Null => self.scalar("null", Style::Plain, ctx),
            Value::Bool(b) => self.scalar(if *b { "true" } else { "false" }, Style::Plain, ctx),
            Value::Number(n) if n.is_f64() => {
                // serde's spelling of a float, made one YAML 1.1 reads as a
                // float (`1.0e+16`), as the full writer has it.
                let text = crate::yaml::to_string(value).ok()?;
                self.scalar(text.trim_end_matches('\n'), Style::Plain, ctx)
            }
            Value::Number(n) => self.scalar(&n.to_string(), Style::Plain, ctx),
            Value::String(s) => self.string(s, ctx),
            Value::Array(items) if items.is_empty() => {
                self.indicator("[", true, true, false);
                self.indicator("]", false, false, false);
                Some(())
            }
            Value::Object(map) if map.is_empty() => {
                self.indicator("{", true, true, false);
                self.indicator("}", false, false, false);
                Some(())
            }
            Value::Array(items) => {
                let saved = self.indent;
                let indentless = ctx.mapping && !self.indention;
                if self.indent < 0 {
                    self.indent = 0;
                } else if !indentless {
                    self.indent += BEST_INDENT;
                }
                for item in items {
                    self.write_indent();
                    self.indicator("-", true, false, true);
                    self.node(
                        item,
                        Context {
                            mapping: false,
                            simple_key: false,
                        },
                    )?;
                }
                self.indent = saved;
                Some(())
            }
            Value::Object(map) => {
                let saved = self.indent;
                self.indent = if self.indent < 0 {
                    0
                } else {
                    self.indent + BEST_INDENT
                };
                for (key, value) in map {
                    self.write_indent();
                    // A simple key is one line of at most 128 bytes; any
                    // other is written with `? `, which this writer leaves
                    // to libyaml.
                    if key.len() > 128 || key.contains(is_break) {
                        return None;
                    }
                    self.string(
                        key,
                        Context {
                            mapping: true,
                            simple_key: true,
                        },
                    )?;
                    self.indicator(":", false, false, false);
                    self.node(
                        value,
                        Context {
                            mapping: true,
                            simple_key: false,
                        },
                    )?;
                }
                self.indent = saved;
                Some(())
            }
        }
    }

    /// A string scalar: quoted for YAML 1.1 readers when they would misread
    /// it, else in the style `serde_yaml_ng` asks for and libyaml settles on.
    fn string(&mut self, s: &str, ctx: Context) -> Option<()> {
        if crate::yaml::is_ambiguous(s) {
            // `crate::yaml` has libyaml write a plain token in its place and
            // then puts the single-quoted text there.
            if !self.whitespace {
                self.put(" ");
            }
            self.put(&format!("'{}'", s.replace('\'', "''")));
            self.whitespace = false;
            self.indention = false;
            return Some(());
        }
        let requested = if s.contains('\n') {
            Style::Literal
        } else if resolves_to_non_string(s) {
            Style::SingleQuoted
        } else {
            Style::Plain
        };
        self.scalar(s, requested, ctx)
    }

    /// libyaml's `emit_scalar`: the style it settles on, then the text.
    fn scalar(&mut self, s: &str, requested: Style, ctx: Context) -> Option<()> {
        let a = analyze(s)?;
        let mut style = requested;
        if ctx.simple_key && a.multiline {
            style = Style::DoubleQuoted;
        }
        if style == Style::Plain && (!a.block_plain_allowed || (s.is_empty() && ctx.simple_key)) {
            style = Style::SingleQuoted;
        }
        if style == Style::SingleQuoted && !a.single_quoted_allowed {
            style = Style::DoubleQuoted;
        }
        if style == Style::Literal && (!a.block_allowed || ctx.simple_key) {
            style = Style::DoubleQuoted;
        }
        let saved = self.indent;
        self.indent = if self.indent < 0 {
            BEST_INDENT
        } else {
            self.indent + BEST_INDENT
        };
        match style {
            Style::Plain => {
                if !self.whitespace && !s.is_empty() {
                    self.put(" ");
                }
                self.put(s);
                self.whitespace = false;
                self.indention = false;
            }
            Style::SingleQuoted => {
                // No line break and no width limit: the text between quotes,
                // each quote doubled.
                if s.contains(is_break) {
                    return None;
                }
                self.indicator("'", true, false, false);
                self.put(&s.replace('\'', "''"));
                self.indicator("'", false, false, false);
                self.whitespace = false;
                self.indention = false;
            }
            Style::DoubleQuoted => {
                self.indicator("\"", true, false, false);
                self.put(&double_quoted(s));
                self.indicator("\"", false, false, false);
                self.whitespace = false;
                self.indention = false;
            }
            Style::Literal => self.literal(s)?,
        }
        self.indent = saved;
        Some(())
    }

    /// libyaml's literal block scalar (`|`), with its indentation and
    /// chomping hints; a kept final break (`|+`) is left to libyaml, which
    /// then ends the stream with `...`.
    fn literal(&mut self, s: &str) -> Option<()> {
        self.indicator("|", true, false, false);
        if s.starts_with([' ', '\n']) {
            self.indicator("2", false, false, false);
        }
        let mut tail = s.chars().rev();
        match (tail.next(), tail.next()) {
            (None, _) => self.indicator("-", false, false, false),
            (Some(last), _) if !is_break(last) => self.indicator("-", false, false, false),
            (Some(_), None) => return None,
            (Some(_), Some(before)) if is_break(before) => return None,
            _ => {}
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for line in s.split_inclusive('\n') {
            let (text, ends) = match line.strip_suffix('\n') {
                Some(text) => (text, true),
                None => (line, false),
            };
            if !text.is_empty() {
                if breaks {
                    self.write_indent();
                }
                self.put(text);
                self.indention = false;
                breaks = false;
            }
            if ends {
                self.put_break();
                self.indention = true;
                breaks = true;
            }
        }
        Some(())
    }

    fn write_indent(&mut self) {
        let indent = usize::try_from(self.indent.max(0)).unwrap_or(0);
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.out.push(' ');
            self.column += 1;
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn indicator(
        &mut self,
        text: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(" ");
        }
        self.put(text);
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    fn put(&mut self, text: &str) {
        self.out.push_str(text);
        self.column += if text.is_ascii() {
            text.len()
        } else {
            text.chars().count()
        };
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }
}

/// A line break as libyaml sees one; only `\n` passes [`analyze`].
fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// libyaml's `IS_PRINTABLE`: `\n`, ASCII from space to `~`, and the
/// Unicode ranges YAML allows unescaped but for the BOM.
fn is_printable(c: char) -> bool {
    matches!(c, '\n' | ' '..='~' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
        && c != '\u{FEFF}'
}

/// libyaml's double-quoted scalar with an unlimited width: escapes for what
/// is not printable, for line breaks, `"` and `\\`.
fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_printable(c) && !is_break(c) && c != '"' && c != '\\' {
            out.push(c);
            continue;
        }
        out.push('\\');
        match c {
            '\0' => out.push('0'),
            '\u{7}' => out.push('a'),
            '\u{8}' => out.push('b'),
            '\t' => out.push('t'),
            '\n' => out.push('n'),
            '\u{B}' => out.push('v'),
            '\u{C}' => out.push('f'),
            '\r' => out.push('r'),
            '\u{1B}' => out.push('e'),
            '"' => out.push('"'),
            '\\' => out.push('\\'),
            '\u{85}' => out.push('N'),
            '\u{A0}' => out.push('_'),
            '\u{2028}' => out.push('L'),
            '\u{2029}' => out.push('P'),
            c => {
                let code = u32::from(c);
                let _ = match code {
                    0..=0xFF => write!(out, "x{code:02X}"),
                    0x100..=0xFFFF => write!(out, "u{code:04X}"),
                    _ => write!(out, "U{code:08X}"),
                };
            }
        }
    }
    out
}

/// libyaml's `analyze_scalar`; `None` for a scalar with U+2028 or U+2029,
/// line breaks a literal block would keep as they are, left to libyaml.
fn analyze(s: &str) -> Option<Analysis> {
    if s.is_empty() {
        return Some(Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        });
    }
    let mut scan = Scan::new(s);
    if s.is_ascii() {
        // Most scalars of a CRD, descriptions above all.
        scan_ascii(s.as_bytes(), &mut scan);
    } else {
        scan_chars(s, &mut scan)?;
    }
    Some(scan.finish())
}

/// [`Scan::step`] over every character of `s`; `None` at U+2028 or U+2029.
fn scan_chars(s: &str, scan: &mut Scan) -> Option<()> {
    let mut chars = s.chars().peekable();
    let mut i = 0_usize;
    while let Some(c) = chars.next() {
        if matches!(c, '\u{2028}' | '\u{2029}') {
            return None;
        }
        scan.step(c, chars.peek().copied(), i);
        i += 1;
    }
    Some(())
}

/// [`Scan::step`] over every byte of `bytes` (ASCII, not empty), visiting
/// only the bytes that can set a flag: line breaks and other control
/// characters, `:` and `#`; the first and the last byte are settled apart.
fn scan_ascii(bytes: &[u8], scan: &mut Scan) {
    let blank = |b: u8| is_blank(char::from(b));
    let is_break = |b: u8| is_break(char::from(b));
    let followed_by_whitespace = |i: usize| bytes.get(i + 1).is_none_or(|&b| blank(b));
    let (first, last) = (bytes[0], bytes[bytes.len() - 1]);
    scan.block_indicators |= starts_block_indicator(char::from(first), followed_by_whitespace(0));
    scan.leading_space = first == b' ';
    scan.trailing_space = last == b' ';
    scan.leading_break = is_break(first);
    scan.trailing_break = is_break(last);
    for (i, &b) in bytes.iter().enumerate() {
        if b >= b' ' && b != b':' && b != b'#' && b != 0x7f {
            continue;
        }
        match b {
            b':' => scan.block_indicators |= i > 0 && followed_by_whitespace(i),
            b'#' => scan.block_indicators |= i > 0 && blank(bytes[i - 1]),
            _ => {
                scan.special_characters |= b != b'\n';
                if is_break(b) {
                    scan.line_breaks = true;
                    scan.space_break |= i > 0 && bytes[i - 1] == b' ';
                    scan.break_space |= bytes.get(i + 1) == Some(&b' ');
                }
            }
        }
    }
}

/// The flags `analyze_scalar` gathers, character by character.
#[allow(clippy::struct_excessive_bools, reason = "libyaml's flags, one each")]
#[derive(Default)]
struct Scan {
    block_indicators: bool,
    line_breaks: bool,
    leading_space: bool,
    leading_break: bool,
    trailing_space: bool,
    trailing_break: bool,
    break_space: bool,
    space_break: bool,
    previous_space: bool,
    previous_break: bool,
    preceded_by_whitespace: bool,
    special_characters: bool,
}

/// libyaml's blank or line break (`IS_BLANKZ` short of the end).
fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t' || is_break(c)
}

/// Whether a scalar's first character `c` is an indicator that keeps it from
/// being written plain.
fn starts_block_indicator(c: char, followed_by_whitespace: bool) -> bool {
    match c {
        '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%'
        | '@' | '`' => true,
        '?' | ':' | '-' => followed_by_whitespace,
        _ => false,
    }
}

impl Scan {
    /// The flags before the first character of `s`.
    fn new(s: &str) -> Scan {
        Scan {
            block_indicators: s.starts_with("---") || s.starts_with("..."),
            preceded_by_whitespace: true,
            ..Scan::default()
        }
    }

    /// Takes in `c`, the `i`th character, followed by `next`.
    #[inline]
    fn step(&mut self, c: char, next: Option<char>, i: usize) {
        self.special_characters |= !is_printable(c);
        let followed_by_whitespace = next.is_none_or(is_blank);
        let last = next.is_none();
        if i == 0 {
            self.block_indicators |= starts_block_indicator(c, followed_by_whitespace);
        } else if (c == ':' && followed_by_whitespace) || (c == '#' && self.preceded_by_whitespace)
        {
            self.block_indicators = true;
        }
        if c == ' ' {
            self.leading_space |= i == 0;
            self.trailing_space |= last;
            self.break_space |= self.previous_break;
            self.previous_space = true;
            self.previous_break = false;
        } else if is_break(c) {
            self.line_breaks = true;
            self.leading_break |= i == 0;
            self.trailing_break |= last;
            self.space_break |= self.previous_space;
            self.previous_space = false;
            self.previous_break = true;
        } else {
            self.previous_space = false;
            self.previous_break = false;
        }
        self.preceded_by_whitespace = is_blank(c);
    }

    fn finish(self) -> Analysis {
        let mut a = Analysis {
            multiline: self.line_breaks,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: true,
        };
        if self.leading_space || self.leading_break || self.trailing_space || self.trailing_break {
            a.block_plain_allowed = false;
        }
        if self.trailing_space {
            a.block_allowed = false;
        }
        if self.break_space {
            a.block_plain_allowed = false;
            a.single_quoted_allowed = false;
        }
        if self.space_break || self.special_characters {
            a.block_plain_allowed = false;
            a.single_quoted_allowed = false;
            a.block_allowed = false;
        }
        if self.line_breaks || self.block_indicators {
            a.block_plain_allowed = false;
        }
        a
    }
}

/// Whether `serde_yaml_ng` would read the plain scalar `s` back as something
/// other than a string (null, a bool, an int, a float), in which case it
/// asks libyaml to single-quote it. Mirrors its `visit_untagged_scalar`.
fn resolves_to_non_string(s: &str) -> bool {
    // Every such scalar starts with one of these (a float may also start
    // with `i` or `n`, for `inf` and `nan`, which are not finite).
    if !s.is_empty() && !s.starts_with(|c: char| c.is_ascii_digit() || "+-.~nNtTfFiI".contains(c)) {
        return false;
    }
    if s.is_empty() || matches!(s, "null" | "Null" | "NULL" | "~") {
        return true;
    }
    if matches!(s, "true" | "True" | "TRUE" | "false" | "False" | "FALSE") {
        return true;
    }
    if parses_as_int(s) || digits_but_not_number(s) {
        return true;
    }
    let unpositive = match s.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return false,
        Some(rest) => rest,
        None => s,
    };
    matches!(unpositive, ".inf" | ".Inf" | ".INF")
        || matches!(s, "-.inf" | "-.Inf" | "-.INF" | ".nan" | ".NaN" | ".NAN")
        || unpositive.parse::<f64>().is_ok_and(f64::is_finite)
}

fn digits_but_not_number(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    s.len() > 1 && s.starts_with('0') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

/// `serde_yaml_ng`'s integer forms: decimal, `0x`, `0o`, `0b`, signed.
fn parses_as_int(s: &str) -> bool {
    let radix_ok = |rest: &str, radix: u32, negative: bool| {
        if negative {
            i128::from_str_radix(&format!("-{rest}"), radix).is_ok()
        } else {
            !rest.starts_with(['+', '-']) && u128::from_str_radix(rest, radix).is_ok()
        }
    };
    let unpositive = s.strip_prefix('+').unwrap_or(s);
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = unpositive.strip_prefix(prefix)
            && radix_ok(rest, radix, false)
        {
            return true;
        }
        if let Some(rest) = s.strip_prefix('-').and_then(|r| r.strip_prefix(prefix))
            && radix_ok(rest, radix, true)
        {
            return true;
        }
    }
    if digits_but_not_number(s) {
        return false;
    }
    (!unpositive.starts_with(['+', '-']) && unpositive.parse::<u128>().is_ok())
        || s.parse::<i128>().is_ok()
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;

    #[test]
    fn the_ascii_scan_is_the_character_scan() {
        const BYTES: &[u8] = b" \t\n\r:#-?.'a\x7f";
        let mut strings = vec![Vec::new()];
        for _ in 0..4 {
            let longer: Vec<Vec<u8>> = strings
                .iter()
                .filter(|s| s.len() == strings.last().map_or(0, Vec::len))
                .flat_map(|s| {
                    BYTES.iter().map(move |&b| {
                        let mut t = s.clone();
                        t.push(b);
                        t
                    })
                })
                .collect();
            strings.extend(longer);
        }
        let mut checked = 0;
        for bytes in strings.iter().filter(|s| !s.is_empty()) {
            let text = std::str::from_utf8(bytes).unwrap();
            let (mut by_bytes, mut by_chars) = (Scan::new(text), Scan::new(text));
            scan_ascii(bytes, &mut by_bytes);
            scan_chars(text, &mut by_chars).unwrap();
            assert_eq!(by_bytes.finish(), by_chars.finish(), "{text:?}");
            checked += 1;
        }
        assert_eq!(checked, 12 + 144 + 1728 + 20736);
    }

    /// Both writers agree; whether this one wrote the document itself.
    fn same(value: &Value) -> bool {
        let slow = crate::yaml::to_string(value).unwrap();
        let mut w = Writer::default();
        let direct = w.document(value).is_some();
        if direct {
            assert_eq!(w.out, slow, "for {value}");
        }
        assert_eq!(to_string(value), slow, "for {value}");
        direct
    }

    #[test]
    fn a_crd_like_document_is_written_as_serde_yaml_writes_it() {
        let value = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "apps.example.com", "annotations": {"a/b": "https://x.y/z#1"}},
            "spec": {
                "group": "example.com",
                "names": {"kind": "App", "plural": "apps", "shortNames": ["a", "y"]},
                "scope": "Namespaced",
                "versions": [{
                    "name": "v1",
                    "served": true,
                    "storage": true,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {
                        "description": "An app.\n\nIt runs: things.\n",
                        "properties": {
                            "spec": {
                                "properties": {
                                    "replicas": {"type": "integer", "format": "int32", "minimum": 0, "maximum": -3},
                                    "mode": {"enum": ["Fast", "no", "", "1.5", "0755", "- x", "a: b", "#c"]},
                                    "x": {"default": null, "nullable": true, "items": [[], [1, [2]], {}]},
                                    "doc": {"description": "  leading\nspaces", "title": "Trailing \nspace"},
                                    "block": {"description": "no end break\nsecond"},
                                },
                                "required": ["replicas"],
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": true,
                            }
                        },
                        "type": "object",
                    }},
                }],
            },
        });
        assert!(same(&value));
    }

    #[test]
    fn floats_and_escapes_fall_back_to_the_full_writer() {
        for value in [
            json!({"a": "kept\n\n"}),
            json!({"a": "\n"}),
            json!({"a\nb": 1}),
        ] {
            let mut w = Writer::default();
            assert!(w.document(&value).is_none(), "{value}");
            same(&value);
        }
    }

    #[test]
    fn floats_and_escaped_characters_are_written_as_serde_yaml_writes_them() {
        let value = json!({
            "floats": [1.5, 0.0, 65535.0, -2e30, 1e16, 1.5e-7, 3],
            "tab": "a\tb",
            "control": "\u{0}\u{7}\u{1b}\u{7f}\u{85}\u{9f}\u{feff}\u{fffe}\r",
            "doc": "first\n\n\tindented\nlast",
        });
        assert!(same(&value));
    }

    /// Strings made of the characters libyaml's analysis looks at, in
    /// every position: keys and values, in mappings and sequences, nested.
    #[test]
    fn generated_scalars_are_written_as_serde_yaml_writes_them() {
        const PIECES: &[&str] = &[
            " ", "\n", ":", "#", "-", "?", "'", "\"", ",", "[", "]", "{", "}", "a", "1", ".", "é",
            "|", ">", "!", "&", "*", "%", "@", "`", "~", "\\", "0", "x", "e", "+", "---", "—", "y",
            "true", "null", "\t", "\r", "...", "\u{7f}", "\u{2028}",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed % n as u64).unwrap()
        };
        let mut direct = 0;
        for _ in 0..3000 {
            let mut text = || {
                let len = next(6);
                (0..len)
                    .map(|_| PIECES[next(PIECES.len())])
                    .collect::<String>()
            };
            let mut map = Map::new();
            for _ in 0..3 {
                map.insert(text(), Value::String(text()));
            }
            let list = Value::Array(vec![Value::String(text()), json!({ text(): text() })]);
            map.insert("list".into(), list.clone());
            let value = json!({"outer": Value::Object(map), "seq": [list, [text()]]});
            direct += usize::from(same(&value));
        }
        // Most documents have no tab or U+2028, and are written directly.
        assert!(direct > 500, "only {direct} documents written directly");
    }
}
