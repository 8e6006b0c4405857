//! A draft file's bytes: a version line, a 24-byte random nonce, then the XChaCha20-Poly1305
//! ciphertext of the draft, bound to the file's name as associated data.

use slipway_server::seal::{self, NONCE_LEN};

use super::key::DraftKey;

/// The first bytes of every draft file (a later format gets another line).
const MAGIC: &[u8] = b"slipway-draft/1\n";

/// Seals `plaintext` under `key`, bound to `aad`.
///
/// # Errors
/// No randomness for the nonce, or a cipher fault.
pub fn seal(key: &DraftKey, aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, String> {
    let sealed = seal::seal(&key.0, aad, plaintext).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(MAGIC.len() + NONCE_LEN + sealed.ciphertext.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&sealed.nonce);
    out.extend_from_slice(&sealed.ciphertext);
    Ok(out)
}

/// The plaintext of `sealed`; `None` when it is not a draft file, or does not open under `key`
/// and `aad` (another key, another file's name, or damaged).
pub fn open(key: &DraftKey, aad: &[u8], sealed: &[u8]) -> Option<Vec<u8>> {
    let rest = sealed.strip_prefix(MAGIC)?;
    if rest.len() < NONCE_LEN {
        return None;
    }
    let (nonce, ciphertext) = rest.split_at(NONCE_LEN);
    seal::open(&key.0, aad, nonce, ciphertext)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_opens_only_with_its_key_and_name() {
        let key = DraftKey::generate().unwrap();
        let sealed = seal(&key, b"a.bin", b"Jane Doe").unwrap();
        assert!(sealed.starts_with(MAGIC));
        assert!(!sealed.windows(8).any(|w| w == b"Jane Doe"));
        assert_eq!(open(&key, b"a.bin", &sealed).unwrap(), b"Jane Doe");
        assert_eq!(open(&key, b"b.bin", &sealed), None);
        assert_eq!(
            open(&DraftKey::generate().unwrap(), b"a.bin", &sealed),
            None
        );
        let mut flipped = sealed.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(open(&key, b"a.bin", &flipped), None);
        assert_eq!(open(&key, b"a.bin", &sealed[..MAGIC.len() + 3]), None);
        assert_eq!(open(&key, b"a.bin", b"{\"plain\": true}"), None);
        assert_ne!(
            seal(&key, b"a.bin", b"Jane Doe").unwrap(),
            sealed,
            "fresh nonce"
        );
    }
}
