//! The counts `GET /metrics` reads when it is scraped: apps, builds and deployments of every
//! account by status, one `GROUP BY` each (builds and deployments over their status index).

use sqlx::Row;

use crate::db::Tx;

/// A table counted by status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// `app`.
    Apps,
    /// `build`.
    Builds,
    /// `deployment`.
    Deployments,
}

impl Counted {
    fn table(self) -> &'static str {
        match self {
            Counted::Apps => "app",
            Counted::Builds => "build",
            Counted::Deployments => "deployment",
        }
    }
}

/// How many rows of `what` have each stored status (statuses without a row are left out).
pub async fn by_status(tx: &mut Tx, what: Counted) -> Result<Vec<(String, i64)>, sqlx::Error> {
    // The table name is one of the constants above, never input.
    let sql = format!(
        "SELECT status, COUNT(*) FROM {} GROUP BY status",
        what.table()
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(&mut **tx)
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect()
}
