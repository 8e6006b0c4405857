//! The caller's own API tokens (docs/people.md): list, create (the secret is in this one
//! answer only) and revoke. `slipway tokens` and the desktop's Tokens view call these.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::json;
use slipway_server::token::Token;

use crate::client::Client;
use crate::error::ToolError;
use crate::model::secret;
use crate::people::{Revoked, check_days, segment};
/// A token as listed, and what a token may do: `slipway-api`'s, the types the platform
/// serialises.
pub use slipway_api::{TokenInfo, TokenScope};

/// The longest token name the platform keeps.
const NAME_MAX: usize = 100;

/// The caller's tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Tokens {
    /// Newest first.
    pub tokens: Vec<TokenInfo>,
}

/// A token just made: the only time its secret is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NewToken {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// The bearer token in clear (`Debug` hides it).
    #[serde(with = "secret")]
    #[schemars(with = "String")]
    pub token: Token,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// When it stops working (null: never).
    pub expires_at: Option<String>,
    /// What it may do.
    #[serde(default)]
    pub scope: TokenScope,
}

/// The caller's tokens (`current` marks the one this client uses; never a secret).
pub fn list_tokens(client: &Client) -> Result<Tokens, ToolError> {
    client.typed(Method::GET, "/v1/tokens", None)
}

/// Creates a token named `name` lasting `expires_in_days` (1–365; the platform's default is
/// 90) that may do what `scope` allows (its `apps` given by name or id). Its `token` is shown
/// this once.
pub fn create_token(
    client: &Client,
    name: &str,
    expires_in_days: Option<u32>,
    scope: &TokenScope,
) -> Result<NewToken, ToolError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(ToolError::invalid("name", "must not be blank"));
    }
    if name.chars().count() > NAME_MAX {
        return Err(ToolError::invalid(
            "name",
            format!("must be at most {NAME_MAX} characters"),
        ));
    }
    let mut body = json!({ "name": name });
    if let Some(days) = expires_in_days {
        body["expires_in_days"] = json!(check_days("expires_in_days", days, 365)?);
    }
    if scope.apps.as_ref().is_some_and(Vec::is_empty) {
        return Err(ToolError::invalid(
            "apps",
            "must name at least one app, or be left out for every app",
        ));
    }
    if !scope.is_full() {
        put_scope(&mut body, scope);
    }
    client.typed(Method::POST, "/v1/tokens", Some(&body))
}

/// Writes `scope`'s fields (`read_only`, `secrets`, and `apps` when it names some) into a
/// request body: how `POST /v1/tokens` and a sign-in's approval both take a scope.
pub(crate) fn put_scope(body: &mut serde_json::Value, scope: &TokenScope) {
    body["read_only"] = json!(scope.read_only);
    body["secrets"] = json!(scope.secrets);
    if let Some(apps) = &scope.apps {
        body["apps"] = json!(apps);
    }
}

/// Revokes the caller's token `id`: it stops working at once. Another person's token is not
/// found (404 `token_not_found`), as an unknown one is.
pub fn revoke_token(client: &Client, id: &str) -> Result<Revoked, ToolError> {
    let path = format!("/v1/tokens/{}", segment("id", id)?);
    client.typed(Method::DELETE, &path, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Endpoint;

    /// A client of a port nothing listens on: a call that got past the checks would fail
    /// with `Unavailable`, not with an argument error.
    fn nowhere() -> Client {
        Client::new(Endpoint::new("http://127.0.0.1:9", "t")).unwrap()
    }

    #[test]
    fn names_and_lifetimes_are_checked_before_anything_is_sent() {
        let c = nowhere();
        for (name, days, field) in [
            ("  ", None, "name"),
            (&*"n".repeat(101), None, "name"),
            ("ci", Some(0), "expires_in_days"),
            ("ci", Some(366), "expires_in_days"),
        ] {
            let e = create_token(&c, name, days, &TokenScope::FULL).unwrap_err();
            assert_eq!(e.field(), Some(field), "{name:?} {days:?}: {e}");
        }
        assert_eq!(revoke_token(&c, " ").unwrap_err().field(), Some("id"));
    }
}
