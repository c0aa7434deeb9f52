//! Benchmark of the generated manager: the project of `rsop create api --image`, built in release,
//! run against a recorded API server (`benches/apiserver.py`) that lists N objects of its kind,
//! on a new cluster (the objects alone) and on a restart (each object's Deployment and pod there
//! too). For each it reports the time from start to the last object's status written, the
//! requests the manager sent, its CPU time and its peak resident memory (`VmHWM`). Run with
//! `cargo bench --bench manager`.
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
    println!(
        "{:>8} {:>8} {:>12} {:>9} {:>9} {:>10}  requests",
        "objects", "cluster", "all status", "CPU", "peak RSS", "SIGTERM"
    );
    for count in counts {
        for restart in [false, true] {
            let run = run(&manager, count, restart, tmp.path());
            println!(
                "{count:>8} {:>8} {:>10.2} s {:>7.2} s {:>5.1} MiB {:>8.2} s  {}",
                if restart { "restart" } else { "new" },
                run.all_status.as_secs_f64(),
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
    all_status: Duration,
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
    let mut child = Command::new(manager)
        .args([
            "--leader-elect=false",
            "--metrics-secure=false",
            &format!("--metrics-bind-address=127.0.0.1:{}", free_port()),
            &format!("--health-probe-bind-address=127.0.0.1:{}", free_port()),
        ])
        .env("KUBECONFIG", &kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the manager starts");
    let stats = loop {
        let stats = stats(port);
        if stats["statuses"].as_u64() == Some(count as u64) {
            break stats;
        }
        assert!(
            started.elapsed() < TIMEOUT,
            "{count} objects: not all reconciled in {TIMEOUT:?}: {stats}"
        );
        if let Some(exit) = child.try_wait().expect("the manager's state") {
            panic!("the manager exited with {exit}: {stats}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let all_status = started.elapsed();
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
        all_status,
        cpu,
        peak_rss_kib,
        shutdown,
        requests: requests.join(", "),
    }
}

/// A port free on the loopback interface now.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// The recorded server's counters.
fn stats(port: u16) -> serde_json::Value {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the recorded server");
    stream
        .write_all(b"GET /_stats HTTP/1.0\r\nHost: bench\r\n\r\n")
        .expect("a request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("a response");
    let body = response.split_once("\r\n\r\n").expect("a body").1;
    serde_json::from_str(body).expect("JSON")
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
