//! Bearer tokens and the caller they identify. A token is 32 random bytes from the operating
//! system, shown once; the database keeps only its SHA-256, so a leaked database file does not
//! leak working tokens. Tokens never reach a log.

use sqlx::Row;

use crate::db::{Tx, now_millis};
use crate::model::Caller;

/// Prefix of every platform token, so a leaked one is recognisable in a secret scanner.
pub const TOKEN_PREFIX: &str = "slw_";

pub use slipway_server::token::Token;

/// The user a token belongs to, or `None` when the token is unknown.
pub async fn authenticate(tx: &mut Tx, token: &Token) -> Result<Option<Caller>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT u.id, u.account_id FROM api_token t JOIN account_user u ON u.id = t.user_id \
         WHERE t.token_hash = $1",
    )
    .bind(token.hash())
    .fetch_optional(&mut **tx)
    .await?;
    row.map(|r| {
        Ok(Caller {
            user_id: r.try_get(0)?,
            account_id: r.try_get(1)?,
        })
    })
    .transpose()
}

/// Stores the hash of `token` as a credential of `user_id`.
pub async fn store_token(tx: &mut Tx, user_id: &str, token: &Token) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO api_token (token_hash, user_id, created_at) VALUES ($1, $2, $3)")
        .bind(token.hash())
        .bind(user_id.to_owned())
        .bind(now_millis())
        .execute(&mut **tx)
        .await?;
    Ok(())
}
