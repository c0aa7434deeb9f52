//! Admission webhooks of `CronJob` (`batch.example.com/v1`).
//!
//! Defaulting fills in what a user left out; validation turns down what the schema alone cannot.
//! These are plain functions on typed objects: edit them, test them like any function. The manager
//! serves them over HTTPS; the `+rsop:webhook` marker above each tells `rsop manifests` how to
//! register it with the API server in `config/webhook/manifests.yaml`.

use rsop_runtime::webhook::{Denial, Validation, Validator, Webhooks};

use crate::api::v1::CronJob;

/// What `default` sets `spec.foo` to when it is left out.
const DEFAULT_FOO: &str = "cronjob";

/// Registers the webhooks of this module with the server, at the paths of their markers.
pub fn register(webhooks: &mut Webhooks) {
    webhooks.defaulting("/mutate-batch-example-com-v1-cronjob", default);
    webhooks.validating(
        "/validate-batch-example-com-v1-cronjob",
        Validator {
            create: validate_create,
            update: validate_update,
            delete: validate_delete,
        },
    );
}

// +rsop:webhook:path=/mutate-batch-example-com-v1-cronjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.example.com,resources=cronjobs,verbs=create;update,versions=v1,name=mcronjob-v1.kb.io,admissionReviewVersions=v1

/// Fills in the fields a new or updated CronJob leaves out, before the API server validates and
/// stores it. The server answers with the JSON patch from the object it received to this one.
pub fn default(cron_job: &mut CronJob) {
    // TODO(user): default your own fields. The example fills in `spec.foo`.
    cron_job
        .spec
        .foo
        .get_or_insert_with(|| DEFAULT_FOO.to_owned());
}

// +rsop:webhook:path=/validate-batch-example-com-v1-cronjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch.example.com,resources=cronjobs,verbs=create;update,versions=v1,name=vcronjob-v1.kb.io,admissionReviewVersions=v1

/// Checks a CronJob about to be created.
pub fn validate_create(cron_job: &CronJob) -> Validation {
    validate(cron_job)
}

/// Checks an update of a CronJob, which may depend on the object's previous state.
pub fn validate_update(old: &CronJob, new: &CronJob) -> Validation {
    let mut warnings = validate(new)?;
    // TODO(user): an example warning; deny changes the object does not allow instead, if any.
    if new.spec.count < old.spec.count {
        warnings.push(format!(
            "spec.count goes down from {} to {}",
            old.spec.count, new.spec.count
        ));
    }
    Ok(warnings)
}

/// Checks the deletion of a CronJob. The API server only asks if `delete` is in the marker's
/// verbs: add it (`verbs=create;update;delete`) to use this.
pub fn validate_delete(_cron_job: &CronJob) -> Validation {
    Ok(Vec::new())
}

/// The rules every CronJob must meet, beyond those of its schema.
fn validate(cron_job: &CronJob) -> Validation {
    // TODO(user): check your own fields. The example refuses an empty `spec.foo`.
    if cron_job.spec.foo.as_deref() == Some("") {
        return Err(Denial::new(
            "spec.foo must not be empty: leave it out to get the default",
        ));
    }
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use rsop_runtime::webhook::testing::{admission_review, apply_patch, post_review};

    /// A CronJob as a client sends it, with `spec.foo` set to `foo`.
    fn object(foo: Option<&str>) -> Value {
        let mut object = json!({
            "apiVersion": "batch.example.com/v1",
            "kind": "CronJob",
            "metadata": {"name": "example", "namespace": "default"},
            "spec": {"count": 1},
        });
        if let Some(foo) = foo {
            object["spec"]["foo"] = json!(foo);
        }
        object
    }

    fn webhooks() -> Webhooks {
        let mut webhooks = Webhooks::default();
        register(&mut webhooks);
        webhooks
    }

    #[test]
    fn default_fills_in_foo_and_keeps_a_given_one() {
        let mut cron_job: CronJob = serde_json::from_value(object(None)).unwrap();
        default(&mut cron_job);
        assert_eq!(cron_job.spec.foo.as_deref(), Some(DEFAULT_FOO));

        let mut cron_job: CronJob = serde_json::from_value(object(Some("mine"))).unwrap();
        default(&mut cron_job);
        assert_eq!(cron_job.spec.foo.as_deref(), Some("mine"));
    }

    /// The server's patch, applied as the API server applies it, gives the defaulted object.
    #[tokio::test]
    async fn the_server_patches_in_the_defaults() {
        let sent = object(None);
        let review = admission_review("CREATE", &sent, None);
        let response =
            post_review(webhooks(), "/mutate-batch-example-com-v1-cronjob", &review).await;
        assert_eq!(response["response"]["allowed"], true, "{response}");
        assert_eq!(response["response"]["uid"], review["request"]["uid"]);

        let mut expected: CronJob = serde_json::from_value(sent.clone()).unwrap();
        default(&mut expected);
        let expected = serde_json::to_value(expected).unwrap();
        assert_eq!(apply_patch(&sent, &response), expected);
    }

    #[test]
    fn validation_refuses_an_empty_foo_and_warns_when_count_goes_down() {
        let parse = |foo| serde_json::from_value::<CronJob>(object(foo)).unwrap();
        assert_eq!(validate_create(&parse(Some("bar"))), Ok(Vec::new()));
        assert!(validate_create(&parse(Some(""))).is_err());
        let mut lower = parse(None);
        lower.spec.count = 0;
        let warnings = validate_update(&parse(None), &lower).unwrap();
        assert_eq!(warnings, ["spec.count goes down from 1 to 0"]);
        assert_eq!(validate_delete(&lower), Ok(Vec::new()));
    }

    /// An invalid object is denied with the message of `validate`.
    #[tokio::test]
    async fn the_server_denies_an_invalid_object_with_the_message() {
        let review = admission_review("CREATE", &object(Some("")), None);
        let response = post_review(
            webhooks(),
            "/validate-batch-example-com-v1-cronjob",
            &review,
        )
        .await;
        assert_eq!(response["response"]["allowed"], false, "{response}");
        assert_eq!(response["response"]["status"]["code"], 403);
        let message = validate_create(&serde_json::from_value(object(Some(""))).unwrap())
            .unwrap_err()
            .message;
        assert_eq!(response["response"]["status"]["message"], message.as_str());
    }

    #[tokio::test]
    async fn the_server_allows_a_valid_object() {
        for operation in ["CREATE", "UPDATE", "DELETE"] {
            let sent = object(Some("bar"));
            let review = admission_review(operation, &sent, Some(&sent));
            let response = post_review(
                webhooks(),
                "/validate-batch-example-com-v1-cronjob",
                &review,
            )
            .await;
            assert_eq!(
                response["response"]["allowed"], true,
                "{operation}: {response}"
            );
        }
    }
}
