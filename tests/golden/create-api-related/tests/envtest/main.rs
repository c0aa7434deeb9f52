//! Tests against a real API server: the project's controllers run as the manager runs them, on an
//! etcd and a kube-apiserver that [`harness`] starts from the binaries in `KUBEBUILDER_ASSETS`.
//! They catch what a mock API server cannot show: objects already there when the manager starts,
//! watch events of the controller's own writes, finalizers the API server enforces, webhooks it
//! calls.
//!
//! `make test` gets the binaries with `rsop envtest use` and sets `KUBEBUILDER_ASSETS`; without it,
//! each test says once how to get them and returns. One control plane serves the whole run: each
//! test works in a namespace of its own, which its controllers alone watch.
//!
//! `rsop create api` and `rsop create webhook` add the tests of each kind at the marker below.

mod harness;

// The tests of each kind, and what they share.
mod monitoring_v1alpha1_exporter;
mod support;
// +rsop:scaffold:envtest-modules

use std::io::Write as _;
use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams};
use tokio::sync::OnceCell;

use crate::harness::ControlPlane;

/// The control plane of this test run, started by the first test that asks; `None` when
/// `KUBEBUILDER_ASSETS` is not set, after saying once how to set it.
///
/// It is never dropped: its processes and directory go when the test process ends (see
/// [`harness`]).
pub async fn control_plane() -> Option<&'static ControlPlane> {
    static PLANE: OnceCell<Result<ControlPlane, String>> = OnceCell::const_new();
    static SKIPPED: std::sync::Once = std::sync::Once::new();
    let Some(assets) = harness::assets() else {
        SKIPPED.call_once(|| {
            // Written to stderr itself: the test harness would capture `eprintln!`.
            let _ = writeln!(
                std::io::stderr(),
                "envtest tests skipped: they need etcd and kube-apiserver; `make test` gets them \
                 with `rsop envtest use` and sets {}",
                harness::ASSETS
            );
        });
        return None;
    };
    let crds = crd_dir();
    let plane = PLANE
        .get_or_init(|| async {
            ControlPlane::start(&assets, &crds)
                .await
                .map_err(|err| err.to_string())
        })
        .await;
    match plane {
        Ok(plane) => Some(plane),
        Err(err) => panic!("the control plane did not start: {err}"),
    }
}

/// The API server serves every CRD of `config/crd/bases`.
#[tokio::test]
async fn the_api_server_serves_the_crds_of_the_project() -> harness::Result<()> {
    let Some(plane) = control_plane().await else {
        return Ok(());
    };
    let client = plane.client().await?;
    let served = Api::<CustomResourceDefinition>::all(client)
        .list(&ListParams::default())
        .await?;
    let Ok(entries) = std::fs::read_dir(crd_dir()) else {
        return Ok(());
    };
    for entry in entries {
        let path = entry?.path();
        let crd: CustomResourceDefinition =
            serde_yaml_ng::from_str(&std::fs::read_to_string(&path)?)?;
        let name = crd.metadata.name.unwrap_or_default();
        if !served
            .iter()
            .any(|c| c.metadata.name.as_deref() == Some(&name))
        {
            return Err(format!("{name} ({}) is not served", path.display()).into());
        }
    }
    Ok(())
}

/// The project's CRDs, as `rsop manifests` writes them.
fn crd_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config/crd/bases")
}
