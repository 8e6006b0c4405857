//! What a deployment runs: the app's services in `dependsOn` order with the image each
//! runs, from the latest succeeded builds (a build or an enable) or from a deployment's own
//! records (a restart brings back exactly what ran).

use super::*;

/// What one deployment runs.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    pub(super) app_id: String,
    pub(super) app_name: String,
    pub(super) devfile: String,
    /// Services in deploy order (dependencies first).
    pub(super) order: Vec<ServiceSpec>,
    pub(super) images: HashMap<String, NewService>,
    /// Why and by whom.
    pub(super) origin: Origin,
    /// For a rollback: per service, the secret paths and versions to give it (the ones the
    /// earlier deployment ran with); otherwise the latest versions are given.
    pub(super) pinned_secrets: Option<HashMap<String, BTreeMap<String, i64>>>,
}

impl Plan {
    pub(super) fn primary(&self) -> Option<String> {
        let mut services: Vec<&ServiceSpec> = self.order.iter().collect();
        // Devfile order decides among equals, as the devfile lists them.
        if let Ok(devfile) = Devfile::parse(&self.devfile) {
            let names: Vec<String> = devfile.services().into_iter().map(|s| s.name).collect();
            services.sort_by_key(|s| names.iter().position(|n| *n == s.name));
        }
        services
            .iter()
            .find(|s| s.is_public())
            .or_else(|| services.iter().find(|s| !s.endpoints.is_empty()))
            .map(|s| s.name.clone())
    }
}

/// Where a deployment's images come from.
#[derive(Debug)]
pub(super) enum Source {
    /// The latest succeeded build of every service (after a build or an enable).
    LatestBuilds(Origin),
    /// The images an earlier deployment ran (redeploy after a restart), with the latest
    /// secrets.
    Deployment(DeploymentRecord),
    /// An earlier deployment exactly: its images and its secret versions.
    Rollback(DeploymentRecord, Option<String>),
}

pub(super) async fn plan_latest(
    tx: &mut crate::db::Tx,
    app_id: &str,
    ignore_enabled: bool,
    origin: &Origin,
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
    Ok(plan_of(app.id, app.name, devfile, images, origin.clone()))
}

pub(super) fn plan_of(
    app_id: String,
    app_name: String,
    devfile: String,
    images: HashMap<String, NewService>,
    origin: Origin,
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
        origin,
        pinned_secrets: None,
    })
}

/// The plan of an earlier deployment: after a restart its images (with the latest secrets),
/// for a rollback its images and the secret versions it ran with.
pub(super) async fn plan_from(
    inner: &Inner,
    record: &DeploymentRecord,
    origin: Origin,
) -> Result<Option<Plan>, sqlx::Error> {
    let mut tx = inner.db.begin_read().await?;
    let app = apps::get(&mut tx, &record.app_id).await?;
    let services = deployments::services(&mut tx, &record.id).await?;
    let pinned = if origin.cause == DeploymentCause::Rollback {
        let mut by_service: HashMap<String, BTreeMap<String, i64>> = HashMap::new();
        for used in deployments::secrets_of(&mut tx, &record.id).await? {
            by_service
                .entry(used.service)
                .or_default()
                .insert(used.path, used.version);
        }
        Some(by_service)
    } else {
        None
    };
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
    Ok(
        plan_of(app.id, app.name, record.devfile.clone(), images, origin).map(|mut plan| {
            plan.pinned_secrets = pinned;
            plan
        }),
    )
}
