//! Which environment the window works in, remembered across starts: this computer (`None`)
//! or a named remote environment. A leaf of the commands, so every domain that acts on the
//! environment (tools, care, drafts, people, the worklist) reads it without reaching into the
//! environment commands (`env.rs`), which in turn use those domains.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use slipway_platform_client::credentials;
use slipway_platform_client::{Endpoint, ToolError};

/// What to do whenever the environment is set (switched to, signed in to again, left).
type OnSet = Box<dyn Fn() + Send + Sync>;

/// Which environment is in use, remembered across starts in the desktop's data directory.
pub struct Selection {
    current: RwLock<Option<String>>,
    file: PathBuf,
    on_set: Mutex<Vec<OnSet>>,
}

impl std::fmt::Debug for Selection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Selection")
            .field("current", &self.current)
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

impl Selection {
    /// The choice saved in `data_dir` (none: this computer).
    pub fn load(data_dir: &Path) -> Self {
        let file = data_dir.join("environment");
        let current = std::fs::read_to_string(&file)
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty());
        Self {
            current: RwLock::new(current),
            file,
            on_set: Mutex::new(Vec::new()),
        }
    }

    /// Calls `f` after each time the environment is set, by any command: what follows the
    /// old environment (the worklist's event subscription) stops there rather than at its
    /// next event.
    pub fn on_set(&self, f: impl Fn() + Send + Sync + 'static) {
        self.on_set
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Box::new(f));
    }

    /// The remote environment in use, if any.
    pub fn current(&self) -> Option<String> {
        self.current.read().map(|c| c.clone()).unwrap_or(None)
    }

    pub(super) fn set(&self, name: Option<String>) -> Result<(), String> {
        match &name {
            Some(n) => slipway_platform_client::fsutil::atomic_write(&self.file, n.as_bytes()),
            None => match std::fs::remove_file(&self.file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
        }
        .map_err(|e| format!("could not remember the environment: {e}"))?;
        if let Ok(mut current) = self.current.write() {
            *current = name;
        }
        let on_set = self
            .on_set
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for f in on_set.iter() {
            f();
        }
        Ok(())
    }

    /// The platform of the remote environment in use (`None`: this computer's).
    pub fn platform(&self) -> Result<Option<Endpoint>, ToolError> {
        let Some(name) = self.current() else {
            return Ok(None);
        };
        match credentials::saved(&name)? {
            Some((url, token)) => Ok(Some(Endpoint::new(url, token))),
            None => Err(ToolError::NotConfigured(format!(
                "environment {name:?} is no longer saved; sign in again or switch to this computer"
            ))),
        }
    }
}
