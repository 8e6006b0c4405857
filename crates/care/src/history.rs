//! Request-history records of missing-information GETs, written in batches.
//!
//! A GET only reads, but leaves a history record; under load, one insert (and on PostgreSQL
//! one commit) per GET is most of its cost. Concurrent GETs therefore hand their records to
//! a [`HistoryWriter`]: one flush task at a time writes the records queued by then (up to one
//! insert's worth) in one multi-row insert, then those queued meanwhile, and each GET is
//! answered only after the insert holding its record committed. A lone GET writes at once. (POSTs write their record in their own transaction,
//! with the values they write.)

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use slipway_server::db::native::database_error;

use crate::db::Db;
use crate::store::data_requests::{self, NewHistory};
use crate::store::{Result, StoreError};

/// How a batch ended, as the requests whose records it held learn it.
type Outcome = std::result::Result<(), String>;

/// Batches history records of concurrent requests (one per service).
#[derive(Debug, Default)]
pub struct HistoryWriter {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    queue: Mutex<Vec<(NewHistory, oneshot::Sender<Outcome>)>>,
    /// Whether a flush task is running (or about to): at most one at a time, so a request
    /// spawns one only when none runs, instead of one each that would mostly find nothing
    /// left to write.
    flushing: AtomicBool,
    flush: tokio::sync::Mutex<()>,
}

impl HistoryWriter {
    /// Writes `entry`, with the records other requests queued meanwhile; returns once the
    /// insert holding it committed. The writing happens on a task of its own: a request
    /// whose caller goes away (its future dropped) still leaves its record, and cannot leave
    /// the other records of its batch unwritten or their requests without their outcome.
    pub async fn record(&self, db: &Db, entry: NewHistory) -> Result<()> {
        let (done, outcome) = oneshot::channel();
        self.shared
            .queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((entry, done));
        if !self.shared.flushing.swap(true, Ordering::AcqRel) {
            let (shared, db) = (Arc::clone(&self.shared), db.clone());
            tokio::spawn(async move { shared.flush(&db).await });
        }
        match outcome.await {
            Ok(result) => result.map_err(failed),
            Err(_) => Err(failed("the batch holding it failed".into())),
        }
    }
}

impl Shared {
    /// Writes every record queued until the queue is empty, a batch per insert: the records
    /// queued while one batch is written make the next, which is what batches concurrent
    /// requests. Started by a `record` when no flush runs ([`Shared::flushing`]).
    async fn flush(&self, db: &Db) {
        let _flush = self.flush.lock().await;
        loop {
            // At most one insert's worth, so that a batch is one statement (one commit on
            // PostgreSQL): it is written in full or not at all.
            let batch: Vec<_> = {
                let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                let n = queue.len().min(data_requests::HISTORY_PER_INSERT);
                queue.drain(..n).collect()
            };
            if batch.is_empty() {
                self.flushing.store(false, Ordering::Release);
                // A record queued after the drain above but before the store saw a flush
                // running and started none: take it along, unless a new flush took over.
                let queued = !self
                    .queue
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .is_empty();
                if queued && !self.flushing.swap(true, Ordering::AcqRel) {
                    continue;
                }
                return;
            }
            let (entries, waiters): (Vec<NewHistory>, Vec<_>) = batch.into_iter().unzip();
            let shared: Outcome = write(db, &entries).await.map_err(|e| e.to_string());
            for waiter in waiters {
                let _ = waiter.send(shared.clone());
            }
        }
    }
}

async fn write(db: &Db, entries: &[NewHistory]) -> Result<()> {
    if let Some(native) = db.native() {
        // On SQLite, the batch is one job of the native writer (its group commit may add
        // the writes of concurrent requests to the same transaction).
        let entries = entries.to_vec();
        return native
            .write(move |conn| data_requests::record_histories_native(conn, &entries))
            .await
            .map_err(sqlx::Error::from)?
            .map_err(|e| StoreError::Database(database_error(e)));
    }
    let mut tx = db.begin_single_write().await?;
    data_requests::record_histories(&mut tx, entries).await?;
    tx.commit().await?;
    Ok(())
}

fn failed(reason: String) -> StoreError {
    StoreError::Database(sqlx::Error::Io(std::io::Error::other(format!(
        "the history record was not written: {reason}"
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Row as _;

    async fn count(db: &Db) -> i64 {
        let mut tx = db.begin_read().await.unwrap();
        let n = sqlx::query("SELECT COUNT(*) FROM data_request_history")
            .fetch_one(&mut *tx)
            .await
            .unwrap()
            .try_get(0)
            .unwrap();
        tx.rollback().await.unwrap();
        n
    }

    fn entry(status: u16) -> NewHistory {
        NewHistory {
            data_request_id: 1,
            user_id: None,
            method: "GET",
            status,
            submitted: Vec::new(),
        }
    }

    /// A GET whose client went away while its record waited for the flush lock still leaves
    /// its record: the writing does not depend on the request's future.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_record_whose_caller_went_away_is_still_written() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("h.sqlite3").display());
        let db = crate::db::open(&url).await.unwrap();
        let writer = HistoryWriter::default();
        // Hold the flush lock, so that the record below can only be queued.
        let held = writer.shared.flush.lock().await;
        let dropped = tokio::time::timeout(
            std::time::Duration::from_millis(20),
            writer.record(&db, entry(200)),
        )
        .await;
        assert!(dropped.is_err(), "the record waited for the lock");
        drop(held);
        // No later request comes to take the queue along: the record is written anyway.
        for _ in 0..100 {
            if count(&db).await == 1 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(count(&db).await, 1);
        writer.record(&db, entry(403)).await.unwrap();
        assert_eq!(count(&db).await, 2);
        db.close().await;
    }
}
