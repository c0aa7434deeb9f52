//! The Grafana dashboards of generated projects: every query is `PromQL` a real parser reads, names
//! only families docs/metrics.md lists and rsop-runtime's manager serves, and the custom dashboard
//! follows the user's config, or refuses it where it is wrong.

use std::collections::BTreeSet;
use std::path::Path;

use promql_parser::label::{METRIC_NAME, MatchOp};
use promql_parser::parser::{self, Expr, VectorSelector};

use crate::init::init_demo;
use crate::support::{refusal_problems, rsop, snapshot};

fn selector_names(selector: &VectorSelector, names: &mut BTreeSet<String>) {
    if let Some(name) = &selector.name {
        names.insert(name.clone());
    }
    for matcher in &selector.matchers.matchers {
        if matcher.name == METRIC_NAME && matches!(matcher.op, MatchOp::Equal) {
            names.insert(matcher.value.clone());
        }
    }
}

/// Every metric name `expr` selects, from its syntax tree.
fn metric_names(expr: &Expr, names: &mut BTreeSet<String>) {
    match expr {
        Expr::VectorSelector(selector) => selector_names(selector, names),
        Expr::MatrixSelector(matrix) => selector_names(&matrix.vs, names),
        Expr::Aggregate(aggregate) => {
            metric_names(&aggregate.expr, names);
            if let Some(param) = &aggregate.param {
                metric_names(param, names);
            }
        }
        Expr::Unary(unary) => metric_names(&unary.expr, names),
        Expr::Binary(binary) => {
            metric_names(&binary.lhs, names);
            metric_names(&binary.rhs, names);
        }
        Expr::Paren(paren) => metric_names(&paren.expr, names),
        Expr::Subquery(subquery) => metric_names(&subquery.expr, names),
        Expr::Call(call) => {
            for arg in &call.args.args {
                metric_names(arg, names);
            }
        }
        Expr::Extension(_) | Expr::NumberLiteral(_) | Expr::StringLiteral(_) => {}
    }
}

/// The names the generated projects' test takes from a query: those before a `{`.
fn names_before_braces(query: &str) -> BTreeSet<String> {
    query
        .match_indices('{')
        .map(|(at, _)| {
            let start = query[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(0, |i| i + 1);
            query[start..at].to_owned()
        })
        .collect()
}

/// The metric families docs/metrics.md lists, as the samples they render.
fn documented_samples() -> BTreeSet<String> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/metrics.md"))
            .unwrap();
    let mut samples = BTreeSet::new();
    for line in doc.lines().filter(|l| l.starts_with("| `")) {
        let family = line[3..].split('`').next().unwrap();
        samples.insert(family.to_owned());
        if line.contains("| histogram |") {
            for suffix in ["_bucket", "_sum", "_count"] {
                samples.insert(format!("{family}{suffix}"));
            }
        }
    }
    samples
}

/// Checks the dashboard at `path`: JSON with unique panel ids and a uid Grafana takes, whose
/// queries all parse and name only documented families. Returns the names.
fn check_dashboard(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(&text).unwrap();
    let uid = dashboard["uid"].as_str().unwrap();
    assert!(
        !uid.is_empty() && uid.len() <= 40,
        "{}: uid {uid}",
        path.display()
    );
    let panels = dashboard["panels"].as_array().unwrap();
    let ids: BTreeSet<u64> = panels.iter().map(|p| p["id"].as_u64().unwrap()).collect();
    assert_eq!(
        ids.len(),
        panels.len(),
        "{}: panel ids repeat",
        path.display()
    );
    let mut queries: Vec<String> = panels
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .map(|t| t["expr"].as_str().unwrap().to_owned())
        .collect();
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        // `label_values(<selector>, <label>)` is Grafana's; the selector in it is PromQL.
        let definition = variable["definition"].as_str().unwrap();
        let Some((inner, _)) = definition
            .strip_prefix("label_values(")
            .and_then(|rest| rest.rsplit_once(','))
        else {
            panic!("{}: variable query {definition}", path.display());
        };
        queries.push(inner.to_owned());
    }
    let documented = documented_samples();
    let mut all = BTreeSet::new();
    for query in &queries {
        let expr = parser::parse(query)
            .unwrap_or_else(|e| panic!("{}: `{query}` is not PromQL: {e}", path.display()));
        let mut names = BTreeSet::new();
        metric_names(&expr, &mut names);
        assert_eq!(
            names,
            names_before_braces(query),
            "{}: {query}",
            path.display()
        );
        for name in &names {
            assert!(
                documented.contains(name),
                "{}: `{query}` charts `{name}`, which docs/metrics.md does not list",
                path.display()
            );
        }
        all.extend(names);
    }
    all
}

/// The dashboards of every golden project that has some.
#[test]
fn golden_dashboards_are_promql_of_exported_families() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut checked = 0;
    let mut charted = BTreeSet::new();
    for entry in walkdir::WalkDir::new(&golden) {
        let path = entry.unwrap().into_path();
        if path.extension().is_some_and(|e| e == "json")
            && path.components().any(|c| c.as_os_str() == "grafana")
        {
            charted.extend(check_dashboard(&path));
            checked += 1;
        }
    }
    assert!(checked >= 3, "only {checked} dashboards under tests/golden");
    // The webhooks' dashboard is among them.
    assert!(charted.contains("controller_runtime_webhook_requests_total"));
    // Every series they chart is one the manager serves (rsop-runtime's tests render them all).
    let served: BTreeSet<&str> = rsop_runtime::metrics::SERIES
        .iter()
        .chain(rsop_runtime::metrics::WEBHOOK_SERIES)
        .copied()
        .collect();
    let unserved: Vec<&String> = charted
        .iter()
        .filter(|name| !served.contains(name.as_str()))
        .collect();
    assert!(unserved.is_empty(), "charted, not served: {unserved:?}");
}

#[test]
fn custom_dashboards_follow_the_config_and_bad_configs_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = init_demo(tmp.path());
    let config = dir.join("grafana/custom-metrics/config.yaml");
    let dashboard = dir.join("grafana/custom-metrics/custom-metrics-dashboard.json");
    assert!(config.is_file());
    assert!(
        !dashboard.exists(),
        "a config with no metric makes no dashboard"
    );

    std::fs::write(
        &config,
        "customMetrics:\n\
         \x20 - metric: demo_backups_total\n\
         \x20   type: counter\n\
         \x20 - metric: demo_backup_duration_seconds\n\
         \x20   type: histogram\n\
         \x20 - metric: demo_queue_length\n\
         \x20   type: gauge\n\
         \x20   unit: short\n",
    )
    .unwrap();
    rsop(&dir, &["edit", "--grafana"]).success();
    let names = check_dashboard_names(&dashboard);
    assert_eq!(
        names,
        [
            "demo_backup_duration_seconds_bucket",
            "demo_backups_total",
            "demo_queue_length"
        ]
    );
    let text = std::fs::read_to_string(&dashboard).unwrap();
    assert!(text.contains("\"unit\": \"s\""), "{text}");
    assert!(text.contains("\"unit\": \"short\""), "{text}");

    // A config that does not read is refused where it is wrong, and nothing changes.
    let mut problems = Vec::new();
    for (bad, needles) in [
        (
            "customMetrics:\n  - metric: demo_backups_total\n    type: summary\n",
            &[
                "grafana/custom-metrics/config.yaml:3:11",
                "unknown variant `summary`",
            ][..],
        ),
        (
            "customMetrics:\n  - metric: demo_backups_total\n    kind: counter\n",
            &[
                "grafana/custom-metrics/config.yaml:3:5",
                "unknown field `kind`",
            ][..],
        ),
    ] {
        std::fs::write(&config, bad).unwrap();
        problems.extend(refusal_problems(&dir, &["edit", "--grafana"], 1, needles));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));

    // `--grafana=false` takes the dashboards away and leaves the user's config.
    let before = snapshot(&dir.join("grafana/custom-metrics"));
    rsop(&dir, &["edit", "--grafana=false"]).success();
    assert!(!dir.join("grafana/controller-runtime-metrics.json").exists());
    assert!(!dashboard.exists());
    assert!(config.is_file());
    assert_ne!(before, snapshot(&dir.join("grafana/custom-metrics")));
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(project.contains("grafana: false"), "{project}");
}

/// The metric names of a dashboard's queries, sorted.
fn check_dashboard_names(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut names = BTreeSet::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let query = target["expr"].as_str().unwrap();
            let expr = parser::parse(query).unwrap_or_else(|e| panic!("`{query}`: {e}"));
            metric_names(&expr, &mut names);
        }
    }
    names.into_iter().collect()
}

#[test]
fn init_without_grafana_writes_no_dashboard() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("plain-operator");
    std::fs::create_dir(&dir).unwrap();
    rsop(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--grafana=false",
            "--vcs",
            "none",
        ],
    )
    .success();
    assert!(!dir.join("grafana").exists());
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(project.contains("grafana: false"), "{project}");
}
