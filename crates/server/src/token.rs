//! Bearer tokens: generated from 32 bytes of operating-system randomness behind a prefix that
//! names the service (so a leaked one is recognisable in a secret scanner), stored only as
//! their SHA-256 (a leaked database leaks no working token), and redacted in `Debug` so one
//! cannot reach a log by accident.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// A bearer token in clear.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A fresh random token: `prefix` and 32 random bytes, base64url-encoded (43 characters).
    pub fn generate(prefix: &str) -> Result<Self, getrandom::Error> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)?;
        Ok(Self(format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))))
    }

    /// Wraps a token read from a header or a file.
    pub fn from_string(raw: String) -> Self {
        Self(raw)
    }

    /// The token in clear (to hand to its user once, or to send).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// What a database stores: [`hash_token`] of the token.
    pub fn hash(&self) -> String {
        hash_token(&self.0)
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// Hex SHA-256 of a token. A token carries 256 random bits, so a plain hash (no salt, no
/// stretching) cannot be reversed by guessing.
pub fn hash_token(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_prefixed_and_distinct() {
        let a = Token::generate("slw_").unwrap();
        let b = Token::generate("slw_").unwrap();
        assert_ne!(a, b);
        assert!(a.expose().starts_with("slw_"));
        assert_eq!(a.expose().len(), 4 + 43);
    }

    #[test]
    fn hash_is_sha256_hex_and_debug_is_redacted() {
        let t = Token::from_string("abc".into());
        assert_eq!(
            t.hash(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(format!("{t:?}"), "Token(<redacted>)");
    }
}
