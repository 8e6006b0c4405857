//! Joining a platform with an invite code (docs/people.md, `POST /v1/invites/accept`): the one
//! platform call made without a token, whose answer is the new person and their first token.
//! `slipway login --invite` and the desktop's join screen store that token as a sign-in does.

use reqwest::{Method, Url};
use serde_json::{Value, json};
use slipway_server::token::Token;

use super::{Client, Endpoint};
use crate::error::ToolError;

/// Who joined, and their first token (90 days).
#[derive(Debug, Clone)]
pub struct Joined {
    /// The new person's id.
    pub user_id: String,
    /// Their e-mail (the invite's).
    pub email: String,
    /// Their display name.
    pub name: String,
    /// Their account role (the invite's): `admin` or `member`.
    pub role: String,
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
    let answer = client
        .json(Method::POST, "/v1/invites/accept", Some(&body))
        .map_err(|e| gone_as_refusal(e, "code"))?
        .body;
    let text = |key: &str| answer[key].as_str().unwrap_or_default().to_owned();
    let token = answered_token(&answer)?;
    Ok(Joined {
        user_id: text("user_id"),
        email: text("email"),
        name: text("name"),
        role: text("role"),
        token,
        expires_at: text("expires_at"),
    })
}

/// The token an answer that makes one carries (an accepted invite, an SSO exchange).
pub(super) fn answered_token(answer: &Value) -> Result<Token, ToolError> {
    answer["token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .map(|t| Token::from_string(t.to_owned()))
        .ok_or_else(|| ToolError::Internal("the platform's answer had no token".into()))
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

/// The JSON a script or the desktop shows for `joined` (without the token).
pub fn joined_json(joined: &Joined) -> Value {
    json!({
        "success": true,
        "user_id": joined.user_id,
        "email": joined.email,
        "name": joined.name,
        "role": joined.role,
        "expires_at": joined.expires_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::people::invite_link;

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
