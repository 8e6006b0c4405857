//! `identity_audit` rows.

use sqlx::Row;

use slipway_server::db::Tx;
use slipway_server::db::native::database_error;
use slipway_server::db::native::rusqlite::{self, Connection};

/// An audit row.
#[derive(Debug, Clone)]
pub(crate) struct AuditRow {
    pub id: String,
    pub account_id: String,
    pub at: i64,
    pub actor_id: Option<String>,
    pub actor_email: Option<String>,
    pub action: String,
    pub subject: String,
    pub detail: String,
}

/// Stores an entry.
pub(crate) async fn insert(tx: &mut Tx, e: &AuditRow) -> Result<(), sqlx::Error> {
    insert_many(tx, std::slice::from_ref(e)).await
}

/// Inserts `entries` in as few statements as the databases' parameter limits allow (one for
/// a batch of tool calls, where a statement each cost a round trip each).
pub(crate) async fn insert_many(tx: &mut Tx, entries: &[AuditRow]) -> Result<(), sqlx::Error> {
    const COLUMNS: usize = 8;
    for chunk in entries.chunks(64) {
        let mut sql = String::from(
            "INSERT INTO identity_audit (id, account_id, at, actor_id, actor_email, action, \
             subject, detail) VALUES ",
        );
        for row in 0..chunk.len() {
            if row > 0 {
                sql.push_str(", ");
            }
            let first = row * COLUMNS + 1;
            let marks: Vec<String> = (first..first + COLUMNS).map(|n| format!("${n}")).collect();
            sql.push('(');
            sql.push_str(&marks.join(", "));
            sql.push(')');
        }
        // Only numbered placeholders are formatted into it; every value is bound.
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for e in chunk {
            query = query
                .bind(e.id.clone())
                .bind(e.account_id.clone())
                .bind(e.at)
                .bind(e.actor_id.clone())
                .bind(e.actor_email.clone())
                .bind(e.action.clone())
                .bind(e.subject.clone())
                .bind(e.detail.clone());
        }
        query.execute(&mut **tx).await?;
    }
    Ok(())
}

/// Inserts `entry` on a native SQLite connection with its actor named by the person row it
/// points at, in the same statement (cached by the connection); a person who is not there
/// inserts nothing, as [`crate::tokens::record`] leaves such entries out. Whether it was
/// inserted is the answer.
pub(crate) fn insert_naming_actor_native(
    conn: &Connection,
    e: &AuditRow,
) -> Result<bool, sqlx::Error> {
    let mut statement = conn
        .prepare_cached(
            "INSERT INTO identity_audit (id, account_id, at, actor_id, actor_email, action, \
             subject, detail) \
             SELECT ?1, ?2, ?3, u.id, u.email, ?4, ?5, ?6 FROM account_user u WHERE u.id = ?7",
        )
        .map_err(database_error)?;
    let inserted = statement
        .execute(rusqlite::params![
            e.id,
            e.account_id,
            e.at,
            e.action,
            e.subject,
            e.detail,
            e.actor_id,
        ])
        .map_err(database_error)?;
    Ok(inserted == 1)
}

/// Up to `limit` entries of the account, newest first, older than `before` (`at`, `id`).
pub(crate) async fn page(
    tx: &mut Tx,
    account_id: &str,
    before: Option<(i64, String)>,
    limit: i64,
) -> Result<Vec<AuditRow>, sqlx::Error> {
    let columns = "id, account_id, at, actor_id, actor_email, action, subject, detail";
    let rows = match before {
        None => {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {columns} FROM identity_audit WHERE account_id = $1 \
                 ORDER BY at DESC, id DESC LIMIT $2"
            )))
            .bind(account_id.to_owned())
            .bind(limit)
            .fetch_all(&mut **tx)
            .await?
        }
        Some((at, id)) => {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {columns} FROM identity_audit WHERE account_id = $1 \
                 AND (at < $2 OR (at = $2 AND id < $3)) ORDER BY at DESC, id DESC LIMIT $4"
            )))
            .bind(account_id.to_owned())
            .bind(at)
            .bind(id)
            .bind(limit)
            .fetch_all(&mut **tx)
            .await?
        }
    };
    rows.iter()
        .map(|r| {
            Ok(AuditRow {
                id: r.try_get(0)?,
                account_id: r.try_get(1)?,
                at: r.try_get(2)?,
                actor_id: r.try_get(3)?,
                actor_email: r.try_get(4)?,
                action: r.try_get(5)?,
                subject: r.try_get(6)?,
                detail: r.try_get(7)?,
            })
        })
        .collect()
}
