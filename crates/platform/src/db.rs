//! The database: one pool over SQLite or PostgreSQL through sqlx's `Any` driver, the embedded
//! migrations, and the one transaction each request runs in.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::any::AnyPoolOptions;
use sqlx::{Any, AnyPool};

use crate::config::Backend;
use crate::error::PlatformError;

/// The transaction a request (or an administrative call) runs in.
pub type Tx = sqlx::Transaction<'static, Any>;

/// One migration set for both backends: the schema uses portable types only.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// The pool plus what it talks to.
#[derive(Debug, Clone)]
pub struct Db {
    pool: AnyPool,
    backend: Backend,
}

impl Db {
    /// Opens a pool. A SQLite file is created if missing and put in WAL mode, with foreign
    /// keys enforced and a busy timeout so concurrent writers wait instead of failing.
    pub async fn connect(url: &str) -> Result<Self, PlatformError> {
        sqlx::any::install_default_drivers();
        let backend = Backend::from_url(url).ok_or_else(|| {
            PlatformError::Config("database URL must start with sqlite: or postgres://".into())
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
                                "PRAGMA foreign_keys = ON",
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
        Ok(Self { pool, backend })
    }

    /// Runs the embedded migrations that have not run yet.
    pub async fn migrate(&self) -> Result<(), PlatformError> {
        MIGRATOR.run(&self.pool).await?;
        Ok(())
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Starts a transaction that only reads.
    pub async fn begin_read(&self) -> Result<Tx, sqlx::Error> {
        self.pool.begin().await
    }

    /// Starts a transaction that will write. On SQLite it takes the write lock at once
    /// (`BEGIN IMMEDIATE`): a deferred transaction that read first could fail with
    /// "database is locked" when it later tries to write under concurrency.
    pub async fn begin_write(&self) -> Result<Tx, sqlx::Error> {
        match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.pool.begin().await,
        }
    }

    /// Closes every connection (SQLite checkpoints its WAL on the last close).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Milliseconds since the Unix epoch: the portable time type of the schema.
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// An epoch-millisecond time as RFC 3339 in UTC, for example `2026-05-01T12:00:00.123Z`.
pub fn rfc3339(millis: i64) -> String {
    let nanos = i128::from(millis) * 1_000_000;
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_render_as_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
    }
}
