//! The comment markers `rsop manifests` reads, controller-gen style:
//!
//! ```text
//! // +rsop:rbac:groups=apps,resources=deployments,verbs=get;list;watch
//! // +kubebuilder:webhook:path=/mutate-...,mutating=true,...
//! ```
//!
//! A marker is a line whose first non-blank characters are `//` (not `///` or
//! `//!`: doc comments are documentation), then optional blanks and one of
//! the spellings of a [`Grammar`], then `:` and `key=value` arguments
//! separated by `,`. A value is a `;` list of items, each bare or entirely in
//! double quotes. Working on lines keeps markers in string literals out
//! unless such a line starts with `//`, which is good enough.
//!
//! This module finds the markers and checks that syntax, the keys included
//! ("did you mean"); what the values mean is the business of each grammar's
//! module ([`crate::manifests::emit::rbac`], [`crate::manifests::emit::webhook`]). Every problem becomes one
//! [`Diagnostic`] located at the marker's `+`, and a marker with a problem
//! yields nothing.

use std::path::Path;

use crate::manifests::diagnostics::{Diagnostic, Location, did_you_mean};
use crate::project::names;

/// One kind of marker.
#[derive(Debug)]
pub struct Grammar {
    /// The accepted spellings, without the `:` that follows: rsop's own,
    /// then kubebuilder's.
    pub spellings: [&'static str; 2],
    /// What the marker is called in messages, such as `RBAC marker`.
    pub noun: &'static str,
    /// The keys, as controller-gen spells them.
    pub keys: &'static [&'static str],
    /// A complete argument list, shown when a marker has none.
    pub example: &'static str,
    /// The argument list in short (`groups=...,resources=...`), shown when
    /// the `:` is missing.
    pub outline: &'static str,
    /// The help for `key=` without a value, for each key.
    pub empty_help: fn(&str) -> String,
    /// The problem for a key controller-gen has and rsop does not support,
    /// if `key` is one.
    pub unsupported: fn(&str) -> Option<Problem>,
}

/// What is wrong with a marker, before it gets its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub message: String,
    pub help: String,
}

impl Problem {
    pub fn new(message: impl Into<String>, help: impl Into<String>) -> Self {
        Problem {
            message: message.into(),
            help: help.into(),
        }
    }
}

/// The arguments of one marker, each key at most once, in source order.
///
/// Each value is its list of items, unquoted. The API group of `groups`
/// written `""` or `core` is the empty string.
#[derive(Debug, Default)]
pub struct Args {
    values: Vec<(&'static str, Vec<String>)>,
}

impl Args {
    /// The keys and their values, in the order written.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &[String])> {
        self.values
            .iter()
            .map(|(key, values)| (*key, values.as_slice()))
    }

    pub fn get(&self, key: &str) -> Option<&[String]> {
        self.values
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, values)| values.as_slice())
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

/// The markers of `grammar` in one file (`file` is the path shown in
/// diagnostics, relative to the project root), each made into a `T` by
/// `build` from its arguments, with its location. Problems, of syntax or
/// from `build`, go to `diagnostics`, one per problem.
pub fn parse<T>(
    grammar: &Grammar,
    file: &Path,
    text: &str,
    diagnostics: &mut Vec<Diagnostic>,
    mut build: impl FnMut(&Args) -> Result<T, Vec<Problem>>,
) -> Vec<(Location, T)> {
    let mut found = Vec::new();
    for (number, line) in lines_with_plus(text) {
        let Some(marker) = marker_line(grammar, line) else {
            continue;
        };
        let location = Location::new(file, number, marker.column);
        match arguments(grammar, &marker).and_then(|args| build(&args)) {
            Ok(value) => found.push((location, value)),
            Err(problems) => {
                diagnostics.extend(problems.into_iter().map(|problem| {
                    Diagnostic::new(location.clone(), problem.message).with_help(problem.help)
                }));
            }
        }
    }
    found
}

/// The lines of `text` (as `str::lines` cuts them) that hold a `+`, with
/// their 1-based numbers: every marker starts with one. Found from the `+`s
/// rather than line by line, since most files have none and some crates run
/// to 100 MB of generated sources.
fn lines_with_plus(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut number = 1;
    let mut counted_to = 0;
    text.match_indices('+').filter_map(move |(plus, _)| {
        if plus < counted_to {
            // Another `+` of the line just returned.
            return None;
        }
        let start = text[..plus].rfind('\n').map_or(0, |i| i + 1);
        let end = text[plus..].find('\n').map_or(text.len(), |i| plus + i);
        number += memchr::memchr_iter(b'\n', &text.as_bytes()[counted_to..start]).count();
        // Up to this line's break, which the next count must include.
        counted_to = end;
        let line = &text[start..end];
        // `str::lines` drops a `\r` only before a `\n`.
        let line = if end < text.len() {
            line.strip_suffix('\r').unwrap_or(line)
        } else {
            line
        };
        Some((number, line))
    })
}

/// A marker line: the 1-based column of its `+`, the spelling used and the
/// text after that spelling.
#[derive(Debug)]
struct MarkerLine<'a> {
    column: usize,
    spelling: &'static str,
    rest: &'a str,
}

/// The marker of `grammar` on this line, if it is one.
fn marker_line<'a>(grammar: &Grammar, line: &'a str) -> Option<MarkerLine<'a>> {
    let comment = line.trim_start().strip_prefix("//")?;
    if comment.starts_with('/') || comment.starts_with('!') {
        return None;
    }
    let body = comment.trim_start_matches([' ', '\t']);
    let spelling = grammar
        .spellings
        .iter()
        .copied()
        .find(|spelling| body.starts_with(spelling))?;
    let rest = &body[spelling.len()..];
    // `+rsop:rbacs` or `+kubebuilder:webhookconfiguration` is some other marker.
    if !(rest.is_empty() || rest.starts_with(':') || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    // `body` is a suffix of `line`.
    let offset = line.len() - body.len();
    Some(MarkerLine {
        column: line[..offset].chars().count() + 1,
        spelling,
        rest,
    })
}

fn arguments(grammar: &Grammar, marker: &MarkerLine<'_>) -> Result<Args, Vec<Problem>> {
    let spelling = marker.spelling;
    let args = if let Some(args) = marker.rest.strip_prefix(':') {
        args.trim()
    } else if marker.rest.trim().is_empty() {
        ""
    } else {
        return Err(vec![Problem::new(
            format!("expected `:` after `{spelling}`"),
            format!("write `{spelling}:{}`", grammar.outline),
        )]);
    };
    if args.is_empty() {
        return Err(vec![Problem::new(
            format!("`{spelling}` marker without arguments"),
            format!("write e.g. `// {spelling}:{}`", grammar.example),
        )]);
    }
    parse_args(grammar, args)
}

/// Splits the `key=value,...` list and each value's `;` list. Reports every
/// syntax problem of the marker.
fn parse_args(grammar: &Grammar, text: &str) -> Result<Args, Vec<Problem>> {
    let noun = grammar.noun;
    let items = split_unquoted(noun, text, ',').map_err(|problem| vec![problem])?;
    let mut args = Args::default();
    let mut problems = Vec::new();
    for item in items {
        let item = item.trim();
        if item.is_empty() {
            problems.push(Problem::new(
                format!("empty argument in {noun}"),
                "remove the extra `,`: arguments are separated by a single `,`",
            ));
            continue;
        }
        let Some((key, value)) = item.split_once('=').map(|(k, v)| (k.trim(), v)) else {
            problems.push(expected_key_value(grammar, item));
            continue;
        };
        if key.is_empty() {
            problems.push(expected_key_value(grammar, item));
            continue;
        }
        let Some(key) = grammar.keys.iter().copied().find(|k| *k == key) else {
            problems.push(unknown_key(grammar, key));
            continue;
        };
        if args.has(key) {
            problems.push(Problem::new(
                format!("duplicate key `{key}` in {noun}"),
                format!("give all the values in one `{key}=`, separated by `;`"),
            ));
            continue;
        }
        match parse_values(grammar, key, value) {
            Ok(values) => args.values.push((key, values)),
            Err(problem) => problems.push(problem),
        }
    }
    if problems.is_empty() {
        Ok(args)
    } else {
        Err(problems)
    }
}

fn expected_key_value(grammar: &Grammar, item: &str) -> Problem {
    Problem::new(
        format!("expected `key=value` in {}, found `{item}`", grammar.noun),
        format!(
            "separate arguments with `,` and the values of one key with `;`, e.g. `{}`",
            grammar.example
        ),
    )
}

fn unknown_key(grammar: &Grammar, key: &str) -> Problem {
    if let Some(problem) = (grammar.unsupported)(key) {
        return problem;
    }
    let help = match did_you_mean(key, grammar.keys) {
        Some(known) => format!("did you mean `{known}`?"),
        None => format!("the keys are {}", backtick_list(grammar.keys)),
    };
    Problem::new(format!("unknown key `{key}` in {}", grammar.noun), help)
}

/// The values of `key=raw`: `;`-separated, each bare or in double quotes.
/// Only `groups` may have an empty value, written `""`: the core API group,
/// also written `core`.
fn parse_values(grammar: &Grammar, key: &str, raw: &str) -> Result<Vec<String>, Problem> {
    let noun = grammar.noun;
    let elements = split_unquoted(noun, raw.trim(), ';')?;
    let single = elements.len() == 1;
    let mut values = Vec::with_capacity(elements.len());
    for element in elements {
        let element = element.trim();
        let (value, quoted) = if let Some(inner) = element.strip_prefix('"') {
            match inner.strip_suffix('"') {
                Some(inner) if !inner.contains('"') => (inner, true),
                _ => return Err(malformed_value(noun, key, element)),
            }
        } else if element.contains('"') {
            return Err(malformed_value(noun, key, element));
        } else {
            (element, false)
        };
        if value.is_empty() {
            if key == "groups" && quoted {
                values.push(String::new());
                continue;
            }
            return Err(empty_value(grammar, key, single));
        }
        if value.contains(char::is_whitespace) {
            return Err(Problem::new(
                format!("value `{value}` of `{key}` in {noun} contains whitespace"),
                format!("separate the values of `{key}` with `;`, without spaces"),
            ));
        }
        values.push(if key == "groups" {
            names::api_group(value).to_owned()
        } else {
            value.to_owned()
        });
    }
    Ok(values)
}

fn malformed_value(noun: &str, key: &str, element: &str) -> Problem {
    Problem::new(
        format!("malformed value `{element}` for `{key}` in {noun}"),
        "a value is either bare or entirely in double quotes, like `\"\"`",
    )
}

/// How to name the core API group, in helps.
pub const CORE_GROUP_HELP: &str = "write `groups=\"\"` (or `groups=core`) for the core API group";

fn empty_value(grammar: &Grammar, key: &str, single: bool) -> Problem {
    let noun = grammar.noun;
    if single {
        let help = if key == "groups" {
            CORE_GROUP_HELP.to_string()
        } else {
            (grammar.empty_help)(key)
        };
        Problem::new(format!("empty value for `{key}` in {noun}"), help)
    } else {
        let help = if key == "groups" {
            format!("remove the extra `;`, or {CORE_GROUP_HELP}")
        } else {
            "remove the extra `;`".to_string()
        };
        Problem::new(format!("empty item in the `{key}` list of {noun}"), help)
    }
}

/// Splits on `separator` outside double quotes.
fn split_unquoted<'a>(noun: &str, text: &'a str, separator: char) -> Result<Vec<&'a str>, Problem> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (index, c) in text.char_indices() {
        if c == '"' {
            quoted = !quoted;
        } else if c == separator && !quoted {
            parts.push(&text[start..index]);
            start = index + c.len_utf8();
        }
    }
    if quoted {
        return Err(Problem::new(
            format!("unterminated `\"` in {noun}"),
            "close the quoted value, e.g. `groups=\"\"` for the core API group",
        ));
    }
    parts.push(&text[start..]);
    Ok(parts)
}

/// `a`, `a` and `b`, `a`, `b` and `c`, in backticks.
pub fn backtick_list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_with_plus_are_the_lines_that_hold_one() {
        let text = "+a\n\nb+c+d\r\nnone\n\n// +x:y\r\n+\nlast+\r";
        let expected: Vec<(usize, &str)> = text
            .lines()
            .enumerate()
            .filter(|(_, line)| line.contains('+'))
            .map(|(i, line)| (i + 1, line))
            .collect();
        assert_eq!(super::lines_with_plus(text).collect::<Vec<_>>(), expected);
        assert_eq!(super::lines_with_plus("no marker\n").count(), 0);
    }
}
