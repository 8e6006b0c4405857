//! The identity audit: who did what to whom, and when — invites made, accepted and revoked,
//! roles changed, people removed (and the apps that passed to the remover), tokens created
//! and revoked, SSO sign-ins and refusals. Admins read it page by page, newest first.
//! Entries never hold a code or a token.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::error::IdentityError;
use crate::model::{Caller, PersonRef};
use crate::store::audit::{self as rows, AuditRow};
use slipway_server::clock::{now_millis, rfc3339};
use slipway_server::db::Tx;

/// An entry as `GET /v1/account/audit` lists it, and one page of them: `slipway-api`'s, the
/// shapes the platform's clients read.
pub use slipway_api::{AuditEntry as Entry, AuditPage as Page};

/// What an entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// An admin invited someone.
    InviteCreated,
    /// Someone joined with an invite (or signed in with SSO on one).
    InviteAccepted,
    /// An admin revoked an invite, or a new invite to the same address replaced it.
    InviteRevoked,
    /// An admin changed a person's account role.
    RoleChanged,
    /// An admin removed a person.
    PersonRemoved,
    /// An app the removed person alone owned passed to the admin who removed them.
    AppOwnershipTransferred,
    /// Someone created a personal token.
    TokenCreated,
    /// Someone revoked one of their tokens.
    TokenRevoked,
    /// Someone signed in with single sign-on.
    SsoSignedIn,
    /// A single sign-on was refused.
    SsoRefused,
    /// An AI assistant called a tool through the platform's MCP server.
    ToolCalled,
    /// Someone let an assistant (an OAuth client) act for them.
    AssistantApproved,
    /// Someone revoked an assistant's grant.
    AssistantRevoked,
}

impl Action {
    /// The stored and listed name.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::InviteCreated => "invite.created",
            Action::InviteAccepted => "invite.accepted",
            Action::InviteRevoked => "invite.revoked",
            Action::RoleChanged => "person.role_changed",
            Action::PersonRemoved => "person.removed",
            Action::AppOwnershipTransferred => "app.ownership_transferred",
            Action::TokenCreated => "token.created",
            Action::TokenRevoked => "token.revoked",
            Action::SsoSignedIn => "sso.signed_in",
            Action::SsoRefused => "sso.refused",
            Action::ToolCalled => "mcp.tool_called",
            Action::AssistantApproved => "assistant.approved",
            Action::AssistantRevoked => "assistant.revoked",
        }
    }
}

/// Records one entry in `account_id`'s audit.
pub async fn record(
    tx: &mut Tx,
    account_id: &str,
    actor: Option<&PersonRef>,
    action: Action,
    subject: &str,
    detail: &str,
) -> Result<(), sqlx::Error> {
    rows::insert(
        tx,
        &AuditRow {
            id: entry_id(),
            account_id: account_id.to_owned(),
            at: now_millis(),
            actor_id: actor.map(|a| a.id.clone()),
            actor_email: actor.map(|a| a.email.clone()),
            action: action.as_str().to_owned(),
            subject: subject.to_owned(),
            detail: detail.to_owned(),
        },
    )
    .await
}

/// One entry to [`record_many`].
pub(crate) struct NewEntry<'a> {
    pub(crate) account_id: &'a str,
    pub(crate) actor: &'a PersonRef,
    pub(crate) action: Action,
    pub(crate) subject: &'a str,
    pub(crate) detail: &'a str,
}

/// An entry of a caller whose person row names the actor when it is stored (see
/// [`rows_naming_caller`]).
pub(crate) struct CallerEntry<'a> {
    pub(crate) caller: &'a Caller,
    pub(crate) action: Action,
    pub(crate) subject: &'a str,
    pub(crate) detail: &'a str,
}

/// The rows of `entries` at one time, each naming its caller's person by id only: the
/// statement that stores it reads the e-mail from the person row.
pub(crate) fn rows_naming_caller<'a>(
    entries: impl Iterator<Item = CallerEntry<'a>>,
) -> Vec<AuditRow> {
    let at = now_millis();
    entries
        .map(|e| AuditRow {
            id: entry_id(),
            account_id: e.caller.account_id.clone(),
            at,
            actor_id: Some(e.caller.user_id.clone()),
            actor_email: None,
            action: e.action.as_str().to_owned(),
            subject: e.subject.to_owned(),
            detail: e.detail.to_owned(),
        })
        .collect()
}

/// Records `entries` as [`record`] does each, in one statement.
pub(crate) async fn record_many(tx: &mut Tx, entries: &[NewEntry<'_>]) -> Result<(), sqlx::Error> {
    let at = now_millis();
    let rows: Vec<AuditRow> = entries
        .iter()
        .map(|e| AuditRow {
            id: entry_id(),
            account_id: e.account_id.to_owned(),
            at,
            actor_id: Some(e.actor.id.clone()),
            actor_email: Some(e.actor.email.clone()),
            action: e.action.as_str().to_owned(),
            subject: e.subject.to_owned(),
            detail: e.detail.to_owned(),
        })
        .collect();
    rows::insert_many(tx, &rows).await
}

/// A new entry's id: time-ordered (UUID v7), so each entry goes at the end of the primary
/// key's index rather than into a random page of it, which every write would then touch
/// (the audit grows with every tool call).
fn entry_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Largest page.
pub const PAGE_MAX: i64 = 500;
/// Page size when none is asked for.
pub const PAGE_DEFAULT: i64 = 100;

/// A page of the caller's account audit (admins only).
pub async fn page(
    tx: &mut Tx,
    caller: &Caller,
    limit: Option<i64>,
    page_token: Option<&str>,
) -> Result<Page, IdentityError> {
    if !caller.is_admin() {
        return Err(IdentityError::AdminOnly("read the audit"));
    }
    let limit = match limit {
        None => PAGE_DEFAULT,
        Some(n) if (1..=PAGE_MAX).contains(&n) => n,
        Some(_) => {
            return Err(IdentityError::invalid(
                "limit",
                format!("must be a whole number from 1 to {PAGE_MAX}"),
            ));
        }
    };
    let before = page_token.map(decode_cursor).transpose()?;
    let mut found = rows::page(tx, &caller.account_id, before, limit + 1).await?;
    let more = found.len() as i64 > limit;
    found.truncate(limit as usize);
    let next_page_token = match found.last() {
        Some(last) if more => Some(URL_SAFE_NO_PAD.encode(format!("{}:{}", last.at, last.id))),
        _ => None,
    };
    let entries = found
        .into_iter()
        .map(|r| Entry {
            id: r.id,
            at: rfc3339(r.at),
            actor: match (r.actor_id, r.actor_email) {
                (Some(id), Some(email)) => Some(PersonRef { id, email }),
                _ => None,
            },
            action: r.action,
            subject: r.subject,
            detail: r.detail,
        })
        .collect();
    Ok(Page {
        entries,
        next_page_token,
    })
}

fn decode_cursor(raw: &str) -> Result<(i64, String), IdentityError> {
    let bad = || IdentityError::invalid("page_token", "is not a token this audit handed out");
    let text = URL_SAFE_NO_PAD.decode(raw).map_err(|_| bad())?;
    let text = String::from_utf8(text).map_err(|_| bad())?;
    let (at, id) = text.split_once(':').ok_or_else(bad)?;
    Ok((at.parse().map_err(|_| bad())?, id.to_owned()))
}
