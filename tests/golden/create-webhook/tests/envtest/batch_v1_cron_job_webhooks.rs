//! The admission webhooks of CronJob, called by a real API server on its requests.

use kube::api::{Api, PostParams};
use rsop_runtime::envtest::{self, Result, Served};

use webhook_operator::api::v1::CronJob;

/// The kind's name in the tests' namespaces.
const NAME: &str = "cronjob";

/// A create the API server admits or refuses, its webhooks called, without storing the object:
/// tried until the API server calls the test's webhooks, which it does once it has read their
/// configuration.
fn dry_run() -> PostParams {
    PostParams {
        dry_run: true,
        ..PostParams::default()
    }
}

/// The kind's sample named `name`, labelled for the test's webhooks, with `edit` applied to its
/// spec.
fn sample(
    served: &Served,
    name: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> Result<CronJob> {
    let mut object: CronJob = envtest::sample(name)?;
    served.label(&mut object);
    let mut value = serde_json::to_value(&object)?;
    edit(&mut value["spec"]);
    Ok(serde_json::from_value(value)?)
}

/// The API of the CronJobs in the namespace `ns`.
fn objects(client: &kube::Client, ns: &str) -> Api<CronJob> {
    Api::namespaced(client.clone(), ns)
}

/// The API server has the defaulting webhook fill in a missing `spec.foo`.
#[tokio::test]
async fn defaulting_is_enforced_on_a_create() -> Result<()> {
    let Some(plane) = envtest::shared().await else {
        return Ok(());
    };
    let (client, ns) = envtest::test_namespace(plane, NAME, "defaulting").await?;
    let served = Served::start(plane, &client, &ns, webhook_operator::webhooks::all()).await?;
    let api = objects(&client, &ns);
    let params = dry_run();
    let object = sample(&served, &format!("{ns}-a"), |spec| {
        if let Some(spec) = spec.as_object_mut() {
            spec.remove("foo");
        }
    })?;
    served.reviewed(|| api.create(&params, &object)).await??;
    let created = api.create(&PostParams::default(), &object).await?;
    let foo = &serde_json::to_value(&created)?["spec"]["foo"];
    assert_eq!(foo, "cronjob", "{created:#?}");
    envtest::delete_all(&api, [format!("{ns}-a")]).await?;
    Ok(())
}

/// The API server has the validation webhook refuse an empty `spec.foo`, with its message.
#[tokio::test]
async fn validation_is_enforced_on_a_create() -> Result<()> {
    let Some(plane) = envtest::shared().await else {
        return Ok(());
    };
    let (client, ns) = envtest::test_namespace(plane, NAME, "validation").await?;
    let served = Served::start(plane, &client, &ns, webhook_operator::webhooks::all()).await?;
    let api = objects(&client, &ns);
    let params = dry_run();
    let valid = sample(&served, &format!("{ns}-a"), |_| {})?;
    served.reviewed(|| api.create(&params, &valid)).await??;
    let reviews = served.reviews();
    api.create(&PostParams::default(), &valid).await?;
    assert!(served.reviews() > reviews, "the create was not reviewed");
    let invalid = sample(&served, &format!("{ns}-b"), |spec| spec["foo"] = "".into())?;
    match api.create(&PostParams::default(), &invalid).await {
        Err(kube::Error::Api(status)) if status.message.contains("spec.foo must not be empty") => {}
        other => return Err(format!("an empty spec.foo was not refused: {other:?}").into()),
    }
    envtest::delete_all(&api, [format!("{ns}-a")]).await?;
    Ok(())
}
