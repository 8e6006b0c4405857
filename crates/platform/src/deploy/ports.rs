//! The `ports` gateway mode: each public service of each app also answers on a loopback port
//! of its own, `http://127.0.0.1:<port>`, which every client resolves — Python's urllib,
//! Node, Go, curl and an AI assistant's fetch tool alike — unlike `*.localhost` names, which
//! only browsers and curl resolve on a stock Debian or macOS. The port is kept per app and
//! service (`service_port`), so a URL stays the same across deployments and restarts.
//!
//! Forwarding is plain TCP to the service's current instance (so WebSockets and streaming
//! pass through unchanged); a connection that arrives while nothing runs gets a 502 answer.

use tokio::io::AsyncWriteExt as _;
use tokio::net::{TcpListener, TcpStream};

use super::*;

pub use crate::config::UrlScheme;

/// One loopback listener.
#[derive(Debug)]
pub(super) struct Forward {
    pub(super) port: u16,
    stop: CancellationToken,
}

/// The answer to a connection that arrives while the service has no running instance.
const NOTHING_RUNS: &[u8] = b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 48\r\nconnection: close\r\n\r\nthe app has no running instance of this service\n";

/// The URLs an app's public services answer on, as a build upload's answer names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct AppUrls {
    /// The app's URL: in the `ports` mode its first public service's (in devfile order, the
    /// service a deployment names as the app's), else its gateway host; null when it has none.
    pub app_url: Option<String>,
    /// Each public service's URL, by service name (services without a public endpoint have
    /// none and are not listed).
    pub service_urls: BTreeMap<String, String>,
}

impl Deployer {
    /// The URLs of the public ones among `services` (the app's devfile services, in devfile
    /// order) of app `app_id` named `app_name`. In the `ports` mode each public service's
    /// loopback port is bound now (answering 502 until something runs) and recorded, so a
    /// build upload can answer the URLs before any deployment exists: every later deployment,
    /// restart and rollback serves on the same port. A port that cannot be bound is left out
    /// (and logged): the upload it answers was accepted all the same.
    pub async fn public_urls(
        &self,
        app_id: &str,
        app_name: &str,
        services: &[ServiceSpec],
    ) -> AppUrls {
        let public: Vec<&str> = services
            .iter()
            .filter(|s| s.is_public())
            .map(|s| s.name.as_str())
            .collect();
        let ports = self.forward_ports(app_id, app_name, &public).await;
        let service_urls: BTreeMap<String, String> = public
            .iter()
            .filter_map(|s| {
                Some((
                    (*s).to_owned(),
                    self.service_url(app_name, Some(s), &ports)?,
                ))
            })
            .collect();
        let app_url = match self.url_scheme() {
            UrlScheme::LoopbackPorts => public.first().and_then(|s| service_urls.get(*s).cloned()),
            _ => self.service_url(app_name, None, &ports),
        };
        AppUrls {
            app_url,
            service_urls,
        }
    }

    /// In the `ports` mode, the loopback port of each of `services`, its forward ensured now;
    /// empty in the other modes (their URLs need no port of their own).
    async fn forward_ports(
        &self,
        app_id: &str,
        app_name: &str,
        services: &[&str],
    ) -> BTreeMap<String, u16> {
        let mut ports = BTreeMap::new();
        if *self.url_scheme() != UrlScheme::LoopbackPorts {
            return ports;
        }
        for service in services {
            match self.ensure_forward(app_id, app_name, service).await {
                Ok(port) => {
                    ports.insert((*service).to_owned(), port);
                }
                Err(e) => {
                    tracing::warn!(app_id, service, error = %e, "no loopback port for the service");
                }
            }
        }
        ports
    }

    /// Makes sure `service` of app `app_id` answers on its loopback port: the recorded one
    /// when it can still be bound, else a new one (recorded). Returns the port.
    ///
    /// Callers are serialised: a build upload's answer and a deployment may ask for the same
    /// service at once, and both must get the one port that is recorded.
    pub(super) async fn ensure_forward(
        &self,
        app_id: &str,
        app_name: &str,
        service: &str,
    ) -> Result<u16, String> {
        let _one_at_a_time = self.inner.forwarding.lock().await;
        let key = (app_id.to_owned(), service.to_owned());
        if let Some(port) = self.forward_port(&key) {
            return Ok(port);
        }
        let recorded = self.recorded_port(app_id, service).await?;
        let listener = bind_loopback(recorded, app_id, service).await?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        if recorded != Some(port) {
            self.record_port(app_id, service, port).await?;
        }
        let stop = self.inner.shutdown.child_token();
        let this = self.clone();
        let (app, svc, token) = (app_name.to_owned(), service.to_owned(), stop.clone());
        self.inner
            .tracker
            .spawn(async move { this.serve_forward(listener, app, svc, token).await });
        if let Ok(mut forwards) = self.inner.forwards.lock() {
            forwards.insert(key, Forward { port, stop });
        }
        tracing::info!(
            app_id,
            service,
            port,
            "service answers on its loopback port"
        );
        Ok(port)
    }

    /// The port of the listener this process already runs for `key`, if any.
    fn forward_port(&self, key: &(String, String)) -> Option<u16> {
        self.inner
            .forwards
            .lock()
            .ok()
            .and_then(|f| f.get(key).map(|f| f.port))
    }

    /// The port `service_port` records for the service, if any.
    async fn recorded_port(&self, app_id: &str, service: &str) -> Result<Option<u16>, String> {
        async {
            let mut tx = self.inner.db.begin_read().await?;
            let ports = service_ports::of_app(&mut tx, app_id).await?;
            tx.commit().await?;
            Ok::<_, sqlx::Error>(ports.get(service).copied())
        }
        .await
        .map_err(|e| format!("cannot read the service ports: {e}"))
    }

    /// Records `port` as the service's, for every later start.
    async fn record_port(&self, app_id: &str, service: &str, port: u16) -> Result<(), String> {
        async {
            let mut tx = self.inner.db.begin_write().await?;
            service_ports::set(&mut tx, app_id, service, port).await?;
            tx.commit().await
        }
        .await
        .map_err(|e| format!("cannot record the service's port: {e}"))
    }

    async fn serve_forward(
        &self,
        listener: TcpListener,
        app_name: String,
        service: String,
        stop: CancellationToken,
    ) {
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = stop.cancelled() => return,
            };
            let Ok((mut client, _)) = accepted else {
                continue;
            };
            let target = self.route(&app_name, Some(&service));
            let stop = stop.clone();
            tokio::spawn(async move {
                let Some(port) = target else {
                    let _ = client.write_all(NOTHING_RUNS).await;
                    return;
                };
                let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", port)).await else {
                    let _ = client.write_all(NOTHING_RUNS).await;
                    return;
                };
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut client, &mut upstream) => {}
                    () = stop.cancelled() => {}
                }
            });
        }
    }

    /// Closes every loopback listener of a deleted app.
    pub(super) fn close_forwards(&self, app_id: &str) {
        if let Ok(mut forwards) = self.inner.forwards.lock() {
            forwards.retain(|(app, _), forward| {
                let keep = app != app_id;
                if !keep {
                    forward.stop.cancel();
                }
                keep
            });
        }
    }

    /// How apps' URLs look here.
    pub fn url_scheme(&self) -> &UrlScheme {
        &self.inner.urls
    }

    /// The URL of `service` of app `app_name` (`None`: the app's primary service, named by
    /// `primary`), given the app's recorded loopback ports; `None` when it has none (no
    /// gateway, or not public).
    pub fn service_url(
        &self,
        app_name: &str,
        service: Option<&str>,
        ports: &BTreeMap<String, u16>,
    ) -> Option<String> {
        match &self.inner.urls {
            UrlScheme::LoopbackPorts => {
                let port = ports.get(service?)?;
                Some(format!("http://127.0.0.1:{port}"))
            }
            UrlScheme::LocalHosts { https } => self
                .inner
                .gateway_port
                .map(|port| gateway_url(*https, port, app_name, service)),
            UrlScheme::Domain(domain) => Some(match service {
                Some(s) => format!("https://{s}.{app_name}.{domain}"),
                None => format!("https://{app_name}.{domain}"),
            }),
        }
    }
}

/// A loopback listener on the `recorded` port when it can still be bound, else on any free
/// one (the service's URL changes then, which is logged).
async fn bind_loopback(
    recorded: Option<u16>,
    app_id: &str,
    service: &str,
) -> Result<TcpListener, String> {
    let Some(port) = recorded else {
        return bind_any().await;
    };
    match TcpListener::bind(("127.0.0.1", port)).await {
        Ok(listener) => Ok(listener),
        Err(e) => {
            tracing::warn!(app_id, service, port, error = %e, "the service's port is taken; choosing another");
            bind_any().await
        }
    }
}

async fn bind_any() -> Result<TcpListener, String> {
    TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| format!("cannot bind a loopback port: {e}"))
}
