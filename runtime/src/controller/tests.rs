//! The `Reconciler` on kube's mock client: what it sends around a reconcile function, and what it
//! spares the API server.

use std::sync::atomic::{AtomicUsize, Ordering};

use http::{Method, StatusCode};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::Deserialize;

use super::*;
use crate::testing::{ApiServer, context, finished, mock_client_without_rbac};

/// A kind with a status, as `rsop create api` makes one.
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
pub struct WidgetSpec {
    size: i32,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    conditions: Vec<Condition>,
    #[serde(skip_serializing_if = "Option::is_none")]
    observed_generation: Option<i64>,
}

const WIDGET: &str = "/apis/example.com/v1/namespaces/default/widgets/w";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events?";

fn widget() -> Widget {
    let mut widget = Widget::new("w", WidgetSpec { size: 1 });
    widget.metadata.namespace = Some("default".into());
    widget.metadata.uid = Some("0b7b2a8e-44c1-4c4e-9f1a-9d6c5f5d2f00".into());
    widget.metadata.generation = Some(1);
    widget
}

fn ready(status: bool, message: &str) -> WidgetStatus {
    let reason = if status { "Reconciled" } else { "Failed" };
    WidgetStatus {
        conditions: vec![conditions::new("Ready", status, reason, message, Some(1))],
        observed_generation: Some(1),
    }
}

fn reconciler() -> (Reconciler<Widget>, ApiServer) {
    let (client, server) = mock_client_without_rbac();
    (context(client).reconciler("widget"), server)
}

fn warning_unless_true(condition: &Condition) -> EventType {
    if condition.status == "True" {
        EventType::Normal
    } else {
        EventType::Warning
    }
}

#[tokio::test]
async fn a_status_is_written_when_it_changes_and_each_transition_announced() {
    let (reconciler, mut server) = reconciler();
    let written = {
        let reconciler = reconciler.clone();
        tokio::spawn(async move {
            reconciler
                .write_status(&widget(), &ready(true, "All good"), warning_unless_true)
                .await
        })
    };
    let request = server
        .expect(
            Method::PATCH,
            &format!("{WIDGET}/status?&force=true&fieldManager=manager"),
        )
        .await;
    assert_eq!(
        request.content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    assert_eq!(request.body["apiVersion"], "example.com/v1");
    assert_eq!(request.body["kind"], "Widget");
    assert_eq!(
        request.body["status"]["conditions"][0]["reason"],
        "Reconciled"
    );
    let mut stored = widget();
    stored.status = Some(serde_json::from_value(request.body["status"].clone()).unwrap());
    request.respond(StatusCode::OK, &stored);
    let request = server.expect(Method::POST, EVENTS).await;
    assert_eq!(request.body["type"], "Normal");
    assert_eq!(request.body["reason"], "Reconciled");
    assert_eq!(request.body["reportingController"], "widget-controller");
    let body = request.body.clone();
    request.respond(StatusCode::CREATED, &body);
    finished(written).await.unwrap();

    // The same status again, computed later: its condition keeps the time it last flipped, so
    // there is nothing to write.
    let mut stored = widget();
    let mut status = ready(true, "All good");
    status.conditions[0].last_transition_time =
        Time(Timestamp::from_second(1_700_000_000).unwrap());
    stored.status = Some(status);
    reconciler
        .write_status(&stored, &ready(true, "All good"), warning_unless_true)
        .await
        .unwrap();

    // A new message alone is written, and not announced.
    let updated = {
        let reconciler = reconciler.clone();
        let stored = stored.clone();
        tokio::spawn(async move {
            reconciler
                .write_status(
                    &stored,
                    &ready(true, "All good, twice"),
                    warning_unless_true,
                )
                .await
        })
    };
    let request = server
        .expect(
            Method::PATCH,
            &format!("{WIDGET}/status?&force=true&fieldManager=manager"),
        )
        .await;
    assert_eq!(
        request.body["status"]["conditions"][0]["lastTransitionTime"],
        "2023-11-14T22:13:20Z"
    );
    request.respond(StatusCode::OK, &stored);
    finished(updated).await.unwrap();
    drop(reconciler);
    server.assert_no_more_requests().await;
}

/// What `Reconciler::apply` is asked for: a ConfigMap owned by the widget.
fn desired(data: &str) -> ConfigMap {
    let mut config = ConfigMap::default();
    config.metadata.name = Some("w".into());
    config.metadata.namespace = Some("default".into());
    config.data = Some([("data".to_owned(), data.to_owned())].into());
    config
}

#[tokio::test]
async fn an_owned_object_is_applied_only_when_the_cache_shows_a_difference() {
    let (reconciler, mut server) = reconciler();
    const CONFIG: &str = "/api/v1/namespaces/default/configmaps/w?&force=true&fieldManager=manager";

    // Nothing cached: applied, with the hash of what was applied.
    let applying = {
        let reconciler = reconciler.clone();
        tokio::spawn(async move { reconciler.apply(&widget(), desired("a"), None).await })
    };
    let request = server.expect(Method::PATCH, CONFIG).await;
    assert!(
        request.body["metadata"]["annotations"][APPLIED_HASH_ANNOTATION].is_string(),
        "{}",
        request.body
    );
    assert_eq!(
        request.body,
        serde_json::to_value(stamped(desired("a"))).unwrap()
    );
    let body = request.body.clone();
    request.respond(StatusCode::OK, &body);
    finished(applying).await.unwrap();

    // Cached as applied, with what the API server adds: nothing to send.
    let mut cached = stamped(desired("a"));
    cached.metadata.resource_version = Some("7".into());
    cached.metadata.uid = Some("uid".into());
    let kept = reconciler
        .apply(&widget(), desired("a"), Some(Arc::new(cached.clone())))
        .await
        .unwrap();
    assert_eq!(*kept, cached);

    // Someone changed a field the controller sets, or the controller stopped setting one (the hash
    // tells): applied again.
    for desired in [
        desired("b"),
        ConfigMap {
            data: None,
            ..desired("a")
        },
    ] {
        let applying = {
            let reconciler = reconciler.clone();
            let cached = Arc::new(cached.clone());
            tokio::spawn(async move { reconciler.apply(&widget(), desired, Some(cached)).await })
        };
        let request = server.expect(Method::PATCH, CONFIG).await;
        let body = request.body.clone();
        request.respond(StatusCode::OK, &body);
        finished(applying).await.unwrap();
    }
    drop(reconciler);
    server.assert_no_more_requests().await;
}

#[derive(Debug, thiserror::Error)]
#[error("the widget is broken")]
struct Broken;

#[tokio::test]
async fn reconciliations_are_counted_and_failures_retried_with_growing_delays() {
    let (client, server) = mock_client_without_rbac();
    let ctx = context(client);
    let reconciler = ctx.reconciler::<Widget>("widget");
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    // Fails twice, then succeeds.
    let mut reconcile = reconciler.wrap(move |_: Arc<Widget>, _: Arc<()>| {
        let call = counted.fetch_add(1, Ordering::SeqCst);
        async move {
            if call < 2 {
                Err(Broken)
            } else {
                Ok(Action::await_change())
            }
        }
    });
    let policy = reconciler.error_policy();
    let obj = Arc::new(widget());
    let mut delays = Vec::new();
    for _ in 0..2 {
        let err = reconcile(obj.clone(), Arc::new(())).await.unwrap_err();
        assert!(matches!(err, Error::Reconcile(Broken)), "{err}");
        delays.push(policy(obj.clone(), &err, Arc::new(())));
    }
    assert_eq!(
        delays,
        [500, 1000].map(|ms| Action::requeue(Duration::from_millis(ms)))
    );
    assert_eq!(
        reconcile(obj.clone(), Arc::new(())).await.unwrap(),
        Action::await_change()
    );
    // A success forgets the failures.
    let err = Error::Reconcile(Broken);
    assert_eq!(
        policy(obj, &err, Arc::new(())),
        Action::requeue(Duration::from_millis(500))
    );
    let text = ctx.metrics.encode().unwrap();
    for series in [
        r#"controller_runtime_reconcile_total{controller="widget",result="success"} 1"#,
        r#"controller_runtime_reconcile_total{controller="widget",result="error"} 2"#,
        r#"controller_runtime_reconcile_errors_total{controller="widget"} 2"#,
        r#"controller_runtime_reconcile_time_seconds_count{controller="widget"} 3"#,
    ] {
        assert!(text.contains(series), "{series} missing in:\n{text}");
    }
    drop((reconcile, policy, reconciler, ctx));
    server.assert_no_more_requests().await;
}

#[tokio::test(start_paused = true)]
async fn a_reconciliation_past_the_time_limit_is_retried_by_the_reconcilers_backoff() {
    let (client, server) = mock_client_without_rbac();
    let ctx = context(client).with_reconcile_timeout(Duration::from_secs(60));
    let reconciler = ctx.reconciler::<Widget>("widget");
    let mut reconcile = reconciler.wrap(|_: Arc<Widget>, _: Arc<()>| async {
        std::future::pending::<Result<Action, Broken>>().await
    });
    let err = reconcile(Arc::new(widget()), Arc::new(()))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::TimedOut(_)), "{err}");
    // The controller's own policy decides on its errors only.
    let policy = reconciler.error_policy_with(|_, _: &Broken, _: Arc<()>| Action::await_change());
    assert_eq!(
        policy(Arc::new(widget()), &err, Arc::new(())),
        Action::requeue(Duration::from_millis(500))
    );
    assert_eq!(
        policy(Arc::new(widget()), &Error::Reconcile(Broken), Arc::new(())),
        Action::await_change()
    );
    drop((reconcile, policy, reconciler, ctx));
    server.assert_no_more_requests().await;
}

/// An object the sharder moves to another replica is handed over, and the reconcile function
/// never sees it: its shard and drain labels removed, at the version this replica saw.
#[cfg(feature = "sharding")]
#[tokio::test]
async fn a_drained_object_is_handed_over_instead_of_reconciled() {
    use crate::leader::Timing;
    use crate::shard::{Leases, ShardLabels, Sharding};
    use crate::testing::drained;

    let (client, mut server) = mock_client_without_rbac();
    let labels = ShardLabels::new("test", "example.com");
    let ctx = context(client).with_sharding(Sharding {
        shard: "1".into(),
        leases: Leases {
            shards: 2,
            namespace: "default".into(),
            leader: "test".into(),
            timing: Timing::default(),
        },
        labels: labels.clone(),
    });
    let reconciler = ctx.reconciler::<Widget>("widget");
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let mut reconcile = reconciler.wrap(move |_: Arc<Widget>, _: Arc<()>| {
        counted.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, Broken>(Action::await_change()) }
    });
    let handing_over = tokio::spawn(reconcile(
        Arc::new(drained(widget(), &labels)),
        Arc::new(()),
    ));
    server.expect_hand_over(WIDGET, &labels).await;
    assert_eq!(
        finished(handing_over).await.unwrap(),
        Action::await_change()
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    drop((reconcile, reconciler, ctx));
    server.assert_no_more_requests().await;
}

/// A manager told to stop before its controller's first list has come: no reconciliation has
/// started (kube-runtime holds them until the cache is listed), and the controller returns at
/// once instead of waiting, up to `--graceful-shutdown-timeout`, for a list that will not come.
#[tokio::test]
async fn a_controller_stopped_before_its_first_list_returns_at_once() {
    use futures::StreamExt as _;
    use kube::runtime::reflector;
    use kube::runtime::{WatchStreamExt as _, watcher};

    use crate::manager::{Controllers, supervise};

    async fn run(ctx: Arc<Context>) {
        let reconciler = ctx.reconciler::<ConfigMap>("configmap");
        let (reader, writer) = reflector::store();
        let objects = watch::resilient(watcher(ctx.api::<ConfigMap>(), watcher::Config::default()));
        let objects = ctx
            .until_shutdown(cache::fill(objects, writer))
            .touched_objects();
        controller::Controller::for_stream(objects, reader)
            .graceful_shutdown_on(ctx.shutdown_signal())
            .run(
                reconciler.wrap(|_: Arc<ConfigMap>, _: Arc<()>| async {
                    Ok::<_, Broken>(Action::await_change())
                }),
                reconciler.error_policy(),
                Arc::new(()),
            )
            .for_each(log_result)
            .await;
    }

    let (client, mut server) = mock_client_without_rbac();
    let shutdown = crate::Shutdown::new();
    let ctx = Context::new(client, Arc::default(), None, 1, shutdown.clone());
    let mut controllers = Controllers::new(Arc::new(ctx));
    controllers.start(run);
    // The first list is asked for, and never answered.
    let list = server.next_request().await;
    assert!(list.uri.starts_with("/api/v1/configmaps?"), "{}", list.uri);
    shutdown.trigger();
    let started = std::time::Instant::now();
    supervise(&mut controllers, &shutdown, None, Duration::from_secs(30))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    drop(list);
}
