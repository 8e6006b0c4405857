//! Database access shared by both services: the pool, the backend kind, migrations, one
//! transaction per request, and the generic upsert by external ID.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{Any, AnyConnection, AnyPool, Row};
use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::error::CareError;

/// The transaction every request runs in. On SQLite it also holds the process-wide write
/// lock, so writers queue in order instead of polling SQLite's busy handler (which made the
/// tail latency hundreds of milliseconds under load).
pub struct Tx {
    inner: sqlx::Transaction<'static, Any>,
    _write_lock: Option<OwnedMutexGuard<()>>,
}

impl Tx {
    /// Commits, then releases the write lock.
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        let Tx { inner, _write_lock } = self;
        inner.commit().await
    }
}

impl Deref for Tx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        &self.inner
    }
}

impl DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.inner
    }
}

/// Which database the URL names. One SQL text (with `$1` placeholders) serves both; only the
/// migrations and the way a write transaction starts differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file in WAL mode.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

impl Backend {
    /// The backend a database URL names, if any.
    pub fn from_url(url: &str) -> Option<Self> {
        if url.starts_with("sqlite:") {
            Some(Self::Sqlite)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Some(Self::Postgres)
        } else {
            None
        }
    }
}

static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// The pool plus what it talks to.
#[derive(Debug, Clone)]
pub struct Db {
    pool: AnyPool,
    backend: Backend,
    write_lock: Option<Arc<Mutex<()>>>,
}

impl Db {
    /// Opens a pool. SQLite files are created if missing and put in WAL mode.
    pub async fn connect(url: &str) -> Result<Self, CareError> {
        sqlx::any::install_default_drivers();
        let backend = Backend::from_url(url).ok_or_else(|| {
            CareError::Config(
                "database URL must start with sqlite:, postgres: or postgresql:".into(),
            )
        })?;
        let pool = match backend {
            Backend::Sqlite => {
                let url = if url.contains('?') {
                    url.to_owned()
                } else {
                    format!("{url}?mode=rwc")
                };
                AnyPoolOptions::new()
                    .max_connections(8)
                    .acquire_timeout(Duration::from_secs(30))
                    .after_connect(|conn, _meta| {
                        Box::pin(async move {
                            for pragma in [
                                "PRAGMA journal_mode = WAL",
                                "PRAGMA synchronous = NORMAL",
                                "PRAGMA busy_timeout = 10000",
                            ] {
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
                    .max_connections(16)
                    .acquire_timeout(Duration::from_secs(30))
                    .connect(url)
                    .await?
            }
        };
        let write_lock = (backend == Backend::Sqlite).then(|| Arc::new(Mutex::new(())));
        Ok(Self {
            pool,
            backend,
            write_lock,
        })
    }

    /// Runs the embedded migrations of this backend.
    pub async fn migrate(&self) -> Result<(), CareError> {
        match self.backend {
            Backend::Sqlite => SQLITE_MIGRATOR.run(&self.pool).await?,
            Backend::Postgres => POSTGRES_MIGRATOR.run(&self.pool).await?,
        }
        Ok(())
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Starts the one transaction of a request. On SQLite it takes the write lock at once
    /// (`BEGIN IMMEDIATE`): every request writes (history or audit records), and a deferred
    /// transaction that read first could fail with a stale snapshot under concurrency.
    pub async fn begin(&self) -> Result<Tx, sqlx::Error> {
        let write_lock = match &self.write_lock {
            Some(lock) => Some(lock.clone().lock_owned().await),
            None => None,
        };
        let inner = match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.pool.begin().await?,
        };
        Ok(Tx {
            inner,
            _write_lock: write_lock,
        })
    }
}

/// Seconds since the Unix epoch, the portable time type of the schema.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A column value of a generic upsert.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    /// A nullable TEXT column.
    Text(Option<String>),
    /// A nullable BIGINT column.
    Int(Option<i64>),
}

impl From<Option<String>> for Val {
    fn from(v: Option<String>) -> Self {
        Self::Text(v)
    }
}
impl From<String> for Val {
    fn from(v: String) -> Self {
        Self::Text(Some(v))
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Self {
        Self::Text(Some(v.to_owned()))
    }
}
impl From<i64> for Val {
    fn from(v: i64) -> Self {
        Self::Int(Some(v))
    }
}
impl From<Option<i64>> for Val {
    fn from(v: Option<i64>) -> Self {
        Self::Int(v)
    }
}

/// What an upsert did to a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// The record did not exist.
    Created,
    /// The record existed and at least one value changed.
    Updated,
    /// The record existed with the same values.
    Unchanged,
}

impl Change {
    /// Combines the change of a record with the change of its dependent values.
    pub fn and(self, other: Change) -> Change {
        match (self, other) {
            (Change::Created, _) => Change::Created,
            (_, Change::Created | Change::Updated) | (Change::Updated, _) => Change::Updated,
            _ => Change::Unchanged,
        }
    }
}

fn bind_val<'q>(
    q: sqlx::query::Query<'q, Any, sqlx::any::AnyArguments>,
    v: &Val,
) -> sqlx::query::Query<'q, Any, sqlx::any::AnyArguments> {
    match v {
        Val::Text(t) => q.bind(t.clone()),
        Val::Int(i) => q.bind(*i),
    }
}

fn read_val(row: &AnyRow, idx: usize, like: &Val) -> Result<Val, sqlx::Error> {
    Ok(match like {
        Val::Text(_) => Val::Text(row.try_get::<Option<String>, _>(idx)?),
        Val::Int(_) => Val::Int(row.try_get::<Option<i64>, _>(idx)?),
    })
}

/// Inserts or updates the record of `table` whose `external_id` is given, setting `cols`.
/// Only changed values are written, so posting the same data twice changes nothing; a
/// concurrent insert of the same external ID is absorbed by `ON CONFLICT DO NOTHING` and the
/// row is then read again. `table` and column names are compile-time constants.
pub async fn upsert(
    tx: &mut Tx,
    table: &'static str,
    external_id: &str,
    cols: &[(&'static str, Val)],
) -> Result<(i64, Change), sqlx::Error> {
    let names: Vec<&str> = cols.iter().map(|(n, _)| *n).collect();
    let select = if names.is_empty() {
        format!("SELECT id FROM {table} WHERE external_id = $1")
    } else {
        format!(
            "SELECT id, {} FROM {table} WHERE external_id = $1",
            names.join(", ")
        )
    };
    for _attempt in 0..2 {
        let existing = sqlx::query(sqlx::AssertSqlSafe(select.clone()))
            .bind(external_id.to_owned())
            .fetch_optional(&mut **tx)
            .await?;
        if let Some(row) = existing {
            let id: i64 = row.try_get(0)?;
            let mut changed = false;
            for (i, (_, v)) in cols.iter().enumerate() {
                if read_val(&row, i + 1, v)? != *v {
                    changed = true;
                    break;
                }
            }
            if !changed {
                return Ok((id, Change::Unchanged));
            }
            let sets: Vec<String> = names
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{n} = ${}", i + 2))
                .collect();
            let sql = format!(
                "UPDATE {table} SET {}, updated_at = ${} WHERE id = $1",
                sets.join(", "),
                cols.len() + 2
            );
            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id);
            for (_, v) in cols {
                q = bind_val(q, v);
            }
            q.bind(now()).execute(&mut **tx).await?;
            return Ok((id, Change::Updated));
        }
        let placeholders: Vec<String> = (1..=cols.len() + 3).map(|i| format!("${i}")).collect();
        let sql = format!(
            "INSERT INTO {table} (external_id{}{}, created_at, updated_at) VALUES ({}) \
             ON CONFLICT (external_id) DO NOTHING RETURNING id",
            if names.is_empty() { "" } else { ", " },
            names.join(", "),
            placeholders.join(", ")
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(external_id.to_owned());
        for (_, v) in cols {
            q = bind_val(q, v);
        }
        let ts = now();
        let inserted = q.bind(ts).bind(ts).fetch_optional(&mut **tx).await?;
        if let Some(row) = inserted {
            return Ok((row.try_get(0)?, Change::Created));
        }
        // Another transaction inserted it meanwhile: read it again and update if needed.
    }
    Err(sqlx::Error::RowNotFound)
}

/// Parses a JSON array of strings stored in a TEXT column; a malformed value reads as empty.
pub fn json_strings(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}
