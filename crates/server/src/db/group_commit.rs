//! Group commit of SQLite write transactions.
//!
//! SQLite has one writer at a time, so concurrent write transactions queue (a fair, FIFO
//! `tokio` mutex). Committing each of them on its own costs a `BEGIN`/`COMMIT` and writes
//! every page it touched to the WAL again, page by page, for each request; under a burst
//! that repeated work is most of a small request's cost and the queue's latency grows with
//! it. Here the requests that queue behind each other share **one** SQLite transaction on a
//! dedicated connection (a *batch*), each inside a `SAVEPOINT` of its own:
//!
//! - a request that fails or is dropped rolls back to its savepoint: it leaves nothing, and
//!   the others in the batch are untouched;
//! - a request that commits releases its savepoint and, if another writer is waiting, hands
//!   the connection over and waits; the last one in line (nobody waiting, or the batch is
//!   full or old) commits the batch and tells every member the outcome;
//! - so `commit()` returns `Ok` only once a `COMMIT` that holds the request's writes has
//!   succeeded: an answered request is as durable as before. If the batch's `COMMIT` fails,
//!   every member gets the error and none of them is answered as done.
//!
//! A lone writer commits at once, so without contention nothing waits longer than before.
//! The price: a request that committed and handed over waits for the next one to finish. A
//! write transaction that holds the writer for long (it blocked every other writer before
//! this too) now also delays the answers of those committed just before it; write
//! transactions must stay short (no uploads, builds or network calls inside them).
//! A member that handed over also queues for the lock again: if the writer it handed over to
//! gave up (its future was dropped while queued) the batch would have nobody to finish it,
//! and the member finishes it itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool};
use tokio::sync::{Mutex, OwnedMutexGuard, watch};

/// At most this many requests share a batch: bounds what one failed `COMMIT` takes down.
const MAX_MEMBERS: usize = 64;
/// A batch older than this commits at the next member even if others wait: bounds how long
/// the first member of a long burst waits for its answer.
const MAX_AGE: Duration = Duration::from_millis(10);

/// How a batch ended, as its members learn it (the committing member gets the database's
/// own error; the others get its text).
type Outcome = Result<(), String>;

/// The single SQLite writer of a pool: its queue, its connection and the open batch.
#[derive(Debug)]
pub(super) struct Writer {
    pool: AnyPool,
    state: Arc<Mutex<State>>,
    /// SQLite's write lock as this process hands it out: held from a batch's `BEGIN
    /// IMMEDIATE` (or a lone statement's start) until its `COMMIT` or `ROLLBACK`. The native
    /// writer of the same file ([`super::native`]) takes it too, so the two wait for each
    /// other in a fair queue instead of SQLite's busy handler, whose polling a writer that
    /// takes the lock again at once would win nearly every time.
    sqlite_lock: Arc<Mutex<()>>,
    /// Writers queued for the lock (not counting members waiting for their batch): the
    /// committing member hands the batch over only when someone is here to continue it.
    waiting: AtomicUsize,
    batches: AtomicU64,
    members: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    /// Taken from the pool at the first write and kept between batches: giving it back
    /// would cost a trip to its thread each time (sqlx pings every connection it takes
    /// back), and no other work wants SQLite's one writer connection anyway. Dropped (and so
    /// given back) only when a batch failed, its state being unknown, and at shut-down.
    conn: Option<PoolConnection<Any>>,
    batch: Option<Batch>,
    /// A request's `Tx` was dropped mid-way and no task could undo its savepoint: the next
    /// holder of the lock does.
    abandoned: bool,
    next_batch: u64,
    /// [`Writer::sqlite_lock`], while a batch or a lone statement holds SQLite's write lock.
    holding: Option<OwnedMutexGuard<()>>,
}

#[derive(Debug)]
struct Batch {
    id: u64,
    members: usize,
    started: Instant,
    done: watch::Sender<Option<Outcome>>,
}

/// Counts a writer as waiting until it holds the lock or gives up.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Batches committed so far and the requests they held (for benchmarks and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupCommitStats {
    /// `COMMIT`s of batches that held at least one request.
    pub batches: u64,
    /// Requests committed in them.
    pub requests: u64,
}

impl Writer {
    pub(super) fn new(pool: AnyPool) -> Self {
        Self {
            pool,
            state: Arc::new(Mutex::new(State::default())),
            sqlite_lock: Arc::new(Mutex::new(())),
            waiting: AtomicUsize::new(0),
            batches: AtomicU64::new(0),
            members: AtomicU64::new(0),
        }
    }

    /// The in-process turn at SQLite's write lock, for the native writer of the same file.
    #[cfg(feature = "native-sqlite")]
    pub(super) fn sqlite_lock(&self) -> Arc<Mutex<()>> {
        self.sqlite_lock.clone()
    }

    pub(super) fn stats(&self) -> GroupCommitStats {
        GroupCommitStats {
            batches: self.batches.load(Ordering::Relaxed),
            requests: self.members.load(Ordering::Relaxed),
        }
    }

    /// Waits for the lock, then opens the request's savepoint (and the batch, if none is
    /// open).
    pub(super) async fn begin(self: &Arc<Self>, timeout: Duration) -> Result<Turn, sqlx::Error> {
        self.turn(timeout, false).await
    }

    /// Waits for the lock for a write that is **one** statement. With no batch open (nobody
    /// handed one over) the statement runs on its own, outside any transaction: SQLite makes
    /// a single statement atomic and commits it as it ends, so the `BEGIN IMMEDIATE`,
    /// `SAVEPOINT`, `RELEASE` and `COMMIT` a member of a batch costs would add four trips to
    /// the connection's thread and nothing else. Each such trip waits for that thread to be
    /// scheduled, which under load on a small machine is what a request's slowest answers are
    /// made of. With a batch open, the write joins it like any other ([`Writer::begin`]).
    pub(super) async fn begin_single(
        self: &Arc<Self>,
        timeout: Duration,
    ) -> Result<Turn, sqlx::Error> {
        self.turn(timeout, true).await
    }

    async fn turn(self: &Arc<Self>, timeout: Duration, single: bool) -> Result<Turn, sqlx::Error> {
        let guard = {
            let _waiting = Waiting::new(&self.waiting);
            tokio::time::timeout(timeout, self.state.clone().lock_owned())
                .await
                .map_err(|_| sqlx::Error::PoolTimedOut)?
        };
        // From here on the steps run on a task of their own, so that a caller dropped
        // mid-way cannot leave a statement run but its bookkeeping undone (a `BEGIN` without
        // a batch, a savepoint nobody undoes): the task finishes, and a `Turn` nobody takes
        // is dropped, which undoes its savepoint.
        let writer = self.clone();
        uncancellable(async move { writer.open(guard, single).await }).await
    }

    /// Opens the request's savepoint, and the batch if none is open; a `single` statement
    /// with no batch open gets the connection alone instead.
    async fn open(
        self: Arc<Self>,
        mut guard: OwnedMutexGuard<State>,
        single: bool,
    ) -> Result<Turn, sqlx::Error> {
        self.settle(&mut guard).await;
        if guard.batch.is_none() {
            if guard.conn.is_none() {
                guard.conn = Some(self.pool.acquire().await?);
            }
            if guard.holding.is_none() {
                guard.holding = Some(self.sqlite_lock.clone().lock_owned().await);
            }
            if single {
                return Ok(Turn {
                    guard: Some(guard),
                    writer: self,
                    alone: true,
                });
            }
            if let Err(e) = exec(&mut guard, "BEGIN IMMEDIATE").await {
                guard.conn = None;
                guard.holding = None;
                return Err(e);
            }
            let id = guard.next_batch;
            guard.next_batch += 1;
            guard.batch = Some(Batch {
                id,
                members: 0,
                started: Instant::now(),
                done: watch::channel(None).0,
            });
        }
        if let Err(e) = exec(&mut guard, "SAVEPOINT request").await {
            self.fail_batch(&mut guard, &e).await;
            return Err(e);
        }
        Ok(Turn {
            guard: Some(guard),
            writer: self,
            alone: false,
        })
    }

    /// Undoes the savepoint of a request that was dropped without a task to do it.
    async fn settle(&self, state: &mut State) {
        if std::mem::take(&mut state.abandoned)
            && let Err(e) = undo_savepoint(state).await
        {
            self.fail_batch(state, &e).await;
        }
    }

    /// The batch cannot go on (its transaction is gone or broken): roll it back and tell
    /// every member.
    async fn fail_batch(&self, state: &mut State, error: &sqlx::Error) {
        if let Some(batch) = state.batch.take() {
            let _ = exec(state, "ROLLBACK").await;
            state.conn = None;
            state.holding = None;
            batch
                .done
                .send_replace(Some(Err(format!("the write batch failed: {error}"))));
        }
    }

    /// Commits the open batch and tells its members.
    async fn commit_batch(&self, state: &mut State) -> Result<(), sqlx::Error> {
        let Some(batch) = state.batch.take() else {
            return Ok(());
        };
        let result = exec(state, "COMMIT").await;
        if result.is_err() {
            let _ = exec(state, "ROLLBACK").await;
            state.conn = None;
        }
        state.holding = None;
        match &result {
            Ok(()) => {
                if batch.members > 0 {
                    self.batches.fetch_add(1, Ordering::Relaxed);
                    self.members
                        .fetch_add(batch.members as u64, Ordering::Relaxed);
                }
                batch.done.send_replace(Some(Ok(())));
            }
            Err(e) => {
                batch
                    .done
                    .send_replace(Some(Err(format!("the write batch failed: {e}"))));
            }
        }
        result
    }

    /// Whether the holder of the lock should end the batch now rather than hand it over.
    fn due(&self, batch: &Batch) -> bool {
        self.waiting.load(Ordering::SeqCst) == 0
            || batch.members >= MAX_MEMBERS
            || batch.started.elapsed() >= MAX_AGE
    }

    /// A request is done with the lock (committed its savepoint or rolled it back): end the
    /// batch if it is due (commit it if it holds a request, else close it), or leave it open
    /// for the next writer in line.
    async fn release(&self, mut guard: OwnedMutexGuard<State>) {
        let Some(batch) = guard.batch.as_ref() else {
            return;
        };
        if !self.due(batch) {
            return;
        }
        if batch.members > 0 {
            let _ = self.commit_batch(&mut guard).await;
        } else if let Some(batch) = guard.batch.take() {
            if exec(&mut guard, "ROLLBACK").await.is_err() {
                guard.conn = None;
            }
            guard.holding = None;
            batch.done.send_replace(Some(Ok(())));
        }
    }

    /// Waits for batch `id` to end; finishes it if nobody else is left to.
    async fn wait_for(&self, id: u64, mut done: watch::Receiver<Option<Outcome>>) -> Outcome {
        loop {
            tokio::select! {
                biased;
                changed = done.changed() => {
                    if changed.is_err() {
                        return Err("the write batch ended without an outcome".into());
                    }
                    if let Some(outcome) = done.borrow_and_update().clone() {
                        return outcome;
                    }
                }
                guard = self.state.clone().lock_owned() => {
                    let mut guard = guard;
                    if let Some(outcome) = done.borrow().clone() {
                        return outcome;
                    }
                    self.settle(&mut guard).await;
                    if guard.batch.as_ref().is_some_and(|b| b.id == id) {
                        return self.commit_batch(&mut guard).await.map_err(|e| e.to_string());
                    }
                    if let Some(outcome) = done.borrow().clone() {
                        return outcome;
                    }
                    return Err("the write batch ended without an outcome".into());
                }
            }
        }
    }

    /// Whether the writer holds a connection now.
    #[cfg(test)]
    pub(super) async fn holds_connection(&self) -> bool {
        self.state.lock().await.conn.is_some()
    }

    /// Closes the batch (if one is open) and gives the connection back to the pool, so that
    /// the pool can close.
    pub(super) async fn shut(&self, timeout: Duration) {
        if let Ok(mut guard) = tokio::time::timeout(timeout, self.state.clone().lock_owned()).await
        {
            self.settle(&mut guard).await;
            if guard.batch.as_ref().is_some_and(|b| b.members > 0) {
                let _ = self.commit_batch(&mut guard).await;
            } else if guard.batch.take().is_some() {
                let _ = exec(&mut guard, "ROLLBACK").await;
            }
            guard.conn = None;
            guard.holding = None;
        }
    }
}

/// A request's hold on the writer: the lock, and its savepoint in the open batch.
#[derive(Debug)]
pub(super) struct Turn {
    guard: Option<OwnedMutexGuard<State>>,
    writer: Arc<Writer>,
    /// A single statement outside any batch ([`Writer::begin_single`]): it committed as it
    /// ended, and there is no savepoint to release or undo.
    alone: bool,
}

impl Turn {
    pub(super) fn conn(&self) -> &AnyConnection {
        self.guard
            .as_ref()
            .and_then(|g| g.conn.as_deref())
            .expect("a turn holds the writer's connection")
    }

    pub(super) fn conn_mut(&mut self) -> &mut AnyConnection {
        self.guard
            .as_mut()
            .and_then(|g| g.conn.as_deref_mut())
            .expect("a turn holds the writer's connection")
    }

    /// Keeps the request's writes and returns once a `COMMIT` holding them succeeded. Runs
    /// on a task of its own: a caller dropped while it waits cannot strand the batch (its
    /// task still finishes it if nobody else does) nor tell the others a wrong outcome.
    pub(super) async fn commit(self) -> Result<(), sqlx::Error> {
        if self.alone {
            // Its statement committed as it ended: ending the turn is all that is left.
            drop(self);
            return Ok(());
        }
        uncancellable(self.commit_now()).await
    }

    async fn commit_now(mut self) -> Result<(), sqlx::Error> {
        let writer = self.writer.clone();
        let mut guard = self.guard.take().expect("a turn holds the lock");
        if let Err(e) = exec(&mut guard, "RELEASE SAVEPOINT request").await {
            writer.fail_batch(&mut guard, &e).await;
            return Err(e);
        }
        let Some(batch) = guard.batch.as_mut() else {
            return Err(sqlx::Error::Protocol("the write batch is gone".into()));
        };
        batch.members += 1;
        if writer.due(batch) {
            return writer.commit_batch(&mut guard).await;
        }
        let id = batch.id;
        let done = batch.done.subscribe();
        drop(guard);
        writer
            .wait_for(id, done)
            .await
            .map_err(|e| sqlx::Error::Io(std::io::Error::other(e)))
    }

    /// Drops the request's writes; the rest of the batch goes on. Runs on a task of its own,
    /// like [`Turn::commit`].
    pub(super) async fn rollback(self) -> Result<(), sqlx::Error> {
        if self.alone {
            // Its statement, if it ran, committed on its own: there is nothing to undo.
            drop(self);
            return Ok(());
        }
        uncancellable(self.rollback_now()).await
    }

    async fn rollback_now(mut self) -> Result<(), sqlx::Error> {
        let writer = self.writer.clone();
        let mut guard = self.guard.take().expect("a turn holds the lock");
        if let Err(e) = undo_savepoint(&mut guard).await {
            writer.fail_batch(&mut guard, &e).await;
            return Err(e);
        }
        writer.release(guard).await;
        Ok(())
    }
}

/// Runs `work` on a task of its own and waits for it: dropping the waiting future does not
/// stop the task, so the writer's statements and its bookkeeping always finish together.
async fn uncancellable<T: Send + 'static>(
    work: impl std::future::Future<Output = Result<T, sqlx::Error>> + Send + 'static,
) -> Result<T, sqlx::Error> {
    tokio::spawn(work)
        .await
        .map_err(|e| sqlx::Error::Protocol(format!("the writer's task failed: {e}")))?
}

impl Drop for Turn {
    /// Neither committed nor rolled back (an error returned early, or the request's future
    /// was dropped): undo the savepoint on a task of its own, or leave that to the next
    /// holder of the lock when no runtime is there to run one.
    fn drop(&mut self) {
        let Some(mut guard) = self.guard.take() else {
            return;
        };
        if self.alone {
            // A single statement's turn ends here, however it ends: there is nothing to
            // undo, and the connection stays with the writer; SQLite's write lock is free.
            guard.holding = None;
            return;
        }
        guard.abandoned = true;
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let writer = self.writer.clone();
            runtime.spawn(async move {
                writer.settle(&mut guard).await;
                writer.release(guard).await;
            });
        }
    }
}

async fn exec(state: &mut State, sql: &'static str) -> Result<(), sqlx::Error> {
    let conn = state
        .conn
        .as_deref_mut()
        .ok_or_else(|| sqlx::Error::Protocol("the writer has no connection".into()))?;
    sqlx::raw_sql(sql).execute(conn).await.map(|_| ())
}

async fn undo_savepoint(state: &mut State) -> Result<(), sqlx::Error> {
    exec(state, "ROLLBACK TO SAVEPOINT request").await?;
    exec(state, "RELEASE SAVEPOINT request").await
}
