//! A server on a thread of its own, with its own runtime: what the desktop app and the MCP
//! server embed (the platform, the care service) so that blocking callers can use it and it
//! stops when they are done. [`Background::serve`] returns once the server listens, or with
//! why it could not start; dropping the value stops the server and joins its thread.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::thread::JoinHandle;

/// Completes when the embedding program asks the server to stop.
pub type Stop = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A running background server.
#[derive(Debug)]
pub struct Background {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    /// Starts thread `name`: a runtime that runs `prepare`, binds `listen`, and serves with
    /// `run(listener, prepared, stop)` until [`Background::stop`]. Returns `http://ADDR` once
    /// the listener is bound, or the error that kept the server from starting.
    pub fn serve<S, E, P, PF, R, RF>(
        name: &str,
        listen: SocketAddr,
        prepare: P,
        run: R,
    ) -> Result<Self, String>
    where
        S: Send + 'static,
        E: std::fmt::Display + Send + 'static,
        P: FnOnce() -> PF + Send + 'static,
        PF: Future<Output = Result<S, E>>,
        R: FnOnce(tokio::net::TcpListener, S, Stop) -> RF + Send + 'static,
        RF: Future<Output = Result<(), E>>,
    {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<String, String>>();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let label = name.to_owned();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let runtime = match tokio::runtime::Runtime::new() {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(format!("cannot start a runtime: {e}")));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let state = match prepare().await {
                        Ok(state) => state,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e.to_string()));
                            return;
                        }
                    };
                    let bound = tokio::net::TcpListener::bind(listen)
                        .await
                        .and_then(|l| l.local_addr().map(|a| (l, a)));
                    let listener = match bound {
                        Ok((listener, addr)) => {
                            let _ = ready_tx.send(Ok(format!("http://{addr}")));
                            listener
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(format!("cannot listen on {listen}: {e}")));
                            return;
                        }
                    };
                    let stop: Stop = Box::pin(async move {
                        let _ = stop_rx.await;
                    });
                    if let Err(e) = run(listener, state, stop).await {
                        tracing::error!(server = %label, error = %e, "a background server stopped with an error");
                    }
                });
            })
            .map_err(|e| format!("cannot start thread {name}: {e}"))?;
        let url = ready_rx
            .recv()
            .map_err(|_| format!("thread {name} ended before its server started"))??;
        Ok(Self {
            url,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// `http://ADDR` of the listener.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops the server and joins its thread (idempotent); returns whether it was running.
    pub fn stop(&mut self) -> bool {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take() {
            Some(thread) => {
                let _ = thread.join();
                true
            }
            None => false,
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_until_stopped_and_reports_a_failed_start() {
        let mut server = Background::serve(
            "test-server",
            SocketAddr::from(([127, 0, 0, 1], 0)),
            || async { Ok::<_, String>("ok") },
            |listener, _state, stop| async move {
                tokio::select! {
                    _ = listener.accept() => {},
                    () = stop => {},
                }
                Ok::<_, String>(())
            },
        )
        .unwrap();
        let addr = server.url().trim_start_matches("http://").to_owned();
        assert!(std::net::TcpStream::connect(&addr).is_ok());
        assert!(server.stop());
        assert!(!server.stop());

        let failed = Background::serve(
            "test-failing",
            SocketAddr::from(([127, 0, 0, 1], 0)),
            || async { Err::<(), _>("the database is missing") },
            |_, (), _| async { Ok::<_, &str>(()) },
        )
        .unwrap_err();
        assert_eq!(failed, "the database is missing");
    }
}
