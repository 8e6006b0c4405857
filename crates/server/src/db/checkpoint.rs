//! WAL checkpoints of a SQLite database, off the request path.
//!
//! Left to itself, SQLite checkpoints inside the `COMMIT` that takes the WAL past 1,000 pages:
//! that one commit copies the pages into the database file and syncs it, several
//! milliseconds during which the writer (and, with group commit, every request of its batch)
//! waits. Under load that is the service's slowest answer every half second or so: its p99.
//! So the pool's connections checkpoint only as a safety net ([`SAFETY_NET`], far
//! beyond what the background task lets the WAL reach) and a background task runs
//! `PRAGMA wal_checkpoint(PASSIVE)` on a pooled connection every [`INTERVAL`]. A passive
//! checkpoint takes no lock a writer or reader needs: it copies what no reader still needs
//! while the writer keeps appending, and the writer starts the WAL again from its beginning
//! once everything in it is copied. Durability is unchanged: a commit is durable once in the
//! WAL, checkpointed or not.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sqlx::AnyPool;

/// How often the background task checkpoints.
pub(super) const INTERVAL: Duration = Duration::from_millis(100);

/// How often it checkpoints while the WAL is growing (the last checkpoint found new frames):
/// a checkpoint's work, and the time its sync of the database file holds back the writers'
/// appends to the WAL on the same disk, grow with the pages it copies, so under a steady
/// write load many small checkpoints make shorter stalls than few large ones (the care
/// bench's paced enrollment p99: 8.6 and 9.4 ms at 25 ms against 13.1 and 14.8 ms at 100 ms
/// and 20 ms at 500 ms, same sitting). An idle database is checked every [`INTERVAL`].
const BUSY_INTERVAL: Duration = Duration::from_millis(25);

/// `wal_autocheckpoint` of the pool's connections: a committing connection still checkpoints
/// itself when the WAL reaches 4,096 pages (16 MiB at 4 KiB pages), which happens only if the
/// background task stopped or cannot keep up.
pub(super) const SAFETY_NET: &str = "PRAGMA wal_autocheckpoint = 4096";

/// The background checkpoints of one pool; the task stops when this is dropped (the last
/// clone of the `Db` went away) or the pool closes.
#[derive(Debug)]
pub(super) struct Checkpointer {
    task: tokio::task::JoinHandle<()>,
    runs: Arc<AtomicU64>,
}

impl Checkpointer {
    pub(super) fn start(pool: AnyPool) -> Self {
        let runs = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&runs);
        let task = tokio::spawn(async move {
            let (mut wait, mut last) = (INTERVAL, None);
            loop {
                tokio::time::sleep(wait).await;
                if pool.is_closed() {
                    return;
                }
                match checkpoint(&pool).await {
                    Ok(frames) => {
                        counted.fetch_add(1, Ordering::Relaxed);
                        wait = if last == Some(frames) {
                            INTERVAL
                        } else {
                            BUSY_INTERVAL
                        };
                        last = Some(frames);
                    }
                    Err(sqlx::Error::PoolClosed) => return,
                    // The connection's own safety net still checkpoints; say why once a
                    // second at most rather than once per tick.
                    Err(e) => {
                        tracing::warn!(error = %e, "background WAL checkpoint failed");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                }
            }
        });
        Self { task, runs }
    }

    /// Checkpoints run so far.
    pub(super) fn runs(&self) -> u64 {
        self.runs.load(Ordering::Relaxed)
    }

    pub(super) fn stop(&self) {
        self.task.abort();
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One passive checkpoint (it never waits for a lock, so it cannot stall anyone); the frames
/// in the WAL and those checkpointed, which stay the same while nothing is written.
async fn checkpoint(pool: &AnyPool) -> Result<(i64, i64), sqlx::Error> {
    use sqlx::Row as _;
    let row = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(pool)
        .await?;
    Ok((row.try_get(1)?, row.try_get(2)?))
}
