//! The data directory (`--data-dir`): every file and directory the platform keeps there is
//! named here (the image and runtime crates name theirs, re-exported here so this is the one
//! list), and the lock a running server holds on it.
//!
//! ```text
//! DATA_DIR/
//!   platform.sqlite3      the default database          (SQLITE_FILE)
//!   platform.lock         held while a server runs       (LOCK_FILE)
//!   bootstrap-token       the first owner's token, 0600  (BOOTSTRAP_TOKEN_FILE)
//!   vault.key             the vault's master keys, 0600  (VAULT_KEY_FILE)
//!   log-url-key           signs presigned log URLs, 0600 (LOG_URL_KEY_FILE)
//!   signing-key           signs images, 0600             (SIGNING_KEY_FILE)
//!   embedded-url          an embedded server's URL       (EMBEDDED_URL_FILE)
//!   images/               the content-addressed store    (IMAGES_DIR)
//!   contexts/             uploaded build contexts        (CONTEXTS_DIR)
//!   builds/<id>/          a build's log and scan report  (BUILDS_DIR)
//!   work/<app>/<service>  a build's scratch directory    (WORK_DIR)
//!   cache/                shared download caches         (CACHE_DIR)
//!   run/<app>/…           deployments' trees (RUN_DIR)
//!   layers/<hex>          unpacked layers they share     (LAYERS_DIR)
//!   deployments/<id>/     deployment service logs        (DEPLOYMENTS_DIR)
//!   services/             the backing servers' data      (SERVICES_DIR)
//!   volumes/<app>/<name>  the apps' volumes              (VOLUMES_DIR)
//! ```

use std::fs::File;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

use crate::error::PlatformError;

pub use slipway_image::BUILDS_DIR;
pub use slipway_image::sign::SIGNING_KEY_FILE;
pub use slipway_image::store::IMAGES_DIR;
pub use slipway_runtime::layers::LAYERS_DIR;
pub use slipway_runtime::process::RUN_DIR;

/// The default SQLite file.
pub const SQLITE_FILE: &str = "platform.sqlite3";
/// The first owner's bearer token.
pub const BOOTSTRAP_TOKEN_FILE: &str = "bootstrap-token";
/// The vault's master keys (unless `--vault-key-file` names another file).
pub const VAULT_KEY_FILE: &str = "vault.key";
/// The key of presigned log URLs.
pub const LOG_URL_KEY_FILE: &str = "log-url-key";
/// Where an embedded server writes its URL (and pid) for a second program to use.
pub const EMBEDDED_URL_FILE: &str = "embedded-url";
/// Uploaded build contexts.
pub const CONTEXTS_DIR: &str = "contexts";
/// Builds' scratch directories.
pub const WORK_DIR: &str = "work";
/// Download caches shared by builds.
pub const CACHE_DIR: &str = "cache";
/// Deployments' service logs.
pub const DEPLOYMENTS_DIR: &str = "deployments";

/// The backing servers' data, configuration and logs (`slipway-services`).
pub const SERVICES_DIR: &str = "services";

/// The git sources' caches (a bare repository per app) under the data directory.
pub const GIT_DIR: &str = "git";

/// The cache of `app_id`'s git source (a bare repository, its known hosts).
pub fn git_cache(data_dir: &Path, app_id: &str) -> PathBuf {
    data_dir.join(GIT_DIR).join(app_id)
}

/// The apps' volumes: `volumes/<app_id>/<volume name>`.
pub const VOLUMES_DIR: &str = "volumes";

/// Under an app's volumes, the ephemeral volumes of its deployments
/// (`volumes/<app_id>/.ephemeral/<deployment_id>/<name>`): each removed once a newer
/// deployment replaces its own, and left out of backups.
pub const EPHEMERAL_DIR: &str = ".ephemeral";

/// Name of the lock file a running server holds in its data directory.
pub const LOCK_FILE: &str = "platform.lock";

/// The files of the data directory a backup (`slipway platform backup`) holds besides the
/// database: the keys without which the restored data is useless (the vault's master keys
/// open the secrets, the signing key verifies the stored images before they run, the log-URL
/// key keeps presigned log links valid).
pub const BACKUP_FILES: &[&str] = &[VAULT_KEY_FILE, SIGNING_KEY_FILE, LOG_URL_KEY_FILE];

/// The directories a backup holds whole: the image store (deployments are brought back from
/// it), builds' logs and scan reports, deployments' service logs, and the apps' volumes
/// (copied file by file while apps may write: a file being written during the copy can be
/// caught half-written).
///
/// Left out, because the platform makes them again or they belong to one running
/// instance: `run/` and `layers/` (deployments' trees, unpacked again from the images when
/// the restored platform redeploys), `work/`, `contexts/` and `cache/` (a build's scratch,
/// uploads of builds that were in flight, which a start fails and clears anyway, and
/// download caches), `engine/` (the container engine's configuration and the platform id its
/// containers are labelled with: a restored copy gets an id of its own, so it never stops
/// the containers of the platform it was copied from), the lock, `embedded-url` and
/// `bootstrap-token` (a start issues the owner a new one; the old token stays valid).
pub const BACKUP_DIRS: &[&str] = &[IMAGES_DIR, BUILDS_DIR, DEPLOYMENTS_DIR, VOLUMES_DIR];

/// The data directory's lock: held by a running server (and a key rotation) for its whole
/// life, so a second one is refused before it touches anything.
#[derive(Debug)]
pub struct DataDirLock {
    _held: Flock<File>,
}

/// Takes the data directory's lock, or says who holds it.
pub fn lock(data_dir: &Path) -> Result<DataDirLock, PlatformError> {
    std::fs::create_dir_all(data_dir)?;
    let lock_path = data_dir.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock)
        .map(|held| DataDirLock { _held: held })
        .map_err(|(_, errno)| {
            PlatformError::Config(format!(
                "the data directory {} is in use by another platform server or key rotation \
                 (lock {} is held: {errno}); stop it first",
                data_dir.display(),
                lock_path.display()
            ))
        })
}

/// Whether a running server (or a key rotation) holds the data directory's lock. Unlike
/// [`lock`] it creates nothing: a restore asks this of a directory it must leave alone.
pub fn is_locked(data_dir: &Path) -> std::io::Result<bool> {
    let file = match File::open(data_dir.join(LOCK_FILE)) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    match Flock::lock(file, FlockArg::LockSharedNonblock) {
        Ok(_released_on_drop) => Ok(false),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(true),
        Err((_, errno)) => Err(std::io::Error::from(errno)),
    }
}

/// Writes one line to a file only its owner may read, atomically (see
/// [`slipway_server::file`]): the token and key files of the data directory.
pub fn write_secret_line(path: &Path, line: &str) -> std::io::Result<()> {
    slipway_server::file::write(
        path,
        format!("{line}\n").as_bytes(),
        slipway_server::file::Mode::Secret,
    )
}

/// Narrows a token or key file to 0600 if someone widened it.
pub fn restrict_to_owner(path: &Path) -> std::io::Result<()> {
    slipway_server::file::restrict_to_owner(path).map(|_| ())
}
