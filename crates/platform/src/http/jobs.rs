//! `/v1/apps/{app_id}/jobs`: the scheduled jobs of the app's live deployment (devfile exec
//! commands with `attributes.schedule`), their runs and their output. Every role lists them
//! and reads the runs; reading a run's output is reading logs; editors and owners start a
//! run by hand.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use slipway_api::jobs::{Job, JobList, JobRun, JobRunList};

use super::apps::authorized_app;
use super::error::ApiError;
use super::{Access, AppState};
use crate::db::rfc3339;
use crate::policy::AppAction;
use crate::store::job_runs::{self, JobRunRow};

/// Runs listed per request.
const RUNS_LISTED: i64 = 50;

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/apps/{app_id}/jobs", get(list))
        .route("/apps/{app_id}/jobs/{job}/runs", get(runs))
        .route("/apps/{app_id}/jobs/{job}/run", post(run_now))
        .route("/apps/{app_id}/jobs/{job}/runs/{run_id}/log", get(run_log))
}

fn view(app_id: &str, r: JobRunRow) -> JobRun {
    let has_log = r.started_at.is_some();
    JobRun {
        log_path: has_log.then(|| format!("/v1/apps/{app_id}/jobs/{}/runs/{}/log", r.job, r.id)),
        id: r.id,
        job: r.job,
        deployment_id: r.deployment_id,
        status: r.status,
        trigger: r.trigger,
        scheduled_at: r.scheduled_at.map(rfc3339),
        started_at: r.started_at.map(rfc3339),
        ended_at: r.ended_at.map(rfc3339),
        exit_code: r.exit_code,
        reason: r.reason,
    }
}

async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<Json<JobList>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::View).await?;
    let mut jobs = Vec::new();
    for (decl, next) in state.deployer().live_jobs(&app.id) {
        let last = job_runs::of_job(&mut tx, &app.id, &decl.name, 1)
            .await?
            .into_iter()
            .next()
            .map(|r| view(&app.id, r));
        jobs.push(Job {
            name: decl.name,
            service: decl.service,
            command_line: decl.command_line,
            schedule: decl.schedule,
            time_zone: decl.time_zone,
            concurrency: decl.concurrency.as_str().to_owned(),
            run_missed: decl.run_missed,
            next_run_at: next.map(rfc3339),
            last_run: last,
        });
    }
    tx.commit().await?;
    Ok(Json(JobList { jobs }))
}

async fn runs(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((app_id, job)): Path<(String, String)>,
) -> Result<Json<JobRunList>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::View).await?;
    let rows = job_runs::of_job(&mut tx, &app.id, &job, RUNS_LISTED).await?;
    tx.commit().await?;
    Ok(Json(JobRunList {
        runs: rows.into_iter().map(|r| view(&app.id, r)).collect(),
    }))
}

async fn run_now(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((app_id, job)): Path<(String, String)>,
) -> Result<(StatusCode, Json<JobRun>), ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::Build).await?;
    tx.commit().await?;
    let id = state
        .deployer()
        .run_job_now(&app.id, &job)
        .await
        .map_err(ApiError::NotFound)?;
    tracing::info!(app_id = %app.id, job, run_id = %id, user_id = %caller.user_id, "job run started by hand");
    let (mut tx, _) = state.begin_as(&headers, Access::Read).await?;
    let row = job_runs::find(&mut tx, &app.id, &id).await?;
    tx.commit().await?;
    let row = row.ok_or_else(|| ApiError::Internal("the run's record is gone".into()))?;
    Ok((StatusCode::ACCEPTED, Json(view(&app.id, row))))
}

async fn run_log(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((app_id, job, run_id)): Path<(String, String, String)>,
) -> Result<impl IntoResponse, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::ReadLogs).await?;
    let row = job_runs::find(&mut tx, &app.id, &run_id).await?;
    tx.commit().await?;
    let row = row
        .filter(|r| r.job == job)
        .ok_or_else(|| ApiError::NotFound(format!("job {job:?} has no run {run_id:?}")))?;
    let path = crate::deploy::run_log(state.deployer().data_dir(), &app.id, &row.id);
    let text = tokio::fs::read(&path).await.unwrap_or_default();
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text))
}
