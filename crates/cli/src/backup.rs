//! `slipway platform backup|restore` and `slipway care backup|restore`: flags →
//! `slipway_backup` (docs/backup.md). The commands print the archive's size and how long
//! they took; never the passphrase.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use slipway_backup::{BackupError, Passphrase, WorkFactor};

use crate::data_dir::{care_data_dir, platform_data_dir};

#[derive(Debug, Args)]
pub struct PlatformBackupArgs {
    /// The platform's data directory (a running server's is fine: requests go on being served).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// `postgres://…` when the platform uses PostgreSQL (needs pg_dump as new as the server).
    #[arg(long)]
    database_url: Option<String>,
    /// The vault's master key file, when the server is given one (default: DATA_DIR/vault.key);
    /// it is stored in the archive as the data directory's vault.key.
    #[arg(long, value_name = "FILE")]
    vault_key_file: Option<PathBuf>,
    /// The archive to write; refused if it exists. Written beside it and renamed when complete.
    #[arg(long, value_name = "FILE")]
    to: PathBuf,
    /// A file whose first line is the passphrase the archive is encrypted to (age, scrypt).
    #[arg(long, value_name = "FILE")]
    passphrase_file: PathBuf,
}

#[derive(Debug, Args)]
pub struct PlatformRestoreArgs {
    /// The archive `slipway platform backup` wrote.
    #[arg(long, value_name = "FILE")]
    from: PathBuf,
    /// The new data directory: absent or empty, and no running server's.
    #[arg(long)]
    data_dir: PathBuf,
    /// `postgres://…` of a new, empty database, for a backup of a platform on PostgreSQL.
    #[arg(long)]
    database_url: Option<String>,
    /// A file whose first line is the archive's passphrase.
    #[arg(long, value_name = "FILE")]
    passphrase_file: PathBuf,
}

#[derive(Debug, Args)]
pub struct CareBackupArgs {
    /// `postgres://…` for PostgreSQL; default is the SQLite file in --data-dir.
    #[arg(long)]
    database_url: Option<String>,
    /// Where the default SQLite database lives (as for `care serve`).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// The archive to write; refused if it exists.
    #[arg(long, value_name = "FILE")]
    to: PathBuf,
    /// A file whose first line is the passphrase the archive is encrypted to (age, scrypt).
    #[arg(long, value_name = "FILE")]
    passphrase_file: PathBuf,
}

#[derive(Debug, Args)]
pub struct CareRestoreArgs {
    /// The archive `slipway care backup` wrote.
    #[arg(long, value_name = "FILE")]
    from: PathBuf,
    /// `postgres://…` of a new, empty database; default is a new SQLite file in --data-dir.
    #[arg(long)]
    database_url: Option<String>,
    /// Where the default SQLite database goes (as for `care serve`); that file must not exist yet.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// A file whose first line is the archive's passphrase.
    #[arg(long, value_name = "FILE")]
    passphrase_file: PathBuf,
}

/// Prints what a command did, or its error; the exit code.
pub fn finish(outcome: Result<String, BackupError>) -> ExitCode {
    match outcome {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs a care command on a runtime of its own (`care serve` makes its runtime after its
/// configuration).
pub fn on_new_runtime(work: impl Future<Output = Result<String, BackupError>>) -> ExitCode {
    crate::logging::init_tracing();
    match tokio::runtime::Runtime::new() {
        Ok(runtime) => finish(runtime.block_on(work)),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `slipway platform backup`; the line to print.
pub async fn platform_backup(args: PlatformBackupArgs) -> Result<String, BackupError> {
    let report = slipway_backup::platform::backup(slipway_backup::platform::Backup {
        data_dir: platform_data_dir(args.data_dir),
        database_url: args.database_url,
        vault_key_file: args.vault_key_file,
        to: args.to,
        passphrase: Passphrase::from_file(&args.passphrase_file)?,
        work_factor: WorkFactor::Measured,
    })
    .await?;
    Ok(report.to_string())
}

/// `slipway platform restore`; the line to print.
pub async fn platform_restore(args: PlatformRestoreArgs) -> Result<String, BackupError> {
    let restored = slipway_backup::platform::restore(slipway_backup::platform::Restore {
        from: args.from,
        data_dir: args.data_dir.clone(),
        database_url: args.database_url,
        passphrase: Passphrase::from_file(&args.passphrase_file)?,
    })
    .await?;
    Ok(format!(
        "{restored}\nstart it with: slipway platform serve --data-dir {}",
        args.data_dir.display()
    ))
}

/// `slipway care backup`; the line to print.
pub async fn care_backup(args: CareBackupArgs) -> Result<String, BackupError> {
    let report = slipway_backup::care::backup(slipway_backup::care::Backup {
        database_url: args.database_url,
        data_dir: care_data_dir(args.data_dir),
        to: args.to,
        passphrase: Passphrase::from_file(&args.passphrase_file)?,
        work_factor: WorkFactor::Measured,
    })
    .await?;
    Ok(report.to_string())
}

/// `slipway care restore`; the line to print.
pub async fn care_restore(args: CareRestoreArgs) -> Result<String, BackupError> {
    let restored = slipway_backup::care::restore(slipway_backup::care::Restore {
        from: args.from,
        database_url: args.database_url,
        data_dir: care_data_dir(args.data_dir),
        passphrase: Passphrase::from_file(&args.passphrase_file)?,
    })
    .await?;
    Ok(restored.to_string())
}
