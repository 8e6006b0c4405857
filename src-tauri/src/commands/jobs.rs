//! Job commands: an app's scheduled jobs with their next due time and last run, a job's runs,
//! a run's output and a run started by hand (editors and owners), each one call into
//! `slipway_platform_client::jobs` on the platform the window uses. The platform decides who
//! may do what; a refusal is a result naming its field, as the tools' are.

use serde::Serialize;
use serde_json::Value;
use slipway_platform_client::jobs;

use super::run::with_client;
use super::tools::{CommandError, Tools};

/// The app's scheduled jobs: `{jobs: [{name, schedule, time_zone, next_run_at, last_run, …}]}`.
#[tauri::command]
pub async fn app_jobs(
    tools: tauri::State<'_, Tools>,
    app_id: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| jobs::list_jobs(c, &app_id)).await
}

/// A job's runs, newest first: `{runs: [...]}`.
#[tauri::command]
pub async fn job_runs(
    tools: tauri::State<'_, Tools>,
    app_id: String,
    job: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| jobs::list_runs(c, &app_id, &job)).await
}

/// Starts a run of the job now: the run.
#[tauri::command]
pub async fn job_run_now(
    tools: tauri::State<'_, Tools>,
    app_id: String,
    job: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| jobs::run_now(c, &app_id, &job)).await
}

/// A run's output (a result is an object): `{run_id, log}`.
#[derive(Debug, Serialize)]
struct RunLog {
    run_id: String,
    log: String,
}

/// A run's output: `{run_id, log}`.
#[tauri::command]
pub async fn job_run_log(
    tools: tauri::State<'_, Tools>,
    app_id: String,
    job: String,
    run_id: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| {
        jobs::run_log(c, &app_id, &job, &run_id).map(|log| RunLog {
            run_id: run_id.clone(),
            log,
        })
    })
    .await
}
