//! Admission webhooks of `Pod` (`v1`).
//!
//! Validation turns down what the schema alone cannot.
//! These are plain functions on typed objects: edit them, test them like any function. The manager
//! serves them over HTTPS; the `+rsop:webhook` marker above each tells `rsop manifests` how to
//! register it with the API server in `config/webhook/manifests.yaml`.

use k8s_openapi::api::core::v1::Pod;
use rsop_runtime::webhook::{Validation, Validator, Webhooks};

/// Registers the webhooks of this module with the server, at the paths of their markers.
pub fn register(webhooks: &mut Webhooks) {
    webhooks.validating(
        "/validate--v1-pod",
        Validator {
            create: validate_create,
            update: validate_update,
            delete: validate_delete,
        },
    );
}

// +rsop:webhook:path=/validate--v1-pod,mutating=false,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create;update,versions=v1,name=vpod-v1.kb.io,admissionReviewVersions=v1

/// Checks a Pod about to be created.
pub fn validate_create(pod: &Pod) -> Validation {
    validate(pod)
}

/// Checks an update of a Pod, which may depend on the object's previous state.
pub fn validate_update(_old: &Pod, new: &Pod) -> Validation {
    validate(new)
}

/// Checks the deletion of a Pod. The API server only asks if `delete` is in the marker's
/// verbs: add it (`verbs=create;update;delete`) to use this.
pub fn validate_delete(_pod: &Pod) -> Validation {
    Ok(Vec::new())
}

/// The rules every Pod must meet, beyond those of its schema.
fn validate(_pod: &Pod) -> Validation {
    // TODO(user): check the object; return `Err(Denial::new("why"))` to refuse it.
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use rsop_runtime::webhook::testing::{admission_review, post_review};

    /// A Pod as a client sends it.
    fn object() -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "example", "namespace": "default"},
        })
    }

    fn webhooks() -> Webhooks {
        let mut webhooks = Webhooks::default();
        register(&mut webhooks);
        webhooks
    }

    #[tokio::test]
    async fn the_server_allows_a_valid_object() {
        for operation in ["CREATE", "UPDATE", "DELETE"] {
            let sent = object();
            let review = admission_review(operation, &sent, Some(&sent));
            let response = post_review(webhooks(), "/validate--v1-pod", &review).await;
            assert_eq!(
                response["response"]["allowed"], true,
                "{operation}: {response}"
            );
        }
    }
}
