//! The desktop's care form drafts: what was typed into the enrollment form, and into each
//! missing-information request's form, kept so that a crash, a `kill -9` or a closed window
//! loses nothing.
//!
//! They hold patient data, so they are never on disk in plain text: each draft is one file in
//! `DATA_DIR/drafts/` (the directory 0700, the file 0600, written atomically), named for its
//! environment and form ([`Draft`]), sealed with XChaCha20-Poly1305 under a random 256-bit key
//! kept where `slipway login` keeps tokens: the OS keyring, or, where no keyring service runs,
//! a 0600 file in the config directory's `tokens/` (see [`key`]); answers say which, so the
//! window can tell the user. A draft that no longer opens (its key was lost, or the file is
//! damaged) is removed and reported as not restored; it never stops the form from opening.
//! A key that is there but out of reach (a locked keyring, its unlock prompt dismissed) is
//! another matter: the draft is kept, no key is made in its place, and saving fails (and is not
//! tried again for [`KEY_RETRY`], so typing does not raise a prompt on every pause) until the
//! keyring opens. The plain `enrollment-draft.json` of earlier versions is sealed the first time
//! an enrollment draft is read, and deleted.

pub mod key;
mod kind;
mod sealed;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use key::{DraftKey, KeyStore, TokenKeyStore};
pub use kind::{Draft, DraftKind, KindError};

use slipway_platform_client::credentials::TokenStore;

/// Why a draft could not be kept or read.
#[derive(Debug, thiserror::Error)]
pub enum DraftError {
    /// The UI named no form with drafts.
    #[error(transparent)]
    Kind(#[from] KindError),
    /// No key could be made or stored.
    #[error("the drafts' key could not be kept: {0}")]
    Key(String),
    /// The key may be there but cannot be read now (a locked keyring): nothing is sealed with
    /// another.
    #[error(
        "your drafts cannot be saved while the key that encrypts them cannot be read ({0}); unlock the keyring"
    )]
    KeyUnavailable(String),
    /// The draft could not be sealed.
    #[error("the draft could not be sealed: {0}")]
    Seal(String),
    /// A file operation failed.
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        /// What was being done ("write", "read", "remove").
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS's error.
        source: std::io::Error,
    },
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> DraftError {
    let path = path.to_path_buf();
    move |source| DraftError::Io {
        action,
        path,
        source,
    }
}

/// What a sealed draft holds.
#[derive(Serialize, Deserialize)]
struct Envelope {
    /// When it was saved, in milliseconds since the Unix epoch.
    saved_at: u64,
    /// The form's values, in the form's own shape.
    document: Value,
}

/// A draft read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    /// The form's values as they were saved.
    pub document: Value,
    /// When they were saved, in milliseconds since the Unix epoch.
    pub saved_at: u64,
    /// Where the key that opened it is.
    pub key_store: TokenStore,
}

/// What [`Drafts::load`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded {
    /// No draft.
    Nothing,
    /// The draft.
    Restored(Restored),
    /// A draft that did not open (key lost, or damaged): it has been removed.
    NotRestored,
    /// A draft whose key cannot be read now (a locked keyring): kept, to be opened once the
    /// keyring is. Says why.
    KeyUnavailable(String),
}

/// The answer of the load command, for the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadAnswer {
    /// The restored values, or null.
    pub document: Option<Value>,
    /// When they were saved (milliseconds since the Unix epoch), or null.
    pub saved_at: Option<u64>,
    /// Set when a draft was there but could not be restored (and was removed): what to tell.
    pub not_restored: Option<String>,
    /// Set when a draft is there but its key cannot be read now (it is kept): what to tell.
    pub key_unavailable: Option<String>,
    /// Where the drafts' key is (`keyring`, or the file's path), when known.
    pub key_store: Option<String>,
    /// Set when the key is in a file because no keyring service runs: what to tell.
    pub key_notice: Option<String>,
}

/// The answer of the save command, for the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SaveAnswer {
    /// When it was saved (milliseconds since the Unix epoch).
    pub saved_at: u64,
    /// Where the drafts' key is (`keyring`, or the file's path).
    pub key_store: String,
    /// Set when the key is in a file because no keyring service runs: what to tell.
    pub key_notice: Option<String>,
}

/// The sentence for a key kept in a file rather than the keyring.
fn key_notice(store: &TokenStore) -> Option<String> {
    match store {
        TokenStore::Keyring => None,
        TokenStore::File(path) => Some(format!(
            "No keyring service is running here, so the key that encrypts your drafts is kept in {} (readable by you only).",
            path.display()
        )),
    }
}

impl From<Loaded> for LoadAnswer {
    fn from(loaded: Loaded) -> Self {
        let nothing = Self {
            document: None,
            saved_at: None,
            not_restored: None,
            key_unavailable: None,
            key_store: None,
            key_notice: None,
        };
        match loaded {
            Loaded::Nothing => nothing,
            Loaded::NotRestored => Self {
                not_restored: Some(
                    "A saved draft of this form could not be restored (the key it was encrypted \
                     with is no longer here, or the file is damaged); it has been removed."
                        .to_owned(),
                ),
                ..nothing
            },
            Loaded::KeyUnavailable(why) => Self {
                key_unavailable: Some(format!(
                    "A saved draft of this form is kept, but the key that encrypts it cannot be \
                     read now ({why}). Unlock the keyring, then open the form again; what you \
                     type meanwhile is not saved."
                )),
                ..nothing
            },
            Loaded::Restored(r) => Self {
                document: Some(r.document),
                saved_at: Some(r.saved_at),
                not_restored: None,
                key_unavailable: None,
                key_store: Some(r.key_store.describe()),
                key_notice: key_notice(&r.key_store),
            },
        }
    }
}

/// How long after the key store could not be read a save fails without asking it again (each
/// ask may raise the keyring's unlock prompt). Loading a draft always asks.
pub const KEY_RETRY: Duration = Duration::from_secs(60);

/// What is known of the key in this process.
#[derive(Debug)]
enum KeyState {
    /// Not read yet, or there was none.
    Unknown,
    /// Read or made: one per process, so two first saves cannot make two.
    Known(DraftKey, TokenStore),
    /// The store could not be read at this instant, for this reason.
    Unreadable(Instant, String),
}

/// The drafts of one user's desktop: files under `DATA_DIR/drafts`, one key in the key store.
#[derive(Debug)]
pub struct Drafts {
    dir: PathBuf,
    legacy: PathBuf,
    keys: Box<dyn KeyStore>,
    /// Held while the store is asked, so two callers never raise two unlock prompts.
    key: Mutex<KeyState>,
    retry: Duration,
}

fn now_millis() -> u64 {
    millis(SystemTime::now())
}

fn millis(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis()
        .try_into()
        .unwrap_or(u64::MAX)
}

fn remove_if_present(path: &Path) -> Result<(), DraftError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("remove", path)(e)),
        _ => Ok(()),
    }
}

impl Drafts {
    /// The drafts of the desktop whose data directory is `data_dir`, with their key in the
    /// tokens' store. Nothing is read until a draft is.
    pub fn open(data_dir: &Path) -> Self {
        Self::with_key_store(data_dir, Box::new(TokenKeyStore))
    }

    /// The same with the key kept in `keys`.
    pub fn with_key_store(data_dir: &Path, keys: Box<dyn KeyStore>) -> Self {
        Self {
            dir: data_dir.join("drafts"),
            legacy: data_dir.join("enrollment-draft.json"),
            keys,
            key: Mutex::new(KeyState::Unknown),
            retry: KEY_RETRY,
        }
    }

    /// The file of `draft`.
    pub fn path(&self, draft: &Draft) -> PathBuf {
        self.dir.join(draft.file_name())
    }

    fn key_state(&self) -> std::sync::MutexGuard<'_, KeyState> {
        // A panic while holding it left at worst no key cached: the store is read again.
        self.key.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads the store into `state`: the key, `None` when there is none, or why it cannot be
    /// read (remembered, with when).
    fn read_key(&self, state: &mut KeyState) -> Result<Option<(DraftKey, TokenStore)>, DraftError> {
        match self.keys.read() {
            Ok(Some((key, store))) => {
                *state = KeyState::Known(key.clone(), store.clone());
                Ok(Some((key, store)))
            }
            Ok(None) => {
                *state = KeyState::Unknown;
                Ok(None)
            }
            Err(why) => {
                *state = KeyState::Unreadable(Instant::now(), why.clone());
                Err(DraftError::KeyUnavailable(why))
            }
        }
    }

    /// The stored key, if there is one; asks the store unless it is known.
    fn existing_key(&self) -> Result<Option<(DraftKey, TokenStore)>, DraftError> {
        let mut state = self.key_state();
        if let KeyState::Known(key, store) = &*state {
            return Ok(Some((key.clone(), store.clone())));
        }
        self.read_key(&mut state)
    }

    /// The stored key, made and stored first if there is certainly none. A store that could
    /// not be read within [`KEY_RETRY`] is not asked again.
    fn sealing_key(&self) -> Result<(DraftKey, TokenStore), DraftError> {
        let mut state = self.key_state();
        match &*state {
            KeyState::Known(key, store) => return Ok((key.clone(), store.clone())),
            KeyState::Unreadable(at, why) if at.elapsed() < self.retry => {
                return Err(DraftError::KeyUnavailable(why.clone()));
            }
            _ => {}
        }
        if let Some(found) = self.read_key(&mut state)? {
            return Ok(found);
        }
        let key = DraftKey::generate().map_err(|e| DraftError::Key(e.to_string()))?;
        let store = self.keys.write(&key).map_err(DraftError::Key)?;
        *state = KeyState::Known(key.clone(), store.clone());
        Ok((key, store))
    }

    fn write(
        &self,
        draft: &Draft,
        document: &Value,
        saved_at: u64,
    ) -> Result<TokenStore, DraftError> {
        let (key, store) = self.sealing_key()?;
        let plaintext = serde_json::to_vec(&Envelope {
            saved_at,
            document: document.clone(),
        })
        .map_err(|e| DraftError::Seal(e.to_string()))?;
        let name = draft.file_name();
        let sealed = sealed::seal(&key, name.as_bytes(), &plaintext).map_err(DraftError::Seal)?;
        std::fs::create_dir_all(&self.dir).map_err(io("create", &self.dir))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
                .map_err(io("restrict", &self.dir))?;
        }
        let path = self.dir.join(name);
        slipway_platform_client::fsutil::atomic_write_secret(&path, &sealed)
            .map_err(io("write", &path))?;
        Ok(store)
    }

    /// Saves `document` as `draft` (sealed, atomically, 0600), making the key on first use.
    ///
    /// # Errors
    /// No key could be kept, the key cannot be read now, or the file could not be written.
    pub fn save(&self, draft: &Draft, document: &Value) -> Result<SaveAnswer, DraftError> {
        let saved_at = now_millis();
        let store = self.write(draft, document, saved_at)?;
        if *draft.kind() == DraftKind::Enrollment {
            remove_if_present(&self.legacy)?;
        }
        Ok(SaveAnswer {
            saved_at,
            key_store: store.describe(),
            key_notice: key_notice(&store),
        })
    }

    /// `draft`, read back. One that does not open is removed ([`Loaded::NotRestored`]); one
    /// whose key cannot be read now is kept ([`Loaded::KeyUnavailable`]).
    ///
    /// # Errors
    /// The file could not be read or removed, or (for the enrollment draft of an earlier
    /// version, kept in plain text) sealed.
    pub fn load(&self, draft: &Draft) -> Result<Loaded, DraftError> {
        if *draft.kind() == DraftKind::Enrollment {
            match self.seal_legacy(draft) {
                Err(DraftError::KeyUnavailable(why)) => return Ok(Loaded::KeyUnavailable(why)),
                other => other?,
            }
        }
        let path = self.path(draft);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::Nothing),
            Err(e) => return Err(io("read", &path)(e)),
        };
        let key = match self.existing_key() {
            Ok(key) => key,
            Err(DraftError::KeyUnavailable(why)) => return Ok(Loaded::KeyUnavailable(why)),
            Err(e) => return Err(e),
        };
        let opened = key.and_then(|(key, store)| {
            let plaintext = sealed::open(&key, draft.file_name().as_bytes(), &bytes)?;
            let envelope: Envelope = serde_json::from_slice(&plaintext).ok()?;
            Some(Restored {
                document: envelope.document,
                saved_at: envelope.saved_at,
                key_store: store,
            })
        });
        match opened {
            Some(restored) => Ok(Loaded::Restored(restored)),
            None => {
                remove_if_present(&path)?;
                Ok(Loaded::NotRestored)
            }
        }
    }

    /// Forgets `draft` (nothing to forget is fine).
    ///
    /// # Errors
    /// The file could not be removed.
    pub fn clear(&self, draft: &Draft) -> Result<(), DraftError> {
        if *draft.kind() == DraftKind::Enrollment {
            remove_if_present(&self.legacy)?;
        }
        remove_if_present(&self.path(draft))
    }

    /// Seals the plain enrollment draft an earlier version left as `draft` (the environment's
    /// whose enrollment form opens first), then deletes it (one that is not JSON is only
    /// deleted). Kept when sealing fails, to be tried again.
    fn seal_legacy(&self, draft: &Draft) -> Result<(), DraftError> {
        let bytes = match std::fs::read(&self.legacy) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io("read", &self.legacy)(e)),
        };
        if let Ok(document) = serde_json::from_slice::<Value>(&bytes) {
            let saved_at = std::fs::metadata(&self.legacy)
                .and_then(|m| m.modified())
                .map(millis)
                .unwrap_or_else(|_| now_millis());
            self.write(draft, &document, saved_at)?;
        }
        remove_if_present(&self.legacy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A key store in memory, shared by the `Drafts` of one test (as the keyring is by two
    /// runs of the app); it can be locked, as a keyring whose unlock prompt was dismissed, and
    /// counts how often it is asked.
    #[derive(Debug, Default, Clone)]
    struct Memory(std::sync::Arc<Mutex<MemoryKeyring>>);

    #[derive(Debug, Default)]
    struct MemoryKeyring {
        key: Option<DraftKey>,
        locked: bool,
        reads: usize,
    }

    impl Memory {
        fn lock(&self, locked: bool) {
            self.0.lock().unwrap().locked = locked;
        }

        fn key(&self) -> Option<DraftKey> {
            self.0.lock().unwrap().key.clone()
        }

        fn reads(&self) -> usize {
            self.0.lock().unwrap().reads
        }
    }

    impl KeyStore for Memory {
        fn read(&self) -> Result<Option<(DraftKey, TokenStore)>, String> {
            let mut keyring = self.0.lock().unwrap();
            keyring.reads += 1;
            if keyring.locked {
                return Err("the keyring is locked".to_owned());
            }
            Ok(keyring.key.clone().map(|k| (k, TokenStore::Keyring)))
        }

        fn write(&self, key: &DraftKey) -> Result<TokenStore, String> {
            let mut keyring = self.0.lock().unwrap();
            if keyring.locked {
                return Err("the keyring is locked".to_owned());
            }
            keyring.key = Some(key.clone());
            Ok(TokenStore::Keyring)
        }
    }

    fn request(uuid: &str) -> Draft {
        Draft::new(None, DraftKind::parse("missing_info", Some(uuid)).unwrap()).unwrap()
    }

    fn enrollment() -> Draft {
        Draft::new(None, DraftKind::Enrollment).unwrap()
    }

    const A: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01";
    const B: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e02";

    fn restored(loaded: Loaded) -> Restored {
        match loaded {
            Loaded::Restored(r) => r,
            other => panic!("expected a restored draft, got {other:?}"),
        }
    }

    #[test]
    fn drafts_round_trip_per_form_sealed_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let keys = Memory::default();
        let drafts = Drafts::with_key_store(dir.path(), Box::new(keys.clone()));
        assert_eq!(drafts.load(&enrollment()).unwrap(), Loaded::Nothing);
        assert_eq!(drafts.load(&request(A)).unwrap(), Loaded::Nothing);

        let typed = json!({"patient": {"id": "P-1", "lastName": "Quixotewright"}});
        let answer = drafts.save(&enrollment(), &typed).unwrap();
        assert_eq!(answer.key_store, "keyring");
        assert_eq!(answer.key_notice, None);
        drafts
            .save(&request(A), &json!({"f1": "1980-04-02", "f2": "72.5"}))
            .unwrap();
        drafts.save(&request(B), &json!({"f1": "Zebulon"})).unwrap();

        // Another run of the app (a new `Drafts`, the same key store) reads them back.
        let again = Drafts::with_key_store(dir.path(), Box::new(keys));
        let r = restored(again.load(&enrollment()).unwrap());
        assert_eq!(r.document, typed);
        assert_eq!(r.saved_at, answer.saved_at);
        assert_eq!(
            restored(again.load(&request(A)).unwrap()).document,
            json!({"f1": "1980-04-02", "f2": "72.5"})
        );
        assert_eq!(
            restored(again.load(&request(B)).unwrap()).document["f1"],
            "Zebulon"
        );

        for (kind, plain) in [
            (enrollment(), "Quixotewright"),
            (request(A), "1980-04-02"),
            (request(B), "Zebulon"),
        ] {
            let path = again.path(&kind);
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes.windows(plain.len()).any(|w| w == plain.as_bytes()),
                "{} holds {plain} in plain text",
                path.display()
            );
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(&path).unwrap().permissions().mode();
                assert_eq!(mode & 0o777, 0o600, "{}", path.display());
            }
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("drafts"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700);
        }

        again.clear(&request(A)).unwrap();
        again.clear(&request(A)).unwrap();
        assert_eq!(again.load(&request(A)).unwrap(), Loaded::Nothing);
        assert!(!again.path(&request(A)).exists());
        assert!(again.path(&request(B)).exists(), "only its own draft goes");
    }

    #[test]
    fn a_draft_whose_key_is_lost_or_wrong_is_not_restored_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let drafts = Drafts::with_key_store(dir.path(), Box::new(Memory::default()));
        drafts.save(&request(A), &json!({"f1": "x"})).unwrap();
        drafts.save(&request(B), &json!({"f1": "y"})).unwrap();

        // The key is gone (another keyring, a deleted key file): nothing to open it with.
        let lost = Drafts::with_key_store(dir.path(), Box::new(Memory::default()));
        assert_eq!(lost.load(&request(A)).unwrap(), Loaded::NotRestored);
        assert!(!lost.path(&request(A)).exists());
        assert_eq!(lost.load(&request(A)).unwrap(), Loaded::Nothing);

        // Another key: the same.
        let other = Memory::default();
        KeyStore::write(&other, &DraftKey::generate().unwrap()).unwrap();
        let wrong = Drafts::with_key_store(dir.path(), Box::new(other));
        assert_eq!(wrong.load(&request(B)).unwrap(), Loaded::NotRestored);
        assert!(!wrong.path(&request(B)).exists());

        let answer = LoadAnswer::from(Loaded::NotRestored);
        assert!(
            answer
                .not_restored
                .unwrap()
                .contains("could not be restored")
        );
        assert_eq!(answer.document, None);
    }

    #[test]
    fn a_locked_keyring_keeps_the_draft_and_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let keys = Memory::default();
        let drafts = Drafts::with_key_store(dir.path(), Box::new(keys.clone()));
        drafts.save(&request(A), &json!({"f1": "x"})).unwrap();
        let key = keys.key().unwrap();

        // Another run of the app, while the keyring is locked (its unlock prompt dismissed).
        keys.lock(true);
        let locked = Drafts::with_key_store(dir.path(), Box::new(keys.clone()));
        let loaded = locked.load(&request(A)).unwrap();
        assert!(
            matches!(&loaded, Loaded::KeyUnavailable(why) if why.contains("locked")),
            "{loaded:?}"
        );
        assert!(locked.path(&request(A)).exists(), "the draft was deleted");
        let answer = LoadAnswer::from(loaded);
        assert!(answer.key_unavailable.unwrap().contains("is kept"));
        assert_eq!((answer.document, answer.not_restored), (None, None));

        // Saving makes no key in its place, and does not ask the keyring again at each pause.
        let asked = keys.reads();
        for _ in 0..3 {
            assert!(matches!(
                locked.save(&request(B), &json!({"f1": "y"})),
                Err(DraftError::KeyUnavailable(_))
            ));
        }
        assert_eq!(keys.reads(), asked, "asked again within the pause");
        assert!(!locked.path(&request(B)).exists());
        assert_eq!(keys.key(), Some(key.clone()), "the key was replaced");

        // Once the keyring is open, the draft opens with the key it was sealed with; a save
        // after the pause asks again.
        keys.lock(false);
        let opened = restored(locked.load(&request(A)).unwrap());
        assert_eq!(opened.document, json!({"f1": "x"}));
        assert_eq!(keys.key(), Some(key));

        keys.lock(true);
        let mut impatient = Drafts::with_key_store(dir.path(), Box::new(keys.clone()));
        impatient.retry = Duration::ZERO;
        assert!(impatient.save(&request(B), &json!({})).is_err());
        keys.lock(false);
        impatient.save(&request(B), &json!({"f1": "y"})).unwrap();
        assert_eq!(
            restored(drafts.load(&request(B)).unwrap()).document,
            json!({"f1": "y"})
        );
    }

    #[test]
    fn a_locked_keyring_keeps_the_plain_enrollment_draft_too() {
        let dir = tempfile::tempdir().unwrap();
        let legacy = dir.path().join("enrollment-draft.json");
        std::fs::write(&legacy, br#"{"patient": {}}"#).unwrap();
        let keys = Memory::default();
        keys.lock(true);
        let drafts = Drafts::with_key_store(dir.path(), Box::new(keys.clone()));
        assert!(matches!(
            drafts.load(&enrollment()).unwrap(),
            Loaded::KeyUnavailable(_)
        ));
        assert!(legacy.exists());
        assert_eq!(keys.key(), None);
    }

    #[test]
    fn each_environment_keeps_its_own_drafts() {
        let dir = tempfile::tempdir().unwrap();
        let drafts = Drafts::with_key_store(dir.path(), Box::new(Memory::default()));
        let kind = DraftKind::parse("missing_info", Some(A)).unwrap();
        let staging = Draft::new(Some("staging"), kind.clone()).unwrap();
        let prod = Draft::new(Some("prod"), kind).unwrap();
        drafts.save(&staging, &json!({"f1": "staging's"})).unwrap();
        drafts
            .save(&request(A), &json!({"f1": "this computer's"}))
            .unwrap();

        assert_eq!(drafts.load(&prod).unwrap(), Loaded::Nothing);
        drafts.clear(&prod).unwrap();
        assert_eq!(
            restored(drafts.load(&staging).unwrap()).document["f1"],
            "staging's"
        );
        assert_eq!(
            restored(drafts.load(&request(A)).unwrap()).document["f1"],
            "this computer's"
        );

        // Bound to its environment: renamed to another's, it does not open.
        std::fs::rename(drafts.path(&staging), drafts.path(&prod)).unwrap();
        assert_eq!(drafts.load(&prod).unwrap(), Loaded::NotRestored);
    }

    #[test]
    fn a_draft_moved_to_another_request_or_damaged_does_not_open() {
        let dir = tempfile::tempdir().unwrap();
        let drafts = Drafts::with_key_store(dir.path(), Box::new(Memory::default()));
        drafts.save(&request(A), &json!({"f1": "x"})).unwrap();
        std::fs::rename(drafts.path(&request(A)), drafts.path(&request(B))).unwrap();
        assert_eq!(drafts.load(&request(B)).unwrap(), Loaded::NotRestored);

        drafts.save(&request(A), &json!({"f1": "x"})).unwrap();
        std::fs::write(drafts.path(&request(A)), b"garbage").unwrap();
        assert_eq!(drafts.load(&request(A)).unwrap(), Loaded::NotRestored);
        assert!(!drafts.path(&request(A)).exists());
    }

    #[test]
    fn the_plain_enrollment_draft_of_earlier_versions_is_sealed_once_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let legacy = dir.path().join("enrollment-draft.json");
        std::fs::write(&legacy, br#"{"patient": {"lastName": "Quixotewright"}}"#).unwrap();
        let drafts = Drafts::with_key_store(dir.path(), Box::new(Memory::default()));
        let r = restored(drafts.load(&enrollment()).unwrap());
        assert_eq!(r.document["patient"]["lastName"], "Quixotewright");
        assert!(r.saved_at > 0);
        assert!(!legacy.exists());
        let bytes = std::fs::read(drafts.path(&enrollment())).unwrap();
        assert!(!bytes.windows(13).any(|w| w == b"Quixotewright"));

        // One that is not JSON is only deleted; clearing removes a plain one too.
        std::fs::write(&legacy, b"{broken").unwrap();
        drafts.clear(&enrollment()).unwrap();
        assert!(!legacy.exists());
        std::fs::write(&legacy, b"{broken").unwrap();
        assert_eq!(drafts.load(&enrollment()).unwrap(), Loaded::Nothing);
        assert!(!legacy.exists());
    }

    #[test]
    fn a_key_kept_in_a_file_is_said_so() {
        let store = TokenStore::File(PathBuf::from("/home/u/.config/slipway/tokens/k"));
        let answer = LoadAnswer::from(Loaded::Restored(Restored {
            document: json!({}),
            saved_at: 1,
            key_store: store,
        }));
        assert_eq!(
            answer.key_store.as_deref(),
            Some("/home/u/.config/slipway/tokens/k")
        );
        assert!(answer.key_notice.unwrap().contains("No keyring service"));
    }
}
