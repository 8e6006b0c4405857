//! `oauth_client`, `oauth_request` and `oauth_grant` rows (docs/mcp.md): clients that sign
//! assistants in, authorization requests from the browser's visit to the code's exchange, and
//! the grants people made. Codes and refresh tokens are kept as their SHA-256 only.

use sqlx::Row;

use slipway_server::db::Tx;

/// A client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientRow {
    pub id: String,
    pub name: String,
    /// JSON list.
    pub redirect_uris: String,
}

pub(crate) async fn insert_client(tx: &mut Tx, c: &ClientRow, now: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO oauth_client (id, name, redirect_uris, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris",
    )
    .bind(c.id.clone())
    .bind(c.name.clone())
    .bind(c.redirect_uris.clone())
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub(crate) async fn client(tx: &mut Tx, id: &str) -> Result<Option<ClientRow>, sqlx::Error> {
    sqlx::query("SELECT id, name, redirect_uris FROM oauth_client WHERE id = $1")
        .bind(id.to_owned())
        .fetch_optional(&mut **tx)
        .await?
        .map(|r| {
            Ok(ClientRow {
                id: r.try_get(0)?,
                name: r.try_get(1)?,
                redirect_uris: r.try_get(2)?,
            })
        })
        .transpose()
}

/// An authorization request, with its client's name.
#[derive(Debug, Clone)]
pub(crate) struct RequestRow {
    pub id: String,
    pub user_code: String,
    pub client_id: String,
    pub client_name: String,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub code_challenge: String,
    pub resource: String,
    pub asked_scope: String,
    pub expires_at: i64,
    pub user_id: Option<String>,
    pub scope: Option<String>,
    pub denied_at: Option<i64>,
    pub code_used_at: Option<i64>,
}

const REQUEST_COLUMNS: &str = "r.id, r.user_code, r.client_id, c.name, r.redirect_uri, r.state, \
     r.code_challenge, r.resource, r.asked_scope, r.expires_at, r.user_id, r.scope, r.denied_at, \
     r.code_used_at";

fn request_row(r: &sqlx::any::AnyRow) -> Result<RequestRow, sqlx::Error> {
    Ok(RequestRow {
        id: r.try_get(0)?,
        user_code: r.try_get(1)?,
        client_id: r.try_get(2)?,
        client_name: r.try_get(3)?,
        redirect_uri: r.try_get(4)?,
        state: r.try_get(5)?,
        code_challenge: r.try_get(6)?,
        resource: r.try_get(7)?,
        asked_scope: r.try_get(8)?,
        expires_at: r.try_get(9)?,
        user_id: r.try_get(10)?,
        scope: r.try_get(11)?,
        denied_at: r.try_get(12)?,
        code_used_at: r.try_get(13)?,
    })
}

/// A new request to store.
pub(crate) struct NewRequest<'a> {
    pub id: &'a str,
    pub user_code: &'a str,
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub state: Option<&'a str>,
    pub code_challenge: &'a str,
    pub resource: &'a str,
    pub asked_scope: &'a str,
    pub created_at: i64,
    pub expires_at: i64,
}

pub(crate) async fn insert_request(tx: &mut Tx, r: &NewRequest<'_>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO oauth_request (id, user_code, client_id, redirect_uri, state, code_challenge, \
         resource, asked_scope, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(r.id.to_owned())
    .bind(r.user_code.to_owned())
    .bind(r.client_id.to_owned())
    .bind(r.redirect_uri.to_owned())
    .bind(r.state.map(str::to_owned))
    .bind(r.code_challenge.to_owned())
    .bind(r.resource.to_owned())
    .bind(r.asked_scope.to_owned())
    .bind(r.created_at)
    .bind(r.expires_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The request whose `column` (`r.id`, `r.user_code` or `r.code_hash`) is `value`.
pub(crate) async fn request_by(
    tx: &mut Tx,
    column: &'static str,
    value: &str,
) -> Result<Option<RequestRow>, sqlx::Error> {
    let sql = format!(
        "SELECT {REQUEST_COLUMNS} FROM oauth_request r JOIN oauth_client c ON c.id = r.client_id \
         WHERE {column} = $1"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(value.to_owned())
        .fetch_optional(&mut **tx)
        .await?
        .map(|r| request_row(&r))
        .transpose()
}

pub(crate) async fn set_asked(tx: &mut Tx, id: &str, scope: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE oauth_request SET asked_scope = $1 WHERE id = $2 AND user_id IS NULL \
         AND denied_at IS NULL",
    )
    .bind(scope.to_owned())
    .bind(id.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Approves a pending request; false when it was no longer pending.
pub(crate) async fn approve(
    tx: &mut Tx,
    id: &str,
    user_id: &str,
    scope: &str,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE oauth_request SET user_id = $1, scope = $2 WHERE id = $3 AND user_id IS NULL \
         AND denied_at IS NULL",
    )
    .bind(user_id.to_owned())
    .bind(scope.to_owned())
    .bind(id.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub(crate) async fn deny(tx: &mut Tx, id: &str, now: i64) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE oauth_request SET denied_at = $1 WHERE id = $2 AND user_id IS NULL \
         AND denied_at IS NULL",
    )
    .bind(now)
    .bind(id.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Sets the (hash of the) authorization code handed out and when it stops working.
pub(crate) async fn set_code(
    tx: &mut Tx,
    id: &str,
    code_hash: &str,
    expires_at: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE oauth_request SET code_hash = $1, expires_at = $2 WHERE id = $3 \
         AND code_used_at IS NULL",
    )
    .bind(code_hash.to_owned())
    .bind(expires_at)
    .bind(id.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Marks the code used; false when it was used already (a replay).
pub(crate) async fn use_code(tx: &mut Tx, id: &str, now: i64) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE oauth_request SET code_used_at = $1 WHERE id = $2 AND code_used_at IS NULL",
    )
    .bind(now)
    .bind(id.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// A grant.
#[derive(Debug, Clone)]
pub(crate) struct GrantRow {
    pub id: String,
    pub user_id: String,
    pub client_id: String,
    pub client_name: String,
    pub scope: String,
    pub resource: String,
    pub refresh_expires_at: i64,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
}

const GRANT_COLUMNS: &str = "g.id, g.user_id, g.client_id, g.client_name, g.scope, g.resource, \
     g.refresh_expires_at, g.created_at, \
     (SELECT MAX(t.last_used_at) FROM api_token t WHERE t.grant_id = g.id)";

fn grant_row(r: &sqlx::any::AnyRow) -> Result<GrantRow, sqlx::Error> {
    Ok(GrantRow {
        id: r.try_get(0)?,
        user_id: r.try_get(1)?,
        client_id: r.try_get(2)?,
        client_name: r.try_get(3)?,
        scope: r.try_get(4)?,
        resource: r.try_get(5)?,
        refresh_expires_at: r.try_get(6)?,
        created_at: r.try_get(7)?,
        last_used_at: r.try_get(8)?,
    })
}

pub(crate) async fn insert_grant(
    tx: &mut Tx,
    g: &GrantRow,
    refresh_hash: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO oauth_grant (id, user_id, client_id, client_name, scope, resource, \
         refresh_hash, refresh_expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(g.id.clone())
    .bind(g.user_id.clone())
    .bind(g.client_id.clone())
    .bind(g.client_name.clone())
    .bind(g.scope.clone())
    .bind(g.resource.clone())
    .bind(refresh_hash.to_owned())
    .bind(g.refresh_expires_at)
    .bind(g.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub(crate) async fn grant_by_refresh(
    tx: &mut Tx,
    refresh_hash: &str,
) -> Result<Option<GrantRow>, sqlx::Error> {
    let sql = format!("SELECT {GRANT_COLUMNS} FROM oauth_grant g WHERE g.refresh_hash = $1");
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(refresh_hash.to_owned())
        .fetch_optional(&mut **tx)
        .await?
        .map(|r| grant_row(&r))
        .transpose()
}

/// Replaces the grant's refresh token (the old one stops working).
pub(crate) async fn rotate_refresh(
    tx: &mut Tx,
    id: &str,
    old_hash: &str,
    new_hash: &str,
    expires_at: i64,
    now: i64,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE oauth_grant SET refresh_hash = $1, refresh_expires_at = $2, refreshed_at = $3 \
         WHERE id = $4 AND refresh_hash = $5",
    )
    .bind(new_hash.to_owned())
    .bind(expires_at)
    .bind(now)
    .bind(id.to_owned())
    .bind(old_hash.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub(crate) async fn grants_of(tx: &mut Tx, user_id: &str) -> Result<Vec<GrantRow>, sqlx::Error> {
    let sql = format!(
        "SELECT {GRANT_COLUMNS} FROM oauth_grant g WHERE g.user_id = $1 \
         ORDER BY g.created_at DESC, g.id"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(user_id.to_owned())
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(grant_row).collect()
}

/// Deletes the grant and its access tokens; false when the person has no such grant.
pub(crate) async fn delete_grant(
    tx: &mut Tx,
    user_id: &str,
    id: &str,
) -> Result<bool, sqlx::Error> {
    sqlx::query("DELETE FROM api_token WHERE grant_id = $1 AND user_id = $2")
        .bind(id.to_owned())
        .bind(user_id.to_owned())
        .execute(&mut **tx)
        .await?;
    let done = sqlx::query("DELETE FROM oauth_grant WHERE id = $1 AND user_id = $2")
        .bind(id.to_owned())
        .bind(user_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(done.rows_affected() == 1)
}
