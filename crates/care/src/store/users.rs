//! Users of the care services (`app_user`, `user_permission`) as the admin API manages them.
//!
//! Creating a user and reading or replacing its permission entries hash tokens or share the
//! caller's queries, so their SQL stays in `auth.rs` (being moved with the token plumbing);
//! they are re-exported here so that callers find every user operation in one place.

use sqlx::Row;

use super::Result;
use crate::db::Tx;

pub use crate::auth::{create_user as create, list_grants, replace_grants};

/// A user as listed (never its token).
#[derive(Debug, Clone)]
pub struct UserRow {
    /// Row id (permission entries point to it).
    pub row_id: i64,
    /// The external id the admin API shows.
    pub external_id: String,
    /// Display name.
    pub name: String,
    /// Whether the user is an admin.
    pub admin: bool,
}

/// Every user, ordered by name.
pub async fn list(tx: &mut Tx) -> Result<Vec<UserRow>> {
    let rows =
        sqlx::query("SELECT id, external_id, name, is_admin FROM app_user ORDER BY name, id")
            .fetch_all(&mut **tx)
            .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        out.push(UserRow {
            row_id: r.try_get(0)?,
            external_id: r.try_get(1)?,
            name: r.try_get(2)?,
            admin: r.try_get::<i64, _>(3)? != 0,
        });
    }
    Ok(out)
}

/// The row id of the user with this external id.
pub async fn row_id(tx: &mut Tx, external_id: &str) -> Result<Option<i64>> {
    let row = sqlx::query("SELECT id FROM app_user WHERE external_id = $1")
        .bind(external_id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    Ok(row.map(|r| r.try_get(0)).transpose()?)
}

/// Deletes a user and its permission entries.
pub async fn delete(tx: &mut Tx, row_id: i64) -> Result<()> {
    sqlx::query("DELETE FROM user_permission WHERE user_id = $1")
        .bind(row_id)
        .execute(&mut **tx)
        .await?;
    sqlx::query("DELETE FROM app_user WHERE id = $1")
        .bind(row_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// How many users there are.
pub async fn count(tx: &mut Tx) -> Result<i64> {
    Ok(sqlx::query("SELECT COUNT(*) FROM app_user")
        .fetch_one(&mut **tx)
        .await?
        .try_get(0)?)
}
