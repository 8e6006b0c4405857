//! Request-history records of missing-information GETs, written in batches.
//!
//! A GET only reads, but leaves a history record; under load, one insert (and on PostgreSQL
//! one commit) per GET is most of its cost. Concurrent GETs therefore hand their records to
//! a [`HistoryWriter`]: the first to take its flush lock writes the records queued by then
//! (up to one insert's worth) in one multi-row insert, and each GET is answered only after
//! the insert holding its record committed. A lone GET writes at once. (POSTs write their record in their own transaction,
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
        let flush = self.flush.lock().await;
        loop {
            match outcome.try_recv() {
                Ok(result) => return result.map_err(failed),
                Err(oneshot::error::TryRecvError::Closed) => {
                    return Err(failed("the batch holding it failed".into()));
                }
                Err(oneshot::error::TryRecvError::Empty) => {}
            }
            // At most one insert's worth, so that a batch is one statement (one commit on
            // PostgreSQL): it is written in full or not at all.
            let batch: Vec<_> = {
                let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                let n = queue.len().min(data_requests::HISTORY_PER_INSERT);
                queue.drain(..n).collect()
            };
            if batch.is_empty() {
                // Ours is in a batch still being written (by a caller that went away).
                drop(flush);
                return match outcome.await {
                    Ok(result) => result.map_err(failed),
                    Err(_) => Err(failed("the batch holding it failed".into())),
                };
            }
            // Written and told on a task of its own: a caller dropped mid-write cannot leave
            // the others of its batch without their outcome.
            let db = db.clone();
            let _ = tokio::spawn(async move {
                let (entries, waiters): (Vec<NewHistory>, Vec<_>) = batch.into_iter().unzip();
                let shared: Outcome = write(&db, &entries).await.map_err(|e| e.to_string());
                for waiter in waiters {
                    let _ = waiter.send(shared.clone());
                }
            })
            .await;
        }
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
