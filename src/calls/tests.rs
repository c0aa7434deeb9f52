use std::path::Path;

use super::*;

/// An operator written the way people write them: a context whose helper
/// returns an `Api` of any kind, a struct holding `Api`s, helpers in another
/// module, a closure that patches status, `Api::all` on a cluster-scoped
/// kind, events, a finalizer, an eviction, logs and a dynamic object.
const CONTEXT: &str = r"
use kube::{Api, Client, Resource};

pub struct Context {
    pub client: Client,
    pub namespace: Option<String>,
}

impl Context {
    pub fn api<K: Resource>(&self) -> Api<K> {
        match &self.namespace {
            Some(ns) => Api::namespaced(self.client.clone(), ns),
            None => Api::all(self.client.clone()),
        }
    }
}

pub fn nodes(client: Client) -> Api<k8s_openapi::api::core::v1::Node> {
    Api::all(client)
}
";

const CONTROLLER: &str = r#"
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, DynamicObject, ApiResource, GroupVersionKind, Patch, PatchParams, EvictParams, LogParams};
use kube::runtime::{Controller, watcher, finalizer, events::Recorder};

use crate::api::Widget;
use crate::context::{self, Context};

struct Clients {
    secrets: Api<Secret>,
    leases: Api<Lease>,
}

pub async fn run(ctx: Arc<Context>) {
    let widgets = ctx.api::<Widget>();
    let recorder = Recorder::new(ctx.client.clone(), "widget-controller".into());
    Controller::new(widgets, watcher::Config::default())
        .owns(ctx.api::<Deployment>(), watcher::Config::default())
        .watches(ctx.api::<ConfigMap>(), watcher::Config::default(), |_| None);
    let nodes = context::nodes(ctx.client.clone());
    let _ = nodes.list(&Default::default()).await;
}

async fn reconcile(obj: Arc<Widget>, ctx: Arc<Context>, clients: &Clients) {
    let api: Api<Widget> = Api::namespaced(ctx.client.clone(), "default");
    let set_status = |status| async move {
        api.patch_status("name", &PatchParams::default(), &Patch::Merge(status)).await
    };
    let deployments = Api::namespaced(ctx.client.clone(), "default");
    apply(&deployments).await;
    let _ = clients.secrets.get("credentials").await;
    let _ = clients.leases.replace("lease", &Default::default(), &lease).await;
    let owner = obj.controller_owner_ref(&()).unwrap();
    finalizer(&api, "widgets.example.com/cleanup", obj, |event| async { Ok(()) }).await;
    let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), "default");
    pods.evict("web-0", &EvictParams::default()).await;
    pods.logs("web-0", &LogParams::default()).await;
    let gateways = Api::<DynamicObject>::namespaced_with(
        ctx.client.clone(),
        "default",
        &ApiResource::from_gvk(&GroupVersionKind::gvk("gateway.networking.k8s.io", "v1", "Gateway")),
    );
    gateways.delete("gw", &Default::default()).await;
    let anything = Api::namespaced(ctx.client.clone(), "default");
    let _ = anything.get("x").await;
}

async fn apply(deployments: &Api<Deployment>) {
    deployments.patch("web", &PatchParams::apply("widget"), &Patch::Apply(())).await;
    clear(deployments).await;
}

async fn clear<K: kube::Resource>(api: &Api<K>) {
    api.delete_collection(&Default::default(), &Default::default()).await;
}

async fn never_called<K: kube::Resource>(api: &Api<K>) {
    api.get("x").await;
}

async fn label_all(ctx: Arc<Context>) {
    relabel(ctx.api::<kube::core::PartialObjectMeta<Widget>>()).await;
}

async fn relabel<K: kube::Resource>(objects: Api<kube::core::PartialObjectMeta<K>>) {
    objects.patch("x", &PatchParams::default(), &Patch::Merge(())).await;
}

#[cfg(test)]
mod tests {
    #[test]
    fn mock() {
        let api: Api<Secret> = Api::all(client());
        api.delete_collection(&Default::default(), &Default::default());
    }
}

async fn announce(recorder: &Recorder, event: &Event, on: &ObjectReference) {
    let _ = recorder.publish(event, on).await;
}
"#;

fn own() -> Vec<OwnKind> {
    vec![OwnKind {
        kind: "Widget".into(),
        group: "example.com".into(),
        plural: "widgets".into(),
        namespaced: true,
        root: None,
        declared_in: None,
        foreign: false,
    }]
}

fn found() -> Analysis {
    analyze(
        &[
            (Path::new("src/context.rs"), CONTEXT),
            (Path::new("src/controller.rs"), CONTROLLER),
        ],
        &own(),
    )
}

#[test]
fn every_call_is_found_with_its_verb_and_line() {
    let analysis = found();
    let table: Vec<String> = analysis
        .calls
        .iter()
        .map(|c| {
            format!(
                "{}:{} {} {}/{}{}",
                c.location.file.display(),
                c.location.line,
                c.verb,
                if c.group.is_empty() { "core" } else { &c.group },
                c.resource,
                if c.cluster { " (cluster)" } else { "" }
            )
        })
        .collect();
    let expected = [
        "src/controller.rs:20 create events.k8s.io/events",
        "src/controller.rs:20 patch events.k8s.io/events",
        "src/controller.rs:21 list example.com/widgets",
        "src/controller.rs:21 watch example.com/widgets",
        "src/controller.rs:22 list apps/deployments",
        "src/controller.rs:22 watch apps/deployments",
        "src/controller.rs:23 list core/configmaps",
        "src/controller.rs:23 watch core/configmaps",
        "src/controller.rs:25 list core/nodes (cluster)",
        "src/controller.rs:31 patch example.com/widgets/status",
        "src/controller.rs:35 get core/secrets",
        "src/controller.rs:36 update coordination.k8s.io/leases",
        "src/controller.rs:38 patch example.com/widgets",
        "src/controller.rs:40 create core/pods/eviction",
        "src/controller.rs:41 get core/pods/log",
        "src/controller.rs:47 delete gateway.networking.k8s.io/gateways",
        "src/controller.rs:53 create apps/deployments",
        "src/controller.rs:53 patch apps/deployments",
        "src/controller.rs:58 deletecollection apps/deployments",
        // A generic function's request on the metadata of its type parameter, with the kind its
        // caller gives.
        "src/controller.rs:70 patch example.com/widgets",
    ];
    let mut table = table;
    table.sort();
    let mut expected: Vec<String> = expected.iter().map(ToString::to_string).collect();
    expected.sort();
    assert_eq!(table, expected);
}

#[test]
fn a_kind_the_sources_do_not_show_is_not_checked() {
    let analysis = found();
    let unchecked: Vec<String> = analysis
        .unchecked
        .iter()
        .map(|u| {
            format!(
                "{}:{} {}",
                u.location.file.display(),
                u.location.line,
                u.via
            )
        })
        .collect();
    // `never_called` is generic, but nothing calls it: it sends nothing.
    assert_eq!(unchecked, vec!["src/controller.rs:49 anything.get"]);
}

/// Each call as `line verb group/resource`, and each call not checked as
/// `line via`.
fn table(files: &[(&str, &str)]) -> (Vec<String>, Vec<String>) {
    let files: Vec<(&Path, &str)> = files.iter().map(|(p, t)| (Path::new(*p), *t)).collect();
    let analysis = analyze(&files, &own());
    let mut sorted: Vec<&Call> = analysis.calls.iter().collect();
    sorted.sort_by_key(|c| (c.location.line, c.verb));
    let calls = sorted
        .iter()
        .map(|c| {
            format!(
                "{} {} {}/{}",
                c.location.line,
                c.verb,
                if c.group.is_empty() { "core" } else { &c.group },
                c.resource
            )
        })
        .collect();
    let unchecked = analysis
        .unchecked
        .iter()
        .map(|u| format!("{} {}", u.location.line, u.via))
        .collect();
    (calls, unchecked)
}

/// A free generic function is called only through a path: another
/// crate's method of its name (`Response::builder().status(..)`) calls
/// nothing of the crate, so the function, which nothing calls, sends
/// nothing and is not noted; called by its path, it is noted.
#[test]
fn a_method_of_another_type_does_not_call_a_free_function_of_its_name() {
    let code = r"
use kube::{Api, Resource};

async fn status<K: Resource>(api: &Api<K>, name: &str) {
    api.get_status(name).await;
}

async fn respond() -> Response<Body> {
    Response::builder().status(200).body(Body::empty()).unwrap()
}
";
    let (calls, unchecked) = table(&[("src/server.rs", code)]);
    assert!(calls.is_empty(), "{calls:?}");
    assert!(unchecked.is_empty(), "{unchecked:?}");

    let called = format!(
        "{code}\nasync fn report(holder: Opaque) {{ status(&holder.api, \"x\").await; }}\n"
    );
    let (_, unchecked) = table(&[("src/server.rs", &called)]);
    assert_eq!(unchecked, ["5 api.get_status"]);
}

#[test]
fn fields_of_the_same_name_are_read_per_struct() {
    let code = r"
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;

struct Config { api: Api<ConfigMap> }
struct Credentials { api: Api<Secret> }

impl Config {
    async fn load(&self) { self.api.get(&self.name).await; }
}
impl Credentials {
    async fn rotate(&self) { self.api.delete(&self.name, &Default::default()).await; }
}
async fn both(config: &Config, creds: std::sync::Arc<Credentials>, unknown: Opaque) {
    config.api.list(&Default::default()).await;
    creds.api.create(&Default::default(), &secret).await;
    unknown.api.patch(&name, &pp, &patch).await;
}
";
    let (calls, unchecked) = table(&[("src/clients.rs", code)]);
    assert_eq!(
        calls,
        [
            "9 get core/configmaps",
            "12 delete core/secrets",
            "15 list core/configmaps",
            "16 create core/secrets",
        ]
    );
    // A value whose struct the code does not show is named, not dropped.
    assert_eq!(unchecked, ["17 unknown.api.patch"]);
}

#[test]
fn a_traits_associated_kind_is_the_one_its_impls_set() {
    let code = r"
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client};

trait Store {
    type Object;
    fn api(&self) -> Api<Self::Object>;
    async fn read(&self, name: &str) { self.api().get(name).await; }
}
struct Settings { client: Client }
impl Store for Settings {
    type Object = ConfigMap;
    fn api(&self) -> Api<Self::Object> { Api::all(self.client.clone()) }
}
trait Wiped { type Object; async fn wipe(&self); }
struct Vault { client: Client }
impl Wiped for Vault {
    type Object = Secret;
    async fn wipe(&self) {
        Api::<Self::Object>::all(self.client.clone()).delete_collection(&dp, &lp).await;
    }
}
async fn run(settings: Settings, vault: Vault) {
    settings.read('x').await;
    vault.wipe().await;
}
"
    .replace('\'', "\"");
    let (calls, unchecked) = table(&[("src/store.rs", &code)]);
    // The trait's provided method sends its request on the kind its one
    // `impl` sets; in an `impl`, `Self::Object` is the one it sets.
    assert_eq!(
        calls,
        ["8 get core/configmaps", "20 deletecollection core/secrets"]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_field_of_another_struct_is_no_api_for_its_name() {
    let code = r"
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, CustomResource};

struct Loader { data_sets: Api<ConfigMap> }
#[derive(CustomResource)]
#[kube(group = 'example.com', version = 'v1', kind = 'Task')]
struct TaskSpec { data_sets: Vec<String>, cfg: Cfg }
struct Cfg { data_sets: Vec<String> }

async fn load(loader: &Loader, task: &Task, other: Opaque) {
    loader.data_sets.list(&Default::default()).await;
    for name in task.spec.data_sets.iter() {}
    if task.spec.cfg.data_sets.is_empty() {}
    if other.report.data_sets.is_empty() {}
}
"
    .replace('\'', "\"");
    let (calls, unchecked) = table(&[("src/load.rs", &code)]);
    // `Task`'s `spec` is the `TaskSpec` it is derived from; a field of
    // another struct is no `Api`, and a method no `Api` has (`is_empty`)
    // on a field whose struct is not shown says the same.
    assert_eq!(calls, ["12 list core/configmaps"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_generic_wrapper_is_followed_to_the_kinds_its_users_name() {
    let code = r"
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use kube::{Api, Client, Resource};

pub struct Store<K> { api: Api<K>, client: Client }

impl<K: Resource> Store<K> {
    pub fn new(client: Client) -> Self { Self { api: Api::all(client.clone()), client } }
    pub async fn save(&self, name: &str, obj: &K) {
        self.api.patch(name, &PatchParams::apply(NAME), &Patch::Apply(obj)).await;
    }
    pub async fn drop_one(&self, name: &str) { self.api.delete(name, &Default::default()).await; }
}

struct Ctx { services: Store<Service> }

async fn reconcile(ctx: &Ctx, client: Client) {
    let deployments = Store::<Deployment>::new(client.clone());
    deployments.save(NAME, &deployment).await;
    ctx.services.drop_one(NAME).await;
}
";
    let (calls, unchecked) = table(&[("src/store.rs", code)]);
    assert_eq!(
        calls,
        [
            "11 create apps/deployments",
            "11 patch apps/deployments",
            "13 delete core/services",
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn renames_guards_and_literal_resources_name_their_kind() {
    let code = r#"
use crate::api::Widget as W;
use k8s_openapi::api::core::v1::Pod as KubePod;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::core::DeserializeGuard;
use kube::runtime::events::Recorder;

async fn run(client: Client, reference: ObjectReference) {
    let widgets: Api<W> = Api::all(client.clone());
    widgets.list(&Default::default()).await;
    let pods: Api<KubePod> = Api::default_namespaced(client.clone());
    pods.delete("p", &Default::default()).await;
    let guarded: Api<DeserializeGuard<W>> = Api::all(client.clone());
    Controller::new(guarded, Default::default());
    let resource = ApiResource {
        group: "monitoring.coreos.com".into(),
        version: "v1".into(),
        api_version: "monitoring.coreos.com/v1".into(),
        kind: "ServiceMonitor".into(),
        plural: "servicemonitors".into(),
    };
    let monitors = Api::<DynamicObject>::namespaced_with(client.clone(), "ns", &resource);
    monitors.create(&Default::default(), &obj).await;
    let gvk = GroupVersionKind::gvk("cert-manager.io", "v1", "Certificate");
    let ar = ApiResource::from_gvk(&gvk);
    let certs: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    certs.get("c").await;
    let recorder = Recorder::new(client, reporter, reference);
}

async fn announce(recorder: &Recorder, event: &Event) {
    let _ = recorder.publish(event).await;
}
"#;
    let (calls, unchecked) = table(&[("src/run.rs", code)]);
    assert_eq!(
        calls,
        [
            "10 list example.com/widgets",
            "12 delete core/pods",
            "14 list example.com/widgets",
            "14 watch example.com/widgets",
            "23 create monitoring.coreos.com/servicemonitors",
            "27 get cert-manager.io/certificates",
            // kube-runtime's Recorder of 0.95 and before creates events only.
            "28 create events.k8s.io/events",
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn requests_with_a_client_of_another_cluster_are_marked_remote() {
    let code = r"
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::{Api, Client, Config, config::Kubeconfig};

async fn guest_client(yaml: &str) -> anyhow::Result<Client> {
    let kubeconfig = Kubeconfig::from_yaml(yaml)?;
    let config = Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
    Ok(Client::try_from(config)?)
}

async fn guest(&self, name: &str) -> anyhow::Result<Client> {
    guest_client(&self.kubeconfig(name).await?).await
}

async fn wait_ready(guest: &Client) {
    let pods: Api<Pod> = Api::default_namespaced(guest.clone());
    pods.list(&Default::default()).await;
}

async fn reconcile(host: Client, yaml: &str) {
    let secrets: Api<Secret> = Api::default_namespaced(host.clone());
    secrets.get(NAME).await;
    let remote = self.guest(NAME).await.unwrap();
    let maps: Api<ConfigMap> = Api::default_namespaced(remote.clone());
    maps.create(&Default::default(), &map).await;
    wait_ready(&remote).await;
}
";
    let files = [(Path::new("src/guest.rs"), code)];
    let analysis = analyze(&files, &own());
    let mut remote: Vec<String> = analysis
        .calls
        .iter()
        .map(|c| format!("{} {} {}", c.location.line, c.verb, c.remote))
        .collect();
    remote.sort();
    assert_eq!(remote, ["17 list true", "22 get false", "25 create true"]);
}

#[test]
fn hand_written_resources_and_resource_functions_name_their_kind() {
    let kinds = r#"
use std::borrow::Cow;
use kube::Resource;

pub struct Tunnel { metadata: ObjectMeta }

impl Resource for Tunnel {
    type DynamicType = ();
    type Scope = k8s_openapi::ClusterResourceScope;
    fn kind(_: &()) -> Cow<'_, str> { Cow::Borrowed("Tunnel") }
    fn group(_: &()) -> Cow<'_, str> { Cow::Borrowed("net.example.com") }
    fn version(_: &()) -> Cow<'_, str> { Cow::Borrowed("v1") }
    fn plural(_: &()) -> Cow<'_, str> { Cow::Borrowed("tunnels") }
}

const VELERO_GROUP: &str = "velero.io";

pub fn backup_resource() -> ApiResource {
    ApiResource {
        group: VELERO_GROUP.into(),
        version: "v1".into(),
        api_version: "velero.io/v1".into(),
        kind: "Backup".into(),
        plural: "backups".into(),
    }
}
"#;
    let code = r"
use crate::kinds::{backup_resource, Tunnel};

async fn run(client: Client) {
    let tunnels: Api<Tunnel> = Api::all(client.clone());
    tunnels.delete(NAME, &Default::default()).await;
    let backups: Api<DynamicObject> = Api::namespaced_with(client, NS, &backup_resource());
    backups.create(&Default::default(), &backup).await;
}
";
    let (calls, unchecked) = table(&[("src/kinds.rs", kinds), ("src/run.rs", code)]);
    assert_eq!(
        calls,
        [
            "6 delete net.example.com/tunnels",
            "8 create velero.io/backups"
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_generic_function_takes_the_kind_of_the_value_or_turbofish_it_is_given() {
    let code = r"
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client, Resource};

async fn add_finalizer<T: Resource>(client: &Client, obj: &T) {
    let api: Api<T> = Api::namespaced(client.clone(), NS);
    api.patch(NAME, &Default::default(), &patch).await;
}

async fn drop_all<T: Resource>(client: Client) {
    let api: Api<T> = Api::all(client);
    api.delete_collection(&Default::default(), &Default::default()).await;
}

async fn reconcile(client: Client, map: std::sync::Arc<ConfigMap>) {
    add_finalizer(&client, &map).await;
    drop_all::<Secret>(client).await;
}
";
    let (calls, unchecked) = table(&[("src/generic.rs", code)]);
    assert_eq!(
        calls,
        [
            "7 patch core/configmaps",
            "12 deletecollection core/secrets"
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn calls_inside_macros_of_expressions_are_read() {
    let code = r"
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment};
use kube::{Api, Client, Resource};

async fn scale<K: Resource>(api: Api<K>) {
    api.patch(NAME, &Default::default(), &patch).await;
}

async fn reconcile(client: Client) {
    let deployments: Api<Deployment> = Api::default_namespaced(client.clone());
    let daemons: Api<DaemonSet> = Api::default_namespaced(client.clone());
    let _ = tokio::join!(scale(deployments), daemons.list(&Default::default()));
}
";
    let (calls, unchecked) = table(&[("src/scale.rs", code)]);
    assert_eq!(
        calls,
        ["6 patch apps/deployments", "12 list apps/daemonsets"]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn an_erased_api_resource_names_its_kind() {
    let code = r"
use kube::api::{Api, ApiResource, DynamicObject};
use crate::api::Widget;

async fn run(client: Client) {
    let api: Api<DynamicObject> = Api::all_with(client, &ApiResource::erase::<Widget>(&()));
    api.list(&Default::default()).await;
}
";
    let (calls, unchecked) = table(&[("src/run.rs", code)]);
    assert_eq!(calls, ["7 list example.com/widgets"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_kind_whose_attribute_kube_derive_would_refuse_still_names_its_requests() {
    let kinds = r##"
#[derive(CustomResource)]
#[kube(
    kind = "Config",
    group = "cfg.example.com",
    version = "v1",
    namespaced,
    printcolumn = r#"{"name":"A", "jsonPath":".a"}, {"name":"B", "jsonPath":".b"}"#,
    no_such_key = 3
)]
pub struct ConfigSpec {}
"##;
    let code = r"
async fn run(client: Client) {
    let api: Api<Config> = Api::default_namespaced(client);
    api.patch(NAME, &Default::default(), &patch).await;
}
";
    let (calls, unchecked) = table(&[("src/crd.rs", kinds), ("src/run.rs", code)]);
    assert_eq!(calls, ["4 patch cfg.example.com/configs"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_traits_provided_method_makes_its_requests() {
    let code = r"
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::{Api, Client};

pub trait Accounts {
    fn account(&self) -> &ServiceAccount;

    async fn apply(&self, client: &Client) {
        let api: Api<ServiceAccount> = Api::default_namespaced(client.clone());
        api.create(&Default::default(), self.account()).await;
    }
}
";
    let (calls, unchecked) = table(&[("src/accounts.rs", code)]);
    assert_eq!(calls, ["10 create core/serviceaccounts"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_trait_function_returning_an_api_of_self_names_the_type_it_is_called_on() {
    let code = r"
use kube::{Api, Client};
use crate::api::Widget;

pub trait GetApi {
    fn get_api(client: Client) -> Api<Self>;
}

async fn get_or_create<R: GetApi>(client: Client, res: &R) {
    let api = R::get_api(client);
    api.create(&Default::default(), res).await;
}

async fn reconcile(client: Client, widget: &Widget) {
    get_or_create(client.clone(), widget).await;
    Widget::get_api(client).delete(NAME, &Default::default()).await;
}
";
    let (calls, unchecked) = table(&[("src/get.rs", code)]);
    assert_eq!(
        calls,
        [
            "11 create example.com/widgets",
            "16 delete example.com/widgets"
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_kind_is_found_by_the_name_its_root_attribute_or_resource_impl_gives_its_type() {
    let kinds = r#"
#[derive(CustomResource)]
#[kube(kind = "AuthenticationConfiguration", group = "auth.example.com", version = "v1", root = "AuthConfig")]
pub struct AuthenticationConfigurationSpec {}

#[derive(CustomResource)]
#[kube(kind = "Gate", group = "auth.example.com", version = "v1", namespaced, root = "Door", no_such_key)]
pub struct GateSpec {}

pub struct RemoteTunnel { metadata: ObjectMeta }

impl Resource for RemoteTunnel {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;
    fn kind(_: &()) -> Cow<'_, str> { Cow::Borrowed("Tunnel") }
    fn group(_: &()) -> Cow<'_, str> { Cow::Borrowed("net.example.com") }
}
"#;
    let code = r"
async fn run(client: Client) {
    let configs: Api<AuthConfig> = Api::all(client.clone());
    configs.list(&Default::default()).await;
    let doors = Api::<Door>::default_namespaced(client.clone());
    doors.get(NAME).await;
    let tunnels: Api<RemoteTunnel> = Api::default_namespaced(client);
    tunnels.create(&Default::default(), &tunnel).await;
}
";
    let (calls, unchecked) = table(&[("src/crd.rs", kinds), ("src/run.rs", code)]);
    assert_eq!(
        calls,
        [
            "4 list auth.example.com/authenticationconfigurations",
            "6 get auth.example.com/gates",
            "8 create net.example.com/tunnels"
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// rancher's pattern: a trait method returning `Api<Self>`, implemented
/// through a helper trait of the same method name on `(K, Scope)` that
/// returns `Api<K>`; generic functions call it on their parameter, and
/// callers pass fields of `self` in a trait `impl`.
#[test]
fn a_helper_returning_its_impls_parameter_does_not_hide_an_api_of_self() {
    let code = r"
pub trait GetApi: kube::Resource + Sized {
    fn get_api(client: kube::Client, ns: &str) -> kube::Api<Self>;
}
pub trait GetApiImpl {
    type Resource: kube::Resource;
    fn get_api(client: kube::Client, ns: &str) -> kube::Api<Self::Resource>;
}
impl<K> GetApiImpl for (K, NamespaceResourceScope) {
    type Resource = K;
    fn get_api(client: kube::Client, ns: &str) -> kube::Api<K> {
        Api::namespaced(client, ns)
    }
}
pub(crate) async fn patch<R: GetApi>(ctx: Arc<Context>, res: &mut R, pp: &PatchParams) -> Result<()> {
    let api = R::get_api(ctx.client.clone(), res.get_namespace());
    api.patch(&res.name_any(), pp, &Patch::Apply(&res)).await?;
}
pub struct Bundle {
    fleet: api::Widget,
}
impl FleetBundle for Bundle {
    async fn sync(&mut self, ctx: Arc<Context>) -> Result<Action> {
        let cluster = &mut self.fleet;
        patch(ctx.clone(), cluster, &pp).await?;
        let secret: Secret = build_secret(&self.fleet);
        patch(ctx.clone(), &secret, &pp).await?;
        let sa = build_service_account(NAME);
        patch(ctx, &sa, &pp).await?;
    }
}
fn build_service_account(name: &str) -> ServiceAccount { todo!() }
";
    let (calls, unchecked) = table(&[("src/run.rs", code)]);
    assert_eq!(
        calls,
        [
            "17 create core/secrets",
            "17 create core/serviceaccounts",
            "17 create example.com/widgets",
            "17 patch core/secrets",
            "17 patch core/serviceaccounts",
            "17 patch example.com/widgets"
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn an_api_whose_kind_rustc_infers_takes_the_kind_of_the_answer_it_is_bound_to() {
    let code = r"
async fn run(client: Client, obj: &Tunnel) -> Result<()> {
    let secrets = Api::namespaced(client.clone(), NS);
    let secret: Secret = secrets.get(NAME).await?;
    let maps = Api::namespaced(client.clone(), NS);
    let map: Option<ConfigMap> = maps.get_opt(NAME).await.unwrap();
    let pods = Api::namespaced(client, NS);
    let list: ObjectList<Pod> = pods.list(&lp).await?;
}
";
    let (calls, unchecked) = table(&[("src/run.rs", code)]);
    assert_eq!(
        calls,
        [
            "4 get core/secrets",
            "6 get core/configmaps",
            "8 list core/pods"
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn code_behind_a_feature_off_by_default_is_marked_with_its_cfg() {
    let manifest: toml_edit::DocumentMut =
        "[features]\ndefault = [\"metrics\"]\nmetrics = []\ngateway = []\n"
            .parse()
            .unwrap();
    let config = BuildConfig::from_manifest(Some(&manifest));
    let code = r#"
async fn run(client: Client) {
    #[cfg(feature = "gateway")]
    let routes = async {
        let routes: Api<Lease> = Api::all(client.clone());
        routes.list(&lp).await
    };
    let pods: Api<Pod> = Api::all(client.clone());
    #[cfg(all(feature = "metrics", not(debug_assertions)))]
    pods.list(&lp).await;
    match mode {
        #[cfg(feature = "gateway")]
        Mode::Gateway => Api::<Secret>::all(client.clone()).list(&lp).await,
        _ => Api::<ConfigMap>::all(client).list(&lp).await,
    };
}

#[cfg(not(feature = "metrics"))]
async fn unused(client: Client) {
    Api::<Node>::all(client).list(&lp).await;
}

async fn outer(client: Client) {
    middle::<Service>(client).await;
}

async fn middle<T: Resource>(client: Client) {
    #[cfg(feature = "gateway")]
    inner::<T>(client).await;
}

async fn inner<K: Resource>(client: Client) {
    let api: Api<K> = Api::all(client);
    api.delete(NAME, &dp).await;
}
"#;
    let files: Vec<CrateFile<'_>> = vec![(Path::new("src/run.rs"), code, Some(&config))];
    let analysis = analyze_when(&files, &[], || Some(Vec::new())).unwrap();
    let mut found: Vec<String> = analysis
        .calls
        .iter()
        .map(|c| {
            format!(
                "{} {} {} {}",
                c.location.line,
                c.verb,
                c.resource,
                c.gated.as_deref().unwrap_or("built")
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            "10 list pods built",
            "13 list secrets feature = \"gateway\"",
            "14 list configmaps built",
            "20 list nodes not (feature = \"metrics\")",
            "34 delete services feature = \"gateway\"",
            "6 list leases feature = \"gateway\""
        ]
    );
    assert!(analysis.unchecked.is_empty(), "{:?}", analysis.unchecked);
}

/// Two crates each with a kind named `Cluster`, a local type that inherits
/// one of them, another that inherits a Kubernetes kind, a kind whose
/// scope is in an attribute of its own, and `Self::api()` in a kind's
/// `impl`.
#[test]
fn kinds_of_the_same_name_are_told_apart_by_the_path_the_code_names() {
    let capi = r#"
#[derive(CustomResource)]
#[kube(group = "cluster.x-k8s.io", version = "v1beta1", kind = "Cluster", plural = "clusters")]
#[kube(namespaced)]
pub struct ClusterSpec {}
"#;
    let fleet = r#"
#[derive(CustomResource)]
#[kube(group = "fleet.cattle.io", version = "v1alpha1", kind = "Cluster", plural = "clusters")]
#[kube(namespaced)]
#[kube(status = "ClusterStatus")]
pub struct ClusterSpec {}

#[derive(CustomResource)]
#[kube(group = "fleet.cattle.io", version = "v1alpha1", kind = "ClusterGroup")]
pub struct ClusterGroupSpec {}
"#;
    let local = r#"
#[derive(Resource, Serialize, Deserialize, Clone, Debug)]
#[resource(inherit = fleet_api_rs::fleet_cluster::Cluster)]
pub struct Cluster {
    pub metadata: ObjectMeta,
}

#[derive(Resource, Serialize, Deserialize, Clone, Debug)]
#[resource(inherit = "ConfigMap")]
pub struct FleetConfig {
    pub metadata: ObjectMeta,
}
"#;
    let code = r"
use crate::api::fleet_cluster;
use cluster_api_rs::capi_cluster::Cluster;

pub trait GetApi { fn get_api(client: Client) -> Api<Self>; }

async fn run(client: Client) {
    let fleet: Api<fleet_cluster::Cluster> = Api::all(client.clone());
    fleet.list(&lp).await;
    let capi: Api<Cluster> = Api::all(client.clone());
    capi.list(&lp).await;
    let configs: Api<DeserializeGuard<FleetConfig>> = Api::default_namespaced(client);
    configs.get(NAME).await;
}

impl Sync for ClusterGroup {
    async fn sync(&self, client: Client) {
        let api = Self::get_api(client);
        api.delete(NAME, &dp).await;
    }
}
";
    let files = [
        (
            "/cargo/registry/src/index/cluster-api-rs-1.12.3/src/api/capi_cluster.rs",
            capi,
        ),
        (
            "/cargo/registry/src/index/fleet-api-rs-0.14.3/src/api/fleet_cluster.rs",
            fleet,
        ),
        ("src/api/fleet_cluster.rs", local),
        ("src/run.rs", code),
    ];
    let (calls, unchecked) = table(&files);
    assert_eq!(
        calls,
        [
            "9 list fleet.cattle.io/clusters",
            "11 list cluster.x-k8s.io/clusters",
            "13 get core/configmaps",
            "19 delete fleet.cattle.io/clustergroups"
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
    // A bare `Cluster` in a file that names neither crate is not guessed,
    // nor is a `Job` two crates declare taken for Kubernetes' own.
    let bare = "async fn run(client: Client) {\n    let api: Api<Cluster> = Api::all(client.clone());\n    api.list(&lp).await;\n    let jobs: Api<Job> = Api::all(client);\n    jobs.list(&lp).await;\n}\n";
    let job = |group: &str| {
        format!(
            "#[derive(CustomResource)]\n#[kube(group = \"{group}\", version = \"v1\", kind = \"Job\")]\npub struct JobSpec {{}}\n"
        )
    };
    let (a, b) = (job("a.example.com"), job("b.example.com"));
    let (calls, unchecked) = table(&[
        files[0],
        files[1],
        ("/cargo/a-1.0.0/src/lib.rs", &a),
        ("/cargo/b-1.0.0/src/lib.rs", &b),
        ("src/run.rs", bare),
    ]);
    assert!(calls.is_empty(), "{calls:?}");
    assert_eq!(unchecked, ["3 api.list", "5 jobs.list"]);
}

/// A kind passed down generic functions: `main` runs `run::<Widget>` in a
/// `select!`, `run<T>` hands its controller's kind to `reconcile<T>` (by
/// name or through a closure), which calls `remove<T>`.
#[test]
fn a_kind_is_passed_down_generic_functions_and_controllers() {
    let code = r"
async fn main(client: Client) {
    tokio::select! {
        r = run::<Widget>(client.clone()) => { r? }
        r = watch_all::<Secret>(client.clone()) => r?,
    }
}

async fn run<T: Resource>(client: Client) {
    let api = Api::<T>::all(client.clone());
    Controller::new(api, Config::default())
        .run(reconcile, error_policy, ctx)
        .for_each(|_| async {})
        .await;
}

async fn watch_all<K: Resource>(client: Client) {
    Controller::new(Api::<K>::all(client), Config::default())
        .run(move |obj: Arc<K>, ctx| reconcile(obj, ctx), error_policy, ctx)
        .await;
}

async fn reconcile<T: Resource>(obj: Arc<T>, ctx: Arc<Context>) -> Result<Action> {
    remove::<T>(&ctx.client, &obj).await
}

async fn remove<K: Resource>(client: &Client, obj: &K) -> Result<Action> {
    let api: Api<K> = Api::namespaced(client.clone(), NS);
    api.delete(&obj.name_any(), &dp).await
}
";
    let (calls, unchecked) = table(&[("src/main.rs", code)]);
    assert_eq!(
        calls,
        [
            "11 list example.com/widgets",
            "11 watch example.com/widgets",
            "18 list core/secrets",
            "18 watch core/secrets",
            "29 delete core/secrets",
            "29 delete example.com/widgets",
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn every_api_method_of_kube_sends_its_request_and_an_unknown_one_is_noted() {
    let code = r#"
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Node, Pod, ServiceAccount};
use kube::{Api, Client};

async fn maintain(client: Client, request: &TokenRequest) {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "ops");
    accounts.create_token_request("runner", &Default::default(), request).await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "ops");
    deployments.restart("web").await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "ops");
    pods.get_ephemeral_containers("web-0").await;
    pods.patch_resize("web-0", &Default::default(), &patch).await;
    pods.exec("web-0", ["true"], &Default::default()).await;
    let nodes: Api<Node> = Api::all(client);
    nodes.cordon("node-1").await;
    let url = nodes.resource_url();
    nodes.drain_gently("node-1").await;
}
"#;
    let (calls, unchecked) = table(&[("src/ops.rs", code)]);
    assert_eq!(
        calls,
        [
            "8 create core/serviceaccounts/token",
            "10 patch apps/deployments",
            "12 get core/pods/ephemeralcontainers",
            "13 patch core/pods/resize",
            "14 create core/pods/exec",
            "14 get core/pods/exec",
            "16 patch core/nodes",
        ]
    );
    // A method no kube release has (a trait of the crate's, say) is not a
    // request rsop can name, and not one it leaves out in silence.
    assert_eq!(unchecked, ["18 nodes.drain_gently"]);
    let files = [(Path::new("src/ops.rs"), code)];
    let analysis = analyze(&files, &own());
    assert_eq!(analysis.unchecked[0].unknown, Unknown::Method);
}

#[test]
fn a_generic_functions_kind_comes_from_its_arguments_and_from_function_values() {
    let code = r#"
use k8s_openapi::api::core::v1::{Secret, Service};
use kube::{Api, Client, Resource};

async fn prune<K>(client: Client, keep: Option<&K>)
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
{
    let api: Api<K> = Api::namespaced(client, "apps");
    api.delete_collection(&Default::default(), &Default::default()).await;
}

async fn reconcile<K: Resource>(object: Arc<K>, ctx: Arc<Context>) -> Result<Action, Error> {
    let api: Api<K> = Api::namespaced(ctx.client.clone(), "apps");
    api.get_status("x").await;
    Ok(Action::await_change())
}

async fn run(client: Client, svc: Option<Service>) {
    prune(client.clone(), svc.as_ref()).await;
    serve(client, reconcile::<Secret>).await;
}

async fn serve<F>(client: Client, reconciler: F) {}
"#;
    let (calls, unchecked) = table(&[("src/prune.rs", code)]);
    assert_eq!(
        calls,
        [
            "10 deletecollection core/services",
            "15 get core/secrets/status",
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_generic_function_passed_without_its_kind_is_noted() {
    let code = r#"
use kube::{Api, Client, Resource};

async fn reconcile<K: Resource>(object: Arc<K>, ctx: Arc<Context>) -> Result<Action, Error> {
    let api: Api<K> = Api::namespaced(ctx.client.clone(), "apps");
    api.get_status("x").await;
    Ok(Action::await_change())
}

async fn run(client: Client) {
    serve(client, reconcile).await;
}

async fn serve<F>(client: Client, reconciler: F) {}
"#;
    let (calls, unchecked) = table(&[("src/run.rs", code)]);
    assert!(calls.is_empty(), "{calls:?}");
    assert_eq!(unchecked, ["6 api.get_status"]);
}

#[test]
fn a_macros_requests_are_made_where_it_is_invoked() {
    let macros = r"
macro_rules! ensure {
    ($api:expr, $name:expr) => {
        if $api.get_opt($name).await?.is_none() {
            $api.create(&PostParams::default(), &fresh($name)).await?;
        }
    };
}
";
    let code = r#"
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};

async fn run(client: Client) -> anyhow::Result<()> {
    let secrets: Api<Secret> = Api::default_namespaced(client);
    ensure!(secrets, "token");
    Ok(())
}
"#;
    let (calls, unchecked) = table(&[("src/macros.rs", macros), ("src/run.rs", code)]);
    assert_eq!(calls, ["7 create core/secrets", "7 get core/secrets"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_name_reads_the_binding_before_it() {
    let code = r"
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::{Api, Client};

async fn cleanup(client: Client) {
    let hooks: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    hooks.delete(NAME, &Default::default()).await;
    let hooks: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    hooks.delete(NAME, &Default::default()).await;
    match kind {
        Kind::Pods => {
            let api: Api<Pod> = Api::all(client.clone());
            api.list(&Default::default()).await;
        }
        Kind::Nodes => {
            let api: Api<Node> = Api::all(client.clone());
            api.list(&Default::default()).await;
        }
    }
}
";
    let (calls, unchecked) = table(&[("src/cleanup.rs", code)]);
    assert_eq!(
        calls,
        [
            "9 delete admissionregistration.k8s.io/mutatingwebhookconfigurations",
            "11 delete admissionregistration.k8s.io/validatingwebhookconfigurations",
            "15 list core/pods",
            "19 list core/nodes",
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_method_the_crate_adds_to_api_makes_its_requests_with_the_callers_kind() {
    let code = r"
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::{Api, Client};

pub trait Upscale {
    async fn upscale(&self, name: &str);
}

impl Upscale for Api<HorizontalPodAutoscaler> {
    async fn upscale(&self, name: &str) {
        self.patch(name, &Default::default(), &patch).await;
    }
}

async fn run(client: Client) {
    let hpas: Api<HorizontalPodAutoscaler> = Api::all(client);
    hpas.upscale(NAME).await;
}
";
    let (calls, unchecked) = table(&[("src/upscale.rs", code)]);
    assert_eq!(calls, ["11 patch autoscaling/horizontalpodautoscalers"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_generic_method_the_crate_adds_to_api_takes_the_kind_of_its_receiver() {
    let code = r"
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};

pub trait DeleteOpt<T> {
    async fn delete_opt(&self, name: &str);
}

impl<T: Resource> DeleteOpt<T> for Api<T> {
    async fn delete_opt(&self, name: &str) {
        self.delete(name, &Default::default()).await;
    }
}

async fn run(client: Client) {
    let secrets: Api<Secret> = Api::default_namespaced(client);
    secrets.delete_opt(NAME).await;
}
";
    let (calls, unchecked) = table(&[("src/delete.rs", code)]);
    assert_eq!(calls, ["11 delete core/secrets"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn an_api_made_in_each_branch_has_the_kind_they_agree_on() {
    let code = r"
use kube::{Api, Client};
use crate::api::Widget;

async fn list(client: Client, namespace: Option<String>) {
    let widgets = if let Some(ns) = namespace {
        Api::<Widget>::namespaced(client, &ns)
    } else {
        Api::<Widget>::all(client)
    };
    widgets.list(&Default::default()).await;
}
";
    let (calls, unchecked) = table(&[("src/list.rs", code)]);
    assert_eq!(calls, ["11 list example.com/widgets"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn an_api_given_to_another_crates_function_is_noted() {
    let code = r"
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, Client};
use operator_framework::install::create_or_update;

async fn install(client: Client) {
    let maps: Api<ConfigMap> = Api::default_namespaced(client);
    create_or_update(&maps, Some(NS), NAME, |map| map).await;
    let held = Arc::new(maps.clone());
    let wrapped = Holder(maps);
}
";
    let (calls, unchecked) = table(&[("src/install.rs", code)]);
    assert!(calls.is_empty(), "{calls:?}");
    assert_eq!(unchecked, ["8 create_or_update"]);
}

#[test]
fn api_of_self_in_a_kinds_impl_is_of_that_kind() {
    let code = r"
use kube::{Api, Client};
use crate::api::Widget;

impl Widget {
    async fn refresh(&self, client: Client) {
        let api = Api::<Self>::default_namespaced(client);
        api.get_status(NAME).await;
    }
}
";
    let (calls, unchecked) = table(&[("src/widget.rs", code)]);
    assert_eq!(calls, ["8 get example.com/widgets/status"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_kind_imported_through_a_module_alias_is_known() {
    let code = r"
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiexts;
use apiexts::CustomResourceDefinition;
use kube::{Api, Client};

async fn install(client: Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client);
    crds.create(&Default::default(), &crd()).await;
}
";
    let (calls, unchecked) = table(&[("src/install.rs", code)]);
    assert_eq!(
        calls,
        ["8 create apiextensions.k8s.io/customresourcedefinitions"]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_method_only_one_kind_has_tells_the_kind_of_an_inferred_api() {
    let code = r"
use kube::{Api, Client};

async fn token(client: Client, request: &TokenRequest) {
    Api::namespaced(client, NS)
        .create_token_request(NAME, &Default::default(), request)
        .await;
}
";
    let (calls, unchecked) = table(&[("src/token.rs", code)]);
    assert_eq!(calls, ["6 create core/serviceaccounts/token"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn kube_leader_elections_lease_lock_reads_creates_and_patches_its_lease() {
    let code = r#"
use kube::Client;
use kube_leader_election::{LeaseLock, LeaseLockParams};

async fn lead(client: Client) {
    let lock = LeaseLock::new(client, "ops", LeaseLockParams { lease_name: "ops".into(), ..params() });
    lock.try_acquire_or_renew().await;
}
"#;
    let (calls, unchecked) = table(&[("src/lead.rs", code)]);
    assert_eq!(
        calls,
        [
            "6 create coordination.k8s.io/leases",
            "6 get coordination.k8s.io/leases",
            "6 patch coordination.k8s.io/leases",
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_client_given_to_another_crates_function_is_noted() {
    let code = r"
use kube::{Api, Client};
use kube_coordinate::{LeaderElector, Config};

async fn run(client: Client) {
    let elector = LeaderElector::spawn(Config::new(NAME), client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let shared = Arc::new(client.clone());
    // Wrappers hold it for the code that takes it out again.
    let local = Rc::new(RefCell::new(client.clone()));
    let state = web::Data::new(client);
}
";
    let (calls, unchecked) = table(&[("src/run.rs", code)]);
    assert!(calls.is_empty(), "{calls:?}");
    assert_eq!(unchecked, ["6 LeaderElector::spawn"]);
}

/// The crate's own function given a `Client`, in a file that makes no
/// request (a webhook server that keeps the client for later), is read:
/// it is not another crate's.
#[test]
fn a_client_given_to_the_crates_own_function_is_not_noted() {
    let main = r"
use kube::Client;
use crate::webhooks::run_webhook_server;

async fn main() {
    let client = Client::try_default().await.unwrap();
    run_webhook_server(client, CERT).await;
}
";
    let server = r"
use kube::Client;

pub async fn run_webhook_server(client: Client, cert: &str) {
    serve(cert).await;
}
";
    let (calls, unchecked) = table(&[("src/main.rs", main), ("src/webhooks/server.rs", server)]);
    assert!(calls.is_empty(), "{calls:?}");
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_function_named_through_a_type_is_not_a_free_generic_of_that_name() {
    let generic = r"
use kube::{Api, Client};

async fn reconcile<S, K>(object: Arc<K>, ctx: Arc<Context>) -> Result<Action, Error> {
    let api: Api<K> = Api::default_namespaced(ctx.client.clone());
    api.replace_status(NAME, &Default::default(), &status).await;
    Ok(Action::await_change())
}
";
    let secret = r"
use kube::{Api, Client};
use kube::runtime::Controller;
use crate::api::Widget;

impl Widget {
    fn controller(client: Client) {
        let api = Api::<Self>::default_namespaced(client);
        Controller::new(api, Default::default()).run(Self::reconcile, error_policy, ctx);
    }
    async fn reconcile(object: Arc<Self>, ctx: Arc<Context>) -> Result<Action, Error> {
        Ok(Action::await_change())
    }
}
";
    let (calls, _) = table(&[("src/status.rs", generic), ("src/widget.rs", secret)]);
    assert_eq!(
        calls,
        ["9 list example.com/widgets", "9 watch example.com/widgets"]
    );
}

#[test]
fn a_controller_takes_its_kind_from_the_type_its_function_returns() {
    let code = r"
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::{Api, Client, runtime::Controller};

trait Builder<K> { fn build(&self, client: Client) -> Controller<K>; }
struct Maps;
impl Builder<ConfigMap> for Maps {
    fn build(&self, client: Client) -> Controller<ConfigMap> {
        Controller::new(Api::all(client.clone()), Default::default())
            .owns(Api::<Secret>::all(client), Default::default())
    }
}
async fn run(client: Client) { Maps.build(client); }
";
    let (calls, unchecked) = table(&[("src/maps.rs", code)]);
    assert_eq!(
        calls,
        [
            "9 list core/configmaps",
            "9 watch core/configmaps",
            "10 list core/secrets",
            "10 watch core/secrets",
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn bindings_end_with_their_block_and_branches_that_panic_yield_nothing() {
    let code = r"
use std::sync::Arc;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::{Api, Client};

struct Service { pods: Arc<Api<Pod>> }

async fn run(client: Client, service: &Service, ns: Option<&str>) {
    for _ in 0..2 {
        let api: Api<Pod> = Api::all(client.clone());
        api.list(&lp).await;
    }
    let api = cache.entry(ns).or_insert_with(|| Api::<Secret>::all(client.clone()));
    api.create(&pp, &secret).await;
    let (maps, secrets) = if let Some(ns) = ns {
        (Api::<ConfigMap>::namespaced(client.clone(), ns), Api::<Secret>::namespaced(client.clone(), ns))
    } else {
        todo!()
    };
    maps.patch('m', &pp, &patch).await;
    secrets.delete('s', &dp).await;
    service.pods.get('p').await;
    await_condition(Api::<Pod>::clone(&service.pods), 'p', is_pod_running()).await;
}
"
    .replace('\'', "\"");
    let (calls, unchecked) = table(&[("src/service.rs", &code)]);
    // The loop's `api` ends with the loop: the `api` after it is the
    // `Secret` one the map is given.
    assert_eq!(
        calls,
        [
            "11 list core/pods",
            "14 create core/secrets",
            "20 patch core/configmaps",
            "21 delete core/secrets",
            "22 get core/pods",
            "23 list core/pods",
            "23 watch core/pods",
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_commented_attribute_hides_no_kind_and_another_crates_client_is_not_kube() {
    let code = r##"
use kube::{Api, Client, CustomResource};
use oci_client::Client as Registry;

#[derive(CustomResource)]
#[kube(kind = "Schedule", group = "ros.io", version = "v1")]
// #[kube(
//     printcolumn = r#"{"name":"State", "jsonPath":".status.state"}"#
// )]
#[kube(namespaced)]
pub struct ScheduleSpec { every: String }

struct Store { client: Registry }
impl Store {
    async fn pull(&self) { pull_blob(&self.client, "x").await; }
}
async fn run(client: Client, db: Db) {
    Api::<Schedule>::all(client).list(&lp).await;
    let client: tokio_postgres::Client = db.client().await;
    queries::fetch(&client, 1).await;
}
"##;
    let (calls, unchecked) = table(&[("src/schedule.rs", code)]);
    assert_eq!(calls, ["18 list ros.io/schedules"]);
    // Neither the registry's client nor the database's is kube's.
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn an_api_written_without_a_kind_takes_the_kind_of_the_object_it_sends() {
    let code = r"
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client, api::Patch};

async fn ipatch<T>(client: Client, obj: &T, patch: json_patch::Patch) {
    Api::namespaced(client, 'ns').patch('n', &pp, &Patch::Json::<T>(patch)).await;
}
async fn upsert<T>(client: Client, obj: &T) {
    Api::namespaced(client, 'ns').patch_status('n', &pp, &Patch::Merge(obj)).await;
}
async fn run(client: Client, map: ConfigMap, secret: Secret) {
    Api::all(client.clone()).create(&pp, &secret).await;
    ipatch(client.clone(), &map, patch).await;
    upsert(client, &secret).await;
}
"
    .replace('\'', "\"");
    let (calls, unchecked) = table(&[("src/resource.rs", &code)]);
    assert_eq!(
        calls,
        [
            "6 patch core/configmaps",
            "9 patch core/secrets/status",
            "12 create core/secrets",
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

#[test]
fn a_generic_function_and_its_cfg_twin_each_pass_on_their_requests() {
    let manifest: toml_edit::DocumentMut = "[features]\ndefault = [\"tracing\"]\ntracing = []\n"
        .parse()
        .unwrap();
    let config = BuildConfig::from_manifest(Some(&manifest));
    let code = r#"
#[cfg(not(feature = "tracing"))]
async fn patch<T>(client: Client, obj: &T) {
    ipatch(client, obj).await
}
#[cfg(feature = "tracing")]
async fn patch<T>(client: Client, obj: &T) {
    ipatch(client, obj).await
}
async fn ipatch<T>(client: Client, obj: &T) {
    let api: Api<T> = Api::all(client);
    api.patch(NAME, &pp, &p).await;
}
async fn run(client: Client, map: ConfigMap) {
    patch(client, &map).await;
}
"#;
    let files: Vec<CrateFile<'_>> = vec![(Path::new("src/resource.rs"), code, Some(&config))];
    let analysis = analyze_when(&files, &[], || Some(Vec::new())).unwrap();
    let mut found: Vec<String> = analysis
        .calls
        .iter()
        .map(|c| format!("{} {}", c.resource, c.gated.as_deref().unwrap_or("built")))
        .collect();
    found.sort();
    found.dedup();
    // The build with `tracing` on sends it through the twin it compiles.
    assert_eq!(
        found,
        ["configmaps built", "configmaps not (feature = \"tracing\")"]
    );
}

#[test]
fn a_generic_traits_provided_method_requests_each_kind_its_impls_give() {
    let code = r"
use k8s_openapi::api::core::v1::{Event, Node, Pod};
use kube::{Api, Client};

trait Collect<R> {
    fn get_api(&self) -> Api<R>;
    async fn list(&self) { self.get_api().list(&lp).await; }
}
struct Info { client: Client }
impl Collect<Node> for Info {
    fn get_api(&self) -> Api<Node> { Api::all(self.client.clone()) }
}
struct Events { client: Client }
impl Collect<Event> for Events {
    fn get_api(&self) -> Api<Event> { Api::all(self.client.clone()) }
}
struct Logs { client: Client }
impl Collect<Pod> for Logs {
    fn get_api(&self) -> Api<Pod> { Api::all(self.client.clone()) }
}
struct Objects<R> { client: Client, r: R }
impl<R> Collect<R> for Objects<R> {
    fn get_api(&self) -> Api<R> { Api::all(self.client.clone()) }
}
async fn run(info: Info, events: Events, logs: Logs) {
    info.list().await;
    events.list().await;
    logs.list().await;
}
";
    let (calls, unchecked) = table(&[("src/collect.rs", code)]);
    // Each `impl` gives the provided method its kind; the generic one's
    // are not shown, and that is said.
    assert_eq!(
        calls,
        [
            "7 list core/events",
            "7 list core/nodes",
            "7 list core/pods"
        ]
    );
    assert_eq!(unchecked, ["7 self.get_api().list"]);
}

#[test]
fn an_impl_names_its_kind_with_its_own_files_uses() {
    let trait_file = r"
use kube::Api;
pub trait Collect<R> {
    fn get_api(&self) -> Api<R>;
    async fn list(&self) { self.get_api().list(&lp).await; }
}
";
    let impl_file = r"
use k8s_openapi::api::events::v1::Event;
use kube::{Api, Client};
pub struct Events { client: Client }
impl Collect<Event> for Events {
    fn get_api(&self) -> Api<Event> { Api::all(self.client.clone()) }
}
";
    let (calls, unchecked) = table(&[("src/collect.rs", trait_file), ("src/events.rs", impl_file)]);
    assert_eq!(calls, ["5 list events.k8s.io/events"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// Functions of one name in different modules are told apart by the path
/// a call names them with or the `use` that brings them in: `secret::new`
/// returns a `Secret` though `event::new` returns an `Event` and
/// `Context::new` a context, and `apply::upsert` sends a patch where
/// `replace::upsert` sends an update. A module that names no `Api` is read
/// for what its functions return, and a file that names none for the
/// generic functions it calls.
#[test]
fn functions_of_one_name_are_told_apart_by_their_module() {
    let secret = r"
use k8s_openapi::api::core::v1::Secret;

pub fn new<T>(owner: &T, data: BTreeMap<String, String>) -> Secret {
    Secret::default()
}
";
    let event = r"
use k8s_openapi::api::core::v1::Event;

pub fn new<T>(owner: &T, reason: &str) -> Event {
    Event::default()
}
";
    let context = r"
pub struct Context { pub client: kube::Client }

impl Context {
    pub fn new(client: kube::Client) -> Self {
        Context { client }
    }
}
";
    let apply = r#"
use kube::{Api, Client, Resource};

pub async fn upsert<T: Resource>(client: &Client, obj: &T) {
    let api: Api<T> = Api::namespaced(client.clone(), "apps");
    api.patch("x", &Default::default(), &Default::default()).await;
}
"#;
    let replace = r#"
use kube::{Api, Client, Resource};

pub async fn upsert<T: Resource>(client: &Client, obj: &T) {
    let api: Api<T> = Api::namespaced(client.clone(), "apps");
    api.replace("x", &Default::default(), obj).await;
}
"#;
    let reconcile = r#"
use crate::k8s::{apply, event, secret};
use crate::k8s::replace::upsert;

pub async fn reconcile(client: kube::Client, owner: &Widget) {
    let s = secret::new(owner, BTreeMap::new());
    apply::upsert(&client, &s).await;
    let e = event::new(owner, "Synced");
    upsert(&client, &e).await;
}
"#;
    let (calls, unchecked) = table(&[
        ("src/k8s/secret.rs", secret),
        ("src/k8s/event.rs", event),
        ("src/context.rs", context),
        ("src/k8s/apply.rs", apply),
        ("src/k8s/replace.rs", replace),
        ("src/reconcile.rs", reconcile),
    ]);
    assert_eq!(calls, ["6 patch core/secrets", "6 update core/events"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// A request a generic helper makes only under one of its `bool`
/// parameters (`if status { .. }`) is not made by a caller that passes the
/// other literal, also when the flag is passed on through another helper.
#[test]
fn a_request_under_a_flag_is_made_only_by_callers_that_set_it() {
    let code = r#"
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client, Resource};

async fn apply<T: Resource>(client: Client, obj: &T, status: bool) {
    let api: Api<T> = Api::namespaced(client, "apps");
    api.patch("x", &Default::default(), &Default::default()).await;
    if status {
        api.patch_status("x", &Default::default(), &Default::default()).await;
    } else {
        api.get("x").await;
    }
}

async fn upsert<T: Resource>(client: Client, obj: &T, status: bool) {
    apply(client, obj, status).await;
}

async fn reconcile(client: Client, secret: Secret, map: ConfigMap) {
    upsert(client.clone(), &secret, false).await;
    upsert(client, &map, true).await;
}
"#;
    let (calls, unchecked) = table(&[("src/apply.rs", code)]);
    assert_eq!(
        calls,
        [
            "7 patch core/configmaps",
            "7 patch core/secrets",
            "9 patch core/configmaps/status",
            "11 get core/secrets",
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// kube's `Controller` renamed by a `use` watches its kind; the crate's
/// own `Controller` is none of kube's.
#[test]
fn a_renamed_controller_is_kubes_and_the_crates_own_is_not() {
    let runtime = r"
use k8s_openapi::api::core::v1::Service;
use kube::{Api, Client};
use kube::runtime::Controller as RuntimeController;

pub fn run(client: Client) {
    let api: Api<Service> = Api::all(client);
    RuntimeController::new(api, Default::default());
}
";
    let main = r"
use crate::controller::Controller;

fn main() {
    let controller = Controller::new(reconciler, client);
}
";
    let (calls, unchecked) = table(&[("src/controller.rs", runtime), ("src/main.rs", main)]);
    assert_eq!(calls, ["8 list core/services", "8 watch core/services"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// A struct that derefs to another has its fields: `self.secrets` of a
/// controller whose `Target` is the context holding `secrets: Api<Secret>`.
#[test]
fn a_field_reached_through_deref_is_the_targets() {
    let code = r#"
use std::ops::Deref;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;

pub struct Context {
    secrets: Api<Secret>,
}

pub struct Controller {
    context: Context,
}

impl Deref for Controller {
    type Target = Context;
    fn deref(&self) -> &Context {
        &self.context
    }
}

impl Controller {
    async fn reconcile(&self) {
        self.secrets.get("x").await;
        create_or_update(&self.secrets, "y").await;
    }
}
"#;
    let (calls, unchecked) = table(&[("src/controller.rs", code)]);
    assert_eq!(calls, ["23 get core/secrets"]);
    assert_eq!(unchecked, ["24 create_or_update"]);
}

/// A recorder made and dropped in the function that publishes with it
/// never patches: its cache of events ends with it. One kept in a context
/// patches a repeated event.
#[test]
fn a_recorder_made_for_one_publish_does_not_need_patch() {
    let code = r"
use kube::runtime::events::{Recorder, Reporter};

async fn reconcile(obj: Arc<Widget>, ctx: Arc<Context>) {
    let recorder = Recorder::new(ctx.client.clone(), ctx.reporter.clone());
    recorder.publish(&event, &obj.object_ref(&())).await;
}

fn context(client: Client, reporter: Reporter) -> Context {
    let recorder = Recorder::new(client, reporter);
    Context { recorder }
}
";
    let analysis = analyze(&[(Path::new("src/events.rs"), code)], &own());
    let patches: Vec<(usize, bool)> = analysis
        .calls
        .iter()
        .filter(|c| c.verb == "patch")
        .map(|c| (c.location.line, c.optional))
        .collect();
    assert_eq!(patches, [(5, true), (10, false)]);
}

/// An `Api` the crate's function returns in a tuple is bound by the `let`
/// that takes the tuple apart, and one whose branches disagree on its kind
/// is still an `Api`: requests on either are noted, not left out.
#[test]
fn an_api_returned_in_a_tuple_or_made_by_disagreeing_branches_is_noted() {
    let code = r#"
use kube::api::{Api, ApiResource, DynamicObject};

async fn target(client: &Client) -> Result<(Api<DynamicObject>, ApiResource)> {
    let ar = discover(client).await?;
    Ok((Api::all_with(client.clone(), &ar), ar))
}

async fn reconcile(client: Client, ns: Option<String>) -> Result<()> {
    let (api, ar) = target(&client).await?;
    api.list(&Default::default()).await?;
    let patch_api = if let Some(ns) = &ns {
        Api::namespaced_with(client.clone(), ns, &ar)
    } else {
        api.clone()
    };
    patch_api.patch("x", &Default::default(), &Default::default()).await?;
    Ok(())
}
"#;
    let (calls, unchecked) = table(&[("src/dynamic.rs", code)]);
    assert!(calls.is_empty(), "{calls:?}");
    assert_eq!(
        unchecked,
        ["5 discover", "11 api.list", "17 patch_api.patch"]
    );
}

/// A server-side apply creates what it does not find: its `create` is
/// needed on a kind a controller owns, and one a rule may grant on a kind
/// the code only watches (pods it annotates) or on its own kinds.
#[test]
fn an_apply_needs_create_on_what_it_makes_not_on_what_it_reads() {
    let code = r#"
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::{Controller, watcher};

async fn run(client: Client) {
    let widgets: Api<Widget> = Api::all(client.clone());
    let deployments: Api<Deployment> = Api::all(client.clone());
    let pods: Api<Pod> = Api::all(client.clone());
    Controller::new(widgets, Default::default()).owns(deployments, Default::default());
    watcher(pods, Default::default());
}

async fn apply(client: Client, deployment: Deployment, pod: &Pod) {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "apps");
    let patch = Patch::Apply(&deployment);
    deployments.patch("web", &PatchParams::apply("widget"), &patch).await;
    let pods: Api<Pod> = Api::namespaced(client, "apps");
    pods.patch("web-0", &PatchParams::apply("widget"), &Patch::Apply(&annotations)).await;
}
"#;
    let analysis = analyze(&[(Path::new("src/apply.rs"), code)], &own());
    let mut creates: Vec<(String, bool)> = analysis
        .calls
        .iter()
        .filter(|c| c.verb == "create")
        .map(|c| (c.resource.clone(), c.optional))
        .collect();
    creates.sort();
    assert_eq!(
        creates,
        [
            ("deployments".to_string(), false),
            ("pods".to_string(), true)
        ]
    );
}

/// A controller that owns a stream owns kinds its calls do not show: an
/// apply's `create` stays needed on every kind it watches.
#[test]
fn an_apply_under_a_controller_owning_a_stream_needs_create() {
    let code = r#"
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::{Controller, watcher};

async fn run(client: Client, widgets: Api<Widget>) {
    let deployments: Api<Deployment> = Api::all(client.clone());
    let (reader, writer) = reflector::store_shared(64);
    let subscriber = writer.subscribe().unwrap();
    let stream = watcher(deployments, Default::default()).reflect_shared(writer);
    Controller::new(widgets, Default::default()).owns_shared_stream(subscriber);
}

async fn apply(client: Client, deployment: Deployment) {
    let deployments: Api<Deployment> = Api::namespaced(client, "apps");
    deployments.patch("web", &PatchParams::apply("widget"), &Patch::Apply(&deployment)).await;
}
"#;
    let analysis = analyze(&[(Path::new("src/apply.rs"), code)], &own());
    let creates: Vec<bool> = analysis
        .calls
        .iter()
        .filter(|c| c.verb == "create")
        .map(|c| c.optional)
        .collect();
    assert_eq!(creates, [false]);
}

/// kube's `Controller::<K>::new` and `.owns::<K>(..)` name the kind of an
/// `Api` made with no turbofish of its own, as rustc infers it.
#[test]
fn a_controllers_turbofish_gives_the_kind_of_its_api() {
    let code = r"
use k8s_openapi::api::core::v1::{Pod, Service};
use kube::{Api, Client};
use kube::runtime::Controller;

pub async fn run(client: Client) {
    Controller::<Widget>::new(Api::all(client.clone()), Default::default())
        .owns::<Pod>(Api::namespaced(client.clone(), NS), Default::default())
        .watches::<Service, _, _>(Api::namespaced(client, NS), Default::default(), |_| None)
        .run(reconcile, error_policy, context);
}
";
    let own = [OwnKind {
        group: "example.com".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
        namespaced: true,
        root: None,
        declared_in: None,
        foreign: false,
    }];
    let analysis = analyze(&[(Path::new("src/controller.rs"), code)], &own);
    let mut found: Vec<String> = analysis
        .calls
        .iter()
        .map(|c| format!("{} {} {}/{}", c.location.line, c.verb, c.group, c.resource))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            "7 list example.com/widgets",
            "7 watch example.com/widgets",
            "8 list /pods",
            "8 watch /pods",
            "9 list /services",
            "9 watch /services",
        ]
    );
    assert!(analysis.unchecked.is_empty(), "{:?}", analysis.unchecked);
}

/// A Recorder sends events when it publishes: one a crate builds and never
/// publishes with sends none.
#[test]
fn a_recorder_never_published_sends_no_event() {
    let code = r"
use kube::runtime::events::{Recorder, Reporter};

pub fn context(client: Client) -> Context {
    Context { recorder: Recorder::new(client, Reporter::from(NAME)) }
}
";
    let (calls, unchecked) = table(&[("src/context.rs", code)]);
    assert!(calls.is_empty(), "{calls:?}");
    assert!(unchecked.is_empty(), "{unchecked:?}");
    let published = format!(
        "{code}\nasync fn tell(ctx: &Context, e: &Event, on: &ObjectReference) {{ ctx.recorder.publish(e, on).await; }}\n"
    );
    let (calls, _) = table(&[("src/context.rs", published.as_str())]);
    assert_eq!(
        calls,
        [
            "5 create events.k8s.io/events",
            "5 patch events.k8s.io/events"
        ]
    );
}

/// kube's `Api` renamed by a `use` is kube's `Api`.
#[test]
fn a_renamed_api_is_kubes() {
    let code = r#"
use k8s_openapi::api::core::v1::Secret;
use kube::{api::{Api as KubeApi, ListParams}, Client};

async fn list(client: Client) {
    let api: KubeApi<Secret> = KubeApi::namespaced(client, "ns");
    api.list(&ListParams::default()).await;
}
"#;
    let (calls, unchecked) = table(&[("src/routes.rs", code)]);
    assert_eq!(calls, ["7 list core/secrets"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// A value bound by a `let` in one `match` arm is that arm's: a generic
/// function given it in each arm takes each arm's kind.
#[test]
fn each_match_arms_value_gives_its_own_kind() {
    let code = r"
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client, Resource};

async fn create<K: Resource>(client: Client, data: &K) {
    let api: Api<K> = Api::default_namespaced(client);
    api.create(&Default::default(), data).await;
}

async fn seed(client: Client, kind: Kind) {
    match kind {
        Kind::Secret => {
            let data = Secret { ..Default::default() };
            create(client.clone(), &data).await;
        }
        Kind::ConfigMap => {
            let data = ConfigMap { ..Default::default() };
            create(client.clone(), &data).await;
        }
    }
}
";
    let (mut calls, unchecked) = table(&[("src/seed.rs", code)]);
    calls.sort();
    assert_eq!(calls, ["7 create core/configmaps", "7 create core/secrets"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// A loop over the `Api`s a function returns in a `Vec` binds each to the
/// kind of its elements.
#[test]
fn a_loop_over_a_vec_of_apis_takes_their_kind() {
    let code = r"
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::{Api, Client};

fn hpa_apis(client: &Client, namespaces: &[String]) -> Vec<Api<HorizontalPodAutoscaler>> {
    namespaces.iter().map(|ns| Api::namespaced(client.clone(), ns)).collect()
}

async fn analyze(client: &Client, namespaces: &[String]) {
    for api in hpa_apis(client, namespaces) {
        api.list(&Default::default()).await;
    }
    let apis = hpa_apis(client, namespaces);
    for api in apis.iter() {
        api.delete(NAME, &Default::default()).await;
    }
}
";
    let (calls, unchecked) = table(&[("src/analysis.rs", code)]);
    assert_eq!(
        calls,
        [
            "11 list autoscaling/horizontalpodautoscalers",
            "15 delete autoscaling/horizontalpodautoscalers"
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// Through a framework that wraps kube: its `client.get_api::<Pod>(..)`
/// makes an `Api` of the kind it names, its `MutatingWebhook::new(..,
/// client)` is another crate's function given kube's `Client` (re-exported
/// as `stackable::kube::Client`) though the crate has a `new` of its own,
/// and a watch on an `Api` whose kind is not shown is noted.
#[test]
fn a_frameworks_api_maker_client_taker_and_watch_are_read() {
    let code = r"
use k8s_openapi::api::core::v1::Pod;
use stackable::kube::Client;
use stackable::webhook::MutatingWebhook;
use kube::runtime::watcher;

pub struct Ctx { client: stackable::client::Client }
impl Ctx { pub fn new(client: stackable::client::Client) -> Ctx { Ctx { client } } }

async fn evict(ctx: &Ctx, ns: &str) {
    let pods = ctx.client.get_api::<Pod>(ns);
    pods.evict(NAME, &Default::default()).await;
}

fn hook(client: Client) {
    let webhook = MutatingWebhook::new(config(), handler, client);
    let stream = watcher(ctx.client.get_all_api(), Default::default());
}
";
    let (calls, unchecked) = table(&[("src/restart.rs", code)]);
    assert_eq!(calls, ["12 create core/pods/eviction"]);
    assert_eq!(unchecked, ["16 MutatingWebhook::new", "17 watcher"]);
}

/// A trait generic over the kind, whose provided methods a generic `impl`
/// gives every type: a call that names the type's kind
/// (`Manager::<Widget>::run(..)`) makes their requests on it, down to the
/// reconciler `run` hands its controller.
#[test]
fn a_generic_traits_methods_take_the_kind_the_call_names_on_the_type() {
    let code = r#"
use kube::{Api, Client};
use kube::runtime::{Controller, finalizer};
use crate::api::Widget;

pub trait Managed<K> where K: Resource {
    async fn run(client: Client) {
        let all = Api::<K>::all(client.clone());
        all.list(&Default::default()).await;
        Controller::new(Api::<K>::all(client.clone()), Default::default())
            .run(&Self::reconcile, &Self::error_policy, ctx);
    }
    async fn reconcile(r: Arc<K>, ctx: Arc<Context>) -> Result<Action> {
        let api: Api<K> = Api::namespaced(ctx.client.clone(), &ns);
        finalizer(&api, "x", r, |event| async { Ok(()) }).await
    }
}

pub struct Manager<K> { data: K }
impl<K> Managed<K> for Manager<K> where K: Resource {}

async fn main() {
    Manager::<Widget>::run(client).await;
}
"#;
    let (mut calls, unchecked) = table(&[("src/manager.rs", code)]);
    calls.sort();
    calls.dedup();
    assert_eq!(
        calls,
        [
            "10 list example.com/widgets",
            "10 watch example.com/widgets",
            "15 patch example.com/widgets",
            "9 list example.com/widgets",
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// A request built by hand and sent with `client.request(..)` is noted;
/// kube's discovery, which every authenticated user may ask, is not.
#[test]
fn a_request_built_by_hand_is_noted_and_discovery_is_not() {
    let code = r#"
use kube::{Client, api::{Request, GetParams}, discovery};

async fn primary(client: Client, gvk: &GroupVersionKind) {
    let request = Request::new("/apis/primary-all/v1/x").get("a", &GetParams::default())?;
    let response: Response = client.request(request).await?;
    let (resource, caps) = discovery::pinned_kind(&client, gvk).await?;
}
"#;
    let (calls, unchecked) = table(&[("src/primary.rs", code)]);
    assert!(calls.is_empty(), "{calls:?}");
    assert_eq!(unchecked, ["6 client.request"]);
}

/// The crate's own type, in a file that names kube only through a prelude
/// and is not read, makes `ContextData::new(client)` the crate's call, not
/// another crate's.
#[test]
fn a_type_of_a_file_not_read_is_still_the_crates() {
    let main = r"
use kube::Client;
use crate::prelude::*;

async fn main() {
    let client = Client::try_default().await.unwrap();
    let context = Arc::new(ContextData::new(client.clone()));
}
";
    let context = r"
use crate::prelude::*;
pub struct ContextData { pub client: Client }
impl ContextData { pub fn new(client: Client) -> Self { ContextData { client } } }
";
    let (calls, unchecked) = table(&[("src/main.rs", main), ("src/context.rs", context)]);
    assert!(calls.is_empty(), "{calls:?}");
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// `Controller` brought in from a sibling module is the crate's own;
/// `runtime::Controller` after `use kube::{runtime::{self, ..}}` is kube's.
#[test]
fn a_sibling_modules_controller_is_the_crates_and_runtimes_is_kubes() {
    let code = r"
use k8s_openapi::api::core::v1::Secret;
use kube::{api::Api, runtime::{self, controller::Action}, Client};

mod controller;
use controller::Controller;

pub fn start(client: Client) {
    let ctrlr = Controller::new(client.clone());
    let secrets = Api::<Secret>::all(client);
    runtime::Controller::new(secrets, Default::default());
}
";
    let controller = r"
pub struct Controller { client: Client }
";
    let (calls, unchecked) = table(&[
        ("src/manager/mod.rs", code),
        ("src/manager/controller.rs", controller),
    ]);
    assert_eq!(calls, ["11 list core/secrets", "11 watch core/secrets"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// An apply of the crate's own kind creates nothing its users did not
/// make, unless the function makes the object as another's child (it names
/// an owner reference): then its `create` is needed, also on a kind a
/// controller of the crate watches.
#[test]
fn an_apply_of_an_own_kind_made_as_a_child_needs_create() {
    let code = r#"
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::Controller;
use kube::Resource;

async fn run(client: Client) {
    let widgets: Api<Widget> = Api::all(client.clone());
    Controller::new(widgets, Default::default());
}

async fn label(client: Client, widget: &Widget) {
    let owner = widget.controller_owner_ref(&()).unwrap();
    let widgets: Api<Widget> = Api::namespaced(client, "apps");
    widgets.patch("w", &PatchParams::apply("x"), &Patch::Apply(&labels)).await;
}

async fn make(client: Client, owner: &Ingress) {
    let owner_ref = owner.controller_owner_ref(&());
    let widgets: Api<Widget> = Api::namespaced(client, "apps");
    widgets.patch("w", &PatchParams::apply("x"), &Patch::Apply(&child(owner_ref))).await;
}
"#;
    let analysis = analyze(&[(Path::new("src/apply.rs"), code)], &own());
    let creates: Vec<(usize, bool)> = analysis
        .calls
        .iter()
        .filter(|c| c.verb == "create")
        .map(|c| (c.location.line, c.optional))
        .collect();
    assert_eq!(creates, [(14, true), (20, false)]);
}

/// A generic function given a kind whose type rsop cannot read (one a
/// build script generates into `OUT_DIR`) is noted at the call that gives
/// it, though other callers give it kinds rsop reads.
#[test]
fn a_generic_function_given_a_kind_rsop_cannot_read_is_noted_at_that_call() {
    let code = r"
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, Patch, PatchParams};
use crate::generated::Certificate;

pub async fn apply<T>(api: &Api<T>, name: &str, resource: &T) {
    api.patch(name, &PatchParams::apply(M), &Patch::Apply(resource)).await;
}

async fn run(client: Client, ns: Namespace, cert: Certificate) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    apply(&namespaces, NAME, &ns).await;
    let certificates: Api<Certificate> = Api::namespaced(client, NS);
    apply(&certificates, NAME, &cert).await;
}
";
    let (calls, unchecked) = table(&[("src/run.rs", code)]);
    assert_eq!(
        calls,
        ["7 create core/namespaces", "7 patch core/namespaces"],
    );
    assert_eq!(unchecked, ["14 apply"]);
}

/// A k8s-openapi type's group is its module's: old releases serve
/// `Ingress` in `extensions` too, and `events::v1::Event` is not the core
/// group's `Event`.
#[test]
fn a_kubernetes_kind_is_requested_in_the_group_its_module_names() {
    let code = r"
use k8s_openapi::api::extensions::v1beta1::Ingress;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::networking::v1::Ingress as NetworkingIngress;

async fn run(client: Client) {
    let old: Api<Ingress> = Api::all(client.clone());
    old.list(&Default::default()).await;
    let events: Api<Event> = Api::all(client.clone());
    events.list(&Default::default()).await;
    let new: Api<NetworkingIngress> = Api::all(client);
    new.list(&Default::default()).await;
}
";
    let (calls, unchecked) = table(&[("src/run.rs", code)]);
    assert_eq!(
        calls,
        [
            "8 list extensions/ingresses",
            "10 list events.k8s.io/events",
            "12 list networking.k8s.io/ingresses",
        ]
    );
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// `obj.reconcile(ctx)`, a method call, calls a method of that name (a
/// trait's), never the crate's free generic `reconcile<T>`, whose
/// parameters its arguments do not fill.
#[test]
fn a_method_call_does_not_instantiate_a_free_generic_function_of_its_name() {
    let code = r"
use kube::{Api, Client};

pub async fn reconcile<T>(obj: Arc<T>, ctx: Arc<Context>) {
    let api = Api::<T>::all(ctx.client.clone());
    api.get(NAME).await;
}

async fn cleanup(obj: Arc<Widget>, ctx: Arc<Context>) {
    obj.reconcile(ctx.clone()).await;
    reconcile(obj, ctx).await;
}
";
    let (calls, unchecked) = table(&[("src/run.rs", code)]);
    assert_eq!(calls, ["6 get example.com/widgets"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// The crate's function that makes an `Api<DynamicObject>` of a literal
/// `GroupVersionKind` gives its callers that resource; an owner reference
/// written as JSON with `blockOwnerDeletion` is one on an owner whose kind
/// is a value.
#[test]
fn a_function_making_a_dynamic_api_of_a_literal_kind_gives_that_resource() {
    let code = r#"
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};

fn routes(client: Client, ns: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("gateway.networking.k8s.io", "v1", "HTTPRoute");
    let ar = ApiResource::from_gvk(&gvk);
    Api::namespaced_with(client, ns, &ar)
}

async fn prune(client: Client, owner: &str) {
    let api = routes(client, NS);
    api.delete(NAME, &Default::default()).await;
    let patch = json!({"metadata": {"ownerReferences": [{"uid": owner, "blockOwnerDeletion": true}]}});
}
"#;
    let files = [(Path::new("src/run.rs"), code)];
    let analysis = analyze(&files, &own());
    let calls: Vec<String> = analysis
        .calls
        .iter()
        .map(|c| format!("{} {} {}/{}", c.location.line, c.verb, c.group, c.resource))
        .collect();
    assert_eq!(calls, ["12 delete gateway.networking.k8s.io/httproutes"]);
    assert!(analysis.unchecked.is_empty(), "{:?}", analysis.unchecked);
    assert!(analysis.owner_references);
}

/// A generic function that returns what another generic function returns,
/// whose kind no argument names (`get_or_create::<Service, _>` calling
/// `get_or_create_convert(..)`), gives it its own: rustc infers it from
/// the return type.
#[test]
fn a_returned_generic_call_takes_its_kind_from_the_callers_return_type() {
    let code = r"
use k8s_openapi::api::core::v1::Service;
use kube::{Api, Client};

async fn get_or_create<T: Resource>(client: &Client, name: &str) -> Result<Option<T>> {
    get_or_create_convert(client, name, Ok).await
}

async fn get_or_create_convert<T: Resource, C: FnOnce(T) -> Result<T>>(
    client: &Client,
    name: &str,
    convert: C,
) -> Result<Option<T>> {
    let api: Api<T> = Api::default_namespaced(client.clone());
    match api.get_opt(name).await? {
        Some(found) => Ok(Some(convert(found)?)),
        // The crate's `Result<T>` is `Result<T, Error>`.
        None => create(client).await,
    }
}

async fn create<T: Resource>(client: &Client) -> Result<Option<T>, Error> {
    let api: Api<T> = Api::default_namespaced(client.clone());
    Ok(Some(api.create(&Default::default(), &T::default()).await?))
}

async fn run(client: Client) {
    let service = get_or_create::<Service>(&client, NAME).await;
}
";
    let (calls, unchecked) = table(&[("src/run.rs", code)]);
    assert_eq!(calls, ["15 get core/services", "24 create core/services"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// A framework's client wrapper: `get<T>` asks its generic `get_api` for
/// an `Api` with no turbofish, which rustc infers as `Api<T>`, the only
/// type parameter in scope (or the only one bound by `Resource`); the
/// caller's turbofish, or the object it passes, gives it.
#[test]
fn an_api_a_generic_method_makes_without_a_kind_is_of_its_only_type_parameter() {
    let code = r"
use k8s_openapi::api::core::v1::Service;
use kube::Api;

impl Client {
    pub async fn get<T: Resource>(&self, name: &str, ns: &str) -> Result<T> {
        self.get_api(ns).get(name).await.context(GetSnafu)
    }

    pub fn get_api<T: Resource>(&self, ns: &str) -> Api<T> {
        Api::namespaced(self.client.clone(), ns)
    }

    // Two type parameters, one of them the kind.
    async fn patch<T, P>(&self, resource: &T, patch: Patch<P>) -> Result<T>
    where
        T: Clone + Resource,
        P: Serialize,
    {
        self.get_api(NS).patch(NAME, &PatchParams::default(), &patch).await.context(PatchSnafu)
    }
}

async fn run(client: Client, service: Service) {
    let service = client.get::<Service>(NAME, NS).await;
    client.patch(&service, Patch::Merge(LABELS)).await;
}
";
    let (calls, unchecked) = table(&[("src/run.rs", code)]);
    assert_eq!(calls, ["7 get core/services", "20 patch core/services"]);
    assert!(unchecked.is_empty(), "{unchecked:?}");
}

/// A kind only a CRD file of the repository names (Knative's `Service`)
/// stands for a type rsop cannot read, never for Kubernetes' kind of the
/// same name brought in by a glob.
#[test]
fn a_crd_file_kind_never_hides_kubernetes_kind_of_its_name() {
    let code = r"
use k8s_openapi::api::core::v1::*;
use kube::{Api, Client};

async fn run(client: Client) {
    let services: Api<Service> = Api::default_namespaced(client);
    services.list(&Default::default()).await;
}
";
    let knative = OwnKind {
        kind: "Service".into(),
        group: "serving.knative.dev".into(),
        plural: "services".into(),
        namespaced: true,
        root: None,
        declared_in: None,
        foreign: true,
    };
    let files = [(Path::new("src/run.rs"), code)];
    let analysis = analyze(&files, &[knative]);
    let calls: Vec<String> = analysis
        .calls
        .iter()
        .map(|c| format!("{} {} {}/{}", c.location.line, c.verb, c.group, c.resource))
        .collect();
    assert_eq!(calls, ["7 list /services"]);
}
