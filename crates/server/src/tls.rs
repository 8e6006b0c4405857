//! HTTPS for both servers (`--tls-cert FILE --tls-key FILE`), with certificates that can be
//! replaced while the server runs.
//!
//! Why it looks like this:
//! - The servers keep serving through `axum::serve` (one code path for plain and TLS, the
//!   same graceful shutdown): [`TlsListener`] is an [`axum::serve::Listener`] whose
//!   connections are already through their handshake. Handshakes run in tasks of their own,
//!   so a client that opens a socket and says nothing holds up nobody but itself.
//! - Each handshake takes the configuration current at that moment; a connection keeps the
//!   one it was made with. Swapping the configuration ([`Tls::reload`]) therefore changes the
//!   certificate of new connections and drops none.
//! - [`Tls::watch`] reloads on `SIGHUP` and when the files change (a certificate renewal by
//!   certbot or cert-manager replaces them by rename, so their directories are watched).
//!   A reload that fails (a key written before its certificate, a half-copied file) keeps the
//!   certificate in use and says why in the log; the next change tries again.
//! - The crypto provider is named (ring) rather than taken from the process default, which
//!   is ambiguous, and panics, when two crates enable different providers.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sha2::Digest as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a client may take over its handshake before its connection is closed.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Handshaken connections waiting for the server to take them.
const ACCEPT_QUEUE: usize = 256;
/// Handshakes in progress at once; past it, accepting waits (sockets that connect and say
/// nothing cannot pile up tasks and file descriptors without bound).
const MAX_HANDSHAKES: usize = 1024;
/// File events closer together than this are one change (a renewal writes two files).
const DEBOUNCE: Duration = Duration::from_millis(300);

/// Why a certificate or key could not be used. Each names the flag and the file.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The file cannot be read.
    #[error("{flag} {}: {source}", path.display())]
    Read {
        /// `--tls-cert` or `--tls-key`.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// What reading it said.
        source: std::io::Error,
    },
    /// The file holds no PEM item of the kind the flag needs.
    #[error("{flag} {}: {what}", path.display())]
    Content {
        /// `--tls-cert` or `--tls-key`.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
    /// rustls refused the pair (for example a key that does not belong to the certificate).
    #[error("--tls-cert {} and --tls-key {}: {message}", cert.display(), key.display())]
    Pair {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// What rustls said.
        message: String,
    },
    /// The file watcher could not be started.
    #[error("watching the certificate files: {0}")]
    Watch(String),
}

/// The certificate chain and private key files, both PEM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, leaf first (`--tls-cert`).
    pub cert: PathBuf,
    /// The private key: PKCS#8, PKCS#1 or SEC1 (`--tls-key`).
    pub key: PathBuf,
}

/// A request extension every request served by [`crate::serve::serve_tls`] carries: a
/// handler that writes an absolute URL of this server takes `https` from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverTls;

/// A server's TLS configuration, shared by its listeners, replaceable while they run.
#[derive(Clone)]
pub struct Tls {
    files: Arc<TlsFiles>,
    current: Arc<RwLock<Loaded>>,
}

/// The configuration in use and a digest of the bytes it was made from.
struct Loaded {
    config: Arc<ServerConfig>,
    digest: [u8; 32],
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("files", &self.files).finish()
    }
}

impl Tls {
    /// Reads and checks the files; an error names the flag, the file and the rule.
    pub fn load(files: TlsFiles) -> Result<Self, TlsError> {
        let loaded = server_config(&files)?;
        Ok(Self {
            files: Arc::new(files),
            current: Arc::new(RwLock::new(loaded)),
        })
    }

    /// The files this configuration is read from.
    pub fn files(&self) -> &TlsFiles {
        &self.files
    }

    /// Reads the files again; new connections use the new certificate, connections already
    /// open keep theirs. On an error the certificate in use stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        let loaded = server_config(&self.files)?;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = loaded;
        Ok(())
    }

    /// [`Tls::reload`] when the files' bytes differ from those in use; `Ok(false)` when they
    /// are the same (an unrelated file of the directory changed).
    pub fn reload_if_changed(&self) -> Result<bool, TlsError> {
        let loaded = server_config(&self.files)?;
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        if current.digest == loaded.digest {
            return Ok(false);
        }
        *current = loaded;
        Ok(true)
    }

    /// The certificate resolver of the configuration in use now (a gateway that serves other
    /// certificates by name falls back to the operator's through it).
    pub fn cert_resolver(&self) -> Arc<dyn rustls::server::ResolvesServerCert> {
        Arc::clone(
            &self
                .current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .config
                .cert_resolver,
        )
    }

    fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(Arc::clone(
            &self
                .current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .config,
        ))
    }

    /// Reloads on `SIGHUP` and whenever the certificate or key file changes, for as long as
    /// the returned guard lives. Must be called inside a Tokio runtime.
    pub fn watch(&self) -> Result<WatchGuard, TlsError> {
        use notify_debouncer_full::notify::RecursiveMode;

        let (tx, mut rx) = mpsc::unbounded_channel::<Reason>();
        let watched: Vec<PathBuf> = [&self.files.cert, &self.files.key]
            .into_iter()
            .map(|p| absolute(p))
            .collect();
        let file_tx = tx.clone();
        // Any change in the directories, not only events naming the files: a Kubernetes
        // secret volume swaps a `..data` link and no event names `tls.crt`. Whether the
        // files changed is decided by their bytes (`reload_if_changed`).
        let mut debouncer = notify_debouncer_full::new_debouncer(
            DEBOUNCE,
            None,
            move |result: notify_debouncer_full::DebounceEventResult| {
                if matches!(result, Ok(events) if !events.is_empty()) {
                    let _ = file_tx.send(Reason::FilesChanged);
                }
            },
        )
        .map_err(|e| TlsError::Watch(e.to_string()))?;
        let mut dirs: Vec<PathBuf> = watched
            .iter()
            .map(|p| p.parent().unwrap_or(Path::new("/")).to_path_buf())
            .collect();
        dirs.dedup();
        for dir in &dirs {
            debouncer
                .watch(dir, RecursiveMode::NonRecursive)
                .map_err(|e| TlsError::Watch(format!("{}: {e}", dir.display())))?;
        }
        #[cfg(unix)]
        let hangups = {
            let tx = tx.clone();
            let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
                .map_err(|e| TlsError::Watch(format!("SIGHUP: {e}")))?;
            tokio::spawn(async move {
                while hangup.recv().await.is_some() {
                    if tx.send(Reason::Hangup).is_err() {
                        break;
                    }
                }
            })
        };
        drop(tx);
        let tls = self.clone();
        let reloads = tokio::spawn(async move {
            while let Some(why) = rx.recv().await {
                let outcome = match why {
                    Reason::Hangup => tls.reload().map(|()| true),
                    Reason::FilesChanged => tls.reload_if_changed(),
                };
                let reason = why.as_str();
                match outcome {
                    Ok(true) => tracing::info!(reason, "TLS certificate reloaded"),
                    Ok(false) => {}
                    Err(e) => tracing::warn!(
                        reason,
                        error = %e,
                        "TLS certificate not reloaded; the one in use stays"
                    ),
                }
            }
        });
        Ok(WatchGuard {
            _debouncer: Box::new(debouncer),
            tasks: vec![
                reloads,
                #[cfg(unix)]
                hangups,
            ],
        })
    }
}

/// Why the files are read again.
#[derive(Debug, Clone, Copy)]
enum Reason {
    /// `SIGHUP`: read them whatever they hold.
    Hangup,
    /// Something changed in their directories: read them, swap only if their bytes differ.
    FilesChanged,
}

impl Reason {
    fn as_str(self) -> &'static str {
        match self {
            Self::Hangup => "SIGHUP",
            Self::FilesChanged => "the certificate files changed",
        }
    }
}

/// Keeps [`Tls::watch`] going; dropping it stops the watching.
pub struct WatchGuard {
    _debouncer: Box<dyn std::any::Any + Send>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl std::fmt::Debug for WatchGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WatchGuard")
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

fn read(flag: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        flag,
        path: path.to_path_buf(),
        source,
    })
}

fn server_config(files: &TlsFiles) -> Result<Loaded, TlsError> {
    let cert_pem = read("--tls-cert", &files.cert)?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::Content {
            flag: "--tls-cert",
            path: files.cert.clone(),
            what: format!("not a PEM certificate chain ({e})"),
        })?;
    if chain.is_empty() {
        return Err(TlsError::Content {
            flag: "--tls-cert",
            path: files.cert.clone(),
            what: "holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into(),
        });
    }
    let key_pem = read("--tls-key", &files.key)?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| TlsError::Content {
        flag: "--tls-key",
        path: files.key.clone(),
        what: format!("holds no PEM private key (PKCS#8, PKCS#1 or SEC1): {e}"),
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let pair_error = |message: String| TlsError::Pair {
        cert: files.cert.clone(),
        key: files.key.clone(),
        message,
    };
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| pair_error(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| pair_error(e.to_string()))?;
    // Both servers speak HTTP/1.1 only (axum's http1 feature).
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let digest = sha2::Sha256::new()
        .chain_update(&cert_pem)
        .chain_update([0])
        .chain_update(&key_pem)
        .finalize()
        .into();
    Ok(Loaded {
        config: Arc::new(config),
        digest,
    })
}

/// Where a listener's handshakes take their configuration.
enum Source {
    /// The one current when the handshake starts.
    Reloadable(Tls),
    /// Always this one.
    Fixed(TlsAcceptor),
}

/// A TCP listener whose connections come out through their TLS handshake.
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    accepting: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    /// Starts accepting on `tcp`; handshakes run concurrently, each with the configuration
    /// current when it starts. Must be called inside a Tokio runtime.
    pub fn new(tcp: TcpListener, tls: Tls) -> std::io::Result<Self> {
        Self::accepting(tcp, Source::Reloadable(tls))
    }

    /// [`TlsListener::new`] with one configuration for its whole life (one whose certificate
    /// resolver changes what it serves, such as the gateway's certificates by name).
    pub fn with_config(tcp: TcpListener, config: Arc<ServerConfig>) -> std::io::Result<Self> {
        Self::accepting(tcp, Source::Fixed(TlsAcceptor::from(config)))
    }

    fn accepting(tcp: TcpListener, tls: Source) -> std::io::Result<Self> {
        let local = tcp.local_addr()?;
        let (tx, ready) = mpsc::channel(ACCEPT_QUEUE);
        let handshakes = Arc::new(tokio::sync::Semaphore::new(MAX_HANDSHAKES));
        let accepting = tokio::spawn(async move {
            loop {
                let Ok(permit) = Arc::clone(&handshakes).acquire_owned().await else {
                    break;
                };
                let accepted = tokio::select! {
                    () = tx.closed() => break,
                    accepted = tcp.accept() => accepted,
                };
                let (socket, peer) = match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        // Out of file descriptors and the like: wait rather than spin.
                        tracing::warn!(error = %e, "accepting a connection failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let acceptor = match &tls {
                    Source::Reloadable(tls) => tls.acceptor(),
                    Source::Fixed(acceptor) => acceptor.clone(),
                };
                let tx = tx.clone();
                tokio::spawn(async move {
                    let handshake =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(socket)).await;
                    drop(permit);
                    match handshake {
                        Ok(Ok(stream)) => {
                            let _ = tx.send((stream, peer)).await;
                        }
                        // A client that does not trust the certificate, speaks plain HTTP or
                        // goes silent: its problem, logged for whoever debugs it.
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(Self {
            ready,
            local,
            accepting,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(connection) => connection,
            // The accept task only ends when this listener is dropped.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(dir: &Path, name: &str) -> TlsFiles {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let files = TlsFiles {
            cert: dir.join(format!("{name}.crt")),
            key: dir.join(format!("{name}.key")),
        };
        std::fs::write(&files.cert, cert.pem()).unwrap();
        std::fs::write(&files.key, key.serialize_pem()).unwrap();
        files
    }

    #[test]
    fn a_good_pair_loads() {
        let dir = tempfile::tempdir().unwrap();
        let files = pair(dir.path(), "a");
        let tls = Tls::load(files.clone()).unwrap();
        assert_eq!(tls.files(), &files);
        tls.reload().unwrap();
    }

    #[test]
    fn errors_name_the_flag_and_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let good = pair(dir.path(), "a");
        let missing = TlsFiles {
            cert: dir.path().join("nope.crt"),
            key: good.key.clone(),
        };
        let e = Tls::load(missing).unwrap_err().to_string();
        assert!(
            e.starts_with("--tls-cert ") && e.contains("nope.crt"),
            "{e}"
        );

        std::fs::write(dir.path().join("empty.key"), "not a key\n").unwrap();
        let no_key = TlsFiles {
            cert: good.cert.clone(),
            key: dir.path().join("empty.key"),
        };
        let e = Tls::load(no_key).unwrap_err().to_string();
        assert!(
            e.starts_with("--tls-key ") && e.contains("no PEM private key"),
            "{e}"
        );

        let no_cert = TlsFiles {
            cert: good.key.clone(),
            key: good.key.clone(),
        };
        let e = Tls::load(no_cert).unwrap_err().to_string();
        assert!(e.contains("no PEM certificate"), "{e}");
    }

    #[test]
    fn a_key_of_another_certificate_is_refused_and_the_old_one_stays() {
        let dir = tempfile::tempdir().unwrap();
        let a = pair(dir.path(), "a");
        let b = pair(dir.path(), "b");
        let mixed = TlsFiles {
            cert: a.cert.clone(),
            key: b.key.clone(),
        };
        let e = Tls::load(mixed).unwrap_err().to_string();
        assert!(e.contains("--tls-cert") && e.contains("--tls-key"), "{e}");

        let tls = Tls::load(a.clone()).unwrap();
        let before = Arc::as_ptr(&tls.current.read().unwrap().config);
        assert!(
            !tls.reload_if_changed().unwrap(),
            "the same bytes are no change"
        );
        assert_eq!(before, Arc::as_ptr(&tls.current.read().unwrap().config));
        std::fs::copy(&b.key, &a.key).unwrap();
        assert!(tls.reload().is_err());
        assert!(tls.reload_if_changed().is_err());
        assert_eq!(before, Arc::as_ptr(&tls.current.read().unwrap().config));
        std::fs::copy(&b.cert, &a.cert).unwrap();
        assert!(tls.reload_if_changed().unwrap(), "a new pair is loaded");
        assert_ne!(before, Arc::as_ptr(&tls.current.read().unwrap().config));
    }
}
