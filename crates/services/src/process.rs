//! One supervised server process: started, watched and restarted with backoff when it dies,
//! its output appended to a log, stopped with the signal it shuts down cleanly on. Also what
//! every server needs around that: finding its program, a free loopback port, waiting until
//! it accepts connections, and stopping a server a killed platform left behind.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::error::ServiceError;
use crate::spec::ResourceKey;

/// Whose a server is: what a server that went down takes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Serves {
    /// A server shared by every resource of these engines (as resources record them:
    /// `postgres` and `pgmq`, `mysql`, `seaweedfs`).
    Shared {
        /// The engines.
        engines: &'static [&'static str],
    },
    /// One resource's own server (a Redis, a memcached, the durable block's Restate).
    Resource(ResourceKey),
    /// One app's server (its table server).
    App(String),
}

/// A backing server that exited while it was meant to run (it is restarted with backoff).
#[derive(Debug, Clone)]
pub struct ServerExit {
    /// Which server (`postgres`, `redis a0b5e7c1a93f2_cache_hot`).
    pub server: String,
    /// Whose it is.
    pub serves: Serves,
    /// How it ended (`signal: 9 (SIGKILL)`, `exit status: 1`).
    pub status: String,
}

/// Every exit of a supervised server in this process, for whoever listens (the platform tells
/// the apps' owners). One channel for the process: the supervisor is the one place that sees
/// a server die, deep below the per-engine start-up code; a listener keeps the exits of the
/// servers it knows (by [`Serves`]) and leaves the rest.
static EXITS: std::sync::LazyLock<tokio::sync::broadcast::Sender<ServerExit>> =
    std::sync::LazyLock::new(|| tokio::sync::broadcast::channel(64).0);

/// Listens to every server exit from now on.
pub fn exits() -> tokio::sync::broadcast::Receiver<ServerExit> {
    EXITS.subscribe()
}

/// How a server is run.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    /// Which server, for logs and errors (`postgres`, `redis a1b2_cache_hot`).
    pub name: String,
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Where its output goes (appended).
    pub log: PathBuf,
    /// The user and group it runs as (PostgreSQL refuses root), when not the platform's own.
    pub user: Option<(u32, u32)>,
    /// The signal it shuts down cleanly and quickly on.
    pub stop_signal: Signal,
    /// The loopback port it accepts connections on once ready.
    pub port: u16,
    /// The Unix socket it accepts connections on once ready, instead of `port` (a server
    /// that checks no credentials listens only there: see [`crate::dynalite`]).
    pub socket: Option<PathBuf>,
    /// Whose it is (said when it exits).
    pub serves: Serves,
}

impl Launch {
    /// A server of a resource's or an app's own in `dir`: run as the platform's user, its
    /// output in `dir/server.log`, stopped with `SIGTERM`, ready once loopback `port` accepts.
    pub fn own(
        key: &ResourceKey,
        name: String,
        program: PathBuf,
        args: Vec<String>,
        dir: &Path,
        port: u16,
    ) -> Self {
        Self {
            name,
            program,
            args,
            log: dir.join("server.log"),
            user: None,
            stop_signal: Signal::SIGTERM,
            port,
            socket: None,
            serves: Serves::Resource(key.clone()),
        }
    }
}

/// A running, supervised server.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    name: String,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
    pid: Arc<AtomicU32>,
}

/// The first restart waits this long; each further one twice as long, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A server that ran this long before dying restarts after the first backoff again.
const STABLE: Duration = Duration::from_secs(60);
/// How long a server has to accept connections after it is started.
const READY_WITHIN: Duration = Duration::from_secs(60);
/// How long a stopping server has before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(15);

impl ServerProcess {
    /// Starts the server and waits until it accepts connections on its port.
    pub async fn start(launch: Launch) -> Result<Self, ServiceError> {
        let (stop, mut stopped) = watch::channel(false);
        let pid = Arc::new(AtomicU32::new(0));
        let (first_tx, first_rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(supervise(
            launch.clone(),
            pid.clone(),
            first_tx,
            stop.subscribe(),
        ));
        let spawned = first_rx.await.unwrap_or_else(|_| {
            Err(ServiceError::Start {
                server: launch.name.clone(),
                reason: "its supervisor ended".into(),
            })
        });
        let server = Self {
            name: launch.name.clone(),
            stop,
            task: Some(task),
            pid,
        };
        spawned?;
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            let ready = match &launch.socket {
                Some(path) => tokio::net::UnixStream::connect(path).await.is_ok(),
                None => tokio::net::TcpStream::connect(("127.0.0.1", launch.port))
                    .await
                    .is_ok(),
            };
            if ready {
                return Ok(server);
            }
            if Instant::now() > deadline || *stopped.borrow_and_update() {
                let reason = format!(
                    "it did not accept connections on {} within {}s; its log ends: {}",
                    launch.socket.as_ref().map_or_else(
                        || format!("port {}", launch.port),
                        |p| p.display().to_string()
                    ),
                    READY_WITHIN.as_secs(),
                    log_tail(&launch.log)
                );
                server.stop().await;
                return Err(ServiceError::Start {
                    server: launch.name,
                    reason,
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The server's current process id (0 between restarts).
    pub fn pid(&self) -> u32 {
        self.pid.load(Ordering::SeqCst)
    }

    /// Stops it cleanly (its stop signal, then a kill after a grace period) and waits.
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        tracing::debug!(server = %self.name, "backing server stopped");
    }
}

/// Runs the server until told to stop, restarting it with backoff whenever it dies.
async fn supervise(
    launch: Launch,
    pid: Arc<AtomicU32>,
    first: tokio::sync::oneshot::Sender<Result<(), ServiceError>>,
    mut stop: watch::Receiver<bool>,
) {
    let mut first = Some(first);
    let mut backoff = FIRST_BACKOFF;
    loop {
        let mut child = match spawn(&launch) {
            Ok(child) => child,
            Err(e) => {
                if let Some(first) = first.take() {
                    let _ = first.send(Err(e));
                    return;
                }
                tracing::warn!(server = %launch.name, error = %e, "cannot restart a backing server");
                if sleep_or_stop(&mut stop, backoff).await {
                    return;
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        pid.store(child.id().unwrap_or(0), Ordering::SeqCst);
        if let Some(id) = child.id() {
            // Beside its log, each time: a platform killed with it running finds it there.
            let _ = std::fs::write(pid_file(&launch.log), id.to_string());
        }
        if let Some(first) = first.take() {
            let _ = first.send(Ok(()));
        }
        let started = Instant::now();
        let stopping = tokio::select! {
            status = child.wait() => {
                pid.store(0, Ordering::SeqCst);
                if started.elapsed() > STABLE {
                    backoff = FIRST_BACKOFF;
                }
                // Nobody listening is fine: the exit is logged below either way.
                let _ = EXITS.send(ServerExit {
                    server: launch.name.clone(),
                    serves: launch.serves.clone(),
                    status: status.as_ref().map_or_else(|e| e.to_string(), |s| s.to_string()),
                });
                tracing::warn!(
                    server = %launch.name,
                    status = %status.map_or_else(|e| e.to_string(), |s| s.to_string()),
                    restart_in_ms = u64::try_from(backoff.as_millis()).unwrap_or(u64::MAX),
                    "a backing server exited; restarting it"
                );
                false
            }
            _ = stop.wait_for(|s| *s) => true,
        };
        if stopping {
            if let Some(id) = child.id().and_then(|id| i32::try_from(id).ok()) {
                let _ = kill(Pid::from_raw(id), launch.stop_signal);
            }
            if tokio::time::timeout(STOP_GRACE, child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
            pid.store(0, Ordering::SeqCst);
            return;
        }
        if sleep_or_stop(&mut stop, backoff).await {
            return;
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Sleeps `how_long` unless told to stop first (true when stopping).
async fn sleep_or_stop(stop: &mut watch::Receiver<bool>, how_long: Duration) -> bool {
    tokio::select! {
        () = tokio::time::sleep(how_long) => false,
        _ = stop.wait_for(|s| *s) => true,
    }
}

fn spawn(launch: &Launch) -> Result<tokio::process::Child, ServiceError> {
    if let Some(dir) = launch.log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&launch.log)?;
    let err = out.try_clone()?;
    let mut command = tokio::process::Command::new(&launch.program);
    command
        .args(&launch.args)
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err)
        .env("LANG", "C.UTF-8")
        // SeaweedFS makes an administrator of whatever AWS key it finds in its environment:
        // no server inherits the platform's.
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .kill_on_drop(true);
    if let Some((uid, gid)) = launch.user {
        command.uid(uid).gid(gid);
    }
    command.spawn().map_err(|e| ServiceError::Start {
        server: launch.name.clone(),
        reason: format!("{}: {e}", launch.program.display()),
    })
}

/// Where a supervised server's current process id is kept: beside its log, for
/// [`stop_leftover`] after a platform that was killed.
pub(crate) fn pid_file(log: &Path) -> PathBuf {
    log.with_extension("supervised.pid")
}

/// The last lines of a log, for an error message.
pub(crate) fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(5).collect();
    let tail: Vec<&str> = lines.into_iter().rev().collect();
    if tail.is_empty() {
        "(empty)".into()
    } else {
        tail.join(" | ")
    }
}

/// The program `name`, from `PATH`, `/usr/sbin` or `/usr/lib/postgresql/<newest>/bin`.
pub(crate) fn find_program(name: &str, package: &'static str) -> Result<PathBuf, ServiceError> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.extend(["/usr/sbin", "/usr/bin", "/sbin"].map(PathBuf::from));
    if let Ok(versions) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut found: Vec<(u32, PathBuf)> = versions
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let v = e.file_name().to_str()?.parse().ok()?;
                Some((v, e.path().join("bin")))
            })
            .collect();
        found.sort();
        dirs.extend(found.into_iter().rev().map(|(_, p)| p));
    }
    dirs.into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| ServiceError::NotInstalled {
            program: name.to_owned(),
            package,
        })
}

/// Writes a file only its owner may read (configurations with passwords, kept ports and
/// passwords), atomically: `slipway-server`'s one file write.
pub(crate) fn secret_file(path: &Path, text: &str) -> Result<(), ServiceError> {
    slipway_server::file::write(path, text.as_bytes(), slipway_server::file::Mode::Secret)?;
    Ok(())
}

/// The port a server keeps in `file` (chosen once, when its data was made).
pub(crate) fn read_port(file: &Path) -> Result<u16, ServiceError> {
    std::fs::read_to_string(file)?
        .trim()
        .parse()
        .map_err(|_| ServiceError::Unsupported(format!("{} is not a port", file.display())))
}

/// A loopback port nothing listens on now.
pub(crate) fn free_port() -> Result<u16, ServiceError> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

/// Stops the server whose process id `pid_file` holds, if it still runs `program` (a server
/// a killed platform left running), so it can be started again under supervision.
pub(crate) async fn stop_leftover(pid_file: &Path, program: &str, signal: Signal) {
    let Some(pid) = std::fs::read_to_string(pid_file)
        .ok()
        .and_then(|t| t.lines().next()?.trim().parse::<i32>().ok())
    else {
        return;
    };
    let runs_it = |pid: i32| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(program))
    };
    if !runs_it(pid) {
        return;
    }
    tracing::info!(
        pid,
        program,
        "stopping a backing server left by an earlier run"
    );
    let _ = kill(Pid::from_raw(pid), signal);
    let deadline = Instant::now() + STOP_GRACE;
    while runs_it(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if runs_it(pid) {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Runs a short administrative command to completion: its output, or its error output as
/// the reason it failed. `env` passes what must not be seen in the process list (a
/// password for `PGPASSWORD`).
pub(crate) async fn run(
    program: &Path,
    args: &[&str],
    stdin: Option<&str>,
    user: Option<(u32, u32)>,
    env: &[(&str, &str)],
) -> Result<String, String> {
    use tokio::io::AsyncWriteExt as _;
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .env("LANG", "C.UTF-8")
        .envs(env.iter().copied())
        .kill_on_drop(true);
    if let Some((uid, gid)) = user {
        command.uid(uid).gid(gid);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    if let Some(mut input) = child.stdin.take() {
        if let Some(text) = stdin {
            input
                .write_all(text.as_bytes())
                .await
                .map_err(|e| e.to_string())?;
        }
        drop(input);
    }
    let output = child.wait_with_output().await.map_err(|e| e.to_string())?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
    }
}

/// The bytes under `dir` (its files' sizes): a Redis resource's size, a volume's use.
pub fn disk_usage(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok())
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => disk_usage(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}
