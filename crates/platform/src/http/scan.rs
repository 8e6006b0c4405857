//! `GET /v1/builds/{build_id}/scan[?refresh=true]`: the build's scan report — its image's
//! SBOM and the advisories that affect it (see [`crate::scan`]). The report stored after the
//! build is returned; `refresh=true` (or a build scanned before scans existed) scans now
//! against the current advisory database and stores the new report.

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::routing::get;
use axum::{Json, Router};

use super::builds::{query_map, visible_build};
use super::error::ApiError;
use super::{Access, AppState};
use crate::model::BuildStatus;
use slipway_image::scan::ScanResult;

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new().route("/builds/{build_id}/scan", get(get_scan))
}

async fn get_scan(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(build_id): Path<String>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<ScanResult>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (build, role) = visible_build(&mut tx, &caller, &build_id).await?;
    crate::policy::require(role, crate::policy::AppAction::ReadScan)?;
    crate::policy::require_scope(&caller, crate::policy::AppAction::ReadScan)?;
    tx.commit().await?;
    let query = query_map(query, &["refresh"])?;
    let refresh = match query.get("refresh").map(String::as_str) {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => return Err(ApiError::invalid("refresh", "must be true or false")),
    };
    let digest = match (&build.status, &build.manifest_digest) {
        (BuildStatus::Succeeded, Some(d)) => d.clone(),
        _ => {
            return Err(ApiError::FailedPrecondition(format!(
                "build {} is {}; only a succeeded build has an image to scan",
                build.id,
                build.status.as_str()
            )));
        }
    };
    let runner = state.runner();
    if !refresh && let Some(stored) = slipway_image::scan::stored(&runner.data_dir(), &build.id) {
        return Ok(Json(stored));
    }
    Ok(Json(runner.scan(&build.id, &digest).await))
}
