//! Authenticated encryption with XChaCha20-Poly1305 (the RustCrypto `chacha20poly1305`
//! crate): the platform's vault seals secret values with it, the desktop seals the care forms'
//! drafts. Both frame and store the result their own way (the vault as base64 fields beside a
//! key id, a draft as a file with a version line); the cipher, the random 24-byte nonce and
//! the associated data are this one module, so neither can drift into a weaker use of it.

use chacha20poly1305::aead::{Aead, Generate, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

/// The length of a key in bytes (256 bits).
pub const KEY_LEN: usize = 32;
/// The length of a nonce in bytes (XChaCha20's 192 bits: random nonces never repeat in
/// practice).
pub const NONCE_LEN: usize = 24;

/// Why sealing failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// The key is not [`KEY_LEN`] bytes long.
    #[error("a sealing key is {KEY_LEN} bytes, not {0}")]
    KeyLength(usize),
    /// The operating system gave no randomness for the nonce, or the cipher failed.
    #[error("cannot seal: {0}")]
    Cipher(String),
}

/// A sealed value: the random nonce it was sealed with and the ciphertext (with its tag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed {
    /// [`NONCE_LEN`] random bytes.
    pub nonce: [u8; NONCE_LEN],
    /// The ciphertext followed by the 16-byte authentication tag.
    pub ciphertext: Vec<u8>,
}

fn cipher(key: &[u8]) -> Result<XChaCha20Poly1305, SealError> {
    XChaCha20Poly1305::new_from_slice(key).map_err(|_| SealError::KeyLength(key.len()))
}

/// Seals `plaintext` under `key` with a fresh random nonce, bound to `aad` (which must be
/// given again to open it: a value copied to another place does not open there).
///
/// # Errors
/// A key of the wrong length, no randomness for the nonce, or a cipher fault.
pub fn seal(key: &[u8], aad: &[u8], plaintext: &[u8]) -> Result<Sealed, SealError> {
    let cipher = cipher(key)?;
    let nonce = XNonce::try_generate().map_err(|e| SealError::Cipher(e.to_string()))?;
    let ciphertext = cipher
        .encrypt(
            &nonce,
            Payload {
                msg: plaintext,
                aad,
            },
        )
        .map_err(|e| SealError::Cipher(e.to_string()))?;
    let mut bytes = [0u8; NONCE_LEN];
    bytes.copy_from_slice(nonce.as_slice());
    Ok(Sealed {
        nonce: bytes,
        ciphertext,
    })
}

/// The plaintext of `ciphertext` sealed under `key` with `nonce` and `aad`; `None` when it
/// does not open (another key, other associated data, a nonce of the wrong length, or damaged
/// bytes: an authenticated cipher cannot tell these apart, and callers need not).
pub fn open(key: &[u8], aad: &[u8], nonce: &[u8], ciphertext: &[u8]) -> Option<Vec<u8>> {
    let nonce = XNonce::try_from(nonce).ok()?;
    cipher(key)
        .ok()?
        .decrypt(
            &nonce,
            Payload {
                msg: ciphertext,
                aad,
            },
        )
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_only_with_its_key_nonce_and_associated_data() {
        let key = [7u8; KEY_LEN];
        let sealed = seal(&key, b"a", b"Jane Doe").unwrap();
        assert!(!sealed.ciphertext.windows(8).any(|w| w == b"Jane Doe"));
        assert_eq!(
            open(&key, b"a", &sealed.nonce, &sealed.ciphertext).unwrap(),
            b"Jane Doe"
        );
        assert_eq!(open(&key, b"b", &sealed.nonce, &sealed.ciphertext), None);
        assert_eq!(
            open(&[8u8; KEY_LEN], b"a", &sealed.nonce, &sealed.ciphertext),
            None
        );
        assert_eq!(
            open(&key, b"a", &sealed.nonce[1..], &sealed.ciphertext),
            None
        );
        let mut flipped = sealed.ciphertext.clone();
        flipped[0] ^= 1;
        assert_eq!(open(&key, b"a", &sealed.nonce, &flipped), None);
        assert_ne!(seal(&key, b"a", b"Jane Doe").unwrap().nonce, sealed.nonce);
        assert_eq!(seal(&key[1..], b"a", b"x"), Err(SealError::KeyLength(31)));
    }
}
