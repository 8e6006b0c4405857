//! The account's people, invites and audit (docs/people.md): what `slipway people` and the
//! desktop's People view call. Each function answers the platform's answer typed; a transport
//! that shows one as JSON renders it as the tools' results are (`slipway_toolkit::render`).
//!
//! Arguments whose rule is plain (a role is `admin` or `member`, an invite lasts 1–30 days)
//! are checked here first so a form can put the message beside the field without a round
//! trip; the platform checks them again and stays the authority for everything else.

use reqwest::{Method, Url};
use serde::{Deserialize, Serialize};
use serde_json::json;
use slipway_server::token::Token;

use crate::client::Client;
use crate::error::ToolError;
use crate::model::secret;
/// A person, their account role, who did something and the audit: `slipway-api`'s, the types
/// the platform serialises.
pub use slipway_api::{AccountRole, AuditEntry, AuditPage, Person, PersonRef};

/// The account roles a person can have.
pub const ROLES: [&str; 2] = ["admin", "member"];

/// The people of the account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct People {
    /// Everyone in the account.
    pub users: Vec<Person>,
}

/// A pending invite; never its code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Invite {
    /// Id (to revoke it).
    pub id: String,
    /// Who is invited.
    pub email: String,
    /// The account role they will have.
    pub role: AccountRole,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// RFC 3339, UTC.
    pub expires_at: String,
    /// The admin who invited them.
    pub invited_by: PersonRef,
}

/// An invite just made: its code, which the platform shows this once, and the link the
/// desktop app opens to join.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InviteMade {
    /// The invite.
    #[serde(flatten)]
    pub invite: Invite,
    /// The code in clear (`Debug` hides it).
    #[serde(with = "secret")]
    #[schemars(with = "String")]
    pub code: Token,
    /// `slipway://invite/<code>?url=<platform>`.
    #[serde(default)]
    pub link: String,
}

/// The pending invites.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Invites {
    /// Each pending invite.
    pub invites: Vec<Invite>,
}

/// The platform's answer to revoking an invite or a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Revoked {
    /// What was revoked.
    pub id: String,
    /// Always true (a refusal is an error).
    pub revoked: bool,
}

/// An app that passed to the admin who removed its only owner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TransferredApp {
    /// The app's UUID.
    pub app_id: String,
    /// Its name.
    pub name: String,
}

/// Someone removed from the account, and the apps that passed to the caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Removed {
    /// Who was removed.
    pub removed: Person,
    /// The apps they alone owned, now the caller's.
    pub transferred_apps: Vec<TransferredApp>,
}

/// Who a token belongs to (`GET /v1/account/me`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Me {
    /// Their UUID.
    pub id: String,
    /// Their e-mail.
    pub email: String,
    /// Their display name.
    pub name: String,
    /// Their account role.
    pub role: AccountRole,
    /// Their account.
    pub account_id: String,
    /// When they joined (RFC 3339, UTC).
    pub joined_at: String,
}

/// The people of the caller's account.
pub fn list_people(client: &Client) -> Result<People, ToolError> {
    client.typed(Method::GET, "/v1/account/users", None)
}

/// Invites `email` (admins only). The answer is the invite with its `code`, which the
/// platform shows this once, plus `link`: the `slipway://invite/<code>?url=<platform>` address
/// the desktop app opens to join.
pub fn invite(
    client: &Client,
    email: &str,
    role: Option<&str>,
    expires_in_days: Option<u32>,
) -> Result<InviteMade, ToolError> {
    let email = check_email(email)?;
    let mut body = json!({ "email": email });
    if let Some(role) = role {
        body["role"] = json!(check_role(role)?);
    }
    if let Some(days) = expires_in_days {
        body["expires_in_days"] = json!(check_days("expires_in_days", days, 30)?);
    }
    let made: InviteMade = client.typed(Method::POST, "/v1/account/invites", Some(&body))?;
    Ok(InviteMade {
        link: invite_link(made.code.expose(), client.base_url())?,
        ..made
    })
}

/// The desktop's join address for `code` on the platform at `base_url`.
pub fn invite_link(code: &str, base_url: &str) -> Result<String, ToolError> {
    let mut link = Url::parse("slipway://invite/")
        .map_err(|e| ToolError::Internal(format!("invite link: {e}")))?;
    link.path_segments_mut()
        .map_err(|()| ToolError::Internal("invite link has no path".into()))?
        .pop_if_empty()
        .push(code);
    link.query_pairs_mut().append_pair("url", base_url);
    Ok(link.into())
}

/// The pending invites (admins only; never their codes).
pub fn list_invites(client: &Client) -> Result<Invites, ToolError> {
    client.typed(Method::GET, "/v1/account/invites", None)
}

/// Revokes the pending invite `id` (admins only): its code stops working.
pub fn revoke_invite(client: &Client, id: &str) -> Result<Revoked, ToolError> {
    let path = format!("/v1/account/invites/{}", segment("id", id)?);
    client.typed(Method::DELETE, &path, None)
}

/// Gives `person` (their UUID or e-mail) the account role `role` (admins only). The platform
/// refuses to demote the account's last admin (409 `last_admin`).
pub fn set_role(client: &Client, person: &str, role: &str) -> Result<Person, ToolError> {
    let role = check_role(role)?;
    let path = format!("/v1/account/users/{}", segment("id", person)?);
    client.typed(Method::PATCH, &path, Some(&json!({ "role": role })))
}

/// Removes `person` (their UUID or e-mail) from the account (admins only): their tokens stop
/// working and the apps they alone owned pass to the caller (`transferred_apps`).
pub fn remove_person(client: &Client, person: &str) -> Result<Removed, ToolError> {
    let path = format!("/v1/account/users/{}", segment("id", person)?);
    client.typed(Method::DELETE, &path, None)
}

/// One page of the account's audit, newest first (admins only); pass `next_page_token` back
/// for the page after.
pub fn audit(client: &Client, page_token: Option<&str>) -> Result<AuditPage, ToolError> {
    let path = match page_token.map(str::trim).filter(|t| !t.is_empty()) {
        Some(token) => with_query("/v1/account/audit", &[("page_token", token)])?,
        None => "/v1/account/audit".to_owned(),
    };
    client.typed(Method::GET, &path, None)
}

/// A tool call of this machine's `slipway mcp`, as the account's audit records it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ToolCallReport {
    /// The tool.
    pub tool: String,
    /// The app it named, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_id: Option<String>,
    /// The MCP client, as it named itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The error's code when the call failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Records `report` in the account's audit as the client's person (any token may).
pub fn report_tool_call(client: &Client, report: &ToolCallReport) -> Result<(), ToolError> {
    let body = serde_json::to_value(report)
        .map_err(|e| ToolError::Internal(format!("a tool call's report: {e}")))?;
    client
        .json(Method::POST, "/v1/account/audit/tool-calls", Some(&body))
        .map(|_| ())
}

/// Who the client's token belongs to.
pub fn me(client: &Client) -> Result<Me, ToolError> {
    client.typed(Method::GET, "/v1/account/me", None)
}

/// `role` if it is an account role, else an error naming `role`.
pub(crate) fn check_role(role: &str) -> Result<&'static str, ToolError> {
    let wanted = role.trim();
    ROLES
        .into_iter()
        .find(|r| *r == wanted)
        .ok_or_else(|| ToolError::invalid("role", format!("{role:?} must be admin or member")))
}

/// `days` if it is 1..=`max`, else an error naming `field`.
pub(crate) fn check_days(field: &str, days: u32, max: u32) -> Result<u32, ToolError> {
    if (1..=max).contains(&days) {
        Ok(days)
    } else {
        Err(ToolError::invalid(
            field,
            format!("{days} must be a whole number of days from 1 to {max}"),
        ))
    }
}

/// The platform's e-mail rule: one `@` with text on both sides, no whitespace, at most 254
/// characters.
fn check_email(email: &str) -> Result<&str, ToolError> {
    let email = email.trim();
    let ok = email.len() <= 254
        && !email.chars().any(char::is_whitespace)
        && email
            .split_once('@')
            .is_some_and(|(local, domain)| !local.is_empty() && !domain.is_empty())
        && email.matches('@').count() == 1;
    if ok {
        Ok(email)
    } else {
        Err(ToolError::invalid(
            "email",
            format!(
                "{email:?} is not an e-mail address (one @ with text on both sides, no spaces, at most 254 characters)"
            ),
        ))
    }
}

/// `value` as one URL path segment (an e-mail or an id; `/`, `?`, `#` and `%` are encoded),
/// or an error naming `field` when it is blank.
pub(crate) fn segment(field: &str, value: &str) -> Result<String, ToolError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(ToolError::invalid(field, "must not be empty"));
    }
    let mut url = Url::parse("http://segment.invalid/")
        .map_err(|e| ToolError::Internal(format!("path segment: {e}")))?;
    url.path_segments_mut()
        .map_err(|()| ToolError::Internal("path segment: no path".into()))?
        .pop_if_empty()
        .push(value);
    Ok(url.path().trim_start_matches('/').to_owned())
}

/// `path?name=value&…` with the pairs form-encoded.
pub(crate) fn with_query(path: &str, pairs: &[(&str, &str)]) -> Result<String, ToolError> {
    let mut url = Url::parse(&format!("http://query.invalid{path}"))
        .map_err(|e| ToolError::Internal(format!("query of {path}: {e}")))?;
    url.query_pairs_mut().extend_pairs(pairs);
    Ok(format!(
        "{}?{}",
        url.path(),
        url.query().unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_rules_are_checked_before_the_platform_and_name_their_field() {
        assert_eq!(check_role("admin").unwrap(), "admin");
        assert_eq!(check_role(" member ").unwrap(), "member");
        assert_eq!(check_role("owner").unwrap_err().field(), Some("role"));
        assert_eq!(check_days("expires_in_days", 30, 30).unwrap(), 30);
        for bad in [0, 31] {
            let e = check_days("expires_in_days", bad, 30).unwrap_err();
            assert_eq!(e.field(), Some("expires_in_days"), "{bad}");
        }
        assert_eq!(check_email(" a@b ").unwrap(), "a@b");
        for bad in [
            "",
            "a",
            "@b",
            "a@",
            "a b@c",
            "a@b@c",
            &format!("{}@b", "a".repeat(253)),
        ] {
            assert_eq!(
                check_email(bad).unwrap_err().field(),
                Some("email"),
                "{bad}"
            );
        }
        assert_eq!(segment("id", "  ").unwrap_err().field(), Some("id"));
    }

    #[test]
    fn ids_and_queries_are_encoded_and_the_link_carries_the_platform() {
        assert_eq!(segment("id", "Bob@Example.org").unwrap(), "Bob@Example.org");
        assert_eq!(segment("id", "a/b?c#d").unwrap(), "a%2Fb%3Fc%23d");
        assert_eq!(
            with_query("/v1/account/audit", &[("page_token", "a+b/c=")]).unwrap(),
            "/v1/account/audit?page_token=a%2Bb%2Fc%3D"
        );
        assert_eq!(
            invite_link("slwi_abc-_1", "http://127.0.0.1:8700").unwrap(),
            "slipway://invite/slwi_abc-_1?url=http%3A%2F%2F127.0.0.1%3A8700"
        );
    }
}
