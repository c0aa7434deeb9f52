//! End-to-end tests: the manager deployed to a cluster, checked from outside as a user sees it,
//! with rsop-runtime's checks.
//!
//! `make test-e2e` creates a Kind cluster, builds the manager's image and loads it there, installs
//! cert-manager when the project serves webhooks, deploys with `make deploy`, then runs these
//! tests with `RSOP_E2E=1` against the cluster of the current kube context. Without it, each of
//! them returns at once, so a plain `cargo test` only compiles them.
//!
//! `rsop create api` and `rsop create webhook` add the tests of each kind at the marker below.

use rsop_runtime::e2e::{self, Deployed, cluster};

/// The operator as `make deploy` installs it.
fn deployed() -> Deployed {
    Deployed::new("webhook-operator")
}

/// The manager's Pod runs and is ready.
#[tokio::test]
async fn the_manager_runs() -> e2e::Result<()> {
    let Some(client) = cluster().await else {
        return Ok(());
    };
    deployed().manager_pod(&client).await.map(drop)
}

/// The manager serves its metrics over HTTPS to a ServiceAccount allowed to read them.
#[tokio::test]
async fn the_metrics_endpoint_answers_an_authorized_scraper() -> e2e::Result<()> {
    let Some(client) = cluster().await else {
        return Ok(());
    };
    deployed().manager_pod(&client).await?;
    let text = deployed().scrape_metrics(&client).await?;
    let family = e2e::PROCESS_FAMILY;
    if e2e::metric_families(&text).contains(&family) {
        Ok(())
    } else {
        Err(format!("the scrape has no {family} family:\n{text}").into())
    }
}

/// The manager reconciles the sample, setting its `Ready` condition to `True`:
/// `config/samples/batch_v1_cronjob.yaml`.
#[tokio::test]
async fn batch_v1_cron_job_reconciles() -> e2e::Result<()> {
    use webhook_operator::api::v1::CronJob;
    let Some(client) = cluster().await else {
        return Ok(());
    };
    let sample = e2e::read_sample("config/samples/batch_v1_cronjob.yaml")?;
    let resource = kube::api::ApiResource::erase::<CronJob>(&());
    let api = deployed().api(&client, &resource, true);
    e2e::reconciles(&api, &sample, "Ready").await
}

/// The manager reconciles the sample, setting its `Ready` condition to `True`:
/// `config/samples/cache_v1alpha1_memcached.yaml`.
#[tokio::test]
async fn cache_v1alpha1_memcached_reconciles() -> e2e::Result<()> {
    use webhook_operator::api::v1alpha1::Memcached;
    let Some(client) = cluster().await else {
        return Ok(());
    };
    let sample = e2e::read_sample("config/samples/cache_v1alpha1_memcached.yaml")?;
    let resource = kube::api::ApiResource::erase::<Memcached>(&());
    let api = deployed().api(&client, &resource, true);
    e2e::reconciles(&api, &sample, "Ready").await
}

/// The defaulting webhook of `CronJob` has the CA bundle cert-manager injects
/// and lets the sample through; it fills in a missing `spec.foo`.
#[tokio::test]
async fn batch_v1_cron_job_defaulting_webhook_is_served() -> e2e::Result<()> {
    use webhook_operator::api::v1::CronJob;
    let Some(client) = cluster().await else {
        return Ok(());
    };
    deployed()
        .ca_bundles_injected(&client, "/mutate-batch-example-com-v1-cronjob")
        .await?;
    let resource = kube::api::ApiResource::erase::<CronJob>(&());
    let api = deployed().api(&client, &resource, true);
    let mut object = e2e::read_sample("config/samples/batch_v1_cronjob.yaml")?;
    if let Some(spec) = object["spec"].as_object_mut() {
        spec.remove("foo");
    }
    let created = e2e::dry_run_create(&api, &object).await?;
    if created["spec"]["foo"] != "cronjob" {
        return Err(format!("spec.foo was not defaulted: {}", created["spec"]).into());
    }
    Ok(())
}

/// The validation webhook of `CronJob` has the CA bundle cert-manager injects
/// and lets the sample through; it denies an empty `spec.foo`.
#[tokio::test]
async fn batch_v1_cron_job_validation_webhook_is_served() -> e2e::Result<()> {
    use webhook_operator::api::v1::CronJob;
    let Some(client) = cluster().await else {
        return Ok(());
    };
    deployed()
        .ca_bundles_injected(&client, "/validate-batch-example-com-v1-cronjob")
        .await?;
    let resource = kube::api::ApiResource::erase::<CronJob>(&());
    let api = deployed().api(&client, &resource, true);
    let mut object = e2e::read_sample("config/samples/batch_v1_cronjob.yaml")?;
    e2e::dry_run_create(&api, &object).await?;
    object["spec"]["foo"] = "".into();
    match e2e::dry_run_create(&api, &object).await {
        Err(message) if message.contains("spec.foo must not be empty") => {}
        other => return Err(format!("an empty spec.foo was not denied: {other:?}").into()),
    }
    Ok(())
}

/// The conversion webhook of `Memcached` has the CA bundle cert-manager injects into its CRD.
#[tokio::test]
async fn cache_v1alpha1_memcached_conversion_webhook_is_served() -> e2e::Result<()> {
    let Some(client) = cluster().await else {
        return Ok(());
    };
    e2e::conversion_ca_bundle_injected(&client, "memcacheds.cache.example.com").await
}

/// The validation webhook of `Pod` has the CA bundle cert-manager injects.
#[tokio::test]
async fn core_v1_pod_validation_webhook_is_served() -> e2e::Result<()> {
    let Some(client) = cluster().await else {
        return Ok(());
    };
    deployed()
        .ca_bundles_injected(&client, "/validate--v1-pod")
        .await?;
    Ok(())
}

// +rsop:scaffold:e2e-tests
