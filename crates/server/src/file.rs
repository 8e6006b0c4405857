//! The one atomic file write. A reader sees the old file or the new one, never part of
//! either, and after a crash the file is one of the two: the contents go to a fresh
//! temporary file in the same directory, are synced, renamed over the target, and the
//! directory is synced so the rename itself survives a power cut. Secret files (tokens,
//! keys) are created 0600 from the first byte, so they are never readable by others, not
//! even briefly.

use std::io::Write;
use std::path::Path;

/// Slipway's directory of per-user data: `$XDG_DATA_HOME/slipway`, else
/// `~/.local/share/slipway` (the XDG default), else `./slipway` without a home.
pub fn user_data_dir() -> std::path::PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".local/share"))
        })
        .unwrap_or_else(|| std::path::PathBuf::from("."))
        .join("slipway")
}

/// Who may read the written file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The owner only (0600): tokens, keys.
    Secret,
    /// Ordinary files: a replaced file keeps its permissions, a new one gets what the
    /// process's umask allows (0666 & !umask).
    Ordinary,
}

/// Writes `contents` to `path` atomically, creating missing parent directories.
pub fn write(path: &Path, contents: &[u8], mode: Mode) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(
        &mut options,
        match mode {
            Mode::Secret => 0o600,
            Mode::Ordinary => 0o666,
        },
    );
    #[cfg(not(unix))]
    let _ = mode;
    let (tmp, mut file) = create_temp(dir, &name, &options)?;
    let result = (|| {
        if mode == Mode::Ordinary
            && let Ok(existing) = std::fs::metadata(path)
        {
            file.set_permissions(existing.permissions())?;
        }
        file.write_all(contents)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(dir) {
            // Best effort: some file systems cannot sync a directory.
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A new file beside the target with a random name (retried on the rare collision).
fn create_temp(
    dir: &Path,
    name: &str,
    options: &std::fs::OpenOptions,
) -> std::io::Result<(std::path::PathBuf, std::fs::File)> {
    let mut last = None;
    for _ in 0..4 {
        let mut suffix = [0u8; 8];
        getrandom::fill(&mut suffix).map_err(std::io::Error::other)?;
        let suffix: String = suffix.iter().map(|b| format!("{b:02x}")).collect();
        let tmp = dir.join(format!(".{name}.tmp-{suffix}"));
        match options.open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no temporary file name was free")))
}

/// Narrows an existing secret file to 0600 if someone widened it; returns whether it had to.
pub fn restrict_to_owner(path: &Path) -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
        if mode != 0o600 {
            tracing::warn!(path = %path.display(), mode = format!("{mode:o}"), "secret file was not 0600; narrowing it");
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
            return Ok(true);
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode_of(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn secret_files_are_0600_and_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        write(&path, b"first", Mode::Secret).unwrap();
        write(&path, b"second", Mode::Secret).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        assert_eq!(mode_of(&path), 0o600);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }

    #[test]
    fn ordinary_files_create_their_directory_and_leave_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/a.txt");
        write(&path, b"one", Mode::Ordinary).unwrap();
        write(&path, b"two", Mode::Ordinary).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.txt"]);
    }

    #[test]
    fn a_replaced_ordinary_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        write(&path, b"#!/bin/sh\n", Mode::Ordinary).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        write(&path, b"#!/bin/sh\ntrue\n", Mode::Ordinary).unwrap();
        assert_eq!(mode_of(&path), 0o755);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("target");
        write(&path, b"old", Mode::Secret).unwrap();
        // Renaming a file over a non-empty directory fails after the temp file was written.
        let blocked = dir.path().join("blocked");
        std::fs::create_dir_all(blocked.join("x")).unwrap();
        assert!(write(&blocked, b"new", Mode::Secret).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn widened_secret_files_are_narrowed() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        write(&path, b"k", Mode::Secret).unwrap();
        assert!(!restrict_to_owner(&path).unwrap());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(restrict_to_owner(&path).unwrap());
        assert_eq!(mode_of(&path), 0o600);
    }
}
