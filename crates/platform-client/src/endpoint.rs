//! Where the platform is and which token to use.

use crate::error::ToolError;

/// Environment variable naming the platform's base URL, for example `http://127.0.0.1:8700`.
pub const ENV_URL: &str = "SLIPWAY_PLATFORM_URL";
/// Environment variable holding the bearer token.
pub const ENV_TOKEN: &str = "SLIPWAY_TOKEN";

/// A platform base URL and the bearer token to present to it.
#[derive(Clone)]
pub struct Endpoint {
    /// Base URL without a trailing slash.
    pub url: String,
    /// Bearer token (never logged: `Debug` hides it).
    pub token: String,
    /// How requests travel when not over the network: the platform's own MCP server hands
    /// its API router here, so a tool call is the very API request a client would send,
    /// checked the same way, without a loopback connection.
    pub transport: Option<std::sync::Arc<dyn Transport>>,
}

/// Carries a request to the platform and brings back its status and body.
pub trait Transport: Send + Sync {
    /// Sends `request` (its URI is the route's path and query) and returns the answer's
    /// status and body, or why nothing came back.
    fn send(&self, request: http::Request<Vec<u8>>) -> Result<(u16, Vec<u8>), String>;

    /// [`Transport::send`] for async callers, which must not wait on a thread of their own.
    fn send_async(&self, request: http::Request<Vec<u8>>) -> Sending;
}

/// The answer of [`Transport::send_async`], to be awaited.
pub type Sending = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<(u16, Vec<u8>), String>> + Send + 'static>,
>;

impl PartialEq for Endpoint {
    fn eq(&self, other: &Self) -> bool {
        let same_transport = match (&self.transport, &other.transport) {
            (None, None) => true,
            (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
            _ => false,
        };
        self.url == other.url && self.token == other.token && same_transport
    }
}

impl Eq for Endpoint {}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.url)
            .field("token", &"<redacted>")
            .field("in_process", &self.transport.is_some())
            .finish()
    }
}

impl Endpoint {
    /// An endpoint from explicit values.
    pub fn new(url: impl Into<String>, token: impl Into<String>) -> Self {
        Self {
            url: url.into().trim_end_matches('/').to_owned(),
            token: token.into(),
            transport: None,
        }
    }

    /// This endpoint, its requests carried by `transport` instead of the network.
    #[must_use]
    pub fn with_transport(mut self, transport: std::sync::Arc<dyn Transport>) -> Self {
        self.transport = Some(transport);
        self
    }

    /// The endpoint of `environment` (default `production`): `SLIPWAY_PLATFORM_URL` and
    /// `SLIPWAY_TOKEN` when both are set (they always mean the default environment), else
    /// what `slipway login` saved (see [`crate::credentials`]).
    pub fn from_env(environment: Option<&str>) -> Result<Self, ToolError> {
        let env = environment.unwrap_or("production");
        let url = std::env::var(ENV_URL).ok().filter(|s| !s.trim().is_empty());
        let token = std::env::var(ENV_TOKEN)
            .ok()
            .filter(|s| !s.trim().is_empty());
        if let (Some(url), Some(token), "production") = (&url, &token, env) {
            return Ok(Self::new(url.as_str(), token.trim()));
        }
        match crate::credentials::saved(env)? {
            Some((url, token)) => Ok(Self::new(url, token)),
            None => Err(ToolError::NotConfigured(format!(
                "no platform is configured for environment {env:?}: run `slipway login --url URL --environment {env}` or set {ENV_URL} (for example http://127.0.0.1:8700) and {ENV_TOKEN}. \
To run one locally: `slipway platform serve --data-dir DIR`, then use the token in DIR/bootstrap-token"
            ))),
        }
    }
}
