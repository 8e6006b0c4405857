//! The account's people and its audit, as `GET /v1/account/people` and
//! `GET /v1/account/audit` answer them.

use serde::{Deserialize, Serialize};

spelled_enum! {
    /// A person's role in their account (separate from their roles on apps). Admins manage
    /// people, invites and the audit.
    pub enum AccountRole {
        /// Manages the account's people.
        Admin = "admin",
        /// Everybody else.
        Member = "member",
    }
}

/// A person as the people list shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Person {
    /// UUID.
    pub id: String,
    /// E-mail address.
    pub email: String,
    /// Display name.
    pub name: String,
    /// Account role.
    pub role: AccountRole,
    /// When they joined (RFC 3339, UTC).
    pub joined_at: String,
    /// When one of their tokens was last used (RFC 3339, UTC, to the minute), or null.
    pub last_active_at: Option<String>,
}

/// Who did something, as an invite or an audit entry names them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PersonRef {
    /// UUID.
    pub id: String,
    /// E-mail address.
    pub email: String,
}

/// One entry of the account's audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AuditEntry {
    /// Entry id.
    pub id: String,
    /// When (RFC 3339, UTC).
    pub at: String,
    /// Who did it (null for a refused sign-in: nobody was signed in).
    pub actor: Option<PersonRef>,
    /// What (the audit's action words, such as `invite.created`).
    pub action: String,
    /// Whom or what it concerns: an e-mail, or a token's name.
    pub subject: String,
    /// A short account of it.
    pub detail: String,
}

/// One page of the account's audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AuditPage {
    /// Newest first.
    pub entries: Vec<AuditEntry>,
    /// Pass as `page_token` for the next (older) page; null on the last.
    pub next_page_token: Option<String>,
}
