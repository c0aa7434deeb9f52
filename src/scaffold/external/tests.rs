use std::path::Path;

use super::*;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/external/cert-manager.yaml")
}

/// The types of a CRD given as YAML text, written to a temporary file.
fn types_of(yaml: &str) -> Result<ExternalKind> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crd.yaml");
    std::fs::write(&path, yaml).unwrap();
    read(&path, None, None)
}

/// A CRD of kind `Widget` whose spec has the given schema.
fn widget(spec: &str) -> String {
    let mut indented = String::new();
    for line in spec.lines() {
        indented.push_str("              ");
        indented.push_str(line);
        indented.push('\n');
    }
    let spec = indented;
    format!(
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.org
spec:
  group: example.org
  names: {{kind: Widget, plural: widgets}}
  scope: Cluster
  versions:
    - name: v1beta1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
{spec}"
    )
}

/// The generated code must be Rust: syn parses it.
fn assert_parses(code: &str) {
    if let Err(e) = syn::parse_file(code) {
        panic!("the generated code does not parse: {e}\n{code}");
    }
}

#[test]
fn the_storage_version_of_the_chosen_kind() {
    let k = read(&fixture(), Some("Certificate"), None).unwrap();
    assert_eq!(
        (k.group.as_str(), k.version.as_str(), k.kind.as_str()),
        ("cert-manager.io", "v1", "Certificate")
    );
    assert_eq!(k.plural, "certificates");
    assert!(k.namespaced);
    assert_eq!(k.group_module(), "cert_manager_io");
    let code = &k.code;
    assert_parses(code);
    for expected in [
        "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]",
        "    group = \"cert-manager.io\",",
        "    version = \"v1\",",
        "    plural = \"certificates\",",
        "    namespaced,",
        "    status = \"CertificateStatus\",",
        "    schema = \"disabled\"",
        "pub struct CertificateSpec {",
        // Required fields are plain, others optional.
        "    pub issuer_ref: CertificateIssuerRef,",
        "    pub secret_name: String,",
        "    pub dns_names: Option<Vec<String>>,",
        // `isCA` is not what serde makes of `is_ca`.
        "    #[serde(rename = \"isCA\", default, skip_serializing_if = \"Option::is_none\")]\n    pub is_ca: Option<bool>,",
        "    pub renew_before_percentage: Option<i32>,",
        "    pub renewal_window: Option<IntOrString>,",
        "    pub issuer_options: Option<serde_json::Value>,",
        "    pub size: Option<i64>,",
        // Nested objects, named after their parents.
        "pub struct CertificateKeystoresJks {",
        "    pub password_secret_ref: CertificateKeystoresJksPasswordSecretRef,",
        "    pub annotations: Option<BTreeMap<String, String>>,",
        "    pub additional_output_formats: Option<Vec<CertificateAdditionalOutputFormats>>,",
        "    pub r#type: String,",
        "    /// One of: `\"RSA\"`, `\"ECDSA\"`, `\"Ed25519\"`.\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub algorithm: Option<String>,",
        // The status and its own nested types.
        "pub struct CertificateStatus {",
        "    pub conditions: Option<Vec<CertificateStatusConditions>>,",
        "pub struct CertificateStatusConditions {",
        "    pub observed_generation: Option<i64>,",
        // A nullable field is optional.
        "    pub revision_history_limit: Option<i32>,",
        // Descriptions, line by line, list items unindented.
        "/// What certificate to issue.\n///\n/// The issuer named by `issuerRef` signs it;",
        "    /// The key size in bits:\n    /// - RSA: 2048, 4096 or 8192\n",
        "use std::collections::BTreeMap;",
        "use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;",
    ] {
        assert!(code.contains(expected), "missing {expected:?} in:\n{code}");
    }
    // The fields of the CRD's metadata, apiVersion and kind are kube's.
    assert!(!code.contains("pub api_version"), "{code}");
}

#[test]
fn another_kind_and_version_of_the_same_file() {
    let k = read(&fixture(), Some("Issuer"), None).unwrap();
    assert_eq!(k.kind, "Issuer");
    assert!(!k.code.contains("status ="), "no status schema: {}", k.code);
    assert!(
        k.code.contains("pub struct IssuerSelfSigned {"),
        "{}",
        k.code
    );
    assert_parses(&k.code);

    let err = read(&fixture(), Some("Certificate"), Some("v1alpha2")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "version `v1alpha2` of `Certificate` is not served"
    );
    let err = read(&fixture(), Some("Certificate"), Some("v2")).unwrap_err();
    assert_eq!(err.help(), Some("pick one of its versions: v1alpha2, v1"));
}

#[test]
fn a_directory_is_read_file_by_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(), dir.path().join("a.yaml")).unwrap();
    std::fs::write(dir.path().join("b.yml"), widget("type: object")).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not yaml: [").unwrap();
    let k = read(dir.path(), Some("Widget"), None).unwrap();
    assert_eq!((k.kind.as_str(), k.namespaced), ("Widget", false));
    assert!(k.source.ends_with("b.yml"));
    assert!(k.code.contains("pub struct WidgetSpec {}"), "{}", k.code);
    assert_parses(&k.code);

    let err = read(dir.path(), None, None).unwrap_err();
    assert!(err.to_string().ends_with("holds 3 CRDs"), "{err}");
    assert_eq!(
        err.help(),
        Some("pick one with `--kind`: Certificate, Issuer, Widget")
    );
}

#[test]
fn names_that_are_not_rust_identifiers() {
    let k = types_of(&widget(
        "type: object
required: [self, type]
properties:
  type: {type: string}
  self: {type: boolean}
  URIs: {type: array, items: {type: string}}
  x-forwarded-for: {type: string}
  9lives: {type: integer}
  fooBar: {type: object, properties: {a: {type: string}}}
  foo_bar: {type: object, properties: {b: {type: string}}}
  foo-bar: {type: string}
  async: {type: number}",
    ))
    .unwrap();
    let code = &k.code;
    assert_parses(code);
    for expected in [
        "    pub r#type: String,",
        // serde's camelCase drops the trailing underscore: no rename needed.
        "\n    pub self_: bool,",
        "    #[serde(rename = \"URIs\", default, skip_serializing_if = \"Option::is_none\")]\n    pub ur_is: Option<Vec<String>>,",
        "    #[serde(rename = \"x-forwarded-for\", default, skip_serializing_if = \"Option::is_none\")]\n    pub x_forwarded_for: Option<String>,",
        "    #[serde(rename = \"9lives\", default, skip_serializing_if = \"Option::is_none\")]\n    pub field_9lives: Option<i64>,",
        // Three keys of one snake-case name, and two types of one name.
        "    pub foo_bar: Option<WidgetFooBar>,",
        "    #[serde(rename = \"foo_bar\", default, skip_serializing_if = \"Option::is_none\")]\n    pub foo_bar_2: Option<WidgetFooBar2>,",
        "    #[serde(rename = \"foo-bar\", default, skip_serializing_if = \"Option::is_none\")]\n    pub foo_bar_3: Option<String>,",
        "pub struct WidgetFooBar {",
        "pub struct WidgetFooBar2 {",
        "    pub r#async: Option<f64>,",
    ] {
        assert!(code.contains(expected), "missing {expected:?} in:\n{code}");
    }
    // Cluster-scoped: no `namespaced`.
    assert!(!code.contains("    namespaced,"), "{code}");
}

#[test]
fn open_and_mapped_schemas() {
    let k = types_of(&widget(
        "type: object
properties:
  anything: {}
  free: {type: object}
  kept: {type: object, x-kubernetes-preserve-unknown-fields: true}
  untypedList: {type: array}
  counts: {type: object, additionalProperties: {type: integer, format: int32}}
  open: {type: object, additionalProperties: true}
  byName:
    type: object
    additionalProperties:
      type: object
      properties:
        port: {x-kubernetes-int-or-string: true}
  matrix: {type: array, items: {type: array, items: {type: number}}}
  docs:
    description: \"Indented text is no doctest:\\n\\n    let x = 1;\\n```\\nnor a fence\\n```\"
    type: string",
    ))
    .unwrap();
    let code = &k.code;
    assert_parses(code);
    for expected in [
        "    pub anything: Option<serde_json::Value>,",
        "    pub free: Option<BTreeMap<String, serde_json::Value>>,",
        "    pub kept: Option<serde_json::Value>,",
        "    pub untyped_list: Option<Vec<serde_json::Value>>,",
        "    pub counts: Option<BTreeMap<String, i32>>,",
        "    pub open: Option<BTreeMap<String, serde_json::Value>>,",
        "    pub by_name: Option<BTreeMap<String, WidgetByName>>,",
        "pub struct WidgetByName {\n",
        "    pub port: Option<IntOrString>,",
        "    pub matrix: Option<Vec<Vec<f64>>>,",
        "    /// Indented text is no doctest:\n    ///\n    /// let x = 1;\n    /// \\`\\`\\`\n",
    ] {
        assert!(code.contains(expected), "missing {expected:?} in:\n{code}");
    }
}

#[test]
fn input_that_is_not_a_crd_of_the_kind() {
    let err = types_of("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n").unwrap_err();
    assert!(
        err.to_string()
            .ends_with("holds no CustomResourceDefinition"),
        "{err}"
    );
    let err = types_of("a: [").unwrap_err();
    assert!(matches!(err, Error::Parse { .. }), "{err:?}");
    let err =
        types_of("apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\n")
            .unwrap_err();
    assert!(
        err.to_string().contains("`apiextensions.k8s.io/v1beta1`"),
        "{err}"
    );

    let err = read(&fixture(), Some("Certificat"), None).unwrap_err();
    assert!(
        err.to_string().ends_with("has no CRD of kind `Certificat`"),
        "{err}"
    );
    assert_eq!(err.help(), Some("did you mean `--kind Certificate`?"));
    let err = read(&fixture(), Some("Gateway"), None).unwrap_err();
    assert_eq!(err.help(), Some("it has CRDs of: Certificate, Issuer"));

    let err = read(Path::new("/nonexistent/crd.yaml"), None, None).unwrap_err();
    assert_eq!(err.to_string(), "`/nonexistent/crd.yaml` does not exist");

    let no_spec = widget("type: object").replace("            spec:\n", "            other:\n");
    let err = types_of(&no_spec).unwrap_err();
    assert!(err.to_string().contains("has no `spec`"), "{err}");
}
