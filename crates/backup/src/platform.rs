//! `slipway platform backup` and `restore`: the database, the keys and the stores the
//! platform's data directory holds ([`slipway_platform::data_dir::BACKUP_FILES`] and
//! [`BACKUP_DIRS`](slipway_platform::data_dir::BACKUP_DIRS); that module says what is left
//! out and why).
//!
//! A backup takes no lock: a running server goes on serving while its database is
//! snapshotted, and the files are listed after the snapshot, so every image and log the
//! snapshot's rows name is there (files newer than the snapshot are harmless extras).

use std::path::{Path, PathBuf};
use std::time::Instant;

use slipway_platform::data_dir::{
    self, BACKUP_DIRS, BACKUP_FILES, SERVICES_DIR, SQLITE_FILE, VAULT_KEY_FILE,
};
use slipway_services::backup::Servers;

use crate::archive::{self, DATA_PREFIX, Database, Kind, Manifest, Source};
use crate::database::{self, DbTarget};
use crate::dirs;
use crate::error::BackupError;
use crate::passphrase::{Passphrase, WorkFactor};
use crate::report::{Report, Restored};

/// `slipway platform backup`.
#[derive(Debug)]
pub struct Backup {
    /// The platform's data directory (`--data-dir`).
    pub data_dir: PathBuf,
    /// Its database when not the default SQLite file (`--database-url`).
    pub database_url: Option<String>,
    /// The vault's key file when the server is given one (`--vault-key-file`); it is stored
    /// as the data directory's `vault.key`.
    pub vault_key_file: Option<PathBuf>,
    /// The archive to write (`--to`); must not exist.
    pub to: PathBuf,
    /// The passphrase (`--passphrase-file`).
    pub passphrase: Passphrase,
    /// How hard the passphrase is stretched (tests only lower it).
    pub work_factor: WorkFactor,
}

/// `slipway platform restore`.
#[derive(Debug)]
pub struct Restore {
    /// The archive (`--from`).
    pub from: PathBuf,
    /// The new data directory (`--data-dir`): absent or empty, and no server's.
    pub data_dir: PathBuf,
    /// A new, empty PostgreSQL database for an archive of a PostgreSQL platform
    /// (`--database-url`).
    pub database_url: Option<String>,
    /// The passphrase (`--passphrase-file`).
    pub passphrase: Passphrase,
}

/// Writes an archive of a platform, running or not. A failure is also told to the
/// platform's notification channels (`backup.failed`, docs/notifications.md), so a backup
/// run by a timer that stops working does not go unnoticed.
pub async fn backup(request: Backup) -> Result<Report, BackupError> {
    let (data_dir, database_url) = (request.data_dir.clone(), request.database_url.clone());
    let result = write_backup(request).await;
    if let Err(e) = &result {
        slipway_platform::tell_backup_failed(&data_dir, database_url.as_deref(), &e.to_string())
            .await;
    }
    result
}

async fn write_backup(request: Backup) -> Result<Report, BackupError> {
    let started = Instant::now();
    dirs::check_to(&request.to)?;
    if !request.data_dir.is_dir() {
        return Err(BackupError::target(
            "--data-dir",
            request.data_dir.display(),
            "is not a directory",
        ));
    }
    let vault_key = request
        .vault_key_file
        .clone()
        .unwrap_or_else(|| request.data_dir.join(VAULT_KEY_FILE));
    if !vault_key.is_file() {
        let (flag, reason) = match request.vault_key_file {
            Some(_) => ("--vault-key-file", "does not exist"),
            None => (
                "--data-dir",
                "has no vault.key: give --vault-key-file when the server is started with one \
                 (without its key no secret in the backup could be read)",
            ),
        };
        return Err(BackupError::target(flag, vault_key.display(), reason));
    }
    refuse_to_inside(&request.to, &request.data_dir)?;
    let url = database_url(&request.data_dir, request.database_url.as_deref());
    let flag = if request.database_url.is_some() {
        "--database-url"
    } else {
        "--data-dir"
    };
    let staging = database::snapshot_staging(&url, Some(&request.data_dir), flag)?;
    let created_at = archive::now();
    let (database, db_source, tool) = database::snapshot_database(&url, staging.path()).await?;
    let mut manifest = Manifest::new(Kind::Platform, database, created_at);
    manifest.database_tool = tool;
    let mut sources = vec![db_source];
    sources.push(source(&vault_key, VAULT_KEY_FILE)?);
    let data_dir = request.data_dir.clone();
    let listed = tokio::task::spawn_blocking(move || list_files(&data_dir))
        .await
        .map_err(|e| BackupError::Tool(format!("the file listing stopped: {e}")))??;
    sources.extend(listed);
    // Listed after the snapshot, like the files: a resource the snapshot's rows name is
    // there (one made since is a harmless extra, never loaded).
    // In clear text, so on the data's side like the database snapshot, never beside `--to`.
    let dumps = dirs::private_dir(".backup-dumps-", Some(&request.data_dir)).map_err(|e| {
        BackupError::io("cannot create a staging directory in", &request.data_dir, e)
    })?;
    sources.extend(dump_services(&request.data_dir, dumps.path()).await?);
    let files = sources.len();
    let bytes = archive::write_async(
        &request.to,
        manifest,
        sources,
        &request.passphrase,
        request.work_factor,
    )
    .await?;
    tracing::info!(to = %request.to.display(), bytes, files, "platform backup written");
    Ok(Report {
        path: request.to,
        bytes,
        files,
        database,
        elapsed: started.elapsed(),
    })
}

/// Refuses a `--to` inside the data directory: the archive's own partial file (and a
/// snapshot staged there) would be walked into it, and a backup on the disk it backs up
/// is lost with that disk.
fn refuse_to_inside(to: &Path, data_dir: &Path) -> Result<(), BackupError> {
    let (Ok(to_dir), Ok(data)) = (
        std::fs::canonicalize(dirs::parent_of(to)),
        std::fs::canonicalize(data_dir),
    ) else {
        return Ok(());
    };
    if to_dir.starts_with(&data) {
        return Err(BackupError::target(
            "--to",
            to.display(),
            format!(
                "is inside the data directory {}; write the backup outside it (best on another \
                 disk)",
                data_dir.display()
            ),
        ));
    }
    Ok(())
}

/// A dump of every database and in-memory database the platform's own backing servers
/// hold ([`slipway_services::backup`]), written into `out`, as `data/services/…` entries.
/// Beside a running platform the dumps are taken from its servers while its apps go on
/// writing; otherwise the servers are started for the backup (the data directory's lock is
/// held meanwhile, so no platform starts on it) and stopped again.
async fn dump_services(data_dir: &Path, out: &Path) -> Result<Vec<Source>, BackupError> {
    let services_dir = data_dir.join(SERVICES_DIR);
    if !services_dir.is_dir() {
        return Ok(Vec::new());
    }
    let running = data_dir::is_locked(data_dir)
        .map_err(|e| BackupError::io("cannot check the lock of", data_dir, e))?;
    let _lock = if running {
        None
    } else {
        Some(
            data_dir::lock(data_dir)
                .map_err(|e| BackupError::target("--data-dir", data_dir.display(), e))?,
        )
    };
    let servers = if running {
        Servers::Running
    } else {
        Servers::Stopped
    };
    let written = slipway_services::backup::dump(&services_dir, out, servers)
        .await
        .map_err(|e| BackupError::Database {
            what: "cannot dump the apps' databases".into(),
            reason: e.to_string(),
        })?;
    written
        .into_iter()
        .map(|rel| {
            let name = Path::new(SERVICES_DIR).join(&rel);
            source(&out.join(&rel), &name.display().to_string())
        })
        .collect()
}

/// The database URL the platform uses for `data_dir` and `--database-url`.
fn database_url(data_dir: &Path, given: Option<&str>) -> String {
    given.map_or_else(
        || format!("sqlite://{}", data_dir.join(SQLITE_FILE).display()),
        str::to_owned,
    )
}

/// One file as `data/<name>`.
fn source(file: &Path, name: &str) -> Result<Source, BackupError> {
    let size = std::fs::metadata(file)
        .map_err(|e| BackupError::io("cannot read", file, e))?
        .len();
    Ok(Source {
        archive_path: format!("{DATA_PREFIX}{name}"),
        file: file.to_path_buf(),
        size,
        // The keys are small and never grow: one that changes is being rotated.
        fixed: true,
    })
}

/// The data directory's files that belong in a backup (besides the database and the vault
/// key), in a stable order. A directory removed while it is listed (an app deleted meanwhile)
/// is skipped; anything but regular files and directories is left out with a warning.
fn list_files(data_dir: &Path) -> Result<Vec<Source>, BackupError> {
    let mut out = Vec::new();
    for name in BACKUP_FILES.iter().filter(|n| **n != VAULT_KEY_FILE) {
        let file = data_dir.join(name);
        if file.is_file() {
            out.push(source(&file, name)?);
        }
    }
    for dir in BACKUP_DIRS {
        walk(data_dir, Path::new(dir), &mut out)?;
    }
    Ok(out)
}

fn walk(root: &Path, rel: &Path, out: &mut Vec<Source>) -> Result<(), BackupError> {
    let dir = root.join(rel);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(BackupError::io("cannot list", &dir, e)),
    };
    let mut names: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    names.sort();
    for name in names {
        if name == data_dir::EPHEMERAL_DIR {
            // Ephemeral volumes start empty on each deploy: nothing to restore.
            continue;
        }
        let rel = rel.join(&name);
        let path = root.join(&rel);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let Some(archive_name) = rel.to_str() else {
            return Err(BackupError::io(
                "cannot archive",
                &path,
                std::io::Error::other("the file name is not UTF-8"),
            ));
        };
        if meta.is_dir() {
            walk(root, &rel, out)?;
        } else if meta.is_file() {
            out.push(Source {
                archive_path: format!("{DATA_PREFIX}{archive_name}"),
                file: path,
                size: meta.len(),
                // Logs grow while the backup runs: stored as they were when listed.
                fixed: false,
            });
        } else {
            tracing::warn!(path = %path.display(), "not a regular file; left out of the backup");
        }
    }
    Ok(())
}

/// Restores an archive into a new data directory (and a new database). The archive is
/// checked whole before anything is put in place, and a refusal or a failure leaves every
/// target as it was, with one exception said in its error: a PostgreSQL database filled
/// before the data directory could be put in place.
///
/// The order matters: a PostgreSQL dump is restored first (in one transaction, so a failure
/// or a kill leaves the database empty), and only then does the data directory appear. A data
/// directory never stands beside an empty database, where `serve` would make a new first
/// account.
pub async fn restore(request: Restore) -> Result<Restored, BackupError> {
    let started = Instant::now();
    let target = &request.data_dir;
    check_data_dir(target)?;
    let db = match &request.database_url {
        Some(url) => Some(DbTarget::check(url, "--database-url").await?),
        None => None,
    };
    let staging = dirs::staging_beside(target, "--data-dir")?;
    let manifest =
        archive::read_into_async(&request.from, &request.passphrase, staging.path()).await?;
    archive::expect_kind(&manifest, Kind::Platform, &request.from)?;
    let wanted = db.as_ref().map_or(Database::Sqlite, DbTarget::database);
    database::expect_database(
        &manifest,
        wanted,
        &request.from,
        "To move a platform to PostgreSQL, restore it to SQLite first; a SQLite archive \
         never fills a PostgreSQL database",
    )?;
    let staged_data = staging.path().join(DATA_PREFIX.trim_end_matches('/'));
    std::fs::create_dir_all(&staged_data)
        .map_err(|e| BackupError::io("cannot create", &staged_data, e))?;
    restrict(&staged_data)?;
    let staged_db = staging.path().join(match manifest.database {
        Database::Sqlite => database::SQLITE_ENTRY,
        Database::Postgres => database::POSTGRES_ENTRY,
    });
    let mut link = None;
    match &db {
        None => {
            database::check_staged_sqlite(&staged_db, &request.from).await?;
            let file = staged_data.join(SQLITE_FILE);
            std::fs::rename(&staged_db, &file)
                .map_err(|e| BackupError::io("cannot move", &staged_db, e))?;
        }
        Some(DbTarget::Sqlite(file, flag)) => {
            database::check_staged_sqlite(&staged_db, &request.from).await?;
            link = Some((file.as_path(), *flag));
        }
        Some(DbTarget::Postgres(url)) => {
            crate::postgres::check_restore_tool(manifest.database_tool.as_deref()).await?;
            crate::postgres::ensure_empty(url, &crate::postgres::Target::parse(url)?).await?;
            crate::postgres::restore(url, &staged_db).await?;
        }
    }
    put_in_place(
        target,
        &staged_data,
        link.map(|(file, flag)| (&*staged_db, file, flag)),
    )
    .map_err(|e| match &db {
        Some(filled @ DbTarget::Postgres(_)) => BackupError::Incomplete {
            failed: e.without_outcome(),
            left: format!(
                "the database {} now holds the backup's data, but no data directory goes \
                     with it: empty that database (dropdb and createdb) and restore again",
                filled.shown()
            ),
        },
        _ => e,
    })?;
    let shown = match &db {
        Some(db) => format!("{} and {}", target.display(), db.shown()),
        None => target.display().to_string(),
    };
    tracing::info!(data_dir = %target.display(), "platform restored");
    Ok(Restored {
        kind: Kind::Platform,
        target: shown,
        files: manifest.files.len(),
        database: manifest.database,
        created_at: manifest.created_at,
        elapsed: started.elapsed(),
    })
}

/// Puts the staged data directory at `target` by one rename (an empty directory there is
/// replaced) and links a SQLite file (`staged`, `file`, its flag) into place: before the
/// rename when the file is outside the directory (taken back if the rename fails), after it
/// when inside. If that link fails, the directory goes back where it came from and an empty
/// `target` is made again: the targets are as they were.
fn put_in_place(
    target: &Path,
    staged_data: &Path,
    sqlite: Option<(&Path, &Path, &'static str)>,
) -> Result<(), BackupError> {
    let existed = std::fs::metadata(target).ok().map(|m| m.permissions());
    check_data_dir(target)?;
    // A database file outside the data directory goes first: a data directory must never
    // appear without its database (a server started there would make a new first account),
    // not even for the moment between two steps a kill could fall into.
    let inside = |file: &Path| {
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        absolute(file).starts_with(absolute(target))
    };
    let outside = sqlite.filter(|(_, file, _)| !inside(file));
    if let Some((staged, file, flag)) = outside {
        database::link_sqlite(staged, file, flag)?;
    }
    let renamed = std::fs::rename(staged_data, target).map_err(|e| {
        BackupError::target(
            "--data-dir",
            target.display(),
            format!("cannot put the restored directory in place ({e}); was it used meanwhile?"),
        )
    });
    if let Err(e) = renamed {
        if let Some((_, file, _)) = outside {
            // The link made above never replaced a file: taking it back leaves what was.
            let _ = std::fs::remove_file(file);
        }
        return Err(e);
    }
    let placed = Placed {
        target,
        staged_data,
        existed,
        done: false,
    };
    if let Some((staged, file, flag)) = sqlite.filter(|(_, file, _)| inside(file)) {
        database::link_sqlite(staged, file, flag)?;
    }
    placed.keep();
    if let Ok(d) = std::fs::File::open(dirs::parent_of(target)) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// A data directory put in place, taken back when dropped before [`Placed::keep`]: moved
/// back into staging (removed with it), and an empty directory made again where one was,
/// with its permissions.
struct Placed<'a> {
    target: &'a Path,
    staged_data: &'a Path,
    existed: Option<std::fs::Permissions>,
    done: bool,
}

impl Placed<'_> {
    fn keep(mut self) {
        self.done = true;
    }
}

impl Drop for Placed<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let Err(e) = std::fs::rename(self.target, self.staged_data) {
            tracing::error!(data_dir = %self.target.display(), error = %e,
                "cannot take back the restored data directory; remove it before restoring again");
            return;
        }
        if let Some(permissions) = self.existed.take()
            && std::fs::create_dir(self.target).is_ok()
        {
            let _ = std::fs::set_permissions(self.target, permissions);
        }
    }
}

/// Refuses a data directory a server holds, or one that is not empty; its parent must exist.
fn check_data_dir(dir: &Path) -> Result<(), BackupError> {
    let refuse = |reason: String| BackupError::target("--data-dir", dir.display(), reason);
    if dir.exists() {
        if !dir.is_dir() {
            return Err(refuse("is not a directory".into()));
        }
        if data_dir::is_locked(dir)
            .map_err(|e| BackupError::io("cannot check the lock of", dir, e))?
        {
            return Err(refuse(format!(
                "is in use by a running platform server ({} is locked); stop it, or restore into \
                 a new directory",
                data_dir::LOCK_FILE
            )));
        }
        let mut entries =
            std::fs::read_dir(dir).map_err(|e| BackupError::io("cannot list", dir, e))?;
        if entries.next().is_some() {
            return Err(refuse(
                "is not empty; a restore fills only a new or empty directory".into(),
            ));
        }
    } else if !dirs::parent_of(dir).is_dir() {
        return Err(refuse(format!(
            "its parent directory {} does not exist",
            dirs::parent_of(dir).display()
        )));
    }
    Ok(())
}

/// The restored data directory is its owner's only, like the secrets it holds.
fn restrict(dir: &Path) -> Result<(), BackupError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| BackupError::io("cannot restrict", dir, e))?;
    }
    Ok(())
}
