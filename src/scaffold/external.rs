//! Rust types for a kind another project defines, read from its CRD
//! (`rsop create api --external-api-crd`).
//!
//! rsop writes the types itself rather than through kopium: kopium's
//! library is its schema analyzer only (the Rust writer is its binary) and
//! it pins its own kube and k8s-openapi, and an installed `kopium` binary is
//! one more tool for every user to get. The types are made for reading and
//! patching objects of the kind, not for making its CRD, so:
//!
//! - the spec struct carries `#[kube(..., schema = "disabled")]`: no
//!   `JsonSchema`, and `rsop manifests` skips the files under `src/external/`;
//! - a string enum stays a `String`, its values listed in the doc comment:
//!   when the other project adds a value, objects that use it must still
//!   deserialize;
//! - a field the schema does not require, or marks `nullable`, is an
//!   `Option` left out when `None`, so that a server-side apply patch built
//!   from the types sends only what the operator set;
//! - objects with properties become structs named after their parent and
//!   field (`CertificateSpec` + `privateKey` = `CertificatePrivateKey`),
//!   `additionalProperties` a `BTreeMap<String, _>`, an object of unknown
//!   fields (`x-kubernetes-preserve-unknown-fields`) or a schema without a
//!   type `serde_json::Value`, `x-kubernetes-int-or-string` k8s-openapi's
//!   `IntOrString`, integers `i32` or `i64` by format, numbers `f64`.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use heck::{ToPascalCase, ToSnakeCase};
use serde::Deserialize as _;
use serde_yaml_ng::Value;

use crate::manifests::derive::attrs::RenameRule;
use crate::manifests::diagnostics::did_you_mean;
use crate::project::names;
use crate::yaml::get_str;
use crate::{Error, Result};

/// One version of a kind of another project's CRD, with its Rust types.
#[derive(Debug, Clone)]
pub struct ExternalKind {
    /// The full API group: `cert-manager.io`.
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
    /// The file the CRD was read from, as the user named it.
    pub source: PathBuf,
    /// The Rust module, unformatted.
    pub code: String,
}

impl ExternalKind {
    /// `cert_manager_io`: the group as a module name.
    pub fn group_module(&self) -> String {
        names::group_module(&self.group)
    }
}

/// A CRD found in the input, with where it came from.
struct Found {
    file: PathBuf,
    doc: Value,
    kind: String,
}

/// Reads the CRD of `kind` (or the only CRD) from `path`, a YAML file or a
/// directory of them, and generates the types of `version` (or of the
/// storage version).
pub fn read(path: &Path, kind: Option<&str>, version: Option<&str>) -> Result<ExternalKind> {
    let files = yaml_files(path)?;
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).map_err(|e| Error::io("read", file, e))?;
        for doc in serde_yaml_ng::Deserializer::from_str(&text) {
            let value = Value::deserialize(doc).map_err(|e| Error::Parse {
                path: file.clone(),
                help: Some("pass a CustomResourceDefinition in valid YAML".into()),
                source: Box::new(e),
            })?;
            if value.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
                continue;
            }
            let api_version = value.get("apiVersion").and_then(Value::as_str);
            if api_version != Some("apiextensions.k8s.io/v1") {
                return Err(Error::user_with_help(
                    format!(
                        "`{}` holds a CustomResourceDefinition of `{}`, which rsop does not read",
                        file.display(),
                        api_version.unwrap_or("no apiVersion")
                    ),
                    "pass a CRD of `apiextensions.k8s.io/v1`, as `kubectl get crd <name> -o yaml` prints it",
                ));
            }
            let kind = get_str(&value, &["spec", "names", "kind"])
                .unwrap_or_default()
                .to_string();
            found.push(Found {
                file: file.clone(),
                doc: value,
                kind,
            });
        }
    }
    let shown = path.display();
    if found.is_empty() {
        return Err(Error::user_with_help(
            format!("`{shown}` holds no CustomResourceDefinition"),
            "pass the CRD's YAML (`kubectl get crd <name> -o yaml > crd.yaml`), or a directory of such files",
        ));
    }
    let kinds: Vec<&str> = found.iter().map(|f| f.kind.as_str()).collect();
    let chosen = match kind {
        Some(kind) => found.iter().find(|f| f.kind == kind).ok_or_else(|| {
            let help = match did_you_mean(kind, &kinds) {
                Some(close) => format!("did you mean `--kind {close}`?"),
                None => format!("it has CRDs of: {}", kinds.join(", ")),
            };
            Error::user_with_help(format!("`{shown}` has no CRD of kind `{kind}`"), help)
        })?,
        None if found.len() == 1 => &found[0],
        None => {
            return Err(Error::user_with_help(
                format!("`{shown}` holds {} CRDs", found.len()),
                format!("pick one with `--kind`: {}", kinds.join(", ")),
            ));
        }
    };
    from_crd(&chosen.file, &chosen.doc, version)
}

/// The YAML files of `path`: itself, or those of the directory, sorted.
fn yaml_files(path: &Path) -> Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::user_with_help(
                format!("`{}` does not exist", path.display()),
                "pass the path of the CRD's YAML file, or of a directory of YAML files",
            )
        } else {
            Error::io("read", path, e)
        }
    })?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| Error::io("read directory", path, e))? {
        let entry = entry.map_err(|e| Error::io("read directory", path, e))?;
        let p = entry.path();
        if p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            files.push(p);
        }
    }
    files.sort();
    Ok(files)
}

/// The types of one version of the CRD `doc`, read from `file`.
fn from_crd(file: &Path, doc: &Value, version: Option<&str>) -> Result<ExternalKind> {
    let bad = |what: &str| {
        Error::user_with_help(
            format!(
                "`{}`: the CustomResourceDefinition has no {what}",
                file.display()
            ),
            "pass the CRD as the API server has it: `kubectl get crd <name> -o yaml`",
        )
    };
    let group = get_str(doc, &["spec", "group"]).ok_or_else(|| bad("`spec.group`"))?;
    let kind = get_str(doc, &["spec", "names", "kind"]).ok_or_else(|| bad("`spec.names.kind`"))?;
    let plural =
        get_str(doc, &["spec", "names", "plural"]).ok_or_else(|| bad("`spec.names.plural`"))?;
    names::validate_kind_syntax(kind)?;
    let namespaced = get_str(doc, &["spec", "scope"]) != Some("Cluster");
    let versions = doc
        .get("spec")
        .and_then(|s| s.get("versions"))
        .and_then(Value::as_sequence)
        .ok_or_else(|| bad("`spec.versions`"))?;
    let chosen = match version {
        Some(wanted) => versions
            .iter()
            .find(|v| name_of(v) == wanted)
            .ok_or_else(|| {
                let have: Vec<&str> = versions.iter().map(name_of).collect();
                Error::user_with_help(
                    format!("the CRD of `{kind}` has no version `{wanted}`"),
                    format!("pick one of its versions: {}", have.join(", ")),
                )
            })?,
        None => versions
            .iter()
            .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
            .or_else(|| versions.first())
            .ok_or_else(|| bad("version"))?,
    };
    let version = name_of(chosen).to_string();
    if chosen.get("served").and_then(Value::as_bool) == Some(false) {
        return Err(Error::user_with_help(
            format!("version `{version}` of `{kind}` is not served"),
            "pick a served version with `--version`",
        ));
    }
    let schema = chosen
        .get("schema")
        .and_then(|s| s.get("openAPIV3Schema"))
        .ok_or_else(|| bad(&format!("schema in version `{version}`")))?;
    let props = schema.get("properties");
    let Some(spec) = props.and_then(|p| p.get("spec")) else {
        return Err(Error::user_with_help(
            format!(
                "`{}`: the schema of `{kind}` has no `spec`; kube's `CustomResource` derive needs one",
                file.display()
            ),
            "use `kube::api::DynamicObject` for this kind in your controller instead",
        ));
    };
    let status = props.and_then(|p| p.get("status"));
    let mut writer = Writer::new(kind);
    let crd_name = get_str(doc, &["metadata", "name"]).unwrap_or(plural);
    let mut kube_attrs = vec![
        format!("group = {}", rust_str(group)),
        format!("version = {}", rust_str(&version)),
        format!("kind = {}", rust_str(kind)),
        format!("plural = {}", rust_str(plural)),
    ];
    if namespaced {
        kube_attrs.push("namespaced".into());
    }
    if status.is_some() {
        kube_attrs.push(format!("status = {}", rust_str(&format!("{kind}Status"))));
    }
    kube_attrs.push(r#"derive = "Default""#.into());
    kube_attrs.push(r#"derive = "PartialEq""#.into());
    kube_attrs.push(
        "// The CRD is the other project's: no schema is derived, and none is needed to read\n    // or patch the kind's objects.\n    schema = \"disabled\"".into(),
    );
    writer.root_struct(&format!("{kind}Spec"), spec, &kube_attrs);
    if let Some(status) = status {
        writer.object_struct(&format!("{kind}Status"), status);
    }
    let header = format!(
        "//! The `{kind}` kind of `{group}/{version}`, which another project defines: its types,\n\
         //! generated by `rsop create api --external-api-crd` from the CRD `{crd_name}`.\n\
         //!\n\
         //! The CRD is the other project's to install: `rsop manifests` writes none for the types\n\
         //! under `src/external/`. To follow a new release of the CRD, generate the types again rather\n\
         //! than edit this file: `rsop create api --external-api-crd <crd> --resource=false\n\
         //! --controller=false --force` rewrites them and leaves the controllers alone.\n\
         \n\
         // The doc comments are the CRD's descriptions, written for `kubectl explain` rather than\n\
         // as rustdoc.\n\
     #![allow(clippy::doc_lazy_continuation, rustdoc::all)]\n\n"
    );
    let mut code = header;
    code.push_str(&writer.imports());
    code.push_str(&writer.out);
    Ok(ExternalKind {
        group: group.to_string(),
        version,
        kind: kind.to_string(),
        plural: plural.to_string(),
        namespaced,
        source: file.to_path_buf(),
        code,
    })
}

/// The `name` of a CRD version.
fn name_of(v: &Value) -> &str {
    v.get("name").and_then(Value::as_str).unwrap_or_default()
}

/// A Rust string literal of `s`.
fn rust_str(s: &str) -> String {
    format!("{s:?}")
}

/// Writes the structs, depth first, each once.
struct Writer {
    kind: String,
    out: String,
    /// Struct names in use.
    taken: BTreeSet<String>,
    /// Structs still to write: (name, schema).
    pending: Vec<(String, Value)>,
    uses_map: bool,
    uses_int_or_string: bool,
}

impl Writer {
    fn new(kind: &str) -> Self {
        let mut taken = BTreeSet::new();
        for reserved in [
            kind.to_string(),
            format!("{kind}Spec"),
            format!("{kind}Status"),
        ] {
            taken.insert(reserved);
        }
        Writer {
            kind: kind.to_string(),
            out: String::new(),
            taken,
            pending: Vec::new(),
            uses_map: false,
            uses_int_or_string: false,
        }
    }

    fn imports(&self) -> String {
        let mut out = String::new();
        if self.uses_map {
            out.push_str("use std::collections::BTreeMap;\n\n");
        }
        if self.uses_int_or_string {
            out.push_str("use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;\n");
        }
        out.push_str("use kube::CustomResource;\nuse serde::{Deserialize, Serialize};\n");
        out
    }

    /// The spec struct, with the derive of the kind.
    fn root_struct(&mut self, name: &str, schema: &Value, kube_attrs: &[String]) {
        let mut head = String::new();
        doc_comment(&mut head, "", description(schema));
        head.push_str("#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]\n#[kube(\n");
        for attr in kube_attrs {
            let _ = writeln!(head, "    {attr},");
        }
        head.push_str(")]\n");
        self.write_struct(name, schema, &head);
        self.drain();
    }

    /// A struct of an object schema, and every struct it needs.
    fn object_struct(&mut self, name: &str, schema: &Value) {
        let mut head = String::new();
        doc_comment(&mut head, "", description(schema));
        head.push_str("#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]\n");
        self.write_struct(name, schema, &head);
        self.drain();
    }

    fn drain(&mut self) {
        while !self.pending.is_empty() {
            let (name, schema) = self.pending.remove(0);
            let mut head = String::new();
            doc_comment(&mut head, "", description(&schema));
            head.push_str("#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]\n");
            self.write_struct(&name, &schema, &head);
        }
    }

    fn write_struct(&mut self, name: &str, schema: &Value, head: &str) {
        // Nested types are named after the kind, not after `...Spec`.
        let prefix = name
            .strip_suffix("Spec")
            .filter(|p| *p == self.kind)
            .unwrap_or(name)
            .to_string();
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_sequence)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = String::new();
        let mut used = BTreeSet::new();
        if let Some(props) = schema.get("properties").and_then(Value::as_mapping) {
            for (key, field_schema) in props {
                let Some(key) = key.as_str() else { continue };
                let ident = unique(&field_ident(key), &mut used);
                let rust_type = self.rust_type(&prefix, key, field_schema);
                let optional = !required.contains(key)
                    || field_schema.get("nullable").and_then(Value::as_bool) == Some(true);
                if !fields.is_empty() {
                    fields.push('\n');
                }
                doc_comment(&mut fields, "    ", description(field_schema));
                if let Some(values) = enum_values(field_schema) {
                    if description(field_schema).is_some() {
                        fields.push_str("    ///\n");
                    }
                    let _ = writeln!(fields, "    /// One of: {values}.");
                }
                let mut serde = Vec::new();
                if RenameRule::Camel.apply_to_field(ident.trim_start_matches("r#")) != key {
                    serde.push(format!("rename = {}", rust_str(key)));
                }
                let ty = if optional {
                    serde.push(r#"default, skip_serializing_if = "Option::is_none""#.into());
                    format!("Option<{rust_type}>")
                } else {
                    rust_type
                };
                if !serde.is_empty() {
                    let _ = writeln!(fields, "    #[serde({})]", serde.join(", "));
                }
                let _ = writeln!(fields, "    pub {ident}: {ty},");
            }
        }
        self.out.push('\n');
        self.out.push_str(head);
        if fields.is_empty() {
            let _ = writeln!(self.out, "pub struct {name} {{}}");
        } else {
            self.out.push_str("#[serde(rename_all = \"camelCase\")]\n");
            let _ = write!(self.out, "pub struct {name} {{\n{fields}}}\n");
        }
    }

    /// The Rust type of `schema`, the value of `key` in the struct `parent`;
    /// object schemas are queued as structs of their own.
    fn rust_type(&mut self, parent: &str, key: &str, schema: &Value) -> String {
        let flag = |name: &str| schema.get(name).and_then(Value::as_bool) == Some(true);
        if flag("x-kubernetes-int-or-string") {
            self.uses_int_or_string = true;
            return "IntOrString".into();
        }
        let ty = schema.get("type").and_then(Value::as_str);
        let format = schema.get("format").and_then(Value::as_str);
        match ty {
            Some("string") => "String".into(),
            Some("boolean") => "bool".into(),
            Some("integer") if format == Some("int32") => "i32".into(),
            Some("integer") => "i64".into(),
            Some("number") => "f64".into(),
            Some("array") => {
                let item = match schema.get("items") {
                    // Items of a list field are named in the singular of nothing: the field's name.
                    Some(items) => self.rust_type(parent, key, items),
                    None => "serde_json::Value".into(),
                };
                format!("Vec<{item}>")
            }
            Some("object") => {
                let has_props = schema
                    .get("properties")
                    .and_then(Value::as_mapping)
                    .is_some_and(|m| !m.is_empty());
                if has_props {
                    let name = self.struct_name(parent, key);
                    self.pending.push((name.clone(), schema.clone()));
                    return name;
                }
                if flag("x-kubernetes-preserve-unknown-fields") {
                    return "serde_json::Value".into();
                }
                self.uses_map = true;
                match schema.get("additionalProperties") {
                    Some(Value::Mapping(_)) => {
                        let value = self.rust_type(parent, key, &schema["additionalProperties"]);
                        format!("BTreeMap<String, {value}>")
                    }
                    _ => "BTreeMap<String, serde_json::Value>".into(),
                }
            }
            // No type: anything (`x-kubernetes-preserve-unknown-fields`,
            // `anyOf`, or a schema left open).
            _ => "serde_json::Value".into(),
        }
    }

    /// A struct name for the field `key` of `parent`, not taken yet.
    fn struct_name(&mut self, parent: &str, key: &str) -> String {
        let base = format!("{parent}{}", type_word(key));
        let mut name = base.clone();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

/// `key` as a part of a type name: `privateKey` is `PrivateKey`.
fn type_word(key: &str) -> String {
    let word: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect::<String>()
        .to_pascal_case();
    if word.is_empty() {
        "Field".into()
    } else {
        word
    }
}

/// The Rust field name of the JSON key `key`: snake case, a valid
/// identifier, keywords raw (`r#type`) or, where Rust has no raw form,
/// suffixed (`self_`).
fn field_ident(key: &str) -> String {
    let cleaned: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let mut ident = cleaned.to_snake_case();
    if ident.is_empty() {
        ident = "field".into();
    }
    if ident.starts_with(|c: char| c.is_ascii_digit()) {
        ident.insert_str(0, "field_");
    }
    match ident.as_str() {
        "self" | "super" | "crate" | "_" => format!("{ident}_"),
        kw if names::RUST_KEYWORDS.contains(&kw) => format!("r#{ident}"),
        _ => ident,
    }
}

/// `ident` unless a field of the struct has that name: then `ident_2`, ...
fn unique(ident: &str, used: &mut BTreeSet<String>) -> String {
    let mut name = ident.to_string();
    let mut n = 2;
    while used.contains(&name) {
        name = format!("{ident}_{n}");
        n += 1;
    }
    used.insert(name.clone());
    name
}

/// The values of a string enum, for its doc comment: `"a"`, `"b"`.
fn enum_values(schema: &Value) -> Option<String> {
    let values = schema.get("enum")?.as_sequence()?;
    let shown: Vec<String> = values
        .iter()
        .filter_map(|v| v.as_str().map(|s| format!("`{s:?}`")))
        .collect();
    (!shown.is_empty()).then(|| shown.join(", "))
}

fn description(schema: &Value) -> Option<&str> {
    schema.get("description").and_then(Value::as_str)
}

/// `text` as `///` lines, each indented by `indent`. Each line loses its
/// leading and trailing blanks and code fences are escaped: rustdoc would
/// take an indented or fenced block of a description for a doctest, and
/// `cargo test` would compile it.
fn doc_comment(out: &mut String, indent: &str, text: Option<&str>) {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return;
    };
    for line in text.lines() {
        let line = line.trim().replace("```", "\\`\\`\\`");
        if line.is_empty() {
            let _ = writeln!(out, "{indent}///");
        } else {
            let _ = writeln!(out, "{indent}/// {line}");
        }
    }
}

#[cfg(test)]
mod tests;
