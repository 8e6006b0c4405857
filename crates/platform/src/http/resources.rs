//! `/v1/apps/{app_id}/resources`: an app's backing resources (`managedInfra`). Every role
//! lists them (names of variables, never values); editors and owners reveal and rotate
//! credentials; owners destroy a resource and its data.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;
use slipway_api::{ResourceCredentials, ResourceInfo};

use super::apps::authorized_app;
use super::error::ApiError;
use super::{Access, AppState};
use crate::model::DeploymentCause;
use crate::policy::AppAction;

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/apps/{app_id}/resources", get(list))
        .route(
            "/apps/{app_id}/resources/{kind}/{name}",
            axum::routing::delete(destroy),
        )
        .route(
            "/apps/{app_id}/resources/{kind}/{name}/credentials",
            get(credentials),
        )
        .route(
            "/apps/{app_id}/resources/{kind}/{name}/rotate",
            post(rotate),
        )
}

/// `GET /v1/apps/{app_id}/resources`.
#[derive(Debug, Serialize)]
pub struct ResourceList {
    /// Attached and detached, by kind and name.
    pub resources: Vec<ResourceInfo>,
}

async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<Json<ResourceList>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::View).await?;
    let resources = state
        .deployer()
        .resources()
        .describe(&mut tx, &app.id)
        .await?;
    tx.commit().await?;
    Ok(Json(ResourceList { resources }))
}

fn no_resource(kind: &str, name: &str) -> ApiError {
    ApiError::NotFound(format!(
        "the app has no {kind} resource named {name:?}; list them with GET /v1/apps/{{app_id}}/resources"
    ))
}

async fn credentials(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((app_id, kind, name)): Path<(String, String, String)>,
) -> Result<Json<ResourceCredentials>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::ReadSecrets).await?;
    let found = state
        .deployer()
        .resources()
        .credentials(&mut tx, &app.id, &kind, &name)
        .await
        .map_err(ApiError::Internal)?;
    tx.commit().await?;
    let c = found.ok_or_else(|| no_resource(&kind, &name))?;
    tracing::info!(app_id = %app.id, kind, name, user_id = %caller.user_id, "resource credentials revealed");
    Ok(Json(ResourceCredentials {
        url: c.url(),
        kind,
        name,
        engine: c.engine.as_str().to_owned(),
        host: c.host,
        port: c.port,
        user: c.user,
        password: c.password,
        database: c.database,
    }))
}

async fn rotate(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((app_id, kind, name)): Path<(String, String, String)>,
) -> Result<Json<ResourceList>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::WriteSecrets).await?;
    let deployable = state.deployer().deployable(&mut tx, &app.id).await;
    let exists = crate::store::resources::of_app(&mut tx, &app.id)
        .await?
        .iter()
        .any(|r| r.kind == kind && r.name == name);
    tx.commit().await?;
    if !exists {
        return Err(no_resource(&kind, &name));
    }
    state
        .deployer()
        .resources()
        .rotate(&app.id, &kind, &name)
        .await
        .map_err(ApiError::FailedPrecondition)?;
    tracing::info!(app_id = %app.id, kind, name, "resource credentials rotated");
    if deployable && app.enabled {
        state.deployer().request_deploy_for(
            app.id.clone(),
            DeploymentCause::Rotate,
            Some(caller.user_id),
        );
    }
    list(State(state), headers, Path(app.id)).await
}

async fn destroy(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((app_id, kind, name)): Path<(String, String, String)>,
) -> Result<StatusCode, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::Delete).await?;
    tx.commit().await?;
    let destroyed = state
        .deployer()
        .resources()
        .destroy(&app.id, &kind, &name)
        .await
        .map_err(ApiError::FailedPrecondition)?;
    if !destroyed {
        return Err(no_resource(&kind, &name));
    }
    Ok(StatusCode::NO_CONTENT)
}
