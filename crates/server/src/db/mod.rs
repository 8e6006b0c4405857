//! The database of a server: one pool over SQLite or PostgreSQL through sqlx's `Any` driver
//! (one SQL text with `$1` placeholders serves both), and the one way both servers start a
//! transaction.
//!
//! **Write strategy.** SQLite allows one writer at a time. Left to its busy handler,
//! concurrent writers poll and retry, which made tail latency hundreds of milliseconds under
//! load; so on SQLite every write transaction first takes an in-process FIFO queue (a fair
//! `tokio` mutex) and then `BEGIN IMMEDIATE`, which takes SQLite's write lock at once: a
//! deferred transaction that read first could fail with a stale snapshot when it later tries
//! to write. The busy timeout stays as the guard against a second process. The requests in
//! that queue share one SQLite transaction, a savepoint each, and one `COMMIT`
//! ([`group_commit`]). PostgreSQL has row locks and needs none of this.
//!
//! With the `native-sqlite` feature a server may also start a [`native`] writer: a thread of
//! its own with a rusqlite connection to the same file, to which a request hands its whole
//! write transaction in one message (group commit there too). It is for the hottest writes;
//! the two writers of one file take SQLite's write lock in turn, queued fairly on one
//! in-process lock that each holds from `BEGIN IMMEDIATE` to `COMMIT`.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::migrate::{MigrateError, Migrator};
use sqlx::{Any, AnyConnection, AnyPool};

mod checkpoint;
mod group_commit;
#[cfg(feature = "native-sqlite")]
pub mod native;
mod spare;

pub use group_commit::GroupCommitStats;

/// How long a write transaction waits for its turn in the SQLite queue before it gives up
/// with [`sqlx::Error::PoolTimedOut`] (the same as the pool's acquire timeout): a bounded wait
/// turns a mistake such as a nested write transaction into an error instead of a hang.
const QUEUE_TIMEOUT: Duration = Duration::from_secs(30);

/// A pooled connection idle for longer than this is pinged before it is handed out (one that
/// fails is replaced). sqlx pings on *every* acquire by default: a round trip per
/// transaction, which under load costs as much as a statement; a connection in steady use
/// has just proved itself alive.
const PING_IF_IDLE_FOR: Duration = Duration::from_secs(1);

/// The acquire check of both backends' pools (see [`PING_IF_IDLE_FOR`]).
fn ping_if_idle(
    conn: &mut AnyConnection,
    meta: sqlx::pool::PoolConnectionMetadata,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<bool, sqlx::Error>> + Send + '_>> {
    Box::pin(async move {
        if meta.idle_for >= PING_IF_IDLE_FOR {
            sqlx::Connection::ping(conn).await?;
        }
        Ok(true)
    })
}

/// Which database a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file in WAL mode.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

impl Backend {
    /// The backend a database URL names: `sqlite:…`, or `postgres://…` / `postgresql://…`.
    pub fn from_url(url: &str) -> Result<Self, ConnectError> {
        if url.starts_with("sqlite:") {
            Ok(Self::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Self::Postgres)
        } else {
            Err(ConnectError::UnsupportedUrl)
        }
    }
}

/// Why a pool could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The URL names no supported database.
    #[error("the database URL must start with sqlite:, postgres:// or postgresql://")]
    UnsupportedUrl,
    /// The database refused or could not be reached.
    #[error("cannot open the database: {0}")]
    Database(#[from] sqlx::Error),
}

/// What differs between the two servers' pools.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// `PRAGMA foreign_keys = ON` on SQLite (the platform relies on cascades; the care
    /// schema predates it and does not).
    pub sqlite_foreign_keys: bool,
}

/// The transaction a request (or an administrative call) runs in. A write transaction on
/// SQLite holds the writer lock and a savepoint in the open batch until it commits, rolls
/// back or drops (a dropped one rolls back).
pub struct Tx {
    inner: Inner,
    backend: Backend,
}

enum Inner {
    /// A transaction of its own: reads, and every transaction on PostgreSQL.
    Own(sqlx::Transaction<'static, Any>),
    /// A request's part of the SQLite writer's batch.
    Batched(group_commit::Turn),
    /// A pooled connection whose statements commit on their own ([`Db::begin_single_read`],
    /// and [`Db::begin_reads`] and [`Db::begin_single_write`] on PostgreSQL); commit and
    /// rollback have nothing to do but keep the connection for the next such call
    /// ([`spare`]).
    Statements(sqlx::pool::PoolConnection<Any>, Arc<spare::Spares>),
}

impl std::fmt::Debug for Tx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tx")
            .field("batched_writer", &matches!(self.inner, Inner::Batched(_)))
            .finish_non_exhaustive()
    }
}

impl Tx {
    /// Which database this runs on (for the few statements whose SQL differs).
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Commits; returns once the writes are durable (on SQLite, once the batch holding them
    /// committed).
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        self.end(End::Commit).await
    }

    /// Rolls back (on SQLite, this request's savepoint; the batch goes on).
    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        self.end(End::Rollback).await
    }

    /// Ends the transaction as `end` says. Statements that committed on their own end the
    /// same either way: nothing to send, the connection kept for the next such call.
    async fn end(self, end: End) -> Result<(), sqlx::Error> {
        match (self.inner, end) {
            (Inner::Own(tx), End::Commit) => tx.commit().await,
            (Inner::Own(tx), End::Rollback) => tx.rollback().await,
            (Inner::Batched(turn), End::Commit) => turn.commit().await,
            (Inner::Batched(turn), End::Rollback) => turn.rollback().await,
            (Inner::Statements(conn, spares), _) => {
                spares.keep(conn);
                Ok(())
            }
        }
    }
}

/// How a [`Tx`] ends.
#[derive(Debug, Clone, Copy)]
enum End {
    Commit,
    Rollback,
}

impl Deref for Tx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        match &self.inner {
            Inner::Own(tx) => tx,
            Inner::Batched(turn) => turn.conn(),
            Inner::Statements(conn, _) => conn,
        }
    }
}

impl DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match &mut self.inner {
            Inner::Own(tx) => &mut *tx,
            Inner::Batched(turn) => turn.conn_mut(),
            Inner::Statements(conn, _) => &mut *conn,
        }
    }
}

/// The pool, what it talks to, and (on SQLite) the writer queue.
#[derive(Debug, Clone)]
pub struct Db {
    pool: AnyPool,
    backend: Backend,
    writer: Option<Arc<group_commit::Writer>>,
    /// Connections kept between one-statement calls ([`spare`]).
    spares: Arc<spare::Spares>,
    /// SQLite's WAL checkpoints, run in the background ([`checkpoint`]).
    checkpointer: Option<Arc<checkpoint::Checkpointer>>,
    /// The native SQLite writer, once started ([`Db::start_native_writer`]).
    #[cfg(feature = "native-sqlite")]
    native: Option<Arc<native::NativeWriter>>,
    /// Whether the pool's connections enforce foreign keys (the native writer's must too).
    #[cfg(feature = "native-sqlite")]
    foreign_keys: bool,
}

impl Db {
    /// Opens a pool. A SQLite file is created if missing and put in WAL mode with
    /// `synchronous = NORMAL` (durable across a process crash; the last transactions can be
    /// lost only to a power failure) and a busy timeout.
    pub async fn connect(url: &str, options: Options) -> Result<Self, ConnectError> {
        sqlx::any::install_default_drivers();
        let backend = Backend::from_url(url)?;
        let pool = match backend {
            Backend::Sqlite => {
                let url = if url.contains('?') {
                    url.to_owned()
                } else {
                    format!("{url}?mode=rwc")
                };
                AnyPoolOptions::new()
                    .max_connections(8 + spare::Spares::CAPACITY as u32)
                    .acquire_timeout(QUEUE_TIMEOUT)
                    .test_before_acquire(false)
                    .before_acquire(ping_if_idle)
                    .after_connect(move |conn, _meta| {
                        Box::pin(async move {
                            let mut pragmas = vec![
                                "PRAGMA journal_mode = WAL",
                                "PRAGMA synchronous = NORMAL",
                                "PRAGMA busy_timeout = 10000",
                            ];
                            if options.sqlite_foreign_keys {
                                pragmas.push("PRAGMA foreign_keys = ON");
                            }
                            pragmas.push(checkpoint::SAFETY_NET);
                            for pragma in pragmas {
                                sqlx::query(pragma).execute(&mut *conn).await?;
                            }
                            Ok(())
                        })
                    })
                    .connect(&url)
                    .await?
            }
            Backend::Postgres => {
                AnyPoolOptions::new()
                    .max_connections(16 + spare::Spares::CAPACITY as u32)
                    .acquire_timeout(QUEUE_TIMEOUT)
                    .test_before_acquire(false)
                    .before_acquire(ping_if_idle)
                    .connect(url)
                    .await?
            }
        };
        let writer =
            (backend == Backend::Sqlite).then(|| Arc::new(group_commit::Writer::new(pool.clone())));
        let checkpointer = (backend == Backend::Sqlite)
            .then(|| Arc::new(checkpoint::Checkpointer::start(pool.clone())));
        Ok(Self {
            pool,
            backend,
            writer,
            spares: Arc::default(),
            checkpointer,
            #[cfg(feature = "native-sqlite")]
            native: None,
            #[cfg(feature = "native-sqlite")]
            foreign_keys: options.sqlite_foreign_keys,
        })
    }

    /// On a SQLite file, starts the native writer ([`native`]) for the writes a server sends
    /// it ([`Db::native`]); on PostgreSQL and an in-memory SQLite database it does nothing.
    /// Call it after the migrations, before the `Db` is cloned.
    #[cfg(feature = "native-sqlite")]
    pub async fn start_native_writer(&mut self) -> Result<(), sqlx::Error> {
        use sqlx::Row as _;
        if self.backend != Backend::Sqlite {
            return Ok(());
        }
        let mut conn = self.pool.acquire().await?;
        let file: String = sqlx::query("SELECT file FROM pragma_database_list WHERE name = 'main'")
            .fetch_one(&mut *conn)
            .await?
            .try_get(0)?;
        drop(conn);
        if file.is_empty() {
            return Ok(());
        }
        let sqlite_lock = self
            .writer
            .as_ref()
            .map(|w| w.sqlite_lock())
            .unwrap_or_default();
        let writer = native::NativeWriter::start(
            std::path::Path::new(&file),
            self.foreign_keys,
            sqlite_lock,
        )
        .map_err(|e| sqlx::Error::Configuration(Box::new(e)))?;
        self.native = Some(Arc::new(writer));
        Ok(())
    }

    /// The native SQLite writer, if [`Db::start_native_writer`] started one.
    #[cfg(feature = "native-sqlite")]
    pub fn native(&self) -> Option<&native::NativeWriter> {
        self.native.as_deref()
    }

    /// Runs the migrations of `migrator` that have not run yet.
    pub async fn migrate(&self, migrator: &Migrator) -> Result<(), MigrateError> {
        migrator.run(&self.pool).await
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The pool, for what a transaction does not fit (benchmarks, `VACUUM`).
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Starts a transaction that only reads (never queued: WAL readers do not block).
    pub async fn begin_read(&self) -> Result<Tx, sqlx::Error> {
        Ok(self.tx(Inner::Own(self.pool.begin().await?)))
    }

    /// Starts the reads of a request that reads before it writes, as cheaply as the backend
    /// allows while every statement still sees only committed data: on SQLite a read
    /// transaction (one snapshot for all of them); on PostgreSQL a plain connection, since at
    /// its READ COMMITTED level each statement takes a snapshot of its own inside a
    /// transaction too, and `BEGIN` and `ROLLBACK` would only add two round trips. Nothing
    /// may be written through it.
    pub async fn begin_reads(&self) -> Result<Tx, sqlx::Error> {
        let inner = match self.backend {
            Backend::Sqlite => Inner::Own(self.pool.begin().await?),
            Backend::Postgres => self.statements().await?,
        };
        Ok(self.tx(inner))
    }

    fn tx(&self, inner: Inner) -> Tx {
        Tx {
            inner,
            backend: self.backend,
        }
    }

    /// A connection for statements that commit on their own: a kept one if there is one
    /// ([`spare`]), else one from the pool.
    async fn statements(&self) -> Result<Inner, sqlx::Error> {
        let conn = match self.spares.take().await {
            Some(conn) => conn,
            None => self.pool.acquire().await?,
        };
        Ok(Inner::Statements(conn, self.spares.clone()))
    }

    /// A connection for a read that is **one** statement, on both backends without a
    /// transaction: a single statement sees one snapshot by itself (SQLite runs it in an
    /// implicit read transaction), so `BEGIN` and `ROLLBACK` would only add two steps.
    /// Nothing may be written through it.
    pub async fn begin_single_read(&self) -> Result<Tx, sqlx::Error> {
        Ok(self.tx(self.statements().await?))
    }

    /// Starts the write of a request that writes exactly **one** statement (a history or
    /// audit record): on PostgreSQL that statement commits on its own, atomic and durable by
    /// itself, in one round trip instead of `BEGIN`, the statement and `COMMIT`; on SQLite it
    /// waits for its turn in the writer queue like [`Db::begin_write`] and then runs on its
    /// own the same way, or joins the open batch if a writer before it handed one over
    /// (`group_commit::Writer::begin_single`). `commit` must still be called; `rollback`
    /// cannot undo a statement that ran outside a batch.
    pub async fn begin_single_write(&self) -> Result<Tx, sqlx::Error> {
        let inner = match &self.writer {
            Some(writer) => Inner::Batched(writer.begin_single(QUEUE_TIMEOUT).await?),
            None => self.statements().await?,
        };
        Ok(self.tx(inner))
    }

    /// Starts a transaction that will write: on SQLite it waits for its turn in the writer
    /// queue and joins the open batch (or opens one with `BEGIN IMMEDIATE`).
    pub async fn begin_write(&self) -> Result<Tx, sqlx::Error> {
        let inner = match &self.writer {
            Some(writer) => Inner::Batched(writer.begin(QUEUE_TIMEOUT).await?),
            None => Inner::Own(self.pool.begin().await?),
        };
        Ok(self.tx(inner))
    }

    /// Batches the SQLite writer committed so far and the requests they held (`None` on
    /// PostgreSQL).
    pub fn group_commits(&self) -> Option<GroupCommitStats> {
        self.writer.as_ref().map(|w| w.stats())
    }

    /// Background WAL checkpoints run so far (`None` on PostgreSQL).
    pub fn checkpoints(&self) -> Option<u64> {
        self.checkpointer.as_ref().map(|c| c.runs())
    }

    /// Closes every connection (SQLite checkpoints its WAL on the last close).
    pub async fn close(&self) {
        if let Some(checkpointer) = &self.checkpointer {
            checkpointer.stop();
        }
        self.spares.close();
        // The pool's writer first: its open batch, if any, ends and frees SQLite's write
        // lock, which the native writer's queued jobs then take.
        if let Some(writer) = &self.writer {
            writer.shut(QUEUE_TIMEOUT).await;
        }
        #[cfg(feature = "native-sqlite")]
        if let Some(native) = &self.native {
            native.shut().await;
        }
        self.pool.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Row;

    #[test]
    fn urls_name_their_backend_and_others_are_refused() {
        assert_eq!(Backend::from_url("sqlite://x.db").unwrap(), Backend::Sqlite);
        assert_eq!(
            Backend::from_url("sqlite::memory:").unwrap(),
            Backend::Sqlite
        );
        for pg in ["postgres://u@h/db", "postgresql://u@h/db"] {
            assert_eq!(Backend::from_url(pg).unwrap(), Backend::Postgres);
        }
        for bad in ["mysql://x", "postgres:db", "", "SQLITE:x"] {
            assert!(
                matches!(Backend::from_url(bad), Err(ConnectError::UnsupportedUrl)),
                "{bad}"
            );
        }
    }

    /// Runs one statement in a write transaction of its own and commits it.
    async fn write(db: &Db, sql: &'static str) {
        let mut tx = db.begin_write().await.unwrap();
        execute(&mut tx, sql).await;
        tx.commit().await.unwrap();
    }

    /// Runs one statement in `tx`.
    async fn execute(tx: &mut Tx, sql: &'static str) {
        sqlx::query(sql).execute(&mut **tx).await.unwrap();
    }

    /// Inserts row `n` into `item`.
    async fn insert_item(tx: &mut Tx, n: i64) -> Result<(), sqlx::Error> {
        sqlx::query("INSERT INTO item (n) VALUES ($1)")
            .bind(n)
            .execute(&mut **tx)
            .await
            .map(drop)
    }

    /// The value of the one row of `counter`.
    async fn counter(tx: &mut Tx) -> i64 {
        sqlx::query("SELECT n FROM counter")
            .fetch_one(&mut **tx)
            .await
            .unwrap()
            .try_get(0)
            .unwrap()
    }

    /// A SQLite database `t.sqlite3` in a directory of its own (which it goes with), holding
    /// a `counter` of one row, 0.
    async fn sqlite() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.sqlite3").display());
        let db = Db::connect(
            &url,
            Options {
                sqlite_foreign_keys: true,
            },
        )
        .await
        .unwrap();
        let mut tx = db.begin_write().await.unwrap();
        execute(&mut tx, "CREATE TABLE counter (n BIGINT NOT NULL)").await;
        execute(&mut tx, "INSERT INTO counter (n) VALUES (0)").await;
        tx.commit().await.unwrap();
        (dir, db)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_sqlite_writers_queue_and_none_is_lost() {
        let (_dir, db) = sqlite().await;
        let mut tasks = Vec::new();
        for _ in 0..32 {
            let db = db.clone();
            tasks.push(tokio::spawn(async move {
                let mut tx = db.begin_write().await?;
                let n: i64 = sqlx::query("SELECT n FROM counter")
                    .fetch_one(&mut *tx)
                    .await?
                    .try_get(0)?;
                tokio::task::yield_now().await;
                sqlx::query("UPDATE counter SET n = $1")
                    .bind(n + 1)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await
            }));
        }
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        let mut tx = db.begin_read().await.unwrap();
        assert_eq!(
            counter(&mut tx).await,
            32,
            "every read-modify-write ran alone"
        );
    }

    #[tokio::test]
    async fn a_dropped_write_transaction_rolls_back_and_frees_the_queue() {
        let (_dir, db) = sqlite().await;
        {
            let mut tx = db.begin_write().await.unwrap();
            execute(&mut tx, "UPDATE counter SET n = 7").await;
        }
        let mut tx = db.begin_write().await.unwrap();
        assert_eq!(counter(&mut tx).await, 0);
        tx.rollback().await.unwrap();
    }

    /// Committed pages reach the database file through the background checkpointer, not a
    /// committing writer: 300 pages are far below both SQLite's default autocheckpoint
    /// (1,000) and the connections' safety net, so only the background task can have copied
    /// them out of the WAL.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_wal_is_checkpointed_in_the_background() {
        let (dir, db) = sqlite().await;
        let file = dir.path().join("t.sqlite3");
        write(&db, "CREATE TABLE blob (b BLOB NOT NULL)").await;
        let before = std::fs::metadata(&file).unwrap().len();
        let started = db.checkpoints().unwrap();
        for _ in 0..10 {
            write(
                &db,
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30) \
                 INSERT INTO blob (b) SELECT randomblob(4000) FROM n",
            )
            .await;
        }
        let mut grown = 0;
        for _ in 0..50 {
            tokio::time::sleep(checkpoint::INTERVAL).await;
            grown = std::fs::metadata(&file).unwrap().len() - before;
            if grown >= 300 * 4000 {
                break;
            }
        }
        assert!(
            grown >= 300 * 4000,
            "the database file grew by {grown} bytes: the WAL was not checkpointed"
        );
        assert!(db.checkpoints().unwrap() > started);
        db.close().await;
    }

    /// Many writers at once: some commit, some roll back, some are dropped mid-way (their
    /// futures cancelled, as when a client goes away). Exactly the committed rows remain,
    /// each committed writer sees its row from another connection as soon as `commit`
    /// returns (answered means durable), and the commits shared batches.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn batched_writers_commit_together_and_fail_alone() {
        let (_dir, db) = sqlite().await;
        write(&db, "CREATE TABLE item (n BIGINT PRIMARY KEY)").await;
        let mut tasks = Vec::new();
        for n in 0..96i64 {
            let db = db.clone();
            tasks.push(tokio::spawn(async move {
                let mut tx = db.begin_write().await?;
                insert_item(&mut tx, n).await?;
                tokio::task::yield_now().await;
                match n % 4 {
                    0 => {
                        // A second insert of the same key fails; the request rolls back.
                        let dup = insert_item(&mut tx, n).await;
                        assert!(dup.is_err());
                        tx.rollback().await?;
                        Ok(false)
                    }
                    1 => {
                        drop(tx);
                        Ok(false)
                    }
                    _ => {
                        tx.commit().await?;
                        let mut read = db.begin_read().await?;
                        let seen: i64 = sqlx::query("SELECT COUNT(*) FROM item WHERE n = $1")
                            .bind(n)
                            .fetch_one(&mut *read)
                            .await?
                            .try_get(0)?;
                        assert_eq!(seen, 1, "row {n} visible once commit returned");
                        Ok::<bool, sqlx::Error>(true)
                    }
                }
            }));
        }
        let mut committed = 0;
        for t in tasks {
            if t.await.unwrap().unwrap() {
                committed += 1;
            }
        }
        // A writer whose future is cancelled while it holds its turn.
        cancel_while_holding_turn(&db, false, 1000).await;
        write(&db, "INSERT INTO item (n) VALUES (2000)").await;

        let mut expected: Vec<i64> = (0..96).filter(|n| n % 4 >= 2).collect();
        expected.push(2000);
        assert_eq!(items(&db).await, expected);
        assert_eq!(committed, 48);
        let stats = db.group_commits().unwrap();
        assert_eq!(stats.requests, 48 + 3, "every commit counted once");
        assert!(
            stats.batches < stats.requests,
            "concurrent commits shared batches: {stats:?}"
        );
        db.close().await;
    }

    /// Inserts `n` in a write transaction (or a `single` write), then is cancelled (as when
    /// a client goes away) while it still holds its turn.
    async fn cancel_while_holding_turn(db: &Db, single: bool, n: i64) {
        let db = db.clone();
        let writer = tokio::spawn(async move {
            let mut tx = if single {
                db.begin_single_write().await.unwrap()
            } else {
                db.begin_write().await.unwrap()
            };
            insert_item(&mut tx, n).await.unwrap();
            std::future::pending::<()>().await;
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        writer.abort();
        let _ = writer.await;
    }

    async fn items(db: &Db) -> Vec<i64> {
        let mut read = db.begin_read().await.unwrap();
        let rows = sqlx::query("SELECT n FROM item ORDER BY n")
            .fetch_all(&mut *read)
            .await
            .unwrap()
            .iter()
            .map(|r| r.try_get(0).unwrap())
            .collect();
        read.rollback().await.unwrap();
        rows
    }

    async fn insert_single(db: &Db, n: i64) -> Result<(), sqlx::Error> {
        let mut tx = db.begin_single_write().await?;
        let inserted = insert_item(&mut tx, n).await;
        match inserted {
            Ok(_) => tx.commit().await,
            Err(e) => {
                tx.rollback().await?;
                Err(e)
            }
        }
    }

    /// A single-statement write with no batch open runs on its own (no batch is counted),
    /// is visible once `commit` returns, and one that fails leaves nothing and does not hold
    /// the writer up; under contention single writes and transactions share the writer and
    /// every committed one is there exactly once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn single_writes_run_alone_or_join_the_open_batch() {
        let (_dir, db) = sqlite().await;
        write(&db, "CREATE TABLE item (n BIGINT PRIMARY KEY)").await;
        let before = db.group_commits().unwrap();

        insert_single(&db, 1).await.unwrap();
        assert_eq!(items(&db).await, vec![1], "visible once commit returned");
        assert_eq!(
            db.group_commits().unwrap(),
            before,
            "a lone single write opens no batch"
        );
        let duplicate = insert_single(&db, 1).await;
        assert!(duplicate.is_err(), "the primary key holds");
        assert_eq!(items(&db).await, vec![1]);

        // A single write whose caller goes away while it holds its turn: the writer is
        // free again for the writes after it.
        cancel_while_holding_turn(&db, true, 2).await;

        let mut tasks = Vec::new();
        for n in 10..74i64 {
            let db = db.clone();
            tasks.push(tokio::spawn(async move {
                if n % 2 == 0 {
                    insert_single(&db, n).await
                } else {
                    let mut tx = db.begin_write().await?;
                    insert_item(&mut tx, n).await?;
                    tokio::task::yield_now().await;
                    tx.commit().await
                }
            }));
        }
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        let mut expected = vec![1, 2];
        expected.extend(10..74);
        assert_eq!(items(&db).await, expected);
        assert!(
            db.writer.as_ref().unwrap().holds_connection().await,
            "the writer keeps its connection between writes"
        );
        db.close().await;
    }

    /// The native writer and the pool's writer take turns at SQLite's write lock: while the
    /// native writer is kept busy without a pause, the pool's writes and lone statements
    /// still each get their turn (none waits in SQLite's busy handler for a gap that never
    /// comes), and every write of both is there afterwards.
    #[cfg(feature = "native-sqlite")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn the_native_writer_and_the_pool_writer_take_turns() {
        let (_dir, mut db) = sqlite().await;
        write(&db, "CREATE TABLE item (n BIGINT PRIMARY KEY)").await;
        db.start_native_writer().await.unwrap();
        let db = std::sync::Arc::new(db);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Native writes back to back (each waits for its commit, then the next is sent), from
        // enough tasks that the native queue is never empty, each holding the write lock a
        // little (0.2 ms), until the pool's writes are done; at most 500 per task.
        let mut natives = Vec::new();
        for task in 0..16i64 {
            let (db, stop) = (db.clone(), stop.clone());
            natives.push(tokio::spawn(async move {
                let mut written = 0i64;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) && written < 500 {
                    let n = 1_000_000 + task * 100_000 + written;
                    db.native()
                        .unwrap()
                        .write(move |c| {
                            std::thread::sleep(std::time::Duration::from_micros(200));
                            c.execute("INSERT INTO item (n) VALUES (?1)", [n])
                        })
                        .await
                        .unwrap()
                        .unwrap();
                    written += 1;
                }
                written
            }));
        }
        for n in 0..40i64 {
            if n % 2 == 0 {
                let mut tx = db.begin_write().await.unwrap();
                insert_item(&mut tx, n).await.unwrap();
                tx.commit().await.unwrap();
            } else {
                insert_single(&db, n).await.unwrap();
            }
        }
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let mut native_total = 0;
        for task in natives {
            let written = task.await.unwrap();
            assert!(
                written < 500,
                "the pool's writes finished only after the native writer ran out of work"
            );
            native_total += written;
        }
        let all = items(&db).await;
        assert_eq!(all.iter().filter(|n| **n < 40).count(), 40);
        assert_eq!(
            all.iter().filter(|n| **n >= 1_000_000).count(),
            usize::try_from(native_total).unwrap()
        );
        db.close().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_statement_calls_keep_their_connection_for_the_next() {
        let (_dir, db) = sqlite().await;
        // A call that finished hands its connection to the next one (a setting of that
        // connection shows it is the same).
        let mut tx = db.begin_single_read().await.unwrap();
        execute(&mut tx, "PRAGMA cache_size = -1234").await;
        tx.rollback().await.unwrap();
        assert_eq!(db.spares.len(), 1);
        let mut tx = db.begin_single_read().await.unwrap();
        assert_eq!(db.spares.len(), 0);
        let size: i64 = sqlx::query("PRAGMA cache_size")
            .fetch_one(&mut *tx)
            .await
            .unwrap()
            .try_get(0)
            .unwrap();
        assert_eq!(size, -1234);

        // One that did not finish (dropped, as when its request is cancelled) is not kept.
        drop(tx);
        assert_eq!(db.spares.len(), 0);

        // At most `CAPACITY` are kept; the others go back to the pool.
        let mut open = Vec::new();
        for _ in 0..spare::Spares::CAPACITY + 2 {
            open.push(db.begin_single_read().await.unwrap());
        }
        for tx in open {
            tx.commit().await.unwrap();
        }
        assert_eq!(db.spares.len(), spare::Spares::CAPACITY);

        // Closing gives the kept ones back: the pool closes rather than wait for them.
        tokio::time::timeout(Duration::from_secs(10), db.close())
            .await
            .expect("the pool closes with connections kept");
        assert!(db.pool().is_closed());
        assert_eq!(db.spares.len(), 0);
        let after = db.begin_single_read().await;
        assert!(after.is_err(), "a closed pool hands out nothing");
    }
}
