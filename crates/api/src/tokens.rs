//! A personal API token as `GET /v1/tokens` lists it.

use serde::{Deserialize, Serialize};

/// One of the caller's tokens; never its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TokenInfo {
    /// Id (to revoke it).
    pub id: String,
    /// Its name.
    pub name: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// When it stops working; null for tokens made before tokens had lifetimes.
    pub expires_at: Option<String>,
    /// When it was last used (to the minute), or null.
    pub last_used_at: Option<String>,
    /// Whether the request that listed it came with it (the client that asked uses it).
    pub current: bool,
}
