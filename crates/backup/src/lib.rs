//! Encrypted backups of the platform and the care service, and their checked restore
//! (`slipway platform backup|restore`, `slipway care backup|restore`; docs/backup.md).
//!
//! A backup is taken while the server serves: the database is snapshotted consistently
//! (SQLite `VACUUM INTO`, PostgreSQL `pg_dump`) into a private directory on the database's
//! side (the snapshot is clear text: never beside `--to`, on the backup medium), then the
//! platform's files are listed and archived ([`archive`]: a tar stream inside an age stream
//! encrypted to a passphrase), and the archive gets its name only when complete. A restore
//! decrypts and checks the whole archive into a staging directory beside its target first,
//! refuses a target in use or not empty, and only then puts the data in place: a PostgreSQL
//! dump in one transaction, then a directory by one rename, then a SQLite file by one link.
//!
//! Why a crate of its own: backups stand apart from serving (they know both services' data
//! layouts, and neither service needs to know about archives), and they bring their own
//! heavy dependencies (age, the PostgreSQL client programs).

pub mod archive;
pub mod care;
mod error;
mod passphrase;
pub mod platform;
mod postgres;
mod sqlite;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use archive::{Database, Kind, Manifest};
pub use error::BackupError;
pub use passphrase::{Passphrase, WorkFactor};

/// The name of the database file inside the archive, for each backend.
const SQLITE_ENTRY: &str = "database/database.sqlite3";
const POSTGRES_ENTRY: &str = "database/postgres.dump";

/// What a finished backup wrote.
#[derive(Debug, Clone)]
pub struct Report {
    /// The archive.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// How many files it holds besides the manifest (the database counts as one).
    pub files: usize,
    /// Which database it holds.
    pub database: Database,
    /// How long the backup took.
    pub elapsed: Duration,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "backup written to {}: {} ({}, {} database) in {:.1} s",
            self.path.display(),
            human_size(self.bytes),
            files(self.files),
            database_name(self.database),
            self.elapsed.as_secs_f64()
        )
    }
}

/// `1 file`, `3 files`.
fn files(n: usize) -> String {
    if n == 1 {
        "1 file".into()
    } else {
        format!("{n} files")
    }
}

/// What a finished restore put in place.
#[derive(Debug, Clone)]
pub struct Restored {
    /// Which service.
    pub kind: Kind,
    /// Where it went (the data directory, the SQLite file, or the database URL without its
    /// password).
    pub target: String,
    /// How many files the archive held (the database counts as one).
    pub files: usize,
    /// Which database.
    pub database: Database,
    /// When the backup was taken.
    pub created_at: String,
    /// How long the restore took.
    pub elapsed: Duration,
}

impl std::fmt::Display for Restored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "restored the {} backup of {} into {} ({}, {} database) in {:.1} s",
            self.kind.noun(),
            self.created_at,
            self.target,
            files(self.files),
            database_name(self.database),
            self.elapsed.as_secs_f64()
        )
    }
}

fn database_name(database: Database) -> &'static str {
    match database {
        Database::Sqlite => "SQLite",
        Database::Postgres => "PostgreSQL",
    }
}

/// `1234567` → `1.2 MiB`.
fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Which backend a database URL names (the flag is named in the refusal).
fn backend_of(url: &str) -> Result<Database, BackupError> {
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

/// The time now, RFC 3339 in UTC.
fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Refuses an existing `--to` (a backup never replaces a file) and a missing directory.
fn check_to(to: &Path) -> Result<(), BackupError> {
    if to.exists() {
        return Err(BackupError::target(
            "--to",
            to.display(),
            "exists; a backup never replaces a file: remove it or choose another name",
        ));
    }
    let dir = parent_of(to);
    if !dir.is_dir() {
        return Err(BackupError::target(
            "--to",
            to.display(),
            format!("its directory {} does not exist", dir.display()),
        ));
    }
    Ok(())
}

/// The directory a path sits in (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A new private (0700) directory beside `path`, removed when dropped: where a restore
/// unpacks and checks an archive before it touches its target (the same file system, so the
/// final step is a rename), and where a SQLite snapshot waits to be archived.
fn staging_beside(path: &Path, flag: &'static str) -> Result<tempfile::TempDir, BackupError> {
    let dir = parent_of(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "slipway".into());
    private_dir(&format!(".{name}.staging-"), Some(dir)).map_err(|e| {
        BackupError::target(
            flag,
            path.display(),
            format!(
                "cannot create a staging directory in {}: {e}",
                dir.display()
            ),
        )
    })
}

/// [`staging_beside`] the first of `path`'s ancestors whose directory exists (`path` itself
/// when its directory does): a restore into a directory that does not exist yet stages on
/// the same file system without creating that directory before the archive is checked.
fn staging_near(path: &Path, flag: &'static str) -> Result<tempfile::TempDir, BackupError> {
    let mut near = path;
    while !parent_of(near).is_dir() {
        match near.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(up) => near = up,
            None => break,
        }
    }
    staging_beside(near, flag).map_err(|e| match e {
        BackupError::Target { reason, .. } => BackupError::target(flag, path.display(), reason),
        other => other,
    })
}

/// Creates `dir` and whichever of its parents are missing; returns the ones it created,
/// innermost first, for [`remove_created`] when what follows fails.
fn create_missing_dirs(dir: &Path) -> Result<Vec<PathBuf>, BackupError> {
    let mut missing = Vec::new();
    let mut at = dir;
    while !at.as_os_str().is_empty() && !at.exists() {
        missing.push(at.to_path_buf());
        match at.parent() {
            Some(up) => at = up,
            None => break,
        }
    }
    let mut created = Vec::new();
    for dir in missing.iter().rev() {
        if let Err(e) = std::fs::create_dir(dir) {
            remove_created(&created);
            return Err(BackupError::io("cannot create", dir, e));
        }
        created.insert(0, dir.clone());
    }
    Ok(created)
}

/// Takes away directories [`create_missing_dirs`] made (innermost first; a directory that is
/// no longer empty stays).
fn remove_created(dirs: &[PathBuf]) {
    for dir in dirs {
        let _ = std::fs::remove_dir(dir);
    }
}

/// A new directory only its owner can enter (tempfile leaves a directory's mode to the
/// umask), in `dir` or in the system's temporary directory.
fn private_dir(prefix: &str, dir: Option<&Path>) -> std::io::Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    match dir {
        Some(dir) => builder.tempdir_in(dir),
        None => builder.tempdir(),
    }
}

/// Where a backup's database snapshot waits to be archived: the snapshot is the database in
/// clear, so it stays on the database's side, never beside `--to` (the backup medium, where
/// a deleted file can still be read back). A SQLite snapshot goes beside the database file
/// (same disk, same owner); a PostgreSQL dump into `data_dir` when the service keeps one
/// (the platform's), else into a private temporary directory (`TMPDIR`).
fn snapshot_staging(
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
async fn snapshot_database(
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

/// Writes the archive (blocking work, off the async threads).
async fn write_archive(
    to: &Path,
    manifest: Manifest,
    sources: Vec<archive::Source>,
    passphrase: &Passphrase,
    work: WorkFactor,
) -> Result<u64, BackupError> {
    let to = to.to_path_buf();
    let passphrase = passphrase.clone();
    tokio::task::spawn_blocking(move || archive::write(&to, manifest, &sources, &passphrase, work))
        .await
        .map_err(|e| BackupError::Tool(format!("the archive writer stopped: {e}")))?
}

/// Decrypts, checks and unpacks the whole archive into `staging` (blocking work, off the
/// async threads).
async fn read_archive(
    from: &Path,
    passphrase: &Passphrase,
    staging: &Path,
) -> Result<Manifest, BackupError> {
    let from = from.to_path_buf();
    let staging = staging.to_path_buf();
    let passphrase = passphrase.clone();
    tokio::task::spawn_blocking(move || archive::read_into(&from, &passphrase, &staging))
        .await
        .map_err(|e| BackupError::Tool(format!("the archive reader stopped: {e}")))?
}

/// Refuses an archive of the other service.
fn expect_kind(manifest: &Manifest, expected: Kind, from: &Path) -> Result<(), BackupError> {
    if manifest.kind == expected {
        return Ok(());
    }
    Err(BackupError::WrongKind {
        path: from.display().to_string(),
        expected: expected.noun(),
        found: manifest.kind.noun(),
        found_command: manifest.kind.command(),
    })
}

/// The restore's database target, checked before the archive is read.
enum DbTarget {
    /// A SQLite file that does not exist yet, and the flag that named it.
    Sqlite(PathBuf, &'static str),
    /// An empty PostgreSQL database.
    Postgres(String),
}

impl DbTarget {
    /// Checks a target: a SQLite file must not exist, a PostgreSQL database must be empty.
    /// `sqlite_flag` is the flag a SQLite file came from (`--data-dir` for a default file).
    async fn check(url: &str, sqlite_flag: &'static str) -> Result<Self, BackupError> {
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

    fn database(&self) -> Database {
        match self {
            Self::Sqlite(..) => Database::Sqlite,
            Self::Postgres(_) => Database::Postgres,
        }
    }

    /// The target as it may be shown.
    fn shown(&self) -> String {
        match self {
            Self::Sqlite(file, _) => file.display().to_string(),
            Self::Postgres(url) => postgres::Target::parse(url)
                .map(|t| t.shown().to_owned())
                .unwrap_or_default(),
        }
    }
}

/// Refuses a SQLite file (or its journal) that exists.
fn sqlite_target_free(file: &Path, flag: &'static str) -> Result<(), BackupError> {
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
fn expect_database(
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
async fn check_staged_sqlite(staged: &Path, from: &Path) -> Result<(), BackupError> {
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
fn link_sqlite(staged: &Path, file: &Path, flag: &'static str) -> Result<(), BackupError> {
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

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(human_size(512), "512 bytes");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(3 * 1024 * 1024), "3.0 MiB");
    }

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

    #[test]
    fn an_existing_to_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let to = dir.path().join("b.age");
        std::fs::write(&to, b"x").unwrap();
        let err = check_to(&to).unwrap_err().to_string();
        assert!(err.starts_with("--to ") && err.contains("exists"), "{err}");
        let err = check_to(&dir.path().join("no/such/b.age"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not exist"), "{err}");
    }
}
