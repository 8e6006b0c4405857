//! eRX request (audit) records: one per enrollment request that got past authentication,
//! with its outcome and errors, read back by the admin API (`erx_request`).

use serde_json::Value;
use sqlx::Row;

use super::base::Result;
use crate::db::{Driver, Param, Tx, now};

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
/// records (so a `success` record never exists without them): on the request's transaction,
/// or on the native SQLite writer's connection with the records it wrote there.
pub async fn record<D: Driver>(
    d: &mut D,
    external_id: &str,
    user_id: i64,
    payload: &str,
    outcome: &str,
    errors: &Value,
    care_plan_external_id: Option<&str>,
) -> std::result::Result<(), D::Error> {
    let p = D::PLACEHOLDER;
    let sql = format!(
        "INSERT INTO erx_request (external_id, user_id, received_at, payload, outcome, errors, \
         care_plan_external_id) VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {p}6, {p}7)"
    );
    let errors = errors.to_string();
    let params = [
        Param::from(external_id),
        Param::from(user_id),
        Param::from(now()),
        Param::from(payload),
        Param::from(outcome),
        Param::from(errors.as_str()),
        Param::from(care_plan_external_id),
    ];
    d.execute(sql, &params).await
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
