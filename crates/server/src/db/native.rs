//! A native SQLite writer: one thread owning one `rusqlite` connection, running whole write
//! transactions handed to it as closures, with group commit.
//!
//! Through sqlx every statement of a transaction, and every row it returns, is a message to
//! the connection's worker thread and back: an enrollment of about twenty records made some
//! fifty such trips, each a context switch or two, and on a small machine under load each
//! waits for that thread to be scheduled. Here a request hands its **whole** write (a closure
//! over the connection) to the writer thread in one message and gets one answer: the thread
//! runs the statements back to back on prepared, cached statements.
//!
//! Group commit as in [`super::group_commit`]: the thread takes the first job waiting, opens a
//! batch (`BEGIN IMMEDIATE`), and runs it and the jobs queued behind it (up to [`MAX_MEMBERS`],
//! for at most [`MAX_AGE`]) each inside a `SAVEPOINT` of its own. A job that returns an error
//! (or panics) is rolled back to its savepoint alone; then one `COMMIT`, and only then is
//! every job of the batch answered, so an answered write is durable (WAL with
//! `synchronous = NORMAL`: it survives a crash of the process). If the `COMMIT` fails,
//! every job that kept its writes gets the error. A job runs whether or not its caller still
//! waits: a request dropped mid-way leaves a whole write or none, never half.
//!
//! The pool's writer of the same file still writes: the two take turns at SQLite's write
//! lock through one fair in-process lock (each batch holds it from `BEGIN IMMEDIATE` to
//! `COMMIT`), not SQLite's busy handler, whose polling the writer that takes the lock again at
//! once would win nearly every time. Another process still waits in the busy handler (the
//! same busy timeout as the pool's). Only the hottest writes (a service's
//! per-request writes) are worth sending here; the rest stay on sqlx.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub use rusqlite;
use tokio::sync::oneshot;

use super::checkpoint;

/// At most this many jobs share a batch: bounds what one failed `COMMIT` takes down.
const MAX_MEMBERS: usize = 64;
/// A batch older than this commits at the next job even if others wait: bounds how long the
/// first job of a long burst waits for its answer. Shorter than the pool writer's 10 ms: a
/// job here runs in a fraction of a millisecond, so 2 ms is already a batch of several.
const MAX_AGE: Duration = Duration::from_millis(2);
/// Prepared statements kept per connection (an enrollment uses about a dozen shapes).
const STATEMENT_CACHE: usize = 128;
/// Idle read connections kept for [`NativeWriter::read`].
const READERS: usize = 8;

/// Why a native write did not run or did not commit.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    /// The writer could not open the database.
    #[error("cannot open the native SQLite writer: {0}")]
    Open(#[from] rusqlite::Error),
    /// The batch holding the write failed (its `BEGIN`, a savepoint or the `COMMIT`).
    #[error("the write batch failed: {0}")]
    Batch(String),
    /// The write panicked (it was rolled back).
    #[error("the write panicked")]
    Panicked,
    /// The writer thread is gone (the database was closed).
    #[error("the native SQLite writer has stopped")]
    Stopped,
}

impl From<NativeError> for sqlx::Error {
    fn from(e: NativeError) -> Self {
        match e {
            NativeError::Stopped => sqlx::Error::PoolClosed,
            NativeError::Open(e) => database_error(e),
            other => sqlx::Error::Io(std::io::Error::other(other)),
        }
    }
}

/// A rusqlite error as the sqlx error the same failure gives through the pool, so that
/// callers classify both alike ([`crate::sql_error`]): a failure SQLite reported carries its
/// extended result code (a unique violation is one), anything else is an I/O error.
pub fn database_error(e: rusqlite::Error) -> sqlx::Error {
    match e {
        rusqlite::Error::SqliteFailure(code, message) => {
            sqlx::Error::Database(Box::new(SqliteFailure { code, message }))
        }
        other => sqlx::Error::Io(std::io::Error::other(other)),
    }
}

/// A failure SQLite reported on the native connection.
#[derive(Debug)]
struct SqliteFailure {
    code: rusqlite::ffi::Error,
    message: Option<String>,
}

impl std::fmt::Display for SqliteFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.message {
            Some(m) => f.write_str(m),
            None => write!(f, "{}", self.code),
        }
    }
}

impl std::error::Error for SqliteFailure {}

impl sqlx::error::DatabaseError for SqliteFailure {
    fn message(&self) -> &str {
        self.message.as_deref().unwrap_or("SQLite failure")
    }

    fn code(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(self.code.extended_code.to_string().into())
    }

    fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self
    }

    fn kind(&self) -> sqlx::error::ErrorKind {
        use rusqlite::ffi;
        match self.code.extended_code {
            ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                sqlx::error::ErrorKind::UniqueViolation
            }
            ffi::SQLITE_CONSTRAINT_FOREIGNKEY => sqlx::error::ErrorKind::ForeignKeyViolation,
            ffi::SQLITE_CONSTRAINT_NOTNULL => sqlx::error::ErrorKind::NotNullViolation,
            ffi::SQLITE_CONSTRAINT_CHECK => sqlx::error::ErrorKind::CheckViolation,
            _ => sqlx::error::ErrorKind::Other,
        }
    }
}

/// A job as the writer thread sees it.
trait Job: Send {
    /// Runs the write; whether it keeps its writes (`false`: roll back to its savepoint).
    fn run(&mut self, conn: &rusqlite::Connection) -> bool;
    /// Answers the caller once the batch ended (`batch`: how its `COMMIT` went, or why the
    /// job never ran).
    fn answer(self: Box<Self>, batch: Result<(), String>);
}

type Answer<T, E> = Result<Result<T, E>, NativeError>;

struct Typed<T, E, F> {
    work: Option<F>,
    result: Option<std::thread::Result<Result<T, E>>>,
    reply: oneshot::Sender<Answer<T, E>>,
}

impl<T, E, F> Job for Typed<T, E, F>
where
    T: Send,
    E: Send,
    F: FnOnce(&rusqlite::Connection) -> Result<T, E> + Send,
{
    fn run(&mut self, conn: &rusqlite::Connection) -> bool {
        let Some(work) = self.work.take() else {
            return false;
        };
        let result = catch_unwind(AssertUnwindSafe(|| work(conn)));
        let kept = matches!(result, Ok(Ok(_)));
        self.result = Some(result);
        kept
    }

    fn answer(self: Box<Self>, batch: Result<(), String>) {
        let answer = match (self.result, batch) {
            (Some(Ok(Ok(value))), Ok(())) => Ok(Ok(value)),
            // Rolled back to its savepoint: its own error, however the batch ended.
            (Some(Ok(Err(e))), _) => Ok(Err(e)),
            (Some(Err(_)), _) => Err(NativeError::Panicked),
            (Some(Ok(Ok(_))) | None, Err(e)) => Err(NativeError::Batch(e)),
            (None, Ok(())) => Err(NativeError::Batch("the write did not run".into())),
        };
        // The caller may have gone away; its write is done either way.
        let _ = self.reply.send(answer);
    }
}

/// The handle of the writer thread (cheap to share; the thread stops when the last handle
/// is dropped or [`NativeWriter::shut`] is called).
#[derive(Debug)]
pub struct NativeWriter {
    jobs: std::sync::Mutex<Option<mpsc::Sender<Box<dyn Job>>>>,
    /// Idle read connections ([`NativeWriter::read`]), at most [`READERS`].
    readers: std::sync::Mutex<Vec<rusqlite::Connection>>,
    thread: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
    path: PathBuf,
}

impl NativeWriter {
    /// Opens the SQLite file at `path` (which must exist, in WAL mode) with the pool's
    /// pragmas and starts the thread.
    ///
    /// `sqlite_lock` is the process's turn at SQLite's write lock, shared with the pool's
    /// writer: each batch holds it from `BEGIN IMMEDIATE` to `COMMIT`, so the two writers of
    /// the file take turns in a fair queue rather than polling in SQLite's busy handler.
    pub fn start(
        path: &Path,
        foreign_keys: bool,
        sqlite_lock: std::sync::Arc<tokio::sync::Mutex<()>>,
    ) -> Result<Self, NativeError> {
        let conn = rusqlite::Connection::open(path)?;
        let mut pragmas = String::from(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 10000;",
        );
        if foreign_keys {
            pragmas.push_str("PRAGMA foreign_keys = ON;");
        }
        pragmas.push_str(checkpoint::SAFETY_NET);
        // `journal_mode` answers a row, which `execute_batch` refuses: run each on its own.
        for pragma in pragmas.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            conn.query_row(pragma, [], |_| Ok(()))
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(()),
                    e => Err(e),
                })?;
        }
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let (jobs, queue) = mpsc::channel::<Box<dyn Job>>();
        let thread = std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || run(&conn, &queue, &sqlite_lock))
            .map_err(|e| NativeError::Batch(format!("cannot start the writer thread: {e}")))?;
        Ok(Self {
            jobs: std::sync::Mutex::new(Some(jobs)),
            readers: std::sync::Mutex::new(Vec::new()),
            thread: std::sync::Mutex::new(Some(thread)),
            path: path.to_owned(),
        })
    }

    /// The database file this writer writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `work` on the writer thread inside the open batch and returns its result once the
    /// batch's `COMMIT` succeeded (or at once, if `work` failed and was rolled back). `work`
    /// must be short and must not wait for anything but the database: every other write of
    /// the process waits behind it.
    pub async fn write<T, E, F>(&self, work: F) -> Answer<T, E>
    where
        T: Send + 'static,
        E: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T, E> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: Box<dyn Job> = Box::new(Typed {
            work: Some(work),
            result: None,
            reply,
        });
        let sent = match &*self.jobs.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(jobs) => jobs.send(job).is_ok(),
            None => false,
        };
        if !sent {
            return Err(NativeError::Stopped);
        }
        answer.await.unwrap_or(Err(NativeError::Stopped))
    }

    /// Runs `reads` in a read transaction (one snapshot) on a native read connection, on the
    /// **calling** thread: a handful of indexed reads in WAL mode take tens of microseconds
    /// and wait for no writer, less than handing them to another thread and back would cost.
    /// Nothing may be written through it (the connection is `query_only`).
    ///
    /// Errors are sqlx's (a failure of SQLite's as [`database_error`] words it), the type the
    /// same read answers through the pool, or any type made from them (a store's error), so
    /// a store function reads alike on both paths.
    pub fn read<T, E: From<sqlx::Error>>(
        &self,
        reads: impl FnOnce(&rusqlite::Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        let conn = self.reader().map_err(database_error)?;
        conn.prepare_cached("BEGIN")
            .and_then(|mut begin| begin.execute([]))
            .map_err(database_error)?;
        let result = reads(&conn);
        // Ending a read transaction cannot lose anything; a connection that cannot end it
        // is dropped rather than kept.
        if conn
            .prepare_cached("COMMIT")
            .and_then(|mut end| end.execute([]))
            .is_ok()
        {
            self.give_back(conn);
        }
        result
    }

    /// [`NativeWriter::read`] of a read that is **one** statement, without `BEGIN` and
    /// `COMMIT`: a single statement sees one snapshot by itself (SQLite runs it in an
    /// implicit read transaction, ended when the statement is reset), so the two steps
    /// would only add their cost. `read` must run exactly one statement and let it finish
    /// (drop its rows) before it returns.
    pub fn read_one<T, E: From<sqlx::Error>>(
        &self,
        read: impl FnOnce(&rusqlite::Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        let conn = self.reader().map_err(database_error)?;
        let result = read(&conn);
        // A statement left running would hold its snapshot (and the WAL) while idle.
        if conn.is_autocommit() {
            self.give_back(conn);
        }
        result
    }

    /// An idle read connection, or a new one (`query_only`, the pool's busy timeout).
    fn reader(&self) -> rusqlite::Result<rusqlite::Connection> {
        let idle = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        if let Some(conn) = idle {
            return Ok(conn);
        }
        let conn = rusqlite::Connection::open_with_flags(
            &self.path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.pragma_update(None, "query_only", true)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Ok(conn)
    }

    /// Keeps an idle read connection for the next read, up to [`READERS`].
    fn give_back(&self, conn: rusqlite::Connection) {
        let mut idle = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < READERS {
            idle.push(conn);
        }
    }

    /// Stops taking jobs, lets the thread finish those queued, and closes the connection.
    pub async fn shut(&self) {
        self.readers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.jobs.lock().unwrap_or_else(|p| p.into_inner()).take();
        let thread = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(thread) = thread {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }
}

/// The writer thread: a batch per burst of jobs, until every sender is gone.
fn run(
    conn: &rusqlite::Connection,
    queue: &mpsc::Receiver<Box<dyn Job>>,
    sqlite_lock: &tokio::sync::Mutex<()>,
) {
    while let Ok(first) = queue.recv() {
        // A thread of its own, outside any runtime: waiting here blocks nobody else.
        let turn = sqlite_lock.blocking_lock();
        if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
            drop(turn);
            first.answer(Err(e.to_string()));
            continue;
        }
        let started = Instant::now();
        let mut ran: Vec<Box<dyn Job>> = Vec::new();
        let mut broken = None;
        let mut next = Some(first);
        while let Some(mut job) = next.take() {
            if let Err(e) = conn.execute_batch("SAVEPOINT request") {
                broken = Some(e.to_string());
                ran.push(job);
                break;
            }
            let end = if job.run(conn) {
                "RELEASE SAVEPOINT request"
            } else {
                "ROLLBACK TO SAVEPOINT request; RELEASE SAVEPOINT request"
            };
            ran.push(job);
            if let Err(e) = conn.execute_batch(end) {
                broken = Some(e.to_string());
                break;
            }
            if ran.len() < MAX_MEMBERS && started.elapsed() < MAX_AGE {
                next = queue.try_recv().ok();
            }
        }
        let outcome = match broken {
            None => conn.execute_batch("COMMIT").map_err(|e| e.to_string()),
            Some(e) => Err(e),
        };
        if outcome.is_err() && !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        drop(turn);
        for job in ran {
            job.answer(outcome.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(path: &Path) -> i64 {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.query_row("SELECT COUNT(*) FROM item", [], |r| r.get(0))
            .unwrap()
    }

    /// Concurrent jobs share batches; a failing and a panicking one leave nothing and the
    /// others are unaffected; every answered write is visible from another connection.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn jobs_commit_together_and_fail_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.sqlite3");
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE item (n INTEGER PRIMARY KEY)")
            .unwrap();
        let writer = std::sync::Arc::new(
            NativeWriter::start(&path, false, std::sync::Arc::default()).unwrap(),
        );
        let mut tasks = Vec::new();
        for n in 0..90i64 {
            let writer = writer.clone();
            tasks.push(tokio::spawn(async move {
                writer
                    .write(move |c| {
                        let mut insert = c.prepare_cached("INSERT INTO item (n) VALUES (?1)")?;
                        insert.execute([n])?;
                        match n % 3 {
                            // The second insert of the same key fails: nothing of it stays.
                            0 => insert.execute([n]).map(drop),
                            1 if n == 1 => panic!("a job that panics"),
                            _ => Ok(()),
                        }
                    })
                    .await
            }));
        }
        let mut kept = Vec::new();
        for (n, task) in tasks.into_iter().enumerate() {
            match task.await.unwrap() {
                Ok(Ok(())) => kept.push(n as i64),
                Ok(Err(_)) => assert_eq!(n % 3, 0),
                Err(NativeError::Panicked) => assert_eq!(n, 1),
                Err(e) => panic!("job {n}: {e}"),
            }
        }
        assert_eq!(kept.len(), 59);
        assert_eq!(count(&path), 59);
        writer.shut().await;
        let after = writer.write(|_| Ok::<(), rusqlite::Error>(())).await;
        assert!(matches!(after, Err(NativeError::Stopped)));
    }
}
