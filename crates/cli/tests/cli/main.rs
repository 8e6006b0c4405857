//! End-to-end tests of the `slipway` binary: `slipway call` for the tools that need no server.

#![allow(
    clippy::too_many_lines,
    reason = "a test or a bench reads as one scenario; the 100-line limit is for production code"
)]

mod build_urls;
mod call;
mod care_crash;
mod care_staff;
mod daily;
mod dev;
mod domains;
mod git;
mod jobs;
mod local_platform;
mod notify;
mod resources;
mod scaffold;
mod servers;
mod stateful_crash;
mod tls;

use std::process::Command;

use serde_json::Value;

/// Runs `slipway call <tool> <args>` in `dir`; returns (exit code, parsed stdout, stderr).
pub fn call_in(dir: &std::path::Path, tool: &str, args: &str) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_slipway"))
        .args(["call", tool, args])
        .current_dir(dir)
        .output()
        .expect("slipway runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        json,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `call_in` from a fresh temporary directory.
pub fn call(tool: &str, args: &str) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    call_in(dir.path(), tool, args)
}
