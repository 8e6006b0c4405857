//! An app's scheduled jobs and their runs, as `GET /v1/apps/{app_id}/jobs`,
//! `GET …/jobs/{job}/runs` and `POST …/jobs/{job}/run` answer them.

use serde::{Deserialize, Serialize};

/// One scheduled job of the app's live deployment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Job {
    /// Its name (the devfile command's id).
    pub name: String,
    /// The service whose image and environment it runs in.
    pub service: String,
    /// The command line.
    pub command_line: String,
    /// The cron schedule, as written.
    pub schedule: String,
    /// The IANA time zone the schedule is read in.
    pub time_zone: String,
    /// `forbid` or `allow`.
    pub concurrency: String,
    /// Whether runs missed while the platform was down are made up once at start.
    pub run_missed: bool,
    /// When it is next due (RFC 3339).
    pub next_run_at: Option<String>,
    /// Its newest run, if any.
    pub last_run: Option<JobRun>,
}

/// `GET /v1/apps/{app_id}/jobs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JobList {
    /// The jobs, in devfile order.
    pub jobs: Vec<Job>,
}

/// One run of a job (or a due time it skipped or missed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JobRun {
    /// `run_…`.
    pub id: String,
    /// The job.
    pub job: String,
    /// The deployment whose code it ran.
    pub deployment_id: Option<String>,
    /// `running`, `succeeded`, `failed`, `skipped` or `missed`.
    pub status: String,
    /// `schedule`, `manual` or `missed` (the run made up at start).
    pub trigger: String,
    /// The due time (RFC 3339), for a scheduled run.
    pub scheduled_at: Option<String>,
    /// RFC 3339.
    pub started_at: Option<String>,
    /// RFC 3339.
    pub ended_at: Option<String>,
    /// The command's exit code.
    pub exit_code: Option<i64>,
    /// Why it failed, was skipped or missed (a failure's last log lines included).
    pub reason: Option<String>,
    /// `GET` it for the run's output (`/v1/apps/{app_id}/jobs/{job}/runs/{id}/log`).
    pub log_path: Option<String>,
}

/// `GET /v1/apps/{app_id}/jobs/{job}/runs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JobRunList {
    /// Newest first (the platform keeps each job's newest 100).
    pub runs: Vec<JobRun>,
}
