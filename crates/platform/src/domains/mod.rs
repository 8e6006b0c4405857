//! Custom domains (docs/domains.md): the names each app is served on besides the gateway's
//! own, their certificates and the worker that issues and renews them.
//!
//! - [`rules`]: what a new domain must satisfy (pure).
//! - [`probe`]: whether a name points here, asked before the CA is.
//! - [`worker`]: one loop that looks at each domain when it is due: probe, issue, renew,
//!   back off; it sleeps until the next due time or until a domain is added.
//! - [`Domains`] (here): the shared handle the HTTP API, the gateway and the worker use: the
//!   routes by name, the certificates by SNI, the HTTP-01 answers in flight.

pub mod probe;
pub mod rules;
pub mod worker;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use slipway_acme::{Certificates, Challenges};

use crate::config::DomainSettings;
use crate::db::Db;
use crate::error::PlatformError;
use crate::store::domains::{self as store, DomainRow};
use crate::vault::Vault;

/// Where a request for a custom domain goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// To a service of an app (its primary service when `None`).
    App {
        /// The app's name (the deployer routes by name).
        app: String,
        /// The service.
        service: Option<String>,
    },
    /// To another domain (a permanent redirect, path and query kept).
    Redirect(String),
}

/// The shared handle: cheap to clone.
#[derive(Clone, Debug)]
pub struct Domains {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    db: Db,
    vault: Vault,
    settings: DomainSettings,
    /// The names the platform serves itself (`localhost`, `--public-domain`).
    platform_domains: Vec<String>,
    routes: RwLock<HashMap<String, Route>>,
    certificates: Certificates,
    challenges: Challenges,
    resolver: probe::Resolver,
    /// The ports the custom-domain listeners are bound to (plain, TLS): the probe asks the
    /// first, URLs and redirects name them.
    ports: RwLock<(Option<u16>, Option<u16>)>,
    wake: tokio::sync::Notify,
    /// The operator's certificate (`--tls-cert`), set when serving starts.
    operator: Arc<RwLock<Option<slipway_server::tls::Tls>>>,
    /// The ACME account, opened on first need (and again after a failure to open it).
    issuer: tokio::sync::Mutex<Option<slipway_acme::Issuer>>,
    /// The certificate worker, stopped with the server (a restarted server starts its own).
    worker: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Domains {
    /// The handle; names without an issued certificate fall back to the operator's
    /// (`--tls-cert`, given to [`Domains::set_operator`] when serving starts).
    pub fn new(
        db: Db,
        vault: Vault,
        settings: DomainSettings,
        public_domain: Option<&str>,
    ) -> Result<Self, PlatformError> {
        let operator: Arc<RwLock<Option<slipway_server::tls::Tls>>> = Arc::default();
        let seen = Arc::clone(&operator);
        let fallback: slipway_acme::sni::Fallback = Arc::new(move || {
            seen.read()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .map(slipway_server::tls::Tls::cert_resolver)
        });
        let fallback = Some(fallback);
        let resolver =
            probe::Resolver::new(settings.dns_resolver).map_err(PlatformError::Config)?;
        let mut platform_domains = vec![crate::model::GATEWAY_DOMAIN.to_owned()];
        platform_domains
            .extend(public_domain.map(|d| d.trim_end_matches('.').to_ascii_lowercase()));
        Ok(Self {
            inner: Arc::new(Inner {
                db,
                vault,
                settings,
                platform_domains,
                routes: RwLock::default(),
                certificates: Certificates::new(fallback),
                challenges: Challenges::default(),
                resolver,
                ports: RwLock::new((None, None)),
                wake: tokio::sync::Notify::new(),
                operator,
                issuer: tokio::sync::Mutex::new(None),
                worker: std::sync::Mutex::new(None),
            }),
        })
    }

    /// Whether custom domains are served at all (a gateway listener for them is configured).
    pub fn enabled(&self) -> bool {
        self.inner.settings.http_listen.is_some() || self.inner.settings.https_listen.is_some()
    }

    /// The listeners' settings.
    pub fn settings(&self) -> &DomainSettings {
        &self.inner.settings
    }

    /// The names the platform serves itself, which no custom domain may be under.
    pub fn platform_domains(&self) -> Vec<&str> {
        self.inner
            .platform_domains
            .iter()
            .map(String::as_str)
            .collect()
    }

    /// The certificates by SNI, for the HTTPS listener.
    pub fn certificates(&self) -> &Certificates {
        &self.inner.certificates
    }

    /// The HTTP-01 answers in flight, for the HTTP listener.
    pub fn challenges(&self) -> &Challenges {
        &self.inner.challenges
    }

    /// Where a request for `name` (a [`host_name`]) goes, when it is a custom domain.
    pub fn route(&self, name: &str) -> Option<Route> {
        self.inner
            .routes
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    /// Whether `name` (a [`host_name`]) has a certificate served (plain HTTP then redirects
    /// to HTTPS).
    pub fn has_certificate(&self, name: &str) -> bool {
        self.inner.certificates.has(name)
    }

    /// Records the listeners' ports once bound (plain HTTP, HTTPS).
    pub fn set_ports(&self, http: Option<u16>, https: Option<u16>) {
        *self.inner.ports.write().unwrap_or_else(|e| e.into_inner()) = (http, https);
    }

    /// The plain HTTP listener's port (the probe asks it; HTTP-01 is proven there).
    pub fn http_port(&self) -> Option<u16> {
        self.inner.ports.read().unwrap_or_else(|e| e.into_inner()).0
    }

    /// The HTTPS listener's port.
    pub fn https_port(&self) -> Option<u16> {
        self.inner.ports.read().unwrap_or_else(|e| e.into_inner()).1
    }

    /// Reads every domain again: the routes, and the certificates served (a removed domain's
    /// certificate stops being served). Then wakes the worker. Called at start and after
    /// every change (a domain added or removed, an app deleted).
    pub async fn reload(&self) -> Result<(), PlatformError> {
        let mut tx = self.inner.db.begin_read().await?;
        let rows = store::all(&mut tx).await?;
        let mut routes = HashMap::new();
        let mut keys = Vec::new();
        for row in &rows {
            let route = match &row.redirect_to {
                Some(target) => Route::Redirect(target.clone()),
                None => {
                    let Some(app) = crate::store::apps::get(&mut tx, &row.app_id).await? else {
                        continue;
                    };
                    Route::App {
                        app: app.name,
                        service: row.service.clone(),
                    }
                }
            };
            routes.insert(row.name.clone(), route);
            if row.source == store::SOURCE_ACME
                && !self.inner.certificates.has(&row.name)
                && let Some(cert) = &row.cert_pem
            {
                let id = store::domain_secret_id(&row.name);
                keys.push((
                    row.name.clone(),
                    cert.clone(),
                    store::get_secret(&mut tx, &id).await?,
                    id,
                ));
            }
        }
        tx.commit().await?;
        for (name, cert, sealed, id) in keys {
            let Some(sealed) = sealed else { continue };
            match self.inner.vault.open_tls(&id, &sealed) {
                Ok(key) => {
                    let key = String::from_utf8_lossy(&key);
                    if let Err(e) = self.inner.certificates.install(&name, &cert, &key) {
                        tracing::warn!(domain = %name, error = %e, "a stored certificate cannot be served");
                    }
                }
                Err(e) => {
                    tracing::warn!(domain = %name, error = %e, "a stored certificate key cannot be opened")
                }
            }
        }
        let gone: Vec<String> = {
            let old = self.inner.routes.read().unwrap_or_else(|e| e.into_inner());
            old.keys()
                .filter(|n| !routes.contains_key(*n))
                .cloned()
                .collect()
        };
        for name in gone {
            self.inner.certificates.remove(&name);
        }
        *self.inner.routes.write().unwrap_or_else(|e| e.into_inner()) = routes;
        self.inner.wake.notify_one();
        Ok(())
    }

    /// Serves the operator's certificate for names without one of their own.
    pub fn set_operator(&self, tls: Option<slipway_server::tls::Tls>) {
        *self
            .inner
            .operator
            .write()
            .unwrap_or_else(|e| e.into_inner()) = tls;
    }

    /// The operator's certificate, when it covers `name` (then nothing is asked of a CA).
    fn operator_covering(&self, name: &str) -> Option<slipway_acme::CertInfo> {
        let cert = self
            .inner
            .operator
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|tls| tls.files().cert.clone())?;
        let pem = std::fs::read_to_string(cert).ok()?;
        let info = slipway_acme::CertInfo::from_pem(&pem).ok()?;
        info.covers(name).then_some(info)
    }

    /// The address people use for a domain.
    pub fn url(&self, row: &DomainRow) -> String {
        match self.https_port() {
            Some(port) => origin("https", &row.name, Some(port)),
            None => origin("http", &row.name, self.http_port()),
        }
    }
}

/// `scheme://name[:port]`, the port left out when it is the scheme's default (80, 443).
pub fn origin(scheme: &str, name: &str, port: Option<u16>) -> String {
    let default = if scheme == "https" { 443 } else { 80 };
    match port {
        Some(p) if p != default => format!("{scheme}://{name}:{p}"),
        _ => format!("{scheme}://{name}"),
    }
}

/// The name of a `Host` header: lowercase, without a port or a final dot.
pub fn host_name(host: &str) -> String {
    let host = host.trim();
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !name.contains(':') => {
            name
        }
        _ => host,
    };
    name.trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_names_lose_port_case_and_final_dot() {
        assert_eq!(
            super::host_name("Orders.Example.org:8443"),
            "orders.example.org"
        );
        assert_eq!(
            super::host_name("orders.example.org."),
            "orders.example.org"
        );
        assert_eq!(super::host_name("orders.example.org"), "orders.example.org");
    }

    #[test]
    fn origins_leave_out_the_default_port() {
        assert_eq!(
            super::origin("https", "a.example.org", Some(443)),
            "https://a.example.org"
        );
        assert_eq!(
            super::origin("https", "a.example.org", Some(8443)),
            "https://a.example.org:8443"
        );
        assert_eq!(
            super::origin("http", "a.example.org", Some(80)),
            "http://a.example.org"
        );
        assert_eq!(
            super::origin("http", "a.example.org", Some(443)),
            "http://a.example.org:443"
        );
        assert_eq!(
            super::origin("http", "a.example.org", None),
            "http://a.example.org"
        );
    }
}
