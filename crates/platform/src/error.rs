//! `PlatformError`: why the server could not start, or why an administrative call such as
//! `add_user` failed. HTTP errors have their own type in `http::error`.

/// Why starting the platform or an administrative call failed.
#[derive(Debug, thiserror::Error)]
pub enum PlatformError {
    /// The configuration is not usable.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An argument of an administrative call breaks a rule; `field` names the argument.
    #[error("invalid {field}: {message}")]
    InvalidInput {
        /// The argument (for example `email`).
        field: &'static str,
        /// The rule that was broken.
        message: String,
    },
    /// The e-mail address already belongs to a user.
    #[error("a user with e-mail {0:?} already exists")]
    EmailTaken(String),
    /// The bootstrap state on disk does not match the database.
    #[error("bootstrap failed: {0}")]
    Bootstrap(String),
    /// The database could not be reached or queried.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// A migration failed.
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A file or socket operation failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// An identity rule refused the call (see `slipway_identity`).
    #[error("{0}")]
    Identity(slipway_identity::IdentityError),
}

impl From<slipway_identity::IdentityError> for PlatformError {
    fn from(e: slipway_identity::IdentityError) -> Self {
        use slipway_identity::IdentityError as E;
        match e {
            E::Invalid { field, message } => Self::InvalidInput { field, message },
            E::AlreadyMember(email) => Self::EmailTaken(email),
            E::Database(e) => Self::Database(e),
            other => Self::Identity(other),
        }
    }
}

impl From<slipway_server::db::ConnectError> for PlatformError {
    fn from(e: slipway_server::db::ConnectError) -> Self {
        match e {
            slipway_server::db::ConnectError::UnsupportedUrl => Self::Config(e.to_string()),
            slipway_server::db::ConnectError::Database(e) => Self::Database(e),
        }
    }
}

/// Certificate files that cannot be used (`--tls-cert`, `--tls-key`) are a configuration
/// error, named by flag and file.
impl From<slipway_server::tls::TlsError> for PlatformError {
    fn from(e: slipway_server::tls::TlsError) -> Self {
        Self::Config(e.to_string())
    }
}
