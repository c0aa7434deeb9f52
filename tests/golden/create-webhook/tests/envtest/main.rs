//! Tests against a real API server: the project's controllers run as the manager runs them, on an
//! etcd and a kube-apiserver that rsop-runtime's harness starts from the binaries in
//! `KUBEBUILDER_ASSETS`, with the CRDs of `config/crd/bases` installed. They catch what a mock API
//! server cannot show: objects already there when the manager starts, watch events of the
//! controller's own writes, finalizers the API server enforces, webhooks it calls.
//!
//! `make test` gets the binaries with `rsop envtest use` and sets `KUBEBUILDER_ASSETS`; without it,
//! each test says once how to get them and returns. One control plane serves the whole run: each
//! test works in a namespace of its own, which its controllers alone watch.
//!
//! `rsop create api` and `rsop create webhook` add the tests of each kind at the marker below.

mod batch_v1_cron_job;
mod batch_v1_cron_job_webhooks;
mod cache_v1alpha1_memcached;
// +rsop:scaffold:envtest-modules

use rsop_runtime::envtest;

/// The API server starts with every CRD of `config/crd/bases` installed and served: each is valid.
#[tokio::test]
async fn the_api_server_serves_the_crds_of_the_project() -> envtest::Result<()> {
    let Some(plane) = envtest::shared().await else {
        return Ok(());
    };
    plane.client().await.map(drop)
}
