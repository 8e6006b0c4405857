//! The secrets vault: secrets in three scopes (`user`, `app`, `shared`), versioned, sealed
//! with XChaCha20-Poly1305 (the RustCrypto `chacha20poly1305` crate) under a master key
//! kept outside the database ([`keys`]). The database holds paths, version numbers, times
//! and ciphertext; the server's logs hold none of the values (nothing here logs a value,
//! and request logging never logs bodies or query strings).
//!
//! [`Vault`] is what the HTTP handlers and the deployer share: sealing and opening a
//! version's `{"data", "metadata"}` and the environment an app's services receive.
//! [`rotate_key`] re-seals every version under a fresh master key while the server is
//! stopped. A running server holds `DATA_DIR/platform.lock` (taken before anything else
//! at start), so neither a second server nor a rotation can run on the same data underneath
//! it.

pub mod access;
pub mod audit;
pub mod env;
pub mod keys;
pub mod owned;
pub mod payload;

/// The secret-path rule (shared with the toolkit, which checks before any request).
pub use slipway_devfile::secret_path as path;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::db::Db;
use crate::error::PlatformError;
use crate::model::Sealed;
use crate::store::secrets;
use keys::{MasterKeys, SealError};

/// The sealed content of a version.
#[derive(Debug, Clone, PartialEq)]
pub struct Content {
    /// The key–value pairs.
    pub data: Map<String, Value>,
    /// Optional key–value pairs about them.
    pub metadata: Map<String, Value>,
}

/// The master keys of a running server. Cheap to clone.
#[derive(Clone)]
pub struct Vault {
    keys: Arc<MasterKeys>,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vault").field("keys", &self.keys).finish()
    }
}

/// Where the key file is: `key_file` when the operator gave one, else `DATA_DIR/vault.key`.
pub fn key_path(data_dir: &Path, key_file: Option<&Path>) -> PathBuf {
    key_file.map_or_else(
        || data_dir.join(crate::data_dir::VAULT_KEY_FILE),
        Path::to_path_buf,
    )
}

fn aad(secret_id: &str, version: i64) -> Vec<u8> {
    format!("slipway-secret-v1\n{secret_id}\n{version}").into_bytes()
}

/// A notification channel's settings are bound to its id, as a version to its secret.
fn channel_aad(channel_id: &str) -> Vec<u8> {
    format!("slipway-channel-v1\n{channel_id}").into_bytes()
}

impl Vault {
    /// Opens the key file: `key_file` as the operator gave it (it must exist; a typo must not
    /// quietly start a new key), else `DATA_DIR/vault.key`, created on first start.
    pub fn open(data_dir: &Path, key_file: Option<&Path>) -> Result<Self, PlatformError> {
        let keys = match key_file {
            Some(path) => MasterKeys::load_given(path)?,
            None => MasterKeys::load_or_create(&key_path(data_dir, None))?,
        };
        Ok(Self {
            keys: Arc::new(keys),
        })
    }

    /// Checks that the key file holds every key the database's secrets were sealed with, so
    /// a wrong `--vault-key-file` stops the start instead of failing every read later.
    pub async fn check_against(&self, db: &Db) -> Result<(), PlatformError> {
        let mut tx = db.begin_read().await?;
        let mut used = secrets::key_ids_in_use(&mut tx).await?;
        used.extend(crate::store::notifications::key_ids_in_use(&mut tx).await?);
        used.extend(crate::store::domains::key_ids_in_use(&mut tx).await?);
        used.extend(crate::store::git::key_ids_in_use(&mut tx).await?);
        tx.commit().await?;
        let held = self.keys.ids();
        let missing: Vec<&String> = used.iter().filter(|id| !held.contains(id)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(PlatformError::Config(format!(
            "the vault key file {} lacks the key(s) {} that stored secrets were sealed with; \
             give the right --vault-key-file",
            self.keys.path().display(),
            missing
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }

    /// Seals the content of version `version` of secret `secret_id`.
    pub fn seal(
        &self,
        secret_id: &str,
        version: i64,
        content: &Content,
    ) -> Result<Sealed, SealError> {
        let plain = serde_json::to_vec(&serde_json::json!({
            "data": content.data,
            "metadata": content.metadata,
        }))
        .map_err(|e| SealError::Seal(e.to_string()))?;
        self.keys.seal(&aad(secret_id, version), &plain)
    }

    /// Opens what [`Vault::seal`] sealed for that secret and version.
    pub fn open_content(
        &self,
        secret_id: &str,
        version: i64,
        sealed: &Sealed,
    ) -> Result<Content, SealError> {
        let plain = self.keys.open(&aad(secret_id, version), sealed)?;
        let value: Value = serde_json::from_slice(&plain).map_err(|_| SealError::Corrupt)?;
        let part = |name: &str| match value.get(name) {
            Some(Value::Object(m)) => Ok(m.clone()),
            _ => Err(SealError::Corrupt),
        };
        Ok(Content {
            data: part("data")?,
            metadata: part("metadata")?,
        })
    }
}

impl Vault {
    /// Seals a notification channel's settings (its webhook secret, its SMTP password).
    pub fn seal_channel(&self, channel_id: &str, settings: &[u8]) -> Result<Sealed, SealError> {
        self.keys.seal(&channel_aad(channel_id), settings)
    }

    /// Opens what [`Vault::seal_channel`] sealed for that channel.
    pub fn open_channel(&self, channel_id: &str, sealed: &Sealed) -> Result<Vec<u8>, SealError> {
        self.keys.open(&channel_aad(channel_id), sealed)
    }

    /// Seals a TLS private key (a custom domain's, the ACME account's) stored as `tls_secret`
    /// `id`.
    pub fn seal_tls(&self, id: &str, key: &[u8]) -> Result<Sealed, SealError> {
        self.keys.seal(&tls_aad(id), key)
    }

    /// Seals an app's git credential and webhook secret (one JSON document).
    pub fn seal_git(&self, app_id: &str, plain: &[u8]) -> Result<Sealed, SealError> {
        self.keys.seal(&git_aad(app_id), plain)
    }

    /// Opens what [`Vault::seal_git`] sealed for that app.
    pub fn open_git(&self, app_id: &str, sealed: &Sealed) -> Result<Vec<u8>, SealError> {
        self.keys.open(&git_aad(app_id), sealed)
    }

    /// Opens what [`Vault::seal_tls`] sealed under that id.
    pub fn open_tls(&self, id: &str, sealed: &Sealed) -> Result<Vec<u8>, SealError> {
        self.keys.open(&tls_aad(id), sealed)
    }
}

/// 32 bytes of the system's random source in hex after `prefix`: a webhook secret.
pub fn random_secret(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the system's random source works");
    format!(
        "{prefix}{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// What a git source's credential and webhook secret are sealed to: the app, so sealed
/// values copied to another app's row do not open.
fn git_aad(app_id: &str) -> Vec<u8> {
    format!("git/{app_id}").into_bytes()
}

/// What a TLS key is sealed to: its `tls_secret` id, so a key copied to another row does not
/// open.
fn tls_aad(id: &str) -> Vec<u8> {
    format!("tls/{id}").into_bytes()
}

/// What a rotation did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rotation {
    /// The new active key's id.
    pub key_id: String,
    /// How many versions were re-sealed.
    pub versions: usize,
    /// How many notification channels' settings were re-sealed.
    pub channels: usize,
}

/// Re-seals every secret version (and every notification channel's settings) under a fresh master key: the new key is added to the key
/// file first, every version is re-sealed in one transaction, and only after that commits are
/// the old keys dropped from the file. A crash at any point leaves every version openable.
/// Refuses to run while a server holds the key file.
pub async fn rotate_key(
    db: &Db,
    data_dir: &Path,
    key_path: &Path,
) -> Result<Rotation, PlatformError> {
    let _lock = crate::data_dir::lock(data_dir)?;
    let mut keys = MasterKeys::load_given(key_path)?;
    let key_id = keys.add_active_key()?;
    let mut tx = db.begin_write().await?;
    let reseal = |aad: &[u8], sealed: &Sealed, what: &dyn Fn() -> String| {
        keys.open(aad, sealed)
            .and_then(|plain| keys.seal(aad, &plain))
            .map_err(|e| PlatformError::Config(format!("cannot re-seal {}: {e}", what())))
    };
    let all = secrets::all_sealed(&mut tx).await?;
    for (secret_id, version, sealed) in &all {
        let again = reseal(&aad(secret_id, *version), sealed, &|| {
            format!("version {version} of secret {secret_id}")
        })?;
        secrets::reseal(&mut tx, secret_id, *version, &again).await?;
    }
    let channels = crate::store::notifications::all_sealed(&mut tx).await?;
    for (channel_id, sealed) in &channels {
        let again = reseal(&channel_aad(channel_id), sealed, &|| {
            format!("notification channel {channel_id}")
        })?;
        crate::store::notifications::reseal(&mut tx, channel_id, &again).await?;
    }
    for (id, sealed) in &crate::store::domains::all_sealed(&mut tx).await? {
        let again = reseal(&tls_aad(id), sealed, &|| format!("TLS key {id}"))?;
        crate::store::domains::reseal(&mut tx, id, &again).await?;
    }
    for (app_id, sealed) in &crate::store::git::all_sealed(&mut tx).await? {
        let again = reseal(&git_aad(app_id), sealed, &|| {
            format!("the git credential of app {app_id}")
        })?;
        crate::store::git::reseal(&mut tx, app_id, &again).await?;
    }
    tx.commit().await?;
    keys.retire_inactive_keys()?;
    tracing::info!(key_id, versions = all.len(), "vault master key rotated");
    Ok(Rotation {
        key_id,
        versions: all.len(),
        channels: channels.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_of_the_data_dir_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let lock = crate::data_dir::lock(dir.path()).unwrap();
        let err = crate::data_dir::lock(dir.path()).unwrap_err().to_string();
        assert!(err.contains("in use"), "{err}");
        drop(lock);
        assert!(
            crate::data_dir::lock(dir.path()).is_ok(),
            "the lock goes with its holder"
        );
    }

    #[test]
    fn a_given_key_file_must_exist_and_seals_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("typo.key");
        let err = Vault::open(dir.path(), Some(&missing))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("typo.key") && err.contains("does not exist"),
            "{err}"
        );
        assert!(!missing.exists(), "no key is made up for a given path");
        let vault = Vault::open(dir.path(), None).unwrap();
        let content = Content {
            data: serde_json::from_str(r#"{"k":"v"}"#).unwrap(),
            metadata: Map::new(),
        };
        let sealed = vault.seal("s", 3, &content).unwrap();
        assert_eq!(vault.open_content("s", 3, &sealed).unwrap(), content);
        assert!(vault.open_content("s", 4, &sealed).is_err());
        let again = Vault::open(dir.path(), Some(&key_path(dir.path(), None))).unwrap();
        assert_eq!(again.open_content("s", 3, &sealed).unwrap(), content);
    }
}
