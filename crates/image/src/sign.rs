//! The platform's image signing key and image signatures. The key is an ed25519 key made on
//! first start and kept in `DATA_DIR/signing-key` (its 32-byte seed in base64, mode 0600,
//! written atomically); its public half is served at `GET /v1/signing-key`. Every stored
//! image's manifest digest is signed; the signature is `DATA_DIR/images/signatures/<hex>`.
//! [`verify_image`] checks the signature and every blob's content before anything runs.

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::digest::{Digest, ImageError, hex};
use crate::document::{Manifest, to_json};
use crate::store::ImageStore;
use slipway_server::file::{Mode, restrict_to_owner};

/// Name of the signing key file inside the data directory.
pub const SIGNING_KEY_FILE: &str = "signing-key";
/// The algorithm name written in signatures and served with the public key.
pub const ALGORITHM: &str = "ed25519";
/// What is signed is this prefix followed by the manifest digest (`sha256:…`), so a
/// signature made for images can never be mistaken for one over anything else.
pub const SIGNED_PREFIX: &str = "slipway-image-signature-v1:";

/// The platform's signing key.
#[derive(Clone)]
pub struct PlatformKey {
    key: SigningKey,
}

impl std::fmt::Debug for PlatformKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlatformKey(key_id={})", self.key_id())
    }
}

/// A stored signature: `images/signatures/<hex>`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SignatureRecord {
    /// The manifest digest signed.
    pub digest: String,
    /// Always `ed25519`.
    pub algorithm: String,
    /// [`PlatformKey::key_id`] of the signer.
    pub key_id: String,
    /// The 64-byte signature in base64.
    pub signature: String,
}

impl PlatformKey {
    /// Loads `data_dir/signing-key`, creating it (mode 0600, atomically) on first start.
    pub fn load_or_create(data_dir: &Path) -> Result<Self, ImageError> {
        let path = data_dir.join(SIGNING_KEY_FILE);
        match Self::load(data_dir) {
            Err(ImageError::Key(_)) if !path.exists() => {
                let mut seed = [0u8; 32];
                getrandom::fill(&mut seed)
                    .map_err(|e| ImageError::Key(format!("no OS randomness: {e}")))?;
                slipway_server::file::write(
                    &path,
                    format!("{}\n", STANDARD.encode(seed)).as_bytes(),
                    Mode::Secret,
                )
                .map_err(|e| ImageError::Key(format!("cannot write {}: {e}", path.display())))?;
                tracing::info!(path = %path.display(), "created the image signing key");
                Ok(Self {
                    key: SigningKey::from_bytes(&seed),
                })
            }
            other => other,
        }
    }

    /// Loads `data_dir/signing-key`; an error when it is missing or malformed.
    pub fn load(data_dir: &Path) -> Result<Self, ImageError> {
        let path = data_dir.join(SIGNING_KEY_FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| ImageError::Key(format!("cannot read {}: {e}", path.display())))?;
        let bytes = STANDARD
            .decode(text.trim())
            .map_err(|_| ImageError::Key(format!("{} is not base64", path.display())))?;
        let seed: [u8; 32] = bytes.try_into().map_err(|_| {
            ImageError::Key(format!("{} does not hold a 32-byte key", path.display()))
        })?;
        restrict_to_owner(&path).map_err(|e| ImageError::Key(e.to_string()))?;
        Ok(Self {
            key: SigningKey::from_bytes(&seed),
        })
    }

    /// The public key.
    pub fn verifying_key(&self) -> VerifyingKey {
        self.key.verifying_key()
    }

    /// The public key in base64 (32 bytes).
    pub fn public_key_base64(&self) -> String {
        STANDARD.encode(self.verifying_key().to_bytes())
    }

    /// A short name for the key: the first 16 hex digits of the SHA-256 of the public key.
    pub fn key_id(&self) -> String {
        hex(&Sha256::digest(self.verifying_key().to_bytes()))[..16].to_owned()
    }

    /// Signs manifest `digest` and stores the signature next to the store's blobs.
    pub fn sign_image(&self, store: &ImageStore, digest: &Digest) -> Result<(), ImageError> {
        let signature = self.key.sign(signed_message(digest).as_bytes());
        let record = SignatureRecord {
            digest: digest.to_string(),
            algorithm: ALGORITHM.to_owned(),
            key_id: self.key_id(),
            signature: STANDARD.encode(signature.to_bytes()),
        };
        let path = store.signature_path(digest);
        let mut temp = store.temp_file()?;
        std::io::Write::write_all(&mut temp, &to_json(&record)?)?;
        temp.as_file().sync_all()?;
        temp.persist(&path).map_err(|e| ImageError::Io(e.error))?;
        Ok(())
    }

    /// Checks the stored signature of manifest `digest` against this key.
    pub fn check_signature(&self, store: &ImageStore, digest: &Digest) -> Result<(), ImageError> {
        let bytes = match std::fs::read(store.signature_path(digest)) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ImageError::MissingSignature(digest.clone()));
            }
            Err(e) => return Err(e.into()),
        };
        let bad = || ImageError::BadSignature(digest.clone());
        let record: SignatureRecord = serde_json::from_slice(&bytes).map_err(|_| bad())?;
        if record.digest != digest.as_str() || record.algorithm != ALGORITHM {
            return Err(bad());
        }
        let raw = STANDARD.decode(&record.signature).map_err(|_| bad())?;
        let raw: [u8; 64] = raw.try_into().map_err(|_| bad())?;
        self.verifying_key()
            .verify_strict(
                signed_message(digest).as_bytes(),
                &Signature::from_bytes(&raw),
            )
            .map_err(|_| bad())
    }
}

fn signed_message(digest: &Digest) -> String {
    format!("{SIGNED_PREFIX}{digest}")
}

/// An image that passed [`verify_image`].
#[derive(Debug, Clone)]
pub struct VerifiedImage {
    /// The manifest digest.
    pub digest: Digest,
    /// The manifest.
    pub manifest: Manifest,
    /// The image config document.
    pub config: serde_json::Value,
}

/// Verifies image `digest` (`sha256:…`) in `data_dir`'s store before it may run: the
/// platform signature over the digest must exist and verify with the platform key, the
/// manifest must hash to the digest, and the config and every layer must be present with the
/// size and digest the manifest records. Any missing or altered piece is an error.
pub fn verify_image(data_dir: &Path, digest: &str) -> Result<VerifiedImage, ImageError> {
    let digest = Digest::parse(digest)?;
    let key = PlatformKey::load(data_dir)?;
    let store = ImageStore::open(data_dir)?;
    key.check_signature(&store, &digest)?;
    let manifest_bytes = store.read_blob(&digest)?;
    let actual = Digest::of(&manifest_bytes);
    if actual != digest {
        return Err(ImageError::DigestMismatch {
            expected: digest,
            actual,
        });
    }
    let manifest = Manifest::parse(&manifest_bytes)?;
    let config_digest = Digest::parse(&manifest.config.digest)?;
    store.check_blob(&config_digest, Some(manifest.config.size))?;
    for layer in &manifest.layers {
        store.check_blob(&Digest::parse(&layer.digest)?, Some(layer.size))?;
    }
    let config = serde_json::from_slice(&store.read_blob(&config_digest)?)
        .map_err(|e| ImageError::Document(format!("config: {e}")))?;
    Ok(VerifiedImage {
        digest,
        manifest,
        config,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::oci::{Layer, RunConfig, pack_layer, write_image};
    use super::*;

    fn image(data: &Path) -> (ImageStore, Digest, Layer) {
        let store = ImageStore::open(data).unwrap();
        let tree = tempfile::tempdir().unwrap();
        std::fs::write(tree.path().join("main.py"), "print('hi')").unwrap();
        let layer = pack_layer(&store, tree.path()).unwrap();
        let run = RunConfig {
            cmd: vec!["sh".into(), "-c".into(), "python3 main.py".into()],
            working_dir: "/app".into(),
            env: vec!["PORT=8000".into()],
            port: Some(8000),
            labels: BTreeMap::new(),
        };
        let manifest = write_image(&store, std::slice::from_ref(&layer), &run, "a/b").unwrap();
        (store, Digest::parse(&manifest.digest).unwrap(), layer)
    }

    #[test]
    fn key_is_made_once_with_mode_0600_and_reused() {
        let data = tempfile::tempdir().unwrap();
        let first = PlatformKey::load_or_create(data.path()).unwrap();
        let again = PlatformKey::load_or_create(data.path()).unwrap();
        assert_eq!(first.public_key_base64(), again.public_key_base64());
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(data.path().join(SIGNING_KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(!format!("{first:?}").contains(&STANDARD.encode(first.key.to_bytes())));
    }

    #[test]
    fn signed_images_verify_and_tampering_or_missing_signatures_fail() {
        let data = tempfile::tempdir().unwrap();
        let key = PlatformKey::load_or_create(data.path()).unwrap();
        let (store, digest, layer) = image(data.path());
        assert!(matches!(
            verify_image(data.path(), digest.as_str()),
            Err(ImageError::MissingSignature(_))
        ));
        key.sign_image(&store, &digest).unwrap();
        let ok = verify_image(data.path(), digest.as_str()).unwrap();
        assert_eq!(ok.config["config"]["Env"][0], "PORT=8000");

        // A signature by another key does not verify.
        let other = tempfile::tempdir().unwrap();
        let stranger = PlatformKey::load_or_create(other.path()).unwrap();
        stranger.sign_image(&store, &digest).unwrap();
        assert!(matches!(
            verify_image(data.path(), digest.as_str()),
            Err(ImageError::BadSignature(_))
        ));
        key.sign_image(&store, &digest).unwrap();

        // A tampered layer blob fails verification.
        let layer_path = store.blob_path(&Digest::parse(&layer.descriptor.digest).unwrap());
        let mut bytes = std::fs::read(&layer_path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(&layer_path, bytes).unwrap();
        assert!(matches!(
            verify_image(data.path(), digest.as_str()),
            Err(ImageError::DigestMismatch { .. })
        ));
        assert!(verify_image(data.path(), "sha256:nope").is_err());
    }
}
