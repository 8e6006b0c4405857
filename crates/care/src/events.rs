//! Live events of the worklist: one reader per process that reads each committed event once
//! and fans it out to every listener, the announcement of expiries (nothing writes when a
//! date passes, so a sweeper does), and closing every stream when the server shuts down (a
//! graceful shutdown waits for open connections, and an event stream never ends by itself).
//!
//! The events themselves are rows (`store::events`). A handler that commits events wakes the
//! reader ([`Hub::notify`]); the reader also reads once a second without a signal, which is
//! how events written by another server process on the same PostgreSQL database arrive. A
//! listener reads the table itself only to catch up (its `Last-Event-ID`, or after falling
//! behind the fan-out), so a hundred listeners cost one read per event, not a hundred.

use std::sync::Arc;
use std::time::Duration;

use slipway_server::serve::ShuttingDown;
use tokio::sync::{broadcast, watch};

use crate::db::Db;
use crate::model::{EventStatus, TaskStatus};
use crate::store::{events, worklist};

/// How often the reader reads without a signal.
pub const POLL: Duration = Duration::from_secs(1);
/// How often expiries are looked for: a read of an index of the unannounced active requests,
/// so that a request that expires is announced within a second of midnight (UTC).
pub const SWEEP: Duration = Duration::from_secs(1);
/// Events the fan-out keeps for a slow listener before it has to catch up from the table.
const FAN_OUT: usize = 4096;

/// What the handlers that write events and the streams that read share.
#[derive(Debug, Clone)]
pub struct Hub {
    /// Bumped after each commit that wrote events (wakes the reader).
    written: Arc<watch::Sender<u64>>,
    /// Begun once, when the server shuts down: streams end.
    shutting_down: ShuttingDown,
    /// Every event the reader read, in id order.
    feed: broadcast::Sender<Arc<events::Event>>,
    /// Set once the reader knows where it reads from: from then on every event committed
    /// reaches the feed, so a listener may take its own position from the table.
    reading: Arc<watch::Sender<bool>>,
}

impl Default for Hub {
    fn default() -> Self {
        Self {
            written: Arc::new(watch::Sender::new(0)),
            shutting_down: ShuttingDown::default(),
            feed: broadcast::Sender::new(FAN_OUT),
            reading: Arc::new(watch::Sender::new(false)),
        }
    }
}

impl Hub {
    /// Events were committed: the reader reads now.
    pub fn notify(&self) {
        self.written.send_modify(|g| *g += 1);
    }

    /// What every stream ends on: the server's shutdown, begun by its serve loop
    /// ([`ShuttingDown::after`]).
    pub fn shutting_down(&self) -> &ShuttingDown {
        &self.shutting_down
    }

    /// The events read from now on.
    pub fn feed(&self) -> broadcast::Receiver<Arc<events::Event>> {
        self.feed.subscribe()
    }

    /// Waits until the reader reads (at most `limit`); whether it does.
    pub async fn reading(&self, limit: Duration) -> bool {
        let mut reading = self.reading.subscribe();
        tokio::time::timeout(limit, reading.wait_for(|r| *r))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}

/// Starts the reader on the current runtime (none outside one): from the newest event at
/// start, each committed event read once and sent to every listener.
pub fn spawn_reader(db: Db, hub: Hub) -> Option<AbortOnDrop> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    Some(AbortOnDrop(runtime.spawn(async move {
        let mut written = hub.written.subscribe();
        let mut after = None;
        loop {
            // Marked seen before reading, so a commit during the read wakes the wait below.
            written.borrow_and_update();
            match read_after(&db, after).await {
                Ok((last, batch)) => {
                    let full = batch.len() as i64 >= events::BATCH;
                    after = Some(last);
                    hub.reading.send_replace(true);
                    for e in batch {
                        // No listener is not an error.
                        let _ = hub.feed.send(Arc::new(e));
                    }
                    if full {
                        continue;
                    }
                }
                Err(e) => tracing::warn!(error = %e, "reading worklist events failed"),
            }
            tokio::select! {
                changed = written.changed() => if changed.is_err() { return },
                _ = tokio::time::sleep(POLL) => {}
            }
        }
    })))
}

/// The events after `after` (after the newest one when `None`: nothing), and the id read up
/// to.
async fn read_after(
    db: &Db,
    after: Option<i64>,
) -> Result<(i64, Vec<events::Event>), crate::store::StoreError> {
    let mut tx = db.begin_reads().await?;
    let out = match after {
        None => (events::latest(&mut tx).await?, Vec::new()),
        Some(after) => {
            let batch = events::after(&mut tx, after).await?;
            (batch.last().map_or(after, |e| e.id), batch)
        }
    };
    tx.rollback().await?;
    Ok(out)
}

/// Announces every expiry not yet announced (a `failed` event each); how many. It reads
/// first, outside the writer, and writes only what it found, each row marked only if it is
/// still unannounced and expired (a concurrent change or another process's sweep wins).
pub async fn announce_expiries(db: &Db, hub: &Hub) -> Result<usize, crate::store::StoreError> {
    let mut read = db.begin_reads().await?;
    let found = worklist::unannounced_expiries(&mut read).await?;
    read.rollback().await?;
    if found.is_empty() {
        return Ok(0);
    }
    let mut tx = db.begin_write().await?;
    let mut announced = 0;
    for (id, uuid, holder) in &found {
        if worklist::mark_expiry_announced(&mut tx, *id).await? {
            events::append(
                &mut tx,
                uuid,
                EventStatus::Task(TaskStatus::Failed),
                *holder,
            )
            .await?;
            announced += 1;
        }
    }
    tx.commit().await?;
    if announced > 0 {
        hub.notify();
    }
    Ok(found.len())
}

/// Stops a background task when dropped (with the state that owns it).
#[derive(Debug)]
pub struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts the expiry sweeper on the current runtime (none outside one: nothing to sweep for).
pub fn spawn_sweeper(db: Db, hub: Hub) -> Option<AbortOnDrop> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    Some(AbortOnDrop(runtime.spawn(async move {
        loop {
            match announce_expiries(&db, &hub).await {
                // A full batch: more may be waiting.
                Ok(n) if n >= worklist::EXPIRY_BATCH => continue,
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "announcing expired requests failed"),
            }
            tokio::time::sleep(SWEEP).await;
        }
    })))
}
