//! Data requests of missing-information requests and their history trail
//! (`data_request`, `data_request_history`).

use sqlx::Row;

use super::groups::{field_columns, group_field};
use super::records::RequestContext;
use super::{Result, json_list};
use crate::db::{Tx, json_strings, now};
use crate::missing_info::{COMPLETED, DataRequest, DataRequestInput, HistoryEntry};

/// Finds a data request by UUID.
pub async fn find(tx: &mut Tx, uuid: &str) -> Result<Option<DataRequest>> {
    let row = sqlx::query(
        "SELECT id, external_id, care_plan_external_id, group_external_id, status, expiration_date \
         FROM data_request WHERE external_id = $1",
    )
    .bind(uuid.to_owned())
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.as_ref().map(data_request).transpose()?)
}

/// A data request from the first six columns of a row (`id`, `external_id`,
/// `care_plan_external_id`, `group_external_id`, `status`, `expiration_date`).
fn data_request(r: &sqlx::any::AnyRow) -> std::result::Result<DataRequest, sqlx::Error> {
    Ok(DataRequest {
        id: r.try_get(0)?,
        uuid: r.try_get(1)?,
        care_plan_external_id: r.try_get(2)?,
        group_external_id: r.try_get(3)?,
        status: r.try_get(4)?,
        expiration_date: r.try_get(5)?,
    })
}

/// Finds a data request by UUID together with what it refers to, in one statement (the
/// missing-information calls need both; one round trip instead of six): one row per
/// requested field of its group, or one row with NULL field columns when it has none.
pub async fn find_with_context(
    tx: &mut Tx,
    uuid: &str,
) -> Result<Option<(DataRequest, RequestContext)>> {
    let rows = sqlx::query(concat!(
        "SELECT d.id, d.external_id, d.care_plan_external_id, d.group_external_id, d.status, \
         d.expiration_date, cp.id, cp.patient_account_id, p.name, a.external_id, \
         (SELECT CAST(1 AS BIGINT) FROM mi_group g WHERE g.external_id = d.group_external_id), ",
        field_columns!(),
        " FROM data_request d \
         LEFT JOIN care_plan cp ON cp.external_id = d.care_plan_external_id \
         LEFT JOIN program p ON p.api_name = cp.program_api_name \
         LEFT JOIN account a ON a.id = cp.patient_account_id \
         LEFT JOIN mi_group_field f ON f.group_external_id = d.group_external_id \
         WHERE d.external_id = $1 ORDER BY f.position, f.external_id",
    ))
    .bind(uuid.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    let Some(r) = rows.first() else {
        return Ok(None);
    };
    let plan_id: Option<i64> = r.try_get(6)?;
    let patient_id: Option<i64> = r.try_get(7)?;
    let mut fields = Vec::with_capacity(rows.len());
    for row in &rows {
        if row.try_get::<Option<String>, _>(11)?.is_some() {
            fields.push(group_field(row, 11)?);
        }
    }
    Ok(Some((
        data_request(r)?,
        RequestContext {
            plan: plan_id.zip(patient_id),
            program_name: r.try_get(8)?,
            patient_external_id: r.try_get(9)?,
            group_exists: r.try_get::<Option<i64>, _>(10)?.is_some(),
            fields,
        },
    )))
}

/// Creates or replaces a data request.
pub async fn put(tx: &mut Tx, uuid: &str, input: &DataRequestInput) -> Result<()> {
    sqlx::query(
        "INSERT INTO data_request (external_id, care_plan_external_id, group_external_id, status, expiration_date, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (external_id) DO UPDATE SET \
         care_plan_external_id = excluded.care_plan_external_id, group_external_id = excluded.group_external_id, \
         status = excluded.status, expiration_date = excluded.expiration_date, updated_at = excluded.updated_at",
    )
    .bind(uuid.to_owned())
    .bind(input.care_plan_external_id.clone())
    .bind(input.group_external_id.clone())
    .bind(input.status.clone())
    .bind(input.expiration_date.clone())
    .bind(now())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Deletes the data request with this external ID (as given, not normalised); whether there
/// was one. Its history is kept.
pub async fn delete(tx: &mut Tx, external_id: &str) -> Result<bool> {
    let done = sqlx::query("DELETE FROM data_request WHERE external_id = $1")
        .bind(external_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Marks a request `Completed` after a successful POST.
pub async fn complete(tx: &mut Tx, req: &DataRequest) -> Result<()> {
    sqlx::query("UPDATE data_request SET status = $1, updated_at = $2 WHERE id = $3")
        .bind(COMPLETED)
        .bind(now())
        .bind(req.id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// A request-history record to write.
#[derive(Debug, Clone)]
pub struct NewHistory {
    /// Row id of the data request.
    pub data_request_id: i64,
    /// The caller.
    pub user_id: Option<i64>,
    /// `GET` or `POST`.
    pub method: &'static str,
    /// The status code answered.
    pub status: u16,
    /// UUIDs of the submitted fields.
    pub submitted: Vec<String>,
}

/// History records per multi-row insert (6 parameters each, far below either backend's limit).
pub(crate) const HISTORY_PER_INSERT: usize = 256;

/// Leaves several request-history records, one multi-row insert per 256.
pub async fn record_histories(tx: &mut Tx, entries: &[NewHistory]) -> Result<()> {
    let at = now();
    for chunk in entries.chunks(HISTORY_PER_INSERT) {
        let values: Vec<String> = (0..chunk.len())
            .map(|r| {
                let b = r * 6;
                format!(
                    "(${}, ${}, ${}, ${}, ${}, ${})",
                    b + 1,
                    b + 2,
                    b + 3,
                    b + 4,
                    b + 5,
                    b + 6
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO data_request_history (data_request_id, at, user_id, method, status_code, \
             submitted_fields) VALUES {}",
            values.join(", ")
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
        for e in chunk {
            q = q
                .bind(e.data_request_id)
                .bind(at)
                .bind(e.user_id)
                .bind(e.method.to_owned())
                .bind(i64::from(e.status))
                .bind(json_list(&e.submitted));
        }
        q.execute(&mut **tx).await?;
    }
    Ok(())
}

/// The history of a data request, oldest first.
pub async fn history(tx: &mut Tx, data_request_id: i64) -> Result<Vec<HistoryEntry>> {
    let rows = sqlx::query(
        "SELECT at, user_id, method, status_code, submitted_fields FROM data_request_history \
         WHERE data_request_id = $1 ORDER BY id",
    )
    .bind(data_request_id)
    .fetch_all(&mut **tx)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let submitted: String = r.try_get(4)?;
        out.push(HistoryEntry {
            at: r.try_get(0)?,
            user_id: r.try_get(1)?,
            method: r.try_get(2)?,
            status_code: r.try_get(3)?,
            submitted_fields: json_strings(&submitted),
        });
    }
    Ok(out)
}
