//! The database part of a backup and a restore, alike for both services: which backend a URL
//! names, where its snapshot waits and how it is taken, and, for a restore, the target's
//! checks (a new SQLite file, an empty PostgreSQL database), the archive's database against
//! it, and the SQLite file put in place by one link.

use std::path::{Path, PathBuf};

use crate::archive::{self, Database, Manifest};
use crate::dirs::{parent_of, private_dir, staging_beside};
use crate::error::BackupError;
use crate::{postgres, sqlite};

/// The name of the database file inside the archive, for each backend.
pub(crate) const SQLITE_ENTRY: &str = "database/database.sqlite3";
pub(crate) const POSTGRES_ENTRY: &str = "database/postgres.dump";

/// Which backend a database URL names (the flag is named in the refusal).
pub(crate) fn backend_of(url: &str) -> Result<Database, BackupError> {
    if url.starts_with("sqlite:") {
        Ok(Database::Sqlite)
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Database::Postgres)
    } else {
        Err(BackupError::target(
            "--database-url",
            "(not shown)",
            "must start with sqlite:, postgres:// or postgresql://",
        ))
    }
}

/// Where a backup's database snapshot waits to be archived: the snapshot is the database in
/// clear, so it stays on the database's side, never beside `--to` (the backup medium, where
/// a deleted file can still be read back). A SQLite snapshot goes beside the database file
/// (same disk, same owner); a PostgreSQL dump into `data_dir` when the service keeps one
/// (the platform's), else into a private temporary directory (`TMPDIR`).
pub(crate) fn snapshot_staging(
    url: &str,
    data_dir: Option<&Path>,
    flag: &'static str,
) -> Result<tempfile::TempDir, BackupError> {
    match backend_of(url)? {
        Database::Sqlite => {
            let file = sqlite::file_of(url).ok_or_else(|| {
                BackupError::target("--database-url", url, "names no SQLite file")
            })?;
            sqlite::ensure_exists(&file)?;
            staging_beside(&file, flag)
        }
        Database::Postgres => {
            private_dir(".slipway-backup-", data_dir).map_err(|e| match data_dir {
                Some(dir) => BackupError::target(
                    "--data-dir",
                    dir.display(),
                    format!("cannot create a staging directory in it: {e}"),
                ),
                None => BackupError::io(
                    "cannot create a staging directory in",
                    &std::env::temp_dir(),
                    e,
                ),
            })
        }
    }
}

/// Snapshots the database `url` into `staging`; returns its archive entry and, for
/// PostgreSQL, pg_dump's version.
pub(crate) async fn snapshot_database(
    url: &str,
    staging: &Path,
) -> Result<(Database, archive::Source, Option<String>), BackupError> {
    let database = backend_of(url)?;
    let (entry, tool) = match database {
        Database::Sqlite => {
            let file = sqlite::file_of(url).ok_or_else(|| {
                BackupError::target("--database-url", url, "names no SQLite file")
            })?;
            let out = staging.join("database.sqlite3");
            sqlite::snapshot(&file, &out).await?;
            (SQLITE_ENTRY, None)
        }
        Database::Postgres => {
            let out = staging.join("postgres.dump");
            (POSTGRES_ENTRY, Some(postgres::dump(url, &out).await?))
        }
    };
    let file = staging.join(Path::new(entry).file_name().unwrap_or_default());
    let size = std::fs::metadata(&file)
        .map_err(|e| BackupError::io("cannot read", &file, e))?
        .len();
    let source = archive::Source {
        archive_path: entry.to_owned(),
        file,
        size,
        fixed: true,
    };
    Ok((database, source, tool))
}

/// The restore's database target, checked before the archive is read.
pub(crate) enum DbTarget {
    /// A SQLite file that does not exist yet, and the flag that named it.
    Sqlite(PathBuf, &'static str),
    /// An empty PostgreSQL database.
    Postgres(String),
}

impl DbTarget {
    /// Checks a target: a SQLite file must not exist, a PostgreSQL database must be empty.
    /// `sqlite_flag` is the flag a SQLite file came from (`--data-dir` for a default file).
    pub(crate) async fn check(url: &str, sqlite_flag: &'static str) -> Result<Self, BackupError> {
        match backend_of(url)? {
            Database::Sqlite => {
                let file = sqlite::file_of(url).ok_or_else(|| {
                    BackupError::target("--database-url", url, "names no SQLite file")
                })?;
                sqlite_target_free(&file, sqlite_flag)?;
                Ok(Self::Sqlite(file, sqlite_flag))
            }
            Database::Postgres => {
                let target = postgres::Target::parse(url)?;
                postgres::ensure_empty(url, &target).await?;
                Ok(Self::Postgres(url.to_owned()))
            }
        }
    }

    pub(crate) fn database(&self) -> Database {
        match self {
            Self::Sqlite(..) => Database::Sqlite,
            Self::Postgres(_) => Database::Postgres,
        }
    }

    /// The target as it may be shown.
    pub(crate) fn shown(&self) -> String {
        match self {
            Self::Sqlite(file, _) => file.display().to_string(),
            Self::Postgres(url) => postgres::Target::parse(url)
                .map(|t| t.shown().to_owned())
                .unwrap_or_default(),
        }
    }
}

/// Refuses a SQLite file (or its journal) that exists.
pub(crate) fn sqlite_target_free(file: &Path, flag: &'static str) -> Result<(), BackupError> {
    for suffix in ["", "-wal", "-journal"] {
        let mut name = file.as_os_str().to_owned();
        name.push(suffix);
        if Path::new(&name).exists() {
            return Err(BackupError::target(
                flag,
                file.display(),
                format!(
                    "{} exists; a restore only creates a new database: stop its server and move \
                     it away, or restore elsewhere",
                    Path::new(&name).display()
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses an archive whose database cannot go to `target`.
pub(crate) fn expect_database(
    manifest: &Manifest,
    target: Database,
    from: &Path,
    postgres_hint: &str,
) -> Result<(), BackupError> {
    if manifest.database == target {
        return Ok(());
    }
    let reason = match manifest.database {
        Database::Sqlite => format!(
            "it holds a SQLite database; restore it to SQLite (without a postgres:// \
             --database-url). {postgres_hint}"
        ),
        Database::Postgres => {
            "it holds a PostgreSQL dump; give --database-url postgres://… of a new, empty database"
                .to_owned()
        }
    };
    Err(BackupError::Format {
        path: from.display().to_string(),
        reason: reason.trim_end().to_owned(),
    })
}

/// Refuses a staged SQLite file that is not a sound database.
pub(crate) async fn check_staged_sqlite(staged: &Path, from: &Path) -> Result<(), BackupError> {
    sqlite::check(staged)
        .await
        .map_err(|reason| BackupError::Damaged {
            path: from.display().to_string(),
            reason,
        })
}

/// Puts a checked SQLite file in place without ever replacing one: a hard link is created
/// only if the name is free (then the staged name goes with its directory). On another file
/// system, where no link can be made, a copy is written beside `file` and given its name
/// the same way.
pub(crate) fn link_sqlite(
    staged: &Path,
    file: &Path,
    flag: &'static str,
) -> Result<(), BackupError> {
    let taken = || {
        BackupError::target(
            flag,
            file.display(),
            "appeared while the restore ran; a restore never replaces a database",
        )
    };
    match std::fs::hard_link(staged, file) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(taken()),
        Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
            let dir = parent_of(file);
            let mut copy = tempfile::Builder::new()
                .prefix(".slipway-restore-")
                .tempfile_in(dir)
                .map_err(|e| BackupError::io("cannot create a file in", dir, e))?;
            let mut from = std::fs::File::open(staged)
                .map_err(|e| BackupError::io("cannot read", staged, e))?;
            std::io::copy(&mut from, copy.as_file_mut())
                .and_then(|_| copy.as_file().sync_all())
                .map_err(|e| BackupError::io("cannot write", copy.path(), e))?;
            copy.persist_noclobber(file).map_err(|e| {
                if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                    taken()
                } else {
                    BackupError::io("cannot create", file, e.error)
                }
            })?;
        }
        Err(e) => return Err(BackupError::io("cannot create", file, e)),
    }
    if let Ok(d) = std::fs::File::open(parent_of(file)) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The snapshot is the database in clear: it waits on the database's side in a directory
    /// only its owner can enter, never beside `--to` on the backup medium.
    #[cfg(unix)]
    #[test]
    fn a_snapshot_waits_beside_its_database_in_a_private_directory() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let file = data.join("platform.sqlite3");
        std::fs::write(&file, b"").unwrap();
        let private = |staging: &tempfile::TempDir| {
            let mode = std::fs::metadata(staging.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700, "{}", staging.path().display());
        };
        let sqlite =
            snapshot_staging(&format!("sqlite://{}", file.display()), None, "--data-dir").unwrap();
        assert_eq!(sqlite.path().parent(), Some(data.as_path()));
        private(&sqlite);
        let pg = snapshot_staging("postgres://db.example/p", Some(&data), "--data-dir").unwrap();
        assert_eq!(pg.path().parent(), Some(data.as_path()));
        private(&pg);
        let care = snapshot_staging("postgres://db.example/c", None, "--database-url").unwrap();
        assert_eq!(care.path().parent(), Some(std::env::temp_dir().as_path()));
        private(&care);
        let missing = data.join("none.sqlite3");
        let err = snapshot_staging(
            &format!("sqlite://{}", missing.display()),
            None,
            "--data-dir",
        )
        .unwrap_err();
        assert!(err.to_string().contains("no SQLite database"), "{err}");
    }
}
