//! Deployments: the deployer turns an app's latest succeeded builds into running services on
//! a [`runtime::Runtime`] backend ([`process`], or [`container`] on podman or docker), in
//! `dependsOn` order, each healthy
//! before the next starts ([`health`]), each supervised and restarted with back-off
//! ([`supervisor`]). A new deployment replaces the app's current one only once every service
//! is healthy; until then (and if it fails) the old one keeps serving. A RUNNING deployment
//! one of whose services the supervisor gives up on (it keeps crashing) is stopped and
//! becomes FAILED. The gateway reads the routes of current deployments from here.
//!
//! One task per deployment; deployments of one app are serialised by a per-app lock, and a
//! newer request (a new build, disable, delete, shutdown) cancels a pending one first.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use slipway_devfile::{Devfile, ServiceSpec};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use slipway_runtime::{health, runtime, supervisor};

use crate::db::Db;
use crate::model::{AppStatus, BuildStatus, DeploymentCause, DeploymentStatus, ServiceStatus};
use crate::notifications::events;
use crate::store::apps;
use crate::store::builds;
use crate::store::deployments::{self, DeploymentRecord, NewService, Origin};
use crate::store::service_ports;
use crate::vault::Vault;
use runtime::{ImageRequest, Limits, Runtime};
use slipway_api::notifications::EventKind;
use supervisor::{Launch, Supervised};

mod crash;
mod liveness;
mod plan;
mod ports;
mod rollout;
mod routes;
mod schedule;

use crash::*;
use liveness::*;
use plan::*;
pub use ports::{AppUrls, UrlScheme};
pub use rollout::tail;
use rollout::*;
pub use routes::{Routes, dependency_variable, gateway_url};
use schedule::*;
pub use schedule::{JOBS_DIR, run_log};

pub use crate::config::DEFAULT_HEALTH_TIMEOUT;
/// Exits during start-up that fail a deployment at once.
pub const MAX_START_EXITS: usize = 3;
/// A service without endpoints counts as healthy once it has stayed up this long.
pub const ALIVE_IS_HEALTHY_AFTER: Duration = Duration::from_secs(3);
/// How often start-up health is checked: a probe of a port nobody listens on yet costs
/// microseconds, and every tick waited is time before an edit is served (`slipway dev`).
const POLL: Duration = Duration::from_millis(50);
pub use crate::data_dir::DEPLOYMENTS_DIR;
/// The reason given to deployments a restart interrupted.
pub const RESTART_REASON: &str = "server restarted during the deployment";

/// The runtime log of one service of one deployment.
pub fn log_path(data_dir: &Path, deployment_id: &str, service: &str) -> PathBuf {
    data_dir
        .join(DEPLOYMENTS_DIR)
        .join(deployment_id)
        .join(format!("{service}.log"))
}

/// Runs deployments. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Deployer {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    db: Db,
    data_dir: PathBuf,
    runtime: Arc<dyn Runtime>,
    health_timeout: Duration,
    liveness: crate::config::Liveness,
    gateway_port: Option<u16>,
    vault: Vault,
    /// Limits for services whose devfile sets none.
    default_limits: Limits,
    /// How apps' URLs look.
    urls: UrlScheme,
    /// The apps' backing resources, reconciled on every deployment.
    resources: crate::resources::Resources,
    /// The loopback listeners of the `ports` mode, by (app id, service).
    forwards: Mutex<HashMap<(String, String), ports::Forward>>,
    /// Held while a loopback listener is set up, so two callers agree on one port.
    forwarding: tokio::sync::Mutex<()>,
    client: health::HttpClient,
    slots: Mutex<HashMap<String, Arc<AppSlot>>>,
    routes: RwLock<HashMap<String, Routes>>,
    tickets: AtomicU64,
    shutdown: CancellationToken,
    tracker: TaskTracker,
}

/// Per-app state: the lock serialising its deployments, the pending one's token, and the
/// deployment serving now.
#[derive(Debug, Default)]
struct AppSlot {
    lock: tokio::sync::Mutex<()>,
    /// The pending deployment's ticket (to tell it from a newer one) and token.
    pending: Mutex<Option<(u64, CancellationToken)>>,
    live: Mutex<Option<Live>>,
}

#[derive(Debug)]
struct Live {
    deployment_id: String,
    app_name: String,
    /// Shared: a service a newer deployment runs unchanged is the same instance in both.
    services: Vec<Arc<LiveService>>,
    /// Its scheduled jobs (set once they are scheduled), for runs asked for by hand.
    jobs: Vec<Scheduled>,
}

#[derive(Debug)]
struct LiveService {
    request: ImageRequest,
    supervised: Supervised,
    /// Where it listens.
    port: u16,
    /// A digest of what it runs: its image and its environment without `PORT` (secret
    /// values included, so never the values themselves). Equal means a newer deployment
    /// can keep this instance instead of starting another.
    config: [u8; 32],
    /// Its log file.
    log: PathBuf,
    /// What it runs (its image and environment): a scheduled job of the service runs the
    /// same, with the job's command.
    launch: Launch,
}

/// Whether `deployment_id` is the app's live deployment (a watcher of a replaced one ends).
fn still_live(slot: &AppSlot, deployment_id: &str) -> bool {
    slot.live
        .lock()
        .ok()
        .is_some_and(|l| l.as_ref().is_some_and(|l| l.deployment_id == deployment_id))
}

/// The deployer's settings from the configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long a starting service has to answer its health check.
    pub health_timeout: Duration,
    /// How a RUNNING deployment's services are watched.
    pub liveness: crate::config::Liveness,
    /// The host-routed gateway's port, when it listens.
    pub gateway_port: Option<u16>,
    /// Limits for services whose devfile sets none.
    pub default_limits: Limits,
    /// How apps' URLs look.
    pub urls: UrlScheme,
    /// The apps' backing resources.
    pub resources: crate::resources::Resources,
}

impl Deployer {
    /// A deployer on `runtime`. Call [`Deployer::resume`] once to bring back what ran before
    /// a restart.
    pub fn new(
        db: Db,
        data_dir: &Path,
        runtime: Arc<dyn Runtime>,
        vault: Vault,
        settings: Settings,
    ) -> Self {
        let Settings {
            health_timeout,
            liveness,
            gateway_port,
            default_limits,
            urls,
            resources,
        } = settings;
        Self {
            inner: Arc::new(Inner {
                db,
                data_dir: data_dir.to_path_buf(),
                runtime,
                health_timeout,
                liveness,
                gateway_port,
                vault,
                default_limits,
                urls,
                resources,
                forwards: Mutex::new(HashMap::new()),
                forwarding: tokio::sync::Mutex::new(()),
                client: health::client(),
                slots: Mutex::new(HashMap::new()),
                routes: RwLock::new(HashMap::new()),
                tickets: AtomicU64::new(0),
                shutdown: CancellationToken::new(),
                tracker: TaskTracker::new(),
            }),
        }
    }

    /// The gateway's port, when the gateway listens.
    pub fn gateway_port(&self) -> Option<u16> {
        self.inner.gateway_port
    }

    /// The limits of services whose devfile sets none.
    pub fn default_limits(&self) -> Limits {
        self.inner.default_limits
    }

    /// Whether the runtime applies `memoryLimit` / `cpuLimit` (only the container runtime
    /// can).
    pub fn enforces_limits(&self) -> bool {
        self.inner.runtime.name() == "container"
    }

    /// The apps' backing resources.
    pub fn resources(&self) -> &crate::resources::Resources {
        &self.inner.resources
    }

    /// The HTTP client the gateway proxies with.
    pub fn client(&self) -> &health::HttpClient {
        &self.inner.client
    }

    /// The runtime log of a deployment's service.
    pub fn data_dir(&self) -> &Path {
        &self.inner.data_dir
    }

    /// The runtime log of one service of one deployment.
    pub fn log_path(&self, deployment_id: &str, service: &str) -> PathBuf {
        log_path(&self.inner.data_dir, deployment_id, service)
    }

    /// At start-up: deployments a stop or crash left `deploying` become FAILED, and every
    /// enabled app whose last deployment was RUNNING is redeployed from the images that
    /// deployment ran (the app shows `deploying` until it is healthy again); apps whose
    /// deployment was interrupted are deployed again from their latest builds.
    pub async fn resume(&self) -> Result<(), sqlx::Error> {
        let runtime = Arc::clone(&self.inner.runtime);
        let reaped = tokio::task::spawn_blocking(move || runtime.reap_orphans())
            .await
            .unwrap_or(0);
        if reaped > 0 {
            tracing::warn!(
                reaped,
                "stopped services a previous run left behind when it ended without stopping them"
            );
        }
        let mut tx = self.inner.db.begin_write().await?;
        let interrupted = deployments::fail_unfinished(&mut tx, RESTART_REASON).await?;
        crate::store::job_runs::end_interrupted(&mut tx).await?;
        let running = deployments::running_of_enabled_apps(&mut tx).await?;
        for d in &running {
            apps::set_status(&mut tx, &d.app_id, AppStatus::Deploying, None).await?;
        }
        tx.commit().await?;
        for d in running {
            tracing::info!(app_id = %d.app_id, deployment_id = %d.id, "redeploying after a restart");
            self.spawn_deploy(d.app_id.clone(), Source::Deployment(d));
        }
        for app_id in interrupted {
            self.request_deploy(app_id);
        }
        Ok(())
    }

    /// Listens for apps whose build just succeeded and deploys them when every service has
    /// a succeeded latest build.
    pub fn listen(&self, mut built: tokio::sync::mpsc::UnboundedReceiver<String>) {
        let me = self.clone();
        self.inner.tracker.spawn(async move {
            loop {
                tokio::select! {
                    app = built.recv() => match app {
                        Some(app_id) => me.request_deploy(app_id),
                        None => break,
                    },
                    () = me.inner.shutdown.cancelled() => break,
                }
            }
        });
    }

    /// Deploys `app_id` from its latest builds if it is enabled and every service has a
    /// succeeded latest build (otherwise nothing happens). A pending deployment of the app
    /// is cancelled first.
    pub fn request_deploy(&self, app_id: String) {
        self.request_deploy_for(app_id, DeploymentCause::Build, None);
    }

    /// Like [`Deployer::request_deploy`], recording why and for whom (an enable).
    pub fn request_deploy_for(
        &self,
        app_id: String,
        cause: DeploymentCause,
        started_by: Option<String>,
    ) {
        let origin = Origin {
            cause,
            started_by,
            rollback_of: None,
        };
        self.spawn_deploy(app_id, Source::LatestBuilds(origin));
    }

    /// Deploys `target` (an earlier deployment of its app) again: its images and the secret
    /// versions it ran with, health-gated like any deployment (the current one keeps serving
    /// until the rollback is healthy). The caller checked it can ([`Deployer::rollback_blockers`]).
    pub fn rollback(&self, target: DeploymentRecord, started_by: Option<String>) {
        self.spawn_deploy(target.app_id.clone(), Source::Rollback(target, started_by));
    }

    /// What makes a rollback to `target` impossible, if anything: an image that is gone from
    /// the store (or no longer verifies), or a secret version that is gone. Empty means it can
    /// go ahead.
    pub async fn rollback_blockers(
        &self,
        tx: &mut crate::db::Tx,
        target: &DeploymentRecord,
    ) -> Result<Vec<String>, sqlx::Error> {
        let mut blockers = Vec::new();
        let services = deployments::services(tx, &target.id).await?;
        if services.is_empty() {
            // A git deploy whose fetch, devfile or build failed is recorded with no services.
            blockers.push("it ran nothing: it failed before any service started".to_owned());
        }
        for service in services {
            let digest = service.manifest_digest.clone();
            let data_dir = self.inner.data_dir.clone();
            let verified = tokio::task::spawn_blocking(move || {
                slipway_image::verify_image(&data_dir, &digest).map(|_| ())
            })
            .await;
            if !matches!(verified, Ok(Ok(()))) {
                blockers.push(format!(
                    "the image of service {} ({}) is no longer in the image store",
                    service.service, service.manifest_digest
                ));
            }
        }
        for used in deployments::secrets_of(tx, &target.id).await? {
            let secret = crate::store::secrets::find(tx, "app", &target.app_id, &used.path).await?;
            let kept = match &secret {
                Some(s) => crate::store::secrets::version(tx, &s.id, used.version)
                    .await?
                    .is_some(),
                None => false,
            };
            if !kept {
                blockers.push(format!(
                    "version {} of app secret {:?} (given to service {}) is gone",
                    used.version, used.path, used.service
                ));
            }
        }
        Ok(blockers)
    }

    /// Whether `app_id` can deploy now: every service of its devfile has a succeeded latest
    /// build.
    pub async fn deployable(&self, tx: &mut crate::db::Tx, app_id: &str) -> bool {
        let origin = Origin {
            cause: DeploymentCause::Enable,
            started_by: None,
            rollback_of: None,
        };
        matches!(plan_latest(tx, app_id, true, &origin).await, Ok(Some(_)))
    }

    fn spawn_deploy(&self, app_id: String, source: Source) {
        let slot = self.slot(&app_id);
        let token = self.inner.shutdown.child_token();
        let ticket = self.inner.tickets.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut pending) = slot.pending.lock()
            && let Some((_, previous)) = pending.replace((ticket, token.clone()))
        {
            previous.cancel();
        }
        let inner = Arc::clone(&self.inner);
        self.inner.tracker.spawn(async move {
            deploy(&inner, &slot, &app_id, source, &token, ticket).await;
        });
    }

    /// The scheduled jobs of the app's live deployment, each with when it is next due (epoch
    /// ms); empty when nothing runs.
    pub fn live_jobs(&self, app_id: &str) -> Vec<(slipway_devfile::jobs::JobDecl, Option<i64>)> {
        let slot = self.slot(app_id);
        let Ok(live) = slot.live.lock() else {
            return Vec::new();
        };
        live.as_ref().map_or_else(Vec::new, |l| {
            l.jobs
                .iter()
                .map(|j| {
                    let next = j.decl.next_after(jiff::Timestamp::now());
                    (j.decl.clone(), next.map(jiff::Timestamp::as_millisecond))
                })
                .collect()
        })
    }

    /// Starts a run of `job` now, in the live deployment (whatever its concurrency: asked
    /// for by hand). The run's id; the error says why there is none.
    pub async fn run_job_now(&self, app_id: &str, job: &str) -> Result<String, String> {
        let slot = self.slot(app_id);
        let found = slot.live.lock().ok().and_then(|live| {
            let live = live.as_ref()?;
            let scheduled = live.jobs.iter().find(|j| j.decl.name == job)?.clone();
            Some((live.deployment_id.clone(), scheduled))
        });
        let Some((deployment_id, scheduled)) = found else {
            return Err(format!(
                "the app has no scheduled job named {job:?} in a running deployment; list them \
                 with GET /v1/apps/{{app_id}}/jobs"
            ));
        };
        start_run(
            &self.inner,
            app_id,
            &deployment_id,
            &scheduled,
            "manual",
            None,
        )
        .await
        .ok_or_else(|| "the run could not be recorded".to_owned())
    }

    fn slot(&self, app_id: &str) -> Arc<AppSlot> {
        match self.inner.slots.lock() {
            Ok(mut slots) => Arc::clone(slots.entry(app_id.to_owned()).or_default()),
            Err(_) => Arc::new(AppSlot::default()),
        }
    }

    /// Stops `app_id`'s processes (after cancelling a pending deployment) and marks its
    /// deployments `stopped`. The app row is the caller's (disable sets `suspended`).
    pub async fn suspend(&self, app_id: &str) -> Result<(), sqlx::Error> {
        self.stop_app(app_id).await;
        let mut tx = self.inner.db.begin_write().await?;
        deployments::retire_others(
            &mut tx,
            app_id,
            None,
            DeploymentStatus::Stopped,
            Some("disabled"),
        )
        .await?;
        tx.commit().await
    }

    /// Stops everything of a deleted app and removes its unpacked images and runtime logs.
    pub async fn remove(&self, app_id: &str, deployment_ids: &[String]) {
        self.stop_app(app_id).await;
        if let Ok(mut slots) = self.inner.slots.lock() {
            slots.remove(app_id);
        }
        {
            // A build upload answering its URLs may be binding a forward of this app right
            // now: wait for it, so its listener is closed here instead of serving a deleted
            // app's name. One that comes later finds no app to record its port for.
            let _one_at_a_time = self.inner.forwarding.lock().await;
            self.close_forwards(app_id);
        }
        let runtime = Arc::clone(&self.inner.runtime);
        let id = app_id.to_owned();
        let _ = tokio::task::spawn_blocking(move || runtime.remove_app(&id)).await;
        let _ = tokio::fs::remove_dir_all(
            self.inner
                .data_dir
                .join(crate::data_dir::RUN_DIR)
                .join(app_id),
        )
        .await;
        for id in deployment_ids {
            let _ =
                tokio::fs::remove_dir_all(self.inner.data_dir.join(DEPLOYMENTS_DIR).join(id)).await;
        }
        // Its volumes' data goes with it (the delete confirmations name it).
        let _ = tokio::fs::remove_dir_all(
            self.inner
                .data_dir
                .join(crate::data_dir::VOLUMES_DIR)
                .join(app_id),
        )
        .await;
    }

    async fn stop_app(&self, app_id: &str) {
        let slot = self.slot(app_id);
        if let Ok(mut pending) = slot.pending.lock()
            && let Some((_, token)) = pending.take()
        {
            token.cancel();
        }
        let _guard = slot.lock.lock().await;
        let live = slot.live.lock().ok().and_then(|mut l| l.take());
        if let Some(live) = live {
            if let Ok(mut routes) = self.inner.routes.write() {
                routes.remove(&live.app_name);
            }
            stop_live(&self.inner, live, true).await;
        }
    }

    /// Stops every service (SIGTERM to each process group, SIGKILL after the grace) and
    /// waits for every task. Deployment rows stay as they are, so the next start brings
    /// RUNNING apps back. Then whatever the runtime still holds of this platform (container
    /// networks) is removed: a stopped platform leaves nothing in the engine.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        self.inner.tracker.close();
        self.inner.tracker.wait().await;
        let runtime = Arc::clone(&self.inner.runtime);
        let _ = tokio::task::spawn_blocking(move || runtime.reap_orphans()).await;
        // The backing servers last: every app that used them is stopped.
        self.inner.resources.services().shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependency_variables_and_gateway_urls_follow_the_documented_scheme() {
        assert_eq!(dependency_variable("api"), "API_URL");
        assert_eq!(dependency_variable("order-db"), "ORDER_DB_URL");
        assert_eq!(
            gateway_url(false, 8080, "shop", None),
            "http://shop.localhost:8080"
        );
        assert_eq!(
            gateway_url(false, 8080, "shop", Some("web")),
            "http://web.shop.localhost:8080"
        );
        assert_eq!(
            gateway_url(true, 8443, "shop", Some("web")),
            "https://web.shop.localhost:8443"
        );
    }
}
