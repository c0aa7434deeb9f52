//! TLS for the manager's HTTPS servers: the secure metrics endpoint, and the webhook server once
//! the project has webhooks.
//!
//! Like controller-runtime, a server uses the certificate in its certificate directory (typically a
//! cert-manager Secret mounted into the pod) and picks up renewals without a restart; the metrics
//! endpoint falls back to a self-signed certificate generated at start-up, which Prometheus accepts
//! with `insecure_skip_verify`. Only HTTP/1.1 is offered unless HTTP/2 is asked for: kubebuilder
//! disables HTTP/2 by default because of the HTTP/2 Rapid Reset and Stream Cancellation CVEs.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // No `--metrics-cert-path`: a certificate made at start-up.
//! let config = rsop_runtime::tls::server_config(None).await.unwrap();
//! assert_eq!(config.alpn_protocols, [b"http/1.1".to_vec()]);
//! # }
//! ```

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use anyhow::{Context as _, bail};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::{CryptoProvider, ring};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::server::TlsStream;
use tracing::{debug, info, warn};

/// File names inside a certificate directory, as in a `kubernetes.io/tls` Secret.
pub const CERT_FILE: &str = "tls.crt";
/// See [`CERT_FILE`].
pub const KEY_FILE: &str = "tls.key";

/// How often the certificate files are checked for changes; cert-manager renews well ahead of
/// expiry, so a short delay in noticing costs nothing.
const RELOAD_INTERVAL: Duration = Duration::from_secs(10);
/// A client that has not finished its handshake by then is dropped, so slow or idle connections
/// cannot pile up.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a server reads its certificate chain and private key, both PEM.
#[derive(Clone, Debug)]
pub struct CertFiles {
    /// The certificate chain, PEM.
    pub cert: PathBuf,
    /// The private key, PEM.
    pub key: PathBuf,
}

impl CertFiles {
    /// [`CERT_FILE`] and [`KEY_FILE`] in `dir`.
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            cert: dir.join(CERT_FILE),
            key: dir.join(KEY_FILE),
        }
    }
}

/// Builds the metrics server's configuration from `cert_dir`, or from a fresh self-signed
/// certificate.
pub async fn server_config(cert_dir: Option<&Path>) -> anyhow::Result<Arc<ServerConfig>> {
    config(cert_dir.map(CertFiles::in_dir), false, "metrics").await
}

/// Builds the configuration of the `server` named in logs, from `certs` or else a fresh self-signed
/// certificate; `http2` offers HTTP/2 besides HTTP/1.1.
pub async fn config(
    certs: Option<CertFiles>,
    http2: bool,
    server: &'static str,
) -> anyhow::Result<Arc<ServerConfig>> {
    // The provider is explicit so that nothing depends on a process-wide default being installed.
    let provider = Arc::new(ring::default_provider());
    let resolver: Arc<dyn ResolvesServerCert> = match certs {
        Some(files) => {
            let cert = files.cert.display().to_string();
            let resolver = Arc::new(ReloadingCert::load(files, provider.clone(), server).await?);
            info!(server, %cert, "serving with the provided certificate");
            tokio::spawn(watch_cert_files(Arc::downgrade(&resolver)));
            resolver
        }
        None => {
            info!(server, "serving with a generated self-signed certificate");
            Arc::new(StaticCert(Arc::new(self_signed(&provider)?)))
        }
    };
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("the TLS provider supports no protocol version")?
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    config.alpn_protocols = if http2 {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    Ok(Arc::new(config))
}

fn self_signed(provider: &CryptoProvider) -> anyhow::Result<CertifiedKey> {
    let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()])
        .context("failed to generate a self-signed certificate")?;
    let key = PrivatePkcs8KeyDer::from(generated.signing_key.serialize_der());
    CertifiedKey::from_der(
        vec![generated.cert.der().clone()],
        PrivateKeyDer::Pkcs8(key),
        provider,
    )
    .context("failed to use the self-signed certificate")
}

/// Parses a PEM certificate chain and its private key.
fn parse_pem(cert: &[u8], key: &[u8], provider: &CryptoProvider) -> anyhow::Result<CertifiedKey> {
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .context("invalid PEM in the certificate file")?;
    if chain.is_empty() {
        bail!("the certificate file holds no certificate");
    }
    let key = PrivateKeyDer::from_pem_slice(key).context("invalid private key file")?;
    CertifiedKey::from_der(chain, key, provider)
        .context("the private key is unusable or does not match the certificate")
}

#[derive(Debug)]
struct StaticCert(Arc<CertifiedKey>);

impl ResolvesServerCert for StaticCert {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }
}

/// A certificate read from a directory and replaced whenever the files change.
#[derive(Debug)]
struct ReloadingCert {
    /// The server's name in logs.
    server: &'static str,
    cert_path: PathBuf,
    key_path: PathBuf,
    provider: Arc<CryptoProvider>,
    /// The files' contents the current key was built from, to detect changes cheaply.
    current: RwLock<(Vec<u8>, Vec<u8>, Arc<CertifiedKey>)>,
}

impl ReloadingCert {
    async fn load(
        files: CertFiles,
        provider: Arc<CryptoProvider>,
        server: &'static str,
    ) -> anyhow::Result<Self> {
        let (cert, key) = read_pair(&files.cert, &files.key).await?;
        let certified = parse_pem(&cert, &key, &provider)
            .with_context(|| format!("failed to load the certificate {}", files.cert.display()))?;
        Ok(Self {
            server,
            cert_path: files.cert,
            key_path: files.key,
            provider,
            current: RwLock::new((cert, key, Arc::new(certified))),
        })
    }

    /// Re-reads the files; returns whether a new certificate is now served.
    ///
    /// Errors keep the previous certificate: during a rotation the two files are not replaced
    /// atomically, and a half-updated pair must not take the endpoint down.
    async fn reload(&self) -> anyhow::Result<bool> {
        let (cert, key) = read_pair(&self.cert_path, &self.key_path).await?;
        {
            let current = self.current.read().unwrap_or_else(|e| e.into_inner());
            if current.0 == cert && current.1 == key {
                return Ok(false);
            }
        }
        let certified = Arc::new(parse_pem(&cert, &key, &self.provider)?);
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = (cert, key, certified);
        Ok(true)
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let current = self.current.read().unwrap_or_else(|e| e.into_inner());
        Some(current.2.clone())
    }
}

async fn read_pair(cert: &Path, key: &Path) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
    let read = |path: &Path| {
        let path = path.to_owned();
        async move {
            tokio::fs::read(&path)
                .await
                .with_context(|| format!("failed to read {}", path.display()))
        }
    };
    Ok((read(cert).await?, read(key).await?))
}

/// Polls the files for as long as a server still uses the resolver.
async fn watch_cert_files(resolver: Weak<ReloadingCert>) {
    let mut interval = tokio::time::interval(RELOAD_INTERVAL);
    interval.tick().await;
    loop {
        interval.tick().await;
        let Some(resolver) = resolver.upgrade() else {
            return;
        };
        match resolver.reload().await {
            Ok(true) => info!(server = resolver.server, "reloaded the certificate"),
            Ok(false) => {}
            Err(err) => warn!(
                server = resolver.server,
                error = crate::logging::error_chain(&err),
                "keeping the previous certificate"
            ),
        }
    }
}

/// A listener that hands out connections whose TLS handshake has completed.
///
/// Handshakes run on their own tasks so that one slow client cannot hold up the others.
#[derive(Debug)]
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local_addr: SocketAddr,
}

impl TlsListener {
    /// Starts accepting on `listener`; the accept loop ends when this value is dropped.
    pub fn new(listener: TcpListener, config: Arc<ServerConfig>) -> io::Result<Self> {
        let local_addr = listener.local_addr()?;
        let (tx, ready) = mpsc::channel(64);
        tokio::spawn(accept_loop(listener, TlsAcceptor::from(config), tx));
        Ok(Self { ready, local_addr })
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    ready: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
) {
    loop {
        let accepted = tokio::select! {
            () = ready.closed() => return,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(connection) => connection,
            Err(err) => {
                // Typically EMFILE: back off instead of spinning, as axum's own listener does.
                warn!(error = %err, "failed to accept a connection");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let acceptor = acceptor.clone();
        let ready = ready.clone();
        tokio::spawn(async move {
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(tls)) => {
                    let _ = ready.send((tls, peer)).await;
                }
                Ok(Err(err)) => debug!(%peer, error = %err, "TLS handshake failed"),
                Err(_) => debug!(%peer, "TLS handshake timed out"),
            }
        });
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(connection) => connection,
            // The accept loop only stops once this receiver is gone, so this cannot happen while
            // `self` exists; waiting forever is the correct way to serve nothing.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local_addr)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_rustls::TlsConnector;
    use tokio_rustls::rustls::pki_types::ServerName;
    use tokio_rustls::rustls::{ClientConfig, RootCertStore};

    use super::*;

    /// A fresh self-signed certificate and key for "localhost", as PEM.
    pub(crate) fn pem_pair() -> (String, String) {
        let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        (generated.cert.pem(), generated.signing_key.serialize_pem())
    }

    /// A client that trusts exactly `cert_pem`.
    pub(crate) fn client_trusting(cert_pem: &str) -> TlsConnector {
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(cert_pem.as_bytes()) {
            roots.add(cert.unwrap()).unwrap();
        }
        let config = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        TlsConnector::from(Arc::new(config))
    }

    /// Sends a bare HTTP/1.1 request over TLS and returns the raw response.
    pub(crate) async fn https_get(
        connector: &TlsConnector,
        addr: SocketAddr,
        path: &str,
        authorization: Option<&str>,
    ) -> io::Result<String> {
        let tcp = TcpStream::connect(addr).await?;
        let mut tls = connector
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await?;
        let auth = authorization
            .map(|value| format!("Authorization: {value}\r\n"))
            .unwrap_or_default();
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n");
        tls.write_all(request.as_bytes()).await?;
        let mut response = String::new();
        tls.read_to_string(&mut response).await?;
        Ok(response)
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn garbage_is_rejected_with_a_reason() {
        let provider = ring::default_provider();
        let (cert, key) = pem_pair();
        let (other_cert, _) = pem_pair();
        let err = parse_pem(b"", key.as_bytes(), &provider).unwrap_err();
        assert!(format!("{err:#}").contains("no certificate"), "{err:#}");
        let err = parse_pem(cert.as_bytes(), b"nope", &provider).unwrap_err();
        assert!(format!("{err:#}").contains("private key"), "{err:#}");
        let err = parse_pem(other_cert.as_bytes(), key.as_bytes(), &provider).unwrap_err();
        assert!(format!("{err:#}").contains("does not match"), "{err:#}");
        assert!(parse_pem(cert.as_bytes(), key.as_bytes(), &provider).is_ok());
    }

    #[tokio::test]
    async fn certificate_files_are_reloaded_only_when_valid_and_changed() {
        let dir = temp_dir("tls-reload");
        let (cert1, key1) = pem_pair();
        std::fs::write(dir.join(CERT_FILE), &cert1).unwrap();
        std::fs::write(dir.join(KEY_FILE), &key1).unwrap();
        let provider = Arc::new(ring::default_provider());
        let resolver = ReloadingCert::load(CertFiles::in_dir(&dir), provider, "test")
            .await
            .unwrap();
        let served = |r: &ReloadingCert| r.current.read().unwrap().2.clone();
        let first = served(&resolver);

        assert!(!resolver.reload().await.unwrap());
        assert!(Arc::ptr_eq(&first, &served(&resolver)));

        // Half-way through a rotation: new certificate, old key.
        let (cert2, key2) = pem_pair();
        std::fs::write(dir.join(CERT_FILE), &cert2).unwrap();
        assert!(resolver.reload().await.is_err());
        assert!(Arc::ptr_eq(&first, &served(&resolver)));

        std::fs::write(dir.join(KEY_FILE), &key2).unwrap();
        assert!(resolver.reload().await.unwrap());
        assert!(!Arc::ptr_eq(&first, &served(&resolver)));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn missing_files_fail_start_up_with_the_path() {
        let dir = temp_dir("tls-missing");
        let err = server_config(Some(&dir)).await.unwrap_err();
        assert!(format!("{err:#}").contains(CERT_FILE), "{err:#}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn listener_serves_the_configured_certificate() {
        let dir = temp_dir("tls-serve");
        let (cert, key) = pem_pair();
        std::fs::write(dir.join(CERT_FILE), &cert).unwrap();
        std::fs::write(dir.join(KEY_FILE), &key).unwrap();
        let config = server_config(Some(&dir)).await.unwrap();
        let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let listener = TlsListener::new(tcp, config).unwrap();
        let addr = axum::serve::Listener::local_addr(&listener).unwrap();
        let router = axum::Router::new().route("/", axum::routing::get(|| async { "hello" }));
        let server = tokio::spawn(async move { axum::serve(listener, router).await });

        // A plain-text client is turned away without disturbing the listener.
        let mut plain = TcpStream::connect(addr).await.unwrap();
        plain.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();

        let response = https_get(&client_trusting(&cert), addr, "/", None)
            .await
            .unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(response.ends_with("hello"), "{response}");

        // A client expecting another certificate refuses the handshake.
        let (other, _) = pem_pair();
        assert!(
            https_get(&client_trusting(&other), addr, "/", None)
                .await
                .is_err()
        );
        server.abort();
        std::fs::remove_dir_all(dir).unwrap();
    }
}
