//! The supervisor of one service instance: starts it, restarts it with exponential back-off
//! whenever it exits, and stops (and reaps) it when cancelled. A service that keeps crashing
//! is given up on: [`CRASH_LIMIT`] exits (or failed starts) within [`CRASH_WINDOW`], none of
//! them after staying up for [`STABLE_AFTER`], end the supervision with a reason the deployer
//! turns into a FAILED deployment. What happened is kept in a shared [`ServiceState`] the
//! deployer polls for health decisions, and noted in the service's runtime log between the
//! service's own output.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::runtime::{Exit, PreparedImage, Runtime};
use slipway_server::clock::now_millis;

/// First restart delay; doubled after every exit, up to [`MAX_BACKOFF`].
pub const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// Longest restart delay.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// An instance that ran this long resets the back-off.
pub const STABLE_AFTER: Duration = Duration::from_secs(30);
/// Quick exits within [`CRASH_WINDOW`] after which a service is given up on. With the
/// back-off above, five quick exits take about 4 s plus the service's own run time, so a
/// service that dies at start is caught in seconds, while one crash an hour never is.
pub const CRASH_LIMIT: usize = 5;
/// The window [`CRASH_LIMIT`] quick exits must fall in.
pub const CRASH_WINDOW: Duration = Duration::from_secs(300);

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
    /// Set when the supervisor stopped restarting a crash-looping service: why.
    pub gave_up: Option<String>,
}

/// A supervised service: its state, and how to stop it.
#[derive(Debug)]
pub struct Supervised {
    /// Shared with the supervisor task.
    pub state: Arc<Mutex<ServiceState>>,
    cancel: CancellationToken,
    done: tokio::sync::watch::Receiver<bool>,
    /// Asks the supervisor to replace the running instance, with the reason it notes.
    restart: tokio::sync::mpsc::UnboundedSender<String>,
}

impl Supervised {
    /// A copy of the current state.
    pub fn snapshot(&self) -> ServiceState {
        self.state.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Replaces the running instance: it is stopped (as by [`Supervised::stop`]) and started
    /// again after the current back-off, the stop counted as an exit described by `reason`
    /// (a health check that keeps failing, [`crate::health`]).
    pub fn restart(&self, reason: String) {
        let _ = self.restart.send(reason);
    }

    /// True once the supervision has ended (stopped, or given up on).
    pub fn is_done(&self) -> bool {
        *self.done.borrow()
    }

    /// Stops the instance (SIGTERM to its group, SIGKILL after the grace) and waits until it
    /// is reaped.
    pub async fn stop(&self) {
        self.cancel.cancel();
        let mut done = self.done.clone();
        let _ = done.wait_for(|d| *d).await;
    }
}

impl Supervised {
    /// A handle that outlives a borrow of this one, for a task that reacts to a give-up.
    pub fn watcher(&self) -> Watcher {
        Watcher {
            state: Arc::clone(&self.state),
            done: self.done.clone(),
        }
    }
}

/// Waits for the end of a supervision, so the deployer can act on a service that was given
/// up on without holding the deployment.
#[derive(Debug, Clone)]
pub struct Watcher {
    state: Arc<Mutex<ServiceState>>,
    done: tokio::sync::watch::Receiver<bool>,
}

impl Watcher {
    /// Waits until the supervision ends: the give-up reason, or `None` when it was stopped.
    pub async fn gave_up(mut self) -> Option<String> {
        let _ = self.done.wait_for(|d| *d).await;
        self.state.lock().ok()?.gave_up.clone()
    }
}

/// What the supervisor runs. `Debug` shows the environment's names only: values include app
/// secrets.
#[derive(Clone)]
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

impl std::fmt::Debug for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch")
            .field("image", &self.image)
            .field(
                "env",
                &self.env.iter().map(|(name, _)| name).collect::<Vec<_>>(),
            )
            .field("log", &self.log)
            .field("service", &self.service)
            .finish()
    }
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
    let (restart, restarts) = tokio::sync::mpsc::unbounded_channel();
    let task_state = Arc::clone(&state);
    let task_cancel = cancel.clone();
    tracker.spawn(async move {
        run(runtime, launch, task_state, task_cancel, restarts).await;
        let _ = done_tx.send(true);
    });
    Supervised {
        state,
        cancel,
        done,
        restart,
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
    mut restarts: tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let mut delay = FIRST_BACKOFF;
    let mut crashes = Crashes::default();
    loop {
        if cancel.is_cancelled() {
            break;
        }
        // A restart asked of an instance that has exited since is not one of the next.
        while restarts.try_recv().is_ok() {}
        let exit = match runtime.start(&launch.image, &launch.env, &launch.log) {
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
                        if started.elapsed() >= STABLE_AFTER {
                            delay = FIRST_BACKOFF;
                            crashes.stable();
                        }
                        exit
                    }
                    Some(reason) = restarts.recv() => {
                        note(&launch.log, &format!("restarting {}: {reason}", launch.service));
                        instance.stop().await;
                        Exit {
                            code: None,
                            description: format!("restarted: {reason}"),
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
                Exit {
                    code: None,
                    description: format!("could not start: {e}"),
                }
            }
        };
        let now = Instant::now();
        let given_up = crashes
            .record(now)
            .then(|| crashes.reason(&launch.service, &exit));
        if let Ok(mut s) = state.lock() {
            s.running_since = None;
            s.exits.push((now, exit));
            s.gave_up.clone_from(&given_up);
        }
        if let Some(reason) = given_up {
            note(&launch.log, &format!("giving up: {reason}"));
            break;
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

/// The quick exits of the current crash streak, to decide when to give up.
#[derive(Debug, Default)]
struct Crashes {
    recent: VecDeque<Instant>,
}

impl Crashes {
    /// An instance stayed up for [`STABLE_AFTER`]: earlier exits no longer count.
    fn stable(&mut self) {
        self.recent.clear();
    }

    /// Counts an exit (the streak was cleared just before if it followed a stable run); true when
    /// [`CRASH_LIMIT`] of them fall within [`CRASH_WINDOW`].
    fn record(&mut self, at: Instant) -> bool {
        self.recent.push_back(at);
        while self
            .recent
            .front()
            .is_some_and(|first| at.duration_since(*first) > CRASH_WINDOW)
        {
            self.recent.pop_front();
        }
        self.recent.len() >= CRASH_LIMIT
    }

    fn reason(&self, service: &str, last: &Exit) -> String {
        format!(
            "service {service} exited {} times within {} s without staying up for {} s \
             (last: {}); it is no longer restarted",
            self.recent.len(),
            CRASH_WINDOW.as_secs(),
            STABLE_AFTER.as_secs(),
            last.description
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit() -> Exit {
        Exit {
            code: Some(1),
            description: "exit code 1".into(),
        }
    }

    #[test]
    fn five_quick_exits_within_the_window_give_up() {
        let mut crashes = Crashes::default();
        let t0 = Instant::now();
        for i in 0..4 {
            assert!(!crashes.record(t0 + Duration::from_secs(i)));
        }
        assert!(crashes.record(t0 + Duration::from_secs(4)));
        let reason = crashes.reason("api", &exit());
        assert!(
            reason.contains("service api exited 5 times within 300 s"),
            "{reason}"
        );
        assert!(reason.contains("exit code 1"), "{reason}");
    }

    #[test]
    fn exits_spread_beyond_the_window_or_after_a_stable_run_do_not() {
        let mut crashes = Crashes::default();
        let t0 = Instant::now();
        for i in 0..10 {
            // One exit every 100 s: at most 4 fall in any 300 s window.
            assert!(!crashes.record(t0 + Duration::from_secs(100 * i)));
        }
        let mut crashes = Crashes::default();
        for i in 0..4 {
            assert!(!crashes.record(t0 + Duration::from_secs(i)));
        }
        crashes.stable();
        assert!(!crashes.record(t0 + Duration::from_secs(40)));
    }
}
