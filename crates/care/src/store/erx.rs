//! eRX request (audit) records: written at the start of every enrollment, finished with its
//! outcome and errors, read back by the admin API (`erx_request`).

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
    /// `processing`, `success`, `rejected`, `forbidden` or `error`.
    pub outcome: String,
    /// The error entries (`null` if unreadable).
    pub errors: Value,
    /// The care plan written, on success.
    pub care_plan_external_id: Option<String>,
    /// The raw body.
    pub payload: String,
}

/// Creates the eRX request record at the start of the request's transaction; its row id.
pub async fn insert_request(
    tx: &mut Tx,
    external_id: &str,
    user_id: i64,
    payload: &str,
) -> Result<i64> {
    let row = sqlx::query(
        "INSERT INTO erx_request (external_id, user_id, received_at, payload, outcome) \
         VALUES ($1, $2, $3, $4, 'processing') RETURNING id",
    )
    .bind(external_id.to_owned())
    .bind(user_id)
    .bind(now())
    .bind(payload.to_owned())
    .fetch_one(&mut **tx)
    .await?;
    Ok(row.try_get(0)?)
}

/// Records the outcome and errors of an eRX request.
pub async fn finish_request(
    tx: &mut Tx,
    id: i64,
    outcome: &str,
    errors: &Value,
    care_plan_external_id: Option<&str>,
) -> Result<()> {
    sqlx::query(
        "UPDATE erx_request SET outcome = $2, errors = $3, care_plan_external_id = $4 WHERE id = $1",
    )
    .bind(id)
    .bind(outcome.to_owned())
    .bind(errors.to_string())
    .bind(care_plan_external_id.map(str::to_owned))
    .execute(&mut **tx)
    .await?;
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
