//! The event log (`care_event`): one row per change of a request's Task status, written in
//! the transaction that makes the change, so an event exists exactly when its change does.
//! Listeners read it after an id (`Last-Event-ID`), so a reconnect resumes without a gap.
//!
//! Ids must become visible in increasing order, or a listener that has seen id 8 would never
//! read a 7 committed after it. SQLite has one writer, so that holds by itself; on PostgreSQL
//! an append first takes a transaction-scoped advisory lock, so event-writing transactions
//! take their ids and commit one after another.

use sqlx::Row;

use super::base::Result;
use crate::db::{Backend, Tx, now};
use crate::model::EventStatus;

/// The advisory lock key of event appends on PostgreSQL ("slipway care events").
const APPEND_LOCK: i64 = 0x5C1A_0E7E_0000_0001;

/// Appends an event: the request's new status and who holds it.
pub async fn append(
    tx: &mut Tx,
    request_uuid: &str,
    status: EventStatus,
    owner_user_id: Option<i64>,
) -> Result<()> {
    if tx.backend() == Backend::Postgres {
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(APPEND_LOCK)
            .execute(&mut **tx)
            .await?;
    }
    // The holder is copied as they are now (ID and name): a row id could later name a
    // different user, and a replay should say who held the request then.
    sqlx::query(
        "INSERT INTO care_event (request_uuid, status, owner, owner_name, at) \
         SELECT $1, $2, u.external_id, u.name, $4 FROM (SELECT 1 AS one) one \
         LEFT JOIN app_user u ON u.id = $3",
    )
    .bind(request_uuid.to_owned())
    .bind(status.as_str())
    .bind(owner_user_id)
    .bind(now())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// One event as a listener receives it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Its id (the stream's `id:` line).
    #[serde(skip)]
    pub id: i64,
    /// The request's UUID (its Task id).
    pub uuid: String,
    /// The Task status after the change, or `entered-in-error` for a deletion.
    pub status: String,
    /// External ID of the holder after the change.
    pub owner: Option<String>,
    /// The holder's display name.
    pub owner_name: Option<String>,
}

/// At most this many events per read (a listener far behind reads again at once).
pub const BATCH: i64 = 500;

/// The events after `after`, oldest first, at most [`BATCH`].
pub async fn after(tx: &mut Tx, after: i64) -> Result<Vec<Event>> {
    let rows = sqlx::query(
        "SELECT id, request_uuid, status, owner, owner_name FROM care_event \
         WHERE id > $1 ORDER BY id LIMIT $2",
    )
    .bind(after)
    .bind(BATCH)
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(Event {
                id: r.try_get(0)?,
                uuid: r.try_get(1)?,
                status: r.try_get(2)?,
                owner: r.try_get(3)?,
                owner_name: r.try_get(4)?,
            })
        })
        .collect::<std::result::Result<_, sqlx::Error>>()
        .map_err(Into::into)
}

/// The newest event's id (0 without any): where a listener without `Last-Event-ID` starts.
pub async fn latest(tx: &mut Tx) -> Result<i64> {
    let row = sqlx::query("SELECT CAST(COALESCE(MAX(id), 0) AS BIGINT) FROM care_event")
        .fetch_one(&mut **tx)
        .await?;
    Ok(row.try_get(0)?)
}
