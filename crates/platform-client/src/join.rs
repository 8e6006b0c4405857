//! Joining a platform with an invite code (docs/people.md, `POST /v1/invites/accept`): the one
//! platform call made without a token, whose answer is the new person and their first token.
//! `slipway login --invite` and the desktop's join screen store that token as a sign-in does.

use reqwest::{Method, Url};
use serde::Deserialize;
use serde_json::json;
use slipway_server::token::Token;

use crate::client::Client;
use crate::endpoint::Endpoint;
use crate::error::ToolError;
use crate::people::AccountRole;

/// Who joined, and their first token (90 days).
#[derive(Debug, Clone)]
pub struct Joined {
    /// The new person's id.
    pub user_id: String,
    /// Their e-mail (the invite's).
    pub email: String,
    /// Their display name.
    pub name: String,
    /// Their account role (the invite's).
    pub role: AccountRole,
    /// Their first token (`Debug` hides it).
    pub token: Token,
    /// When the token expires (RFC 3339).
    pub expires_at: String,
}

/// A client for the calls that need no token (the invite, the SSO status and exchange): the
/// platform reads no bearer on those routes, so the empty one it would carry is ignored.
pub(crate) fn anonymous(url: &str) -> Result<Client, ToolError> {
    let url = url.trim();
    if !(url.starts_with("http://") || url.starts_with("https://")) || Url::parse(url).is_err() {
        return Err(ToolError::invalid(
            "url",
            format!("{url:?} must be the platform's http:// or https:// address"),
        ));
    }
    Client::new(Endpoint::new(url, ""))
}

/// Accepts the invite `code` on the platform at `url`, as `name` (default: the e-mail's local
/// part). Unknown codes are not found; used, revoked and expired ones are refused with the
/// platform's reason; nothing is created then.
pub fn accept_invite(url: &str, code: &str, name: Option<&str>) -> Result<Joined, ToolError> {
    let client = anonymous(url)?;
    let code = code.trim();
    if code.is_empty() {
        return Err(ToolError::invalid("code", "must not be empty"));
    }
    let mut body = json!({ "code": code });
    if let Some(name) = name.map(str::trim) {
        if name.is_empty() {
            return Err(ToolError::invalid("name", "must not be blank"));
        }
        body["name"] = json!(name);
    }
    let answer: TokenAnswer = client
        .typed(Method::POST, "/v1/invites/accept", Some(&body))
        .map_err(|e| gone_as_refusal(e, "code"))?;
    Ok(Joined {
        token: answer.token()?,
        role: answer.role.ok_or_else(|| {
            ToolError::Internal("the platform's answer to the invite had no role".into())
        })?,
        user_id: answer.user_id,
        email: answer.email,
        name: answer.name,
        expires_at: answer.expires_at.unwrap_or_default(),
    })
}

/// An answer that makes a token: an accepted invite (with the account role), an SSO
/// exchange.
#[derive(Debug, Deserialize)]
pub(super) struct TokenAnswer {
    pub(super) user_id: String,
    pub(super) email: String,
    pub(super) name: String,
    #[serde(default)]
    pub(super) role: Option<AccountRole>,
    #[serde(default)]
    token: String,
    /// Null for a token without an end.
    #[serde(default)]
    pub(super) expires_at: Option<String>,
}

impl TokenAnswer {
    /// The token it carries; an empty one is the platform's fault.
    pub(super) fn token(&self) -> Result<Token, ToolError> {
        if self.token.is_empty() {
            return Err(ToolError::Internal(
                "the platform's answer had no token".into(),
            ));
        }
        Ok(Token::from_string(self.token.clone()))
    }
}

/// The platform answers 404 for an unknown code and 410 for a used, revoked or expired one;
/// both are the code's fault, so the form shows them beside the code (the client maps a 410,
/// a status it does not know, to an internal error).
fn gone_as_refusal(error: ToolError, field: &str) -> ToolError {
    match error {
        ToolError::NotFound(reason) => ToolError::invalid(field, reason),
        ToolError::Internal(message) => {
            match message.strip_prefix("platform answered 410 Gone: ") {
                Some(reason) => ToolError::invalid(field, reason),
                None => ToolError::Internal(message),
            }
        }
        other => other,
    }
}

/// The code and platform address of a `slipway://invite/<code>?url=<platform>` link (what
/// `slipway people invite` prints), or `None` when `link` is not one.
pub fn parse_invite_link(link: &str) -> Option<(String, String)> {
    let url = Url::parse(link.trim()).ok()?;
    if url.scheme() != "slipway" || url.host_str() != Some("invite") {
        return None;
    }
    let code = url.path_segments()?.next().filter(|c| !c.is_empty())?;
    let platform = url
        .query_pairs()
        .find(|(k, _)| k == "url")
        .map(|(_, v)| v.into_owned())?;
    Some((code.to_owned(), platform))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::people::invite_link;

    #[test]
    fn a_printed_link_gives_back_its_code_and_platform() {
        let link = invite_link("slwi_Ab-9", "https://slipway.example.org").unwrap();
        assert_eq!(
            parse_invite_link(&link),
            Some((
                "slwi_Ab-9".to_owned(),
                "https://slipway.example.org".to_owned()
            ))
        );
        assert_eq!(parse_invite_link("slwi_Ab-9"), None);
        assert_eq!(parse_invite_link("https://invite/x?url=y"), None);
        assert_eq!(parse_invite_link("slipway://invite/x"), None);
    }

    #[test]
    fn arguments_are_checked_before_anything_is_sent() {
        assert_eq!(
            accept_invite("ftp://x", "c", None).unwrap_err().field(),
            Some("url")
        );
        let nowhere = "http://127.0.0.1:9";
        assert_eq!(
            accept_invite(nowhere, " ", None).unwrap_err().field(),
            Some("code")
        );
        assert_eq!(
            accept_invite(nowhere, "c", Some(" ")).unwrap_err().field(),
            Some("name")
        );
    }

    #[test]
    fn a_gone_code_is_the_codes_fault() {
        let e = gone_as_refusal(
            ToolError::Internal("platform answered 410 Gone: the invite was used".into()),
            "code",
        );
        assert_eq!(e.field(), Some("code"));
        assert!(e.to_string().contains("the invite was used"), "{e}");
        let unknown = gone_as_refusal(
            ToolError::NotFound("no invite has this code".into()),
            "code",
        );
        assert_eq!(unknown.field(), Some("code"));
    }
}
