//! Invites: an admin invites an e-mail address with a role; the invitee joins with the code
//! (shown once, stored hashed, single use, 1–30 days) and gets their first token. A used,
//! revoked, expired or unknown code creates nothing.

use serde::Serialize;

use crate::audit::{self, Action};
use crate::error::IdentityError;
use crate::model::{AccountRole, Caller, PersonRef};
use crate::people;
use crate::rules::{self, Days, INVITE_DAYS, TOKEN_DAYS};
use crate::store::invites::{self as rows, InviteRow};
use crate::store::people::{self as people_rows, PersonRow};
use crate::tokens::{self, NewToken};
use slipway_server::clock::{now_millis, rfc3339};
use slipway_server::db::Tx;
use slipway_server::token::Token;

/// Prefix of every invite code (told apart from a token's `slw_` at a glance).
pub const INVITE_PREFIX: &str = "slwi_";

/// A pending invite as admins list it; never the code.
#[derive(Debug, Clone, Serialize)]
pub struct Invite {
    /// Id (to revoke it).
    pub id: String,
    /// Who is invited.
    pub email: String,
    /// The account role they will have.
    pub role: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// RFC 3339, UTC.
    pub expires_at: String,
    /// The admin who invited them.
    pub invited_by: PersonRef,
}

impl From<InviteRow> for Invite {
    fn from(r: InviteRow) -> Self {
        Invite {
            id: r.id,
            email: r.email,
            role: r.role,
            created_at: rfc3339(r.created_at),
            expires_at: rfc3339(r.expires_at),
            invited_by: PersonRef {
                id: r.invited_by,
                email: r.invited_by_email,
            },
        }
    }
}

/// An invite just made, with the only copy of its code.
#[derive(Debug, Clone, Serialize)]
pub struct NewInvite {
    /// The invite.
    #[serde(flatten)]
    pub invite: Invite,
    /// The code in clear.
    #[serde(serialize_with = "crate::tokens::expose")]
    pub code: Token,
}

/// `POST /v1/account/invites` (admins). A pending invite to the same address is replaced.
pub async fn create(
    tx: &mut Tx,
    caller: &Caller,
    email: &str,
    role: Option<&str>,
    days: Option<i64>,
) -> Result<NewInvite, IdentityError> {
    if !caller.is_admin() {
        return Err(IdentityError::AdminOnly("invite people"));
    }
    let email = rules::parse_email(email)?;
    let role = role.map_or(Ok(AccountRole::Member), rules::parse_account_role)?;
    let days = INVITE_DAYS.check(days)?;
    people::require_admin(tx, caller, "invite people").await?;
    if people_rows::find_by_email(tx, &email)
        .await?
        .is_some_and(|p| p.removed_at.is_none())
    {
        return Err(IdentityError::AlreadyMember(email));
    }
    let actor = tokens::actor(tx, caller).await?;
    let now = now_millis();
    for old in rows::pending(tx, &caller.account_id, Some(&email), now).await? {
        rows::revoke(tx, &caller.account_id, &old.id, now).await?;
        let detail = "replaced by a new invite to the same address";
        audit::record(
            tx,
            &caller.account_id,
            Some(&actor),
            Action::InviteRevoked,
            &email,
            detail,
        )
        .await?;
    }
    let code = Token::generate(INVITE_PREFIX).map_err(|e| IdentityError::Random(e.to_string()))?;
    let row = InviteRow {
        id: uuid::Uuid::new_v4().to_string(),
        account_id: caller.account_id.clone(),
        email: email.clone(),
        role: role.as_str().to_owned(),
        invited_by: actor.id.clone(),
        invited_by_email: actor.email.clone(),
        created_at: now,
        expires_at: now + Days::millis(days),
        accepted_at: None,
        revoked_at: None,
    };
    rows::insert(tx, &row, &code.hash()).await?;
    let detail = format!("as {}, expires {}", role.as_str(), rfc3339(row.expires_at));
    audit::record(
        tx,
        &caller.account_id,
        Some(&actor),
        Action::InviteCreated,
        &email,
        &detail,
    )
    .await?;
    Ok(NewInvite {
        invite: row.into(),
        code,
    })
}

/// `GET /v1/account/invites` (admins): the pending ones, newest first.
pub async fn list(tx: &mut Tx, caller: &Caller) -> Result<Vec<Invite>, IdentityError> {
    if !caller.is_admin() {
        return Err(IdentityError::AdminOnly("list invites"));
    }
    Ok(rows::pending(tx, &caller.account_id, None, now_millis())
        .await?
        .into_iter()
        .map(Invite::from)
        .collect())
}

/// `DELETE /v1/account/invites/{id}` (admins): the code stops working.
pub async fn revoke(tx: &mut Tx, caller: &Caller, id: &str) -> Result<(), IdentityError> {
    people::require_admin(tx, caller, "revoke invites").await?;
    let id = id.trim();
    let now = now_millis();
    let pending = rows::pending(tx, &caller.account_id, None, now).await?;
    let invite = pending
        .into_iter()
        .find(|i| i.id == id)
        .ok_or_else(|| IdentityError::InviteNotFound(format!("no pending invite has id {id}")))?;
    rows::revoke(tx, &caller.account_id, id, now).await?;
    let actor = tokens::actor(tx, caller).await?;
    audit::record(
        tx,
        &caller.account_id,
        Some(&actor),
        Action::InviteRevoked,
        &invite.email,
        "",
    )
    .await?;
    Ok(())
}

/// Someone who joined, with their first token (the only copy in clear).
#[derive(Debug, Clone, Serialize)]
pub struct Joined {
    /// Their UUID.
    pub user_id: String,
    /// Their e-mail.
    pub email: String,
    /// Their name.
    pub name: String,
    /// Their account role.
    pub role: AccountRole,
    /// Their first token.
    #[serde(serialize_with = "crate::tokens::expose")]
    pub token: Token,
    /// When the token stops working.
    pub expires_at: Option<String>,
}

/// `POST /v1/invites/accept` (no token): joins with a code.
pub async fn accept(tx: &mut Tx, code: &str, name: Option<&str>) -> Result<Joined, IdentityError> {
    if code.is_empty() {
        return Err(IdentityError::invalid("code", "must not be empty"));
    }
    let name = name.map(rules::parse_user_name).transpose()?;
    let invite = rows::by_code(tx, &Token::from_string(code.to_owned()).hash())
        .await?
        .ok_or_else(|| {
            IdentityError::InviteNotFound(
                "no invite has this code; check it, or ask an admin for a new invite".into(),
            )
        })?;
    ended(&invite, now_millis())?;
    let name = name.unwrap_or_else(|| rules::default_name(&invite.email));
    let person = join(tx, &invite, &name, "with the invite's code").await?;
    let NewToken {
        token, expires_at, ..
    } = tokens::issue(
        tx,
        &person.id,
        "first token (invite)",
        Some(TOKEN_DAYS.default),
        &crate::model::TokenScope::FULL,
    )
    .await?;
    Ok(Joined {
        user_id: person.id,
        email: person.email,
        name: person.name,
        role: person.role,
        token,
        expires_at,
    })
}

/// Refuses an invite that is no longer pending, saying what happened to it.
fn ended(invite: &InviteRow, now: i64) -> Result<(), IdentityError> {
    let (code, what) = if let Some(at) = invite.accepted_at {
        ("invite_used", format!("was used on {}", rfc3339(at)))
    } else if let Some(at) = invite.revoked_at {
        ("invite_revoked", format!("was revoked on {}", rfc3339(at)))
    } else if invite.expires_at <= now {
        (
            "invite_expired",
            format!("expired on {}", rfc3339(invite.expires_at)),
        )
    } else {
        return Ok(());
    };
    Err(IdentityError::InviteEnded {
        code,
        message: format!("this invite {what}; ask an admin of the account for a new one"),
    })
}

/// Uses a pending invite: creates the person it names (a removed person invited again is a
/// new person, inheriting nothing of the old one) with the invite's role, marks it used, and records it. The conditional update comes first: of
/// two concurrent uses of one code exactly one goes on, and the other learns the code was
/// used (not that the person it made exists).
pub(crate) async fn join(
    tx: &mut Tx,
    invite: &InviteRow,
    name: &str,
    how: &str,
) -> Result<PersonRow, IdentityError> {
    let role = AccountRole::parse(&invite.role).unwrap_or(AccountRole::Member);
    if !rows::accept(tx, &invite.id, "", now_millis()).await? {
        return Err(IdentityError::InviteEnded {
            code: "invite_used",
            message: "this invite was used a moment ago; ask an admin for a new one".into(),
        });
    }
    if people_rows::find_by_email(tx, &invite.email)
        .await?
        .is_some()
    {
        return Err(IdentityError::AlreadyMember(invite.email.clone()));
    }
    let person = people::insert(tx, &invite.account_id, &invite.email, name, role).await?;
    rows::accept_by(tx, &invite.id, &person.id).await?;
    let me = people::person_ref(&person);
    let detail = format!("joined as {} {how}", role.as_str());
    audit::record(
        tx,
        &invite.account_id,
        Some(&me),
        Action::InviteAccepted,
        &person.email,
        &detail,
    )
    .await?;
    Ok(person)
}

/// The pending invites for an e-mail (single sign-on accepts the oldest).
pub(crate) async fn pending_for(tx: &mut Tx, email: &str) -> Result<Vec<InviteRow>, IdentityError> {
    Ok(rows::pending_for_email(tx, email, now_millis()).await?)
}
