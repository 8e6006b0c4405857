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
            let mut tick = tokio::time::interval(INTERVAL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if pool.is_closed() {
                    return;
                }
                match checkpoint(&pool).await {
                    Ok(()) => {
                        counted.fetch_add(1, Ordering::Relaxed);
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

/// One passive checkpoint (it never waits for a lock, so it cannot stall anyone).
async fn checkpoint(pool: &AnyPool) -> Result<(), sqlx::Error> {
    sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
        .execute(pool)
        .await
        .map(|_| ())
}
