//! One round of the development loop and the loop around it: validate, find what changed,
//! sync or build, wait for the health-gated deployment, report.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::fingerprint::{Fingerprints, Mode};
use slipway_platform_client::ProjectFiles;
use slipway_platform_client::history::{Deployment, DeploymentStatus};
use slipway_platform_client::stream::{Follow, LogLine, follow_logs};
use slipway_platform_client::{
    AppIdArgs, BuildAppArgs, BuildStatus, Client, build_app_with_progress, disable_app, history,
    read_app_file, upload_services,
};
use slipway_platform_client::{FailedBuilds, ToolError};

/// How long the loop waits for a deployment to end after its builds.
const DEPLOY_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// What the loop reports, in order. Serialized with an `event` tag for the desktop.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum DevEvent {
    /// A long step is under way.
    Progress {
        /// What is happening.
        message: String,
    },
    /// The devfile is invalid; nothing is built until it is fixed.
    Invalid {
        /// Each error with its path and line.
        errors: Vec<String>,
        /// Warnings.
        warnings: Vec<String>,
    },
    /// Files changed (relative to the project).
    Changed {
        /// The changed paths.
        files: Vec<String>,
    },
    /// Services are being brought up to date.
    Rebuilding {
        /// Each service and how.
        services: BTreeMap<String, Mode>,
    },
    /// A new deployment is serving.
    Running {
        /// The deployment.
        deployment_id: String,
        /// The app's URL, when it has one.
        url: Option<String>,
        /// Seconds from the change to serving.
        seconds: f64,
    },
    /// A build or a deployment failed; what served before keeps serving.
    Failed {
        /// Why, with the failing service's last log lines when there are any.
        message: String,
    },
    /// A log line of the app (build or runtime).
    Log {
        /// The line.
        line: LogLine,
    },
    /// Waiting for the next change.
    Watching,
    /// The loop ended.
    Stopped {
        /// True when `--down` disabled the app.
        disabled: bool,
    },
}

/// How to run the loop.
#[derive(Debug, Clone)]
pub struct DevOptions {
    /// The project directory (with `devfile.yaml`).
    pub project: PathBuf,
    /// Disable the app when the loop stops.
    pub down: bool,
    /// Follow the app's logs as [`DevEvent::Log`].
    pub logs: bool,
}

/// Stops a running loop from another thread (Ctrl-C, the desktop's switch).
#[derive(Debug, Clone, Default)]
pub struct StopHandle(Arc<AtomicBool>);

impl StopHandle {
    /// A handle not yet stopped.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the loop to stop (it finishes the step under way, at most a watch tick later).
    pub fn stop(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether a stop was asked for.
    pub fn stopped(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Where events go.
pub type Emit = Arc<dyn Fn(DevEvent) + Send + Sync>;

/// Runs the loop until `stop` is asked for. Errors are what makes the loop impossible (no
/// project, the platform refuses the token); a failed build or deployment is an event and
/// the loop goes on.
pub fn run(
    client: &Client,
    options: &DevOptions,
    stop: &StopHandle,
    emit: &Emit,
) -> Result<(), ToolError> {
    let root = options
        .project
        .canonicalize()
        .map_err(|e| ToolError::io("open", &options.project, &e))?;
    if !root.join("devfile.yaml").is_file() {
        return Err(ToolError::invalid(
            "project_path",
            format!("{} has no devfile.yaml", root.display()),
        ));
    }
    // Watching starts first, so a save during the first build is not missed.
    let watcher = crate::watch::Watcher::new(&root)?;
    let mut deployed: Option<Fingerprints> = None;
    let mut following = false;
    let mut changed_at = Instant::now();
    while !stop.stopped() {
        let text = std::fs::read_to_string(root.join("devfile.yaml"))
            .map_err(|e| ToolError::io("read", &root.join("devfile.yaml"), &e))?;
        let report = slipway_devfile::validate(&text, Some(&ProjectFiles(root.clone())));
        if !report.valid() {
            emit(DevEvent::Invalid {
                errors: report.errors(),
                warnings: report.warnings(),
            });
        } else {
            let now = Fingerprints::take(&root, &text)?;
            let plan: BTreeMap<String, Mode> = match &deployed {
                None => now.0.keys().map(|s| (s.clone(), Mode::Full)).collect(),
                Some(before) => now.changed_since(before),
            };
            if !plan.is_empty() {
                emit(DevEvent::Rebuilding {
                    services: plan.clone(),
                });
                let first = deployed.is_none();
                round(client, &root, &plan, first, changed_at, emit)?;
                // Whatever the outcome, these inputs were tried: the next round waits for
                // another change instead of repeating a failure.
                deployed = Some(now);
                if options.logs
                    && !following
                    && let Some(app_id) = app_id_of(&root)
                {
                    following = true;
                    spawn_log_follower(client.clone(), app_id, stop.clone(), emit.clone());
                }
            }
        }
        emit(DevEvent::Watching);
        match next_change(&watcher, &root, stop, emit) {
            Some(at) => changed_at = at,
            None => break,
        }
    }
    let mut disabled = false;
    if options.down
        && let Some(app_id) = app_id_of(&root)
    {
        emit(DevEvent::Progress {
            message: "disabling the app (--down)".into(),
        });
        disable_app(
            client,
            &AppIdArgs {
                app_id,
                environment: None,
            },
        )?;
        disabled = true;
    }
    emit(DevEvent::Stopped { disabled });
    Ok(())
}

/// Builds `plan` and waits for the deployment that follows; reports the outcome.
fn round(
    client: &Client,
    root: &Path,
    plan: &BTreeMap<String, Mode>,
    first: bool,
    changed_at: Instant,
    emit: &Emit,
) -> Result<(), ToolError> {
    let progress = |message: &str| {
        emit(DevEvent::Progress {
            message: message.to_owned(),
        });
    };
    let app_id = app_id_of(root);
    let previous = match &app_id {
        Some(id) => newest_deployment(client, id)?.map(|d| d.id),
        None => None,
    };
    let built = match (&app_id, first) {
        // The first round builds everything through `build_app`: it registers the app when
        // `.app` is missing and writes `imageUri`, as `slipway build` does.
        (None, _) | (_, true) => build_everything(client, root, &progress)?,
        (Some(app_id), false) => build_plan(client, root, app_id, plan, &progress)?,
    };
    if let Built::Failed(message) = built {
        emit(DevEvent::Failed { message });
        return Ok(());
    }
    let Some(app_id) = app_id_of(root) else {
        return Err(ToolError::Internal(
            "the build did not leave an .app file".into(),
        ));
    };
    progress("waiting for the new deployment to become healthy");
    emit(new_deployment(
        client,
        &app_id,
        previous.as_deref(),
        changed_at,
    )?);
    Ok(())
}

/// How a round's builds ended.
enum Built {
    /// Every build succeeded; a deployment follows.
    Succeeded,
    /// A build failed: why, with the logs' last lines.
    Failed(String),
}

/// Builds every service through `build_app`, registering the app if it has no `.app` yet.
/// Builds that failed, and a devfile found invalid, are the round's outcome; any other error
/// ends the loop.
fn build_everything(
    client: &Client,
    root: &Path,
    progress: &dyn Fn(&str),
) -> Result<Built, ToolError> {
    let outcome = build_app_with_progress(
        client,
        &BuildAppArgs {
            project_path: root.display().to_string(),
            environment: None,
            verbose: Some(true),
            architecture: None,
            build_mode: None,
            service_name: None,
        },
        progress,
    );
    match outcome {
        Ok(_) => Ok(Built::Succeeded),
        Err(ToolError::BuildsFailed(failed)) => Ok(Built::Failed(failure_of_build(&failed))),
        Err(invalid @ ToolError::InvalidDevfile { .. }) => Ok(Built::Failed(invalid.to_string())),
        Err(e) => Err(e),
    }
}

/// Uploads the services of `plan`: as syncs when every one can be synced (in full when the
/// platform refuses a sync), otherwise as full builds.
fn build_plan(
    client: &Client,
    root: &Path,
    app_id: &str,
    plan: &BTreeMap<String, Mode>,
    progress: &dyn Fn(&str),
) -> Result<Built, ToolError> {
    let services: Vec<String> = plan.keys().cloned().collect();
    let sync = plan.values().all(|m| *m == Mode::Sync);
    let mut outcome = upload_services(client, root, app_id, &services, sync, progress);
    if sync && matches!(outcome, Err(ToolError::Conflict { .. })) {
        progress("a sync is not possible here; building in full");
        outcome = upload_services(client, root, app_id, &services, false, progress);
    }
    let builds = outcome?;
    let failed: Vec<String> = builds
        .iter()
        .filter(|b| b.status != BuildStatus::Succeeded)
        .map(|b| {
            format!(
                "build of {} {}: {}{}",
                b.service,
                b.status,
                b.error.as_deref().unwrap_or("see its log"),
                log_tail(b.log.as_deref().unwrap_or(""))
            )
        })
        .collect();
    if failed.is_empty() {
        return Ok(Built::Succeeded);
    }
    Ok(Built::Failed(failed.join("\n")))
}

/// Waits (at most [`DEPLOY_TIMEOUT`]) for a deployment newer than `previous` to end, and
/// says how: running (with the app's URL), failed (with the platform's diagnosis), or not
/// ended in time.
fn new_deployment(
    client: &Client,
    app_id: &str,
    previous: Option<&str>,
    changed_at: Instant,
) -> Result<DevEvent, ToolError> {
    let deadline = Instant::now() + DEPLOY_TIMEOUT;
    loop {
        if let Some(newest) = newest_deployment(client, app_id)?
            && Some(newest.id.as_str()) != previous
        {
            match newest.status {
                DeploymentStatus::Running => {
                    let status =
                        client.run(slipway_platform_client::get_app_status(&AppIdArgs {
                            app_id: app_id.to_owned(),
                            environment: None,
                        })?)?;
                    return Ok(DevEvent::Running {
                        deployment_id: newest.id,
                        url: status.app_url,
                        seconds: changed_at.elapsed().as_secs_f64(),
                    });
                }
                DeploymentStatus::Failed => {
                    return Ok(DevEvent::Failed {
                        message: failure_of_deployment(client, app_id, &newest),
                    });
                }
                _ => {}
            }
        }
        if Instant::now() > deadline {
            return Ok(DevEvent::Failed {
                message: format!(
                    "no deployment ended within {} minutes; see slipway why",
                    DEPLOY_TIMEOUT.as_secs() / 60
                ),
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits for a change that can matter; `None` when stopped.
fn next_change(
    watcher: &crate::watch::Watcher,
    root: &Path,
    stop: &StopHandle,
    emit: &Emit,
) -> Option<Instant> {
    loop {
        if stop.stopped() {
            return None;
        }
        let (paths, problems) = watcher.changes(Duration::from_millis(200));
        for problem in problems {
            emit(DevEvent::Progress {
                message: format!("watching the project: {problem}"),
            });
        }
        if !paths.is_empty() {
            let at = Instant::now();
            emit(DevEvent::Changed {
                files: paths
                    .iter()
                    .map(|p| {
                        p.strip_prefix(root)
                            .unwrap_or(p)
                            .to_string_lossy()
                            .into_owned()
                    })
                    .collect(),
            });
            return Some(at);
        }
    }
}

fn spawn_log_follower(client: Client, app_id: String, stop: StopHandle, emit: Emit) {
    std::thread::spawn(move || {
        let follow = Follow {
            service: None,
            tail: Some(0),
        };
        let _ = follow_logs(&client, &app_id, &follow, |line| {
            if stop.stopped() {
                return ControlFlow::Break(());
            }
            emit(DevEvent::Log { line: line.clone() });
            ControlFlow::Continue(())
        });
    });
}

fn app_id_of(root: &Path) -> Option<String> {
    read_app_file(root).ok().flatten().map(|a| a.app_id)
}

fn newest_deployment(client: &Client, app_id: &str) -> Result<Option<Deployment>, ToolError> {
    Ok(history::deployments(client, app_id, 1)?
        .deployments
        .into_iter()
        .next())
}

/// Why the builds failed, with each log's last lines.
fn failure_of_build(failed: &FailedBuilds) -> String {
    let mut message = failed.message.clone();
    for log in failed.build_logs.values() {
        message.push_str(&log_tail(log.as_deref().unwrap_or("")));
    }
    message
}

/// What the platform's diagnosis says of a failed deployment: its reason and each failing
/// service's last log lines.
fn failure_of_deployment(client: &Client, app_id: &str, deployment: &Deployment) -> String {
    let mut message = format!(
        "the new deployment failed: {}; the previous one keeps serving",
        deployment.reason.as_deref().unwrap_or("no reason given")
    );
    if let Ok(diagnosis) = history::diagnosis(client, app_id) {
        for service in &diagnosis.failing_services {
            message.push_str(&format!(
                "\n{}:{}",
                service.service,
                log_tail(&service.log_tail)
            ));
        }
    }
    message
}

/// The last lines of a log, indented under the message.
fn log_tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let start = lines.len().saturating_sub(10);
    lines[start..]
        .iter()
        .map(|l| format!("\n    {l}"))
        .collect()
}
