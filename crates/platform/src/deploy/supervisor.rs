//! The supervisor of one service instance: starts it, restarts it with exponential back-off
//! whenever it exits, and stops (and reaps) it when cancelled. What happened is kept in a
//! shared [`ServiceState`] the deployer polls for health decisions, and noted in the
//! service's runtime log between the service's own output.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::runtime::{Exit, PreparedImage, Runtime};
use crate::db::now_millis;

/// First restart delay; doubled after every exit, up to [`MAX_BACKOFF`].
pub const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// Longest restart delay.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// An instance that ran this long resets the back-off.
pub const STABLE_AFTER: Duration = Duration::from_secs(30);

/// What the deployer knows about a supervised service.
#[derive(Debug, Default, Clone)]
pub struct ServiceState {
    /// Starts so far.
    pub starts: u32,
    /// When the current instance started, while one runs.
    pub running_since: Option<Instant>,
    /// Epoch milliseconds of the first start.
    pub first_started_at: Option<i64>,
    /// Every exit (and failed start), oldest first.
    pub exits: Vec<(Instant, Exit)>,
}

/// A supervised service: its state, and how to stop it.
#[derive(Debug)]
pub struct Supervised {
    /// Shared with the supervisor task.
    pub state: Arc<Mutex<ServiceState>>,
    cancel: CancellationToken,
    done: tokio::sync::watch::Receiver<bool>,
}

impl Supervised {
    /// A copy of the current state.
    pub fn snapshot(&self) -> ServiceState {
        self.state.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Stops the instance (SIGTERM to its group, SIGKILL after the grace) and waits until it
    /// is reaped.
    pub async fn stop(&self) {
        self.cancel.cancel();
        let mut done = self.done.clone();
        let _ = done.wait_for(|d| *d).await;
    }
}

/// What the supervisor runs.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The prepared image.
    pub image: PreparedImage,
    /// `PORT`, `<DEP>_URL`, …
    pub env: Vec<(String, String)>,
    /// The runtime log file.
    pub log: PathBuf,
    /// Service name (for log lines).
    pub service: String,
}

/// Starts supervising `launch` on `tracker`; `parent` cancelled (server shutdown) stops it too.
pub fn spawn(
    runtime: Arc<dyn Runtime>,
    launch: Launch,
    parent: &CancellationToken,
    tracker: &TaskTracker,
) -> Supervised {
    let state = Arc::new(Mutex::new(ServiceState::default()));
    let cancel = parent.child_token();
    let (done_tx, done) = tokio::sync::watch::channel(false);
    let task_state = Arc::clone(&state);
    let task_cancel = cancel.clone();
    tracker.spawn(async move {
        run(runtime, launch, task_state, task_cancel).await;
        let _ = done_tx.send(true);
    });
    Supervised {
        state,
        cancel,
        done,
    }
}

fn note(log: &PathBuf, message: &str) {
    if let Some(dir) = log.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        let _ = writeln!(f, "==> {message}");
    }
}

async fn run(
    runtime: Arc<dyn Runtime>,
    launch: Launch,
    state: Arc<Mutex<ServiceState>>,
    cancel: CancellationToken,
) {
    let mut delay = FIRST_BACKOFF;
    loop {
        if cancel.is_cancelled() {
            break;
        }
        match runtime.start(&launch.image, &launch.env, &launch.log) {
            Ok(mut instance) => {
                let started = Instant::now();
                note(
                    &launch.log,
                    &format!(
                        "started {} (pid {})",
                        launch.service,
                        instance.pid().map_or("?".into(), |p| p.to_string())
                    ),
                );
                if let Ok(mut s) = state.lock() {
                    s.starts += 1;
                    s.running_since = Some(started);
                    s.first_started_at.get_or_insert_with(now_millis);
                }
                tokio::select! {
                    exit = instance.wait() => {
                        note(&launch.log, &format!("{} exited ({})", launch.service, exit.description));
                        if let Ok(mut s) = state.lock() {
                            s.running_since = None;
                            s.exits.push((Instant::now(), exit));
                        }
                        if started.elapsed() >= STABLE_AFTER {
                            delay = FIRST_BACKOFF;
                        }
                    }
                    () = cancel.cancelled() => {
                        instance.stop().await;
                        note(&launch.log, &format!("stopped {}", launch.service));
                        if let Ok(mut s) = state.lock() {
                            s.running_since = None;
                        }
                        break;
                    }
                }
            }
            Err(e) => {
                note(
                    &launch.log,
                    &format!("{} could not start: {e}", launch.service),
                );
                if let Ok(mut s) = state.lock() {
                    s.exits.push((
                        Instant::now(),
                        Exit {
                            code: None,
                            description: format!("could not start: {e}"),
                        },
                    ));
                }
            }
        }
        note(
            &launch.log,
            &format!("restarting {} in {} ms", launch.service, delay.as_millis()),
        );
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = cancel.cancelled() => break,
        }
        delay = (delay * 2).min(MAX_BACKOFF);
    }
}
