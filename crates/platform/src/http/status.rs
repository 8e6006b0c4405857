//! `/v1/apps/{app_id}/status`, `/disable` and `/enable`: what an app's deployment is doing,
//! and stopping or resuming it. Viewers read status; editors and owners enable and disable.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::{Json, Router};

use super::apps::{app_not_found, authorized_app};
use super::error::ApiError;
use super::{Access, AppState};
use crate::db::{Tx, rfc3339};
use crate::deploy::UrlScheme;
use crate::model::{AppStatus, DeploymentStatus};
use crate::policy::AppAction;
use crate::store::apps::{self, AppRecord};
use crate::store::deployments;
use crate::store::service_ports;
/// The answer, as `slipway-api` defines it for the server and its clients (its `AppState` is
/// named `StatusView` here, where `AppState` is the router's state).
pub use slipway_api::{AppState as StatusView, Limits, ServiceState};

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/apps/{app_id}/status", get(get_status))
        .route("/apps/{app_id}/disable", post(disable))
        .route("/apps/{app_id}/enable", post(enable))
}

async fn view(state: &AppState, tx: &mut Tx, app: &AppRecord) -> Result<StatusView, ApiError> {
    let all = deployments::of_app_newest_first(tx, &app.id).await?;
    let latest = all.first();
    let shown = if app.status == AppStatus::Running {
        all.iter()
            .find(|d| d.status == DeploymentStatus::Running)
            .or(latest)
    } else {
        latest
    };
    let reason = latest
        .filter(|d| d.status == DeploymentStatus::Failed)
        .and_then(|d| d.reason.clone());
    let deployer = state.deployer();
    // Only the `ports` mode's URLs are made of recorded ports.
    let ports = if *deployer.url_scheme() == UrlScheme::LoopbackPorts {
        service_ports::of_app(tx, &app.id).await?
    } else {
        Default::default()
    };
    let specs = app
        .devfile
        .as_deref()
        .and_then(|text| slipway_devfile::Devfile::parse(text).ok())
        .map(|d| d.services())
        .unwrap_or_default();
    // Only services with a public endpoint get a URL.
    let public: Vec<&str> = specs
        .iter()
        .filter(|s| s.is_public())
        .map(|s| s.name.as_str())
        .collect();
    let defaults = deployer.default_limits();
    let limits_of = |service: &str| {
        let spec = specs.iter().find(|s| s.name == service);
        Limits {
            memory: spec
                .and_then(|s| s.memory_limit)
                .or(defaults.memory_bytes)
                .map(slipway_devfile::quantity::format_memory),
            cpu: spec
                .and_then(|s| s.cpu_limit)
                .or(defaults.cpu_millis)
                .map(slipway_devfile::quantity::format_cpu),
            enforced: deployer.enforces_limits(),
        }
    };
    let mut services = Vec::new();
    if let Some(d) = shown {
        for s in deployments::services(tx, &d.id).await? {
            let url = if public.contains(&s.service.as_str()) {
                deployer.service_url(&app.name, Some(&s.service), &ports)
            } else {
                None
            };
            services.push(ServiceState {
                url,
                limits: limits_of(&s.service),
                name: s.service,
                status: s.status,
                build_id: s.build_id,
                started_at: s.started_at.map(rfc3339),
                healthy_at: s.healthy_at.map(rfc3339),
            });
        }
    }
    // The ports mode names the primary service's port, recorded when the deployment ran.
    let app_url = match deployer.url_scheme() {
        UrlScheme::LoopbackPorts => app.url.clone(),
        _ => deployer.service_url(&app.name, None, &ports),
    };
    Ok(StatusView {
        app_id: app.id.clone(),
        status: app.status,
        enabled: app.enabled,
        app_url: shown.and(app_url),
        reason,
        deployment_id: shown.map(|d| d.id.clone()),
        services,
        resources: deployer.resources().describe(tx, &app.id).await?,
        volumes: crate::resources::volumes(deployer.data_dir(), &app.id, app.devfile.as_deref()),
    })
}

async fn get_status(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<Json<StatusView>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::View).await?;
    let view = view(&state, &mut tx, &app).await?;
    tx.commit().await?;
    Ok(Json(view))
}

/// Loads the app for a change: visible (404 otherwise) and the caller at least editor (403).
async fn editable(
    state: &AppState,
    headers: &HeaderMap,
    app_id: &str,
) -> Result<(Tx, AppRecord, String), ApiError> {
    let (mut tx, caller) = state.begin_as(headers, Access::Write).await?;
    let (app, _) = authorized_app(&mut tx, &caller, app_id, AppAction::Suspend).await?;
    Ok((tx, app, caller.user_id))
}

/// `POST /v1/apps/{app_id}/disable`: stops every process of the app; status `suspended`,
/// `enabled` false; the app, its builds and images are kept.
async fn disable(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<Json<StatusView>, ApiError> {
    let (mut tx, app, _) = editable(&state, &headers, &app_id).await?;
    apps::set_enabled(&mut tx, &app.id, false, AppStatus::Suspended).await?;
    tx.commit().await?;
    state.deployer().suspend(&app.id).await?;
    tracing::info!(app_id = %app.id, "app disabled");
    current(&state, &headers, &app.id).await
}

/// `POST /v1/apps/{app_id}/enable`: `deploying` and a new deployment from the latest builds
/// when every service has one; `registered` when there is nothing to deploy yet.
async fn enable(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<Json<StatusView>, ApiError> {
    let (mut tx, app, user_id) = editable(&state, &headers, &app_id).await?;
    // Enabling an app that already runs (or is starting) changes nothing.
    let already = app.enabled && matches!(app.status, AppStatus::Running | AppStatus::Deploying);
    let deployable = !already && state.deployer().deployable(&mut tx, &app.id).await;
    let next = if deployable {
        AppStatus::Deploying
    } else if app.status == AppStatus::Suspended {
        AppStatus::Registered
    } else {
        app.status
    };
    apps::set_enabled(&mut tx, &app.id, true, next).await?;
    tx.commit().await?;
    if deployable {
        state.deployer().request_deploy_for(
            app.id.clone(),
            crate::model::DeploymentCause::Enable,
            Some(user_id),
        );
    }
    tracing::info!(app_id = %app.id, "app enabled");
    current(&state, &headers, &app.id).await
}

async fn current(
    state: &AppState,
    headers: &HeaderMap,
    app_id: &str,
) -> Result<Json<StatusView>, ApiError> {
    let (mut tx, caller) = state.begin_as(headers, Access::Read).await?;
    let (app, _) = apps::get_visible(&mut tx, &caller, app_id)
        .await?
        .ok_or_else(|| app_not_found(app_id))?;
    let view = view(state, &mut tx, &app).await?;
    tx.commit().await?;
    Ok(Json(view))
}
