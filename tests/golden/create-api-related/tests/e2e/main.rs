//! End-to-end tests: the manager deployed to a cluster, checked from outside as a user sees it.
//!
//! `make test-e2e` creates a Kind cluster, builds the manager's image and loads it there, installs
//! cert-manager when the project serves webhooks, deploys with `make deploy`, then runs these
//! tests with `RSOP_E2E=1` against the cluster of the current kube context. Without it, each of
//! them returns at once, so a plain `cargo test` compiles them and runs the tests of the checks
//! themselves (`recorded.rs`) only.
//!
//! `rsop create api` and `rsop create webhook` add the tests of each kind at the marker below.

mod checks;
mod recorded;

use std::io::Write;

use kube::Client;

/// A client of the current kube context, or `None` when `RSOP_E2E` is not `1`; then it says why,
/// once.
async fn cluster() -> Option<Client> {
    static SKIPPED: std::sync::Once = std::sync::Once::new();
    if std::env::var_os("RSOP_E2E").is_none_or(|value| value != "1") {
        SKIPPED.call_once(|| {
            // Written to stderr itself: the test harness would capture `eprintln!`.
            let _ = writeln!(
                std::io::stderr(),
                "e2e tests skipped: they need a cluster; `make test-e2e` makes one and runs them \
                 with RSOP_E2E=1"
            );
        });
        return None;
    }
    let client = Client::try_default().await;
    Some(client.expect("a client of the current kube context"))
}

/// The manager's Pod runs and is ready.
#[tokio::test]
async fn the_manager_runs() -> checks::Result<()> {
    let Some(client) = cluster().await else {
        return Ok(());
    };
    checks::manager_pod(&client).await.map(drop)
}

/// The manager serves its metrics over HTTPS to a ServiceAccount allowed to read them.
#[tokio::test]
async fn the_metrics_endpoint_answers_an_authorized_scraper() -> checks::Result<()> {
    let Some(client) = cluster().await else {
        return Ok(());
    };
    checks::manager_pod(&client).await?;
    let text = checks::scrape_metrics(&client).await?;
    let family = checks::PROCESS_FAMILY;
    if checks::metric_families(&text).contains(&family) {
        Ok(())
    } else {
        Err(format!("the scrape has no {family} family:\n{text}").into())
    }
}

/// The manager reconciles the sample, setting its `Ready` condition to `True`:
/// `config/samples/monitoring_v1alpha1_exporter.yaml`.
#[tokio::test]
async fn monitoring_v1alpha1_exporter_reconciles() -> checks::Result<()> {
    use exporter_operator::api::v1alpha1::Exporter;
    let Some(client) = cluster().await else {
        return Ok(());
    };
    let sample = checks::read_sample("config/samples/monitoring_v1alpha1_exporter.yaml")?;
    let api = checks::api(
        &client,
        &kube::api::ApiResource::erase::<Exporter>(&()),
        true,
    );
    checks::reconciles(&api, &sample, "Ready").await
}

// +rsop:scaffold:e2e-tests
