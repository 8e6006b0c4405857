//! Serving a router until the process is told to stop.

use std::future::Future;

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
