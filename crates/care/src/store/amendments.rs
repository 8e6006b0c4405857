//! Amendments of answered missing-information requests (`data_request_amendment`) and the
//! values an answer put on its records, read back for the answer's views.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::Row;

use super::base::Result;
use super::records::{self, AccountColumn};
use crate::auth::objects;
use crate::db::{Tx, now};
use crate::model::Resolved;

/// One field an amendment changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changed {
    /// The requested field's UUID.
    pub uuid: String,
    /// Its label when it was changed.
    pub label: String,
    /// Its value before (as text; `None` when it had none). Kept in the database so an
    /// earlier answer is never lost; no view but the care admin's shows it, and no log.
    pub previous: Option<String>,
}

/// One amendment, as the answer's history shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amendment {
    /// Unix time in seconds.
    pub at: i64,
    /// External ID of who made it (as they were then).
    pub by_id: Option<String>,
    /// Their name (as it was then).
    pub by_name: Option<String>,
    /// The fields it changed.
    pub changed: Vec<Changed>,
}

/// Records an amendment by `user_id` of request `data_request_id` and marks the request
/// amended, in the caller's transaction (with the values it wrote).
pub async fn record(
    tx: &mut Tx,
    data_request_id: i64,
    user_id: i64,
    changed: &[Changed],
) -> Result<()> {
    let at = now();
    let changes = serde_json::to_string(changed).unwrap_or_else(|_| "[]".to_owned());
    sqlx::query(
        "INSERT INTO data_request_amendment (data_request_id, at, user_id, user_external_id, \
         user_name, changes) SELECT $1, $2, u.id, u.external_id, u.name, $4 \
         FROM (SELECT 1 AS one) one LEFT JOIN app_user u ON u.id = $3",
    )
    .bind(data_request_id)
    .bind(at)
    .bind(user_id)
    .bind(changes)
    .execute(&mut **tx)
    .await?;
    sqlx::query("UPDATE data_request SET amended_at = $1, updated_at = $1 WHERE id = $2")
        .bind(at)
        .bind(data_request_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The amendments of a request, oldest first.
pub async fn list(tx: &mut Tx, data_request_id: i64) -> Result<Vec<Amendment>> {
    let rows = sqlx::query(
        "SELECT at, user_external_id, user_name, changes FROM data_request_amendment \
         WHERE data_request_id = $1 ORDER BY id",
    )
    .bind(data_request_id)
    .fetch_all(&mut **tx)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let changes: String = r.try_get(3)?;
        out.push(Amendment {
            at: r.try_get(0)?,
            by_id: r.try_get(1)?,
            by_name: r.try_get(2)?,
            changed: serde_json::from_str(&changes).unwrap_or_default(),
        });
    }
    Ok(out)
}

/// The values the request's fields hold on their records now, by field UUID (a field
/// without a value is absent): what the answer put there, or an amendment since.
pub async fn current_values(tx: &mut Tx, r: &Resolved) -> Result<HashMap<String, Value>> {
    let patient = records::patient(tx, r.patient_account_id).await?;
    let account = records::record_fields(tx, objects::ACCOUNT, r.patient_account_id).await?;
    let plan = records::record_fields(tx, objects::CARE_PLAN, r.care_plan_id).await?;
    let mut out = HashMap::new();
    for f in &r.fields {
        let value = if f.target_object == objects::CARE_PLAN {
            plan.get(&f.target_field).cloned()
        } else {
            match AccountColumn::for_field(&f.target_field) {
                Some(column) => patient
                    .as_ref()
                    .and_then(|p| column.of(p).clone())
                    .map(Value::String),
                None => account.get(&f.target_field).cloned(),
            }
        };
        if let Some(v) = value.filter(|v| !v.is_null()) {
            out.insert(f.uuid.clone(), v);
        }
    }
    Ok(out)
}
