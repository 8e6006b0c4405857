//! The local platform for the daily commands: the same embedded platform the desktop app and
//! the MCP server start when no platform is configured (SQLite, data under
//! `slipway_platform::embedded::default_data_dir()`), so a newcomer's first `slipway build`
//! works without a server or a login.
//!
//! The desktop app and the MCP server run it in their own process, which lives as long as the
//! user works with them. A CLI command ends right after its build, and the app it deployed
//! must keep running, so the CLI runs the platform as a background process of its own
//! (`slipway platform local`) instead. Whichever program started it, the others find it by
//! its URL file and use it.

use std::io::IsTerminal as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use slipway_platform::embedded::{self, Embedded, Running};
use slipway_platform_client::credentials;
use slipway_platform_client::{ENV_TOKEN, ENV_URL, Endpoint};
use slipway_toolkit::ToolError;

/// How long a background platform may take to answer after it was started (its first start
/// creates the database and the keys).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// What to do when no platform is configured and no local one runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenMissing {
    /// Say how to get one (commands that only read: status, logs, …).
    Explain,
    /// Ask on a terminal, else say which flag starts one (`slipway build`, `slipway dev`).
    Offer,
    /// Start it without asking (`--start-platform`).
    Start,
}

/// The endpoint of the configured platform; else of the local platform when it runs (said on
/// stderr); else, as `missing` says, of a local platform started now in the background.
pub fn endpoint(missing: WhenMissing) -> Result<Endpoint, String> {
    let not_configured = match Endpoint::from_env(None) {
        Ok(endpoint) => return Ok(endpoint),
        Err(ToolError::NotConfigured(message)) if nothing_configured() => message,
        Err(other) => return Err(other.to_string()),
    };
    let dir = embedded::default_data_dir();
    if let Some(running) = embedded::running(&dir) {
        eprintln!(
            "… no platform is configured: using the local platform at {} (pid {})",
            running.url, running.pid
        );
        return Ok(Endpoint::new(running.url, running.token));
    }
    let start = match missing {
        WhenMissing::Explain => false,
        WhenMissing::Start => true,
        WhenMissing::Offer => ask_to_start(&dir)?,
    };
    if !start {
        return Err(format!(
            "{not_configured}. Or use the local platform (data in {}): pass --start-platform to \
             `slipway build` or `slipway dev`, or run `slipway platform local`",
            dir.display()
        ));
    }
    let running = start_in_background(&dir)?;
    Ok(Endpoint::new(running.url, running.token))
}

/// Whether nothing names a platform for the default environment: neither variable is set and
/// `slipway login` saved nothing. A half configuration (a URL without its token) is a mistake
/// to be told about, not a reason to build and deploy somewhere else.
fn nothing_configured() -> bool {
    let unset = |name: &str| std::env::var(name).map_or(true, |v| v.trim().is_empty());
    unset(ENV_URL) && unset(ENV_TOKEN) && matches!(credentials::saved("production"), Ok(None))
}

/// On a terminal, asks whether to start the local platform; elsewhere (scripts, CI) never
/// starts one unasked.
fn ask_to_start(dir: &Path) -> Result<bool, String> {
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return Ok(false);
    }
    let question = format!(
        "No platform is configured. Start the local platform in the background (data in {})?",
        dir.display()
    );
    crate::prompt::yes(&question, true)
}

/// Where a background local platform writes its log.
fn log_path(dir: &Path) -> PathBuf {
    dir.join("local-platform.log")
}

/// Starts `slipway platform local` as a background process in a process group of its own (a
/// Ctrl-C meant for this command does not stop it) and waits until it answers.
fn start_in_background(dir: &Path) -> Result<Running, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let log_file = log_path(dir);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_file)
        .map_err(|e| format!("cannot open {}: {e}", log_file.display()))?;
    let log_err = log
        .try_clone()
        .map_err(|e| format!("cannot open {}: {e}", log_file.display()))?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut child = Command::new(exe)
        .args(["platform", "local"])
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .map_err(|e| format!("cannot start the local platform: {e}"))?;
    eprintln!(
        "… starting the local platform in the background (log: {})",
        log_file.display()
    );
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Some(running) = embedded::running(dir) {
            eprintln!(
                "… the local platform runs at {} (pid {}); `slipway platform local --stop` stops it",
                running.url, running.pid
            );
            return Ok(running);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "the local platform stopped at start ({status}); see {}",
                log_file.display()
            ));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the local platform did not answer within {} s; see {}",
                START_TIMEOUT.as_secs(),
                log_file.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `slipway platform local`: runs the local platform in the foreground until Ctrl-C or
/// SIGTERM (the apps it deployed stop with it); `--stop` stops one that runs.
pub fn run(stop: bool) -> ExitCode {
    let dir = embedded::default_data_dir();
    if stop {
        return stop_running(&dir);
    }
    if let Some(running) = embedded::running(&dir) {
        println!(
            "The local platform already runs at {} (pid {}).",
            running.url, running.pid
        );
        return ExitCode::SUCCESS;
    }
    let mut platform = match Embedded::start(&dir) {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "error: the local platform cannot start on {}: {e}",
                dir.display()
            );
            return ExitCode::FAILURE;
        }
    };
    println!(
        "The local platform runs at {} (data in {}). Ctrl-C stops it and its apps.",
        platform.url(),
        dir.display()
    );
    let stopped = wait_for_stop_signal();
    platform.stop();
    match stopped {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Blocks until SIGINT or SIGTERM.
fn wait_for_stop_signal() -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(|e| format!("cannot wait for SIGTERM: {e}"))?;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        Ok(())
    })
}

/// Whether process `pid` is a `slipway platform local`, not the desktop app or an MCP server
/// (which run the same local platform inside themselves and must not be stopped from here).
fn is_platform_local(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        args.windows(2)
            .any(|w| w[0] == b"platform".as_slice() && w[1] == b"local".as_slice())
    })
}

/// Sends SIGTERM to the running local platform and waits until it is gone.
fn stop_running(dir: &Path) -> ExitCode {
    let Some(running) = embedded::running(dir) else {
        println!("The local platform does not run.");
        return ExitCode::SUCCESS;
    };
    if !is_platform_local(running.pid) {
        eprintln!(
            "error: the local platform runs inside another program (pid {}: the desktop app or \
             an MCP server); it stops when that program ends",
            running.pid
        );
        return ExitCode::FAILURE;
    }
    let pid = nix::unistd::Pid::from_raw(running.pid.cast_signed());
    if let Err(e) = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM) {
        eprintln!(
            "error: cannot stop the local platform (pid {}): {e}",
            running.pid
        );
        return ExitCode::FAILURE;
    }
    // Gone means the process has ended, not only stopped answering: it closes its listener
    // before it has finished shutting down (its apps, its URL file).
    let deadline = Instant::now() + Duration::from_secs(30);
    let stat = format!("/proc/{}/stat", running.pid);
    // A zombie (ended, not yet reaped by its parent) has ended too.
    let alive = || {
        std::fs::read_to_string(&stat).is_ok_and(|s| {
            s.rsplit_once(") ")
                .is_none_or(|(_, rest)| !rest.starts_with('Z'))
        })
    };
    while alive() {
        if Instant::now() > deadline {
            eprintln!(
                "error: the local platform (pid {}) did not stop within 30 s",
                running.pid
            );
            return ExitCode::FAILURE;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    println!("Stopped the local platform (pid {}).", running.pid);
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_platform_local_process_is_stopped() {
        assert!(!is_platform_local(std::process::id()), "a test is not one");
        // `; true` keeps the shell from replacing itself with `sleep`.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30; true", "platform", "local"])
            .spawn()
            .unwrap();
        // Until the child has executed `sh`, /proc shows the forked test's own command line.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut named = false;
        while !named && Instant::now() < deadline {
            named = is_platform_local(child.id());
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(named, "sh … platform local is one");
        assert!(!is_platform_local(u32::MAX), "no such process");
    }
}
