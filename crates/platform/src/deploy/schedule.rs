//! Scheduled jobs ([`slipway_devfile::jobs`]): while a deployment is the live one, each job of
//! its devfile runs on the platform's clock in its service's image and environment (the
//! app's secrets and resources included; `PORT` a fresh one, so it never competes with the
//! service), with the job's command line. Every due time is recorded once (the store's unique
//! due time: a redeploy's scheduler and the one it replaces never both run it): run, skipped
//! (`concurrency: forbid` and a run still running) or missed (due while the platform was
//! down; with `runMissed: true` one run follows at start). A run's output is its log file
//! `DATA_DIR/jobs/<app>/<run>.log`.

use std::sync::atomic::AtomicUsize;

use jiff::Timestamp;
use slipway_devfile::jobs::{Concurrency, JobDecl};

use super::*;
use crate::store::job_runs::{self, JobRunRow};

/// The directory of job runs' logs under the data directory.
pub const JOBS_DIR: &str = "jobs";

/// At most this many missed due times are recorded for one job at start.
const MAX_MISSED: usize = 20;

/// The log of one run.
pub fn run_log(data_dir: &Path, app_id: &str, run_id: &str) -> PathBuf {
    data_dir
        .join(JOBS_DIR)
        .join(app_id)
        .join(format!("{run_id}.log"))
}

/// One job of the live deployment, with the instance whose image and environment it runs in.
#[derive(Debug, Clone)]
pub(super) struct Scheduled {
    pub decl: JobDecl,
    pub live: Arc<LiveService>,
    /// Its runs running now (for `concurrency: forbid`).
    pub running: Arc<AtomicUsize>,
}

/// The jobs of `plan`'s devfile whose service was started.
pub(super) fn scheduled(plan: &Plan, started: &[Started]) -> Vec<Scheduled> {
    let Ok(devfile) = Devfile::parse(&plan.devfile) else {
        return Vec::new();
    };
    devfile
        .jobs()
        .into_iter()
        .filter_map(|decl| {
            let live = started
                .iter()
                .find(|s| s.service.request.service == decl.service)?;
            Some(Scheduled {
                decl,
                live: Arc::clone(&live.service),
                running: Arc::new(AtomicUsize::new(0)),
            })
        })
        .collect()
}

/// Starts each job's schedule; it ends when the deployment is no longer the live one.
pub(super) fn schedule_jobs(
    inner: &Arc<Inner>,
    slot: &Arc<AppSlot>,
    app_id: &str,
    deployment_id: &str,
    jobs: Vec<Scheduled>,
) {
    if let Ok(mut live) = slot.live.lock()
        && let Some(live) = live.as_mut()
        && live.deployment_id == deployment_id
    {
        live.jobs = jobs.clone();
    }
    for job in jobs {
        let (inner, slot) = (Arc::clone(inner), Arc::clone(slot));
        let (app_id, deployment_id) = (app_id.to_owned(), deployment_id.to_owned());
        let tracker = inner.tracker.clone();
        tracker.spawn(async move {
            run_schedule(&inner, &slot, &app_id, &deployment_id, &job).await;
        });
    }
}

fn millis(t: Timestamp) -> i64 {
    t.as_millisecond()
}

fn timestamp(ms: i64) -> Timestamp {
    Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH)
}

async fn run_schedule(
    inner: &Arc<Inner>,
    slot: &AppSlot,
    app_id: &str,
    deployment_id: &str,
    job: &Scheduled,
) {
    record_missed(inner, app_id, deployment_id, job).await;
    loop {
        let Some(next) = job.decl.next_after(Timestamp::now()) else {
            return;
        };
        let wait = (next.as_millisecond() - Timestamp::now().as_millisecond()).max(0);
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(wait.unsigned_abs())) => {}
            () = inner.shutdown.cancelled() => return,
        }
        if job.live.supervised.is_done() || !still_live(slot, deployment_id) {
            return;
        }
        let due = millis(next);
        if job.decl.concurrency == Concurrency::Forbid
            && job.running.load(std::sync::atomic::Ordering::SeqCst) > 0
        {
            let reason = "the previous run was still running (concurrency: forbid)";
            not_run(
                inner,
                app_id,
                deployment_id,
                job,
                job_runs::SKIPPED,
                due,
                reason,
            )
            .await;
            continue;
        }
        start_run(inner, app_id, deployment_id, job, "schedule", Some(due)).await;
    }
}

/// The due times between the last one recorded and now, recorded as missed; with
/// `runMissed`, one run now.
async fn record_missed(inner: &Arc<Inner>, app_id: &str, deployment_id: &str, job: &Scheduled) {
    let last = async {
        let mut tx = inner.db.begin_read().await?;
        let last = job_runs::last_due(&mut tx, app_id, &job.decl.name).await?;
        tx.commit().await?;
        Ok::<_, sqlx::Error>(last)
    }
    .await;
    let Ok(Some(last)) = last else {
        return;
    };
    let now = Timestamp::now();
    let mut missed = Vec::new();
    let mut after = timestamp(last);
    while let Some(next) = job.decl.next_after(after)
        && next < now
        && missed.len() < MAX_MISSED
    {
        missed.push(millis(next));
        after = next;
    }
    if missed.is_empty() {
        return;
    }
    for due in &missed {
        let reason = "due while the platform was not running";
        not_run(
            inner,
            app_id,
            deployment_id,
            job,
            job_runs::MISSED,
            *due,
            reason,
        )
        .await;
    }
    tracing::warn!(app_id, job = %job.decl.name, missed = missed.len(), "scheduled runs were missed while the platform was down");
    let reason = format!(
        "{} scheduled run(s) were due while the platform was not running",
        missed.len()
    );
    events::enqueue_now(
        &inner.db,
        EventKind::JobMissed,
        Some(app_id),
        Some(&job.decl.name),
        Some(&reason),
    )
    .await;
    if job.decl.run_missed {
        start_run(inner, app_id, deployment_id, job, "missed", None).await;
    }
}

fn new_row(
    app_id: &str,
    deployment_id: &str,
    job: &Scheduled,
    status: &str,
    trigger: &str,
    due: Option<i64>,
    reason: Option<&str>,
) -> JobRunRow {
    JobRunRow {
        id: format!("run_{}", uuid::Uuid::new_v4().simple()),
        app_id: app_id.to_owned(),
        job: job.decl.name.clone(),
        deployment_id: Some(deployment_id.to_owned()),
        status: status.to_owned(),
        trigger: trigger.to_owned(),
        scheduled_at: due,
        started_at: (status == job_runs::RUNNING).then(slipway_server::clock::now_millis),
        ended_at: None,
        exit_code: None,
        reason: reason.map(str::to_owned),
    }
}

/// Records a due time that did not run (skipped or missed), and why.
async fn not_run(
    inner: &Inner,
    app_id: &str,
    deployment_id: &str,
    job: &Scheduled,
    status: &str,
    due: i64,
    reason: &str,
) {
    let row = new_row(
        app_id,
        deployment_id,
        job,
        status,
        "schedule",
        Some(due),
        Some(reason),
    );
    record(inner, row).await;
}

/// Records `row`; false when its due time was recorded already, or on a failure (logged).
async fn record(inner: &Inner, row: JobRunRow) -> bool {
    let done = async {
        let mut tx = inner.db.begin_write().await?;
        let inserted = job_runs::insert(&mut tx, &row).await?;
        tx.commit().await?;
        Ok::<_, sqlx::Error>(inserted)
    }
    .await;
    done.unwrap_or_else(|e| {
        tracing::error!(app_id = %row.app_id, job = %row.job, error = %e, "cannot record a job run");
        false
    })
}

/// Starts one run of `job` (unless its due time is claimed already); returns its id.
pub(super) async fn start_run(
    inner: &Arc<Inner>,
    app_id: &str,
    deployment_id: &str,
    job: &Scheduled,
    trigger: &str,
    due: Option<i64>,
) -> Option<String> {
    let row = new_row(
        app_id,
        deployment_id,
        job,
        job_runs::RUNNING,
        trigger,
        due,
        None,
    );
    let id = row.id.clone();
    if !record(inner, row).await {
        return None;
    }
    job.running
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let (inner, job) = (Arc::clone(inner), job.clone());
    let (app_id, run_id) = (app_id.to_owned(), id.clone());
    let tracker = inner.tracker.clone();
    tracker.spawn(async move {
        let (status, code, reason) = execute(&inner, &app_id, &run_id, &job).await;
        job.running
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        let done = async {
            let mut tx = inner.db.begin_write().await?;
            job_runs::finish(&mut tx, &run_id, status, code, reason.as_deref()).await?;
            if status == job_runs::FAILED {
                events::enqueue(
                    &mut tx,
                    EventKind::JobFailed,
                    Some(&app_id),
                    Some(&job.decl.name),
                    reason.as_deref(),
                )
                .await?;
            }
            tx.commit().await
        }
        .await;
        if let Err(e) = done {
            tracing::error!(app_id, run_id, error = %e, "cannot record a job run's end");
        }
        tracing::info!(app_id, job = %job.decl.name, run_id, status, "job run ended");
    });
    Some(id)
}

/// Runs the job's command in its service's image and environment; its status, exit code and
/// the reason of a failure.
async fn execute(
    inner: &Inner,
    app_id: &str,
    run_id: &str,
    job: &Scheduled,
) -> (&'static str, Option<i64>, Option<String>) {
    let mut image = job.live.launch.image.clone();
    image.command = vec![
        "/bin/sh".to_owned(),
        "-c".to_owned(),
        job.decl.command_line.clone(),
    ];
    if let Some(container) = image.container.as_mut() {
        // Its own name on the app's network: the service's stays the service's.
        container.alias = format!("{}-job-{}", container.alias, job.decl.name);
    }
    let port = match free_port() {
        Ok(p) => p,
        Err(e) => return (job_runs::FAILED, None, Some(format!("no free port: {e}"))),
    };
    let mut env: Vec<(String, String)> = job
        .live
        .launch
        .env
        .iter()
        .filter(|(k, _)| k != "PORT")
        .cloned()
        .collect();
    env.push(("PORT".into(), port.to_string()));
    env.push(("SLIPWAY_JOB".into(), job.decl.name.clone()));
    env.push(("SLIPWAY_JOB_RUN".into(), run_id.to_owned()));
    let log = run_log(&inner.data_dir, app_id, run_id);
    if let Some(dir) = log.parent()
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        return (
            job_runs::FAILED,
            None,
            Some(format!("cannot write its log: {e}")),
        );
    }
    let mut instance = match inner.runtime.start(&image, &env, &log) {
        Ok(i) => i,
        Err(e) => {
            return (
                job_runs::FAILED,
                None,
                Some(format!("could not start: {e}")),
            );
        }
    };
    let exit = tokio::select! {
        exit = instance.wait() => exit,
        () = inner.shutdown.cancelled() => {
            instance.stop().await;
            return (job_runs::FAILED, None, Some("the platform stopped while it ran".into()));
        }
    };
    match exit.code {
        Some(0) => (job_runs::SUCCEEDED, Some(0), None),
        code => (
            job_runs::FAILED,
            code.map(i64::from),
            Some(format!(
                "{}; last log lines:\n{}",
                exit.description,
                tail(&log, 10)
            )),
        ),
    }
}
