//! A Kubernetes control plane for tests: etcd and kube-apiserver, run from the binaries in
//! `KUBEBUILDER_ASSETS` as controller-runtime's envtest runs them, with no Go toolchain.
//!
//! `rsop envtest use` (`make setup-envtest`) downloads the binaries once and prints the directory
//! `KUBEBUILDER_ASSETS` names; `make test` sets it. [`ControlPlane::start`] runs both programs on
//! free loopback ports, with a client certificate in `system:masters` for the tests (every request
//! is allowed, as for a cluster admin), installs the CRDs of a directory and waits until the API
//! server serves them.
//!
//! The processes and their temporary directory go with the [`ControlPlane`]: when it is dropped,
//! also while a test panics. They go too when the test process is killed: a watchdog `sh` waits for
//! the end of a pipe only the test process holds, which the kernel closes however that process
//! ends, and then stops them and removes the directory.
//!
//! A test suite shares one control plane, [`shared`], which installs the CRDs of the crate's
//! `config/crd/bases`; each test works in a namespace of its own ([`test_namespace`]) and runs
//! the controllers it tests there with a [`TestManager`]. Without `KUBEBUILDER_ASSETS`, [`shared`]
//! says once how to get the binaries and returns `None`, and the test returns:
//!
//! ```no_run
//! use rsop_runtime::envtest::{self, Result};
//!
//! #[tokio::test]
//! async fn a_config_map_is_stored() -> Result<()> {
//!     let Some(plane) = envtest::shared().await else {
//!         return Ok(());
//!     };
//!     let (client, namespace) = envtest::test_namespace(plane, "settings", "stored").await?;
//!     // ...
//!     Ok(())
//! }
//! ```

mod support;
#[cfg(feature = "webhook")]
mod webhooks;

pub use support::{
    SETTLE, TestManager, counted, delete_all, has_condition, observed, sample, test_namespace,
    versions, wait_for, wait_gone,
};
#[cfg(feature = "webhook")]
pub use webhooks::{LABEL, Served};

use std::future::Future;
use std::io::{self, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};
use std::{env, fs};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::serde::Deserialize as _;
use kube::api::{Api, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, Config, ResourceExt as _};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use tokio::sync::OnceCell;

/// What the harness's functions fail with: a message for the test's output.
pub type Error = Box<dyn std::error::Error + Send + Sync>;
/// What a test of the harness returns.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The directory of `etcd`, `kube-apiserver` and `kubectl`, as setup-envtest names it.
pub const ASSETS: &str = "KUBEBUILDER_ASSETS";
/// How long the API server gets to become ready, e.g. `90s`; as controller-runtime's envtest.
pub const START_TIMEOUT: &str = "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT";
const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long an installed CRD gets to be served.
const CRD_TIMEOUT: Duration = Duration::from_secs(30);
/// The lines of a process's log that a failure to start shows.
const LOG_TAIL: usize = 20;
/// The field manager of what the harness installs.
const FIELD_MANAGER: &str = "envtest";

/// The directory `KUBEBUILDER_ASSETS` names, or `None` when it is unset or empty.
pub fn assets() -> Option<PathBuf> {
    env::var_os(ASSETS)
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
}

/// The directory of the crate under test (`CARGO_MANIFEST_DIR`, which cargo sets when it runs a
/// test), where `config/` is.
pub(crate) fn crate_dir() -> PathBuf {
    env::var_os("CARGO_MANIFEST_DIR").map_or_else(PathBuf::new, PathBuf::from)
}

/// The control plane of this test run, started by the first test that asks, with the CRDs of the
/// crate's `config/crd/bases` installed; `None` when `KUBEBUILDER_ASSETS` is not set, after saying
/// once on stderr how to set it.
///
/// It is never dropped: its processes and directory go when the test process ends.
///
/// # Panics
/// When the control plane does not start: every test that needs it fails with why.
pub async fn shared() -> Option<&'static ControlPlane> {
    static PLANE: OnceCell<std::result::Result<ControlPlane, String>> = OnceCell::const_new();
    static SKIPPED: std::sync::Once = std::sync::Once::new();
    let Some(assets) = assets() else {
        SKIPPED.call_once(|| {
            // Written to stderr itself: the test harness would capture `eprintln!`.
            let _ = writeln!(
                io::stderr(),
                "envtest tests skipped: they need etcd and kube-apiserver; `make test` gets them \
                 with `rsop envtest use` and sets {ASSETS}"
            );
        });
        return None;
    };
    let crds = crate_dir().join("config/crd/bases");
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

/// A running etcd and kube-apiserver, and how to reach them.
pub struct ControlPlane {
    kubeconfig: Kubeconfig,
    ca: CertifiedIssuer<'static, KeyPair>,
    // Dropped last: the processes stop, then their directory goes.
    processes: Processes,
}

impl std::fmt::Debug for ControlPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlPlane")
            .field("dir", &self.processes.dir())
            .finish_non_exhaustive()
    }
}

impl ControlPlane {
    /// Starts etcd and kube-apiserver from the binaries in `assets`, waits until the API server is
    /// ready, and installs the CRDs of every YAML file in `crds`.
    pub async fn start(assets: &Path, crds: &Path) -> Result<Self> {
        Self::start_with(assets, crds, start_timeout()?).await
    }

    /// [`ControlPlane::start`], giving the API server `timeout` to become ready.
    pub async fn start_with(assets: &Path, crds: &Path, timeout: Duration) -> Result<Self> {
        let etcd = binary(assets, "etcd")?;
        let apiserver = binary(assets, "kube-apiserver")?;
        let mut plane = ControlPlane {
            kubeconfig: Kubeconfig::default(),
            ca: CertifiedIssuer::self_signed(ca_params()?, KeyPair::generate()?)?,
            processes: Processes::new()?,
        };
        let dir = plane.processes.dir().to_owned();
        let serving = plane.serving_cert("kube-apiserver")?;
        fs::write(dir.join("ca.crt"), plane.ca_pem())?;
        let service_account = KeyPair::generate()?;
        fs::write(dir.join("sa.pub"), service_account.public_key_pem())?;
        fs::write(dir.join("sa.key"), service_account.serialize_pem())?;

        let [client_port, peer_port, secure_port] = free_ports()?;
        let etcd_url = format!("http://127.0.0.1:{client_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        plane.processes.spawn(
            "etcd",
            &etcd,
            &[
                "--name=envtest".into(),
                format!("--data-dir={}", dir.join("etcd").display()),
                format!("--listen-client-urls={etcd_url}"),
                format!("--advertise-client-urls={etcd_url}"),
                format!("--listen-peer-urls={peer_url}"),
                format!("--initial-advertise-peer-urls={peer_url}"),
                format!("--initial-cluster=envtest={peer_url}"),
            ],
            // etcd 3.4 starts on arm64 only when told the architecture is meant.
            if cfg!(target_arch = "aarch64") {
                &[("ETCD_UNSUPPORTED_ARCH", "arm64")]
            } else {
                &[]
            },
        )?;
        let file = |path: PathBuf| path.display().to_string();
        plane.processes.spawn(
            "kube-apiserver",
            &apiserver,
            &[
                "--advertise-address=127.0.0.1".into(),
                "--bind-address=127.0.0.1".into(),
                format!("--secure-port={secure_port}"),
                format!("--etcd-servers={etcd_url}"),
                format!("--cert-dir={}", dir.display()),
                format!("--tls-cert-file={}", file(serving.join("cert.pem"))),
                format!("--tls-private-key-file={}", file(serving.join("key.pem"))),
                format!("--client-ca-file={}", file(dir.join("ca.crt"))),
                "--authorization-mode=RBAC".into(),
                "--service-cluster-ip-range=10.0.0.0/24".into(),
                "--allow-privileged=true".into(),
                // No controller-manager runs to give each namespace its `default` ServiceAccount,
                // which this plugin would require of every Pod.
                "--disable-admission-plugins=ServiceAccount".into(),
                format!("--service-account-issuer=https://127.0.0.1:{secure_port}/"),
                format!("--service-account-key-file={}", file(dir.join("sa.pub"))),
                format!(
                    "--service-account-signing-key-file={}",
                    file(dir.join("sa.key"))
                ),
            ],
            &[],
        )?;

        let text = plane.kubeconfig_yaml(secure_port)?;
        // For `kubectl --kubeconfig` into the control plane of a test that is still running.
        fs::write(dir.join("kubeconfig"), &text)?;
        plane.kubeconfig = Kubeconfig::from_yaml(&text)?;
        let client = plane.client().await?;
        plane
            .processes
            .wait_ready("kube-apiserver", timeout, || ready(&client))
            .await?;
        install_crds(&client, crds).await?;
        Ok(plane)
    }

    /// A client of the API server as a cluster admin. A client serves the tokio runtime it is made
    /// on: each test makes its own.
    pub async fn client(&self) -> Result<Client> {
        let options = KubeConfigOptions::default();
        let config = Config::from_custom_kubeconfig(self.kubeconfig.clone(), &options).await?;
        Ok(Client::try_from(config)?)
    }

    /// The PEM certificate of the CA that the API server trusts, for a webhook's `caBundle`.
    pub fn ca_pem(&self) -> String {
        self.ca.pem()
    }

    /// A serving certificate for 127.0.0.1 signed by the CA, written to `cert.pem` and `key.pem`
    /// in a directory of the control plane's named `name`, which this returns.
    pub fn serving_cert(&self, name: &str) -> Result<PathBuf> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(["127.0.0.1".to_owned(), "localhost".to_owned()])?;
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let cert = params.signed_by(&key, &self.ca)?;
        let dir = self.processes.dir().join(name);
        fs::create_dir_all(&dir)?;
        fs::write(dir.join("cert.pem"), cert.pem())?;
        fs::write(dir.join("key.pem"), key.serialize_pem())?;
        Ok(dir)
    }

    /// A kubeconfig of the API server on `port` as the tests' admin: a client certificate, written
    /// next to it, whose organization, which the API server takes for a group, is `system:masters`.
    fn kubeconfig_yaml(&self, port: u16) -> Result<String> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::new())?;
        params
            .distinguished_name
            .push(DnType::CommonName, "envtest-admin");
        params
            .distinguished_name
            .push(DnType::OrganizationName, "system:masters");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params.signed_by(&key, &self.ca)?;
        let dir = self.processes.dir();
        fs::write(dir.join("admin.crt"), cert.pem())?;
        fs::write(dir.join("admin.key"), key.serialize_pem())?;
        Ok(format!(
            "apiVersion: v1
kind: Config
clusters:
- name: envtest
  cluster:
    server: https://127.0.0.1:{port}
    certificate-authority: '{dir}/ca.crt'
users:
- name: envtest-admin
  user:
    client-certificate: '{dir}/admin.crt'
    client-key: '{dir}/admin.key'
contexts:
- name: envtest
  context:
    cluster: envtest
    user: envtest-admin
current-context: envtest
",
            // Quoted for YAML, whatever the temporary directory's name.
            dir = dir.display().to_string().replace('\'', "''"),
        ))
    }
}

/// The CA's certificate: one that signs the others.
fn ca_params() -> Result<CertificateParams> {
    let mut params = CertificateParams::new(Vec::new())?;
    params
        .distinguished_name
        .push(DnType::CommonName, "envtest-ca");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(params)
}

/// Whether the API server answers its readiness check.
async fn ready(client: &Client) -> bool {
    let Ok(request) = http::Request::get("/readyz").body(Vec::new()) else {
        return false;
    };
    let answer = tokio::time::timeout(Duration::from_secs(2), client.request_text(request));
    matches!(answer.await, Ok(Ok(_)))
}

/// The time `KUBEBUILDER_CONTROLPLANE_START_TIMEOUT` gives, in seconds (`90`, `90s`) or minutes
/// (`2m`); a minute without it.
fn start_timeout() -> Result<Duration> {
    let Some(value) = env::var(START_TIMEOUT).ok().filter(|v| !v.is_empty()) else {
        return Ok(DEFAULT_START_TIMEOUT);
    };
    let (number, unit) = match value.strip_suffix('m') {
        Some(minutes) => (minutes, 60),
        None => (value.strip_suffix('s').unwrap_or(&value), 1),
    };
    match number.parse::<u64>() {
        Ok(n) => Ok(Duration::from_secs(n * unit)),
        Err(_) => Err(format!(
            "{START_TIMEOUT}={value:?}: give seconds or minutes, e.g. 90s or 2m"
        )
        .into()),
    }
}

/// The path of `name` in `assets`, if it is there.
fn binary(assets: &Path, name: &str) -> Result<PathBuf> {
    let path = assets.join(name).with_extension(env::consts::EXE_EXTENSION);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "{ASSETS}={} has no {name}: `rsop envtest use -p path` prints the directory of a complete release",
            assets.display()
        )
        .into())
    }
}

/// Loopback ports nothing listens on, all different.
fn free_ports<const N: usize>() -> io::Result<[u16; N]> {
    // The listeners are held until all ports are known, so that no two are the same.
    let listeners = (0..N)
        .map(|_| TcpListener::bind(("127.0.0.1", 0)))
        .collect::<io::Result<Vec<_>>>()?;
    let mut ports = [0; N];
    for (port, listener) in ports.iter_mut().zip(&listeners) {
        *port = listener.local_addr()?.port();
    }
    Ok(ports)
}

/// Applies every CustomResourceDefinition in the YAML files of `dir`, then waits until each is
/// Established. A missing `dir` is a project with no kinds yet.
async fn install_crds(client: &Client, dir: &Path) -> Result<()> {
    let mut files = match fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|entry| entry.map(|e| e.path()))
            .collect::<io::Result<Vec<_>>>()?,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(format!("cannot read {}: {err}", dir.display()).into()),
    };
    files.retain(|path| {
        path.extension()
            .is_some_and(|ext| ext == "yaml" || ext == "yml")
    });
    files.sort();
    let api = Api::<CustomResourceDefinition>::all(client.clone());
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let mut names = Vec::new();
    for path in &files {
        let text = fs::read_to_string(path)?;
        for document in serde_yaml_ng::Deserializer::from_str(&text) {
            let crd = CustomResourceDefinition::deserialize(document)
                .map_err(|err| format!("{} is not a CRD: {err}", path.display()))?;
            let name = crd.name_any();
            api.patch(&name, &params, &Patch::Apply(&crd))
                .await
                .map_err(|err| format!("cannot install {}: {err}", path.display()))?;
            names.push(name);
        }
    }
    for name in names {
        let established = await_condition(api.clone(), &name, conditions::is_crd_established());
        match tokio::time::timeout(CRD_TIMEOUT, established).await {
            Ok(Ok(_)) => {}
            Ok(Err(err)) => return Err(format!("waiting for CRD {name}: {err}").into()),
            Err(_) => {
                return Err(
                    format!("CRD {name} was not Established within {CRD_TIMEOUT:?}").into(),
                );
            }
        }
    }
    Ok(())
}

/// The watchdog's script: it collects the process ids written to it, one per line, until its
/// input ends, which happens when the test process ends however it ends; then it kills them and
/// removes the directory `$1`. A dropped [`Processes`] kills the watchdog first, having done both.
/// Ctrl-C reaches the whole process group: the watchdog ignores it to outlive the test process.
const WATCHDOG: &str = r#"trap '' INT TERM HUP
pids=
while read -r pid; do pids="$pids $pid"; done
if [ -n "$pids" ]; then kill -9 $pids 2>/dev/null; fi
# A process killed may still be writing: the directory goes once each is gone (5 s at most).
for pid in $pids; do
    i=0
    while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
done
rm -rf "$1"
"#;

/// Child processes, each logging to a file in a temporary directory, that are stopped and whose
/// directory is removed when this is dropped or the test process ends.
#[derive(Debug)]
pub struct Processes {
    children: Vec<(&'static str, Child)>,
    watchdog: Child,
    watchdog_input: ChildStdin,
    dir: tempfile::TempDir,
}

impl Processes {
    /// An empty temporary directory, watched over.
    pub fn new() -> Result<Self> {
        let dir = tempfile::Builder::new().prefix("envtest-").tempdir()?;
        let mut watchdog = Command::new("sh")
            .args(["-c", WATCHDOG, "envtest-watchdog"])
            .arg(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| format!("cannot start the watchdog `sh`: {err}"))?;
        let watchdog_input = watchdog.stdin.take().ok_or("the watchdog has no input")?;
        Ok(Processes {
            children: Vec::new(),
            watchdog,
            watchdog_input,
            dir,
        })
    }

    /// The temporary directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The log file of the process `name`.
    pub fn log(&self, name: &str) -> PathBuf {
        self.dir().join(format!("{name}.log"))
    }

    /// Starts `program` with `args` as the process `name`, its output going to its log.
    pub fn spawn(
        &mut self,
        name: &'static str,
        program: &Path,
        args: &[String],
        envs: &[(&str, &str)],
    ) -> Result<u32> {
        let log = fs::File::create(self.log(name))?;
        let child = Command::new(program)
            .args(args)
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|err| format!("cannot start {}: {err}", program.display()))?;
        let pid = child.id();
        self.children.push((name, child));
        writeln!(self.watchdog_input, "{pid}")?;
        self.watchdog_input.flush()?;
        Ok(pid)
    }

    /// Waits until `probe` says the process `name` is ready, failing with the end of its log if it
    /// is not within `timeout`, or if any process exits first.
    pub async fn wait_ready<F, R>(
        &mut self,
        name: &str,
        timeout: Duration,
        mut probe: F,
    ) -> Result<()>
    where
        F: FnMut() -> R,
        R: Future<Output = bool>,
    {
        let started = Instant::now();
        loop {
            if let Some((exited, status)) = self.exited()? {
                return Err(self.failure(exited, &format!("{exited} exited ({status})")));
            }
            if probe().await {
                return Ok(());
            }
            if started.elapsed() >= timeout {
                let what = format!(
                    "{name} was not ready within {timeout:?} (set {START_TIMEOUT} for more time)"
                );
                return Err(self.failure(name, &what));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The first process that has exited, and how.
    fn exited(&mut self) -> io::Result<Option<(&'static str, String)>> {
        for (name, child) in &mut self.children {
            if let Some(status) = child.try_wait()? {
                return Ok(Some((name, status.to_string())));
            }
        }
        Ok(None)
    }

    /// `what` went wrong with the process `name`, and the end of its log.
    fn failure(&self, name: &str, what: &str) -> Error {
        let log = self.log(name);
        let text = fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(LOG_TAIL)..].join("\n");
        format!("{what}; the end of its log, {}:\n{tail}", log.display()).into()
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        // The watchdog goes first, so that it never signals a pid reused after the processes'.
        let _ = self.watchdog.kill();
        let _ = self.watchdog.wait();
        // The API server before etcd, in the reverse of their start.
        for (_, child) in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
        // Then `dir` removes the directory.
    }
}

/// The harness's handling of processes, with shell scripts standing in for etcd and
/// kube-apiserver.
#[cfg(unix)]
#[cfg(test)]
mod stand_ins {
    use std::io::{BufRead as _, BufReader};
    use std::os::unix::fs::PermissionsExt as _;
    use std::panic::{AssertUnwindSafe, catch_unwind};

    use super::*;

    /// The environment variable that makes [`hold_processes_until_killed`] hold processes.
    const HOLD: &str = "ENVTEST_HOLD_PROCESSES";

    /// A directory of stand-ins: `etcd` waits, `kube-apiserver` runs `apiserver`, a shell script.
    fn stand_ins(apiserver: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, script) in [("etcd", "exec sleep 600"), ("kube-apiserver", apiserver)] {
            let path = dir.path().join(name);
            fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        }
        dir
    }

    /// Starts both stand-ins of `assets`, returning their pids.
    fn spawn_both(processes: &mut Processes, assets: &Path) -> [u32; 2] {
        let no_args = &[];
        [
            processes
                .spawn("etcd", &assets.join("etcd"), no_args, &[])
                .unwrap(),
            processes
                .spawn(
                    "kube-apiserver",
                    &assets.join("kube-apiserver"),
                    no_args,
                    &[],
                )
                .unwrap(),
        ]
    }

    /// Whether the process `pid` runs: it exists and, where `/proc` tells, is not a zombie.
    fn running(pid: u32) -> bool {
        if Path::new("/proc/self/stat").is_file() {
            return fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                stat.rsplit(") ")
                    .next()
                    .is_some_and(|rest| !rest.starts_with('Z'))
            });
        }
        Command::new("sh")
            .args(["-c", &format!("kill -0 {pid} 2>/dev/null")])
            .status()
            .is_ok_and(|status| status.success())
    }

    /// Polls `done` for up to ten seconds.
    fn eventually(done: impl Fn() -> bool) -> bool {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn processes_start_and_stop_with_their_directory_when_dropped() {
        let assets = stand_ins("exec sleep 600");
        let mut processes = Processes::new().unwrap();
        let pids = spawn_both(&mut processes, assets.path());
        let dir = processes.dir().to_owned();
        assert!(pids.iter().all(|&pid| running(pid)));
        assert!(dir.is_dir());

        drop(processes);
        assert!(!pids.iter().any(|&pid| running(pid)));
        assert!(!dir.exists());
    }

    #[test]
    fn a_panicking_test_stops_its_processes() {
        let assets = stand_ins("exec sleep 600");
        let mut started = None;
        let panicked = catch_unwind(AssertUnwindSafe(|| {
            let mut processes = Processes::new().unwrap();
            started = Some((
                spawn_both(&mut processes, assets.path()),
                processes.dir().to_owned(),
            ));
            panic!("the test fails while its processes run");
        }));
        assert!(panicked.is_err());
        let (pids, dir) = started.unwrap();
        assert!(!pids.iter().any(|&pid| running(pid)));
        assert!(!dir.exists());
    }

    /// Run by [`a_killed_test_process_leaves_no_process_or_directory`] in a test process of its
    /// own, which it kills; returns at once otherwise.
    #[test]
    fn hold_processes_until_killed() {
        let Some(assets) = env::var_os(HOLD) else {
            return;
        };
        let mut processes = Processes::new().unwrap();
        let [etcd, apiserver] = spawn_both(&mut processes, Path::new(&assets));
        println!("holding {etcd} {apiserver} {}", processes.dir().display());
        std::thread::sleep(Duration::from_secs(600));
    }

    #[test]
    fn a_killed_test_process_leaves_no_process_or_directory() {
        let assets = stand_ins("exec sleep 600");
        let mut holder = Command::new(env::current_exe().unwrap())
            .args(["--exact", "envtest::stand_ins::hold_processes_until_killed"])
            .args(["--nocapture", "--test-threads=1"])
            .env(HOLD, assets.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let output = BufReader::new(holder.stdout.take().unwrap());
        // libtest writes the test's name on the same line first.
        let line = output
            .lines()
            .map_while(io::Result::ok)
            .find_map(|line| Some(line.split_once("holding ")?.1.to_owned()))
            .expect("the holding test process says what it holds");
        let held: Vec<&str> = line.split(' ').collect();
        let pids: Vec<u32> = held[..2].iter().map(|pid| pid.parse().unwrap()).collect();
        let dir = PathBuf::from(held[2]);
        assert!(pids.iter().all(|&pid| running(pid)));
        assert!(dir.is_dir());

        holder.kill().unwrap();
        holder.wait().unwrap();
        assert!(eventually(|| !pids.iter().any(|&pid| running(pid))));
        assert!(eventually(|| !dir.exists()));
    }

    #[tokio::test]
    async fn an_api_server_that_never_becomes_ready_times_out_with_its_log_tail() {
        let log: String = (1..=30)
            .map(|i| format!("echo 'waiting for etcd, try {i}'\n"))
            .collect();
        let assets = stand_ins(&format!("{log}exec sleep 600"));
        let crds = assets.path().join("crds");
        let started = Instant::now();
        let err = ControlPlane::start_with(assets.path(), &crds, Duration::from_secs(1))
            .await
            .expect_err("a stand-in is never ready")
            .to_string();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert!(
            err.starts_with("kube-apiserver was not ready within 1s"),
            "{err}"
        );
        // The last lines of its log, and no more.
        assert!(err.ends_with("waiting for etcd, try 30"), "{err}");
        assert!(err.contains("try 11\n"), "{err}");
        assert!(!err.contains("try 10\n"), "{err}");
    }

    #[tokio::test]
    async fn a_process_that_exits_fails_the_start_with_its_log() {
        let assets = stand_ins("echo 'Error: unknown flag: --bogus' >&2; exit 1");
        let crds = assets.path().join("crds");
        let err = ControlPlane::start_with(assets.path(), &crds, Duration::from_secs(60))
            .await
            .expect_err("the stand-in exits")
            .to_string();
        assert!(
            err.starts_with("kube-apiserver exited (exit status: 1)"),
            "{err}"
        );
        assert!(err.ends_with("Error: unknown flag: --bogus"), "{err}");
    }

    #[tokio::test]
    async fn missing_binaries_say_how_to_get_them() {
        let empty = tempfile::tempdir().unwrap();
        let err = ControlPlane::start(empty.path(), empty.path())
            .await
            .expect_err("no binaries")
            .to_string();
        assert!(err.contains("has no etcd"), "{err}");
        assert!(err.contains("rsop envtest use"), "{err}");
    }
}
