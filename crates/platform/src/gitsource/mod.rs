//! Git sources (docs/git.md): an app deploys from a branch of a repository. Connecting
//! stores the address, the branch and the devfile's directory, seals the credential (a
//! token, or a deploy key made here) with a webhook secret made here, and asks for a first
//! deploy. A push arrives as a signed webhook ([`events`]) or is found by polling; either
//! leaves a deploy waiting on the source's row (a newer one replaces it), and the
//! [`worker`] fetches that commit, packs the devfile's directory as a build context and
//! queues its builds, after which the app deploys as after any upload. Whatever fails on
//! the way is a failed deployment with the reason; the running deployment keeps serving.
//!
//! - [`credentials`]: what is sealed, and connecting.
//! - [`events`]: a webhook delivery verified, deduplicated and turned into a deploy or a
//!   reason to ignore it.
//! - [`previews`]: a pull request's own app, opened, rebuilt and deleted with it.
//! - [`worker`]: the loop that fetches, packs, queues and polls.

pub mod credentials;
pub mod events;
pub mod previews;
pub mod worker;

use std::path::PathBuf;
use std::sync::Arc;

use crate::db::Db;
use crate::deploy::Deployer;
use crate::jobs::Runner;
use crate::vault::Vault;

/// The shared handle: the HTTP API connects sources and hands it deliveries, the worker
/// deploys.
#[derive(Clone)]
pub struct GitSources {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for GitSources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitSources").finish_non_exhaustive()
    }
}

struct Inner {
    db: Db,
    vault: Vault,
    runner: Runner,
    deployer: Deployer,
    data_dir: PathBuf,
    wake: tokio::sync::Notify,
    worker: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl GitSources {
    /// The handle over the platform's database, vault, build runner and deployer.
    pub fn new(db: Db, vault: Vault, runner: Runner, deployer: Deployer) -> Self {
        let data_dir = runner.data_dir();
        Self {
            inner: Arc::new(Inner {
                db,
                vault,
                runner,
                deployer,
                data_dir,
                wake: tokio::sync::Notify::new(),
                worker: std::sync::Mutex::new(None),
            }),
        }
    }

    /// The cache of `app_id`'s source.
    fn cache(&self, app_id: &str) -> PathBuf {
        crate::data_dir::git_cache(&self.inner.data_dir, app_id)
    }

    /// Tells the worker a deploy is waiting.
    pub fn wake(&self) {
        self.inner.wake.notify_one();
    }

    /// Starts the worker (once).
    pub fn start_worker(&self) {
        let mut slot = self
            .inner
            .worker
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.is_none() {
            let me = self.clone();
            *slot = Some(tokio::spawn(async move { worker::run(me).await }));
        }
    }

    /// Stops the worker with its server. A deploy it was fetching stays waiting on the
    /// source's row, and the next start takes it up.
    pub fn stop_worker(&self) {
        if let Some(worker) = self
            .inner
            .worker
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        {
            worker.abort();
        }
    }

    /// Forgets the cache of a source disconnected or an app deleted.
    pub fn remove_cache(&self, app_id: &str) {
        let _ = std::fs::remove_dir_all(self.cache(app_id));
    }
}
