//! `#[kube(...)]` on a `#[derive(CustomResource)]` item, with kube-derive
//! 5's grammar: the same keys, the same value forms, the same rules for
//! required, repeated and unknown keys.

use proc_macro2::Span;
use syn::Expr;

use super::{AttrItem, AttrValue, expr_str, items_of, parse_items, unknown_key};
use crate::manifests::derive::schema::KubeDerive;
use crate::manifests::diagnostics::did_you_mean;

/// A printer column (JSON string or list form).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrintColumn {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: String,
    pub json_path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
}

/// The scale subresource.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scale {
    pub spec_replicas_path: String,
    pub status_replicas_path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector_path: Option<String>,
}

/// `deprecated` or `deprecated = "warning"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deprecated {
    Yes,
    WithWarning(String),
}

/// Schema mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaMode {
    Derived,
    Manual,
    Disabled,
}

/// Every `#[kube(...)]` key of kube-derive 5.
#[derive(Debug, Clone)]
pub struct KubeAttrs {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub doc: Option<String>,
    pub root: Option<String>,
    pub plural: Option<String>,
    pub singular: Option<String>,
    pub namespaced: bool,
    pub no_spec: bool,
    pub schema: SchemaMode,
    pub categories: Vec<String>,
    pub shortnames: Vec<String>,
    pub printcolumns: Vec<PrintColumn>,
    pub selectable: Vec<String>,
    pub scale: Option<Scale>,
    pub annotations: Vec<(String, String)>,
    pub labels: Vec<(String, String)>,
    pub storage: bool,
    pub served: bool,
    pub deprecated: Option<Deprecated>,
    /// `crates(kube_core = "...", k8s_openapi = "...", ...)`: the paths the
    /// generated code uses, which a crdgen build must use too.
    pub crates: Vec<(String, String)>,
}

/// The parts of `#[kube(...)]` that are code, read while the kind's schema is
/// built: syntax trees stay on the thread that parsed them, and
/// [`KubeAttrs`] travels with the kind's version.
#[derive(Debug, Clone, Default)]
pub struct KubeCode {
    /// `status = "..."`: the status type.
    pub status: Option<syn::Path>,
    /// `validation = ...`: CEL rules of the root.
    pub validations: Vec<Expr>,
}

impl KubeAttrs {
    /// The path of a crate the derive's code names, such as `kube_core`
    /// (default `::kube::core`) or `k8s_openapi` (default `::k8s_openapi`).
    pub fn crate_path(&self, name: &str) -> String {
        match self.crates.iter().find(|(k, _)| k == name) {
            Some((_, path)) => path.clone(),
            None if name == "kube_core" => "::kube::core".into(),
            None => format!("::{name}"),
        }
    }
}

pub const KEYS: &[&str] = &[
    "group",
    "version",
    "kind",
    "doc",
    "root",
    "plural",
    "singular",
    "namespaced",
    "no_spec",
    "derive",
    "attr",
    "schema",
    "status",
    "category",
    "shortname",
    "printcolumn",
    "selectable",
    "scale",
    "crates",
    "annotation",
    "label",
    "validation",
    "cel",
    "storage",
    "served",
    "deprecated",
    "rule",
    "struct",
];

/// Keys that may be given more than once.
const REPEATABLE: &[&str] = &[
    "derive",
    "attr",
    "category",
    "shortname",
    "printcolumn",
    "selectable",
    "annotation",
    "label",
    "validation",
    "rule",
];

/// The `#[kube(...)]` keys a kube-derive release replaced, with that
/// release and the key that replaced them.
const REPLACED_KEYS: &[(&str, KubeDerive, &str)] = &[
    ("struct", (0, 87, 1), "root"),
    ("rule", (1, 0, 0), "validation"),
];

type Errors = Vec<(Span, String, String)>;

/// The `#[kube(...)]` keys each kube-derive release before 5 lacks, with
/// the release that brought them.
const LATER_KEYS: &[(&str, KubeDerive)] = &[
    ("root", (0, 87, 1)),
    ("doc", (0, 87, 2)),
    ("selectable", (0, 97, 0)),
    ("annotation", (0, 97, 0)),
    ("label", (0, 97, 0)),
    ("storage", (0, 98, 0)),
    ("rule", (0, 98, 0)),
    ("served", (0, 98, 0)),
    ("deprecated", (0, 99, 0)),
    ("validation", (1, 0, 0)),
    ("attr", (3, 0, 0)),
    ("cel", (4, 0, 0)),
    ("no_spec", (5, 0, 0)),
];

/// `major.minor.patch`, or `major.minor` for a `.0` patch.
fn release_name((major, minor, patch): KubeDerive) -> String {
    if patch == 0 {
        format!("{major}.{minor}")
    } else {
        format!("{major}.{minor}.{patch}")
    }
}

/// Parses the `#[kube(...)]` attributes of an item under the grammar of
/// kube-derive `kube_derive`; `None` when there are errors (all of them
/// pushed to `errors`).
pub fn parse(
    attrs: &[syn::Attribute],
    item_span: Span,
    kube_derive: KubeDerive,
    errors: &mut Errors,
) -> Option<(KubeAttrs, KubeCode)> {
    let items = match items_of(attrs, "kube") {
        Ok(items) => items,
        Err(e) => {
            errors.push((
                e.span(),
                format!("cannot parse `#[kube(...)]`: {e}"),
                "see the kube-derive documentation of `CustomResource`".into(),
            ));
            return None;
        }
    };
    let before = errors.len();
    let mut seen: Vec<String> = Vec::new();
    let mut group = None;
    let mut version = None;
    let mut kind = None;
    let mut code = KubeCode::default();
    let mut out = KubeAttrs {
        group: String::new(),
        version: String::new(),
        kind: String::new(),
        doc: None,
        root: None,
        plural: None,
        singular: None,
        namespaced: false,
        no_spec: false,
        schema: SchemaMode::Derived,
        categories: Vec::new(),
        shortnames: Vec::new(),
        printcolumns: Vec::new(),
        selectable: Vec::new(),
        scale: None,
        annotations: Vec::new(),
        labels: Vec::new(),
        storage: true,
        served: true,
        deprecated: None,
        crates: Vec::new(),
    };
    let mut legacy_columns: Vec<String> = Vec::new();
    for item in &items {
        let key = item.key.as_str();
        if key == "apiextensions" {
            apiextensions(item, kube_derive, errors);
            continue;
        }
        if !KEYS.contains(&key) {
            errors.push(unknown_key("kube", key, item.span, KEYS));
            continue;
        }
        if let Some((_, since)) = LATER_KEYS
            .iter()
            .find(|(k, since)| *k == key && kube_derive < *since)
        {
            errors.push((
                item.span,
                format!(
                    "kube-derive {} has no `{key}` key in `#[kube(...)]`",
                    release_name(kube_derive)
                ),
                format!(
                    "it came with kube-derive {since}: move to kube {since} or later, or remove it",
                    since = release_name(*since)
                ),
            ));
            continue;
        }
        if let Some((_, until, by)) = REPLACED_KEYS
            .iter()
            .find(|(k, until, _)| *k == key && kube_derive >= *until)
        {
            errors.push((
                item.span,
                format!(
                    "kube-derive {} has no `{key}` key in `#[kube(...)]`",
                    release_name(kube_derive)
                ),
                format!(
                    "kube-derive {} replaced it with `{by}`",
                    release_name(*until)
                ),
            ));
            continue;
        }
        if !REPEATABLE.contains(&key) && seen.iter().any(|k| k == key) {
            errors.push((
                item.span,
                format!("`{key}` is given more than once in `#[kube(...)]`"),
                "keep one".into(),
            ));
            continue;
        }
        seen.push(key.to_string());
        match key {
            "group" => group = string(item, errors),
            "version" => version = string(item, errors),
            "kind" => kind = string(item, errors),
            "doc" => out.doc = string(item, errors),
            "root" | "struct" => out.root = string(item, errors),
            "plural" => out.plural = string(item, errors),
            "singular" => out.singular = string(item, errors),
            "namespaced" => out.namespaced = flag(item, errors),
            "no_spec" => out.no_spec = flag(item, errors),
            "storage" => out.storage = flag(item, errors),
            "served" => out.served = flag(item, errors),
            "cel" | "derive" | "attr" => {}
            "crates" => {
                if let AttrValue::List(tokens) = &item.value
                    && let Ok(items) = parse_items(tokens.clone())
                {
                    out.crates = items
                        .iter()
                        .filter_map(|i| Some((i.key.clone(), i.str_value()?)))
                        .collect();
                }
            }
            "schema" => match string(item, errors).as_deref() {
                Some("derived") => out.schema = SchemaMode::Derived,
                Some("manual") => out.schema = SchemaMode::Manual,
                Some("disabled") => out.schema = SchemaMode::Disabled,
                Some(other) => errors.push((
                    item.span,
                    format!("unknown schema mode `{other}`"),
                    "use `derived`, `manual` or `disabled`".into(),
                )),
                None => {}
            },
            "status" => match &item.value {
                AttrValue::Expr(Expr::Path(p)) => code.status = Some(p.path.clone()),
                AttrValue::Expr(e) => match expr_str(e).map(|s| syn::parse_str::<syn::Path>(&s)) {
                    Some(Ok(p)) => code.status = Some(p),
                    _ => errors.push((
                        item.span,
                        "`status` must name a type".into(),
                        "write `status = \"MyStatus\"`".into(),
                    )),
                },
                _ => errors.push((
                    item.span,
                    "`status` must name a type".into(),
                    "write `status = \"MyStatus\"`".into(),
                )),
            },
            "category" => out.categories.extend(string(item, errors)),
            "shortname" => out.shortnames.extend(string(item, errors)),
            "selectable" => out.selectable.extend(string(item, errors)),
            // kube-derive before 3 joins its printcolumn strings into one
            // JSON array, so one string may hold several comma-separated
            // columns.
            "printcolumn" if kube_derive < (3, 0, 0) => match item.str_value() {
                Some(text) => legacy_columns.push(text),
                None => errors.push((
                    item.span,
                    format!(
                        "kube-derive {} takes `printcolumn` as a JSON string",
                        release_name(kube_derive)
                    ),
                    format!(
                        "write `printcolumn = r#\"{}\"#`, or move to kube 3.1 or later for the list form",
                        as_json_string(printcolumn(item, &mut Vec::new()), r#"{"name":"Replicas","type":"integer","jsonPath":".spec.replicas"}"#)
                    ),
                )),
            },
            "printcolumn" => {
                if let Some(c) = printcolumn(item, errors) {
                    out.printcolumns.push(c);
                }
            }
            // The list form came with kube-derive 0.99.
            "scale" if kube_derive < (0, 99, 0) && matches!(item.value, AttrValue::List(_)) => {
                errors.push((
                    item.span,
                    format!(
                        "kube-derive {} takes `scale` as a JSON string",
                        release_name(kube_derive)
                    ),
                    format!(
                        "write `scale = r#\"{}\"#`, or move to kube 0.99 or later for the list form",
                        as_json_string(scale(item, &mut Vec::new()), r#"{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}"#)
                    ),
                ));
            }
            "scale" => out.scale = scale(item, errors),
            "annotation" => out.annotations.extend(key_value(item, errors)),
            "label" => out.labels.extend(key_value(item, errors)),
            "validation" | "rule" => match &item.value {
                AttrValue::Expr(e) => code.validations.push(e.clone()),
                _ => errors.push((
                    item.span,
                    format!("`{key}` takes a value"),
                    format!("write `{key} = \"self.x > 0\"`"),
                )),
            },
            "deprecated" => {
                out.deprecated = Some(match &item.value {
                    AttrValue::Flag => Deprecated::Yes,
                    _ => match string(item, errors) {
                        Some(w) => Deprecated::WithWarning(w),
                        None => Deprecated::Yes,
                    },
                });
            }
            _ => {}
        }
    }
    for (name, value) in [("group", &group), ("version", &version), ("kind", &kind)] {
        if value.is_none() && !seen.iter().any(|k| k == name) {
            errors.push((
                item_span,
                format!("`#[kube(...)]` has no `{name}`"),
                format!("add `{name} = \"...\"`; `group`, `version` and `kind` are required"),
            ));
        }
    }
    if !legacy_columns.is_empty() {
        match serde_json::from_str(&format!("[ {} ]", legacy_columns.join(","))) {
            Ok(columns) => out.printcolumns = columns,
            Err(err) => errors.push((
                item_span,
                format!("invalid `printcolumn` JSON: {err}"),
                "kube-derive before 3 reads the printcolumn strings joined by commas as one JSON array; give each column as `{\"name\":..,\"type\":..,\"jsonPath\":..}`".into(),
            )),
        }
    }
    if errors.len() > before {
        return None;
    }
    out.group = group?;
    out.version = version?;
    out.kind = kind?;
    Some((out, code))
}

/// The kube-derive release that removed `#[kube(apiextensions = ..)]`:
/// before it, `"v1"` (the default) or `"v1beta1"`.
const APIEXTENSIONS_REMOVED: KubeDerive = (0, 74, 0);

/// `apiextensions`, which only kube-derive 0.70 to 0.73 know: `"v1"`
/// changes nothing, and rsop writes no `v1beta1` CRD (Kubernetes 1.22
/// removed them).
fn apiextensions(item: &AttrItem, kube_derive: KubeDerive, errors: &mut Errors) {
    if kube_derive >= APIEXTENSIONS_REMOVED {
        errors.push((
            item.span,
            format!(
                "kube-derive {} has no `apiextensions` key in `#[kube(...)]`",
                release_name(kube_derive)
            ),
            format!(
                "kube-derive {} removed it: every CRD is `apiextensions.k8s.io/v1`; remove the key",
                release_name(APIEXTENSIONS_REMOVED)
            ),
        ));
        return;
    }
    match string(item, errors).as_deref() {
        Some("v1") | None => {}
        Some(other) => errors.push((
            item.span,
            format!("rsop writes `apiextensions.k8s.io/v1` CRDs, not `{other}`"),
            "Kubernetes 1.22 removed `v1beta1` CRDs: remove `apiextensions` to get a v1 CRD".into(),
        )),
    }
}

fn string(item: &AttrItem, errors: &mut Errors) -> Option<String> {
    let s = item.str_value();
    if s.is_none() {
        errors.push((
            item.span,
            format!("`{}` takes a string literal", item.key),
            format!("write `{} = \"...\"`", item.key),
        ));
    }
    s
}

/// darling's bool: a bare word is true; `= true`/`= false`; `= "true"`.
fn flag(item: &AttrItem, errors: &mut Errors) -> bool {
    match &item.value {
        AttrValue::Flag => true,
        AttrValue::Expr(Expr::Lit(l)) => match &l.lit {
            syn::Lit::Bool(b) => b.value,
            syn::Lit::Str(s) if s.value() == "true" => true,
            syn::Lit::Str(s) if s.value() == "false" => false,
            _ => {
                errors.push((
                    item.span,
                    format!("`{}` takes a boolean", item.key),
                    format!("write `{}` or `{} = false`", item.key, item.key),
                ));
                false
            }
        },
        _ => {
            errors.push((
                item.span,
                format!("`{}` takes a boolean", item.key),
                format!("write `{}` or `{} = false`", item.key, item.key),
            ));
            false
        }
    }
}

fn printcolumn(item: &AttrItem, errors: &mut Errors) -> Option<PrintColumn> {
    match &item.value {
        AttrValue::Expr(e) => {
            let text = expr_str(e)?;
            serde_json::from_str(&text)
                .map_err(|err| {
                    errors.push((item.span, format!("invalid `printcolumn` JSON: {err}"), "give `name`, `type` and `jsonPath`, e.g. `printcolumn = r#\"{\"name\":\"Replicas\",\"type\":\"integer\",\"jsonPath\":\".spec.replicas\"}\"#`".into()));
                })
                .ok()
        }
        AttrValue::List(tokens) => {
            let subs = parse_items(tokens.clone()).ok()?;
            let mut name = None;
            let mut type_ = None;
            let mut json_path = None;
            let mut description = None;
            let mut format = None;
            let mut priority = None;
            for s in &subs {
                match s.key.as_str() {
                    "name" => name = s.str_value(),
                    "type_" => type_ = s.str_value(),
                    "json_path" => json_path = s.str_value(),
                    "description" => description = s.str_value(),
                    "format" => format = s.str_value(),
                    "priority" => {
                        priority = match &s.value {
                            AttrValue::Expr(Expr::Lit(l)) => match &l.lit {
                                syn::Lit::Int(i) => i.base10_parse().ok(),
                                syn::Lit::Str(st) => st.value().parse().ok(),
                                _ => None,
                            },
                            _ => None,
                        };
                    }
                    other => errors.push(unknown_list_key(
                        "printcolumn",
                        other,
                        s.span,
                        &[
                            "name",
                            "type_",
                            "json_path",
                            "description",
                            "format",
                            "priority",
                        ],
                    )),
                }
            }
            let missing: Vec<&str> = [
                ("name", name.is_none()),
                ("type_", type_.is_none()),
                ("json_path", json_path.is_none()),
            ]
            .into_iter()
            .filter_map(|(k, m)| m.then_some(k))
            .collect();
            if !missing.is_empty() {
                errors.push((
                    item.span,
                    format!("`printcolumn(...)` lacks {}", missing.join(", ")),
                    "give `name`, `type_` and `json_path`".into(),
                ));
                return None;
            }
            Some(PrintColumn {
                name: name?,
                type_: type_?,
                json_path: json_path?,
                description,
                format,
                priority,
            })
        }
        AttrValue::Flag => {
            errors.push((
                item.span,
                "`printcolumn` takes a value".into(),
                "see the kube-derive documentation".into(),
            ));
            None
        }
    }
}

/// The JSON string form of a list-form `printcolumn(..)` or `scale(..)`,
/// for releases that read only that form; `example` where the list itself
/// is wrong.
fn as_json_string(value: Option<impl serde::Serialize>, example: &str) -> String {
    value
        .and_then(|v| serde_json::to_string(&v).ok())
        .unwrap_or_else(|| example.to_string())
}

/// The error of a key that the list form `name(...)` does not have.
fn unknown_list_key(name: &str, key: &str, span: Span, known: &[&str]) -> (Span, String, String) {
    let help = did_you_mean(key, known).map_or_else(
        || format!("use {}", known.join(", ")),
        |c| format!("did you mean `{c}`?"),
    );
    (span, format!("unknown key `{key}` in `{name}(...)`"), help)
}

fn scale(item: &AttrItem, errors: &mut Errors) -> Option<Scale> {
    match &item.value {
        AttrValue::Expr(e) => {
            let text = expr_str(e)?;
            serde_json::from_str(&text)
                .map_err(|err| {
                    errors.push((
                        item.span,
                        format!("invalid `scale` JSON: {err}"),
                        "give `specReplicasPath` and `statusReplicasPath`".into(),
                    ));
                })
                .ok()
        }
        AttrValue::List(tokens) => {
            let subs = parse_items(tokens.clone()).ok()?;
            let mut spec = None;
            let mut status = None;
            let mut selector = None;
            for s in &subs {
                match s.key.as_str() {
                    "spec_replicas_path" => spec = s.str_value(),
                    "status_replicas_path" => status = s.str_value(),
                    "label_selector_path" => selector = s.str_value(),
                    other => errors.push(unknown_list_key(
                        "scale",
                        other,
                        s.span,
                        &[
                            "spec_replicas_path",
                            "status_replicas_path",
                            "label_selector_path",
                        ],
                    )),
                }
            }
            if spec.is_none() || status.is_none() {
                errors.push((
                    item.span,
                    "`scale(...)` needs `spec_replicas_path` and `status_replicas_path`".into(),
                    "add the missing paths".into(),
                ));
                return None;
            }
            Some(Scale {
                spec_replicas_path: spec?,
                status_replicas_path: status?,
                label_selector_path: selector,
            })
        }
        AttrValue::Flag => None,
    }
}

fn key_value(item: &AttrItem, errors: &mut Errors) -> Option<(String, String)> {
    let AttrValue::List(tokens) = &item.value else {
        errors.push((
            item.span,
            format!("`{}` takes `(\"key\", \"value\")`", item.key),
            format!("write `{}(\"key\", \"value\")`", item.key),
        ));
        return None;
    };
    let parsed = syn::parse::Parser::parse2(
        syn::punctuated::Punctuated::<syn::LitStr, syn::Token![,]>::parse_terminated,
        tokens.clone(),
    );
    match parsed {
        Ok(list) if list.len() == 2 => Some((list[0].value(), list[1].value())),
        _ => {
            errors.push((
                item.span,
                format!("`{}` takes exactly two string literals", item.key),
                format!("write `{}(\"key\", \"value\")`", item.key),
            ));
            None
        }
    }
}
