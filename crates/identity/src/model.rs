//! The identity values the other modules and the platform pass around. Plain data, no I/O.

use serde::Serialize;

/// A person's role in their account. Admins manage people, invites and the audit; app roles
/// (owner, editor, viewer) are separate and unchanged by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AccountRole {
    /// Manages the account's people.
    Admin,
    /// Everybody else.
    Member,
}

impl AccountRole {
    /// The stored and displayed spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AccountRole::Admin => "admin",
            AccountRole::Member => "member",
        }
    }

    /// The role a stored or requested name stands for.
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "admin" => Some(AccountRole::Admin),
            "member" => Some(AccountRole::Member),
            _ => None,
        }
    }

    /// The role a stored `account_role` holds: rows from before the identity migration said
    /// `owner` for the user an account was created with, who is an admin; anything else not
    /// named is a member.
    pub(crate) fn from_stored(raw: &str) -> Self {
        match raw {
            "owner" => AccountRole::Admin,
            other => AccountRole::parse(other).unwrap_or(AccountRole::Member),
        }
    }
}

/// The authenticated person behind a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The person's UUID.
    pub user_id: String,
    /// Their account; nothing of another account is ever visible.
    pub account_id: String,
    /// Their account role when the request began.
    pub role: AccountRole,
    /// The id of the token the request came with (a token list marks it `current`).
    pub token_id: String,
}

impl Caller {
    /// Whether the caller may manage the account's people.
    pub fn is_admin(&self) -> bool {
        self.role == AccountRole::Admin
    }
}

/// A person as the people list shows them.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
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
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PersonRef {
    /// UUID.
    pub id: String,
    /// E-mail address.
    pub email: String,
}
