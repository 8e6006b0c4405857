//! Deployment history, the diff of two deployments, rollback and the diagnosis of an app:
//! - `GET /v1/apps/{app_id}/deployments`: every deployment, newest first, paged; each says
//!   what it ran (per service the image and the app secrets with their versions, never a
//!   value), the devfile's digest, why and by whom it was started, and how it ended;
//! - `GET /v1/apps/{app_id}/deployments/{deployment_id}`: one of them;
//! - `GET /v1/apps/{app_id}/deployments/{deployment_id}/diff?against=`: what changed from
//!   `against` (default: the deployment before it) to it: images, devfile lines, secret
//!   versions;
//! - `POST /v1/apps/{app_id}/rollback` `{"deployment_id"}`: deploy an earlier deployment
//!   again with its images and its secret versions; refused (409) with the reasons when an
//!   image or a secret version it needs is gone;
//! - `GET /v1/apps/{app_id}/diagnosis`: why an app is where it is, in one answer.

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use super::apps::authorized_app;
use super::error::ApiError;
use super::extract::Fields;
use super::{Access, AppState, json_object};
use crate::db::{Tx, rfc3339};
use crate::model::{BuildStatus, DeploymentStatus, ServiceStatus};
/// Pages a history (http/builds.rs pages builds with it too).
pub(crate) use crate::pagination::next_page;
use crate::pagination::{Cursor, parse_page_size};
use crate::policy::AppAction;
use crate::store::builds;
use crate::store::deployments::{self, DeploymentRecord, SecretUse};
/// The answers, as `slipway-api` defines them for the server and its clients alike.
pub use slipway_api::deployments::{
    Deployment, DeploymentDiff, DevfileChange, DevfileFindings, Diagnosis, FailedBuild,
    FailingService, History, ImageChange, RollbackAccepted, SecretChange, SecretVersion,
    ServiceRun,
};

/// Lines of a log tail in a diagnosis.
const TAIL_LINES: usize = 20;

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/apps/{app_id}/deployments", get(history))
        .route("/apps/{app_id}/deployments/{deployment_id}", get(one))
        .route("/apps/{app_id}/deployments/{deployment_id}/diff", get(diff))
        .route("/apps/{app_id}/rollback", post(rollback))
        .route("/apps/{app_id}/diagnosis", get(diagnosis))
}

async fn view(tx: &mut Tx, record: DeploymentRecord) -> Result<Deployment, sqlx::Error> {
    let used = deployments::secrets_of(tx, &record.id).await?;
    let services = deployments::services(tx, &record.id)
        .await?
        .into_iter()
        .map(|s| ServiceRun {
            secrets: used
                .iter()
                .filter(|u| u.service == s.service)
                .map(|u| SecretVersion {
                    path: u.path.clone(),
                    version: u.version,
                })
                .collect(),
            service: s.service,
            build_id: s.build_id,
            image_digest: s.manifest_digest,
            status: s.status,
        })
        .collect();
    Ok(Deployment {
        id: record.id,
        status: record.status,
        reason: record.reason,
        cause: record.cause,
        started_by: record.started_by,
        rollback_of: record.rollback_of,
        devfile_digest: record.devfile_digest,
        created_at: rfc3339(record.created_at),
        finished_at: record.finished_at.map(rfc3339),
        services,
        commit: record.commit.map(super::git::commit_view),
    })
}

/// The query of a route: only `allowed` keys, each at most once.
fn query_fields(
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    allowed: &[&str],
) -> Result<Fields, ApiError> {
    Fields::from_query(query, allowed)
}

/// The field lists of this module (the OpenAPI document lists exactly these).
pub(crate) const HISTORY_FIELDS: &[&str] = &["page_size", "next_page_token"];
/// See [`HISTORY_FIELDS`].
pub(crate) const DIFF_FIELDS: &[&str] = &["against"];
/// See [`HISTORY_FIELDS`].
pub(crate) const ROLLBACK_FIELDS: &[&str] = &["deployment_id"];

/// `page_size` and the position after the previous page (`next_page_token`) of a history
/// paged newest first by `(created_at, id)`.
pub(crate) fn page_query(fields: &Fields) -> Result<(u32, Option<(i64, String)>), ApiError> {
    let page_size = parse_page_size(fields.string("page_size")?.as_deref())
        .map_err(|e| ApiError::invalid("page_size", e.to_string()))?;
    let before = match fields.string("next_page_token")?.as_deref() {
        None | Some("") => None,
        Some(t) => Some(
            Cursor::decode(t)
                .map(|c| (c.created_at, c.id))
                .map_err(|e| ApiError::invalid("next_page_token", e.to_string()))?,
        ),
    };
    Ok((page_size, before))
}

fn parse_deployment_id(field: &str, raw: &str) -> Result<String, ApiError> {
    uuid::Uuid::parse_str(raw)
        .map(|u| u.to_string())
        .map_err(|_| ApiError::invalid(field, "must be a UUID"))
}

async fn find(tx: &mut Tx, app_id: &str, id: &str) -> Result<DeploymentRecord, ApiError> {
    deployments::get(tx, app_id, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("app {app_id} has no deployment {id}")))
}

/// `GET /v1/apps/{app_id}/deployments`.
async fn history(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<History>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::View).await?;
    let fields = query_fields(query, HISTORY_FIELDS)?;
    let (page_size, before) = page_query(&fields)?;
    let mut rows = deployments::page_of_app(&mut tx, &app.id, before, page_size + 1).await?;
    let next_page_token = next_page(&mut rows, page_size, |d| (d.created_at, d.id.clone()));
    let mut out = Vec::new();
    for record in rows {
        out.push(view(&mut tx, record).await?);
    }
    tx.commit().await?;
    Ok(Json(History {
        deployments: out,
        next_page_token,
    }))
}

/// `GET /v1/apps/{app_id}/deployments/{deployment_id}`.
async fn one(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((app_id, deployment_id)): Path<(String, String)>,
) -> Result<Json<Deployment>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::View).await?;
    let id = parse_deployment_id("deployment_id", &deployment_id)?;
    let record = find(&mut tx, &app.id, &id).await?;
    let shown = view(&mut tx, record).await?;
    tx.commit().await?;
    Ok(Json(shown))
}

/// What changed from `from` to `to` (both of one app).
async fn compare(
    tx: &mut Tx,
    from: &DeploymentRecord,
    to: &DeploymentRecord,
) -> Result<DeploymentDiff, sqlx::Error> {
    let images_of = |services: Vec<deployments::ServiceRecord>| -> BTreeMap<String, String> {
        services
            .into_iter()
            .map(|s| (s.service, s.manifest_digest))
            .collect()
    };
    let old = images_of(deployments::services(tx, &from.id).await?);
    let new = images_of(deployments::services(tx, &to.id).await?);
    let mut images = Vec::new();
    for service in old
        .keys()
        .chain(new.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let (a, b) = (old.get(service), new.get(service));
        if a != b {
            images.push(ImageChange {
                service: service.clone(),
                from: a.cloned(),
                to: b.cloned(),
            });
        }
    }
    let versions = |uses: Vec<SecretUse>| -> BTreeMap<(String, String), i64> {
        uses.into_iter()
            .map(|u| ((u.service, u.path), u.version))
            .collect()
    };
    let old = versions(deployments::secrets_of(tx, &from.id).await?);
    let new = versions(deployments::secrets_of(tx, &to.id).await?);
    let mut secrets = Vec::new();
    for key in old
        .keys()
        .chain(new.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let (a, b) = (old.get(key).copied(), new.get(key).copied());
        if a != b {
            secrets.push(SecretChange {
                service: key.0.clone(),
                path: key.1.clone(),
                from_version: a,
                to_version: b,
            });
        }
    }
    let changed = from.devfile != to.devfile;
    let diff = if changed {
        similar::TextDiff::from_lines(&from.devfile, &to.devfile)
            .unified_diff()
            .context_radius(3)
            .header("devfile.yaml (from)", "devfile.yaml (to)")
            .to_string()
    } else {
        String::new()
    };
    Ok(DeploymentDiff {
        from: from.id.clone(),
        to: to.id.clone(),
        images,
        devfile: DevfileChange { changed, diff },
        secrets,
    })
}

/// `GET /v1/apps/{app_id}/deployments/{deployment_id}/diff?against=`.
async fn diff(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((app_id, deployment_id)): Path<(String, String)>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<DeploymentDiff>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::View).await?;
    let fields = query_fields(query, DIFF_FIELDS)?;
    let id = parse_deployment_id("deployment_id", &deployment_id)?;
    let to = find(&mut tx, &app.id, &id).await?;
    let from = match fields.string("against")? {
        Some(raw) => {
            let other = parse_deployment_id("against", &raw)?;
            find(&mut tx, &app.id, &other).await?
        }
        None => {
            let all = deployments::of_app_newest_first(&mut tx, &app.id).await?;
            let position = all.iter().position(|d| d.id == to.id).unwrap_or(0);
            all.into_iter().nth(position + 1).ok_or_else(|| {
                ApiError::FailedPrecondition(format!(
                    "deployment {} is the app's first; name another with against",
                    to.id
                ))
            })?
        }
    };
    let shown = compare(&mut tx, &from, &to).await?;
    tx.commit().await?;
    Ok(Json(shown))
}

/// `POST /v1/apps/{app_id}/rollback` `{"deployment_id"}` → 202.
async fn rollback(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::Build).await?;
    let fields = Fields::from_body(json_object(body)?, ROLLBACK_FIELDS)?;
    let id = parse_deployment_id("deployment_id", &fields.required("deployment_id")?)?;
    let target = find(&mut tx, &app.id, &id).await?;
    if !app.enabled {
        return Err(ApiError::FailedPrecondition(
            "the app is disabled; enable it before rolling back".into(),
        ));
    }
    let blockers = state.deployer().rollback_blockers(&mut tx, &target).await?;
    tx.commit().await?;
    if !blockers.is_empty() {
        return Err(ApiError::FailedPrecondition(format!(
            "cannot roll back to deployment {}: {}",
            target.id,
            blockers.join("; ")
        )));
    }
    tracing::info!(app_id = %app.id, rollback_of = %target.id, "rollback requested");
    let rollback_of = target.id.clone();
    state
        .deployer()
        .rollback(target, Some(caller.user_id.clone()));
    Ok((
        StatusCode::ACCEPTED,
        Json(RollbackAccepted {
            message: format!(
                "deploying the images and secret versions of deployment {rollback_of} again; \
                 the current deployment serves until it is healthy (poll the app's status)"
            ),
            rollback_of,
        }),
    )
        .into_response())
}

/// `GET /v1/apps/{app_id}/diagnosis`.
async fn diagnosis(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<Json<Diagnosis>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::ReadLogs).await?;
    let all = deployments::of_app_newest_first(&mut tx, &app.id).await?;
    let latest = all.first();
    let mut failing_services = Vec::new();
    if let Some(latest) = latest {
        for s in deployments::services(&mut tx, &latest.id).await? {
            if s.status != ServiceStatus::Healthy {
                let log = state.deployer().log_path(&latest.id, &s.service);
                failing_services.push(FailingService {
                    log_tail: crate::deploy::tail(&log, TAIL_LINES),
                    service: s.service,
                    status: s.status,
                });
            }
        }
    }
    let newest_builds = builds::of_app_newest_first(&mut tx, &app.id).await?;
    let failed_build = newest_builds
        .first()
        .filter(|b| b.status == BuildStatus::Failed)
        .map(|b| FailedBuild {
            log_tail: crate::deploy::tail(
                slipway_runtime::build::BuildLog::new(state.deployer().data_dir(), &b.id).path(),
                TAIL_LINES,
            ),
            build_id: b.id.clone(),
            service: b.service.clone(),
            error: b.error.clone(),
        });
    let devfile = app.devfile.as_deref().map(|text| {
        let report = slipway_devfile::validate(text, None);
        let (errors, warnings): (Vec<_>, Vec<_>) = report
            .diagnostics
            .iter()
            .partition(|d| d.severity == slipway_devfile::Severity::Error);
        DevfileFindings {
            valid: report.valid(),
            errors: errors.iter().map(ToString::to_string).collect(),
            warnings: warnings.iter().map(ToString::to_string).collect(),
        }
    });
    let last_good = latest.and_then(|latest| {
        all.iter().skip(1).find(|d| {
            d.finished_at.is_some()
                && d.id != latest.id
                && matches!(
                    d.status,
                    DeploymentStatus::Running
                        | DeploymentStatus::Superseded
                        | DeploymentStatus::Stopped
                )
                && d.reason.as_deref() != Some(crate::deploy::RESTART_REASON)
        })
    });
    let changes_since_last_good = match (last_good, latest) {
        (Some(good), Some(latest)) => Some(compare(&mut tx, good, latest).await?),
        _ => None,
    };
    tx.commit().await?;
    Ok(Json(Diagnosis {
        app_id: app.id,
        status: app.status,
        reason: latest.and_then(|d| d.reason.clone()),
        deployment_id: latest.map(|d| d.id.clone()),
        failing_services,
        failed_build,
        devfile,
        last_good_deployment_id: last_good.map(|d| d.id.clone()),
        changes_since_last_good,
        commit: latest
            .and_then(|d| d.commit.clone())
            .map(super::git::commit_view),
    }))
}
