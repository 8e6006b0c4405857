//! What `slipway care serve` can be told: [`CareConfig`] and the documented default value
//! lists. A leaf: every layer above reads it, and it reads nothing of the crate but the
//! start-up error, so the configuration never depends on the server it configures.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::error::CareError;

/// Default contact `type` values (each at most 7 characters, the spec's limit).
pub const DEFAULT_CONTACT_TYPES: &[&str] = &[
    "home", "work", "mobile", "main", "other", "billing", "mailing",
];

/// Default `gender` values (one character each, the spec's limit).
pub const DEFAULT_GENDERS: &[&str] = &["F", "M", "O", "U"];

/// How long after its answer a request may be corrected unless configured otherwise.
pub const DEFAULT_AMEND_WINDOW: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

/// `values` as owned strings: the lists a configuration or a validator holds.
pub fn owned(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| (*v).to_owned()).collect()
}

/// Everything `slipway care serve` can set. Build it with [`CareConfig::new`] and change
/// the public fields; the defaults are the documented ones.
#[derive(Debug, Clone)]
pub struct CareConfig {
    /// Address to listen on (`--listen`), for example `127.0.0.1:8080`.
    pub listen: SocketAddr,
    /// `sqlite://…` or `postgres://…` (`--database-url`); `None` means a SQLite file
    /// `care.sqlite3` in [`CareConfig::data_dir`].
    pub database_url: Option<String>,
    /// Namespace path segment (`--namespace`), default `care`.
    pub namespace: String,
    /// Prefix both services are mounted under (`--base-path`), default empty; for example
    /// `/services/apexrest`.
    pub base_path: String,
    /// Load the demo data set into an empty database (`--demo`).
    pub demo: bool,
    /// Where the default SQLite file lives.
    pub data_dir: PathBuf,
    /// Allowed contact `type` values.
    pub contact_types: Vec<String>,
    /// Allowed `gender` values.
    pub genders: Vec<String>,
    /// Largest accepted request body in bytes.
    pub max_body_bytes: usize,
    /// Serve HTTPS with this certificate and key (`--tls-cert`, `--tls-key`), re-read on
    /// `SIGHUP` and when the files change.
    pub tls: Option<slipway_server::tls::TlsFiles>,
    /// How long after its answer the answerer (or a care admin) may correct a request
    /// (`--amend-window`, default 24 hours; zero turns amending off).
    pub amend_window: std::time::Duration,
}

impl CareConfig {
    /// A configuration with the documented defaults.
    pub fn new(listen: SocketAddr) -> Self {
        Self {
            listen,
            database_url: None,
            namespace: "care".to_owned(),
            base_path: String::new(),
            demo: false,
            data_dir: PathBuf::from("."),
            contact_types: owned(DEFAULT_CONTACT_TYPES),
            genders: owned(DEFAULT_GENDERS),
            max_body_bytes: 1024 * 1024,
            tls: None,
            amend_window: DEFAULT_AMEND_WINDOW,
        }
    }

    /// The database URL actually used: the configured one or the default SQLite file.
    pub fn effective_database_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.clone(),
            None => format!("sqlite://{}", self.data_dir.join("care.sqlite3").display()),
        }
    }

    /// Refused unless the namespace is one path segment and the base path a clean prefix:
    /// both are spliced into every route.
    pub(crate) fn validate(&self) -> Result<(), CareError> {
        let ns = &self.namespace;
        if ns.is_empty()
            || !ns
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(CareError::Config(format!(
                "namespace must be a non-empty path segment of letters, digits, '_' or '-', got {ns:?}"
            )));
        }
        let base = &self.base_path;
        if !base.is_empty()
            && (!base.starts_with('/') || base.ends_with('/') || base.contains("//"))
        {
            return Err(CareError::Config(format!(
                "base path must be empty or start with '/' and not end with '/', got {base:?}"
            )));
        }
        Ok(())
    }
}
