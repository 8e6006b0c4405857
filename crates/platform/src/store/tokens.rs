//! Bearer tokens as stored: only their SHA-256 (a leaked database leaks no working token).

use sqlx::Row;

use crate::db::{Tx, now_millis};
use crate::model::{Caller, Token};

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
