//! The chart's webhook parts, behind two values: `webhook.enabled` (the
//! webhook configurations, their Service, the manager's webhook port and the
//! volume of its certificate's secret, the CRDs' conversion through the
//! webhook, the webhook `NetworkPolicy`) and `certManager.enabled` (the
//! Issuer and Certificates, the CA-injection annotations, the volumes of
//! other certificates such as the metrics one).

use std::collections::BTreeSet;

use serde_yaml_ng::{Mapping, Value};

use super::holes::{Holes, block};
use super::{Chart, insert_sorted, yaml_lines};
use crate::generate::{kind, webhooks};
use crate::yaml::{get, get_str};

/// Webhook objects are rendered when this holds.
pub const WEBHOOK: &str = ".Values.webhook.enabled";
/// cert-manager's objects are rendered when this holds.
pub const CERT_MANAGER: &str = ".Values.certManager.enabled";
/// The webhook's certificate is rendered and mounted when this holds.
pub const WEBHOOK_CERT: &str = "and .Values.webhook.enabled .Values.certManager.enabled";

/// What the chart knows of the project's webhooks.
#[derive(Debug, Default)]
pub struct Webhooks {
    /// The Services the webhook configurations and conversions call.
    pub services: BTreeSet<String>,
    /// The secrets of the Certificates that name one of those Services.
    pub secrets: BTreeSet<String>,
    /// The secrets of the other Certificates (such as the metrics one).
    pub other_secrets: BTreeSet<String>,
    /// The manager's port the webhook Service forwards to.
    pub port: Option<u64>,
    /// cert-manager objects are among the rendered ones.
    pub cert_manager: bool,
}

impl Webhooks {
    pub fn of(objects: &[Value]) -> Self {
        let services = webhooks::service_names(objects);
        let mut secrets = BTreeSet::new();
        let mut other_secrets = BTreeSet::new();
        for certificate in objects
            .iter()
            .filter(|o| webhooks::is_cert_manager(o) && kind(o) == "Certificate")
        {
            let Some(secret) = get_str(certificate, &["spec", "secretName"]) else {
                continue;
            };
            let serves_webhooks = dns_names(certificate)
                .iter()
                .any(|n| services.contains(n.split('.').next().unwrap_or_default()));
            if serves_webhooks {
                secrets.insert(secret.to_string());
            } else {
                other_secrets.insert(secret.to_string());
            }
        }
        let port = objects
            .iter()
            .filter(|o| webhooks::is_webhook_service(o, &services))
            .filter_map(|s| get(s, &["spec", "ports"]).and_then(Value::as_sequence))
            .flatten()
            .find_map(|p| p.get("targetPort").and_then(Value::as_u64));
        Webhooks {
            services,
            secrets,
            other_secrets,
            port,
            cert_manager: objects.iter().any(webhooks::is_cert_manager),
        }
    }

    /// The project serves webhooks.
    pub fn any(&self) -> bool {
        !self.services.is_empty()
    }

    /// The condition under which the volume of `secret` is mounted: the
    /// webhook's whenever webhooks are served (the manager needs a
    /// certificate, from cert-manager or from a secret of that name the
    /// user makes), the others' only with cert-manager (without their
    /// secret the manager makes its own certificate).
    fn volume_condition(&self, secret: &str) -> Option<&'static str> {
        if self.secrets.contains(secret) {
            Some(WEBHOOK)
        } else if self.other_secrets.contains(secret) {
            Some(CERT_MANAGER)
        } else {
            None
        }
    }
}

fn dns_names(certificate: &Value) -> Vec<&str> {
    get(certificate, &["spec", "dnsNames"])
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

impl Chart {
    /// The template path and condition of a webhook object, after making
    /// its template holes; `None` for other objects.
    pub(super) fn webhook_template(
        &self,
        holes: &mut Holes,
        object: &mut Value,
        suffix: &str,
    ) -> Option<(String, &'static str)> {
        let object_kind = kind(object).to_string();
        if webhooks::is_configuration(object) {
            self.webhook_configuration(holes, object);
            let file = object_kind
                .to_lowercase()
                .replace("webhookconfiguration", "");
            return Some((format!("webhook/{file}.yaml"), WEBHOOK));
        }
        if webhooks::is_webhook_service(object, &self.webhooks.services) {
            if let Some(selector) = object.get_mut("spec").and_then(|s| s.get_mut("selector")) {
                self.selector(holes, selector);
            }
            return Some(("webhook/service.yaml".to_string(), WEBHOOK));
        }
        if webhooks::is_cert_manager(object) {
            let secret = get_str(object, &["spec", "secretName"]).unwrap_or_default();
            let condition = if self.webhooks.secrets.contains(secret) {
                WEBHOOK_CERT
            } else {
                CERT_MANAGER
            };
            self.cert_manager_object(holes, object);
            return Some((format!("certmanager/{suffix}.yaml"), condition));
        }
        // In a project without webhooks, a policy of that name is just one
        // more of config/network-policy.
        if object_kind == "NetworkPolicy"
            && suffix == "allow-webhook-traffic"
            && self.webhooks.any()
        {
            if let Some(selector) = object
                .get_mut("spec")
                .and_then(|s| s.get_mut("podSelector"))
                .and_then(|s| s.get_mut("matchLabels"))
            {
                self.selector(holes, selector);
            }
            return Some((
                "webhook/networkpolicy.yaml".to_string(),
                "and .Values.webhook.enabled .Values.networkPolicy.enabled",
            ));
        }
        None
    }

    fn webhook_configuration(&self, holes: &mut Holes, configuration: &mut Value) {
        let hooks = configuration
            .get_mut("webhooks")
            .and_then(Value::as_sequence_mut);
        for hook in hooks.into_iter().flatten() {
            if let Some(service) = hook
                .get_mut("clientConfig")
                .and_then(|c| c.get_mut("service"))
            {
                self.service_reference(holes, service);
            }
        }
        self.ca_injection(holes, configuration, Vec::new(), CERT_MANAGER);
    }

    /// A reference to the webhook Service: the release's name and namespace.
    fn service_reference(&self, holes: &mut Holes, service: &mut Value) {
        let Some(service) = service.as_mapping_mut() else {
            return;
        };
        if let Some(renamed) = service
            .get("name")
            .and_then(Value::as_str)
            .and_then(|n| self.label_name(holes, n))
        {
            service.insert("name".into(), renamed.into());
        }
        if service.contains_key("namespace") {
            service.insert(
                "namespace".into(),
                holes.inline("{{ .Release.Namespace }}").into(),
            );
        }
    }

    /// An Issuer or Certificate: the Issuer it names and the Service names
    /// in its DNS names follow the release.
    fn cert_manager_object(&self, holes: &mut Holes, object: &mut Value) {
        if let Some(issuer) = get_str(object, &["spec", "issuerRef", "name"]).map(str::to_string)
            && let Some(renamed) = self.name(holes, &issuer)
        {
            crate::generate::mapping_at(object, &["spec", "issuerRef"])
                .insert("name".into(), renamed.into());
        }
        let names = object
            .get_mut("spec")
            .and_then(|s| s.get_mut("dnsNames"))
            .and_then(Value::as_sequence_mut);
        for dns_name in names.into_iter().flatten() {
            let Some(text) = dns_name.as_str() else {
                continue;
            };
            // <service>.<namespace>.svc[.cluster.local]
            let mut parts = text.splitn(3, '.');
            let (Some(service), Some(_), Some(rest)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if let Some(renamed) = self.label_name(holes, service) {
                let namespace = holes.inline("{{ .Release.Namespace }}");
                *dns_name = format!("{renamed}.{namespace}.{rest}").into();
            }
        }
    }

    /// A CRD's conversion through the webhook, which needs the webhook
    /// served, and its CA injection, which also needs cert-manager.
    pub(super) fn crd_webhooks(
        &self,
        holes: &mut Holes,
        crd: &mut Value,
        keep: &'static str,
    ) -> bool {
        if webhooks::conversion(crd).is_some()
            && let Some(spec) = crd.get_mut("spec").and_then(Value::as_mapping_mut)
            && let Some(mut conversion) = spec.shift_remove("conversion")
        {
            if let Some(service) = conversion
                .get_mut("webhook")
                .and_then(|w| w.get_mut("clientConfig"))
                .and_then(|c| c.get_mut("service"))
            {
                self.service_reference(holes, service);
            }
            let mut wrapper = Mapping::new();
            wrapper.insert("conversion".into(), conversion);
            let lines = yaml_lines(&Value::Mapping(wrapper));
            let hole = holes.lines(move |_| block("if", WEBHOOK, lines.clone()));
            insert_sorted(spec, "conversion", hole, Value::Null);
        }
        if !webhooks::has_ca_injection(crd) {
            return false;
        }
        let keep_line = "helm.sh/resource-policy: keep".to_string();
        self.ca_injection(holes, crd, vec![(keep, keep_line)], WEBHOOK_CERT);
        true
    }

    /// Replaces the CA-injection annotations of `object` by the same under
    /// `condition`, naming the release's Certificate in its namespace; the
    /// `extra` annotations come under their own condition. The whole
    /// `annotations` key is a template block, so that it is left out rather
    /// than empty when every condition is off.
    fn ca_injection(
        &self,
        holes: &mut Holes,
        object: &mut Value,
        extra: Vec<(&'static str, String)>,
        condition: &'static str,
    ) {
        let metadata = crate::generate::mapping_at(object, &["metadata"]);
        let Some(mut annotations) = metadata
            .shift_remove("annotations")
            .and_then(|a| a.as_mapping().cloned())
        else {
            return;
        };
        let mut conditional = extra;
        for key in webhooks::CA_INJECTION {
            let Some(value) = annotations.shift_remove(key) else {
                continue;
            };
            let value = value.as_str().unwrap_or_default();
            let value = match value.split_once('/') {
                Some((_, certificate)) => format!(
                    "{}/{}",
                    holes.inline("{{ .Release.Namespace }}"),
                    self.name(holes, certificate)
                        .unwrap_or_else(|| certificate.to_string())
                ),
                None => value.to_string(),
            };
            conditional.push((condition, format!("{key}: {value}")));
        }
        let plain = if annotations.is_empty() {
            Vec::new()
        } else {
            yaml_lines(&Value::Mapping(annotations))
        };
        let always = !plain.is_empty();
        let mut any: Vec<&str> = conditional.iter().map(|(c, _)| *c).collect();
        any.sort_unstable();
        any.dedup();
        let outer = if any.len() == 1 {
            any[0].to_string()
        } else {
            format!(
                "or {}",
                any.iter()
                    .map(|c| if c.contains(' ') {
                        format!("({c})")
                    } else {
                        (*c).to_string()
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        // One condition for all: the outer block is enough.
        let single = !always && any.len() == 1;
        let hole = holes.lines(move |_| {
            let mut body = vec!["annotations:".to_string()];
            for (condition, line) in &conditional {
                let lines = if single {
                    vec![line.clone()]
                } else {
                    block("if", condition, vec![line.clone()])
                };
                body.extend(lines.into_iter().map(|l| format!("  {l}")));
            }
            body.extend(plain.iter().map(|l| format!("  {l}")));
            if always {
                body
            } else {
                block("if", &outer, body)
            }
        });
        insert_sorted(metadata, "annotations", hole, Value::Null);
    }

    /// The manager's webhook parts: its port, the certificate's volume and
    /// mount, and the flag that points at the mount, each under its value.
    pub(super) fn manager_webhooks(
        &self,
        holes: &mut Holes,
        pod: &mut Mapping,
        container_index: usize,
    ) {
        if !self.webhooks.any() && !self.webhooks.cert_manager {
            return;
        }
        // Volume name -> condition.
        let mut gated: Vec<(String, &'static str)> = Vec::new();
        if let Some(volumes) = pod.get("volumes").and_then(Value::as_sequence) {
            for volume in volumes {
                if let (Some(volume_name), Some(condition)) = (
                    get_str(volume, &["name"]),
                    get_str(volume, &["secret", "secretName"])
                        .and_then(|s| self.webhooks.volume_condition(s)),
                ) {
                    gated.push((volume_name.to_string(), condition));
                }
            }
        }
        let condition_of = |item: &Value| {
            let item_name = get_str(item, &["name"])?;
            gated.iter().find(|(n, _)| n == item_name).map(|(_, c)| *c)
        };
        gate_list(holes, pod, "volumes", &condition_of);
        let Some(container) = pod
            .get_mut("containers")
            .and_then(Value::as_sequence_mut)
            .and_then(|c| c.get_mut(container_index))
            .and_then(Value::as_mapping_mut)
        else {
            return;
        };
        // The mount paths of gated volumes, for the flags that name them.
        let mut paths: Vec<(String, &'static str)> = Vec::new();
        for mount in container
            .get("volumeMounts")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
        {
            if let (Some(condition), Some(path)) =
                (condition_of(mount), get_str(mount, &["mountPath"]))
            {
                paths.push((path.to_string(), condition));
            }
        }
        gate_list(holes, container, "volumeMounts", &condition_of);
        if let Some(args) = container.get_mut("args").and_then(Value::as_sequence_mut) {
            for arg in args.iter_mut() {
                let Some(text) = arg.as_str() else {
                    continue;
                };
                let condition = paths
                    .iter()
                    .find(|(path, _)| webhooks::points_into(text, std::slice::from_ref(path)))
                    .map(|(_, c)| *c);
                if let Some(condition) = condition {
                    let line = format!("- {}", yaml_lines(&Value::from(text)).concat());
                    *arg = holes.lines(move |_| block("if", condition, vec![line.clone()]));
                }
            }
        }
        if let Some(port) = self.webhooks.port
            && let Some(ports) = container.get_mut("ports").and_then(Value::as_sequence_mut)
        {
            for entry in ports.iter_mut() {
                if entry.get("containerPort").and_then(Value::as_u64) == Some(port) {
                    let lines = yaml_lines(&Value::Sequence(vec![entry.clone()]));
                    *entry = holes.lines(move |_| block("if", WEBHOOK, lines.clone()));
                }
            }
        }
    }
}

/// The items of the list under `key` that `condition_of` gives a condition
/// become blocks under it. When every item has one, the key itself is in a
/// block, so that it is left out rather than empty.
fn gate_list(
    holes: &mut Holes,
    map: &mut Mapping,
    key: &str,
    condition_of: &dyn Fn(&Value) -> Option<&'static str>,
) {
    let Some(items) = map.get(key).and_then(Value::as_sequence).cloned() else {
        return;
    };
    let conditions: Vec<Option<&'static str>> = items.iter().map(condition_of).collect();
    if conditions.iter().all(Option::is_none) {
        return;
    }
    let item_lines = |item: &Value| yaml_lines(&Value::Sequence(vec![item.clone()]));
    if conditions.iter().all(Option::is_some) {
        let mut distinct: Vec<&'static str> = conditions.iter().flatten().copied().collect();
        distinct.sort_unstable();
        distinct.dedup();
        let blocks: Vec<(&'static str, Vec<String>)> = items
            .iter()
            .zip(&conditions)
            .map(|(item, c)| (c.unwrap_or_default(), item_lines(item)))
            .collect();
        let key_line = format!("{key}:");
        let outer = if distinct.len() == 1 {
            distinct[0].to_string()
        } else {
            format!(
                "or {}",
                distinct
                    .iter()
                    .map(|c| format!("({c})"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        let hole = holes.lines(move |_| {
            let mut body = vec![key_line.clone()];
            for (condition, lines) in &blocks {
                if distinct.len() == 1 {
                    body.extend(lines.iter().cloned());
                } else {
                    body.extend(block("if", condition, lines.clone()));
                }
            }
            block("if", &outer, body)
        });
        let entries = std::mem::take(map);
        for (k, v) in entries {
            if k.as_str() == Some(key) {
                map.insert(hole.clone(), Value::Null);
            } else {
                map.insert(k, v);
            }
        }
        return;
    }
    let gated: Vec<Value> = items
        .iter()
        .zip(conditions)
        .map(|(item, condition)| match condition {
            Some(condition) => {
                let lines = item_lines(item);
                holes.lines(move |_| block("if", condition, lines.clone()))
            }
            None => item.clone(),
        })
        .collect();
    map.insert(key.into(), Value::Sequence(gated));
}
