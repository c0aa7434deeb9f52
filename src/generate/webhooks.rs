//! The webhook parts of what `config/default` renders, as the packagers see
//! them: the Mutating/ValidatingWebhookConfigurations `rsop manifests`
//! writes, the Service in front of the manager's webhook server, the
//! cert-manager objects that issue its certificate, the Deployment's volume
//! for that certificate and the CA-injection annotations.
//!
//! Everything is found by kind and by reference, not by name, so a project
//! that renamed its Service or secret still packages.

use std::collections::BTreeSet;

use serde_yaml_ng::Value;

use super::{kind, name};
use crate::yaml::{get, get_str};

/// The annotations by which cert-manager's CA injector fills in `caBundle`.
pub const CA_INJECTION: [&str; 3] = [
    "cert-manager.io/inject-ca-from",
    "cert-manager.io/inject-ca-from-secret",
    "cert-manager.io/inject-apiserver-ca",
];

/// Where OLM mounts the serving certificate it makes for a webhook
/// (`tls.crt`, `tls.key`), which is also the manager's default
/// `--webhook-cert-path`.
pub const OLM_CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";

pub fn is_configuration(object: &Value) -> bool {
    matches!(
        kind(object),
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration"
    )
}

/// An object of cert-manager's API (Issuer, Certificate, ...).
pub fn is_cert_manager(object: &Value) -> bool {
    get_str(object, &["apiVersion"]).is_some_and(|v| v.starts_with("cert-manager.io/"))
}

/// The webhooks of a webhook configuration.
pub fn hooks(configuration: &Value) -> &[Value] {
    configuration
        .get("webhooks")
        .and_then(Value::as_sequence)
        .map_or(&[], Vec::as_slice)
}

/// The conversion webhook of a CRD whose strategy is `Webhook`.
pub fn conversion(crd: &Value) -> Option<&Value> {
    (get_str(crd, &["spec", "conversion", "strategy"]) == Some("Webhook"))
        .then(|| get(crd, &["spec", "conversion", "webhook"]))
        .flatten()
}

/// The names of the Services that webhook configurations and CRD
/// conversions send requests to.
pub fn service_names(objects: &[Value]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for object in objects {
        let configs: Vec<&Value> = if is_configuration(object) {
            hooks(object).iter().collect()
        } else if kind(object) == "CustomResourceDefinition" {
            conversion(object).into_iter().collect()
        } else {
            Vec::new()
        };
        for config in configs {
            if let Some(service) = get_str(config, &["clientConfig", "service", "name"]) {
                names.insert(service.to_string());
            }
        }
    }
    names
}

/// The Services of [`service_names`].
pub fn is_webhook_service(object: &Value, services: &BTreeSet<String>) -> bool {
    kind(object) == "Service" && services.contains(name(object))
}

/// The secrets cert-manager Certificates write.
pub fn certificate_secrets(objects: &[Value]) -> BTreeSet<String> {
    objects
        .iter()
        .filter(|o| is_cert_manager(o) && kind(o) == "Certificate")
        .filter_map(|o| get_str(o, &["spec", "secretName"]))
        .map(str::to_string)
        .collect()
}

/// Whether any object holds a CA-injection annotation.
pub fn has_ca_injection(object: &Value) -> bool {
    get(object, &["metadata", "annotations"])
        .and_then(Value::as_mapping)
        .is_some_and(|a| CA_INJECTION.iter().any(|k| a.contains_key(*k)))
}

/// `object` without CA-injection annotations (and without an annotations
/// mapping they leave empty).
pub fn strip_ca_injection(object: &mut Value) {
    let Some(metadata) = object.get_mut("metadata").and_then(Value::as_mapping_mut) else {
        return;
    };
    let Some(annotations) = metadata
        .get_mut("annotations")
        .and_then(Value::as_mapping_mut)
    else {
        return;
    };
    for key in CA_INJECTION {
        annotations.shift_remove(key);
    }
    if annotations.is_empty() {
        metadata.shift_remove("annotations");
    }
}

/// The volumes of a pod spec that mount one of `secrets`, by name, with
/// the paths the containers mount them at.
pub fn secret_volumes(pod: &Value, secrets: &BTreeSet<String>) -> (Vec<String>, Vec<String>) {
    let volumes: Vec<String> = pod
        .get("volumes")
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .filter(|v| get_str(v, &["secret", "secretName"]).is_some_and(|s| secrets.contains(s)))
        .filter_map(|v| get_str(v, &["name"]).map(str::to_string))
        .collect();
    let mut paths = Vec::new();
    for container in pod
        .get("containers")
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
    {
        for mount in container
            .get("volumeMounts")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
        {
            if get_str(mount, &["name"]).is_some_and(|n| volumes.iter().any(|v| v == n))
                && let Some(path) = get_str(mount, &["mountPath"])
            {
                paths.push(path.to_string());
            }
        }
    }
    (volumes, paths)
}

/// Whether `arg` is a `--flag=PATH` whose path lies in one of `dirs`.
pub fn points_into(arg: &str, dirs: &[String]) -> bool {
    let Some((_, value)) = arg.split_once('=') else {
        return false;
    };
    let value = value.trim_end_matches('/');
    dirs.iter().any(|dir| {
        let dir = dir.trim_end_matches('/');
        value == dir || value.starts_with(&format!("{dir}/"))
    })
}
