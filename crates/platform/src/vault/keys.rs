//! The vault's master keys: a small JSON file kept outside the database (by default
//! `DATA_DIR/vault.key`, mode 0600, or wherever `--vault-key-file` says), holding one or more
//! 32-byte XChaCha20-Poly1305 keys by id and which one seals new values. More than one key is
//! present only while a rotation runs, so a crash half-way never strands a ciphertext
//! without its key.
//!
//! Sealing binds each ciphertext to where it is stored (the associated data names the secret
//! and version), so a ciphertext copied onto another row fails to open instead of
//! revealing a value under the wrong path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use slipway_server::seal;

use crate::data_dir::{restrict_to_owner, write_secret_line};
use crate::error::PlatformError;
use crate::model::Sealed;

/// The key file's JSON: `{"active": id, "keys": {id: base64 key}}`.
#[derive(Serialize, Deserialize)]
struct KeyFile {
    active: String,
    keys: BTreeMap<String, String>,
}

/// The master keys in memory. `Debug` is redacted.
pub struct MasterKeys {
    path: PathBuf,
    active: String,
    keys: BTreeMap<String, [u8; 32]>,
}

impl std::fmt::Debug for MasterKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MasterKeys")
            .field("path", &self.path)
            .field("active", &self.active)
            .field("keys", &self.keys.len())
            .finish()
    }
}

/// Why a value could not be sealed or opened.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    /// The row names a key the key file does not hold.
    #[error("the vault key {0:?} is not in the key file")]
    UnknownKey(String),
    /// The ciphertext does not open under its key and place (tampered, or moved).
    #[error("a stored secret failed authentication")]
    Corrupt,
    /// No randomness or a cipher fault.
    #[error("cannot seal a secret: {0}")]
    Seal(String),
}

fn config_error(path: &Path, what: &str) -> PlatformError {
    PlatformError::Config(format!("vault key file {}: {what}", path.display()))
}

fn random_key() -> Result<[u8; 32], PlatformError> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key)
        .map_err(|e| PlatformError::Config(format!("no OS randomness: {e}")))?;
    Ok(key)
}

fn new_key_id() -> String {
    format!("k{}", &uuid::Uuid::new_v4().simple().to_string()[..12])
}

impl MasterKeys {
    /// Loads the key file at `path`, creating it with one fresh key when it does not exist
    /// (mode 0600, written atomically). A file that is not 0600 is narrowed to it.
    pub fn load_or_create(path: &Path) -> Result<Self, PlatformError> {
        if !path.exists() {
            let id = new_key_id();
            let keys = BTreeMap::from([(id.clone(), random_key()?)]);
            let made = Self {
                path: path.to_path_buf(),
                active: id,
                keys,
            };
            made.save()?;
            tracing::info!(path = %path.display(), "vault master key created");
            return Ok(made);
        }
        restrict_to_owner(path)?;
        Self::read(path)
    }

    fn read(path: &Path) -> Result<Self, PlatformError> {
        let text = std::fs::read_to_string(path)?;
        let file: KeyFile = serde_json::from_str(&text)
            .map_err(|_| config_error(path, "is not a Slipway vault key file"))?;
        let mut keys = BTreeMap::new();
        for (id, encoded) in file.keys {
            let bytes = STANDARD
                .decode(encoded.trim())
                .map_err(|_| config_error(path, &format!("key {id:?} is not base64")))?;
            let key: [u8; 32] = bytes
                .try_into()
                .map_err(|_| config_error(path, &format!("key {id:?} is not 32 bytes")))?;
            keys.insert(id, key);
        }
        if !keys.contains_key(&file.active) {
            return Err(config_error(path, "the active key is missing"));
        }
        Ok(Self {
            path: path.to_path_buf(),
            active: file.active,
            keys,
        })
    }

    /// Loads a key file the operator named: it must exist (a typo must not quietly start a
    /// fresh key under which nothing stored opens). Its mode is the operator's business (it
    /// may sit on a read-only mount); a file others can read is warned about.
    pub fn load_given(path: &Path) -> Result<Self, PlatformError> {
        if !path.exists() {
            return Err(config_error(
                path,
                "does not exist; give an existing key file, or leave --vault-key-file out to use \
                 DATA_DIR/vault.key (created on first start)",
            ));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                tracing::warn!(path = %path.display(), mode = format!("{mode:o}"), "the vault key file is readable by other users");
            }
        }
        Self::read(path)
    }

    /// The key file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the keys to the key file (0600, temporary file + rename).
    fn save(&self) -> Result<(), PlatformError> {
        let file = KeyFile {
            active: self.active.clone(),
            keys: self
                .keys
                .iter()
                .map(|(id, k)| (id.clone(), STANDARD.encode(k)))
                .collect(),
        };
        let text = serde_json::to_string_pretty(&file)
            .map_err(|e| PlatformError::Config(format!("cannot encode the key file: {e}")))?;
        Ok(write_secret_line(&self.path, &text)?)
    }

    /// The id of the key new values are sealed with.
    pub fn active_id(&self) -> &str {
        &self.active
    }

    /// The ids of every key held.
    pub fn ids(&self) -> Vec<String> {
        self.keys.keys().cloned().collect()
    }

    /// Adds a fresh key, makes it active and saves the file (keeping the old keys, which
    /// still open what they sealed). Returns the new key's id.
    pub fn add_active_key(&mut self) -> Result<String, PlatformError> {
        let id = new_key_id();
        self.keys.insert(id.clone(), random_key()?);
        self.active = id.clone();
        self.save()?;
        Ok(id)
    }

    /// Drops every key but the active one and saves the file. Only call this once nothing
    /// sealed under the other keys is left.
    pub fn retire_inactive_keys(&mut self) -> Result<(), PlatformError> {
        let active = self.active.clone();
        self.keys.retain(|id, _| *id == active);
        self.save()
    }

    fn key(&self, id: &str) -> Result<&[u8; 32], SealError> {
        self.keys
            .get(id)
            .ok_or_else(|| SealError::UnknownKey(id.to_owned()))
    }

    /// Seals `plaintext` under the active key, bound to `aad`.
    pub fn seal(&self, aad: &[u8], plaintext: &[u8]) -> Result<Sealed, SealError> {
        let sealed = seal::seal(self.key(&self.active)?, aad, plaintext)
            .map_err(|e| SealError::Seal(e.to_string()))?;
        Ok(Sealed {
            key_id: self.active.clone(),
            nonce: STANDARD.encode(sealed.nonce),
            ciphertext: STANDARD.encode(sealed.ciphertext),
        })
    }

    /// Opens a sealed value stored under `aad`.
    pub fn open(&self, aad: &[u8], sealed: &Sealed) -> Result<Vec<u8>, SealError> {
        let key = self.key(&sealed.key_id)?;
        let nonce = STANDARD
            .decode(&sealed.nonce)
            .map_err(|_| SealError::Corrupt)?;
        let ciphertext = STANDARD
            .decode(&sealed.ciphertext)
            .map_err(|_| SealError::Corrupt)?;
        seal::open(key, aad, &nonce, &ciphertext).ok_or(SealError::Corrupt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data_dir::VAULT_KEY_FILE as KEY_FILE;

    #[test]
    fn sealed_values_open_only_in_their_place_and_survive_a_reload() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KEY_FILE);
        let keys = MasterKeys::load_or_create(&path).unwrap();
        let sealed = keys.seal(b"secret-1/v1", b"hunter2").unwrap();
        assert!(!sealed.ciphertext.contains("hunter2"));
        assert_eq!(keys.open(b"secret-1/v1", &sealed).unwrap(), b"hunter2");
        assert!(matches!(
            keys.open(b"secret-2/v1", &sealed),
            Err(SealError::Corrupt)
        ));
        let again = keys.seal(b"secret-1/v1", b"hunter2").unwrap();
        assert_ne!(again.nonce, sealed.nonce, "every seal has a fresh nonce");

        let reloaded = MasterKeys::load_or_create(&path).unwrap();
        assert_eq!(reloaded.open(b"secret-1/v1", &sealed).unwrap(), b"hunter2");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }

    #[test]
    fn rotation_keeps_old_keys_until_retired() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KEY_FILE);
        let mut keys = MasterKeys::load_or_create(&path).unwrap();
        let old = keys.seal(b"a", b"v").unwrap();
        let new_id = keys.add_active_key().unwrap();
        assert_ne!(old.key_id, new_id);
        let reloaded = MasterKeys::load_or_create(&path).unwrap();
        assert_eq!(reloaded.open(b"a", &old).unwrap(), b"v");
        assert_eq!(reloaded.active_id(), new_id);
        keys.retire_inactive_keys().unwrap();
        let reloaded = MasterKeys::load_or_create(&path).unwrap();
        assert_eq!(reloaded.ids(), vec![new_id]);
        assert!(matches!(
            reloaded.open(b"a", &old),
            Err(SealError::UnknownKey(_))
        ));
    }

    #[test]
    fn a_broken_key_file_is_refused_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KEY_FILE);
        std::fs::write(&path, "not json").unwrap();
        let err = MasterKeys::load_or_create(&path).unwrap_err().to_string();
        assert!(err.contains("vault.key"), "{err}");
    }
}
