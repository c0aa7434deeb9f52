//! The Memcached controller on a real API server.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rsop_runtime::envtest::{self, Result, TestManager};
use rsop_runtime::manager::Controllers;

use memcached_operator::api::v1alpha1::Memcached;
use memcached_operator::controllers::memcached as controller;

/// The controller's name in the metrics.
const CONTROLLER: &str = "memcached";

fn start(controllers: &mut Controllers) {
    controllers.start(controller::run);
}

/// The kind's sample (`config/samples/cache_v1alpha1_memcached.yaml`), named `name`.
fn sample(name: &str) -> Result<Memcached> {
    envtest::sample(name)
}

/// The Memcached's steady state with no pods, as here where no kubelet runs: the controller
/// applied the latest spec and reports the Deployment's availability.
fn reconciled(object: Option<&Memcached>) -> bool {
    object.is_some_and(|object| {
        envtest::observed(object) && envtest::has_condition(object, "Available", "False")
    })
}

/// What the Deployment controller reports once all of `deployment`'s pods are ready.
fn all_pods_ready(deployment: &Deployment) -> serde_json::Value {
    let replicas = deployment
        .spec
        .as_ref()
        .and_then(|spec| spec.replicas)
        .unwrap_or(1);
    serde_json::json!({
        "status": {
            "observedGeneration": deployment.metadata.generation,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
        }
    })
}

/// The API of the Memcacheds in the namespace `ns`.
fn objects(client: &kube::Client, ns: &str) -> Api<Memcached> {
    Api::namespaced(client.clone(), ns)
}

/// A new Memcached gets its Deployment, and becomes `Available` once the
/// Deployment's pods are ready. The test plays the Deployment controller, which does not run here.
#[tokio::test]
async fn a_new_object_gets_its_deployment_and_becomes_available() -> Result<()> {
    let Some(plane) = envtest::shared().await else {
        return Ok(());
    };
    let (client, ns) = envtest::test_namespace(plane, CONTROLLER, "new").await?;
    let api = objects(&client, &ns);
    let deployments = Api::<Deployment>::namespaced(client.clone(), &ns);
    let manager = TestManager::start(client, Some(&ns), start);

    let name = format!("{ns}-a");
    api.create(&PostParams::default(), &sample(&name)?).await?;
    let object = envtest::wait_for(&api, &name, "its first status", reconciled).await?;
    let deployment = deployments.get(&name).await?;
    let owned = deployment.owner_references().iter().any(|owner| {
        owner.controller == Some(true) && Some(&owner.uid) == object.metadata.uid.as_ref()
    });
    assert!(owned, "not controlled by its owner: {deployment:#?}");

    let status = all_pods_ready(&deployment);
    deployments
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
        .await?;
    let available = |object: Option<&Memcached>| {
        object.is_some_and(|object| envtest::has_condition(object, "Available", "True"))
    };
    envtest::wait_for(&api, &name, "Available", available).await?;
    envtest::delete_all(&api, [name]).await?;
    manager.stop().await.0?;
    Ok(())
}

/// Memcacheds there before the manager starts are reconciled, each to one Deployment; after a
/// restart, each is reconciled again, and neither it nor its Deployment is written to.
#[tokio::test]
async fn objects_there_at_start_up_are_reconciled_and_left_as_they_are() -> Result<()> {
    let Some(plane) = envtest::shared().await else {
        return Ok(());
    };
    let (client, ns) = envtest::test_namespace(plane, CONTROLLER, "start-up").await?;
    let api = objects(&client, &ns);
    let names: Vec<String> = (0..3).map(|i| format!("{ns}-{i}")).collect();
    for name in &names {
        api.create(&PostParams::default(), &sample(name)?).await?;
    }
    let manager = TestManager::start(client.clone(), Some(&ns), start);
    for name in &names {
        envtest::wait_for(&api, name, "its first status", reconciled).await?;
    }
    manager.stop().await.0?;

    let deployments = Api::<Deployment>::namespaced(client.clone(), &ns);
    let before = (
        envtest::versions(&api).await?,
        envtest::versions(&deployments).await?,
    );
    assert_eq!(before.1.len(), names.len(), "{before:?}");
    let manager = TestManager::start(client, Some(&ns), start);
    let count = names.len() as u64;
    let started = Instant::now();
    while manager.reconciled(CONTROLLER) < count {
        if started.elapsed() > envtest::SETTLE {
            let reconciled = manager.reconciled(CONTROLLER);
            return Err(format!("{reconciled} of {count} were reconciled after a restart").into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Time for a write too many to show. An object may be reconciled twice, its Deployment's
    // first list bringing it again, but the second finds nothing to do.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = (
        envtest::versions(&api).await?,
        envtest::versions(&deployments).await?,
    );
    assert_eq!(before, after, "a reconciliation wrote again");
    envtest::delete_all(&api, names).await?;
    manager.stop().await.0?;
    Ok(())
}

/// A Memcached holds no finalizer: deleted, it goes at once, and the garbage collector (which
/// does not run here) deletes its Deployment by the owner reference.
#[tokio::test]
async fn a_deleted_object_goes_at_once() -> Result<()> {
    let Some(plane) = envtest::shared().await else {
        return Ok(());
    };
    let (client, ns) = envtest::test_namespace(plane, CONTROLLER, "delete").await?;
    let api = objects(&client, &ns);
    let manager = TestManager::start(client, Some(&ns), start);

    let name = format!("{ns}-a");
    api.create(&PostParams::default(), &sample(&name)?).await?;
    let object = envtest::wait_for(&api, &name, "its first status", reconciled).await?;
    assert!(object.finalizers().is_empty(), "{object:#?}");
    api.delete(&name, &DeleteParams::default()).await?;
    envtest::wait_gone(&api, &name).await?;
    manager.stop().await.0?;
    Ok(())
}

/// A shutdown while Memcacheds are being reconciled lets them finish, and returns `Ok` within a
/// second.
#[tokio::test]
async fn a_shutdown_drains_the_reconciliations_in_flight() -> Result<()> {
    let Some(plane) = envtest::shared().await else {
        return Ok(());
    };
    let (client, ns) = envtest::test_namespace(plane, CONTROLLER, "shutdown").await?;
    let api = objects(&client, &ns);
    let names: Vec<String> = (0..10).map(|i| format!("{ns}-{i}")).collect();
    for name in &names {
        api.create(&PostParams::default(), &sample(name)?).await?;
    }
    let manager = TestManager::start(client.clone(), Some(&ns), start);
    let started = Instant::now();
    while manager.reconciled(CONTROLLER) == 0 && started.elapsed() < envtest::SETTLE {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (result, took) = manager.stop().await;
    result?;
    assert!(took < Duration::from_secs(1), "the drain took {took:?}");

    // The finalizers need the controller to go.
    let manager = TestManager::start(client, Some(&ns), start);
    envtest::delete_all(&api, names).await?;
    manager.stop().await.0?;
    Ok(())
}
