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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use slipway_devfile::{Devfile, ServiceSpec};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use slipway_runtime::{health, process, runtime, supervisor};

use crate::db::Db;
use crate::model::{AppStatus, BuildStatus, DeploymentStatus, ServiceStatus};
use crate::store::apps;
use crate::store::builds;
use crate::store::deployments::{self, DeploymentRecord, NewService};
use crate::vault::Vault;
use runtime::{ImageRequest, Runtime};
use supervisor::{Launch, Supervised};

/// Default time a service has to answer its health check after it starts.
pub const DEFAULT_HEALTH_TIMEOUT: Duration = Duration::from_secs(120);
/// Exits during start-up that fail a deployment at once.
pub const MAX_START_EXITS: usize = 3;
/// A service without endpoints counts as healthy once it has stayed up this long.
pub const ALIVE_IS_HEALTHY_AFTER: Duration = Duration::from_secs(3);
/// How often start-up health is checked.
const POLL: Duration = Duration::from_millis(200);
/// Directory of runtime logs inside the data directory.
pub const DEPLOYMENTS_DIR: &str = "deployments";
/// The reason given to deployments a restart interrupted.
pub const RESTART_REASON: &str = "server restarted during the deployment";

/// The runtime log of one service of one deployment.
pub fn log_path(data_dir: &Path, deployment_id: &str, service: &str) -> PathBuf {
    data_dir
        .join(DEPLOYMENTS_DIR)
        .join(deployment_id)
        .join(format!("{service}.log"))
}

/// The gateway URL of an app (`service` None: its primary service).
pub fn gateway_url(port: u16, app: &str, service: Option<&str>) -> String {
    match service {
        Some(s) => format!("http://{s}.{app}.localhost:{port}"),
        None => format!("http://{app}.localhost:{port}"),
    }
}

/// The environment variable naming a dependency's base URL: upper case, `-` → `_`, `_URL`.
pub fn dependency_variable(service: &str) -> String {
    format!("{}_URL", service.to_uppercase().replace('-', "_"))
}

/// Where the gateway sends an app's traffic.
#[derive(Debug, Clone, Default)]
pub struct Routes {
    /// Service → port of its current instance.
    pub services: HashMap<String, u16>,
    /// The service `<app>.localhost` goes to (the first with a public endpoint).
    pub primary: Option<String>,
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
    gateway_port: Option<u16>,
    vault: Vault,
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
    services: Vec<LiveService>,
}

#[derive(Debug)]
struct LiveService {
    request: ImageRequest,
    supervised: Supervised,
}

/// What one deployment runs.
#[derive(Debug, Clone)]
struct Plan {
    app_id: String,
    app_name: String,
    devfile: String,
    /// Services in deploy order (dependencies first).
    order: Vec<ServiceSpec>,
    images: HashMap<String, NewService>,
}

impl Plan {
    fn primary(&self) -> Option<String> {
        let mut services: Vec<&ServiceSpec> = self.order.iter().collect();
        // Devfile order decides among equals, as the devfile lists them.
        if let Ok(devfile) = Devfile::parse(&self.devfile) {
            let names: Vec<String> = devfile.services().into_iter().map(|s| s.name).collect();
            services.sort_by_key(|s| names.iter().position(|n| *n == s.name));
        }
        services
            .iter()
            .find(|s| {
                s.endpoints
                    .iter()
                    .any(|e| e.exposure.as_deref().unwrap_or("public") == "public")
            })
            .or_else(|| services.iter().find(|s| !s.endpoints.is_empty()))
            .map(|s| s.name.clone())
    }
}

/// Why starting a deployment's services stopped.
enum Failure {
    /// Cancelled by a newer request, a disable, a delete or a shutdown.
    Cancelled,
    /// A service could not start or never became healthy.
    Failed(String),
}

impl Deployer {
    /// A deployer on `runtime`. Call [`Deployer::resume`] once to bring back what ran before
    /// a restart.
    pub fn new(
        db: Db,
        data_dir: &Path,
        runtime: Arc<dyn Runtime>,
        health_timeout: Duration,
        gateway_port: Option<u16>,
        vault: Vault,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                db,
                data_dir: data_dir.to_path_buf(),
                runtime,
                health_timeout,
                gateway_port,
                vault,
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

    /// The HTTP client the gateway proxies with.
    pub fn client(&self) -> &health::HttpClient {
        &self.inner.client
    }

    /// The runtime log of a deployment's service.
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
        self.spawn_deploy(app_id, Source::LatestBuilds);
    }

    /// Whether `app_id` can deploy now: every service of its devfile has a succeeded latest
    /// build.
    pub async fn deployable(&self, tx: &mut crate::db::Tx, app_id: &str) -> bool {
        matches!(plan_latest(tx, app_id, true).await, Ok(Some(_)))
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
        let _ = tokio::fs::remove_dir_all(self.inner.data_dir.join(process::RUN_DIR).join(app_id))
            .await;
        for id in deployment_ids {
            let _ =
                tokio::fs::remove_dir_all(self.inner.data_dir.join(DEPLOYMENTS_DIR).join(id)).await;
        }
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

    /// The port serving `service` of app `app_name` (its primary service when `None`).
    pub fn route(&self, app_name: &str, service: Option<&str>) -> Option<u16> {
        let routes = self.inner.routes.read().ok()?;
        let app = routes.get(app_name)?;
        let service = match service {
            Some(s) => s.to_owned(),
            None => app.primary.clone()?,
        };
        app.services.get(&service).copied()
    }

    /// Whether an app is called `name`.
    pub async fn app_exists(&self, name: &str) -> bool {
        async {
            let mut tx = self.inner.db.begin_read().await?;
            let found = apps::name_exists(&mut tx, name).await?;
            tx.commit().await?;
            Ok::<bool, sqlx::Error>(found)
        }
        .await
        .unwrap_or(false)
    }

    /// Stops every service (SIGTERM to each process group, SIGKILL after the grace) and
    /// waits for every task. Deployment rows stay as they are, so the next start brings
    /// RUNNING apps back.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        self.inner.tracker.close();
        self.inner.tracker.wait().await;
    }
}

/// Where a deployment's images come from.
#[derive(Debug)]
enum Source {
    /// The latest succeeded build of every service.
    LatestBuilds,
    /// The images an earlier deployment ran (redeploy after a restart).
    Deployment(DeploymentRecord),
}

async fn plan_latest(
    tx: &mut crate::db::Tx,
    app_id: &str,
    ignore_enabled: bool,
) -> Result<Option<Plan>, sqlx::Error> {
    let Some(app) = apps::get(tx, app_id).await? else {
        return Ok(None);
    };
    if !app.enabled && !ignore_enabled {
        return Ok(None);
    }
    let Some(devfile) = app.devfile.clone() else {
        return Ok(None);
    };
    let builds = builds::of_app_newest_first(tx, app_id).await?;
    let Ok(parsed) = Devfile::parse(&devfile) else {
        return Ok(None);
    };
    let mut images = HashMap::new();
    for service in parsed.services() {
        let Some(latest) = builds.iter().find(|b| b.service == service.name) else {
            return Ok(None);
        };
        match (&latest.status, &latest.manifest_digest) {
            (BuildStatus::Succeeded, Some(digest)) => {
                images.insert(
                    service.name.clone(),
                    NewService {
                        service: service.name.clone(),
                        build_id: latest.id.clone(),
                        manifest_digest: digest.clone(),
                    },
                );
            }
            _ => return Ok(None),
        }
    }
    Ok(plan_of(app.id, app.name, devfile, images))
}

fn plan_of(
    app_id: String,
    app_name: String,
    devfile: String,
    images: HashMap<String, NewService>,
) -> Option<Plan> {
    let parsed = Devfile::parse(&devfile).ok()?;
    let services = parsed.services();
    let order = parsed.deploy_order().ok()?;
    let order: Vec<ServiceSpec> = order
        .iter()
        .filter_map(|name| services.iter().find(|s| s.name == *name).cloned())
        .collect();
    if order.is_empty() || order.iter().any(|s| !images.contains_key(&s.name)) {
        return None;
    }
    Some(Plan {
        app_id,
        app_name,
        devfile,
        order,
        images,
    })
}

async fn plan_from(inner: &Inner, record: &DeploymentRecord) -> Result<Option<Plan>, sqlx::Error> {
    let mut tx = inner.db.begin_read().await?;
    let app = apps::get(&mut tx, &record.app_id).await?;
    let services = deployments::services(&mut tx, &record.id).await?;
    tx.commit().await?;
    let Some(app) = app.filter(|a| a.enabled) else {
        return Ok(None);
    };
    let images = services
        .into_iter()
        .map(|s| {
            (
                s.service.clone(),
                NewService {
                    service: s.service,
                    build_id: s.build_id,
                    manifest_digest: s.manifest_digest,
                },
            )
        })
        .collect();
    Ok(plan_of(app.id, app.name, record.devfile.clone(), images))
}

/// One deployment from plan to RUNNING (swapping out the old one) or FAILED (the old one
/// keeps serving).
async fn deploy(
    inner: &Arc<Inner>,
    slot: &Arc<AppSlot>,
    app_id: &str,
    source: Source,
    token: &CancellationToken,
    ticket: u64,
) {
    let _guard = tokio::select! {
        guard = slot.lock.lock() => guard,
        () = token.cancelled() => return,
    };
    let planned = match &source {
        Source::LatestBuilds => {
            async {
                let mut tx = inner.db.begin_read().await?;
                let plan = plan_latest(&mut tx, app_id, false).await?;
                tx.commit().await?;
                Ok(plan)
            }
            .await
        }
        Source::Deployment(record) => plan_from(inner, record).await,
    };
    let plan = match planned {
        Ok(Some(plan)) => plan,
        Ok(None) => return,
        Err(e) => {
            tracing::error!(app_id, error = %e, "cannot plan a deployment");
            return;
        }
    };
    if token.is_cancelled() {
        return;
    }
    let images: Vec<NewService> = plan
        .order
        .iter()
        .filter_map(|s| plan.images.get(&s.name).cloned())
        .collect();
    let created = async {
        let mut tx = inner.db.begin_write().await?;
        let id = deployments::create(&mut tx, app_id, &plan.devfile, &images).await?;
        apps::set_status(&mut tx, app_id, AppStatus::Deploying, None).await?;
        tx.commit().await?;
        Ok::<String, sqlx::Error>(id)
    }
    .await;
    let deployment_id = match created {
        Ok(id) => id,
        Err(e) => {
            // The app was deleted meanwhile, or the database is unreachable.
            tracing::warn!(app_id, error = %e, "cannot record a deployment");
            return;
        }
    };
    tracing::info!(app_id, deployment_id, "deployment started");
    let mut started = Vec::new();
    let outcome = start_services(inner, &plan, &deployment_id, token, &mut started).await;
    match outcome {
        Ok(()) => {
            let url = inner
                .gateway_port
                .map(|port| gateway_url(port, &plan.app_name, None));
            let recorded = async {
                let mut tx = inner.db.begin_write().await?;
                deployments::finish(&mut tx, &deployment_id, DeploymentStatus::Running, None)
                    .await?;
                deployments::retire_others(
                    &mut tx,
                    app_id,
                    Some(&deployment_id),
                    DeploymentStatus::Superseded,
                    None,
                )
                .await?;
                apps::set_status(&mut tx, app_id, AppStatus::Running, url.as_deref()).await?;
                tx.commit().await
            }
            .await;
            if let Err(e) = recorded {
                tracing::error!(app_id, error = %e, "cannot record a healthy deployment");
            }
            let routes = Routes {
                services: started
                    .iter()
                    .filter_map(|s: &(LiveService, Option<u16>)| {
                        Some((s.0.request.service.clone(), s.1?))
                    })
                    .collect(),
                primary: plan.primary(),
            };
            let watchers: Vec<(String, supervisor::Watcher)> = started
                .iter()
                .map(|(s, _)| (s.request.service.clone(), s.supervised.watcher()))
                .collect();
            let live = Live {
                deployment_id: deployment_id.clone(),
                app_name: plan.app_name.clone(),
                services: started.into_iter().map(|(s, _)| s).collect(),
            };
            let old = slot.live.lock().ok().and_then(|mut l| l.replace(live));
            if let Ok(mut r) = inner.routes.write() {
                r.insert(plan.app_name.clone(), routes);
            }
            if let Some(old) = old {
                stop_live(inner, old, true).await;
            }
            watch_crashes(inner, slot, app_id, &deployment_id, watchers);
            tracing::info!(app_id, deployment_id, "deployment RUNNING");
        }
        Err(failure) => {
            let live: Vec<LiveService> = started.into_iter().map(|(s, _)| s).collect();
            stop_live(
                inner,
                Live {
                    deployment_id: deployment_id.clone(),
                    app_name: plan.app_name.clone(),
                    services: live,
                },
                !inner.shutdown.is_cancelled(),
            )
            .await;
            if inner.shutdown.is_cancelled() {
                // Left `deploying`: the next start fails it and deploys again.
                return;
            }
            let has_live = slot.live.lock().map(|l| l.is_some()).unwrap_or(false);
            let recorded = async {
                let mut tx = inner.db.begin_write().await?;
                match &failure {
                    Failure::Cancelled => {
                        deployments::finish(
                            &mut tx,
                            &deployment_id,
                            DeploymentStatus::Stopped,
                            Some("cancelled by a newer deployment, a disable or a delete"),
                        )
                        .await?;
                    }
                    Failure::Failed(reason) => {
                        deployments::finish(
                            &mut tx,
                            &deployment_id,
                            DeploymentStatus::Failed,
                            Some(reason),
                        )
                        .await?;
                        if has_live {
                            apps::set_status(&mut tx, app_id, AppStatus::Running, None).await?;
                        } else {
                            deployments::retire_others(
                                &mut tx,
                                app_id,
                                None,
                                DeploymentStatus::Stopped,
                                Some("a newer deployment failed while nothing was serving"),
                            )
                            .await?;
                            apps::set_status(&mut tx, app_id, AppStatus::Failed, None).await?;
                        }
                    }
                }
                tx.commit().await
            }
            .await;
            if let Err(e) = recorded {
                tracing::error!(app_id, error = %e, "cannot record a deployment's end");
            }
            if let Failure::Failed(reason) = &failure {
                tracing::warn!(app_id, deployment_id, %reason, "deployment FAILED");
            }
        }
    }
    if let Ok(mut pending) = slot.pending.lock()
        && pending.as_ref().is_some_and(|(id, _)| *id == ticket)
    {
        pending.take();
    }
}

/// Watches the services of a deployment that just became RUNNING: when the supervisor gives
/// up on one, [`crash_looped`] fails the deployment. A watcher whose service is stopped (a
/// replacement, a disable, a shutdown) ends without doing anything.
fn watch_crashes(
    inner: &Arc<Inner>,
    slot: &Arc<AppSlot>,
    app_id: &str,
    deployment_id: &str,
    watchers: Vec<(String, supervisor::Watcher)>,
) {
    for (service, watcher) in watchers {
        let (task_inner, slot) = (Arc::clone(inner), Arc::clone(slot));
        let (app_id, deployment_id) = (app_id.to_owned(), deployment_id.to_owned());
        inner.tracker.spawn(async move {
            let inner = task_inner;
            if let Some(reason) = watcher.gave_up().await {
                crash_looped(&inner, &slot, &app_id, &deployment_id, &service, &reason).await;
            }
        });
    }
}

/// A service of the RUNNING deployment `deployment_id` kept crashing: unless that deployment
/// was replaced meanwhile, its other services are stopped, its routes removed, the
/// deployment and the app become FAILED with `reason` and the last lines of the service's
/// log, and the service `failed`. The app stays FAILED (not restarted at the next server
/// start) until a new build or an enable deploys it again.
async fn crash_looped(
    inner: &Arc<Inner>,
    slot: &AppSlot,
    app_id: &str,
    deployment_id: &str,
    service: &str,
    reason: &str,
) {
    let _guard = slot.lock.lock().await;
    let live = slot.live.lock().ok().and_then(|mut live| {
        if live
            .as_ref()
            .is_some_and(|l| l.deployment_id == deployment_id)
        {
            live.take()
        } else {
            None
        }
    });
    let Some(live) = live else {
        return;
    };
    if let Ok(mut routes) = inner.routes.write() {
        routes.remove(&live.app_name);
    }
    stop_live(inner, live, true).await;
    let log = log_path(&inner.data_dir, deployment_id, service);
    let reason = format!(
        "{reason} after the deployment was RUNNING; last log lines:\n{}",
        tail(&log, 10)
    );
    let recorded = async {
        let mut tx = inner.db.begin_write().await?;
        deployments::set_service_status(&mut tx, deployment_id, service, ServiceStatus::Failed)
            .await?;
        deployments::finish(
            &mut tx,
            deployment_id,
            DeploymentStatus::Failed,
            Some(&reason),
        )
        .await?;
        apps::set_status(&mut tx, app_id, AppStatus::Failed, None).await?;
        tx.commit().await
    }
    .await;
    if let Err(e) = recorded {
        tracing::error!(app_id, error = %e, "cannot record a crash-looping deployment");
    }
    tracing::warn!(app_id, deployment_id, service, %reason, "deployment FAILED");
}

/// Prepares and starts every service in order, each healthy before the next; what started
/// is pushed to `started` (with its port) so the caller can stop it on failure.
async fn start_services(
    inner: &Arc<Inner>,
    plan: &Plan,
    deployment_id: &str,
    token: &CancellationToken,
    started: &mut Vec<(LiveService, Option<u16>)>,
) -> Result<(), Failure> {
    let mut ports: HashMap<String, u16> = HashMap::new();
    for spec in &plan.order {
        let image = &plan.images[&spec.name];
        let request = ImageRequest {
            app_id: plan.app_id.clone(),
            service: spec.name.clone(),
            deployment_id: deployment_id.to_owned(),
            digest: image.manifest_digest.clone(),
        };
        let runtime = Arc::clone(&inner.runtime);
        let req = request.clone();
        let prepared = tokio::task::spawn_blocking(move || runtime.prepare(&req))
            .await
            .map_err(|e| Failure::Failed(format!("service {}: {e}", spec.name)))?;
        let prepared = match prepared {
            Ok(p) => p,
            Err(e) => {
                mark_service(inner, deployment_id, &spec.name, ServiceStatus::Failed).await;
                return Err(Failure::Failed(format!(
                    "service {} was refused: {e}",
                    spec.name
                )));
            }
        };
        let port = free_port()
            .map_err(|e| Failure::Failed(format!("no free port for service {}: {e}", spec.name)))?;
        let mut env = vec![("PORT".to_owned(), port.to_string())];
        for dep in &spec.depends_on {
            if let Some(p) = ports.get(dep) {
                env.push((
                    dependency_variable(dep),
                    inner.runtime.dependency_url(dep, *p),
                ));
            }
        }
        // The app's secrets go first; what the platform sets (PORT, <DEP>_URL) wins.
        let secret_env = crate::vault::env::for_service(
            &inner.db,
            &inner.vault,
            &plan.app_id,
            &spec.name,
            &spec.secrets,
        )
        .await
        .map_err(Failure::Failed)?;
        let mut with_secrets: Vec<(String, String)> = secret_env
            .into_iter()
            .filter(|(name, _)| env.iter().all(|(own, _)| own != name))
            .collect();
        with_secrets.extend(env);
        let env = with_secrets;
        let log = log_path(&inner.data_dir, deployment_id, &spec.name);
        let recorded = async {
            let mut tx = inner.db.begin_write().await?;
            deployments::service_started(&mut tx, deployment_id, &spec.name, Some(port)).await?;
            tx.commit().await
        }
        .await;
        if let Err(e) = recorded {
            tracing::warn!(deployment_id, error = %e, "cannot record a service start");
        }
        let supervised = supervisor::spawn(
            Arc::clone(&inner.runtime),
            Launch {
                image: prepared,
                env,
                log: log.clone(),
                service: spec.name.clone(),
            },
            // Children of the shutdown token, not of this deployment's: cancelling a
            // deployment after it went live (a newer build arriving) must not stop it.
            &inner.shutdown,
            &inner.tracker,
        );
        let state = Arc::clone(&supervised.state);
        started.push((
            LiveService {
                request,
                supervised,
            },
            Some(port),
        ));
        let result = wait_healthy(inner, spec, port, &state, &log, token).await;
        match &result {
            Ok(()) => {
                mark_service(inner, deployment_id, &spec.name, ServiceStatus::Healthy).await;
            }
            Err(Failure::Failed(_)) => {
                mark_service(inner, deployment_id, &spec.name, ServiceStatus::Failed).await;
            }
            Err(Failure::Cancelled) => {}
        }
        result?;
        ports.insert(spec.name.clone(), port);
    }
    Ok(())
}

async fn mark_service(
    inner: &Inner,
    deployment_id: &str,
    service: &str,
    new_status: ServiceStatus,
) {
    let done = async {
        let mut tx = inner.db.begin_write().await?;
        deployments::set_service_status(&mut tx, deployment_id, service, new_status).await?;
        tx.commit().await
    }
    .await;
    if let Err(e) = done {
        tracing::warn!(deployment_id, service, error = %e, "cannot record a service status");
    }
}

/// Waits until `spec` answers its health check (or, without endpoints, stays up for
/// [`ALIVE_IS_HEALTHY_AFTER`]); fails when it exits [`MAX_START_EXITS`] times or the health
/// timeout passes.
async fn wait_healthy(
    inner: &Inner,
    spec: &ServiceSpec,
    port: u16,
    state: &Arc<Mutex<supervisor::ServiceState>>,
    log: &Path,
    token: &CancellationToken,
) -> Result<(), Failure> {
    let deadline = Instant::now() + inner.health_timeout;
    loop {
        let snapshot = state.lock().map(|s| s.clone()).unwrap_or_default();
        if snapshot.exits.len() >= MAX_START_EXITS {
            let last = snapshot
                .exits
                .last()
                .map_or_else(String::new, |(_, e)| e.description.clone());
            return Err(Failure::Failed(format!(
                "service {} exited {} times while starting (last: {last}); last log lines:\n{}",
                spec.name,
                snapshot.exits.len(),
                tail(log, 10)
            )));
        }
        if let Some(since) = snapshot.running_since {
            let healthy = if spec.endpoints.is_empty() {
                since.elapsed() >= ALIVE_IS_HEALTHY_AFTER
            } else {
                health::probe(&inner.client, port, &spec.health_path).await
            };
            if healthy {
                return Ok(());
            }
        }
        if Instant::now() >= deadline {
            return Err(Failure::Failed(format!(
                "service {} did not answer GET {} with 2xx/3xx within {} s; last log lines:\n{}",
                spec.name,
                spec.health_path,
                inner.health_timeout.as_secs(),
                tail(log, 10)
            )));
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = token.cancelled() => return Err(Failure::Cancelled),
        }
    }
}

/// The last `lines` lines of a log (at most 4 KiB), for failure reasons.
fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let start = text.len().saturating_sub(4096);
    let text = String::from_utf8_lossy(&text[start..]);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

async fn stop_live(inner: &Inner, live: Live, discard: bool) {
    for service in live.services.iter().rev() {
        service.supervised.stop().await;
    }
    if discard {
        let runtime = Arc::clone(&inner.runtime);
        let requests: Vec<ImageRequest> = live.services.iter().map(|s| s.request.clone()).collect();
        let _ = tokio::task::spawn_blocking(move || {
            for r in &requests {
                runtime.discard(r);
            }
        })
        .await;
    }
}

/// A port nobody listens on now, for a service's `PORT`.
fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependency_variables_and_gateway_urls_follow_the_documented_scheme() {
        assert_eq!(dependency_variable("api"), "API_URL");
        assert_eq!(dependency_variable("order-db"), "ORDER_DB_URL");
        assert_eq!(
            gateway_url(8080, "shop", None),
            "http://shop.localhost:8080"
        );
        assert_eq!(
            gateway_url(8080, "shop", Some("web")),
            "http://web.shop.localhost:8080"
        );
    }
}
