//! SQLite: a consistent snapshot of a live database with `VACUUM INTO` (one read
//! transaction, so a WAL database keeps serving writers meanwhile; never a copy of the file,
//! which could catch a page half-way through a checkpoint), and the check of a staged one
//! before it replaces anything.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::Connection as _;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};

use crate::error::BackupError;

/// The file a `sqlite:` URL names (`sqlite:///abs/path`, `sqlite://rel/path`,
/// `sqlite:path`, query parameters ignored); `None` for another scheme or an in-memory
/// database.
pub fn file_of(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite:")?;
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let path = rest.split('?').next().unwrap_or_default();
    (!path.is_empty() && path != ":memory:").then(|| PathBuf::from(path))
}

async fn open(file: &Path) -> Result<SqliteConnection, sqlx::Error> {
    let options = SqliteConnectOptions::new()
        .filename(file)
        .create_if_missing(false)
        // A server's writer may hold the lock for a moment; the snapshot's read waits.
        .busy_timeout(Duration::from_secs(30));
    SqliteConnection::connect_with(&options).await
}

/// Refuses a database file that is not there (a wrong `--data-dir` or `--database-url`).
pub fn ensure_exists(file: &Path) -> Result<(), BackupError> {
    if file.is_file() {
        return Ok(());
    }
    Err(BackupError::Database {
        what: format!("no SQLite database at {}", file.display()),
        reason: "is the data directory or --database-url right?".into(),
    })
}

/// Writes a snapshot of the database `file` to `out` (which must not exist).
pub async fn snapshot(file: &Path, out: &Path) -> Result<(), BackupError> {
    let failed = |e: sqlx::Error| BackupError::Database {
        what: format!("cannot snapshot the SQLite database {}", file.display()),
        reason: e.to_string(),
    };
    ensure_exists(file)?;
    let target = out.to_str().ok_or_else(|| BackupError::Database {
        what: format!("cannot snapshot into {}", out.display()),
        reason: "the path is not UTF-8".into(),
    })?;
    let mut conn = open(file).await.map_err(failed)?;
    sqlx::query("VACUUM INTO ?")
        .bind(target)
        .execute(&mut conn)
        .await
        .map_err(failed)?;
    conn.close().await.map_err(failed)?;
    Ok(())
}

/// Refuses a staged SQLite file that is not a sound database (`PRAGMA quick_check`).
pub async fn check(file: &Path) -> Result<(), String> {
    let mut conn = open(file).await.map_err(|e| e.to_string())?;
    let verdict: String = sqlx::query_scalar("PRAGMA quick_check")
        .fetch_one(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    let _ = conn.close().await;
    if verdict == "ok" {
        Ok(())
    } else {
        Err(format!("its database fails SQLite's check: {verdict}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_their_file() {
        for (url, file) in [
            (
                "sqlite:///srv/p/platform.sqlite3",
                Some("/srv/p/platform.sqlite3"),
            ),
            (
                "sqlite://rel/care.sqlite3?mode=rwc",
                Some("rel/care.sqlite3"),
            ),
            ("sqlite:care.sqlite3", Some("care.sqlite3")),
            ("sqlite::memory:", None),
            ("postgres://h/db", None),
        ] {
            assert_eq!(file_of(url), file.map(PathBuf::from), "{url}");
        }
    }
}
