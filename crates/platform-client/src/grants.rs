//! Assistants a person let in (docs/mcp.md): the sign-in requests waiting for their approval,
//! approving or declining one, the grants they made, and revoking one. `slipway grants` calls
//! these.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::client::Client;
use crate::error::ToolError;
use crate::people::{Revoked, segment};
/// A grant as listed, and what it may do: `slipway-api`'s.
pub use slipway_api::{GrantInfo, TokenScope};

/// The caller's grants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Grants {
    /// Newest first.
    pub grants: Vec<GrantInfo>,
}

/// A sign-in request as the approving person sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SignInRequest {
    /// The code shown on the assistant's page.
    pub user_code: String,
    /// The assistant's name, as it gave it.
    pub client_name: String,
    /// Its client id.
    pub client_id: String,
    /// Where the browser goes back to.
    pub redirect_uri: String,
    /// What the page asks for (app names, when it named apps).
    pub asked: TokenScope,
    /// `pending`, `approved`, `denied` or `expired`.
    pub status: String,
    /// RFC 3339, UTC.
    pub expires_at: String,
}

/// The caller's grants.
pub fn list_grants(client: &Client) -> Result<Grants, ToolError> {
    client.typed(Method::GET, "/v1/grants", None)
}

/// The request waiting with `code`.
pub fn find_request(client: &Client, code: &str) -> Result<SignInRequest, ToolError> {
    let path = format!("/v1/oauth/requests/{}", segment("code", code)?);
    client.typed(Method::GET, &path, None)
}

/// Approves the request `code` with `scope` (its apps by name or id); `None` keeps what the
/// page asked for.
pub fn approve_request(
    client: &Client,
    code: &str,
    scope: Option<&TokenScope>,
) -> Result<SignInRequest, ToolError> {
    let path = format!("/v1/oauth/requests/{}/approve", segment("code", code)?);
    let mut body = json!({});
    if let Some(scope) = scope {
        crate::tokens::put_scope(&mut body, scope);
    }
    client.typed(Method::POST, &path, Some(&body))
}

/// A declined request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Denied {
    /// Its code.
    pub user_code: String,
    /// Always true (a refusal is an error).
    pub denied: bool,
}

/// Declines the request `code`: the assistant is told so.
pub fn deny_request(client: &Client, code: &str) -> Result<Denied, ToolError> {
    let path = format!("/v1/oauth/requests/{}/deny", segment("code", code)?);
    client.typed(Method::POST, &path, Some(&json!({})))
}

/// Revokes grant `id`: the assistant's tokens stop working at its next request.
pub fn revoke_grant(client: &Client, id: &str) -> Result<Revoked, ToolError> {
    let path = format!("/v1/grants/{}", segment("id", id)?);
    client.typed(Method::DELETE, &path, None)
}
