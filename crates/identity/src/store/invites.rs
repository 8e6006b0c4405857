//! `account_invite` rows. Only an invite code's SHA-256 is stored.

use sqlx::Row;
use sqlx::any::AnyRow;

use slipway_server::db::Tx;

/// An invite's row.
#[derive(Debug, Clone)]
pub(crate) struct InviteRow {
    pub id: String,
    pub account_id: String,
    pub email: String,
    pub role: String,
    pub invited_by: String,
    pub invited_by_email: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub accepted_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

const SELECT: &str = "SELECT i.id, i.account_id, i.email, i.role, i.invited_by, u.email, \
     i.created_at, i.expires_at, i.accepted_at, i.revoked_at \
     FROM account_invite i JOIN account_user u ON u.id = i.invited_by";

fn row(r: &AnyRow) -> Result<InviteRow, sqlx::Error> {
    Ok(InviteRow {
        id: r.try_get(0)?,
        account_id: r.try_get(1)?,
        email: r.try_get(2)?,
        role: r.try_get(3)?,
        invited_by: r.try_get(4)?,
        invited_by_email: r.try_get(5)?,
        created_at: r.try_get(6)?,
        expires_at: r.try_get(7)?,
        accepted_at: r.try_get(8)?,
        revoked_at: r.try_get(9)?,
    })
}

/// Stores an invite.
pub(crate) async fn insert(
    tx: &mut Tx,
    invite: &InviteRow,
    code_hash: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO account_invite (id, account_id, email, role, code_hash, invited_by, \
         created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(invite.id.clone())
    .bind(invite.account_id.clone())
    .bind(invite.email.clone())
    .bind(invite.role.clone())
    .bind(code_hash.to_owned())
    .bind(invite.invited_by.clone())
    .bind(invite.created_at)
    .bind(invite.expires_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The account's pending invites (neither accepted nor revoked, not expired at `now`),
/// newest first. With `email`, only those for that address (any case).
pub(crate) async fn pending(
    tx: &mut Tx,
    account_id: &str,
    email: Option<&str>,
    now: i64,
) -> Result<Vec<InviteRow>, sqlx::Error> {
    let filter = if email.is_some() {
        " AND lower(i.email) = lower($3)"
    } else {
        ""
    };
    let sql = format!(
        "{SELECT} WHERE i.account_id = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL \
         AND i.expires_at > $2{filter} ORDER BY i.created_at DESC, i.id"
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(account_id.to_owned())
        .bind(now);
    if let Some(email) = email {
        query = query.bind(email.to_owned());
    }
    query.fetch_all(&mut **tx).await?.iter().map(row).collect()
}

/// Every pending invite for an e-mail address, in any account, oldest first.
pub(crate) async fn pending_for_email(
    tx: &mut Tx,
    email: &str,
    now: i64,
) -> Result<Vec<InviteRow>, sqlx::Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "{SELECT} WHERE lower(i.email) = lower($1) AND i.accepted_at IS NULL \
         AND i.revoked_at IS NULL AND i.expires_at > $2 ORDER BY i.created_at, i.id"
    )))
    .bind(email.to_owned())
    .bind(now)
    .fetch_all(&mut **tx)
    .await?
    .iter()
    .map(row)
    .collect()
}

/// The invite whose code has this hash.
pub(crate) async fn by_code(
    tx: &mut Tx,
    code_hash: &str,
) -> Result<Option<InviteRow>, sqlx::Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "{SELECT} WHERE i.code_hash = $1"
    )))
    .bind(code_hash.to_owned())
    .fetch_optional(&mut **tx)
    .await?
    .as_ref()
    .map(row)
    .transpose()
}

/// Revokes a pending invite of the account; whether one was pending.
pub(crate) async fn revoke(
    tx: &mut Tx,
    account_id: &str,
    id: &str,
    now: i64,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE account_invite SET revoked_at = $1 WHERE account_id = $2 AND id = $3 \
         AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $1",
    )
    .bind(now)
    .bind(account_id.to_owned())
    .bind(id.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Marks an invite used by `user_id`; whether it was still pending (a concurrent accept of
/// the same code finds it used).
pub(crate) async fn accept(
    tx: &mut Tx,
    id: &str,
    user_id: &str,
    now: i64,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE account_invite SET accepted_at = $1, accepted_by = $2 WHERE id = $3 \
         AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $1",
    )
    .bind(now)
    .bind(user_id.to_owned())
    .bind(id.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Names the person an accepted invite made (known only after the accept).
pub(crate) async fn accept_by(tx: &mut Tx, id: &str, user_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE account_invite SET accepted_by = $1 WHERE id = $2")
        .bind(user_id.to_owned())
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The pending invites `user_id` made, in any account.
pub(crate) async fn pending_by_inviter(
    tx: &mut Tx,
    user_id: &str,
    now: i64,
) -> Result<Vec<InviteRow>, sqlx::Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "{SELECT} WHERE i.invited_by = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL \
         AND i.expires_at > $2 ORDER BY i.created_at, i.id"
    )))
    .bind(user_id.to_owned())
    .bind(now)
    .fetch_all(&mut **tx)
    .await?
    .iter()
    .map(row)
    .collect()
}
