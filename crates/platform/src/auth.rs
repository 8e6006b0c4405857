//! Bearer tokens and the caller they identify. A token is 32 random bytes from the operating
//! system, shown once; the database keeps only its SHA-256, so a leaked database file does not
//! leak working tokens. Tokens never reach a log.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::db::{Tx, now_millis};

/// Prefix of every platform token, so a leaked one is recognisable in a secret scanner.
pub const TOKEN_PREFIX: &str = "slw_";

/// A bearer token in clear. Its `Debug` output is redacted so it cannot end up in a log by
/// accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A fresh random token: the prefix and 32 bytes of OS randomness, base64url-encoded.
    pub fn generate() -> Result<Self, getrandom::Error> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)?;
        Ok(Self(format!(
            "{TOKEN_PREFIX}{}",
            URL_SAFE_NO_PAD.encode(bytes)
        )))
    }

    /// Wraps a token read from a header or a file.
    pub fn from_string(raw: String) -> Self {
        Self(raw)
    }

    /// The token in clear (to hand to the user once).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// What the database stores: the hex SHA-256 of the token.
    pub fn hash(&self) -> String {
        hash_token(&self.0)
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// Hex SHA-256 of a token.
pub fn hash_token(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The authenticated user of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The user's UUID.
    pub user_id: String,
    /// The account the user belongs to; nothing of another account is ever visible.
    pub account_id: String,
}

/// The user a token belongs to, or `None` when the token is unknown.
pub async fn authenticate(tx: &mut Tx, token: &Token) -> Result<Option<Caller>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT u.id, u.account_id FROM api_token t JOIN account_user u ON u.id = t.user_id \
         WHERE t.token_hash = $1",
    )
    .bind(token.hash())
    .fetch_optional(&mut **tx)
    .await?;
    row.map(|r| {
        Ok(Caller {
            user_id: r.try_get(0)?,
            account_id: r.try_get(1)?,
        })
    })
    .transpose()
}

/// Stores the hash of `token` as a credential of `user_id`.
pub async fn store_token(tx: &mut Tx, user_id: &str, token: &Token) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO api_token (token_hash, user_id, created_at) VALUES ($1, $2, $3)")
        .bind(token.hash())
        .bind(user_id.to_owned())
        .bind(now_millis())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_distinct() {
        let a = Token::generate().unwrap();
        let b = Token::generate().unwrap();
        assert_ne!(a, b);
        assert!(a.expose().starts_with(TOKEN_PREFIX));
        // 32 bytes base64url without padding is 43 characters.
        assert_eq!(a.expose().len(), TOKEN_PREFIX.len() + 43);
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
