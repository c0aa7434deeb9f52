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
    Deployed::new("platform-operator")
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
/// `config/samples/infra_v1_cluster.yaml`.
#[tokio::test]
async fn infra_v1_cluster_reconciles() -> e2e::Result<()> {
    use platform_operator::api::infra::v1::Cluster;
    let Some(client) = cluster().await else {
        return Ok(());
    };
    let sample = e2e::read_sample("config/samples/infra_v1_cluster.yaml")?;
    let resource = kube::api::ApiResource::erase::<Cluster>(&());
    let api = deployed().api(&client, &resource, false);
    e2e::reconciles(&api, &sample, "Ready").await
}

/// The manager reconciles the sample, setting its `Ready` condition to `True`:
/// `config/samples/apps_v1beta1_guestbook.yaml`.
#[tokio::test]
async fn apps_v1beta1_guest_book_reconciles() -> e2e::Result<()> {
    use platform_operator::api::apps::v1beta1::GuestBook;
    let Some(client) = cluster().await else {
        return Ok(());
    };
    let sample = e2e::read_sample("config/samples/apps_v1beta1_guestbook.yaml")?;
    let resource = kube::api::ApiResource::erase::<GuestBook>(&());
    let api = deployed().api(&client, &resource, true);
    e2e::reconciles(&api, &sample, "Ready").await
}

// +rsop:scaffold:e2e-tests
