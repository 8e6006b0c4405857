//! `job_run`: the runs of apps' scheduled jobs (migration 0008).

use sqlx::Row;

use crate::db::{Tx, now_millis};

/// One run of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRunRow {
    /// `run_…`.
    pub id: String,
    /// The app.
    pub app_id: String,
    /// The job (its command id).
    pub job: String,
    /// The deployment whose image and environment it ran in.
    pub deployment_id: Option<String>,
    /// running, succeeded, failed, skipped, missed.
    pub status: String,
    /// schedule, manual, missed (run once at start for missed times).
    pub trigger: String,
    /// The due time (epoch ms), for a scheduled run.
    pub scheduled_at: Option<i64>,
    /// Epoch ms.
    pub started_at: Option<i64>,
    /// Epoch ms.
    pub ended_at: Option<i64>,
    /// The command's exit code.
    pub exit_code: Option<i64>,
    /// Why it was skipped, missed or failed.
    pub reason: Option<String>,
}

/// Running now.
pub const RUNNING: &str = "running";
/// Exited 0.
pub const SUCCEEDED: &str = "succeeded";
/// Exited otherwise, or could not start.
pub const FAILED: &str = "failed";
/// Due while a run was running under `concurrency: forbid`.
pub const SKIPPED: &str = "skipped";
/// Due while the platform was down.
pub const MISSED: &str = "missed";

/// How many runs of each job are kept.
pub const KEPT: i64 = 100;

/// `SELECT <the row's columns> FROM job_run <rest>`, a static string as sqlx wants.
macro_rules! select {
    ($rest:literal) => {
        concat!(
            "SELECT id, app_id, job, deployment_id, status, trigger, scheduled_at, started_at, \
             ended_at, exit_code, reason FROM job_run ",
            $rest
        )
    };
}

fn row(r: &sqlx::any::AnyRow) -> Result<JobRunRow, sqlx::Error> {
    Ok(JobRunRow {
        id: r.try_get(0)?,
        app_id: r.try_get(1)?,
        job: r.try_get(2)?,
        deployment_id: r.try_get(3)?,
        status: r.try_get(4)?,
        trigger: r.try_get(5)?,
        scheduled_at: r.try_get(6)?,
        started_at: r.try_get(7)?,
        ended_at: r.try_get(8)?,
        exit_code: r.try_get(9)?,
        reason: r.try_get(10)?,
    })
}

/// Records a run (or a skipped or missed due time). `false` when its due time is recorded
/// already (another scheduler claimed it).
pub async fn insert(tx: &mut Tx, run: &JobRunRow) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "INSERT INTO job_run (id, app_id, job, deployment_id, status, trigger, scheduled_at, \
         started_at, ended_at, exit_code, reason, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
         ON CONFLICT (app_id, job, scheduled_at) DO NOTHING",
    )
    .bind(run.id.clone())
    .bind(run.app_id.clone())
    .bind(run.job.clone())
    .bind(run.deployment_id.clone())
    .bind(run.status.clone())
    .bind(run.trigger.clone())
    .bind(run.scheduled_at)
    .bind(run.started_at)
    .bind(run.ended_at)
    .bind(run.exit_code)
    .bind(run.reason.clone())
    .bind(now_millis())
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    // The oldest beyond the kept number go.
    sqlx::query(
        "DELETE FROM job_run WHERE app_id = $1 AND job = $2 AND id NOT IN \
         (SELECT id FROM job_run WHERE app_id = $1 AND job = $2 \
          ORDER BY created_at DESC, id DESC LIMIT $3)",
    )
    .bind(run.app_id.clone())
    .bind(run.job.clone())
    .bind(KEPT)
    .execute(&mut **tx)
    .await?;
    Ok(true)
}

/// Records how a run ended.
pub async fn finish(
    tx: &mut Tx,
    id: &str,
    status: &str,
    exit_code: Option<i64>,
    reason: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE job_run SET status = $1, exit_code = $2, reason = $3, ended_at = $4 WHERE id = $5",
    )
    .bind(status.to_owned())
    .bind(exit_code)
    .bind(reason.map(str::to_owned))
    .bind(now_millis())
    .bind(id.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The job's runs, newest first, at most `limit`.
pub async fn of_job(
    tx: &mut Tx,
    app_id: &str,
    job: &str,
    limit: i64,
) -> Result<Vec<JobRunRow>, sqlx::Error> {
    let rows = sqlx::query(select!(
        "WHERE app_id = $1 AND job = $2 ORDER BY created_at DESC, id DESC LIMIT $3"
    ))
    .bind(app_id.to_owned())
    .bind(job.to_owned())
    .bind(limit)
    .fetch_all(&mut **tx)
    .await?;
    rows.iter().map(row).collect()
}

/// One run.
pub async fn find(tx: &mut Tx, app_id: &str, id: &str) -> Result<Option<JobRunRow>, sqlx::Error> {
    let found = sqlx::query(select!("WHERE app_id = $1 AND id = $2"))
        .bind(app_id.to_owned())
        .bind(id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    found.as_ref().map(row).transpose()
}

/// The latest due time recorded for the job (run, skipped or missed), epoch ms.
pub async fn last_due(tx: &mut Tx, app_id: &str, job: &str) -> Result<Option<i64>, sqlx::Error> {
    let r = sqlx::query("SELECT MAX(scheduled_at) FROM job_run WHERE app_id = $1 AND job = $2")
        .bind(app_id.to_owned())
        .bind(job.to_owned())
        .fetch_one(&mut **tx)
        .await?;
    r.try_get(0)
}

/// Runs left `running` by a platform that stopped (at its next start): they ended unknown.
pub async fn end_interrupted(tx: &mut Tx) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE job_run SET status = $1, reason = $2, ended_at = $3 WHERE status = $4")
        .bind(FAILED.to_owned())
        .bind("the platform stopped while it ran".to_owned())
        .bind(now_millis())
        .bind(RUNNING.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Forgets every run of a deleted app.
pub async fn delete_for_app(tx: &mut Tx, app_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM job_run WHERE app_id = $1")
        .bind(app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}
