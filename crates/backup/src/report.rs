//! What a finished backup or restore says: [`Report`] and [`Restored`], the values both
//! services' commands return and print (sizes and counts in words, as people say them).

use std::path::PathBuf;
use std::time::Duration;

use crate::archive::{Database, Kind};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(human_size(512), "512 bytes");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(3 * 1024 * 1024), "3.0 MiB");
    }
}
