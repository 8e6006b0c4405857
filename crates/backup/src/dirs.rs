//! The directories a backup and a restore use, and the checks of the paths they go to: the
//! `--to` check, private (0700) staging directories on the target's file system (so the final
//! step is a rename or a link), and the directories a restore creates and takes back. Both
//! services' commands share these, and none of it knows a database or the archive format.

use std::path::{Path, PathBuf};

use crate::error::BackupError;

/// Refuses an existing `--to` (a backup never replaces a file) and a missing directory.
pub(crate) fn check_to(to: &Path) -> Result<(), BackupError> {
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
pub(crate) fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A new private (0700) directory beside `path`, removed when dropped: where a restore
/// unpacks and checks an archive before it touches its target (the same file system, so the
/// final step is a rename), and where a SQLite snapshot waits to be archived.
pub(crate) fn staging_beside(
    path: &Path,
    flag: &'static str,
) -> Result<tempfile::TempDir, BackupError> {
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
pub(crate) fn staging_near(
    path: &Path,
    flag: &'static str,
) -> Result<tempfile::TempDir, BackupError> {
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
pub(crate) fn create_missing_dirs(dir: &Path) -> Result<Vec<PathBuf>, BackupError> {
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
pub(crate) fn remove_created(dirs: &[PathBuf]) {
    for dir in dirs {
        let _ = std::fs::remove_dir(dir);
    }
}

/// A new directory only its owner can enter (tempfile leaves a directory's mode to the
/// umask), in `dir` or in the system's temporary directory.
pub(crate) fn private_dir(prefix: &str, dir: Option<&Path>) -> std::io::Result<tempfile::TempDir> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
