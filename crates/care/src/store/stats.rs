//! Row counts for `GET /admin/stats`.

use sqlx::Row;

use super::base::Result;
use crate::db::Tx;

/// The tables counted, in the order they are reported.
pub const COUNTED_TABLES: &[&str] = &[
    "care_plan",
    "account",
    "contact_point",
    "consent",
    "member_plan",
    "prescription",
    "additional_record",
    "record_field",
    "erx_request",
    "data_request",
    "data_request_history",
    "app_user",
];

/// The number of rows of every table of [`COUNTED_TABLES`].
pub async fn row_counts(tx: &mut Tx) -> Result<Vec<(&'static str, i64)>> {
    let mut out = Vec::with_capacity(COUNTED_TABLES.len());
    for table in COUNTED_TABLES {
        // The table names are the constants above, never input.
        let sql = format!("SELECT COUNT(*) FROM {table}");
        let n: i64 = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_one(&mut **tx)
            .await?
            .try_get(0)?;
        out.push((*table, n));
    }
    Ok(out)
}

/// How many data requests (missing-information requests) have each status, for
/// `{base}/metrics`; statuses without a request are left out.
pub async fn data_requests_by_status(tx: &mut Tx) -> Result<Vec<(String, i64)>> {
    let rows = sqlx::query("SELECT status, COUNT(*) FROM data_request GROUP BY status")
        .fetch_all(&mut **tx)
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect()
}
