//! The data directory (`--data-dir`): the files the platform keeps there.

use std::path::Path;

/// Writes one line to a file only its owner may read, atomically (see
/// [`slipway_server::file`]): the token and key files of the data directory.
pub fn write_secret_line(path: &Path, line: &str) -> std::io::Result<()> {
    slipway_server::file::write(
        path,
        format!("{line}\n").as_bytes(),
        slipway_server::file::Mode::Secret,
    )
}

/// Narrows a token or key file to 0600 if someone widened it.
pub fn restrict_to_owner(path: &Path) -> std::io::Result<()> {
    slipway_server::file::restrict_to_owner(path).map(|_| ())
}
