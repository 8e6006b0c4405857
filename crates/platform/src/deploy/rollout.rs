//! One deployment from plan to RUNNING or FAILED: services started in order, each healthy
//! before the next, the new deployment swapped in only when all are, and everything it
//! started stopped again when it fails (the old deployment keeps serving meanwhile).

use super::*;

/// Why starting a deployment's services stopped.
pub(super) enum Failure {
    /// Cancelled by a newer request, a disable, a delete or a shutdown.
    Cancelled,
    /// A service could not start or never became healthy.
    Failed(String),
}

/// One deployment from plan to RUNNING (swapping out the old one) or FAILED (the old one
/// keeps serving).
pub(super) async fn deploy(
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
    let Some(plan) = plan_deployment(inner, app_id, &source).await else {
        return;
    };
    if token.is_cancelled() {
        return;
    }
    let Some(deployment_id) = record_start(inner, app_id, &plan).await else {
        return;
    };
    tracing::info!(app_id, deployment_id, "deployment started");
    let mut started = Vec::new();
    let previous = live_services(slot);
    let reconciled = match slipway_devfile::Devfile::parse(&plan.devfile) {
        Ok(devfile) => inner.resources.reconcile(app_id, &devfile).await,
        Err(e) => Err(format!("the deployment's devfile cannot be read: {e}")),
    };
    let outcome = match reconciled {
        Ok(binding) => {
            start_services(
                inner,
                &plan,
                &deployment_id,
                token,
                &previous,
                &binding,
                &mut started,
            )
            .await
        }
        Err(reason) => Err(Failure::Failed(reason)),
    };
    let outcome = match outcome {
        Ok(()) => register_durable(inner, app_id, &plan, &started)
            .await
            .map_err(Failure::Failed),
        failed => failed,
    };
    drop(previous);
    match outcome {
        Ok(()) => swap_in(inner, slot, app_id, &plan, &deployment_id, started).await,
        Err(failure) => {
            stop_started(inner, &plan, &deployment_id, started).await;
            if inner.shutdown.is_cancelled() {
                // Left `deploying`: the next start fails it and deploys again.
                return;
            }
            record_failure(inner, slot, app_id, &deployment_id, &failure).await;
        }
    }
    if let Ok(mut pending) = slot.pending.lock()
        && pending.as_ref().is_some_and(|(id, _)| *id == ticket)
    {
        pending.take();
    }
}

/// Registers the durable service's new instance with the app's Restate server, when the
/// devfile has a `durable` block: Restate discovers its handlers and sends new invocations
/// there. Before the swap, so a registration that fails leaves the serving deployment (and
/// Restate's routes to it) as they were.
async fn register_durable(
    inner: &Arc<Inner>,
    app_id: &str,
    plan: &Plan,
    started: &[Started],
) -> Result<(), String> {
    let Some(durable) = slipway_devfile::Devfile::parse(&plan.devfile)
        .ok()
        .and_then(|d| d.metadata.platform.durable)
    else {
        return Ok(());
    };
    let port = started
        .iter()
        .find(|s| s.service.request.service == durable.service)
        .map(|s| s.service.port)
        .ok_or_else(|| {
            format!(
                "metadata.platform.durable.service: {:?} is not one of the deployed services",
                durable.service
            )
        })?;
    let path = durable.path.as_deref().unwrap_or("/");
    let uri = format!("http://127.0.0.1:{port}{path}");
    let registered = inner
        .resources
        .register_durable(app_id, &durable.service, &uri)
        .await?;
    tracing::info!(app_id, deployment = %registered.id, services = ?registered.services.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), "durable service registered with Restate");
    Ok(())
}

/// What the deployment runs, from `source`; `None` when there is nothing to deploy (the app
/// is disabled or gone, a service has no succeeded build) or the database failed (logged).
async fn plan_deployment(inner: &Arc<Inner>, app_id: &str, source: &Source) -> Option<Plan> {
    let planned = match source {
        Source::LatestBuilds(origin) => {
            async {
                let mut tx = inner.db.begin_read().await?;
                let plan = plan_latest(&mut tx, app_id, false, origin).await?;
                tx.commit().await?;
                Ok(plan)
            }
            .await
        }
        Source::Deployment(record) => {
            let origin = Origin {
                cause: DeploymentCause::Restart,
                started_by: None,
                rollback_of: None,
            };
            plan_from(inner, record, origin).await
        }
        Source::Rollback(record, by) => {
            let origin = Origin {
                cause: DeploymentCause::Rollback,
                started_by: by.clone(),
                rollback_of: Some(record.id.clone()),
            };
            plan_from(inner, record, origin).await
        }
    };
    planned.unwrap_or_else(|e| {
        tracing::error!(app_id, error = %e, "cannot plan a deployment");
        None
    })
}

/// Records the deployment (its services and their images) and the app `deploying`; returns
/// the deployment's id, or `None` when that failed (logged).
async fn record_start(inner: &Inner, app_id: &str, plan: &Plan) -> Option<String> {
    let images: Vec<NewService> = plan
        .order
        .iter()
        .filter_map(|s| plan.images.get(&s.name).cloned())
        .collect();
    let created = async {
        let mut tx = inner.db.begin_write().await?;
        let id = deployments::create(&mut tx, app_id, &plan.devfile, &images, &plan.origin).await?;
        apps::set_status(&mut tx, app_id, AppStatus::Deploying, None).await?;
        tx.commit().await?;
        Ok::<String, sqlx::Error>(id)
    }
    .await;
    match created {
        Ok(id) => Some(id),
        Err(e) => {
            // The app was deleted meanwhile, or the database is unreachable.
            tracing::warn!(app_id, error = %e, "cannot record a deployment");
            None
        }
    }
}

/// The services of the deployment serving now (none when nothing serves).
fn live_services(slot: &AppSlot) -> Vec<Arc<LiveService>> {
    slot.live
        .lock()
        .ok()
        .and_then(|l| l.as_ref().map(|l| l.services.clone()))
        .unwrap_or_default()
}

/// Every service is healthy: the gateway routes to them, the deployment is recorded RUNNING
/// (the others superseded), it replaces the live deployment (whose instances it did not keep
/// are stopped) and its services' crashes are watched from now on.
async fn swap_in(
    inner: &Arc<Inner>,
    slot: &Arc<AppSlot>,
    app_id: &str,
    plan: &Plan,
    deployment_id: &str,
    started: Vec<Started>,
) {
    let url = app_url(inner, plan).await;
    // The gateway routes to the new instances before the deployment is recorded
    // RUNNING: whoever reads RUNNING reaches what it runs.
    let routes = routes_of(plan, &started);
    if let Ok(mut r) = inner.routes.write() {
        r.insert(plan.app_name.clone(), routes);
    }
    record_running(inner, app_id, deployment_id, url.as_deref()).await;
    let watchers: Vec<(String, supervisor::Watcher)> = started
        .iter()
        .map(|s| {
            (
                s.service.request.service.clone(),
                s.service.supervised.watcher(),
            )
        })
        .collect();
    let watched = watched(plan, &started);
    let jobs = scheduled(plan, &started);
    let live = Live {
        deployment_id: deployment_id.to_owned(),
        app_name: plan.app_name.clone(),
        services: started.into_iter().map(|s| s.service).collect(),
        jobs: Vec::new(),
    };
    replace_live(inner, slot, live).await;
    remove_old_ephemeral(inner, app_id, deployment_id).await;
    watch_crashes(inner, slot, app_id, deployment_id, watchers);
    watch_health(inner, slot, app_id, deployment_id, watched);
    schedule_jobs(inner, slot, app_id, deployment_id, jobs);
    tracing::info!(app_id, deployment_id, "deployment RUNNING");
}

/// Removes the ephemeral volumes of the app's earlier deployments, whose services have just
/// stopped: an ephemeral volume lives as long as its deployment.
async fn remove_old_ephemeral(inner: &Inner, app_id: &str, deployment_id: &str) {
    let dir = inner
        .data_dir
        .join(crate::data_dir::VOLUMES_DIR)
        .join(app_id)
        .join(crate::data_dir::EPHEMERAL_DIR);
    let keep = deployment_id.to_owned();
    let _ = tokio::task::spawn_blocking(move || {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            if entry.file_name() != keep.as_str()
                && let Err(e) = std::fs::remove_dir_all(entry.path())
            {
                tracing::warn!(path = %entry.path().display(), error = %e, "cannot remove an ephemeral volume");
            }
        }
    })
    .await;
}

/// The gateway's routes to the started services. Only public services are reachable from
/// outside the app; internal ones answer their dependents only (`<DEP>_URL`).
fn routes_of(plan: &Plan, started: &[Started]) -> Routes {
    let public: Vec<&str> = plan
        .order
        .iter()
        .filter(|s| s.is_public())
        .map(|s| s.name.as_str())
        .collect();
    Routes {
        services: started
            .iter()
            .filter(|s| public.contains(&s.service.request.service.as_str()))
            .map(|s| (s.service.request.service.clone(), s.service.port))
            .collect(),
        primary: plan.primary(),
    }
}

/// Records the deployment RUNNING, the app's other deployments superseded and the app
/// running at `url` (a failure is logged: the deployment serves anyway).
async fn record_running(inner: &Inner, app_id: &str, deployment_id: &str, url: Option<&str>) {
    let recorded = async {
        let mut tx = inner.db.begin_write().await?;
        let recovered = recovers(&mut tx, app_id, deployment_id).await?;
        deployments::finish(&mut tx, deployment_id, DeploymentStatus::Running, None).await?;
        deployments::retire_others(
            &mut tx,
            app_id,
            Some(deployment_id),
            DeploymentStatus::Superseded,
            None,
        )
        .await?;
        apps::set_status(&mut tx, app_id, AppStatus::Running, url).await?;
        if recovered {
            events::enqueue(
                &mut tx,
                EventKind::DeploymentRecovered,
                Some(app_id),
                None,
                None,
            )
            .await?;
        }
        tx.commit().await
    }
    .await;
    if let Err(e) = recorded {
        tracing::error!(app_id, error = %e, "cannot record a healthy deployment");
    }
}

/// Whether `deployment_id` going live makes the app serve again after it failed: nothing
/// else of the app is RUNNING and its newest other deployment that ended FAILED (a failed
/// start with nothing serving, or a crash loop). Not after a suspend, nor after a failed
/// deployment while the older one kept serving.
async fn recovers(
    tx: &mut crate::db::Tx,
    app_id: &str,
    deployment_id: &str,
) -> Result<bool, sqlx::Error> {
    let others: Vec<DeploymentRecord> = deployments::of_app_newest_first(tx, app_id)
        .await?
        .into_iter()
        .filter(|d| d.id != deployment_id && d.status != DeploymentStatus::Deploying)
        .collect();
    Ok(
        !others.iter().any(|d| d.status == DeploymentStatus::Running)
            && others
                .first()
                .is_some_and(|d| d.status == DeploymentStatus::Failed),
    )
}

/// Makes `live` the deployment serving now and stops the one it replaces, except the
/// instances `live` kept.
async fn replace_live(inner: &Inner, slot: &AppSlot, live: Live) {
    let kept = live.services.clone();
    let old = slot.live.lock().ok().and_then(|mut l| l.replace(live));
    if let Some(mut old) = old {
        // What the new deployment kept running is its now, not the old one's to stop.
        old.services
            .retain(|s| !kept.iter().any(|k| Arc::ptr_eq(k, s)));
        stop_live(inner, old, true).await;
    }
}

/// Stops what a failed deployment started (discarding it unless the server is shutting
/// down); instances kept from the live deployment go on serving it.
async fn stop_started(inner: &Inner, plan: &Plan, deployment_id: &str, started: Vec<Started>) {
    let live: Vec<Arc<LiveService>> = started
        .into_iter()
        .filter(|s| !s.kept)
        .map(|s| s.service)
        .collect();
    stop_live(
        inner,
        Live {
            deployment_id: deployment_id.to_owned(),
            app_name: plan.app_name.clone(),
            services: live,
            jobs: Vec::new(),
        },
        !inner.shutdown.is_cancelled(),
    )
    .await;
}

/// Records how a deployment that did not go live ended: STOPPED when cancelled; FAILED
/// otherwise, the app back to running when a deployment still serves, else the app FAILED
/// and its older deployments stopped.
async fn record_failure(
    inner: &Inner,
    slot: &AppSlot,
    app_id: &str,
    deployment_id: &str,
    failure: &Failure,
) {
    let has_live = slot.live.lock().map(|l| l.is_some()).unwrap_or(false);
    let recorded = async {
        let mut tx = inner.db.begin_write().await?;
        match failure {
            Failure::Cancelled => {
                deployments::finish(
                    &mut tx,
                    deployment_id,
                    DeploymentStatus::Stopped,
                    Some("cancelled by a newer deployment, a disable or a delete"),
                )
                .await?;
            }
            Failure::Failed(reason) => {
                deployments::finish(
                    &mut tx,
                    deployment_id,
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
                events::enqueue(
                    &mut tx,
                    EventKind::DeploymentFailed,
                    Some(app_id),
                    None,
                    Some(reason),
                )
                .await?;
            }
        }
        tx.commit().await
    }
    .await;
    if let Err(e) = recorded {
        tracing::error!(app_id, error = %e, "cannot record a deployment's end");
    }
    if let Failure::Failed(reason) = failure {
        tracing::warn!(app_id, deployment_id, %reason, "deployment FAILED");
    }
}

/// The app's URL once `plan` runs: in the `ports` mode its primary service's loopback port
/// (every public service gets its port now), else its gateway host.
async fn app_url(inner: &Arc<Inner>, plan: &Plan) -> Option<String> {
    let deployer = Deployer {
        inner: Arc::clone(inner),
    };
    // Devfile order decides which public service is the app's, as at the build upload.
    let services = Devfile::parse(&plan.devfile)
        .map(|d| d.services())
        .unwrap_or_else(|_| plan.order.clone());
    deployer
        .public_urls(&plan.app_id, &plan.app_name, &services)
        .await
        .app_url
}

/// A service of a deployment being started.
pub(super) struct Started {
    pub(super) service: Arc<LiveService>,
    /// True when it is the live deployment's instance, kept because nothing it runs changed.
    kept: bool,
}

/// Prepares and starts every service in order, each healthy before the next; what started
/// is pushed to `started` so the caller can stop it on failure. A service whose image and
/// environment (its secrets and its dependencies' URLs included) are those of its instance in
/// the live deployment (`previous`) keeps that instance: only what changed is redeployed.
pub(super) async fn start_services(
    inner: &Arc<Inner>,
    plan: &Plan,
    deployment_id: &str,
    token: &CancellationToken,
    previous: &[Arc<LiveService>],
    binding: &crate::resources::Binding,
    started: &mut Vec<Started>,
) -> Result<(), Failure> {
    let mut ports: HashMap<String, u16> = HashMap::new();
    for spec in &plan.order {
        let image = &plan.images[&spec.name];
        let request = image_request(inner, plan, spec, deployment_id, image);
        let env = service_env(inner, plan, spec, deployment_id, &ports, binding).await?;
        let run = ServiceRun {
            request,
            config: config_digest(&image.manifest_digest, &env),
            env,
            log: log_path(&inner.data_dir, deployment_id, &spec.name),
        };
        let port = if let Some(kept) = unchanged_instance(previous, spec, &run) {
            keep_instance(inner, deployment_id, &spec.name, kept, &run.log).await;
            started.push(Started {
                service: Arc::clone(kept),
                kept: true,
            });
            kept.port
        } else {
            start_service(inner, spec, deployment_id, run, token, started).await?
        };
        ports.insert(spec.name.clone(), port);
    }
    Ok(())
}

/// What one service of a deployment runs.
struct ServiceRun {
    request: ImageRequest,
    /// Its environment, without `PORT`.
    env: Vec<(String, String)>,
    /// See `LiveService::config`.
    config: [u8; 32],
    /// Its runtime log.
    log: PathBuf,
}

/// The runtime's request for `spec`'s image, with its limits (the devfile's, else the
/// platform's defaults).
fn image_request(
    inner: &Inner,
    plan: &Plan,
    spec: &ServiceSpec,
    deployment_id: &str,
    image: &NewService,
) -> ImageRequest {
    ImageRequest {
        app_id: plan.app_id.clone(),
        service: spec.name.clone(),
        deployment_id: deployment_id.to_owned(),
        digest: image.manifest_digest.clone(),
        limits: runtime::Limits {
            memory_bytes: spec.memory_limit.or(inner.default_limits.memory_bytes),
            cpu_millis: spec.cpu_limit.or(inner.default_limits.cpu_millis),
        },
        volumes: volume_mounts(inner, plan, spec, deployment_id),
    }
}

/// The volumes `spec` mounts, each in its app's directory of the data directory
/// (`volumes/<app>/<name>`), so it outlives deployments, rollbacks and restarts; an
/// `ephemeral` one in a directory of the deployment's own, empty on each deploy.
fn volume_mounts(
    inner: &Inner,
    plan: &Plan,
    spec: &ServiceSpec,
    deployment_id: &str,
) -> Vec<runtime::VolumeMount> {
    let declared = slipway_devfile::Devfile::parse(&plan.devfile)
        .map(|d| d.volumes())
        .unwrap_or_default();
    let app_dir = inner
        .data_dir
        .join(crate::data_dir::VOLUMES_DIR)
        .join(&plan.app_id);
    spec.volume_mounts
        .iter()
        .map(|m| {
            let ephemeral = declared.iter().any(|v| v.name == m.name && v.ephemeral);
            let host = if ephemeral {
                app_dir
                    .join(crate::data_dir::EPHEMERAL_DIR)
                    .join(deployment_id)
                    .join(&m.name)
            } else {
                app_dir.join(&m.name)
            };
            runtime::VolumeMount {
                name: m.name.clone(),
                host,
                path: m.path.clone(),
            }
        })
        .collect()
}

/// `spec`'s environment without `PORT`: the devfile's `env`, the app's secrets (whose
/// versions are recorded with the deployment) and its dependencies' URLs (`ports` holds
/// where the started ones listen).
async fn service_env(
    inner: &Inner,
    plan: &Plan,
    spec: &ServiceSpec,
    deployment_id: &str,
    ports: &HashMap<String, u16>,
    binding: &crate::resources::Binding,
) -> Result<Vec<(String, String)>, Failure> {
    let mut env = Vec::new();
    for dep in &spec.depends_on {
        if let Some(p) = ports.get(dep) {
            env.push((
                dependency_variable(dep),
                inner.runtime.dependency_url(dep, *p),
            ));
        }
    }
    // The app's secrets go first; what the platform sets (PORT, <DEP>_URL) wins.
    let pinned = plan
        .pinned_secrets
        .as_ref()
        .map(|by_service| by_service.get(&spec.name).cloned().unwrap_or_default());
    let secrets = crate::vault::env::for_service(
        &inner.db,
        &inner.vault,
        &plan.app_id,
        &spec.name,
        &spec.secrets,
        pinned.as_ref(),
    )
    .await
    .map_err(Failure::Failed)?;
    let mut used = secrets.used;
    let mut app_set = secrets.env;
    // The resources' variables come after the app's own secrets: the platform keeps them.
    if let Some(version) = binding.version {
        used.push((crate::resources::BINDING_PATH.to_owned(), version));
        app_set.retain(|(name, _)| !binding.env.iter().any(|(n, _)| n == name));
        app_set.extend(binding.env.iter().cloned());
    }
    record_secret_versions(inner, deployment_id, &spec.name, &used).await?;
    Ok(layered_env(spec, app_set, env))
}

/// Records which version of each secret `service` of the deployment runs with (a rollback
/// gives it those again).
async fn record_secret_versions(
    inner: &Inner,
    deployment_id: &str,
    service: &str,
    used: &[(String, i64)],
) -> Result<(), Failure> {
    let recorded = async {
        let mut tx = inner.db.begin_write().await?;
        for (path, version) in used {
            deployments::record_secret(&mut tx, deployment_id, service, path, *version).await?;
        }
        tx.commit().await
    }
    .await;
    recorded.map_err(|e| {
        Failure::Failed(format!(
            "cannot record the secret versions of service {service}: {e}"
        ))
    })
}

/// The devfile's `env` first (every builder's image gets it, not only the native
/// builder's), then the app's secrets, then what the platform sets: a later source
/// wins over an earlier one of the same name. `PORT` is the platform's alone.
fn layered_env(
    spec: &ServiceSpec,
    secrets: Vec<(String, String)>,
    platform: Vec<(String, String)>,
) -> Vec<(String, String)> {
    let mut layered: Vec<(String, String)> = Vec::new();
    let declared = spec.env.iter().map(|v| (v.name.clone(), v.value.clone()));
    let app_set = declared.chain(secrets).filter(|(name, _)| name != "PORT");
    for (name, value) in app_set.chain(platform) {
        layered.retain(|(n, _)| *n != name);
        layered.push((name, value));
    }
    layered
}

/// The live deployment's instance of `spec` when it runs exactly `run` (same image,
/// environment and limits): the new deployment keeps it.
fn unchanged_instance<'a>(
    previous: &'a [Arc<LiveService>],
    spec: &ServiceSpec,
    run: &ServiceRun,
) -> Option<&'a Arc<LiveService>> {
    previous.iter().find(|s| {
        s.request.service == spec.name
            && s.config == run.config
            && s.request.limits == run.request.limits
    })
}

/// Starts a new instance of `spec` on a free port (pushed to `started`) and waits until it
/// is healthy; returns its port.
async fn start_service(
    inner: &Arc<Inner>,
    spec: &ServiceSpec,
    deployment_id: &str,
    run: ServiceRun,
    token: &CancellationToken,
    started: &mut Vec<Started>,
) -> Result<u16, Failure> {
    let ServiceRun {
        request,
        mut env,
        config,
        log,
    } = run;
    let prepared = prepare_image(inner, spec, deployment_id, &request).await?;
    let port = free_port()
        .map_err(|e| Failure::Failed(format!("no free port for service {}: {e}", spec.name)))?;
    env.push(("PORT".to_owned(), port.to_string()));
    let recorded = async {
        let mut tx = inner.db.begin_write().await?;
        deployments::service_started(&mut tx, deployment_id, &spec.name, Some(port)).await?;
        tx.commit().await
    }
    .await;
    if let Err(e) = recorded {
        tracing::warn!(deployment_id, error = %e, "cannot record a service start");
    }
    let launch = Launch {
        image: prepared,
        env,
        log: log.clone(),
        service: spec.name.clone(),
    };
    let supervised = supervisor::spawn(
        Arc::clone(&inner.runtime),
        launch.clone(),
        // Children of the shutdown token, not of this deployment's: cancelling a
        // deployment after it went live (a newer build arriving) must not stop it.
        &inner.shutdown,
        &inner.tracker,
    );
    let state = Arc::clone(&supervised.state);
    started.push(Started {
        service: Arc::new(LiveService {
            request,
            supervised,
            port,
            config,
            log: log.clone(),
            launch,
        }),
        kept: false,
    });
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
    result.map(|()| port)
}

/// Prepares `request`'s image on a blocking thread; a refusal marks the service failed.
async fn prepare_image(
    inner: &Inner,
    spec: &ServiceSpec,
    deployment_id: &str,
    request: &ImageRequest,
) -> Result<runtime::PreparedImage, Failure> {
    let runtime = Arc::clone(&inner.runtime);
    let req = request.clone();
    let prepared = tokio::task::spawn_blocking(move || runtime.prepare(&req))
        .await
        .map_err(|e| Failure::Failed(format!("service {}: {e}", spec.name)))?;
    match prepared {
        Ok(p) => Ok(p),
        Err(e) => {
            mark_service(inner, deployment_id, &spec.name, ServiceStatus::Failed).await;
            Err(Failure::Failed(format!(
                "service {} was refused: {e}",
                spec.name
            )))
        }
    }
}

/// What a service runs, as a digest (see `LiveService::config`).
fn config_digest(manifest_digest: &str, env: &[(String, String)]) -> [u8; 32] {
    use sha2::Digest as _;
    let mut sorted: Vec<&(String, String)> = env.iter().collect();
    sorted.sort();
    let mut hasher = sha2::Sha256::new();
    hasher.update(manifest_digest.as_bytes());
    for (name, value) in sorted {
        hasher.update([0]);
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update(value.as_bytes());
    }
    hasher.finalize().into()
}

/// Records that deployment `deployment_id` runs `service` on the live deployment's instance
/// `kept`: its port, healthy, and its log (the new deployment's log path links to the file the
/// instance writes).
async fn keep_instance(
    inner: &Inner,
    deployment_id: &str,
    service: &str,
    kept: &LiveService,
    log: &Path,
) {
    if let Some(dir) = log.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = std::os::unix::fs::symlink(&kept.log, log) {
        tracing::warn!(deployment_id, service, error = %e, "cannot link a kept service's log");
    }
    let recorded = async {
        let mut tx = inner.db.begin_write().await?;
        deployments::service_started(&mut tx, deployment_id, service, Some(kept.port)).await?;
        tx.commit().await
    }
    .await;
    if let Err(e) = recorded {
        tracing::warn!(deployment_id, error = %e, "cannot record a kept service");
    }
    mark_service(inner, deployment_id, service, ServiceStatus::Healthy).await;
    tracing::info!(
        deployment_id,
        service,
        "service unchanged: its instance is kept"
    );
}

pub(super) async fn mark_service(
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
pub(super) async fn wait_healthy(
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
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let start = text.len().saturating_sub(4096);
    let text = String::from_utf8_lossy(&text[start..]);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

pub(super) async fn stop_live(inner: &Inner, live: Live, discard: bool) {
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
pub(super) fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}
