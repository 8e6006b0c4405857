//! `slipway care backup` and `restore`: the care service keeps everything in its database
//! (records, reference data, users and their token hashes, the history), so its archive holds
//! the database alone.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::archive::{self, Kind, Manifest};
use crate::database::{self, DbTarget};
use crate::dirs;
use crate::error::BackupError;
use crate::passphrase::{Passphrase, WorkFactor};
use crate::report::{Report, Restored};

/// `slipway care backup`.
#[derive(Debug)]
pub struct Backup {
    /// `--database-url`; `None` is the default SQLite file in `data_dir`.
    pub database_url: Option<String>,
    /// `--data-dir`: where the default SQLite file is (as for `slipway care serve`).
    pub data_dir: PathBuf,
    /// The archive to write (`--to`); must not exist.
    pub to: PathBuf,
    /// The passphrase (`--passphrase-file`).
    pub passphrase: Passphrase,
    /// How hard the passphrase is stretched (tests only lower it).
    pub work_factor: WorkFactor,
}

/// `slipway care restore`.
#[derive(Debug)]
pub struct Restore {
    /// The archive (`--from`).
    pub from: PathBuf,
    /// `--database-url` of a new, empty database; `None` is the default SQLite file in
    /// `data_dir`, which must not exist.
    pub database_url: Option<String>,
    /// `--data-dir`: where the default SQLite file goes.
    pub data_dir: PathBuf,
    /// The passphrase (`--passphrase-file`).
    pub passphrase: Passphrase,
}

/// The database URL `slipway care serve` would use with these flags (the care crate's own
/// rule, so the two cannot disagree).
fn database_url(database_url: Option<String>, data_dir: &Path) -> String {
    let mut config = slipway_care::CareConfig::new(SocketAddr::from(([127, 0, 0, 1], 0)));
    config.database_url = database_url;
    config.data_dir = data_dir.to_path_buf();
    config.effective_database_url()
}

/// Writes an archive of a care service's database, running or not.
pub async fn backup(request: Backup) -> Result<Report, BackupError> {
    let started = Instant::now();
    dirs::check_to(&request.to)?;
    let flag = if request.database_url.is_some() {
        "--database-url"
    } else {
        "--data-dir"
    };
    let url = database_url(request.database_url, &request.data_dir);
    let staging = database::snapshot_staging(&url, None, flag)?;
    let created_at = archive::now();
    let (database, source, tool) = database::snapshot_database(&url, staging.path()).await?;
    let mut manifest = Manifest::new(Kind::Care, database, created_at);
    manifest.database_tool = tool;
    let bytes = archive::write_async(
        &request.to,
        manifest,
        vec![source],
        &request.passphrase,
        request.work_factor,
    )
    .await?;
    tracing::info!(to = %request.to.display(), bytes, "care backup written");
    Ok(Report {
        path: request.to,
        bytes,
        files: 1,
        database,
        elapsed: started.elapsed(),
    })
}

/// Restores an archive into a new SQLite file or an empty PostgreSQL database. The archive
/// is checked whole before anything is put in place; a refusal writes nothing.
pub async fn restore(request: Restore) -> Result<Restored, BackupError> {
    let started = Instant::now();
    let flag = if request.database_url.is_some() {
        "--database-url"
    } else {
        "--data-dir"
    };
    let url = database_url(request.database_url, &request.data_dir);
    let target = DbTarget::check(&url, flag).await?;
    let staging = match &target {
        // Beside the file, or beside the first of its directories that exists: a refused
        // restore must not leave even an empty directory behind.
        DbTarget::Sqlite(file, _) => dirs::staging_near(file, flag)?,
        // Nothing on disk is the target: a private temporary directory holds the dump.
        DbTarget::Postgres(_) => dirs::private_dir("slipway-care-restore-", None)
            .map_err(|e| BackupError::io("cannot create", &std::env::temp_dir(), e))?,
    };
    let manifest =
        archive::read_into_async(&request.from, &request.passphrase, staging.path()).await?;
    archive::expect_kind(&manifest, Kind::Care, &request.from)?;
    database::expect_database(&manifest, target.database(), &request.from, "")?;
    match &target {
        DbTarget::Sqlite(file, flag) => {
            let staged = staging.path().join(database::SQLITE_ENTRY);
            database::check_staged_sqlite(&staged, &request.from).await?;
            // As `care serve` does: the default file's directory is made when missing, now
            // that the archive is known to be good.
            let created = dirs::create_missing_dirs(dirs::parent_of(file))?;
            if let Err(e) = database::link_sqlite(&staged, file, flag) {
                dirs::remove_created(&created);
                return Err(e);
            }
        }
        DbTarget::Postgres(url) => {
            crate::postgres::check_restore_tool(manifest.database_tool.as_deref()).await?;
            crate::postgres::ensure_empty(url, &crate::postgres::Target::parse(url)?).await?;
            crate::postgres::restore(url, &staging.path().join(database::POSTGRES_ENTRY)).await?;
        }
    }
    tracing::info!("care service restored");
    Ok(Restored {
        kind: Kind::Care,
        target: target.shown(),
        files: manifest.files.len(),
        database: manifest.database,
        created_at: manifest.created_at,
        elapsed: started.elapsed(),
    })
}
