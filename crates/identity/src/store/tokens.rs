//! `api_token` rows: only a token's SHA-256 is stored (a leaked database leaks no working
//! token), with an id, a name, a lifetime and the last use.

use sqlx::Row;

use crate::model::AccountRole;
use slipway_server::db::Tx;
use slipway_server::db::native::database_error;
use slipway_server::db::native::rusqlite::{self, Connection};

/// What a token lookup finds: the token and its living person.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub token_id: String,
    pub user_id: String,
    pub account_id: String,
    pub role: String,
    pub expires_at: Option<i64>,
    pub last_used_at: Option<i64>,
    /// The stored scope (JSON), NULL for the person's whole right.
    pub scope: Option<String>,
    /// The assistant's grant it was issued for (its access tokens work at `/mcp` only).
    pub grant_id: Option<String>,
}

/// A token as its owner lists it.
#[derive(Debug, Clone)]
pub(crate) struct TokenRow {
    pub id: String,
    pub name: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub last_used_at: Option<i64>,
    pub scope: Option<String>,
}

/// A token to store.
pub(crate) struct NewToken<'a> {
    pub hash: String,
    pub id: &'a str,
    pub user_id: &'a str,
    pub name: &'a str,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    /// JSON, or NULL for the person's whole right.
    pub scope: Option<String>,
    /// The grant an access token belongs to.
    pub grant_id: Option<&'a str>,
}

/// Stores a token's hash.
pub(crate) async fn insert(tx: &mut Tx, token: &NewToken<'_>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO api_token (token_hash, id, user_id, name, created_at, expires_at, scope, \
         grant_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(token.hash.clone())
    .bind(token.id.to_owned())
    .bind(token.user_id.to_owned())
    .bind(token.name.to_owned())
    .bind(token.created_at)
    .bind(token.expires_at)
    .bind(token.scope.clone())
    .bind(token.grant_id.map(str::to_owned))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The token with this hash, when its person is not removed.
const LOOKUP: &str = "SELECT t.id, u.id, u.account_id, u.account_role, t.expires_at, \
     t.last_used_at, t.scope, t.grant_id \
     FROM api_token t JOIN account_user u ON u.id = t.user_id \
     WHERE t.token_hash = $1 AND u.removed_at IS NULL";

/// The token with this hash, when its person is not removed.
pub(crate) async fn lookup(tx: &mut Tx, hash: &str) -> Result<Option<Found>, sqlx::Error> {
    let r = sqlx::query(LOOKUP)
        .bind(hash.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    r.map(|r| {
        Ok(Found {
            token_id: r.try_get(0)?,
            user_id: r.try_get(1)?,
            account_id: r.try_get(2)?,
            role: r.try_get(3)?,
            expires_at: r.try_get(4)?,
            last_used_at: r.try_get(5)?,
            scope: r.try_get(6)?,
            grant_id: r.try_get(7)?,
        })
    })
    .transpose()
}

/// [`lookup`] on a native SQLite connection (see `slipway_server::db::native`).
pub(crate) fn lookup_native(conn: &Connection, hash: &str) -> Result<Option<Found>, sqlx::Error> {
    let mut statement = conn.prepare_cached(LOOKUP).map_err(database_error)?;
    let mut rows = statement.query([hash]).map_err(database_error)?;
    let Some(r) = rows.next().map_err(database_error)? else {
        return Ok(None);
    };
    let found = (|| {
        Ok::<_, rusqlite::Error>(Found {
            token_id: r.get(0)?,
            user_id: r.get(1)?,
            account_id: r.get(2)?,
            role: r.get(3)?,
            expires_at: r.get(4)?,
            last_used_at: r.get(5)?,
            scope: r.get(6)?,
            grant_id: r.get(7)?,
        })
    })()
    .map_err(database_error)?;
    Ok(Some(found))
}

impl Found {
    /// The account role the row holds.
    pub(crate) fn role(&self) -> AccountRole {
        crate::model::role_from_stored(&self.role)
    }
}

/// A person's tokens, newest first.
pub(crate) async fn list_for(tx: &mut Tx, user_id: &str) -> Result<Vec<TokenRow>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT id, name, created_at, expires_at, last_used_at, scope FROM api_token \
         WHERE user_id = $1 AND grant_id IS NULL ORDER BY created_at DESC, id",
    )
    .bind(user_id.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(TokenRow {
                id: r.try_get(0)?,
                name: r.try_get(1)?,
                created_at: r.try_get(2)?,
                expires_at: r.try_get(3)?,
                last_used_at: r.try_get(4)?,
                scope: r.try_get(5)?,
            })
        })
        .collect()
}

/// The name of one of a person's tokens.
pub(crate) async fn name_of(
    tx: &mut Tx,
    user_id: &str,
    id: &str,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query("SELECT name FROM api_token WHERE user_id = $1 AND id = $2")
        .bind(user_id.to_owned())
        .bind(id.to_owned())
        .fetch_optional(&mut **tx)
        .await?
        .map(|r| r.try_get(0))
        .transpose()
}

/// Deletes one of a person's tokens; whether there was one.
pub(crate) async fn delete(tx: &mut Tx, user_id: &str, id: &str) -> Result<bool, sqlx::Error> {
    let done = sqlx::query("DELETE FROM api_token WHERE user_id = $1 AND id = $2")
        .bind(user_id.to_owned())
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Deletes every token of a person.
pub(crate) async fn delete_all(tx: &mut Tx, user_id: &str) -> Result<u64, sqlx::Error> {
    let done = sqlx::query("DELETE FROM api_token WHERE user_id = $1")
        .bind(user_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(done.rows_affected())
}

/// Records a token's use at `now`.
pub(crate) async fn touch(tx: &mut Tx, id: &str, now: i64) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE api_token SET last_used_at = $1 WHERE id = $2")
        .bind(now)
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}
