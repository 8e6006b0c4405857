//! The caller's own API tokens (docs/people.md): list, create (the secret is in this one
//! answer only) and revoke. `slipway tokens` and the desktop's Tokens view call these.

use reqwest::Method;
use serde_json::{Value, json};

use super::Client;
use super::apps::with_success;
use super::people::{check_days, segment};
use crate::error::ToolError;

/// The longest token name the platform keeps.
const NAME_MAX: usize = 100;

/// The caller's tokens: `{tokens: [{id, name, created_at, expires_at, last_used_at,
/// current}]}` (`current` marks the one this client uses; never a secret).
pub fn list_tokens(client: &Client) -> Result<Value, ToolError> {
    let body = client.json(Method::GET, "/v1/tokens", None)?.body;
    Ok(with_success(body, &[]))
}

/// Creates a token named `name` lasting `expires_in_days` (1–365; the platform's default is
/// 90): `{id, name, token, created_at, expires_at}`. `token` is shown this once.
pub fn create_token(
    client: &Client,
    name: &str,
    expires_in_days: Option<u32>,
) -> Result<Value, ToolError> {
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
    let answer = client.json(Method::POST, "/v1/tokens", Some(&body))?.body;
    Ok(with_success(answer, &[]))
}

/// Revokes the caller's token `id`: it stops working at once. Another person's token is not
/// found (404 `token_not_found`), as an unknown one is.
pub fn revoke_token(client: &Client, id: &str) -> Result<Value, ToolError> {
    let path = format!("/v1/tokens/{}", segment("id", id)?);
    let body = client.json(Method::DELETE, &path, None)?.body;
    Ok(with_success(body, &[]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Endpoint;

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
            let e = create_token(&c, name, days).unwrap_err();
            assert_eq!(e.field(), Some(field), "{name:?} {days:?}: {e}");
        }
        assert_eq!(revoke_token(&c, " ").unwrap_err().field(), Some("id"));
    }
}
