//! `slipway jobs …`: an app's scheduled jobs (devfile exec commands with
//! `attributes.schedule`): list them with their next due time and last run, list a job's
//! runs (skipped and missed due times included), print a run's output, start a run now
//! (editors and owners). The app is given by name or id; `--json` prints the platform's
//! answer for scripts.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use slipway_platform_client::jobs::{self, JobRun};

use crate::people::Output;
use crate::resources::app_id;
use crate::table::table;

#[derive(Debug, Args)]
pub struct JobsArgs {
    #[command(subcommand)]
    command: JobsCommand,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Subcommand)]
enum JobsCommand {
    /// The app's scheduled jobs: schedule, time zone, next due time, last run.
    List {
        /// The app's name or id.
        app: String,
    },
    /// A job's runs, newest first (skipped and missed due times included).
    Runs {
        /// The app's name or id.
        app: String,
        /// The job (its devfile command id).
        job: String,
    },
    /// Start a run of the job now (editors and owners); prints the run.
    RunNow {
        /// The app's name or id.
        app: String,
        /// The job (its devfile command id).
        job: String,
    },
    /// A run's output.
    Log {
        /// The app's name or id.
        app: String,
        /// The job (its devfile command id).
        job: String,
        /// The run's id (`run_…`, from `slipway jobs runs`).
        run: String,
    },
}

pub fn run(args: JobsArgs) -> ExitCode {
    let client = match args.output.client() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let out = &args.output;
    match args.command {
        JobsCommand::List { app } => out.show(
            app_id(&client, &app).and_then(|id| jobs::list_jobs(&client, &id)),
            |list| {
                if list.jobs.is_empty() {
                    println!("No scheduled jobs run: the app's running deployment declares none (a command's attributes.schedule in devfile.yaml).");
                    return;
                }
                let rows: Vec<Vec<String>> = list
                    .jobs
                    .iter()
                    .map(|j| {
                        vec![
                            j.name.clone(),
                            j.schedule.clone(),
                            j.time_zone.clone(),
                            j.next_run_at.clone().unwrap_or_else(|| "-".into()),
                            j.last_run.as_ref().map_or_else(|| "never".into(), last),
                        ]
                    })
                    .collect();
                table(&["JOB", "SCHEDULE", "TIME ZONE", "NEXT", "LAST RUN"], &rows);
            },
        ),
        JobsCommand::Runs { app, job } => out.show(
            app_id(&client, &app).and_then(|id| jobs::list_runs(&client, &id, &job)),
            |list| {
                if list.runs.is_empty() {
                    println!("No runs of {job:?} yet.");
                    return;
                }
                let rows: Vec<Vec<String>> = list
                    .runs
                    .iter()
                    .map(|r| {
                        vec![
                            r.id.clone(),
                            r.status.clone(),
                            r.trigger.clone(),
                            r.started_at.clone().or_else(|| r.scheduled_at.clone()).unwrap_or_default(),
                            r.exit_code.map_or_else(String::new, |c| c.to_string()),
                            r.reason.as_deref().and_then(|t| t.lines().next()).unwrap_or("").to_owned(),
                        ]
                    })
                    .collect();
                table(&["RUN", "STATUS", "TRIGGER", "AT", "EXIT", "REASON"], &rows);
            },
        ),
        JobsCommand::RunNow { app, job } => out.show(
            app_id(&client, &app).and_then(|id| jobs::run_now(&client, &id, &job)),
            |r| println!("Started {} of {job:?}; `slipway jobs log {app} {job} {}` shows its output.", r.id, r.id),
        ),
        JobsCommand::Log { app, job, run } => out.show(
            app_id(&client, &app).and_then(|id| jobs::run_log(&client, &id, &job, &run)),
            |text| print!("{text}"),
        ),
    }
}

/// A run in a few words: its status and when.
fn last(r: &JobRun) -> String {
    let at = r
        .started_at
        .as_deref()
        .or(r.scheduled_at.as_deref())
        .unwrap_or("");
    format!("{} {at}", r.status)
}
