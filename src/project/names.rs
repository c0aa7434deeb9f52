//! Name rules: what Kubernetes, Cargo and Rust accept as a domain, a project
//! name, a crate name, a kind or an API version, checked before anything is
//! planned so a bad name never reaches a template; and the names derived
//! from them, such as kube-derive's plural of a kind, which scaffolding and
//! `rsop manifests` must agree on.

use heck::ToSnakeCase;

use crate::{Error, Result};

/// Longest project name whose objects' names all stay valid. The longest is
/// the metrics Service, `<name>-controller-manager-metrics-service`, and a
/// Service name is a DNS-1035 label of at most 63 characters.
pub const MAX_PROJECT_NAME_LEN: usize = 63 - METRICS_SERVICE_SUFFIX.len();

/// What kustomize's name prefix puts the project name in front of, in the
/// longest object name of `config/default`.
const METRICS_SERVICE_SUFFIX: &str = "-controller-manager-metrics-service";

/// Names Cargo refuses as package names, and the standard library crates a
/// package must not shadow.
const RESERVED_CRATE_NAMES: &[&str] = &[
    "alloc",
    "build",
    "core",
    "deps",
    "examples",
    "incremental",
    "proc-macro",
    "proc_macro",
    "std",
    "test",
];

/// Rust keywords (strict and reserved, all editions): none can name a crate
/// or a module.
pub const RUST_KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Kind names that would clash with what the generated code uses.
const RESERVED_KINDS: &[&str] = &[
    "Api",
    "Action",
    "ApiServer",
    "CachesReady",
    "Change",
    "Client",
    "Condition",
    "Context",
    "Controller",
    "Controllers",
    "Deployment",
    "Error",
    "Event",
    "Flags",
    "Index",
    "Instance",
    "Manager",
    "Metrics",
    "Object",
    "ObjectMeta",
    "Option",
    "PodIndex",
    "Reconciler",
    "Request",
    "Resource",
    "Result",
    "Self",
    "Shutdown",
    "State",
    "String",
    "Vec",
];

fn invalid(what: &str, value: &str, reason: &str, help: &str) -> Error {
    Error::user_with_help(format!("invalid {what} `{value}`: {reason}"), help)
}

/// Why `value` is not a DNS-1123 label (lowercase alphanumerics and `-`,
/// starting and ending with an alphanumeric, at most 63 characters).
fn dns1123_label_problem(value: &str) -> Option<String> {
    if value.is_empty() {
        return Some("it is empty".into());
    }
    if value.len() > 63 {
        return Some(format!(
            "it is {} characters long; the limit is 63",
            value.len()
        ));
    }
    if let Some(c) = value
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Some(format!(
            "`{c}` is not allowed; use lowercase letters, digits and `-`"
        ));
    }
    if value.starts_with('-') || value.ends_with('-') {
        return Some("it must start and end with a letter or a digit".into());
    }
    None
}

/// Checks a DNS-1123 label, such as an API group's first segment.
pub fn validate_dns1123_label(what: &str, value: &str) -> Result<()> {
    match dns1123_label_problem(value) {
        None => Ok(()),
        Some(reason) => Err(Error::user_with_help(
            format!("invalid {what} `{value}`: {reason}"),
            format!("a {what} must be a DNS-1123 label, for example `webapp`"),
        )),
    }
}

/// Checks a DNS-1123 subdomain: dot-separated labels, at most 253 characters.
pub fn validate_domain(value: &str) -> Result<()> {
    let fail = |reason: String| {
        Err(Error::user_with_help(
            format!("invalid domain `{value}`: {reason}"),
            "the domain must be a DNS-1123 subdomain such as `example.com`; \
             API groups are named `<group>.<domain>`",
        ))
    };
    if value.len() > 253 {
        return fail(format!(
            "it is {} characters long; the limit is 253",
            value.len()
        ));
    }
    for label in value.split('.') {
        if let Some(reason) = dns1123_label_problem(label) {
            let reason = if label.is_empty() {
                "it has an empty segment between dots".to_string()
            } else {
                format!("segment `{label}`: {reason}")
            };
            return fail(reason);
        }
    }
    Ok(())
}

/// Checks a project name: a DNS-1123 label (it names the namespace and every
/// object of the operator) that is also a valid Cargo package name.
pub fn validate_project_name(value: &str) -> Result<()> {
    let help = "the project name must be a DNS-1123 label that starts with a letter, \
                such as `memcached-operator`; pass it with `--project-name`";
    if let Some(reason) = dns1123_label_problem(value) {
        return Err(Error::user_with_help(
            format!("invalid project name `{value}`: {reason}"),
            help,
        ));
    }
    if !value.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(Error::user_with_help(
            format!("invalid project name `{value}`: it must start with a letter"),
            help,
        ));
    }
    if value.len() > MAX_PROJECT_NAME_LEN {
        return Err(Error::user_with_help(
            format!(
                "invalid project name `{value}`: it is {} characters long; the limit is \
                 {MAX_PROJECT_NAME_LEN} so that the metrics Service `{value}{METRICS_SERVICE_SUFFIX}` stays a valid name",
                value.len()
            ),
            help,
        ));
    }
    let crate_name = crate_name(value);
    if RESERVED_CRATE_NAMES.contains(&value) || RUST_KEYWORDS.contains(&crate_name.as_str()) {
        return Err(Error::user_with_help(
            format!("invalid project name `{value}`: Cargo reserves it or it is a Rust keyword"),
            help,
        ));
    }
    Ok(())
}

/// The Rust module of an API group: `cert-manager.io` is `cert_manager_io`.
pub fn group_module(group: &str) -> String {
    group.replace(['-', '.'], "_")
}

/// The Rust crate name of a project: `-` becomes `_`.
pub fn crate_name(project_name: &str) -> String {
    project_name.replace('-', "_")
}

/// A project name derived from a directory name, made into a DNS-1123 label
/// where that is a matter of case and separators (`My_Operator` becomes
/// `my-operator`). Validation still decides whether the result is usable.
pub fn project_name_from_dir(dir_name: &str) -> String {
    heck::ToKebabCase::to_kebab_case(dir_name)
}

/// Checks a kind of the project's own: `UpperCamelCase`, and neither its
/// name nor its module name (`GuestBook` lives in `guest_book`) clashes with
/// Rust or the generated code.
pub fn validate_kind(kind: &str) -> Result<()> {
    validate_kind_syntax(kind)?;
    if RESERVED_KINDS.contains(&kind) {
        return Err(invalid(
            "kind",
            kind,
            "the generated code uses that name",
            "a kind is UpperCamelCase, such as `Memcached` or `GuestBook`; \
             for a controller on Kubernetes' own kind, pass `--resource=false`",
        ));
    }
    Ok(())
}

/// Checks the spelling of a kind: `UpperCamelCase`, and its module name is
/// no Rust keyword. A kind defined elsewhere (a Kubernetes kind) may have a
/// name the project's own kinds may not: its type is imported by path.
pub fn validate_kind_syntax(kind: &str) -> Result<()> {
    let help = "a kind is UpperCamelCase, such as `Memcached` or `GuestBook`";
    let first_upper = kind.chars().next().is_some_and(|c| c.is_ascii_uppercase());
    if !first_upper || !kind.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(invalid(
            "kind",
            kind,
            "it must start with an uppercase letter and hold only letters and digits",
            help,
        ));
    }
    let module = kind.to_snake_case();
    if RUST_KEYWORDS.contains(&module.as_str()) || RUST_KEYWORDS.contains(&kind) {
        return Err(invalid(
            "kind",
            kind,
            &format!("its module name `{module}` is a Rust keyword"),
            help,
        ));
    }
    Ok(())
}

/// Checks a Kubernetes API version: `v1`, `v1beta1`, `v1alpha1`.
pub fn validate_version(version: &str) -> Result<()> {
    let rest = version.strip_prefix('v').unwrap_or("");
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let tail = &rest[digits..];
    let tail_ok = tail.is_empty()
        || ["alpha", "beta"].iter().any(|p| {
            tail.strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        });
    if digits == 0 || !tail_ok {
        return Err(invalid(
            "version",
            version,
            "it must match `v[0-9]+((alpha|beta)[0-9]+)?`",
            "use a Kubernetes API version such as `v1`, `v1beta1` or `v1alpha1`",
        ));
    }
    Ok(())
}

/// Checks the group, version and kind of a new API kind, and returns its
/// plural: `plural` when one is given (checked too), else kube-derive's.
pub fn validate_kind_names(
    group: &str,
    version: &str,
    kind: &str,
    plural: Option<&str>,
) -> Result<String> {
    validate_kind(kind)?;
    validate_version(version)?;
    validate_dns1123_label("group", group)?;
    match plural {
        Some(plural) => {
            validate_dns1123_label("plural", plural)?;
            Ok(plural.to_owned())
        }
        None => Ok(to_plural(&kind.to_ascii_lowercase())),
    }
}

/// A kind's full API group: `<group>.<domain>`.
pub fn group_full(group: &str, domain: &str) -> String {
    format!("{group}.{domain}")
}

/// An API group as the API server names it: kubebuilder's `core`, the
/// legacy group, is the empty group.
pub fn api_group(group: &str) -> &str {
    if group == "core" { "" } else { group }
}

/// The `apiVersion` of a group's version: `v1` for the legacy group, else
/// `<group>/<version>`.
pub fn api_version(group: &str, version: &str) -> String {
    match api_group(group) {
        "" => version.to_owned(),
        group => format!("{group}/{version}"),
    }
}

/// The annotation the API server requires on a CRD of a protected group.
pub const API_APPROVED_ANNOTATION: &str = "api-approved.kubernetes.io";

/// The value `create api` scaffolds for [`API_APPROVED_ANNOTATION`]: the
/// API server accepts any value that starts with `unapproved`.
pub const API_UNAPPROVED_VALUE: &str = "unapproved, request not yet submitted";

/// Whether the API server protects `group`: `k8s.io`, `kubernetes.io` and
/// their subdomains belong to the Kubernetes community, and a CRD in them
/// needs [`API_APPROVED_ANNOTATION`] (the apiextensions server's
/// `IsProtectedCommunityGroup`). `x-k8s.io`, which kubernetes-sigs projects
/// use, is not protected.
pub fn is_protected_group(group: &str) -> bool {
    ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|domain| group == *domain || group.ends_with(&format!(".{domain}")))
}

/// Why the API server refuses a protected group's CRD whose
/// [`API_APPROVED_ANNOTATION`] is `value`, or `None` when it accepts it:
/// the value must be the URL of the pull request that approved the API
/// (a scheme and a host), or start with `unapproved` (the apiextensions
/// server's `GetAPIApprovalState`).
pub fn api_approval_problem(value: Option<&str>) -> Option<&'static str> {
    let value = value.unwrap_or_default();
    if value.is_empty() {
        return Some("it has no `api-approved.kubernetes.io` annotation");
    }
    if value.starts_with("unapproved") {
        return None;
    }
    let url = value.split_once("://").is_some_and(|(scheme, rest)| {
        let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            && !host.is_empty()
            && !value.contains(char::is_whitespace)
    });
    (!url).then_some(
        "its `api-approved.kubernetes.io` annotation is neither a URL nor starts with `unapproved`",
    )
}

/// kube-derive's plural of a (lowercase) singular: `-es` after s, x, z, ch,
/// sh; `-ies` for a consonant before a final y; else `-s`.
pub fn to_plural(word: &str) -> String {
    if word.ends_with('s')
        || word.ends_with('x')
        || word.ends_with('z')
        || word.ends_with("ch")
        || word.ends_with("sh")
    {
        return format!("{word}es");
    }
    if word.ends_with('y')
        && word.len() >= 2
        && let Some(c) = word.chars().nth(word.len() - 2)
        && !matches!(c, 'a' | 'e' | 'i' | 'o' | 'u')
    {
        let mut chars = word.chars();
        chars.next_back();
        return format!("{}ies", chars.as_str());
    }
    format!("{word}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains() {
        for ok in ["example.com", "my.example.com", "a", "x-1.io"] {
            assert!(validate_domain(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "Example.com",
            "example..com",
            "-example.com",
            "example.com-",
            "exa_mple.com",
            "example.com.",
        ] {
            assert!(validate_domain(bad).is_err(), "{bad}");
        }
        assert!(validate_domain(&format!("{}.com", "a".repeat(64))).is_err());
    }

    #[test]
    fn project_names() {
        for ok in ["memcached-operator", "a", "op2"] {
            assert!(validate_project_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "1op",
            "Op",
            "op_erator",
            "op-",
            "test",
            "self",
            "std",
            &"a".repeat(29),
        ] {
            assert!(validate_project_name(bad).is_err(), "{bad}");
        }
        assert!(validate_project_name(&"a".repeat(28)).is_ok());
    }

    #[test]
    fn names_from_dirs() {
        assert_eq!(project_name_from_dir("My_Operator"), "my-operator");
        assert_eq!(
            project_name_from_dir("memcached-operator"),
            "memcached-operator"
        );
        assert_eq!(crate_name("memcached-operator"), "memcached_operator");
    }

    #[test]
    fn kinds() {
        for ok in ["Memcached", "GuestBook", "App2", "HTTPRoute"] {
            assert!(validate_kind(ok).is_ok(), "{ok}");
        }
        for bad in [
            "memcached",
            "Guest_Book",
            "Mem-cached",
            "Type",
            "Self",
            "Context",
            "",
        ] {
            assert!(validate_kind(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn versions() {
        for ok in ["v1", "v2", "v1beta1", "v10alpha3"] {
            assert!(validate_version(ok).is_ok(), "{ok}");
        }
        for bad in [
            "1",
            "v",
            "V1",
            "v1beta",
            "v1gamma1",
            "v1-beta1",
            "v1alpha1x",
        ] {
            assert!(validate_version(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn protected_groups_and_their_approval() {
        for group in [
            "k8s.io",
            "kubernetes.io",
            "a.k8s.io",
            "gateway.networking.k8s.io",
            "x.kubernetes.io",
        ] {
            assert!(is_protected_group(group), "{group}");
        }
        for group in [
            "cluster.x-k8s.io",
            "k8s.io.example.com",
            "mykubernetes.io",
            "example.com",
            "ak8s.io",
        ] {
            assert!(!is_protected_group(group), "{group}");
        }
        for ok in [
            "https://github.com/kubernetes/enhancements/pull/1111",
            "http://example.com",
            "unapproved, experimental-only",
            "unapproved",
            API_UNAPPROVED_VALUE,
        ] {
            assert_eq!(api_approval_problem(Some(ok)), None, "{ok}");
        }
        for bad in [
            None,
            Some(""),
            Some("yes"),
            Some("github.com/x"),
            Some("https://"),
            Some("Unapproved"),
        ] {
            assert!(api_approval_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn plurals_follow_kube_derive() {
        for (singular, plural) in [
            ("foo", "foos"),
            ("bus", "buses"),
            ("box", "boxes"),
            ("quiz", "quizes"),
            ("batch", "batches"),
            ("mesh", "meshes"),
            ("policy", "policies"),
            ("gateway", "gateways"),
            ("memcached", "memcacheds"),
            ("person", "persons"),
            ("validenum3", "validenum3s"),
            ("key", "keys"),
        ] {
            assert_eq!(to_plural(singular), plural, "{singular}");
        }
    }
}
