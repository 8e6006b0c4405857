//! An app's scheduled jobs: list them, list a job's runs, read a run's output, start a run
//! now (editors and owners). `slipway jobs` calls these.

use reqwest::Method;
pub use slipway_api::jobs::{Job, JobList, JobRun, JobRunList};

use crate::apps::uuid_arg;
use crate::client::Client;
use crate::error::ToolError;
use crate::people::segment;

fn job_path(app_id: &str, job: &str) -> Result<String, ToolError> {
    let id = uuid_arg("app_id", app_id)?;
    Ok(format!("/v1/apps/{id}/jobs/{}", segment("job", job)?))
}

/// The scheduled jobs of the app's live deployment.
pub fn list_jobs(client: &Client, app_id: &str) -> Result<JobList, ToolError> {
    let id = uuid_arg("app_id", app_id)?;
    client.typed(Method::GET, &format!("/v1/apps/{id}/jobs"), None)
}

/// A job's runs, newest first.
pub fn list_runs(client: &Client, app_id: &str, job: &str) -> Result<JobRunList, ToolError> {
    client.typed(
        Method::GET,
        &format!("{}/runs", job_path(app_id, job)?),
        None,
    )
}

/// Starts a run of the job now.
pub fn run_now(client: &Client, app_id: &str, job: &str) -> Result<JobRun, ToolError> {
    client.typed(
        Method::POST,
        &format!("{}/run", job_path(app_id, job)?),
        None,
    )
}

/// A run's output so far.
pub fn run_log(
    client: &Client,
    app_id: &str,
    job: &str,
    run_id: &str,
) -> Result<String, ToolError> {
    let path = format!(
        "{}/runs/{}/log",
        job_path(app_id, job)?,
        segment("run_id", run_id)?
    );
    let response = client.open_stream(&path, None)?;
    response
        .text()
        .map_err(|e| ToolError::Unavailable(format!("the run's log could not be read: {e}")))
}
