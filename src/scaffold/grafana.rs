//! The Grafana dashboards of a generated project, under `grafana/` as kubebuilder's Grafana
//! plugin lays them out: the controllers' work and requests, the process, the webhooks once the
//! project serves some, and the user's own metrics from `grafana/custom-metrics/config.yaml`.
//!
//! Every panel charts a family the generated manager exports (docs/metrics.md): a panel of a series
//! nobody sends would only ever say "No data". The dashboards are JSON made here, with panel ids and
//! a dashboard uid that stay the same from one run to the next, so that re-importing one updates it.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::{Error, Result};

pub const RUNTIME: &str = "grafana/controller-runtime-metrics.json";
pub const RESOURCES: &str = "grafana/controller-resources-metrics.json";
pub const WEBHOOKS: &str = "grafana/controller-webhook-metrics.json";
pub const CUSTOM_CONFIG: &str = "grafana/custom-metrics/config.yaml";
pub const CUSTOM: &str = "grafana/custom-metrics/custom-metrics-dashboard.json";

/// The label matchers of every expression: the variables of the dashboard.
const SELECTOR: &str = r#"job="$job", namespace="$namespace", pod=~"$pod""#;

/// A row of the dashboard, or one of its panels.
enum Item {
    Row(&'static str),
    Panel(Panel),
}

/// A time series panel.
struct Panel {
    title: String,
    description: String,
    unit: String,
    /// Each query and its legend.
    targets: Vec<(String, String)>,
}

fn panel(title: &str, description: &str, unit: &str, targets: &[(&str, &str)]) -> Item {
    Item::Panel(Panel {
        title: title.to_owned(),
        description: description.to_owned(),
        unit: unit.to_owned(),
        targets: targets
            .iter()
            .map(|(expr, legend)| (expr.replace("SEL", SELECTOR), (*legend).to_owned()))
            .collect(),
    })
}

/// P50, P90 and P99 of the histogram `family`, by `by`.
fn quantiles(family: &str, by: &str) -> Vec<(String, String)> {
    [("0.5", "P50"), ("0.9", "P90"), ("0.99", "P99")]
        .iter()
        .map(|(q, name)| {
            (
                format!(
                    "histogram_quantile({q}, sum(rate({family}_bucket{{{SELECTOR}}}[5m])) by ({by}, le))"
                ),
                format!("{name} {{{{{by}}}}}"),
            )
        })
        .collect()
}

fn quantile_panel(title: &str, description: &str, family: &str, by: &str) -> Item {
    Item::Panel(Panel {
        title: title.to_owned(),
        description: description.to_owned(),
        unit: "s".to_owned(),
        targets: quantiles(family, by),
    })
}

/// The dashboard of the controllers, their work and the client's requests.
pub fn runtime(project_name: &str) -> String {
    let items = vec![
        Item::Row("Reconciliations"),
        panel(
            "Reconciliations per second",
            "Reconciliations per controller, by result.",
            "ops",
            &[(
                "sum(rate(controller_runtime_reconcile_total{SEL}[5m])) by (controller, result)",
                "{{controller}} {{result}}",
            )],
        ),
        panel(
            "Reconciliation errors per second",
            "Reconciliations that failed, and those `--reconcile-timeout` cancelled.",
            "ops",
            &[
                (
                    "sum(rate(controller_runtime_reconcile_errors_total{SEL}[5m])) by (controller)",
                    "{{controller}} errors",
                ),
                (
                    "sum(rate(controller_runtime_reconcile_timeouts_total{SEL}[5m])) by (controller)",
                    "{{controller}} timeouts",
                ),
            ],
        ),
        quantile_panel(
            "Reconciliation time",
            "How long a reconciliation takes.",
            "controller_runtime_reconcile_time_seconds",
            "controller",
        ),
        panel(
            "Workers in use",
            "Reconciliations running, against `--max-concurrent-reconciles`.",
            "none",
            &[
                (
                    "sum(controller_runtime_active_workers{SEL}) by (controller)",
                    "{{controller}} in use",
                ),
                (
                    "max(controller_runtime_max_concurrent_reconciles{SEL}) by (controller)",
                    "{{controller}} limit",
                ),
            ],
        ),
        Item::Row("Work"),
        quantile_panel(
            "Work duration",
            "How long processing an item takes, cancelled reconciliations included.",
            "workqueue_work_duration_seconds",
            "name",
        ),
        panel(
            "Unfinished work",
            "Seconds the running reconciliations have run, summed, and the longest of them. A value \
             that keeps growing is a stuck reconciliation.",
            "s",
            &[
                (
                    "sum(workqueue_unfinished_work_seconds{SEL}) by (name)",
                    "{{name}} unfinished",
                ),
                (
                    "max(workqueue_longest_running_processor_seconds{SEL}) by (name)",
                    "{{name}} longest",
                ),
            ],
        ),
        panel(
            "Retries per second",
            "Failed reconciliations, which the error policy requeues with backoff.",
            "ops",
            &[(
                "sum(rate(workqueue_retries_total{SEL}[5m])) by (name)",
                "{{name}}",
            )],
        ),
        Item::Row("API server"),
        panel(
            "Requests per second",
            "Requests of the manager's Kubernetes client, by method and status code.",
            "reqps",
            &[(
                "sum(rate(rest_client_requests_total{SEL}[5m])) by (method, code)",
                "{{method}} {{code}}",
            )],
        ),
        panel(
            "Leader",
            "1 for the replica that holds the leader election Lease.",
            "none",
            &[(
                "max(leader_election_master_status{SEL}) by (pod, name)",
                "{{pod}}",
            )],
        ),
    ];
    dashboard(
        project_name,
        "Controller-Runtime-Metrics",
        "runtime",
        &items,
    )
}

/// The dashboard of the manager's process.
pub fn resources(project_name: &str) -> String {
    let items = vec![
        panel(
            "CPU",
            "CPU time used, in percent of one core.",
            "percent",
            &[("rate(process_cpu_seconds_total{SEL}[5m]) * 100", "{{pod}}")],
        ),
        panel(
            "Memory",
            "Resident memory.",
            "bytes",
            &[("process_resident_memory_bytes{SEL}", "{{pod}}")],
        ),
        panel(
            "Open file descriptors",
            "Open file descriptors, against their limit.",
            "none",
            &[
                ("process_open_fds{SEL}", "{{pod}} open"),
                ("process_max_fds{SEL}", "{{pod}} limit"),
            ],
        ),
        panel(
            "Uptime",
            "Time since the process started.",
            "s",
            &[("time() - process_start_time_seconds{SEL}", "{{pod}}")],
        ),
    ];
    dashboard(
        project_name,
        "Controller-Resources-Metrics",
        "resources",
        &items,
    )
}

/// The dashboard of the webhook server.
pub fn webhooks(project_name: &str) -> String {
    let items = vec![
        panel(
            "Requests per second",
            "Admission and conversion requests served, by webhook and status code.",
            "reqps",
            &[(
                "sum(rate(controller_runtime_webhook_requests_total{SEL}[5m])) by (webhook, code)",
                "{{webhook}} {{code}}",
            )],
        ),
        quantile_panel(
            "Latency",
            "How long answering a request takes.",
            "controller_runtime_webhook_latency_seconds",
            "webhook",
        ),
        panel(
            "Requests in flight",
            "Requests being served.",
            "none",
            &[(
                "sum(controller_runtime_webhook_requests_in_flight{SEL}) by (webhook)",
                "{{webhook}}",
            )],
        ),
    ];
    dashboard(
        project_name,
        "Controller-Webhook-Metrics",
        "webhooks",
        &items,
    )
}

/// What `grafana/custom-metrics/config.yaml` holds: the user's metrics, one panel each.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CustomMetrics {
    #[serde(default)]
    custom_metrics: Option<Vec<CustomMetric>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CustomMetric {
    metric: String,
    #[serde(rename = "type")]
    kind: MetricKind,
    expr: Option<String>,
    unit: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum MetricKind {
    Counter,
    Gauge,
    Histogram,
}

/// The file `config.yaml` starts as: no metric, and how to add one.
pub const CUSTOM_CONFIG_TEXT: &str = "\
# Your own metrics, one panel each in custom-metrics-dashboard.json, which
# `rsop edit --grafana` writes from this file. For each metric:
#   metric: its name, as /metrics serves it (required)
#   type: counter, gauge or histogram (required)
#   expr: the panel's PromQL (optional; by default the rate of a counter,
#         the value of a gauge, the P90 of a histogram)
#   unit: a Grafana unit such as s, bytes, percent or none (optional)
# For example:
# customMetrics:
#   - metric: memcached_backups_total
#     type: counter
#   - metric: memcached_backup_duration_seconds
#     type: histogram
customMetrics: []
";

/// The dashboard of the metrics `config` (the text of [`CUSTOM_CONFIG`]) lists, `None` when it
/// lists none. A config that does not read is an error at its line and column.
pub fn custom(project_name: &str, config: &str) -> Result<Option<String>> {
    let parsed: CustomMetrics = serde_yaml_ng::from_str(config).map_err(|e| {
        let place = e.location().map_or_else(
            || CUSTOM_CONFIG.to_owned(),
            |l| format!("{CUSTOM_CONFIG}:{}:{}", l.line(), l.column()),
        );
        Error::user_with_help(
            format!("{place}: {e}"),
            "give each entry of `customMetrics` a `metric` and a `type` (counter, gauge or \
             histogram), and optionally an `expr` and a `unit`",
        )
    })?;
    let metrics = parsed.custom_metrics.unwrap_or_default();
    if metrics.is_empty() {
        return Ok(None);
    }
    let items: Vec<Item> = metrics
        .into_iter()
        .map(|m| {
            let name = m.metric;
            let expr = m.expr.unwrap_or_else(|| match m.kind {
                MetricKind::Counter => format!("sum(rate({name}{{{SELECTOR}}}[5m])) by (pod)"),
                MetricKind::Gauge => format!("sum({name}{{{SELECTOR}}}) by (pod)"),
                MetricKind::Histogram => {
                    let family = name.strip_suffix("_bucket").unwrap_or(&name);
                    format!(
                        "histogram_quantile(0.9, sum(rate({family}_bucket{{{SELECTOR}}}[5m])) by (pod, le))"
                    )
                }
            });
            let unit = m.unit.unwrap_or_else(|| default_unit(&name).to_owned());
            let kind = match m.kind {
                MetricKind::Counter => "counter",
                MetricKind::Gauge => "gauge",
                MetricKind::Histogram => "histogram",
            };
            Item::Panel(Panel {
                title: format!("{name} ({kind})"),
                description: String::new(),
                        unit,
                targets: vec![(expr, "{{pod}}".to_owned())],
            })
        })
        .collect();
    Ok(Some(dashboard(
        project_name,
        "Custom-Metrics",
        "custom",
        &items,
    )))
}

/// The unit a metric's name suggests, by Prometheus's naming conventions.
fn default_unit(name: &str) -> &'static str {
    if name.contains("seconds") {
        "s"
    } else if name.contains("bytes") {
        "bytes"
    } else if name.contains("ratio") {
        "percentunit"
    } else {
        "none"
    }
}

/// A dashboard uid: unique to the project and the dashboard, at most the 40 characters Grafana
/// allows.
fn uid(project_name: &str, which: &str) -> String {
    let room = 40 - which.len() - 1;
    let project: String = project_name.chars().take(room).collect();
    format!("{project}-{which}")
}

fn dashboard(project_name: &str, title: &str, which: &str, items: &[Item]) -> String {
    let datasource = json!({"type": "prometheus", "uid": "${DS_PROMETHEUS}"});
    let mut panels = Vec::new();
    let (mut x, mut y) = (0, 0);
    for (id, item) in (1..).zip(items) {
        match item {
            Item::Row(title) => {
                if x > 0 {
                    y += 8;
                    x = 0;
                }
                panels.push(json!({
                    "id": id,
                    "type": "row",
                    "title": title,
                    "collapsed": false,
                    "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
                    "panels": [],
                }));
                y += 1;
            }
            Item::Panel(panel) => {
                let targets: Vec<Value> = panel
                    .targets
                    .iter()
                    .zip('A'..)
                    .map(|((expr, legend), ref_id)| {
                        json!({
                            "refId": ref_id.to_string(),
                            "datasource": datasource,
                            "expr": expr,
                            "legendFormat": legend,
                        })
                    })
                    .collect();
                panels.push(json!({
                    "id": id,
                    "type": "timeseries",
                    "title": panel.title,
                    "description": panel.description,
                    "datasource": datasource,
                    "gridPos": {"h": 8, "w": 12, "x": x, "y": y},
                    "fieldConfig": {"defaults": {"unit": panel.unit}, "overrides": []},
                    "options": {
                        "legend": {"displayMode": "table", "placement": "bottom", "calcs": ["mean", "max"]},
                        "tooltip": {"mode": "multi", "sort": "desc"},
                    },
                    "targets": targets,
                }));
                if x == 0 {
                    x = 12;
                } else {
                    x = 0;
                    y += 8;
                }
            }
        }
    }
    let variable = |name: &str, query: &str, multi: bool| {
        json!({
            "name": name,
            "label": name,
            "type": "query",
            "datasource": datasource,
            "definition": query,
            "query": {"query": query, "refId": "StandardVariableQuery"},
            "refresh": 2,
            "hide": 0,
            "multi": multi,
            "includeAll": multi,
            "sort": 1,
        })
    };
    let dashboard = json!({
        "__inputs": [{
            "name": "DS_PROMETHEUS",
            "label": "Prometheus",
            "description": "",
            "type": "datasource",
            "pluginId": "prometheus",
            "pluginName": "Prometheus",
        }],
        "__requires": [{"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"}],
        "annotations": {"list": []},
        "editable": true,
        "graphTooltip": 1,
        "panels": panels,
        "refresh": "30s",
        "schemaVersion": 39,
        "tags": [project_name, "rsop"],
        "templating": {"list": [
            variable(
                "job",
                r#"label_values(process_start_time_seconds{job!=""}, job)"#,
                false,
            ),
            variable(
                "namespace",
                r#"label_values(process_start_time_seconds{job="$job"}, namespace)"#,
                false,
            ),
            variable(
                "pod",
                r#"label_values(process_start_time_seconds{job="$job", namespace="$namespace"}, pod)"#,
                true,
            ),
        ]},
        "time": {"from": "now-1h", "to": "now"},
        "timezone": "",
        "title": title,
        "uid": uid(project_name, which),
        "version": 1,
    });
    let mut text = serde_json::to_string_pretty(&dashboard).expect("a dashboard is JSON");
    text.push('\n');
    text
}
