//! The toolkit's platform tools against a real platform server (SQLite, in-process, loopback).

mod apps;
mod build;
mod vault;

use slipway_platform_client::Endpoint;

/// A platform server on its own thread and runtime (the toolkit's client is blocking).
pub struct Platform {
    /// Where the server listens, with the bootstrap owner's token.
    pub endpoint: Endpoint,
    _dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Platform {
    /// Starts a server on a fresh data directory and waits until it listens.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().to_path_buf();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async move {
                let mut config =
                    slipway_platform::PlatformConfig::new("127.0.0.1:0".parse().unwrap(), data_dir);
                config.gateway_listen = None;
                // Custom domains are served (plain HTTP only), so the domain tools run.
                config.domains.http_listen = Some("127.0.0.1:0".parse().unwrap());
                config.builder = slipway_platform::BuilderKind::Native;
                let state = slipway_platform::prepare(&config).await.unwrap();
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                slipway_platform::spawn(listener, state, async {
                    let _ = stop_rx.await;
                })
                .await
                .unwrap();
            });
        });
        let addr = addr_rx.recv().unwrap();
        let token = std::fs::read_to_string(dir.path().join("bootstrap-token")).unwrap();
        Platform {
            endpoint: Endpoint::new(format!("http://{addr}"), token.trim()),
            _dir: dir,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }
}

impl Platform {
    /// `slipway platform user add` on this server's data directory: a new account member.
    pub fn add_user(&self, email: &str) -> slipway_platform::NewUser {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(slipway_platform::add_user(
            self._dir.path(),
            None,
            email,
            "Member",
        ))
        .unwrap()
    }
}

impl Drop for Platform {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
