//! The Memcached controller on a real API server.

use std::time::{Duration, Instant};

use kube::ResourceExt as _;
use kube::api::{Api, DeleteParams, PostParams};
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

/// The Memcached's steady state: the controller reconciled its latest spec.
fn ready(object: Option<&Memcached>) -> bool {
    object.is_some_and(|object| {
        envtest::observed(object) && envtest::has_condition(object, "Ready", "True")
    })
}

/// The API of the Memcacheds in the namespace `ns`.
fn objects(client: &kube::Client, ns: &str) -> Api<Memcached> {
    Api::namespaced(client.clone(), ns)
}

/// A new Memcached gets the finalizer and becomes `Ready`.
#[tokio::test]
async fn a_new_object_becomes_ready() -> Result<()> {
    let Some(plane) = envtest::shared().await else {
        return Ok(());
    };
    let (client, ns) = envtest::test_namespace(plane, CONTROLLER, "new").await?;
    let api = objects(&client, &ns);
    let manager = TestManager::start(client, Some(&ns), start);

    let name = format!("{ns}-a");
    api.create(&PostParams::default(), &sample(&name)?).await?;
    let object = envtest::wait_for(&api, &name, "Ready", ready).await?;
    let finalizer = controller::FINALIZER;
    assert!(
        object.finalizers().iter().any(|f| f == finalizer),
        "no finalizer: {object:#?}"
    );
    envtest::delete_all(&api, [name]).await?;
    manager.stop().await.0?;
    Ok(())
}

/// Memcacheds there before the manager starts are reconciled; after a restart, each is
/// reconciled once more and left as it is.
#[tokio::test]
async fn objects_there_at_start_up_are_reconciled_once() -> Result<()> {
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
        envtest::wait_for(&api, name, "Ready", ready).await?;
    }
    manager.stop().await.0?;

    let before = envtest::versions(&api).await?;
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
    // Time for a reconciliation too many to show.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(manager.reconciled(CONTROLLER), count);
    let after = envtest::versions(&api).await?;
    assert_eq!(before, after, "a reconciled object was written to again");
    envtest::delete_all(&api, names).await?;
    manager.stop().await.0?;
    Ok(())
}

/// Deleting a Memcached runs its cleanup: the controller removes the finalizer, and it goes.
#[tokio::test]
async fn a_deleted_object_is_cleaned_up_and_goes() -> Result<()> {
    let Some(plane) = envtest::shared().await else {
        return Ok(());
    };
    let (client, ns) = envtest::test_namespace(plane, CONTROLLER, "delete").await?;
    let api = objects(&client, &ns);
    let manager = TestManager::start(client, Some(&ns), start);

    let name = format!("{ns}-a");
    api.create(&PostParams::default(), &sample(&name)?).await?;
    envtest::wait_for(&api, &name, "Ready", ready).await?;
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
