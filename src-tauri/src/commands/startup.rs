//! The moment the window became interactive, for the start-up benchmark
//! (`scripts/bench-desktop.py`): the UI calls `ui_ready` once its first view is rendered.
//! With `SLIPWAY_STARTUP_REPORT=1` in the environment the shell prints one JSON line,
//! `{"ready": true, "pid": …}`, to its standard output; the script measures the time from
//! starting the process to that line, and the memory of the process tree after it.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

static REPORTED: AtomicBool = AtomicBool::new(false);

/// Called by the UI after its first view is on screen; reports it once.
#[tauri::command]
pub fn ui_ready() {
    let asked = std::env::var_os("SLIPWAY_STARTUP_REPORT").is_some_and(|v| v == "1");
    if asked && !REPORTED.swap(true, Ordering::SeqCst) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{{\"ready\": true, \"pid\": {}}}", std::process::id());
        let _ = out.flush();
    }
}
