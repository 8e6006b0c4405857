//! Request-history records of missing-information GETs, written in batches.
//!
//! A GET only reads, but leaves a history record; under load, one insert (and on PostgreSQL
//! one commit) per GET is most of its cost. Concurrent GETs therefore hand their records to
//! a [`HistoryWriter`]: the first to take its flush lock writes every record queued by then
//! in one multi-row insert, and each GET is answered only after the insert holding its record
//! committed. A lone GET writes at once. (POSTs write their record in their own transaction,
//! with the values they write.)

use std::sync::Mutex;

use tokio::sync::oneshot;

use crate::db::Db;
use crate::store::data_requests::{self, NewHistory};
use crate::store::{Result, StoreError};

/// How a batch ended, as the requests whose records it held learn it.
type Outcome = std::result::Result<(), String>;

/// Batches history records of concurrent requests (one per service).
#[derive(Debug, Default)]
pub struct HistoryWriter {
    queue: Mutex<Vec<(NewHistory, oneshot::Sender<Outcome>)>>,
    flush: tokio::sync::Mutex<()>,
}

impl HistoryWriter {
    /// Writes `entry`, with the records other requests queued meanwhile; returns once the
    /// insert holding it committed.
    pub async fn record(&self, db: &Db, entry: NewHistory) -> Result<()> {
        let (done, mut outcome) = oneshot::channel();
        self.queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((entry, done));
        let _flush = self.flush.lock().await;
        match outcome.try_recv() {
            Ok(result) => return result.map_err(failed),
            // The request that took it was dropped mid-write: whether it committed is unknown.
            Err(oneshot::error::TryRecvError::Closed) => {
                return Err(failed("the batch holding it was interrupted".into()));
            }
            Err(oneshot::error::TryRecvError::Empty) => {}
        }
        let batch = std::mem::take(&mut *self.queue.lock().unwrap_or_else(|p| p.into_inner()));
        let (entries, waiters): (Vec<NewHistory>, Vec<_>) = batch.into_iter().unzip();
        let result = write(db, &entries).await;
        let shared: Outcome = result.as_ref().map(|_| ()).map_err(|e| e.to_string());
        for waiter in waiters {
            let _ = waiter.send(shared.clone());
        }
        result
    }
}

async fn write(db: &Db, entries: &[NewHistory]) -> Result<()> {
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
