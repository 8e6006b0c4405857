//! Live events of the worklist: the in-process signal that wakes listeners when an event is
//! committed, the announcement of expiries (nothing writes when a date passes, so a sweeper
//! does), and closing every stream when the server shuts down (a graceful shutdown waits
//! for open connections, and an event stream never ends by itself).
//!
//! The events themselves are rows (`store::events`): the signal only says "read again".
//! Listeners also read once a second without a signal, which is how events written by
//! another server process on the same PostgreSQL database reach them.

use std::time::Duration;

use tokio::sync::watch;

use crate::db::Db;
use crate::store::{events, worklist};
use crate::worklist::{EventStatus, TaskStatus};

/// How often a listener reads without a signal, and the sweeper looks for expiries.
pub const POLL: Duration = Duration::from_secs(1);
/// How often expiries are looked for.
pub const SWEEP: Duration = Duration::from_secs(30);

/// The state listeners watch: a generation bumped by every commit of events, and whether
/// the server is closing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Signal {
    /// Bumped after each commit that wrote events.
    pub generation: u64,
    /// Set once, when the server shuts down: streams end.
    pub closing: bool,
}

/// The signal's sender, shared by the handlers that write events and the streams that read.
#[derive(Debug, Clone)]
pub struct Hub {
    signal: std::sync::Arc<watch::Sender<Signal>>,
}

impl Default for Hub {
    fn default() -> Self {
        Self {
            signal: std::sync::Arc::new(watch::Sender::new(Signal::default())),
        }
    }
}

impl Hub {
    /// Wakes every listener: events were committed.
    pub fn notify(&self) {
        self.signal.send_modify(|s| s.generation += 1);
    }

    /// Ends every stream, now and from now on.
    pub fn close(&self) {
        self.signal.send_modify(|s| s.closing = true);
    }

    /// A listener's view of the signal.
    pub fn subscribe(&self) -> watch::Receiver<Signal> {
        self.signal.subscribe()
    }
}

/// Announces every expiry not yet announced (a `failed` event each), in one transaction;
/// how many.
pub async fn announce_expiries(db: &Db, hub: &Hub) -> Result<usize, crate::store::StoreError> {
    let mut tx = db.begin_write().await?;
    let expired = worklist::take_unannounced_expiries(&mut tx).await?;
    for (uuid, holder) in &expired {
        events::append(
            &mut tx,
            uuid,
            EventStatus::Task(TaskStatus::Failed),
            *holder,
        )
        .await?;
    }
    tx.commit().await?;
    if !expired.is_empty() {
        hub.notify();
    }
    Ok(expired.len())
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
                // More may be waiting: a batch is at most a few hundred.
                Ok(n) if n > 0 => continue,
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "announcing expired requests failed"),
            }
            tokio::time::sleep(SWEEP).await;
        }
    })))
}
