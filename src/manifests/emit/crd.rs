//! `CustomResourceDefinitions`: every `#[derive(CustomResource)]` item becomes
//! one version, assembled as kube-derive's `crd()` assembles it; the
//! versions of one group and kind merge into one CRD with exactly one
//! storage version.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use syn::spanned::Spanned;

use crate::manifests::derive::attrs;
use crate::manifests::derive::attrs::kube::{self, Deprecated, KubeAttrs, KubeCode, SchemaMode};
use crate::manifests::derive::schema::model::Model;
use crate::manifests::derive::schema::{
    Builder, Scope, derives, ensure_object, flatten, k8s, object, transform,
};
use crate::manifests::diagnostics::{Diagnostic, Location};
use crate::manifests::emit::merge_crds::StorageChoice;
use crate::manifests::read::ownership::{self, ForeignKind, Reason};
use crate::manifests::read::source::{Crate, Module, Sources};
use crate::project::names;

/// One `#[derive(CustomResource)]` item, made into a CRD version.
#[derive(Debug, Clone)]
pub struct Version {
    pub attrs: KubeAttrs,
    pub plural: String,
    pub singular: String,
    /// `spec.versions[]` entry. Its `schema`, when it has one, is
    /// [`SCHEMA_TOKEN`]: the schema itself is [`Version::schema_yaml`].
    pub entry: Value,
    /// The entry's `schema` (`openAPIV3Schema: ..`) as YAML, written on
    /// the thread that derived it: a crate of many kinds holds its schemas
    /// as text, a fraction of what they take as JSON values.
    pub schema_yaml: Option<String>,
    pub location: Location,
    /// The Rust path of the type kube-derive generates, from the crate root
    /// (`api::v1::Guestbook`).
    pub root_path: String,
    /// The same path from the module of the file that declares it
    /// (`Guestbook`, or `v1::Guestbook` in an inline `mod v1`), for the
    /// crdgen build, which appends its hook to that file.
    pub path_in_file: String,
    /// Why the schema needs the code to run (empty when rsop derived it):
    /// such a version's schema comes from a crdgen build.
    pub needs_code: Vec<Diagnostic>,
    /// The project's kube-derive writes the CRD's empty lists (see
    /// [`Model::empty_lists`]).
    pub empty_lists: bool,
}

/// What a version entry's `schema` holds until its CRD is written: a plain
/// scalar no entry of rsop's has, replaced by the schema's YAML.
const SCHEMA_TOKEN: &str = "rsop.schema.follows";

impl Version {
    /// Sets the entry's schema (`{"openAPIV3Schema": ..}`): an empty one
    /// stays in the entry, any other is kept as its YAML.
    pub fn set_schema(&mut self, schema: Value) {
        if schema.as_object().is_some_and(Map::is_empty) {
            self.entry["schema"] = schema;
            self.schema_yaml = None;
        } else {
            self.schema_yaml = Some(crate::yaml::json_to_string(&schema));
            self.entry["schema"] = json!(SCHEMA_TOKEN);
        }
    }

    /// The entry's schema as a JSON value.
    ///
    /// # Panics
    /// Never: the YAML is rsop's own writing of a JSON value.
    pub fn schema(&self) -> Value {
        match &self.schema_yaml {
            Some(yaml) => serde_yaml_ng::from_str(yaml).expect("rsop's YAML reads back"),
            None => self.entry["schema"].clone(),
        }
    }

    /// `group/Kind/version`, the key both derivations share.
    pub fn key(&self) -> String {
        format!(
            "{}/{}/{}",
            self.attrs.group, self.attrs.kind, self.attrs.version
        )
    }
}

/// A whole CRD: its file name and document.
#[derive(Debug, Clone)]
pub struct Crd {
    pub group: String,
    pub plural: String,
    /// The CRD, each version's schema a [`SCHEMA_TOKEN`] or empty.
    pub document: Value,
    /// The YAML of the schemas the tokens stand for, in their order.
    pub schemas: Vec<String>,
}

impl Crd {
    /// The CRD as YAML: the document with each schema's YAML in place of
    /// its token, indented under its `schema:` key as the writer nests a
    /// mapping there (two spaces deeper; the empty lines of block scalars
    /// stay empty).
    pub fn to_yaml(&self) -> String {
        let skeleton = crate::yaml::json_to_string(&self.document);
        let marker = format!("schema: {SCHEMA_TOKEN}");
        let mut schemas = self.schemas.iter();
        let mut out = String::with_capacity(
            skeleton.len() + self.schemas.iter().map(|s| s.len() * 9 / 8).sum::<usize>(),
        );
        for line in skeleton.split_inclusive('\n') {
            let body = line.trim_start_matches(' ');
            let indent = line.len() - body.len();
            if body.trim_end() == marker
                && let Some(schema) = schemas.next()
            {
                out.push_str(&line[..indent]);
                out.push_str("schema:\n");
                for schema_line in schema.split_inclusive('\n') {
                    if schema_line != "\n" {
                        out.extend(std::iter::repeat_n(' ', indent + 2));
                    }
                    out.push_str(schema_line);
                }
            } else {
                out.push_str(line);
            }
        }
        debug_assert!(schemas.next().is_none(), "a schema has no token");
        out
    }

    /// `<group>_<plural>.yaml`, controller-gen's file name.
    pub fn file_name(&self) -> String {
        format!("{}_{}.yaml", self.group, self.plural)
    }
}

/// The first attribute of `attrs` that is neither a built-in attribute nor
/// one of the inert attributes the derives of a kind read: an attribute
/// macro (or a derive helper) of another crate, such as `versioned`.
fn other_attribute_macro(attrs: &[syn::Attribute]) -> Option<String> {
    const KNOWN: &[&str] = &[
        "doc",
        "derive",
        "kube",
        "serde",
        "schemars",
        "x_kube",
        "cel_validate",
        "validate",
        "garde",
        "allow",
        "warn",
        "deny",
        "expect",
        "forbid",
        "cfg",
        "cfg_attr",
        "must_use",
        "non_exhaustive",
        "repr",
        "deprecated",
        "automatically_derived",
    ];
    attrs.iter().find_map(|a| {
        let path = a.path();
        let name = path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect::<Vec<_>>()
            .join("::");
        (!KNOWN.contains(&name.as_str())).then_some(name)
    })
}

/// What [`versions`] found in the crate.
#[derive(Debug, Default)]
pub struct Found {
    /// The versions of the project's own kinds.
    pub versions: Vec<Version>,
    /// The kinds that get no CRD (see [`foreign`]).
    pub foreign: Vec<ForeignKind>,
    /// The Rust path, spec struct and file of every kind read, owned or
    /// foreign, to check `[package.metadata.rsop] external` against.
    pub kinds: Vec<(String, String, std::path::PathBuf)>,
    pub problems: Vec<Diagnostic>,
}

/// Every CRD version of the crate, and the problems found on the way. With
/// `derive_schemas` false (for `--cargo`), the schemas are left empty to be
/// filled in by kube-derive; so are those of versions whose schema needs
/// code ([`Version::needs_code`]). Kinds that are other projects' (see
/// [`foreign`]; `listed` holds the user's entries) get no version.
///
/// The kinds are derived on all cores, a module group at a time, under the
/// project's k8s-openapi tables (`k8s`), kube-derive major version and
/// schemars and kube-core releases (`model`).
pub fn versions(
    sources: &Sources,
    k8s: k8s::Table,
    kube_derive: crate::manifests::derive::schema::KubeDerive,
    model: Model,
    derive_schemas: bool,
    ownership: &ownership::Ownership,
) -> Found {
    let found = sources.for_each_group(sources.kind_groups(), |krate, g| {
        let mut builder = Builder::new(krate, k8s, kube_derive).with_model(model);
        let mut out = Found::default();
        let modules = krate.group_modules(g);
        for module in modules {
            // The module of the file itself: the outermost of the file's.
            let file_root = modules
                .iter()
                .filter(|m| m.file == module.file)
                .map(|m| m.path.len())
                .min()
                .unwrap_or(0);
            for item in &module.items {
                let spec = match item {
                    syn::Item::Struct(s) if derives(&s.attrs, "CustomResource") => {
                        SpecItem::Struct(s)
                    }
                    syn::Item::Enum(e) if derives(&e.attrs, "CustomResource") => SpecItem::Enum(e),
                    _ => continue,
                };
                version(
                    krate,
                    Site { module, file_root },
                    spec,
                    &mut builder,
                    derive_schemas,
                    ownership,
                    &mut out,
                );
            }
        }
        out.problems = krate.unreported_problems(g);
        out.problems.append(&mut builder.diagnostics);
        out
    });
    let mut all = Found::default();
    for mut f in found {
        all.versions.append(&mut f.versions);
        all.foreign.append(&mut f.foreign);
        all.kinds.append(&mut f.kinds);
        all.problems.append(&mut f.problems);
    }
    all.problems.extend(sources.late_problems());
    all
}

/// Where a kind is declared: its module, and how many segments of the
/// module's path are the file's own module (more for an inline module).
#[derive(Clone, Copy)]
struct Site<'a> {
    module: &'a Module,
    file_root: usize,
}

/// The item that derives `CustomResource`: the spec, a struct or an enum
/// (which every kube-derive rsop models accepts).
#[derive(Clone, Copy)]
enum SpecItem<'a> {
    Struct(&'a syn::ItemStruct),
    Enum(&'a syn::ItemEnum),
}

impl SpecItem<'_> {
    fn ident(&self) -> &syn::Ident {
        match self {
            SpecItem::Struct(s) => &s.ident,
            SpecItem::Enum(e) => &e.ident,
        }
    }

    fn attrs(&self) -> &[syn::Attribute] {
        match self {
            SpecItem::Struct(s) => &s.attrs,
            SpecItem::Enum(e) => &e.attrs,
        }
    }
}

fn version<'a>(
    krate: &'a Crate,
    at: Site<'a>,
    s: SpecItem<'a>,
    builder: &mut Builder<'a>,
    derive_schemas: bool,
    ownership: &ownership::Ownership,
    found: &mut Found,
) {
    if let Some(v) = owned_version(krate, at, s, builder, derive_schemas, ownership, found) {
        found.versions.push(v);
    }
}

fn owned_version<'a>(
    krate: &'a Crate,
    Site { module, file_root }: Site<'a>,
    s: SpecItem<'a>,
    builder: &mut Builder<'a>,
    derive_schemas: bool,
    ownership: &ownership::Ownership,
    found: &mut Found,
) -> Option<Version> {
    let file = krate.file_of(module).path.clone();
    let ident = s.ident();
    let location = Location::of_span(&file, ident.span());
    let mut errors = Vec::new();
    let attrs = kube::parse(s.attrs(), ident.span(), builder.kube_derive, &mut errors);
    let incomplete = errors
        .iter()
        .any(|(_, message, _)| message.starts_with("`#[kube(...)]` has no "));
    if incomplete {
        // Listed as another project's (by its file, say, as the help below
        // suggests): no CRD, and nothing to complain about.
        let mut guess = module.path.clone();
        guess.push(ident.to_string());
        let guess = guess.join("::");
        if ownership
            .external
            .iter()
            .any(|e| e.matches(&guess, &ident.to_string(), &location.file))
        {
            found
                .kinds
                .push((guess.clone(), ident.to_string(), location.file.clone()));
            found.foreign.push(ForeignKind {
                reason: Reason::Listed,
                root_path: guess,
                group: None,
            });
            return None;
        }
    }
    if incomplete && let Some(mac) = other_attribute_macro(s.attrs()) {
        // Another crate's attribute macro writes this kind's `#[kube(...)]`.
        let listed = file.display();
        builder.diagnostics.push(
            Diagnostic::new(
                location,
                format!(
                    "`{ident}` derives `CustomResource` without a whole `#[kube(group, version, kind)]`: the attribute macro `#[{mac}]`, of another crate, probably writes it, and rsop does not expand other crates' attribute macros",
                ),
            )
            .with_help(format!(
                "write the kind's `#[kube(...)]` out, or, if its CRD is installed otherwise, list the file under `[package.metadata.rsop] external = [\"{listed}\"]` in Cargo.toml"
            )),
        );
        return None;
    }
    builder
        .diagnostics
        .extend(attrs::into_diagnostics(errors, &file, None));
    let (attrs, code) = attrs?;
    let root_name = attrs.root.clone().unwrap_or_else(|| attrs.kind.clone());
    let mut root_path = module.path.clone();
    root_path.push(root_name.clone());
    let path_in_file = root_path[file_root.min(root_path.len() - 1)..].join("::");
    let root_path = root_path.join("::");
    let spec = ident.to_string();
    let reason = if ownership::is_kopium_output(&krate.file_of(module).text) {
        Some(Reason::Kopium)
    } else if attrs.schema == SchemaMode::Disabled {
        Some(Reason::SchemaDisabled)
    } else if ownership
        .external
        .iter()
        .any(|e| e.matches(&root_path, &spec, &location.file))
    {
        Some(Reason::Listed)
    } else {
        ownership.judge(
            &root_path,
            &spec,
            &location.file,
            &attrs.group,
            &attrs.annotations,
        )
    };
    found
        .kinds
        .push((root_path.clone(), spec, location.file.clone()));
    if let Some(reason) = reason {
        found.foreign.push(ForeignKind {
            reason,
            root_path,
            group: Some(attrs.group.clone()),
        });
        return None;
    }
    if *ident == root_name {
        builder.diagnostics.push(
            Diagnostic::new(location.clone(), format!("`kind = \"{}\"` must not equal the struct's name; kube-derive generates a struct of that name", attrs.kind))
                .with_help(format!("name the spec struct `{}Spec`", attrs.kind)),
        );
        return None;
    }
    let singular = attrs
        .singular
        .clone()
        .unwrap_or_else(|| attrs.kind.to_ascii_lowercase());
    if attrs.plural.is_none() && singular == "y" {
        builder.diagnostics.push(
            Diagnostic::new(
                location.clone(),
                format!(
                    "kube-derive cannot make a plural of the kind `{}`",
                    attrs.kind
                ),
            )
            .with_help("give it with `plural = \"...\"`"),
        );
        return None;
    }
    let plural = attrs
        .plural
        .clone()
        .unwrap_or_else(|| names::to_plural(&singular));
    let path = attrs.kind.clone();

    let mut needs_code = Vec::new();
    let schema = match attrs.schema {
        SchemaMode::Disabled => None,
        _ if !derive_schemas => Some(json!({})),
        SchemaMode::Manual if let Some(schema) = manual_root_schema(&root_name, builder, &path) => {
            Some(finalize(
                schema,
                builder,
                &location,
                &path,
                "change the schema so that it is structural",
            )?)
        }
        SchemaMode::Manual => {
            needs_code.push(
                Diagnostic::new(
                    location.clone(),
                    format!(
                        "`{}` has `schema = \"manual\"`: its schema is code rsop cannot run",
                        attrs.kind
                    ),
                )
                .needs_code(),
            );
            Some(json!({}))
        }
        SchemaMode::Derived => {
            let before = builder.diagnostics.len();
            let raw = root_schema(module, s, &attrs, &code, &root_name, builder, &path);
            if builder.diagnostics.len() > before {
                // Constructs that need code make the version a crdgen
                // build's; anything else is an error kube-derive shares.
                if builder.diagnostics[before..].iter().any(|d| !d.needs_code) {
                    return None;
                }
                needs_code = builder.diagnostics.split_off(before);
                Some(json!({}))
            } else {
                Some(finalize(
                    raw,
                    builder,
                    &location,
                    &path,
                    "change the type so that it has a structural schema",
                )?)
            }
        }
    };

    let mut entry = Map::new();
    entry.insert("name".into(), json!(attrs.version));
    entry.insert("served".into(), json!(attrs.served));
    entry.insert("storage".into(), json!(attrs.storage));
    entry.insert("schema".into(), json!({}));
    let schema = match schema {
        Some(s) => object([("openAPIV3Schema", s)]),
        None => json!({}),
    };
    let empty_lists = builder.model.empty_lists;
    if !attrs.printcolumns.is_empty() || empty_lists {
        let cols: Vec<Value> = attrs
            .printcolumns
            .iter()
            .map(|c| {
                let mut m = Map::new();
                if let Some(d) = &c.description {
                    m.insert("description".into(), json!(d));
                }
                if let Some(f) = &c.format {
                    m.insert("format".into(), json!(f));
                }
                m.insert("jsonPath".into(), json!(c.json_path));
                m.insert("name".into(), json!(c.name));
                if let Some(p) = c.priority {
                    m.insert("priority".into(), json!(p));
                }
                m.insert("type".into(), json!(c.type_));
                Value::Object(m)
            })
            .collect();
        entry.insert("additionalPrinterColumns".into(), Value::Array(cols));
    }
    if !attrs.selectable.is_empty() {
        let fields: Vec<Value> = attrs
            .selectable
            .iter()
            .map(|s| json!({"jsonPath": s}))
            .collect();
        entry.insert("selectableFields".into(), Value::Array(fields));
    }
    match &attrs.deprecated {
        Some(Deprecated::Yes) => {
            entry.insert("deprecated".into(), json!(true));
        }
        Some(Deprecated::WithWarning(w)) => {
            entry.insert("deprecated".into(), json!(true));
            entry.insert("deprecationWarning".into(), json!(w));
        }
        None => {}
    }
    // kube-derive emits subresources only with a status; scale alone is dropped.
    if empty_lists && code.status.is_none() {
        entry.insert("subresources".into(), json!({}));
    }
    if code.status.is_some() {
        let mut sub = Map::new();
        sub.insert("status".into(), json!({}));
        if let Some(scale) = &attrs.scale {
            let mut sc = Map::new();
            if let Some(l) = &scale.label_selector_path {
                sc.insert("labelSelectorPath".into(), json!(l));
            }
            sc.insert("specReplicasPath".into(), json!(scale.spec_replicas_path));
            sc.insert(
                "statusReplicasPath".into(),
                json!(scale.status_replicas_path),
            );
            sub.insert("scale".into(), Value::Object(sc));
        }
        entry.insert("subresources".into(), Value::Object(sub));
    }
    let mut version = Version {
        root_path,
        path_in_file,
        attrs,
        plural,
        singular,
        entry: Value::Object(entry),
        schema_yaml: None,
        location,
        needs_code,
        empty_lists,
    };
    version.set_schema(schema);
    Some(version)
}

/// The raw schema of the struct kube-derive generates: `spec` (or the
/// spec's fields with `no_spec`), an optional `status`, the doc, the title.
fn root_schema<'a>(
    module: &'a Module,
    s: SpecItem<'a>,
    attrs: &KubeAttrs,
    code: &KubeCode,
    root_name: &str,
    builder: &mut Builder<'a>,
    path: &str,
) -> Value {
    let scope = Scope::new(module);
    let spec = match s {
        SpecItem::Struct(s) => builder.struct_schema(s, &scope, &format!("{path}.spec")),
        SpecItem::Enum(e) => builder.enum_schema(e, &scope, &format!("{path}.spec")),
    };
    let mut root = json!({"type": "object"});
    if attrs.no_spec {
        let mut child = spec;
        if let Value::Object(o) = &mut child
            && o.get("additionalProperties") == Some(&Value::Bool(false))
        {
            o.remove("additionalProperties");
        }
        flatten(&mut root, child);
    } else {
        let obj = ensure_object(&mut root);
        obj.insert("properties".into(), object([("spec", spec)]));
        obj.insert("required".into(), json!(["spec"]));
    }
    if let Some(status) = &code.status {
        let ty = syn::Type::Path(syn::TypePath {
            qself: None,
            path: status.clone(),
        });
        let status = builder.type_schema(&ty, &scope, &format!("{path}.status"));
        let status_schema = builder.optional(status);
        let obj = ensure_object(&mut root);
        obj.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .expect("properties is an object")
            .insert("status".into(), status_schema);
    }
    let spec_ident = s.ident().to_string();
    let doc = attrs.doc.clone().unwrap_or_else(|| {
        format!(" Auto-generated derived type for {spec_ident} via `CustomResource`")
    });
    let doc = doc.strip_prefix(' ').unwrap_or(&doc);
    let (title, description) = builder.split_doc(doc);
    let obj = ensure_object(&mut root);
    if let Some(t) = title {
        obj.insert("title".into(), json!(t));
    }
    if let Some(d) = description {
        obj.insert("description".into(), json!(d));
    }
    for rule in &code.validations {
        match crate::manifests::derive::schema::eval_cel_rule(rule) {
            Some(r) => match obj.get_mut("x-kubernetes-validations") {
                Some(Value::Array(rules)) => rules.push(r),
                _ => {
                    obj.insert("x-kubernetes-validations".into(), json!([r]));
                }
            },
            None => builder.error(
                module,
                rule.span(),
                "rsop cannot evaluate this validation rule",
                "write a string literal, a `(rule, message)` pair or a `Rule::new(..)` chain",
                path,
            ),
        }
    }
    // Before kube-derive 4, the root of a kind with validation rules was a
    // `KubeSchema` whose schema name, and so title, had a `Validated` suffix;
    // in 0.98 and 0.99, a `CELSchema` whose name ended in `_kube_validation`.
    let title = if builder.kube_derive < (1, 0, 0) && !code.validations.is_empty() {
        format!("{root_name}_kube_validation")
    } else if builder.kube_derive < (4, 0, 0) && !code.validations.is_empty() {
        format!("{root_name}Validated")
    } else {
        root_name.to_string()
    };
    obj.entry("title").or_insert_with(|| json!(title));
    root
}

/// Merges versions into CRDs, one per group and kind; problems (no or
/// several storage versions, scope or names that differ) are reported.
///
/// A `merge_crds(..., "vN")` call of the project's (`choices`) decides the
/// storage version of the kinds it merges, as kube's `merge_crds` does.
/// `storage_key`: the project's kube-derive has `#[kube(storage)]` (0.98
/// and later), which the help may then suggest.
pub fn merge(
    versions: Vec<Version>,
    choices: &[StorageChoice],
    storage_key: bool,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Crd> {
    // Every (type name, version) of the crate, to tell a `merge_crds` call
    // that fits another kind of the same name from one that fits none.
    let all_versions: Vec<(String, String)> = versions
        .iter()
        .map(|v| (root_name(v), v.attrs.version.clone()))
        .collect();
    let mut by_kind: BTreeMap<(String, String), Vec<Version>> = BTreeMap::new();
    for v in versions {
        by_kind
            .entry((v.attrs.group.clone(), v.attrs.kind.clone()))
            .or_default()
            .push(v);
    }
    let mut out = Vec::new();
    for ((group, kind), mut versions) in by_kind {
        versions.sort_by(|a, b| {
            version_priority(&b.attrs.version).cmp(&version_priority(&a.attrs.version))
        });
        let mut ok = true;
        // A call names the kinds it merges by their types' names: it
        // applies to the kind of that name that has the version it stores.
        let calls: Vec<&StorageChoice> = choices
            .iter()
            .filter(|c| versions.iter().any(|v| c.roots.contains(&root_name(v))))
            .collect();
        if let Some(choice) = calls
            .iter()
            .find(|c| versions.iter().any(|v| v.attrs.version == c.version))
        {
            for v in &mut versions {
                v.attrs.storage = v.attrs.version == choice.version;
                v.entry["storage"] = json!(v.attrs.storage);
            }
        } else if let Some(choice) = calls.iter().find(|c| {
            !all_versions
                .iter()
                .any(|(r, version)| c.roots.contains(r) && *version == c.version)
        }) {
            diagnostics.push(
                Diagnostic::new(
                    choice.location.clone(),
                    format!(
                        "`merge_crds` stores version `{}` of `{kind}.{group}`, which has no such version",
                        choice.version
                    ),
                )
                .with_help(format!(
                    "name one of its versions: {}",
                    versions
                        .iter()
                        .map(|v| format!("`{}`", v.attrs.version))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
            continue;
        }
        let mut names = BTreeMap::new();
        for v in &versions {
            if let Some(first) = names.insert(v.attrs.version.clone(), v.location.clone()) {
                diagnostics.push(
                    Diagnostic::new(
                        v.location.clone(),
                        format!(
                            "version `{}` of `{kind}.{group}` is defined twice",
                            v.attrs.version
                        ),
                    )
                    .with_help(format!("the other definition is at {first}")),
                );
                ok = false;
            }
        }
        let storage: Vec<&Version> = versions.iter().filter(|v| v.attrs.storage).collect();
        if storage.len() != 1 {
            let at = storage
                .get(1)
                .map_or(&versions[0].location, |v| &v.location)
                .clone();
            let listed = storage
                .iter()
                .map(|v| format!("`{}`", v.attrs.version))
                .collect::<Vec<_>>()
                .join(", ");
            diagnostics.push(
                Diagnostic::new(
                    at,
                    if storage.is_empty() {
                        format!("no version of `{kind}.{group}` is the storage version")
                    } else {
                        format!("`{kind}.{group}` has several storage versions: {listed}")
                    },
                )
                .with_help(if !storage_key {
                    format!(
                        "exactly one version is stored: merge the versions with `kube::core::crd::merge_crds(vec![{}], \"{}\")` (kube-derive before 0.98 has no `#[kube(storage)]`)",
                        versions
                            .iter()
                            .map(|v| format!("{}::crd()", v.root_path))
                            .collect::<Vec<_>>()
                            .join(", "),
                        versions[0].attrs.version
                    )
                } else if storage.is_empty() {
                    "exactly one version is stored: mark it with `#[kube(storage)]`, or name it in a `merge_crds(vec![...], \"vN\")` call".to_string()
                } else {
                    format!(
                        "exactly one version is stored, and no `merge_crds(vec![...], \"vN\")` call of the crate names it: mark the others with `#[kube(storage = false)]`, or merge the versions with `kube::core::crd::merge_crds(vec![{}], \"{}\")`",
                        versions
                            .iter()
                            .map(|v| format!("{}::crd()", v.root_path))
                            .collect::<Vec<_>>()
                            .join(", "),
                        versions[0].attrs.version
                    )
                }),
            );
            ok = false;
        }
        let first = &versions[0];
        for v in &versions[1..] {
            let same = v.attrs.namespaced == first.attrs.namespaced
                && v.plural == first.plural
                && v.singular == first.singular
                && v.attrs.shortnames == first.attrs.shortnames
                && v.attrs.categories == first.attrs.categories;
            if !same {
                diagnostics.push(
                    Diagnostic::new(v.location.clone(), format!("version `{}` of `{kind}.{group}` differs from version `{}` in scope or names", v.attrs.version, first.attrs.version))
                        .with_help("all versions of a kind share `namespaced`, `plural`, `singular`, `shortname` and `category`"),
                );
                ok = false;
            }
        }
        if !ok {
            continue;
        }
        let stored = storage[0];
        if names::is_protected_group(&group) {
            let approval = stored
                .attrs
                .annotations
                .iter()
                .rev()
                .find(|(key, _)| key == names::API_APPROVED_ANNOTATION)
                .map(|(_, value)| value.as_str());
            if let Some(reason) = names::api_approval_problem(approval) {
                diagnostics.push(
                    Diagnostic::new(
                        stored.location.clone(),
                        format!(
                            "the API server refuses the CRD of `{kind}.{group}`: `{group}` is a protected group and {reason}"
                        ),
                    )
                    .with_help(format!(
                        "add `annotation(\"{}\", \"<URL of the pull request that approved the API>\")` \
                         to the `#[kube(...)]` of version `{}`, or a value that starts with `unapproved`, \
                         such as `\"unapproved, experimental-only\"`; `k8s.io` and `kubernetes.io` are \
                         for APIs approved in Kubernetes API review, so another group may suit better",
                        names::API_APPROVED_ANNOTATION,
                        stored.attrs.version
                    )),
                );
            }
        }
        let mut names = Map::new();
        if !stored.attrs.categories.is_empty() || stored.empty_lists {
            names.insert("categories".into(), json!(stored.attrs.categories));
        }
        names.insert("kind".into(), json!(kind));
        names.insert("plural".into(), json!(stored.plural));
        if !stored.attrs.shortnames.is_empty() || stored.empty_lists {
            names.insert("shortNames".into(), json!(stored.attrs.shortnames));
        }
        names.insert("singular".into(), json!(stored.singular));
        let mut metadata = Map::new();
        if !stored.attrs.annotations.is_empty() {
            let a: BTreeMap<&String, &String> = stored
                .attrs
                .annotations
                .iter()
                .map(|(k, v)| (k, v))
                .collect();
            metadata.insert("annotations".into(), json!(a));
        }
        if !stored.attrs.labels.is_empty() {
            let l: BTreeMap<&String, &String> =
                stored.attrs.labels.iter().map(|(k, v)| (k, v)).collect();
            metadata.insert("labels".into(), json!(l));
        }
        metadata.insert("name".into(), json!(format!("{}.{group}", stored.plural)));
        let scope = if stored.attrs.namespaced {
            "Namespaced"
        } else {
            "Cluster"
        };
        let plural = stored.plural.clone();
        // The versions are done with: their entries move into the
        // document, their schemas' YAML beside it.
        let schemas: Vec<String> = versions
            .iter_mut()
            .filter_map(|v| v.schema_yaml.take())
            .collect();
        let entries: Vec<Value> = versions.into_iter().map(|v| v.entry).collect();
        let document = object([
            ("apiVersion", "apiextensions.k8s.io/v1".into()),
            ("kind", "CustomResourceDefinition".into()),
            ("metadata", Value::Object(metadata)),
            (
                "spec",
                object([
                    ("group", group.as_str().into()),
                    ("names", Value::Object(names)),
                    ("scope", scope.into()),
                    ("versions", Value::Array(entries)),
                ]),
            ),
        ]);
        out.push(Crd {
            group,
            plural,
            document,
            schemas,
        });
    }
    out
}

/// Kubernetes' version priority: GA before beta before alpha, higher
/// numbers first; others last, by name.
/// The name of the type kube-derive generates for a version (`Widget`).
fn root_name(v: &Version) -> String {
    v.root_path.rsplit("::").next().unwrap_or("").to_string()
}

fn version_priority(v: &str) -> (u8, u64, u64, String) {
    let rest = v.strip_prefix('v').unwrap_or("");
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let major: u64 = digits.parse().unwrap_or(0);
    let tail = &rest[digits.len()..];
    if digits.is_empty() {
        return (0, 0, 0, v.to_string());
    }
    if tail.is_empty() {
        return (3, major, 0, String::new());
    }
    for (prefix, rank) in [("beta", 2), ("alpha", 1)] {
        if let Some(n) = tail.strip_prefix(prefix)
            && let Ok(minor) = n.parse::<u64>()
        {
            return (rank, major, minor, String::new());
        }
    }
    (0, 0, 0, v.to_string())
}

/// kube's transforms of a root schema; a schema they refuse (kube-derive's
/// `crd()` panics on it) is reported, with `fix` as the help.
fn finalize(
    raw: Value,
    builder: &mut Builder<'_>,
    location: &Location,
    path: &str,
    fix: &str,
) -> Option<Value> {
    match transform::finalize(raw, builder.model) {
        Ok(mut schema) => {
            validation_fields_of(&mut schema, builder.k8s.feature());
            Some(schema)
        }
        Err(e) => {
            builder.diagnostics.push(
                Diagnostic::new(location.clone(), e.to_string())
                    .with_field_path(e.field_path(path))
                    .with_help(format!("kube-derive's `crd()` panics on this; {fix}")),
            );
            None
        }
    }
}

/// The round trip through k8s-openapi's `JSONSchemaProps` of Kubernetes
/// `feature` (`v1_XX`): before 1.23 it has no `x-kubernetes-validations`,
/// and its `ValidationRule` has `rule` and `message` only, then
/// `messageExpression` (1.27), `fieldPath` and `reason` (1.28) and
/// `optionalOldSelf` (1.29). What it lacks, kube-derive's CRD drops.
fn validation_fields_of(schema: &mut Value, feature: &str) {
    let Some(minor) = feature
        .strip_prefix("v1_")
        .and_then(|m| m.parse::<u32>().ok())
    else {
        return;
    };
    if minor >= 29 {
        return;
    }
    let kept: &[&str] = match minor {
        0..=22 => &[],
        23..=26 => &["rule", "message"],
        27 => &["rule", "message", "messageExpression"],
        _ => &[
            "rule",
            "message",
            "messageExpression",
            "fieldPath",
            "reason",
        ],
    };
    keep_rule_fields(schema, kept);
}

/// Keeps the `kept` fields of every validation rule under `value`, or no
/// `x-kubernetes-validations` at all when `kept` is empty.
fn keep_rule_fields(value: &mut Value, kept: &[&str]) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Array(rules)) = map.get_mut("x-kubernetes-validations") {
                if kept.is_empty() {
                    map.remove("x-kubernetes-validations");
                } else {
                    for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                        rule.retain(|key, _| kept.contains(&key.as_str()));
                    }
                }
            }
            for child in map.values_mut() {
                keep_rule_fields(child, kept);
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| keep_rule_fields(item, kept)),
        _ => {}
    }
}

/// With `schema = "manual"`, the root's schema is the project's own
/// `impl JsonSchema for <Kind>`; `None` unless its body is one rsop
/// evaluates. As schemars does for a root, a missing `title` is the
/// schema's name.
fn manual_root_schema(root_name: &str, builder: &mut Builder<'_>, path: &str) -> Option<Value> {
    let (module, imp) = builder.krate.manual_impl_of(root_name, "JsonSchema")?;
    let before = builder.diagnostics.len();
    let mut schema = builder.manual_impl_schema(module, imp, path)?;
    if builder.diagnostics.len() > before {
        builder.diagnostics.truncate(before);
        return None;
    }
    let title = builder
        .manual_schema_name(module, imp)
        .unwrap_or_else(|| root_name.to_string());
    ensure_object(&mut schema)
        .entry("title")
        .or_insert_with(|| Value::String(title));
    Some(schema)
}

#[cfg(test)]
mod tests {
    use super::{Sources, k8s, version_priority, versions};
    use crate::manifests::derive::schema::DEFAULT_KUBE_DERIVE;
    use crate::manifests::derive::schema::model::Model;
    use crate::manifests::diagnostics::Diagnostics;

    /// The versions and problems of `sources`, under rsop's own releases.
    fn derive(sources: &Sources) -> (Vec<super::Version>, Vec<super::Diagnostic>) {
        let found = versions(
            sources,
            k8s::Table::pinned(),
            DEFAULT_KUBE_DERIVE,
            Model::default(),
            true,
            &crate::manifests::read::ownership::Ownership::default(),
        );
        (found.versions, found.problems)
    }

    /// A generic type nested in itself with other arguments is no
    /// recursion; the same type with the same arguments inside is.
    #[test]
    fn nested_generic_instances_are_not_recursion() {
        let lib = "#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]\n\
             #[serde(untagged)]\n\
             pub enum Either<L, R> { Left(L), Right(R) }\n\
             pub type Inner = Either<i32, bool>;\n\
             #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]\n\
             pub struct Tree<T> { pub value: T, pub kids: Vec<Tree<T>> }\n\
             #[derive(kube::CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug, schemars::JsonSchema)]\n\
             #[kube(group = \"a.io\", version = \"v1\", kind = \"Nest\")]\n\
             pub struct NestSpec { pub either: Either<String, Inner> }\n\
             #[derive(kube::CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug, schemars::JsonSchema)]\n\
             #[kube(group = \"a.io\", version = \"v1\", kind = \"Grove\")]\n\
             pub struct GroveSpec { pub tree: Tree<String> }\n";
        let mut diagnostics = Diagnostics::default();
        let sources = Sources::from_sources(
            &[("src/lib.rs", lib)],
            Some("demo".into()),
            &mut diagnostics,
        );
        let (found, problems) = derive(&sources);
        let kinds: Vec<&str> = found.iter().map(|v| v.attrs.kind.as_str()).collect();
        assert_eq!(kinds, ["Nest"], "{problems:?}");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].message.contains("`Tree` contains itself"),
            "{problems:?}"
        );
    }

    #[test]
    fn kinds_under_src_external_have_no_crd() {
        let kind = |group: &str| {
            format!(
                "#[derive(kube::CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug, schemars::JsonSchema)]\n\
                 #[kube(group = \"{group}\", version = \"v1\", kind = \"Widget\", namespaced)]\n\
                 pub struct WidgetSpec {{ pub size: i32 }}\n"
            )
        };
        let own = kind("apps.example.com");
        let other = kind("example.org");
        let sources = [
            ("src/lib.rs", "pub mod api;\npub mod external;\n"),
            ("src/api/mod.rs", own.as_str()),
            ("src/external/mod.rs", "pub mod example_org;\n"),
            ("src/external/example_org/mod.rs", other.as_str()),
        ];
        let mut diagnostics = Diagnostics::default();
        let sources = Sources::from_sources(&sources, Some("demo".into()), &mut diagnostics);
        let (found, problems) = derive(&sources);
        assert!(problems.is_empty(), "{problems:?}");
        let groups: Vec<&str> = found.iter().map(|v| v.attrs.group.as_str()).collect();
        assert_eq!(groups, ["apps.example.com"]);
    }

    /// Kinds whose types live in other files (another kind's among them),
    /// a hand-written impl, a constant, and a kind file with a syntax error:
    /// threads that start a new parse for every group derive exactly what one
    /// long-lived parse derives, and report the syntax error once.
    #[test]
    fn a_new_parse_per_group_derives_what_one_parse_derives() {
        let files = [
            ("src/lib.rs", "pub mod api;\npub mod shared;\n"),
            (
                "src/api/mod.rs",
                "pub mod a;\npub mod b;\npub mod broken;\n",
            ),
            (
                "src/api/a.rs",
                "use kube::CustomResource;\n\
                 #[derive(CustomResource, Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]\n\
                 #[kube(group = \"a.example.com\", version = \"v1\", kind = \"Alpha\", namespaced)]\n\
                 pub struct AlphaSpec {\n\
                     pub size: crate::shared::Size,\n\
                     pub extra: super::b::Extra,\n\
                     #[schemars(range(max = crate::shared::MAX))]\n\
                     pub count: i32,\n\
                 }\n",
            ),
            (
                "src/api/b.rs",
                "use kube::CustomResource;\n\
                 #[derive(CustomResource, Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]\n\
                 #[kube(group = \"b.example.com\", version = \"v1\", kind = \"Beta\")]\n\
                 pub struct BetaSpec {\n\
                     #[serde(default)]\n\
                     pub extra: Extra,\n\
                 }\n\
                 #[derive(Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]\n\
                 pub struct Extra { pub note: String }\n\
                 impl Default for Extra {\n\
                     fn default() -> Self { Extra { note: \"none\".into() } }\n\
                 }\n",
            ),
            (
                "src/api/broken.rs",
                "#[derive(kube::CustomResource)]\npub struct GammaSpec {\n",
            ),
            (
                "src/shared.rs",
                "#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]\n\
                 pub struct Size { pub value: i32 }\n\
                 pub const MAX: i32 = 5;\n",
            ),
        ];
        let derive = |budget: usize| {
            let mut diagnostics = Diagnostics::default();
            let sources = Sources::from_sources(&files, Some("demo".into()), &mut diagnostics)
                .with_parse_budget(budget);
            let (found, problems) = derive(&sources);
            let kinds: Vec<(String, serde_json::Value)> = found
                .into_iter()
                .map(|v| {
                    let schema = v.schema();
                    (v.attrs.kind, schema)
                })
                .collect();
            let mut problems: Vec<String> = problems
                .into_iter()
                .chain(diagnostics.into_sorted())
                .map(|d| format!("{}: {}", d.location, d.message))
                .collect();
            problems.sort();
            (kinds, problems)
        };
        let (kinds, problems) = derive(usize::MAX);
        assert_eq!(derive(0), (kinds.clone(), problems.clone()));
        let names: Vec<&str> = kinds.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["Alpha", "Beta"]);
        let alpha = &kinds[0].1["openAPIV3Schema"]["properties"]["spec"]["properties"];
        assert_eq!(alpha["size"]["properties"]["value"]["type"], "integer");
        assert_eq!(alpha["extra"]["properties"]["note"]["type"], "string");
        assert_eq!(alpha["count"]["maximum"], 5.0);
        let beta = &kinds[1].1["openAPIV3Schema"]["properties"]["spec"]["properties"];
        assert_eq!(
            beta["extra"]["default"],
            serde_json::json!({"note": "none"})
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("src/api/broken.rs:"),
            "{problems:?}"
        );
    }

    /// Files without kinds are parsed only for what a kind needs from them:
    /// a hand `impl Default` in another module is found (the first, in load
    /// order, wins), a syntax error in a file read for an impl is reported,
    /// and one in a file that no kind needs (a controller) is cargo's to
    /// report, as rsop never reads it.
    #[test]
    fn files_without_kinds_are_read_for_the_impls_kinds_need() {
        let kind = "use kube::CustomResource;\nuse crate::types::Extra;\n\
             #[derive(CustomResource, Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]\n\
             #[kube(group = \"a.example.com\", version = \"v1\", kind = \"Alpha\")]\n\
             pub struct AlphaSpec {\n\
                 #[serde(default)]\n\
                 pub extra: Extra,\n\
                 #[serde(default = \"Extra::count\")]\n\
                 pub count: i32,\n\
             }\n";
        let types = "#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]\n\
             pub struct Extra { pub note: String }\n";
        let defaults = "use crate::types::Extra;\n\
             impl Default for Extra {\n\
                 fn default() -> Self { Extra { note: \"first\".into() } }\n\
             }\n\
             impl Extra { pub fn count() -> i32 { 3 } }\n";
        let later = "impl Default for crate::types::Extra {\n\
                 fn default() -> Self { Self { note: \"second\".into() } }\n\
             }\n";
        let run = |defaults: &str, controller: &str| {
            let files = [
                (
                    "src/lib.rs",
                    "pub mod api;\npub mod defaults;\npub mod later;\npub mod types;\npub mod controller;\n",
                ),
                ("src/api.rs", kind),
                ("src/defaults.rs", defaults),
                ("src/later.rs", later),
                ("src/types.rs", types),
                ("src/controller.rs", controller),
            ];
            let mut diagnostics = Diagnostics::default();
            let sources = Sources::from_sources(&files, Some("demo".into()), &mut diagnostics);
            let (found, problems) = derive(&sources);
            let problems: Vec<String> = problems
                .into_iter()
                .chain(diagnostics.into_sorted())
                .map(|d| format!("{}: {}", d.location, d.message))
                .collect();
            (found, problems)
        };
        let (found, problems) = run(defaults, "impl Broken for {\n");
        assert!(problems.is_empty(), "{problems:?}");
        let schema = found[0].schema();
        let spec = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"];
        assert_eq!(
            spec["extra"]["default"],
            serde_json::json!({"note": "first"})
        );
        assert_eq!(spec["count"]["default"], 3);

        let (_, problems) = run("impl Default for Extra {\n", "");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("src/defaults.rs:"), "{problems:?}");
    }

    #[test]
    fn versions_sort_like_kubernetes() {
        let mut v = vec!["v1alpha1", "v2", "v1beta1", "v1", "v1beta2", "foo"];
        v.sort_by_key(|x| std::cmp::Reverse(version_priority(x)));
        assert_eq!(v, ["v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"]);
    }
}
