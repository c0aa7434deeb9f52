//! Benchmark of the generated manager: the project of `rsop create api --image`, built in release,
//! run until every one of N objects of its kind is reconciled. For each run it reports the time from
//! start to the last object reconciled, the requests the manager sent, its CPU time and its peak
//! resident memory (`VmHWM`), and how long it takes to stop on SIGTERM. Run with
//! `cargo bench --bench manager`.
//!
//! By default it runs against a recorded API server (`benches/apiserver.py`) that lists the N
//! objects, on a new cluster (the objects alone) and on a restart (each object's Deployment and pod
//! there too), and waits for the last status written.
//!
//! With `RSOP_BENCH_CONTEXT=1` it runs against the current kube context instead, as a user measures
//! an operator on a real cluster: it installs the CRD, creates the N objects in a namespace of their
//! own (`rsop-bench-<pid>-<N>`, with `spec.size` 0 so that no pod is scheduled), starts the manager
//! on that namespace with the kubeconfig's credentials, waits until the namespace holds N
//! Deployments, then deletes the namespace. Its requests are counted from the manager's own
//! `rest_client_requests_total`, since the API server's counts are not at hand. The CRD stays
//! installed.
//!
//! - `RSOP_BENCH_OBJECTS`: the values of N, comma-separated (default `100,1000,10000`).
//! - `RSOP_BENCH_RSOP`: the rsop binary that scaffolds the project (default: this one). Pointing it
//!   at an older rsop gives the figures of its scaffold, to compare with.
//!
//! The manager is built with the project's release profile, except thin LTO and one codegen unit,
//! which only cost build time here; every build shares one target directory.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long one run may take before the benchmark gives up on it.
const TIMEOUT: Duration = Duration::from_secs(600);

fn main() {
    let counts: Vec<usize> = std::env::var("RSOP_BENCH_OBJECTS")
        .unwrap_or_else(|_| "100,1000,10000".to_owned())
        .split(',')
        .map(|n| n.trim().parse().expect("RSOP_BENCH_OBJECTS holds numbers"))
        .collect();
    let rsop = std::env::var_os("RSOP_BENCH_RSOP")
        .filter(|path| !path.is_empty())
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_rsop")), PathBuf::from);
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let project = scaffold(&rsop, tmp.path());
    let manager = build(&project);
    println!("manager of `{}`:", rsop.display());
    let context = std::env::var_os("RSOP_BENCH_CONTEXT").is_some_and(|v| !v.is_empty());
    println!(
        "{:>8} {:>8} {:>12} {:>9} {:>9} {:>10}  requests",
        "objects",
        "cluster",
        if context { "all deploy" } else { "all status" },
        "CPU",
        "peak RSS",
        "SIGTERM"
    );
    let proxy = context.then(|| Proxy::start(&project));
    for count in counts {
        let runs = match &proxy {
            Some(proxy) => vec![("context", run_in_context(&manager, count, proxy))],
            None => [false, true]
                .into_iter()
                .map(|restart| {
                    let name = if restart { "restart" } else { "new" };
                    (name, run(&manager, count, restart, tmp.path()))
                })
                .collect(),
        };
        for (cluster, run) in runs {
            println!(
                "{count:>8} {cluster:>8} {:>10.2} s {:>7.2} s {:>5.1} MiB {:>8.2} s  {}",
                run.reconciled.as_secs_f64(),
                run.cpu.as_secs_f64(),
                f64::from(run.peak_rss_kib) / 1024.0,
                run.shutdown.as_secs_f64(),
                run.requests
            );
        }
    }
}

/// Scaffolds the `--image` project with `rsop`.
fn scaffold(rsop: &Path, dir: &Path) -> PathBuf {
    let project = dir.join("bench-operator");
    std::fs::create_dir(&project).expect("the project's directory");
    let commands: [&[&str]; 2] = [
        &["init", "--domain", "example.com", "--vcs", "none"],
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--image",
            "memcached:1.6.26-alpine",
        ],
    ];
    for args in commands {
        let output = Command::new(rsop)
            .args(args)
            .current_dir(&project)
            .output()
            .expect("rsop runs");
        assert!(
            output.status.success(),
            "rsop {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    project
}

/// Builds the manager and returns its path.
fn build(project: &Path) -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("manager-bench");
    let status = Command::new("cargo")
        .args(["build", "--release", "--quiet", "--bin", "manager"])
        .current_dir(project)
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_PROFILE_RELEASE_LTO", "false")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the manager builds");
    target.join("release/manager")
}

/// The figures of one run.
struct Run {
    /// From start to the last object reconciled: its status written, or its Deployment created.
    reconciled: Duration,
    cpu: Duration,
    peak_rss_kib: u32,
    shutdown: Duration,
    requests: String,
}

/// Runs the manager against a recorded API server with `count` objects (and, on a `restart`,
/// their Deployments and pods) until every object has its status, then stops it with SIGTERM.
fn run(manager: &Path, count: usize, restart: bool, dir: &Path) -> Run {
    let mut server = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/apiserver.py"))
        .arg(count.to_string())
        .args(restart.then_some("restart"))
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut port = String::new();
    BufReader::new(server.stdout.take().expect("piped"))
        .read_line(&mut port)
        .expect("the server's port");
    let port: u16 = port.trim().parse().expect("a port");
    let kubeconfig = dir.join(format!("kubeconfig-{count}"));
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: bench\n\
             clusters: [{{name: bench, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n\
             contexts: [{{name: bench, context: {{cluster: bench, user: bench}}}}]\n\
             users: [{{name: bench, user: {{}}}}]\n"
        ),
    )
    .expect("the kubeconfig");

    let started = Instant::now();
    let (mut child, _) = start_manager(manager, &[], Some(&kubeconfig));
    let stats = wait_for(&mut child, Duration::from_millis(20), || {
        let stats = stats(port);
        let done = stats["statuses"].as_u64() == Some(count as u64);
        done.then_some(stats.clone()).ok_or(stats)
    });
    let reconciled = started.elapsed();
    let (cpu, peak_rss_kib) = usage(child.id());
    let stopping = Instant::now();
    stop(&mut child);
    let shutdown = stopping.elapsed();
    let _ = server.kill();
    let _ = server.wait();
    let mut requests: Vec<String> = stats["requests"]
        .as_object()
        .expect("requests by kind")
        .iter()
        .map(|(what, n)| format!("{what}: {n}"))
        .collect();
    requests.sort();
    if let Some(unknown) = stats["unknown"].as_array().filter(|u| !u.is_empty()) {
        requests.push(format!("unanswered: {unknown:?}"));
    }
    Run {
        reconciled,
        cpu,
        peak_rss_kib,
        shutdown,
        requests: requests.join(", "),
    }
}

/// Starts the manager with `args`, metrics served over plain HTTP on a free port (returned), and
/// the kubeconfig at `kubeconfig` or else the current one.
fn start_manager(manager: &Path, args: &[&str], kubeconfig: Option<&Path>) -> (Child, u16) {
    let metrics_port = free_port();
    let mut command = Command::new(manager);
    command
        .args([
            "--leader-elect=false",
            "--metrics-secure=false",
            &format!("--metrics-bind-address=127.0.0.1:{metrics_port}"),
            &format!("--health-probe-bind-address=127.0.0.1:{}", free_port()),
        ])
        .args(args)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(kubeconfig) = kubeconfig {
        command.env("KUBECONFIG", kubeconfig);
    }
    let child = command.spawn().expect("the manager starts");
    (child, metrics_port)
}

/// Runs the manager against the current kube context on a new namespace holding `count` objects,
/// until the namespace holds their `count` Deployments, then stops it and deletes the namespace.
fn run_in_context(manager: &Path, count: usize, proxy: &Proxy) -> Run {
    let namespace = format!("rsop-bench-{}-{count}", std::process::id());
    proxy.send(
        "POST",
        "/api/v1/namespaces",
        &serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
    );
    let objects = format!("/apis/cache.example.com/v1alpha1/namespaces/{namespace}/memcacheds");
    // A few connections at a time: 10,000 objects one after the other would take minutes.
    std::thread::scope(|scope| {
        const WRITERS: usize = 8;
        for writer in 0..WRITERS {
            let objects = &objects;
            scope.spawn(move || {
                for i in (writer..count).step_by(WRITERS) {
                    let object = serde_json::json!({
                        "apiVersion": "cache.example.com/v1alpha1",
                        "kind": "Memcached",
                        "metadata": {"name": format!("memcached-{i:05}")},
                        "spec": {"size": 0},
                    });
                    proxy.send("POST", objects, &object);
                }
            });
        }
    });

    let started = Instant::now();
    let (mut child, metrics_port) =
        start_manager(manager, &[&format!("--namespace={namespace}")], None);
    let deployments = format!("/apis/apps/v1/namespaces/{namespace}/deployments?limit=1");
    wait_for(&mut child, Duration::from_millis(100), || {
        // One item and the count of the others: what a list of one page says of the rest.
        let (_, page) = proxy.request("GET", &deployments, None);
        let listed = page["items"].as_array().map_or(0, Vec::len) as u64
            + page["metadata"]["remainingItemCount"].as_u64().unwrap_or(0);
        (listed == count as u64)
            .then_some(())
            .ok_or(format!("{listed} of {count} Deployments"))
    });
    let reconciled = started.elapsed();
    let (cpu, peak_rss_kib) = usage(child.id());
    let requests = client_requests(metrics_port);
    let stopping = Instant::now();
    stop(&mut child);
    let shutdown = stopping.elapsed();
    proxy.send(
        "DELETE",
        &format!("/api/v1/namespaces/{namespace}"),
        &serde_json::json!({}),
    );
    Run {
        reconciled,
        cpu,
        peak_rss_kib,
        shutdown,
        requests,
    }
}

/// Polls `done` every `period` until it holds (`Ok`), failing with what it last said (`Err`) if the
/// manager exits first or [`TIMEOUT`] passes.
fn wait_for<T, E: std::fmt::Display>(
    child: &mut Child,
    period: Duration,
    mut done: impl FnMut() -> Result<T, E>,
) -> T {
    let started = Instant::now();
    loop {
        let last = match done() {
            Ok(done) => return done,
            Err(last) => last,
        };
        assert!(
            started.elapsed() < TIMEOUT,
            "not done in {TIMEOUT:?}: {last}"
        );
        if let Some(exit) = child.try_wait().expect("the manager's state") {
            panic!("the manager exited with {exit}: {last}");
        }
        std::thread::sleep(period);
    }
}

/// The manager's requests by method and response code, from its `rest_client_requests_total`.
fn client_requests(metrics_port: u16) -> String {
    let text = http(metrics_port, "GET", "/metrics", None).1;
    let mut requests: Vec<String> = text
        .lines()
        .filter_map(|line| line.strip_prefix("rest_client_requests_total{"))
        .filter_map(|series| {
            let (labels, value) = series.split_once("} ")?;
            let label = |name: &str| {
                labels
                    .split(',')
                    .find_map(|l| l.strip_prefix(&format!("{name}=\"")))
                    .map(|v| v.trim_end_matches('"').to_owned())
            };
            Some(format!("{} {}: {value}", label("method")?, label("code")?))
        })
        .collect();
    requests.sort();
    requests.join(", ")
}

/// `kubectl proxy` to the current kube context, through which the benchmark sets the cluster up
/// with plain HTTP requests.
struct Proxy {
    child: Child,
    port: u16,
}

impl Proxy {
    /// Starts the proxy and installs the CRD of `project`, waiting until it is established.
    fn start(project: &Path) -> Self {
        let mut child = Command::new("kubectl")
            .args(["proxy", "--port=0"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("kubectl proxy's address");
        let port = line
            .trim()
            .rsplit(':')
            .next()
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("kubectl proxy said {line:?}, not its address"));
        let proxy = Self { child, port };

        let crd = std::fs::read_to_string(
            project.join("config/crd/bases/cache.example.com_memcacheds.yaml"),
        )
        .expect("the CRD `rsop manifests` wrote");
        let crd: serde_json::Value = serde_yaml_ng::from_str(&crd).expect("the CRD is YAML");
        let path =
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/memcacheds.cache.example.com";
        let applied = proxy.request(
            "PATCH",
            &format!("{path}?fieldManager=rsop-bench&force=true"),
            Some(("application/apply-patch+yaml", &crd)),
        );
        assert!(applied.0 < 300, "the CRD is applied: {}", applied.1);
        let established = Instant::now();
        loop {
            let crd = proxy.request("GET", path, None).1;
            let conditions = crd["status"]["conditions"].as_array().cloned();
            let ready = conditions
                .iter()
                .flatten()
                .any(|c| c["type"] == "Established" && c["status"] == "True");
            if ready {
                break proxy;
            }
            assert!(
                established.elapsed() < Duration::from_secs(60),
                "the CRD is not established after a minute: {crd}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Sends `body` as JSON and fails unless the API server accepts it.
    fn send(&self, method: &str, path: &str, body: &serde_json::Value) {
        let (code, answer) = self.request(method, path, Some(("application/json", body)));
        assert!(code < 300, "{method} {path}: {code} {answer}");
    }

    /// The response code and JSON body of one request.
    fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, &serde_json::Value)>,
    ) -> (u16, serde_json::Value) {
        let (code, text) = http(self.port, method, path, body);
        let body = serde_json::from_str(&text)
            .unwrap_or_else(|_| panic!("{method} {path}: {code} {text}"));
        (code, body)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.0 request to the loopback `port`: its response code and body.
fn http(
    port: u16,
    method: &str,
    path: &str,
    body: Option<(&str, &serde_json::Value)>,
) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the server answers");
    let (headers, body) = match body {
        Some((content_type, body)) => {
            let body = body.to_string();
            let headers = format!(
                "Content-Type: {content_type}\r\nContent-Length: {}\r\n",
                body.len()
            );
            (headers, body)
        }
        None => (String::new(), String::new()),
    };
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: localhost\r\nAccept: application/json\r\n{headers}\r\n{body}"
    )
    .expect("a request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("a response");
    let (head, body) = response.split_once("\r\n\r\n").expect("a body");
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    (code, body.to_owned())
}

/// A port free on the loopback interface now.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// The recorded server's counters.
fn stats(port: u16) -> serde_json::Value {
    serde_json::from_str(&http(port, "GET", "/_stats", None).1).expect("JSON")
}

/// The CPU time (user and system) and the peak resident memory of process `pid`, from `/proc`.
fn usage(pid: u32) -> (Duration, u32) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/<pid>/stat");
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(") ")
        .expect("a stat line")
        .1
        .split(' ')
        .collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    let per_second: u64 = String::from_utf8(
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .expect("getconf runs")
            .stdout,
    )
    .expect("a number")
    .trim()
    .parse()
    .expect("a number");
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/<pid>/status");
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .expect("VmHWM");
    (Duration::from_millis(ticks * 1000 / per_second), peak)
}

/// Sends SIGTERM and waits for the process to exit.
fn stop(child: &mut Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "SIGTERM is sent");
    let exit = child.wait().expect("the manager exits");
    assert!(
        exit.success(),
        "the manager exits cleanly on SIGTERM: {exit}"
    );
}
