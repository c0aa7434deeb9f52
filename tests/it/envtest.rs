//! `rsop envtest` against a local HTTP server that serves an index and
//! archives made here: digests, cut-off downloads, the cache and `-i`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha512};

use crate::support::{rsop, snapshot};

/// How the server answers a path.
#[derive(Clone)]
enum Reply {
    Whole(Vec<u8>),
    /// The headers promise the whole body; half of it is sent, then the
    /// connection is closed.
    CutOff(Vec<u8>),
}

/// A server on a free loopback port; the paths it was asked for, in order.
struct Server {
    url: String,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(routes: BTreeMap<String, Reply>) -> Self {
        Self::on(TcpListener::bind("127.0.0.1:0").unwrap(), routes)
    }

    /// Serves `routes` on `listener`, bound before the routes were made when
    /// they name the server's own URL.
    fn on(listener: TcpListener, routes: BTreeMap<String, Reply>) -> Self {
        let url = format!("http://{}", listener.local_addr().unwrap());
        let asked = Arc::new(Mutex::new(Vec::new()));
        let log = asked.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                serve(stream, &routes, &log);
            }
        });
        Server { url, asked }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

fn serve(mut stream: TcpStream, routes: &BTreeMap<String, Reply>, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    // The rest of the request's head.
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    let path = request.split_whitespace().nth(1).unwrap_or("").to_string();
    log.lock().unwrap().push(path.clone());
    let head = |len: usize| {
        format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n")
    };
    match routes.get(&path) {
        Some(Reply::Whole(body)) => {
            let _ = stream.write_all(head(body.len()).as_bytes());
            let _ = stream.write_all(body);
        }
        Some(Reply::CutOff(body)) => {
            let _ = stream.write_all(head(body.len()).as_bytes());
            let _ = stream.write_all(&body[..body.len() / 2]);
        }
        None => {
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    }
    let _ = stream.flush();
}

/// A `.tar.gz` laid out as the envtest releases are:
/// `controller-tools/envtest/<binary>`, each a script naming its release.
fn archive(version: &str) -> Vec<u8> {
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for binary in ["kube-apiserver", "etcd", "kubectl"] {
        let script = format!("#!/bin/sh\necho {binary} {version}\n");
        let mut header = tar::Header::new_gnu();
        header.set_size(script.len() as u64);
        header.set_mode(0o755);
        header.set_cksum();
        tar.append_data(
            &mut header,
            format!("controller-tools/envtest/{binary}"),
            script.as_bytes(),
        )
        .unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

fn sha512(bytes: &[u8]) -> String {
    Sha512::digest(bytes)
        .iter()
        .fold(String::new(), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        })
}

/// An index of `(version, digest)` archives for linux/amd64, served by `url`.
fn index(url: &str, archives: &[(&str, String)]) -> Vec<u8> {
    let mut text = String::from("releases:\n");
    for (version, digest) in archives {
        let _ = write!(
            text,
            "  v{version}:\n    envtest-v{version}-linux-amd64.tar.gz:\n      hash: {digest}\n      selfLink: {url}/envtest-v{version}-linux-amd64.tar.gz\n"
        );
    }
    text.into_bytes()
}

/// The server: 1.34.1 whole and right, 1.33.0 with a digest that is not
/// its own, 1.32.0 cut off halfway.
fn releases() -> Server {
    // The index names the server's own URL, known once it listens.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let good = archive("1.34.1");
    let bad = archive("1.33.0");
    let cut = archive("1.32.0");
    let mut routes = BTreeMap::new();
    routes.insert(
        "/index.yaml".to_string(),
        Reply::Whole(index(
            &url,
            &[
                ("1.34.1", sha512(&good)),
                ("1.33.0", sha512(b"another archive")),
                ("1.32.0", sha512(&cut)),
            ],
        )),
    );
    routes.insert(
        "/envtest-v1.34.1-linux-amd64.tar.gz".into(),
        Reply::Whole(good),
    );
    routes.insert(
        "/envtest-v1.33.0-linux-amd64.tar.gz".into(),
        Reply::Whole(bad),
    );
    routes.insert(
        "/envtest-v1.32.0-linux-amd64.tar.gz".into(),
        Reply::CutOff(cut),
    );
    Server::on(listener, routes)
}

/// The URL of a port nothing listens on.
fn closed_port() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

fn envtest(cwd: &Path, store: &Path, server: &Server, args: &[&str]) -> crate::support::Run {
    let index = format!("{}/index.yaml", server.url);
    let store = store.to_str().unwrap();
    let mut all = vec!["envtest"];
    all.extend_from_slice(args);
    all.extend_from_slice(&[
        "--bin-dir",
        store,
        "--index",
        &index,
        "--os",
        "linux",
        "--arch",
        "amd64",
    ]);
    rsop(cwd, &all)
}

#[test]
fn a_release_is_downloaded_checked_and_cached_once() {
    let server = releases();
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let folder = store.join("k8s/1.34.1-linux-amd64");

    let run = envtest(
        tmp.path(),
        &store,
        &server,
        &["use", "1.34.1", "-p", "path"],
    )
    .success();
    assert_eq!(run.stdout, format!("{}\n", folder.display()));
    for binary in ["kube-apiserver", "etcd", "kubectl"] {
        let out = std::process::Command::new(folder.join(binary))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{binary} 1.34.1\n")
        );
    }
    assert_eq!(
        server.asked(),
        ["/index.yaml", "/envtest-v1.34.1-linux-amd64.tar.gz"]
    );

    // A cached release sends no request.
    let run = envtest(tmp.path(), &store, &server, &["use", "1.34.1", "-p", "env"]).success();
    assert_eq!(
        run.stdout,
        format!("export KUBEBUILDER_ASSETS='{}'\n", folder.display())
    );
    assert_eq!(server.asked().len(), 2);

    // `-i` asks nothing of the network, even for the newest release.
    let offline = Server::start(BTreeMap::new());
    let run = envtest(tmp.path(), &store, &offline, &["use", "-i"]).success();
    assert_eq!(
        run.stdout,
        format!(
            "Version: 1.34.1\nOS/Arch: linux/amd64\nPath: {}\n",
            folder.display()
        )
    );
    // Without a reachable index, a cached release that matches serves, with a note.
    let gone = Server {
        url: closed_port(),
        asked: Arc::default(),
    };
    let run = envtest(tmp.path(), &store, &gone, &["use", "1.34", "-p", "path"]).success();
    assert_eq!(run.stdout, format!("{}\n", folder.display()));
    assert!(run.stderr.contains("cannot download"), "{}", run.stderr);
    assert!(
        run.stderr.contains("using the cached 1.34.1"),
        "{}",
        run.stderr
    );
    let run = envtest(tmp.path(), &store, &offline, &["list", "-i"]).success();
    assert_eq!(run.stdout, "(installed)\tv1.34.1\tlinux/amd64\n");
    assert!(offline.asked().is_empty(), "{:?}", offline.asked());
    let run = envtest(tmp.path(), &store, &offline, &["use", "-i", "1.33"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("no cached envtest binaries for 1.33 release on linux/amd64"),
        "{}",
        run.stderr
    );

    // The index's other releases are listed as available.
    let run = envtest(tmp.path(), &store, &server, &["list"]).success();
    assert_eq!(
        run.stdout,
        "(installed)\tv1.34.1\tlinux/amd64\n(available)\tv1.33.0\tlinux/amd64\n(available)\tv1.32.0\tlinux/amd64\n"
    );
}

#[test]
fn a_wrong_digest_or_a_cut_off_download_caches_nothing() {
    let server = releases();
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    for (version, needle) in [
        (
            "1.33.0",
            "does not match the SHA-512 digest the index gives it; nothing was cached",
        ),
        ("1.32.0", "was cut off"),
    ] {
        let before = snapshot(tmp.path());
        let run = envtest(tmp.path(), &store, &server, &["use", version]);
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert!(run.stderr.contains(needle), "{version}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
        // Nothing in the store but its empty `k8s` folder: no release, no
        // temporary file.
        let after: Vec<_> = snapshot(tmp.path())
            .into_keys()
            .filter(|p| !before.contains_key(p))
            .collect();
        assert!(
            after
                .iter()
                .all(|p| p.ends_with("store") || p.ends_with("store/k8s")),
            "{version}: {after:?}"
        );
    }
}

#[test]
fn an_unreachable_index_or_unknown_release_is_one_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let gone = Server {
        url: closed_port(),
        asked: Arc::default(),
    };
    let run = envtest(tmp.path(), &store, &gone, &["use", "1.34"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("cannot download"), "{}", run.stderr);
    assert!(run.stderr.contains("pass -i"), "{}", run.stderr);

    let server = releases();
    let run = envtest(tmp.path(), &store, &server, &["use", "1.20"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("has no 1.20 release: the newest for linux/amd64 is 1.34.1"),
        "{}",
        run.stderr
    );
    let run = envtest(tmp.path(), &store, &server, &["use", "one.two"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("`one.two` is not a Kubernetes version"),
        "{}",
        run.stderr
    );
}
