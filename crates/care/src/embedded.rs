//! An in-process care service for the desktop app: the same server as `slipway care serve
//! --demo` (SQLite, the demo data set), on its own thread and runtime so blocking callers can
//! use it, on a free loopback port. [`Lazy`] starts it on first use; [`Lazy::shutdown`] (or
//! dropping it) stops it. Its data lives under [`default_data_dir`], so what the user entered
//! survives restarts.

use std::path::{Path, PathBuf};

use slipway_server::first_use::{FirstUse, Started};

use crate::config::CareConfig;
use crate::error::CareError;

/// The demo tokens the embedded service knows (see the crate README's demo data set).
pub mod tokens {
    /// Admin (the admin API).
    pub const ADMIN: &str = crate::demo::ADMIN_TOKEN;
    /// Care staff with full access.
    pub const STAFF: &str = crate::demo::STAFF_TOKEN;
    /// Care staff without access to `Account.dateOfBirth`.
    pub const RESTRICTED: &str = crate::demo::RESTRICTED_TOKEN;
}

/// The demo's active missing-information request.
pub const DEMO_ACTIVE_REQUEST: &str = crate::demo::ACTIVE_REQUEST;

/// Where the embedded service keeps its data: `$XDG_DATA_HOME/slipway/embedded-care` (else
/// `~/.local/share/slipway/embedded-care`), apart from `slipway care serve`'s directories.
pub fn default_data_dir() -> PathBuf {
    slipway_server::file::user_data_dir().join("embedded-care")
}

/// A running embedded care service; dropping it stops the server.
#[derive(Debug)]
pub struct Embedded {
    server: slipway_server::background::Background,
    namespace: String,
}

impl Embedded {
    /// Starts the service with the demo data on `data_dir` and returns once it listens.
    pub fn start(data_dir: &Path) -> Result<Self, CareError> {
        let mut config = CareConfig::new(([127, 0, 0, 1], 0).into());
        config.data_dir = data_dir.to_path_buf();
        config.demo = true;
        let namespace = config.namespace.clone();
        let listen = config.listen;
        let server = slipway_server::background::Background::serve(
            "embedded-care",
            listen,
            move || async move { crate::prepare(&config).await },
            crate::spawn,
        )
        .map_err(|e| CareError::Config(format!("the embedded care service: {e}")))?;
        tracing::info!(url = %server.url(), "embedded care service started");
        Ok(Self { server, namespace })
    }

    /// The base URL (`http://127.0.0.1:PORT`); the services are under `/{namespace}`.
    pub fn url(&self) -> &str {
        self.server.url()
    }

    /// The namespace path segment of the services.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Stops the server and waits for it.
    pub fn stop(&mut self) {
        self.server.stop();
    }
}

/// An embedded care service started on first use, then shared.
#[derive(Debug)]
pub struct Lazy(FirstUse<Embedded>);

impl Lazy {
    /// Nothing runs until [`Lazy::endpoint`] is first called.
    pub fn new(data_dir: PathBuf) -> Self {
        Self(FirstUse::new("the embedded care service", data_dir))
    }

    /// Where its data lives.
    pub fn data_dir(&self) -> &Path {
        self.0.data_dir()
    }

    /// `(base URL, namespace)` of the service, starting it on the first call.
    pub fn endpoint(&self) -> Result<(String, String), String> {
        self.0.get_or_start(
            |data_dir| {
                let started = Embedded::start(data_dir).map_err(|e| {
                    format!(
                        "the embedded care service could not start on {}: {e}",
                        data_dir.display()
                    )
                })?;
                Ok(Started::Here(started))
            },
            |e| (e.url().to_owned(), e.namespace().to_owned()),
        )
    }

    /// Stops the service if it was started (dropping the `Lazy` does too: the service's
    /// background server stops when it drops).
    pub fn shutdown(&self) {
        drop(self.0.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_on_first_use_with_the_demo_data_and_stops() {
        let dir = tempfile::tempdir().unwrap();
        let lazy = Lazy::new(dir.path().to_path_buf());
        let (url, ns) = lazy.endpoint().expect("the embedded care service starts");
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        assert_eq!(ns, "care");
        assert_eq!(lazy.endpoint().unwrap().0, url);
        let addr: std::net::SocketAddr = url.trim_start_matches("http://").parse().unwrap();
        assert!(std::net::TcpStream::connect(addr).is_ok());
        lazy.shutdown();
        assert!(std::net::TcpStream::connect(addr).is_err());
        // A restart on the same data keeps the demo data (and does not fail on it).
        let again = Lazy::new(dir.path().to_path_buf());
        assert!(again.endpoint().is_ok());
    }
}
