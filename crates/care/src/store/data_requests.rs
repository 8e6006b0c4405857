//! Data requests of missing-information requests and their history trail
//! (`data_request`, `data_request_history`).

use sqlx::Row;

use super::base::{Columns, Result, aggregated, json_list};
use super::groups::{FieldColumns, field_columns};
use super::users::{CALLER_COLUMNS, caller_columns, caller_from_row};
use crate::auth::{Caller, hash_token};
use crate::db::{Tx, json_strings, now};
use crate::model::{
    ACTIVE, Answered, COMPLETED, DataRequest, DataRequestInput, EventStatus, HistoryEntry, Holder,
    RequestContext,
};
use slipway_server::db::native::{database_error, rusqlite};

/// The columns of a data request read by [`data_request`], `d` the request and `h` its holder
/// (joined by [`holder_join`]).
macro_rules! data_request_columns {
    () => {
        "d.id, d.external_id, d.care_plan_external_id, d.group_external_id, d.status, \
         d.expiration_date, d.created_at, d.claimed_by, h.external_id, h.name, \
         d.answered_by, d.answered_at, d.amended_at"
    };
}
pub(crate) use data_request_columns;

/// The join of a data request's holder (`h`) to `d`.
macro_rules! holder_join {
    () => {
        " LEFT JOIN app_user h ON h.id = d.claimed_by"
    };
}
pub(crate) use holder_join;

/// How many columns [`data_request_columns`] has.
pub(crate) const DATA_REQUEST_COLUMNS: usize = 13;

/// Finds a data request by UUID.
pub async fn find(tx: &mut Tx, uuid: &str) -> Result<Option<DataRequest>> {
    let row = sqlx::query(concat!(
        "SELECT ",
        data_request_columns!(),
        " FROM data_request d",
        holder_join!(),
        " WHERE d.external_id = $1"
    ))
    .bind(uuid.to_owned())
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.as_ref().map(|r| data_request(r, 0)).transpose()?)
}

/// A data request from the [`data_request_columns`] of a row starting at `at`.
pub(crate) fn data_request(
    r: &impl Columns,
    at: usize,
) -> std::result::Result<DataRequest, sqlx::Error> {
    let holder = match r.column::<Option<i64>>(at + 7)? {
        None => None,
        Some(user_id) => Some(Holder {
            user_id,
            // A holder whose user was deleted is still named by row id.
            external_id: r
                .column::<Option<String>>(at + 8)?
                .unwrap_or_else(|| format!("#{user_id}")),
            name: r
                .column::<Option<String>>(at + 9)?
                .unwrap_or_else(|| "a deleted user".to_owned()),
        }),
    };
    Ok(DataRequest {
        id: r.column(at)?,
        uuid: r.column(at + 1)?,
        care_plan_external_id: r.column(at + 2)?,
        group_external_id: r.column(at + 3)?,
        status: r.column(at + 4)?,
        expiration_date: r.column(at + 5)?,
        created_at: r.column(at + 6)?,
        holder,
        answered: r
            .column::<Option<i64>>(at + 11)?
            .map(|answered_at| -> std::result::Result<_, sqlx::Error> {
                Ok(Answered {
                    by: r.column(at + 10)?,
                    at: answered_at,
                })
            })
            .transpose()?,
        amended_at: r.column(at + 12)?,
    })
}

/// The columns of a data request with what it refers to, read by [`request_from_row`]: the
/// request (`d`), its care plan (`cp`), program (`pg`), patient account (`a`), whether its
/// group exists, and its group's fields, in order, aggregated into one JSON array text (`[]`
/// without any) with the backend's JSON functions: `$agg` aggregates rows into an array,
/// `$arr` makes one row's array. Aggregated because on SQLite each row of a result crosses
/// from the connection's thread to the request's as a message of its own.
macro_rules! request_columns {
    ($agg:literal, $arr:literal) => {
        concat!(
            data_request_columns!(),
            ", cp.id, cp.patient_account_id, pg.name, a.external_id, \
             (SELECT CAST(1 AS BIGINT) FROM mi_group g WHERE g.external_id = d.group_external_id), \
             (SELECT COALESCE(CAST(", $agg, "(", $arr, "(",
            field_columns!(),
            ") ORDER BY f.position, f.external_id) AS TEXT), '[]') \
             FROM mi_group_field f WHERE f.group_external_id = d.group_external_id)"
        )
    };
}

/// The tables behind [`request_columns`], joined to `d`, the data request.
macro_rules! request_joins {
    () => {
        concat!(
            holder_join!(),
            " LEFT JOIN care_plan cp ON cp.external_id = d.care_plan_external_id \
         LEFT JOIN program pg ON pg.api_name = cp.program_api_name \
         LEFT JOIN account a ON a.id = cp.patient_account_id"
        )
    };
}

/// How many columns [`request_columns`] has.
const REQUEST_COLUMNS: usize = DATA_REQUEST_COLUMNS + 6;

/// [`find_with_context`]'s statement with the JSON functions of a backend.
macro_rules! request {
    ($agg:literal, $arr:literal) => {
        concat!(
            "SELECT ",
            request_columns!($agg, $arr),
            " FROM data_request d",
            request_joins!(),
            " WHERE d.external_id = $1"
        )
    };
}

/// Finds a data request by UUID together with what it refers to, in one statement that
/// answers one row (the missing-information calls need both; one round trip instead of six).
pub async fn find_with_context(
    tx: &mut Tx,
    uuid: &str,
) -> Result<Option<(DataRequest, RequestContext)>> {
    let row = sqlx::query(with_json_functions!(tx, request))
        .bind(uuid.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    row.map(|r| request_from_row(&r, 0)).transpose()
}

/// [`find_for_caller`]'s statement with the JSON functions of a backend:
/// [`caller_columns`], then [`request_columns`]; one row, NULL where the token or the UUID
/// names nothing.
macro_rules! caller_and_request {
    ($agg:literal, $arr:literal) => {
        concat!(
            "SELECT ",
            caller_columns!($agg, $arr),
            ", ",
            request_columns!($agg, $arr),
            " FROM (SELECT 1 AS one) one \
             LEFT JOIN app_user u ON u.token_hash = $1 \
             LEFT JOIN data_request d ON d.external_id = $2",
            request_joins!()
        )
    };
}

/// The caller a token names and the data request a UUID names with what it refers to, in
/// **one** statement that answers **one** row: what a missing-information GET reads, in one
/// round trip and one snapshot (so it needs no transaction).
pub async fn find_for_caller(tx: &mut Tx, token: &str, uuid: &str) -> Result<CallerAndRequest> {
    let r = sqlx::query(with_json_functions!(tx, caller_and_request))
        .bind(hash_token(token))
        .bind(uuid.to_owned())
        .fetch_one(&mut **tx)
        .await?;
    caller_and_request_from_row(&r)
}

/// What [`find_for_caller`] reads: the caller (`None` for an unknown token) and the request
/// with what it refers to (`None` for an unknown UUID).
pub type CallerAndRequest = (Option<Caller>, Option<(DataRequest, RequestContext)>);

/// [`find_for_caller`]'s statement in `backend`'s dialect (for the load bench's probe).
pub(crate) fn caller_and_request_statement(backend: crate::db::Backend) -> &'static str {
    with_json_functions!(backend = backend, caller_and_request)
}

/// [`find_for_caller`]'s statement as the native SQLite connection runs it (`?N`
/// placeholders; SQLite reads `$N` as a name).
pub static CALLER_AND_REQUEST_NATIVE: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| {
        caller_and_request_statement(crate::db::Backend::Sqlite)
            .replace("$1", "?1")
            .replace("$2", "?2")
    });

/// [`find_for_caller`] on a native SQLite read connection (`slipway_server::db::native`),
/// on the calling thread: the same statement, read by the same function
/// ([`caller_and_request_from_row`]). One statement, so it needs no transaction
/// (`NativeWriter::read_one`).
pub fn find_for_caller_native(
    conn: &rusqlite::Connection,
    token: &str,
    uuid: &str,
) -> Result<CallerAndRequest> {
    let mut statement = conn
        .prepare_cached(&CALLER_AND_REQUEST_NATIVE)
        .map_err(database_error)?;
    let mut rows = statement
        .query((hash_token(token), uuid))
        .map_err(database_error)?;
    let row = rows
        .next()
        .map_err(database_error)?
        .ok_or(sqlx::Error::RowNotFound)?;
    caller_and_request_from_row(row)
}

/// The one row of [`caller_and_request`]: [`caller_columns`], then [`request_columns`].
fn caller_and_request_from_row(r: &impl Columns) -> Result<CallerAndRequest> {
    let caller = match r.column::<Option<i64>>(0)? {
        None => None,
        Some(_) => Some(caller_from_row(r, 0)?),
    };
    let request = match r.column::<Option<i64>>(CALLER_COLUMNS)? {
        None => None,
        Some(_) => Some(request_from_row(r, CALLER_COLUMNS)?),
    };
    Ok((caller, request))
}

/// The request of [`request_columns`] starting at column `at`.
fn request_from_row(r: &impl Columns, at: usize) -> Result<(DataRequest, RequestContext)> {
    let c = at + DATA_REQUEST_COLUMNS;
    let plan_id: Option<i64> = r.column(c)?;
    let patient_id: Option<i64> = r.column(c + 1)?;
    let fields: Vec<FieldColumns> = aggregated(r, at + REQUEST_COLUMNS - 1)?;
    Ok((
        data_request(r, at)?,
        RequestContext {
            plan: plan_id.zip(patient_id),
            program_name: r.column(c + 2)?,
            patient_external_id: r.column(c + 3)?,
            group_exists: r.column::<Option<i64>>(c + 4)?.is_some(),
            fields: fields
                .into_iter()
                .map(FieldColumns::into_field)
                .collect::<Result<_>>()?,
        },
    ))
}

/// Creates or replaces a data request. One written already past its date has its expiry
/// announced by the caller's event, so the sweeper does not announce it again.
pub async fn put(tx: &mut Tx, uuid: &str, input: &DataRequestInput) -> Result<()> {
    let announced = input.status == ACTIVE && input.expiration_date < crate::fields::today();
    sqlx::query(
        "INSERT INTO data_request (external_id, care_plan_external_id, group_external_id, status, \
         expiration_date, created_at, updated_at, expiry_announced) \
         VALUES ($1, $2, $3, $4, $5, $6, $6, $7) ON CONFLICT (external_id) DO UPDATE SET \
         care_plan_external_id = excluded.care_plan_external_id, group_external_id = excluded.group_external_id, \
         status = excluded.status, expiration_date = excluded.expiration_date, updated_at = excluded.updated_at, \
         expiry_announced = excluded.expiry_announced",
    )
    .bind(uuid.to_owned())
    .bind(input.care_plan_external_id.clone())
    .bind(input.group_external_id.clone())
    .bind(input.status.clone())
    .bind(input.expiration_date.clone())
    .bind(now())
    .bind(i64::from(announced))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Deletes the data request with this external ID (as given, not normalised), and announces
/// the deletion to the worklist; whether there was one. Its history is kept.
pub async fn delete(tx: &mut Tx, external_id: &str) -> Result<bool> {
    let done = sqlx::query("DELETE FROM data_request WHERE external_id = $1")
        .bind(external_id.to_owned())
        .execute(&mut **tx)
        .await?;
    let deleted = done.rows_affected() > 0;
    if deleted {
        super::events::append(tx, external_id, EventStatus::Deleted, None).await?;
    }
    Ok(deleted)
}

/// Marks a request `Completed` after a successful POST, answered by `user_id` now.
pub async fn complete(tx: &mut Tx, req: &DataRequest, user_id: i64) -> Result<()> {
    sqlx::query(
        "UPDATE data_request SET status = $1, updated_at = $2, answered_by = $3, answered_at = $2 \
         WHERE id = $4",
    )
    .bind(COMPLETED)
    .bind(now())
    .bind(user_id)
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

/// [`record_histories`] on the native SQLite writer's connection: one prepared insert per
/// record (on the writer's thread a statement costs no trip, so there is nothing to save by
/// building one statement per batch).
pub fn record_histories_native(
    conn: &slipway_server::db::native::rusqlite::Connection,
    entries: &[NewHistory],
) -> slipway_server::db::native::rusqlite::Result<()> {
    let at = now();
    let mut insert = conn.prepare_cached(
        "INSERT INTO data_request_history (data_request_id, at, user_id, method, status_code, \
         submitted_fields) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for e in entries {
        insert.execute((
            e.data_request_id,
            at,
            e.user_id,
            e.method,
            i64::from(e.status),
            json_list(&e.submitted),
        ))?;
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
