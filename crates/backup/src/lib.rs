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
mod database;
mod dirs;
mod error;
#[cfg(test)]
mod layers;
mod passphrase;
pub mod platform;
mod postgres;
mod report;
mod sqlite;

pub use archive::{Database, Kind, Manifest};
pub use error::BackupError;
pub use passphrase::{Passphrase, WorkFactor};
pub use report::{Report, Restored};
