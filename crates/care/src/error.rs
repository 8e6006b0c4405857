//! The crate-level error of start-up and serving (not the HTTP error body; see `http::error`).

/// Why the care service could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum CareError {
    /// The configuration is not usable.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The database could not be reached or queried.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// A migration failed.
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// `--demo` was asked for on a database that already holds other data.
    #[error("the demo data set can only be loaded into an empty database")]
    DemoNeedsEmptyDatabase,
    /// Binding or serving the socket failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

impl From<slipway_server::db::ConnectError> for CareError {
    fn from(e: slipway_server::db::ConnectError) -> Self {
        match e {
            slipway_server::db::ConnectError::UnsupportedUrl => Self::Config(e.to_string()),
            slipway_server::db::ConnectError::Database(e) => Self::Database(e),
        }
    }
}

/// Certificate files that cannot be used (`--tls-cert`, `--tls-key`) are a configuration
/// error, named by flag and file.
impl From<slipway_server::tls::TlsError> for CareError {
    fn from(e: slipway_server::tls::TlsError) -> Self {
        Self::Config(e.to_string())
    }
}
