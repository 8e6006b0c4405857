//! Atomic file writes: a reader sees the old file or the new one, never half of either (the
//! one implementation, `slipway_server::file`, shared with the servers).

use std::path::Path;

/// Writes `contents` to `path` through a synced temporary file renamed over the target
/// (parent directories are created; an existing file keeps its permissions).
pub fn atomic_write(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    slipway_server::file::write(path, contents, slipway_server::file::Mode::Ordinary)
}

/// The same for a token: the file is readable by its owner only (0600) from the first byte.
pub fn atomic_write_secret(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    slipway_server::file::write(path, contents, slipway_server::file::Mode::Secret)
}
