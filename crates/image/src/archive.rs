//! The one way this crate reads an archive's entries, for both import formats (an
//! `oci-archive` in `import`, a `docker save` archive in `docker_archive`): a leaf below both,
//! so the docker-archive converter need not reach back into the importer that calls it.

use std::io::Read;
use std::path::PathBuf;

use crate::digest::ImageError;

/// Most entries an archive may hold (an image has a few dozen blobs at most).
pub const MAX_ENTRIES: usize = 10_000;

/// One entry of an archive being unpacked, other than a directory.
pub(crate) struct ArchiveEntry<'a, R: Read> {
    /// The entry, to read its content (or link target) from.
    pub content: tar::Entry<'a, R>,
    /// Its path as the archive writes it (not yet checked).
    pub path: PathBuf,
    /// Its kind (a file, a link, …).
    pub kind: tar::EntryType,
}

/// The entries of `tar` other than directories, each with its path as written. The one rule
/// every unpacking follows: at most [`MAX_ENTRIES`] entries (directories count), and a
/// damaged archive or an unreadable path is an error saying so.
pub(crate) fn file_entries<R: Read>(
    tar: &mut tar::Archive<R>,
) -> Result<impl Iterator<Item = Result<ArchiveEntry<'_, R>, ImageError>>, ImageError> {
    let not_tar = |e: std::io::Error| ImageError::Document(format!("not a tar archive: {e}"));
    let entries = tar.entries().map_err(not_tar)?;
    let checked = entries.enumerate().map(move |(count, entry)| {
        if count >= MAX_ENTRIES {
            return Err(ImageError::Document(format!(
                "the archive has more than {MAX_ENTRIES} entries"
            )));
        }
        let content = entry.map_err(not_tar)?;
        let path = content
            .path()
            .map_err(|e| ImageError::Document(format!("an entry has no readable path: {e}")))?
            .into_owned();
        let kind = content.header().entry_type();
        Ok(ArchiveEntry {
            content,
            path,
            kind,
        })
    });
    Ok(checked.filter(|entry| !entry.as_ref().is_ok_and(|e| e.kind.is_dir())))
}
