//! eRX request (audit) records: one per enrollment request that got past authentication,
//! with its outcome and errors, read back by the admin API (`erx_request`).

use serde_json::Value;
use sqlx::Row;

use super::Result;
use crate::db::{Tx, now};

/// An eRX request record as the admin API shows it.
#[derive(Debug, Clone)]
pub struct ErxRequestRow {
    /// The request id (a UUID).
    pub external_id: String,
    /// Unix time in seconds.
    pub received_at: i64,
    /// `success`, `rejected`, `forbidden` or `error` (`processing` in records written before
    /// the record was written once, with its outcome).
    pub outcome: String,
    /// The error entries (`null` if unreadable).
    pub errors: Value,
    /// The care plan written, on success.
    pub care_plan_external_id: Option<String>,
    /// The raw body.
    pub payload: String,
}

/// Writes the eRX request record of a finished request, in the transaction that holds its
/// records (so a `success` record never exists without them).
pub async fn record(
    tx: &mut Tx,
    external_id: &str,
    user_id: i64,
    payload: &str,
    outcome: &str,
    errors: &Value,
    care_plan_external_id: Option<&str>,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO erx_request (external_id, user_id, received_at, payload, outcome, errors, \
         care_plan_external_id) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(external_id.to_owned())
    .bind(user_id)
    .bind(now())
    .bind(payload.to_owned())
    .bind(outcome.to_owned())
    .bind(errors.to_string())
    .bind(care_plan_external_id.map(str::to_owned))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// [`record`] on the native SQLite writer's connection.
pub fn record_native(
    conn: &slipway_server::db::native::rusqlite::Connection,
    external_id: &str,
    user_id: i64,
    payload: &str,
    outcome: &str,
    errors: &Value,
    care_plan_external_id: Option<&str>,
) -> slipway_server::db::native::rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO erx_request (external_id, user_id, received_at, payload, outcome, errors, \
         care_plan_external_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute((
        external_id,
        user_id,
        now(),
        payload,
        outcome,
        errors.to_string(),
        care_plan_external_id,
    ))?;
    Ok(())
}

/// The eRX request record with this request id.
pub async fn find(tx: &mut Tx, external_id: &str) -> Result<Option<ErxRequestRow>> {
    let row = sqlx::query(
        "SELECT external_id, received_at, outcome, errors, care_plan_external_id, payload \
         FROM erx_request WHERE external_id = $1",
    )
    .bind(external_id.to_owned())
    .fetch_optional(&mut **tx)
    .await?;
    let Some(r) = row else { return Ok(None) };
    let errors: String = r.try_get(3)?;
    Ok(Some(ErxRequestRow {
        external_id: r.try_get(0)?,
        received_at: r.try_get(1)?,
        outcome: r.try_get(2)?,
        errors: serde_json::from_str(&errors).unwrap_or(Value::Null),
        care_plan_external_id: r.try_get(4)?,
        payload: r.try_get(5)?,
    }))
}
