//! Account members as the sharing endpoints name them. People themselves (their roles,
//! invites, tokens, removal) are `slipway_identity`'s; this keeps the platform's narrower
//! view of them, which `GET /v1/apps/{id}/permissions` and grants use.

use serde::Serialize;

use crate::db::Tx;
use slipway_identity::IdentityError;

/// A person as the sharing endpoints show them.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Member {
    /// The person's UUID.
    pub id: String,
    /// E-mail address.
    pub email: String,
    /// Display name.
    pub name: String,
}

impl From<slipway_identity::Person> for Member {
    fn from(p: slipway_identity::Person) -> Self {
        Member {
            id: p.id,
            email: p.email,
            name: p.name,
        }
    }
}

/// The living member of `account_id` that `ident` names: a UUID, or an e-mail address
/// (any case). `None` when no member of this account matches (a removed person does not).
pub async fn find_member(
    tx: &mut Tx,
    account_id: &str,
    ident: &str,
) -> Result<Option<Member>, IdentityError> {
    Ok(slipway_identity::people::find(tx, account_id, ident)
        .await?
        .map(Member::from))
}
