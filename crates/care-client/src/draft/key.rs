//! The drafts' key: 32 random bytes, kept where `slipway login` keeps tokens (the OS keyring,
//! or, where no keyring service runs, a 0600 file in the config directory's `tokens/`), never
//! beside the drafts it opens.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use slipway_platform_client::credentials::{self, TokenStore};

/// The key's name in the token store. Environment names have no `.`, so it never collides with
/// an environment's token.
pub const ACCOUNT: &str = "desktop.care-drafts-key";

/// A 256-bit XChaCha20-Poly1305 key. `Debug` is redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct DraftKey(pub(super) [u8; 32]);

impl fmt::Debug for DraftKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DraftKey(…)")
    }
}

impl DraftKey {
    /// A fresh random key.
    ///
    /// # Errors
    /// The OS has no randomness to give.
    pub fn generate() -> Result<Self, getrandom::Error> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key)?;
        Ok(Self(key))
    }

    /// The key as the store keeps it (base64).
    fn encode(&self) -> String {
        STANDARD.encode(self.0)
    }

    /// A stored key; `None` when the text is not a 32-byte key in base64.
    fn decode(text: &str) -> Option<Self> {
        STANDARD.decode(text.trim()).ok()?.try_into().ok().map(Self)
    }
}

/// Where the key is kept.
pub trait KeyStore: fmt::Debug + Send + Sync {
    /// The stored key and where it is: `Ok(None)` when there is none (nothing stored, or what
    /// is stored is no key), `Err` when the store cannot be read now (a locked keyring, its
    /// unlock prompt dismissed): a key may be there, so none must be made in its place.
    ///
    /// # Errors
    /// The store could not be read; what to tell.
    fn read(&self) -> Result<Option<(DraftKey, TokenStore)>, String>;
    /// Stores `key`, replacing any other; returns where it went.
    ///
    /// # Errors
    /// Neither the keyring nor the file could take it, or the keyring runs but refused it
    /// (then the file is not written: it would shadow the keyring's key).
    fn write(&self, key: &DraftKey) -> Result<TokenStore, String>;
}

/// The tokens' store: the keyring, else the 0600 file (`SLIPWAY_TOKEN_STORE=file` picks the
/// file), as [`credentials`] decides for tokens.
#[derive(Debug, Default)]
pub struct TokenKeyStore;

impl KeyStore for TokenKeyStore {
    fn read(&self) -> Result<Option<(DraftKey, TokenStore)>, String> {
        Ok(credentials::look_up_token(ACCOUNT)?
            .and_then(|(text, store)| DraftKey::decode(&text).map(|key| (key, store))))
    }

    fn write(&self, key: &DraftKey) -> Result<TokenStore, String> {
        credentials::store_token_strictly(ACCOUNT, &key.encode()).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_random_redacted_and_read_back() {
        let key = DraftKey::generate().unwrap();
        assert_ne!(key, DraftKey::generate().unwrap());
        assert_eq!(format!("{key:?}"), "DraftKey(…)");
        assert_eq!(DraftKey::decode(&key.encode()), Some(key));
        assert_eq!(DraftKey::decode("c2hvcnQ="), None);
        assert_eq!(DraftKey::decode("not base64!"), None);
    }
}
