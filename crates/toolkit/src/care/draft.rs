//! The enrollment draft of the desktop app: one JSON document in the user's data directory,
//! written atomically and readable by the user only (it holds patient data).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The draft's file in `dir`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join("enrollment-draft.json")
}

/// Saves the draft (atomically, 0600).
pub fn save(dir: &Path, document: &Value) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(document).map_err(std::io::Error::other)?;
    crate::fsutil::atomic_write_secret(&path(dir), &bytes)
}

/// The saved draft; `None` when there is none or it is not readable JSON.
pub fn load(dir: &Path) -> Option<Value> {
    let bytes = std::fs::read(path(dir)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Forgets the draft.
pub fn clear(dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path(dir)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_survives_and_is_private() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()), None);
        let doc = serde_json::json!({"patient": {"id": "P-1"}});
        save(dir.path(), &doc).unwrap();
        assert_eq!(load(dir.path()), Some(doc));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path(dir.path()))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        clear(dir.path()).unwrap();
        clear(dir.path()).unwrap();
        assert_eq!(load(dir.path()), None);
    }
}
