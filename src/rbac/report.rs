//! How `rsop rbac` shows what it found: text for people, workflow commands
//! for GitHub Actions (annotations on the pull request), and SARIF 2.1.0
//! for code scanning.

use std::io::Write;

use serde_json::json;

use super::{Finding, Report, Severity};

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Github,
    Sarif,
}

/// What each kind of finding means, for SARIF's rule list.
const RULES: &[(&str, &str)] = &[
    (
        "ungranted-request",
        "The code sends a request that no role bound to its service account grants",
    ),
    (
        "unused-rule",
        "A role grants a request that no program bound to it sends",
    ),
    (
        "unchecked-call",
        "A call whose kind the code does not show, not checked against the roles",
    ),
    (
        "remote-request",
        "A request sent with a client of another cluster, which the workload's roles do not govern",
    ),
    (
        "gated-request",
        "A request made only in a build with a feature or `cfg` a normal build leaves out: not checked",
    ),
    (
        "untied-workload",
        "A workload given roles that runs none of the crate's binaries",
    ),
];

fn word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// Writes `report` in `format`.
pub fn write(report: &Report, format: Format, out: &mut dyn Write) -> std::io::Result<()> {
    let notes = &report.notes;
    match format {
        Format::Text => text(report, notes, out),
        Format::Github => github(report, notes, out),
        Format::Sarif => sarif(report, out),
    }
}

fn text(report: &Report, notes: &[String], out: &mut dyn Write) -> std::io::Result<()> {
    for note in notes {
        writeln!(out, "note: {note}")?;
    }
    for finding in &report.findings {
        writeln!(out, "{}: {}", word(finding.severity), finding.message)?;
        if let Some(location) = &finding.location {
            writeln!(out, "  --> {location}")?;
        }
        if let Some(help) = &finding.help {
            writeln!(out, "  help: {help}")?;
        }
        writeln!(out)?;
    }
    let count = |severity| {
        report
            .findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    };
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    if report.checked.is_empty() {
        let why = if report.findings.iter().any(|f| f.rule == "untied-workload") {
            "no workload could be checked (the notes above say why)"
        } else {
            "no workload the project ships runs one of its binaries"
        };
        writeln!(out, "rbac: {why}: nothing was checked")?;
        return Ok(());
    }
    let programs: Vec<String> = report
        .checked
        .iter()
        .map(|c| {
            format!(
                "{} as {} ({} checked, {} not checked{})",
                c.program,
                c.workload,
                plural(c.calls, "request"),
                c.unchecked,
                if c.gated > 0 {
                    format!(", {} only in builds with a `cfg` off by default", c.gated)
                } else {
                    String::new()
                }
            )
        })
        .collect();
    writeln!(
        out,
        "rbac: {}; {}, {}",
        programs.join("; "),
        plural(count(Severity::Error), "error"),
        plural(count(Severity::Warning), "warning"),
    )
}

/// A workflow command's message, escaped as the runner reads it.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn github(report: &Report, notes: &[String], out: &mut dyn Write) -> std::io::Result<()> {
    for note in notes {
        writeln!(out, "::notice title=rsop rbac::{}", escape_data(note))?;
    }
    for finding in &report.findings {
        let command = match finding.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "notice",
        };
        let mut properties = Vec::new();
        if let Some(location) = &finding.location {
            properties.push(format!(
                "file={}",
                escape_property(&location.file.to_string_lossy())
            ));
            properties.push(format!("line={}", location.line));
            properties.push(format!("col={}", location.column));
        }
        properties.push(format!("title={}", escape_property("rsop rbac")));
        let mut message = finding.message.clone();
        if let Some(help) = &finding.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        writeln!(
            out,
            "::{command} {}::{}",
            properties.join(","),
            escape_data(&message)
        )?;
    }
    Ok(())
}

fn sarif_result(finding: &Finding) -> serde_json::Value {
    let mut message = finding.message.clone();
    if let Some(help) = &finding.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let mut result = json!({
        "ruleId": finding.rule,
        "level": word(finding.severity),
        "message": { "text": message },
    });
    if let Some(location) = &finding.location {
        result["locations"] = json!([{
            "physicalLocation": {
                "artifactLocation": {
                    "uri": location.file.to_string_lossy().replace('\\', "/"),
                    "uriBaseId": "%SRCROOT%",
                },
                "region": {
                    "startLine": location.line,
                    "startColumn": location.column,
                },
            }
        }]);
    }
    result
}

fn sarif(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let rules: Vec<serde_json::Value> = RULES
        .iter()
        .map(|(id, text)| json!({ "id": id, "shortDescription": { "text": text } }))
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "rsop",
                    "version": crate::project::CLI_VERSION,
                    "informationUri": "https://github.com/rsop-dev/rsop",
                    "rules": rules,
                }
            },
            "results": report.findings.iter().map(sarif_result).collect::<Vec<_>>(),
        }]
    });
    let text = serde_json::to_string_pretty(&log).map_err(std::io::Error::other)?;
    writeln!(out, "{text}")
}
