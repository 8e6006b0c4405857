//! Serving a router until the process is told to stop: the start-up order both servers keep
//! ([`run`]: certificates, state, socket, serve), the signals that stop a server
//! ([`shutdown_signal`]), the moment its live streams end ([`ShuttingDown`]), and serving plain
//! HTTP or HTTPS until then.

use std::future::Future;
use std::sync::Arc;

use tokio::sync::watch;

/// Set once, when a server begins to shut down: what its live streams (server-sent events)
/// end on, and what its listeners stop on. A graceful shutdown waits for every open
/// connection, and a live stream never ends by itself, so a server with a listener connected
/// would otherwise never stop. Cheap to clone; every clone sees the same moment.
#[derive(Clone, Debug)]
pub struct ShuttingDown(Arc<watch::Sender<bool>>);

impl Default for ShuttingDown {
    fn default() -> Self {
        Self(Arc::new(watch::Sender::new(false)))
    }
}

impl ShuttingDown {
    /// Begins the shutdown: every stream ends, now and from now on.
    pub fn begin(&self) {
        self.0.send_replace(true);
    }

    /// Whether the shutdown has begun.
    pub fn has_begun(&self) -> bool {
        *self.0.borrow()
    }

    /// Completes once the shutdown has begun (at once if it has). It owns what it waits on,
    /// so it can be handed to a server as its shutdown or raced in a `select!` loop.
    pub fn begun(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut begun = self.0.subscribe();
        async move {
            // An error means every sender is gone: nothing is left to wait for.
            let _ = begun.wait_for(|b| *b).await;
        }
    }

    /// `signal` (such as [`shutdown_signal`]), then the shutdown begun: what a server that
    /// serves live streams serves until, so its graceful shutdown does not wait on them.
    pub fn after(
        &self,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> impl Future<Output = ()> + Send + 'static {
        let this = self.clone();
        async move {
            signal.await;
            this.begin();
        }
    }
}

/// Completes on Ctrl-C or (on Unix) SIGTERM, whichever comes first, and logs that the server
/// is shutting down.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down");
}

/// Serves `router` on an already bound listener until `shutdown` completes; requests in
/// flight finish first.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

/// Serves `router` over HTTPS on an already bound listener until `shutdown` completes,
/// with the certificate `tls` holds at each handshake (see [`crate::tls`]).
#[cfg(feature = "tls")]
pub async fn serve_tls(
    listener: tokio::net::TcpListener,
    tls: crate::tls::Tls,
    router: axum::Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = crate::tls::TlsListener::new(listener, tls)?;
    // Handlers that write absolute URLs (the platform's presigned log links) ask for it.
    let router = router.layer(axum::Extension(crate::tls::OverTls));
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

/// Serves plain HTTP, or HTTPS when `tls` is given: the one call both servers make.
#[cfg(feature = "tls")]
pub async fn serve_maybe_tls(
    listener: tokio::net::TcpListener,
    tls: Option<crate::tls::Tls>,
    router: axum::Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    match tls {
        Some(tls) => serve_tls(listener, tls, router, shutdown).await,
        None => serve(listener, router, shutdown).await,
    }
}

/// A server once it listens: what [`run`] hands the service to serve.
#[cfg(feature = "tls")]
#[derive(Debug)]
pub struct Listening<S> {
    /// What the service prepared (its database and state).
    pub state: S,
    /// The bound socket.
    pub listener: tokio::net::TcpListener,
    /// Where it listens (with the port the system chose for port 0).
    pub local: std::net::SocketAddr,
    /// The certificate to serve HTTPS with, watched until [`run`] returns; `None` for plain
    /// HTTP.
    pub tls: Option<crate::tls::Tls>,
}

/// `slipway care serve` and `slipway platform serve`, in the one order both keep: the
/// certificate files are read and watched first, so a wrong `--tls-cert` stops the start
/// before any state is touched; then `prepare` (the database, its migrations, the service's
/// own state); then `listen` is bound; then `serve` runs, and the certificates are reloaded on
/// `SIGHUP` and file changes until it returns.
///
/// # Errors
///
/// What `prepare` or `serve` returns; certificate files that cannot be used (a
/// [`crate::tls::TlsError`]) or a socket that cannot be bound (an I/O error), each in the
/// service's own error through its `From`.
#[cfg(feature = "tls")]
pub async fn run<S, E, F>(
    listen: std::net::SocketAddr,
    tls: Option<crate::tls::TlsFiles>,
    prepare: impl Future<Output = Result<S, E>>,
    serve: impl FnOnce(Listening<S>) -> F,
) -> Result<(), E>
where
    E: From<crate::tls::TlsError> + From<std::io::Error>,
    F: Future<Output = Result<(), E>>,
{
    let tls = tls.map(crate::tls::Tls::load).transpose()?;
    let _watching = tls.as_ref().map(crate::tls::Tls::watch).transpose()?;
    let state = prepare.await?;
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let local = listener.local_addr()?;
    serve(Listening {
        state,
        listener,
        local,
        tls,
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streams end once the signal comes, not before; a clone sees the same moment, and
    /// one that asks after the moment is not kept waiting.
    #[tokio::test]
    async fn the_shutdown_begins_after_the_signal() {
        let down = ShuttingDown::default();
        let begun = down.clone().begun();
        let (signal, signalled) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(down.after(async {
            let _ = signalled.await;
        }));
        tokio::task::yield_now().await;
        assert!(!down.has_begun());
        signal.send(()).unwrap();
        serving.await.unwrap();
        assert!(down.has_begun());
        begun.await;
        down.begun().await;
    }

    #[cfg(feature = "tls")]
    #[derive(Debug)]
    enum Refused {
        Tls,
        Io,
    }

    #[cfg(feature = "tls")]
    impl From<crate::tls::TlsError> for Refused {
        fn from(_: crate::tls::TlsError) -> Self {
            Self::Tls
        }
    }

    #[cfg(feature = "tls")]
    impl From<std::io::Error> for Refused {
        fn from(_: std::io::Error) -> Self {
            Self::Io
        }
    }

    /// A certificate that cannot be read stops the start before the service prepares
    /// anything (its database is not even opened).
    #[cfg(feature = "tls")]
    #[tokio::test]
    async fn unusable_certificates_stop_the_start_before_the_state() {
        let dir = tempfile::tempdir().unwrap();
        let files = crate::tls::TlsFiles {
            cert: dir.path().join("missing-cert.pem"),
            key: dir.path().join("missing-key.pem"),
        };
        let prepared = std::sync::atomic::AtomicBool::new(false);
        let started = run(
            "127.0.0.1:0".parse().unwrap(),
            Some(files),
            async {
                prepared.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok::<_, Refused>(())
            },
            |_| async { Ok(()) },
        )
        .await;
        assert!(matches!(started, Err(Refused::Tls)), "{started:?}");
        assert!(!prepared.load(std::sync::atomic::Ordering::SeqCst));
    }

    /// Without certificates the service serves plain HTTP with what it prepared, on the port
    /// the system chose.
    #[cfg(feature = "tls")]
    #[tokio::test]
    async fn the_service_serves_its_prepared_state_on_the_bound_socket() {
        let served = run(
            "127.0.0.1:0".parse().unwrap(),
            None,
            async { Ok::<_, Refused>("state") },
            |on| async move {
                assert_eq!(on.state, "state");
                assert!(on.tls.is_none());
                assert_ne!(on.local.port(), 0);
                assert_eq!(on.listener.local_addr()?, on.local);
                Ok(())
            },
        )
        .await;
        assert!(served.is_ok(), "{served:?}");
    }
}
