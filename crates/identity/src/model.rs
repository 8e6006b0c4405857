//! The identity values the other modules and the platform pass around. Plain data, no I/O.

/// The account role, as `slipway-api` spells it for the server and its clients.
pub use slipway_api::AccountRole;
/// What a token may do, as `slipway-api` spells it.
pub use slipway_api::TokenScope;

/// The role a stored `account_role` holds: rows from before the identity migration said
/// `owner` for the user an account was created with, who is an admin; anything else not
/// named is a member.
pub(crate) fn role_from_stored(raw: &str) -> AccountRole {
    match raw {
        "owner" => AccountRole::Admin,
        other => AccountRole::parse(other).unwrap_or(AccountRole::Member),
    }
}

/// The authenticated person behind a request. Serialisable so that the tool server's
/// in-process API requests can carry the caller it authenticated (never over a network).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Caller {
    /// The person's UUID.
    pub user_id: String,
    /// Their account; nothing of another account is ever visible.
    pub account_id: String,
    /// Their account role when the request began.
    pub role: AccountRole,
    /// The id of the token the request came with (a token list marks it `current`).
    pub token_id: String,
    /// What that token may do: the person's rights bound what a request may do, and the
    /// token's scope narrows them further.
    pub scope: TokenScope,
    /// The assistant's grant the token was issued for, if it was (such a token works only at
    /// the tool server; it approves and revokes nothing).
    pub grant: Option<String>,
}

impl Caller {
    /// Whether the caller may manage the account's people.
    pub fn is_admin(&self) -> bool {
        self.role == AccountRole::Admin
    }
}

/// A person as the people list shows them, and who did something as an invite or an audit
/// entry names them: `slipway-api`'s, the shapes the platform's clients read.
pub use slipway_api::{Person, PersonRef};
