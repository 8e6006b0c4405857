//! The content digest and the crate's error, the leaf every other module of the crate stands
//! on. They share one module because each names the other: a malformed digest is an
//! [`ImageError`], and most image errors name the digest at fault.

use std::io::Write;
use std::path::Path;

use sha2::{Digest as _, Sha256};

/// A content digest, always `sha256:` followed by 64 lowercase hex digits. Parsing checks the
/// shape, so a digest can safely become a file name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(String);

impl Digest {
    /// Parses `sha256:<64 hex>`.
    pub fn parse(raw: &str) -> Result<Self, ImageError> {
        let hex = raw
            .strip_prefix("sha256:")
            .ok_or_else(|| ImageError::InvalidDigest(raw.to_owned()))?;
        if hex.len() != 64
            || !hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(ImageError::InvalidDigest(raw.to_owned()));
        }
        Ok(Self(raw.to_owned()))
    }

    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self::from_hasher(Sha256::new_with_prefix(bytes))
    }

    /// The digest a finished hasher holds.
    pub fn from_hasher(hasher: Sha256) -> Self {
        Self(format!("sha256:{}", hex(&hasher.finalize())))
    }

    /// `sha256:<hex>`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 64 hex digits alone (the blob's file name).
    pub fn hex(&self) -> &str {
        &self.0["sha256:".len()..]
    }
}

impl std::fmt::Display for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Why an image could not be stored, signed or verified.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// A file operation failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// Not a `sha256:<64 hex>` digest.
    #[error("not a sha256 digest: {0:?}")]
    InvalidDigest(String),
    /// A blob the manifest names is not in the store.
    #[error("blob {0} is missing from the image store")]
    MissingBlob(Digest),
    /// A blob's content does not hash to its name (it was altered).
    #[error("blob {expected} was altered: its content hashes to {actual}")]
    DigestMismatch {
        /// The digest the blob is stored under.
        expected: Digest,
        /// What its content hashes to now.
        actual: Digest,
    },
    /// A blob's size is not what the manifest says.
    #[error("blob {0} does not have the size its manifest records")]
    SizeMismatch(Digest),
    /// The image has no platform signature.
    #[error("image {0} has no platform signature")]
    MissingSignature(Digest),
    /// The signature does not verify with the platform key.
    #[error("the signature of image {0} does not verify with the platform key")]
    BadSignature(Digest),
    /// The signing key is missing or unreadable.
    #[error("signing key: {0}")]
    Key(String),
    /// A manifest, config or index document is malformed.
    #[error("malformed OCI document: {0}")]
    Document(String),
}

/// A writer that hashes (SHA-256) and counts what passes through it, so a blob's digest and
/// size are known the moment it is written, without reading it again.
#[derive(Debug)]
pub struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    written: u64,
}

impl<W: Write> HashingWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            written: 0,
        }
    }

    /// The inner writer, the digest and the byte count.
    pub fn finish(self) -> (W, Digest, u64) {
        (self.inner, Digest::from_hasher(self.hasher), self.written)
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The digest and size of a file, read in chunks.
pub fn digest_file(path: &Path) -> std::io::Result<(Digest, u64)> {
    let mut file = std::fs::File::open(path)?;
    let mut writer = HashingWriter::new(std::io::sink());
    std::io::copy(&mut file, &mut writer)?;
    let (_, digest, size) = writer.finish();
    Ok((digest, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_parse_strictly_and_hash_like_sha256sum() {
        let d = Digest::of(b"abc");
        assert_eq!(
            d.as_str(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Digest::parse(d.as_str()).unwrap(), d);
        for bad in [
            "",
            "sha256:",
            "md5:00",
            "sha256:../../etc/passwd",
            &d.as_str().to_uppercase(),
        ] {
            assert!(Digest::parse(bad).is_err(), "{bad}");
        }
        let mut w = HashingWriter::new(Vec::new());
        w.write_all(b"abc").unwrap();
        let (inner, digest, size) = w.finish();
        assert_eq!((inner, digest, size), (b"abc".to_vec(), d, 3));
    }
}
