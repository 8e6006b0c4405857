//! Presigned log URLs: `<path>?expires=<unix seconds>&signature=<hex>` where the signature is
//! HMAC-SHA256, keyed by a 32-byte secret in `DATA_DIR/log-url-key` (base64, mode 0600,
//! written atomically on first start), over `slipway-log-url-v1\n<path>\n<expires>`. A URL
//! is good until it expires; any change to its path, expiry or signature makes it a 403.

use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::Sha256;

use crate::data_dir::{restrict_to_owner, write_secret_line};
use crate::error::PlatformError;
use slipway_image::hex;

use crate::data_dir::LOG_URL_KEY_FILE as KEY_FILE;
/// How long a presigned URL is good for.
pub const URL_TTL: Duration = Duration::from_secs(15 * 60);
/// Prefix of the signed message, so this key signs nothing else by accident.
const DOMAIN: &str = "slipway-log-url-v1";

/// Signs and checks log URLs.
#[derive(Clone)]
pub struct UrlSigner {
    key: [u8; 32],
}

impl std::fmt::Debug for UrlSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UrlSigner(<redacted>)")
    }
}

impl UrlSigner {
    /// Loads `data_dir/log-url-key`, creating it on first start.
    pub fn load_or_create(data_dir: &Path) -> Result<Self, PlatformError> {
        let path = data_dir.join(KEY_FILE);
        if !path.exists() {
            let mut key = [0u8; 32];
            getrandom::fill(&mut key)
                .map_err(|e| PlatformError::Config(format!("no OS randomness: {e}")))?;
            write_secret_line(&path, &STANDARD.encode(key))?;
            return Ok(Self { key });
        }
        let text = std::fs::read_to_string(&path)?;
        let bytes = STANDARD
            .decode(text.trim())
            .map_err(|_| PlatformError::Config(format!("{} is not base64", path.display())))?;
        let key: [u8; 32] = bytes.try_into().map_err(|_| {
            PlatformError::Config(format!("{} does not hold a 32-byte key", path.display()))
        })?;
        restrict_to_owner(&path)?;
        Ok(Self { key })
    }

    /// A signer over a given key (tests).
    pub fn from_key(key: [u8; 32]) -> Self {
        Self { key }
    }

    /// The MAC over a URL (an HMAC accepts keys of any length, so `None` never happens in
    /// practice; it only keeps this free of panics).
    fn mac(&self, path: &str, expires: i64) -> Option<Hmac<Sha256>> {
        let mut mac = <Hmac<Sha256>>::new_from_slice(&self.key).ok()?;
        mac.update(format!("{DOMAIN}\n{path}\n{expires}").as_bytes());
        Some(mac)
    }

    /// The hex signature of `path` valid until `expires` (unix seconds).
    pub fn sign(&self, path: &str, expires: i64) -> String {
        self.mac(path, expires)
            .map(|m| hex(&m.finalize().into_bytes()))
            .unwrap_or_default()
    }

    /// `path?expires=…&signature=…`, good for [`URL_TTL`] from `now` (unix seconds).
    pub fn presign(&self, path: &str, now: i64) -> String {
        let expires = now + i64::try_from(URL_TTL.as_secs()).unwrap_or(900);
        format!(
            "{path}?expires={expires}&signature={}",
            self.sign(path, expires)
        )
    }

    /// Whether `signature` signs `path` and `expires`, and `expires` is not past `now`. The
    /// comparison is constant-time.
    pub fn verify(&self, path: &str, expires: i64, signature: &str, now: i64) -> bool {
        if expires < now || signature.len() != 64 {
            return false;
        }
        let Some(raw) = unhex(signature) else {
            return false;
        };
        self.mac(path, expires)
            .is_some_and(|m| m.verify_slice(&raw).is_ok())
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_bind_path_and_expiry_and_expire() {
        let signer = UrlSigner::from_key([7; 32]);
        let sig = signer.sign("/v1/logs/build/x", 1000);
        assert!(signer.verify("/v1/logs/build/x", 1000, &sig, 999));
        assert!(signer.verify("/v1/logs/build/x", 1000, &sig, 1000));
        assert!(
            !signer.verify("/v1/logs/build/x", 1000, &sig, 1001),
            "expired"
        );
        assert!(
            !signer.verify("/v1/logs/build/y", 1000, &sig, 0),
            "other path"
        );
        assert!(
            !signer.verify("/v1/logs/build/x", 1001, &sig, 0),
            "other expiry"
        );
        let mut bad = sig.clone();
        bad.replace_range(0..1, if sig.starts_with('0') { "1" } else { "0" });
        assert!(!signer.verify("/v1/logs/build/x", 1000, &bad, 0));
        assert!(!signer.verify("/v1/logs/build/x", 1000, "zz", 0));
        assert!(!UrlSigner::from_key([8; 32]).verify("/v1/logs/build/x", 1000, &sig, 0));
        let url = signer.presign("/p", 100);
        assert!(url.starts_with("/p?expires=1000&signature="), "{url}");
    }

    #[test]
    fn the_key_file_is_made_once_with_mode_0600() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let a = UrlSigner::load_or_create(dir.path()).unwrap();
        let b = UrlSigner::load_or_create(dir.path()).unwrap();
        assert_eq!(a.sign("/p", 1), b.sign("/p", 1));
        let mode = std::fs::metadata(dir.path().join(KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
