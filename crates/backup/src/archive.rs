//! The archive format: one age stream, encrypted to a passphrase (scrypt), around one tar
//! stream whose first entry is `manifest.json`; then the database (`database/…`: a SQLite
//! snapshot or a `pg_dump` custom-format dump) and the service's files (`data/…`, paths
//! relative to its data directory). Only regular files are stored.
//!
//! age authenticates the stream in 64 KiB chunks and marks the last one, so an altered byte
//! or a missing end fails decryption; [`read_into`] therefore unpacks and checks the *whole*
//! archive into a staging directory before a restore touches its target.

use std::collections::BTreeMap;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::error::BackupError;
use crate::passphrase::{Passphrase, WorkFactor};

/// The manifest's `format`.
pub const FORMAT: &str = "slipway-backup";
/// The newest format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// The first entry of every archive.
pub const MANIFEST: &str = "manifest.json";
/// Where the database's snapshot or dump sits in the archive.
pub const DATABASE_PREFIX: &str = "database/";
/// Where the service's files sit in the archive.
pub const DATA_PREFIX: &str = "data/";
/// A manifest larger than this is not one of ours.
const MANIFEST_LIMIT: u64 = 64 * 1024 * 1024;

/// Which service an archive backs up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `slipway platform backup`.
    Platform,
    /// `slipway care backup`.
    Care,
}

impl Kind {
    /// The service in words.
    pub fn noun(self) -> &'static str {
        match self {
            Self::Platform => "platform",
            Self::Care => "care service",
        }
    }

    /// The CLI command group that backs it up and restores it.
    pub fn command(self) -> &'static str {
        match self {
            Self::Platform => "platform",
            Self::Care => "care",
        }
    }
}

/// The database an archive holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Database {
    /// A SQLite file, restored as a file.
    Sqlite,
    /// A `pg_dump --format=custom` dump, restored with `pg_restore`.
    Postgres,
}

/// One file of the archive, as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Its path in the archive (`database/…` or `data/…`).
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
}

/// `manifest.json`: what the archive is and holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`FORMAT_VERSION`] of the Slipway that wrote it.
    pub format_version: u32,
    /// Which service.
    pub kind: Kind,
    /// When the backup began (RFC 3339, UTC).
    pub created_at: String,
    /// Which database backend the snapshot is of.
    pub database: Database,
    /// The program that made the dump (`pg_dump (PostgreSQL) 15.18`), for PostgreSQL: the
    /// restore needs a `pg_restore` at least as new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_tool: Option<String>,
    /// The version of Slipway that wrote it.
    pub slipway_version: String,
    /// Every file after the manifest, in order.
    pub files: Vec<FileEntry>,
}

impl Manifest {
    /// A manifest of this Slipway, begun now.
    pub fn new(kind: Kind, database: Database, created_at: String) -> Self {
        Self {
            format: FORMAT.to_owned(),
            format_version: FORMAT_VERSION,
            kind,
            created_at,
            database,
            database_tool: None,
            slipway_version: env!("CARGO_PKG_VERSION").to_owned(),
            files: Vec::new(),
        }
    }
}

/// A file to put into the archive.
#[derive(Debug, Clone)]
pub struct Source {
    /// Its path in the archive.
    pub archive_path: String,
    /// Where it is now.
    pub file: PathBuf,
    /// Its size when it was listed: exactly this many bytes are stored, so a log that grows
    /// while the backup runs is stored as it was when listed.
    pub size: u64,
    /// Whether the file must still be exactly `size` bytes when it is read (the keys and the
    /// database snapshot: a cut key or snapshot would be a backup that cannot be restored);
    /// otherwise only a file that shrank is refused.
    pub fixed: bool,
}

/// Writes the archive to a new temporary file beside `to` and gives it the name `to` only
/// when it is complete and synced (never replacing a file of that name). Returns its size.
pub fn write(
    to: &Path,
    mut manifest: Manifest,
    sources: &[Source],
    passphrase: &Passphrase,
    work: WorkFactor,
) -> Result<u64, BackupError> {
    let dir = to
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = to
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    manifest.files = sources
        .iter()
        .map(|s| FileEntry {
            path: s.archive_path.clone(),
            size: s.size,
        })
        .collect();
    let manifest_json = serde_json::to_vec_pretty(&manifest).map_err(|e| BackupError::Format {
        path: to.display().to_string(),
        reason: format!("cannot encode the manifest: {e}"),
    })?;
    // 0600 from the first byte (tempfile's default), removed if anything below fails.
    let partial = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .tempfile_in(dir)
        .map_err(|e| BackupError::io("cannot create a file beside", to, e))?;
    let recipient = passphrase.recipient(work);
    let encryptor =
        age::Encryptor::with_recipients(std::iter::once(&recipient as &dyn age::Recipient))
            .map_err(|e| BackupError::Format {
                path: to.display().to_string(),
                reason: format!("cannot encrypt: {e}"),
            })?;
    encrypt_into(&partial, encryptor, &manifest_json, sources)?;
    let size = partial
        .as_file()
        .metadata()
        .map_err(|e| BackupError::io("cannot read", partial.path(), e))?
        .len();
    partial.persist_noclobber(to).map_err(|e| {
        if e.error.kind() == io::ErrorKind::AlreadyExists {
            BackupError::target(
                "--to",
                to.display(),
                "exists; a backup never replaces a file: remove it or choose another name",
            )
        } else {
            BackupError::io("cannot name the archive", to, e.error)
        }
    })?;
    if let Ok(d) = std::fs::File::open(dir) {
        // Best effort, as in slipway_server::file: the new name survives a power cut.
        let _ = d.sync_all();
    }
    Ok(size)
}

/// The tar stream (the manifest first, then every source) through age into `partial`,
/// synced.
fn encrypt_into(
    partial: &tempfile::NamedTempFile,
    encryptor: age::Encryptor,
    manifest_json: &[u8],
    sources: &[Source],
) -> Result<(), BackupError> {
    let out = |e| BackupError::io("cannot write", partial.path(), e);
    let encrypted = encryptor
        .wrap_output(BufWriter::new(partial.as_file()))
        .map_err(out)?;
    let mut tar = tar::Builder::new(encrypted);
    append(
        &mut tar,
        MANIFEST,
        manifest_json.len() as u64,
        manifest_json,
    )
    .map_err(out)?;
    for source in sources {
        let changed = |how: String| BackupError::Changed {
            path: source.file.display().to_string(),
            how,
        };
        let file = std::fs::File::open(&source.file).map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                changed("removed (an app or build deleted?)".into())
            } else {
                BackupError::io("cannot read", &source.file, e)
            }
        })?;
        if source.fixed {
            let now = file
                .metadata()
                .map_err(|e| BackupError::io("cannot read", &source.file, e))?
                .len();
            if now != source.size {
                return Err(changed(format!(
                    "{now} bytes now, {} when it was listed",
                    source.size
                )));
            }
        }
        let exact = Exact {
            inner: file,
            left: source.size,
            fixed: source.fixed,
        };
        append(&mut tar, &source.archive_path, source.size, exact).map_err(|e| {
            match e
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<Resized>())
            {
                Some(resized) => changed(resized.to_string()),
                None if e.kind() == io::ErrorKind::UnexpectedEof => changed(e.to_string()),
                None => BackupError::io("cannot archive", &source.file, e),
            }
        })?;
    }
    let encrypted = tar.into_inner().map_err(out)?;
    let buffered = encrypted.finish().map_err(out)?;
    buffered
        .into_inner()
        .map_err(|e| out(e.into_error()))?
        .sync_all()
        .map_err(out)?;
    Ok(())
}

/// One regular file of `size` bytes at `path`, owner-only.
fn append<W: Write>(
    tar: &mut tar::Builder<W>,
    path: &str,
    size: u64,
    data: impl Read,
) -> io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(size);
    header.set_mode(0o600);
    header.set_mtime(0);
    tar.append_data(&mut header, path, data)
}

/// Reads exactly `left` bytes: more are never read, fewer are an `UnexpectedEof` (a tar
/// entry must hold exactly the size its header says); with `fixed`, a byte beyond them is a
/// [`Resized`] error.
struct Exact<R> {
    inner: R,
    left: u64,
    fixed: bool,
}

/// A file that was not the size it was listed with when it was read.
#[derive(Debug, thiserror::Error)]
enum Resized {
    #[error("{0} bytes fewer than when it was listed")]
    Shrank(u64),
    #[error("larger than when it was listed")]
    Grew,
}

impl<R: Read> Read for Exact<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            if self.fixed && !buf.is_empty() {
                let mut probe = [0u8; 1];
                if self.inner.read(&mut probe)? > 0 {
                    return Err(io::Error::other(Resized::Grew));
                }
            }
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                Resized::Shrank(self.left),
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// Passes the decrypted stream through and remembers age's first failure, so a tar error
/// caused by an altered or truncated archive is reported as that, not as a tar problem.
struct Watched<R> {
    inner: R,
    failure: Arc<Mutex<Option<String>>>,
}

impl<R: Read> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).inspect_err(|e| {
            if let Ok(mut failure) = self.failure.lock() {
                failure.get_or_insert_with(|| e.to_string());
            }
        })
    }
}

/// Decrypts `from`, checks every byte and unpacks it into `staging` (an empty directory):
/// `database/…` and `data/…` as they are in the archive. Returns the manifest. Nothing
/// outside `staging` is written; any failure leaves `staging` to be removed by the caller.
pub fn read_into(
    from: &Path,
    passphrase: &Passphrase,
    staging: &Path,
) -> Result<Manifest, BackupError> {
    let shown = from.display().to_string();
    let damaged = |reason: String| BackupError::Damaged {
        path: shown.clone(),
        reason,
    };
    let format = |reason: String| BackupError::Format {
        path: shown.clone(),
        reason,
    };
    let file = std::fs::File::open(from).map_err(|e| BackupError::io("--from", from, e))?;
    let decryptor = age::Decryptor::new_buffered(BufReader::new(file)).map_err(|e| match e {
        age::DecryptError::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            damaged("it ends inside its header".into())
        }
        age::DecryptError::Io(e) => BackupError::io("cannot read", from, e),
        _ => format("not a Slipway backup (no valid age header)".into()),
    })?;
    if !decryptor.is_scrypt() {
        return Err(format(
            "is encrypted to a key, not to a passphrase: not a Slipway backup".into(),
        ));
    }
    let identity = passphrase.identity();
    let decrypted = decryptor
        .decrypt(std::iter::once(&identity as &dyn age::Identity))
        .map_err(|e| match e {
            age::DecryptError::DecryptionFailed
            | age::DecryptError::KeyDecryptionFailed
            | age::DecryptError::NoMatchingKeys => BackupError::WrongPassphrase(shown.clone()),
            age::DecryptError::InvalidMac | age::DecryptError::InvalidHeader => {
                damaged("its header fails authentication".into())
            }
            age::DecryptError::ExcessiveWork { required, .. } => format(format!(
                "its passphrase is stretched with scrypt work factor {required}, far more than \
                 this machine takes in a second; not a Slipway backup"
            )),
            other => format(other.to_string()),
        })?;
    let failure = Arc::new(Mutex::new(None));
    let watched = Watched {
        inner: decrypted,
        failure: Arc::clone(&failure),
    };
    let age_failure = || failure.lock().ok().and_then(|f| f.clone());
    let mut archive = tar::Archive::new(watched);
    let unpacked = unpack(&mut archive, staging);
    // Whatever tar saw, age's verdict on the stream comes first.
    if let Some(reason) = age_failure() {
        return Err(damaged(format!("{reason} (altered or truncated)")));
    }
    let manifest = unpacked.map_err(|e| match e {
        Unpack::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            damaged(format!("it ends early ({e})"))
        }
        Unpack::Io(e) => damaged(e.to_string()),
        Unpack::Staging(path, e) => BackupError::io(
            "cannot unpack the archive (nothing was restored) into",
            &path,
            e,
        ),
        Unpack::Format(reason) => format(reason),
    })?;
    // The tar stream ended; age authenticates the last chunk only when it is read to its end.
    let mut rest = archive.into_inner();
    if let Err(e) = io::copy(&mut rest, &mut io::sink()) {
        return Err(damaged(format!("{e} (altered or truncated)")));
    }
    Ok(manifest)
}

/// Why unpacking stopped.
enum Unpack {
    /// The stream could not be read (tar's or age's error).
    Io(io::Error),
    /// The staging directory could not be written.
    Staging(PathBuf, io::Error),
    /// The archive is readable but not a Slipway backup this version can restore.
    Format(String),
}

fn unpack<R: Read>(archive: &mut tar::Archive<R>, staging: &Path) -> Result<Manifest, Unpack> {
    let mut entries = archive.entries().map_err(Unpack::Io)?;
    let Some(first) = entries.next() else {
        return Err(Unpack::Format("the archive is empty".into()));
    };
    let first = first.map_err(Unpack::Io)?;
    if first.path_bytes().as_ref() != MANIFEST.as_bytes() || first.size() > MANIFEST_LIMIT {
        return Err(Unpack::Format(format!(
            "its first entry is not {MANIFEST}: not a Slipway backup"
        )));
    }
    let mut text = Vec::new();
    first
        .take(MANIFEST_LIMIT)
        .read_to_end(&mut text)
        .map_err(Unpack::Io)?;
    let manifest = parse_manifest(&text).map_err(Unpack::Format)?;
    let mut expected: BTreeMap<&str, u64> = BTreeMap::new();
    for f in &manifest.files {
        safe_path(&f.path).map_err(Unpack::Format)?;
        if expected.insert(&f.path, f.size).is_some() {
            return Err(Unpack::Format(format!(
                "the manifest lists {:?} twice",
                f.path
            )));
        }
    }
    for entry in entries {
        let mut entry = entry.map_err(Unpack::Io)?;
        let path = String::from_utf8(entry.path_bytes().into_owned())
            .map_err(|_| Unpack::Format("an entry's name is not UTF-8".into()))?;
        let Some(size) = expected.remove(path.as_str()) else {
            return Err(Unpack::Format(format!(
                "entry {path:?} is not in the manifest (or is there twice)"
            )));
        };
        if entry.header().entry_type() != tar::EntryType::Regular || entry.size() != size {
            return Err(Unpack::Format(format!(
                "entry {path:?} is not the regular file of {size} bytes the manifest lists"
            )));
        }
        let dest = staging.join(safe_path(&path).map_err(Unpack::Format)?);
        let staged = |e| Unpack::Staging(dest.clone(), e);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(staged)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut out = options.open(&dest).map_err(staged)?;
        copy_entry(&mut entry, &mut out, &dest)?;
        out.sync_all().map_err(staged)?;
    }
    if let Some(missing) = expected.keys().next() {
        return Err(Unpack::Io(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "{missing} and {} more files are missing",
                expected.len() - 1
            ),
        )));
    }
    Ok(manifest)
}

/// Copies one entry to its staged file: a read error is the archive's (damaged), a write
/// error the staging directory's (a full disk is not a damaged archive).
fn copy_entry(from: &mut impl Read, to: &mut impl Write, dest: &Path) -> Result<(), Unpack> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Unpack::Io(e)),
        };
        to.write_all(&buf[..n])
            .map_err(|e| Unpack::Staging(dest.to_path_buf(), e))?;
    }
}

fn parse_manifest(text: &[u8]) -> Result<Manifest, String> {
    let value: serde_json::Value = serde_json::from_slice(text)
        .map_err(|_| format!("{MANIFEST} is not JSON: not a Slipway backup"))?;
    if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(format!("{MANIFEST} is not a Slipway backup's"));
    }
    let version = value
        .get("format_version")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    if version > u64::from(FORMAT_VERSION) {
        return Err(format!(
            "it was written by a newer Slipway (format version {version}; this one reads up to \
             {FORMAT_VERSION}); restore it with that version"
        ));
    }
    serde_json::from_value(value).map_err(|e| format!("{MANIFEST} is malformed: {e}"))
}

/// A relative path of plain names under one of the archive's prefixes (no `..`, no root).
fn safe_path(path: &str) -> Result<PathBuf, String> {
    let ok_prefix = path.starts_with(DATABASE_PREFIX) || path.starts_with(DATA_PREFIX);
    // Checked on the text: `Path::components` would quietly drop a `.` segment.
    let plain = path
        .split('/')
        .all(|segment| !segment.is_empty() && segment != "." && segment != "..");
    if !ok_prefix || !plain {
        return Err(format!("entry {path:?} is outside the archive's layout"));
    }
    Ok(PathBuf::from(path))
}

/// The time now, RFC 3339 in UTC (a manifest's `created_at`).
pub(crate) fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// [`write`] the archive (blocking work, off the async threads).
pub(crate) async fn write_async(
    to: &Path,
    manifest: Manifest,
    sources: Vec<Source>,
    passphrase: &Passphrase,
    work: WorkFactor,
) -> Result<u64, BackupError> {
    let to = to.to_path_buf();
    let passphrase = passphrase.clone();
    tokio::task::spawn_blocking(move || write(&to, manifest, &sources, &passphrase, work))
        .await
        .map_err(|e| BackupError::Tool(format!("the archive writer stopped: {e}")))?
}

/// [`read_into`]: decrypts, checks and unpacks the whole archive into `staging` (blocking
/// work, off the async threads).
pub(crate) async fn read_into_async(
    from: &Path,
    passphrase: &Passphrase,
    staging: &Path,
) -> Result<Manifest, BackupError> {
    let from = from.to_path_buf();
    let staging = staging.to_path_buf();
    let passphrase = passphrase.clone();
    tokio::task::spawn_blocking(move || read_into(&from, &passphrase, &staging))
        .await
        .map_err(|e| BackupError::Tool(format!("the archive reader stopped: {e}")))?
}

/// Refuses an archive of the other service.
pub(crate) fn expect_kind(
    manifest: &Manifest,
    expected: Kind,
    from: &Path,
) -> Result<(), BackupError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_paths_under_the_prefixes_are_accepted() {
        for good in [
            "data/vault.key",
            "data/images/blobs/sha256/ab",
            "database/x",
        ] {
            assert!(safe_path(good).is_ok(), "{good}");
        }
        for bad in [
            "data/../etc/passwd",
            "/data/x",
            "other/x",
            "data/./x",
            "data//x",
            "data/x/",
            "manifest.json",
        ] {
            assert!(safe_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_newer_format_is_refused_with_what_to_do() {
        let text = br#"{"format":"slipway-backup","format_version":99}"#;
        let err = parse_manifest(text).unwrap_err();
        assert!(err.contains("newer Slipway"), "{err}");
        assert!(parse_manifest(br#"{"format":"other"}"#).is_err());
    }

    #[test]
    fn exact_refuses_a_short_file() {
        let mut short = Exact {
            inner: &b"abc"[..],
            left: 5,
            fixed: false,
        };
        let mut out = Vec::new();
        let err = short.read_to_end(&mut out).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        let mut long = Exact {
            inner: &b"abcdef"[..],
            left: 4,
            fixed: false,
        };
        out.clear();
        long.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"abcd");
        let mut grown = Exact {
            inner: &b"abcdef"[..],
            left: 4,
            fixed: true,
        };
        out.clear();
        let err = grown.read_to_end(&mut out).unwrap_err();
        assert!(err.get_ref().unwrap().is::<Resized>(), "{err}");
        let mut same = Exact {
            inner: &b"abcd"[..],
            left: 4,
            fixed: true,
        };
        out.clear();
        same.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"abcd");
    }

    /// A key replaced by a larger one after the listing fails the backup; a log that grew is
    /// stored as it was listed.
    #[test]
    fn a_fixed_file_that_changed_fails_the_backup() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("vault.key");
        std::fs::write(&key, b"a longer key than listed").unwrap();
        let log = dir.path().join("log");
        std::fs::write(&log, b"line 1\nline 2\n").unwrap();
        let passphrase = Passphrase::from_text("p").unwrap();
        let to = dir.path().join("b.age");
        let source = |file: &Path, fixed| Source {
            archive_path: format!("{DATA_PREFIX}{}", file.file_name().unwrap().display()),
            file: file.to_path_buf(),
            size: 7,
            fixed,
        };
        let manifest = || Manifest::new(Kind::Platform, Database::Sqlite, "now".into());
        let err = write(
            &to,
            manifest(),
            &[source(&log, false), source(&key, true)],
            &passphrase,
            WorkFactor::Fixed(10),
        )
        .unwrap_err();
        assert!(matches!(err, BackupError::Changed { .. }), "{err}");
        assert!(err.to_string().contains("run it again"), "{err}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "no archive and no partial file: {left:?}");
        write(
            &to,
            manifest(),
            &[source(&log, false)],
            &passphrase,
            WorkFactor::Fixed(10),
        )
        .expect("a grown log is stored as listed");
        let staging = dir.path().join("staging");
        std::fs::create_dir(&staging).unwrap();
        read_into(&to, &passphrase, &staging).unwrap();
        assert_eq!(
            std::fs::read(staging.join("data/log")).unwrap(),
            b"line 1\n"
        );
    }

    /// A disk that fills while an archive is unpacked is said to be that, not a damaged
    /// archive.
    #[test]
    fn a_write_error_in_staging_is_not_damage() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from(io::ErrorKind::StorageFull))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let err = copy_entry(&mut &b"data"[..], &mut Full, Path::new("staged")).unwrap_err();
        assert!(matches!(&err, Unpack::Staging(path, e)
                if path == Path::new("staged") && e.kind() == io::ErrorKind::StorageFull));
    }
}
