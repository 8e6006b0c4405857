//! Why a backup or a restore did not happen. Every refusal names the flag or the file at
//! fault and what would make it work; none holds the passphrase or a database row.

use std::path::Path;

/// A backup or restore that did not happen (a restore that fails has written nothing, but
/// for [`BackupError::Incomplete`]).
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// `--passphrase-file` cannot be read or holds no passphrase.
    #[error("--passphrase-file {path}: {reason}")]
    Passphrase {
        /// The file given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The passphrase does not open the archive.
    #[error(
        "the passphrase does not open {0} (wrong --passphrase-file, or the archive's header was \
         altered); nothing was restored"
    )]
    WrongPassphrase(String),
    /// The archive fails authentication or ends early.
    #[error("{path} is damaged: {reason}; nothing was restored")]
    Damaged {
        /// The archive.
        path: String,
        /// What was found.
        reason: String,
    },
    /// Not a Slipway backup, or one this version cannot read.
    #[error("{path}: {reason}")]
    Format {
        /// The archive.
        path: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// The archive is of the other service.
    #[error(
        "{path} is a backup of the {found}, not of the {expected}; restore it with \
         `slipway {found_command} restore`"
    )]
    WrongKind {
        /// The archive.
        path: String,
        /// What the command restores.
        expected: &'static str,
        /// What the archive holds.
        found: &'static str,
        /// The command that restores it.
        found_command: &'static str,
    },
    /// The target (a flag's file, directory or database) must not be used as it is.
    #[error("{flag} {target}: {reason}; nothing was written")]
    Target {
        /// The flag naming the target (`--to`, `--data-dir`, `--database-url`).
        flag: &'static str,
        /// The target as given (a database URL without its password).
        target: String,
        /// Why it is refused and what to do.
        reason: String,
    },
    /// A file of the backup changed between its listing and its archiving (a key rotated, the
    /// snapshot touched); the archive was not written.
    #[error("{path} changed during the backup ({how}); run it again")]
    Changed {
        /// The file.
        path: String,
        /// How it changed.
        how: String,
    },
    /// A restore that filled its database but could not finish: `left` says what is there
    /// now and what to do.
    #[error("{failed}; {left}")]
    Incomplete {
        /// What failed.
        failed: String,
        /// What the restore left behind, and what to do about it.
        left: String,
    },
    /// A program the database needs (pg_dump, pg_restore) is missing or too old.
    #[error("{0}")]
    Tool(String),
    /// The database refused or failed.
    #[error("{what}: {reason}")]
    Database {
        /// What was being done.
        what: String,
        /// The database's or the tool's answer.
        reason: String,
    },
    /// A file could not be read or written.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: String,
        /// The system's error.
        source: std::io::Error,
    },
}

impl BackupError {
    /// An I/O failure on `path` while doing `what`.
    pub(crate) fn io(what: &'static str, path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            what,
            path: path.display().to_string(),
            source,
        }
    }

    /// The error without what it implies for the targets ("nothing was written"), for an
    /// error that says what was left instead.
    pub(crate) fn without_outcome(&self) -> String {
        match self {
            Self::Target {
                flag,
                target,
                reason,
            } => format!("{flag} {target}: {reason}"),
            Self::Damaged { path, reason } => format!("{path} is damaged: {reason}"),
            other => other.to_string(),
        }
    }

    /// A refused target.
    pub(crate) fn target(flag: &'static str, target: impl ToString, reason: impl ToString) -> Self {
        Self::Target {
            flag,
            target: target.to_string(),
            reason: reason.to_string(),
        }
    }
}
