//! The platform's domain values: what the other layers store, decide on and answer with.
//! Plain data with no I/O, so every layer may use it (`model` is the bottom of the layer
//! order `model < db < store < {vault, policy} < {deploy, jobs} < http`).

mod access;

pub use access::{AccountRole, Caller, Role};
/// The lifecycle states, spelled once for the server and its clients (`slipway-api`).
pub use slipway_api::{AppStatus, BuildStatus, DeploymentCause, DeploymentStatus, ServiceStatus};

/// A bearer token in clear (its `Debug` is redacted; the database keeps only its hash).
pub use slipway_server::token::Token;

/// Prefix of every platform token, so a leaked one is recognisable in a secret scanner.
pub const TOKEN_PREFIX: &str = "slw_";

/// A value sealed under a master key: what a `secret_version` row stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed {
    /// Which master key sealed it.
    pub key_id: String,
    /// The 24-byte nonce, base64.
    pub nonce: String,
    /// Ciphertext and tag, base64.
    pub ciphertext: String,
}

/// The domain every gateway host ends with (`*.localhost` resolves to loopback); no custom
/// domain may lie under it.
pub const GATEWAY_DOMAIN: &str = "localhost";
