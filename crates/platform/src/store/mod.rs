//! SQL access, one module per resource. Functions take the request's transaction so a
//! request is all-or-nothing; none of them commits.

pub mod access;
pub mod accounts;
pub mod apps;
pub mod audit;
pub mod builds;
pub mod deployments;
pub mod domains;
pub mod git;
pub mod job_runs;
pub mod metrics;
pub mod notifications;
pub mod resources;
pub mod secrets;
pub mod service_ports;
pub mod settings;

pub use slipway_server::sql_error::is_unique_violation;

use sqlx::any::AnyRow;

use crate::db::Tx;

/// The sealed value in columns `first`, `first + 1`, `first + 2` (`key_id`, `nonce`,
/// `ciphertext`) of `r`: how every table that holds one stores it.
pub(crate) fn sealed(r: &AnyRow, first: usize) -> Result<crate::model::Sealed, sqlx::Error> {
    use sqlx::Row as _;
    Ok(crate::model::Sealed {
        key_id: r.try_get(first)?,
        nonce: r.try_get(first + 1)?,
        ciphertext: r.try_get(first + 2)?,
    })
}

/// The rows of a table that belong to an app, listed newest first by `(created_at, id)`: the
/// order of an app's history, the same in a whole list and in keyset pages.
pub(crate) struct AppHistory<T> {
    /// The table (a constant: it goes into the SQL text).
    pub table: &'static str,
    /// The columns `read` expects, in its order.
    pub columns: &'static str,
    /// Reads one row.
    pub read: fn(&AnyRow) -> Result<T, sqlx::Error>,
}

impl<T> AppHistory<T> {
    /// Every row of `app_id`, newest first.
    pub(crate) async fn newest_first(
        &self,
        tx: &mut Tx,
        app_id: &str,
    ) -> Result<Vec<T>, sqlx::Error> {
        let sql = format!(
            "SELECT {} FROM {} WHERE app_id = $1 ORDER BY created_at DESC, id DESC",
            self.columns, self.table
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(app_id.to_owned())
            .fetch_all(&mut **tx)
            .await?;
        rows.iter().map(self.read).collect()
    }

    /// One page of `app_id`'s rows, newest first: at most `limit`, all older than `before`
    /// (`(created_at, id)` of the last one of the page before).
    pub(crate) async fn page(
        &self,
        tx: &mut Tx,
        app_id: &str,
        before: Option<(i64, String)>,
        limit: u32,
    ) -> Result<Vec<T>, sqlx::Error> {
        let (created, id) = before.unwrap_or((i64::MAX, String::new()));
        let sql = format!(
            "SELECT {} FROM {} WHERE app_id = $1 \
             AND (created_at < $2 OR (created_at = $2 AND id < $3)) \
             ORDER BY created_at DESC, id DESC LIMIT $4",
            self.columns, self.table
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(app_id.to_owned())
            .bind(created)
            .bind(id)
            .bind(i64::from(limit))
            .fetch_all(&mut **tx)
            .await?;
        rows.iter().map(self.read).collect()
    }
}
