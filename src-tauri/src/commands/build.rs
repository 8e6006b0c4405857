//! Build and deploy from the window with progress: the build runs on its own thread through
//! `slipway_platform_client::build_app_with_progress`, and the window polls the steps it
//! reported (packing, uploading, building) and, at the end, its result.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;
use slipway_platform_client::{BuildAppArgs, build_app_with_progress};

use super::tools::{CommandError, Tools};

/// What a running (or finished) build has reported.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BuildProgress {
    /// Each step, oldest first.
    pub steps: Vec<String>,
    /// The `build_app` result once it is done, rendered as the tool's (`success` and all).
    pub result: Option<Value>,
}

/// The builds started from the window, by ticket.
#[derive(Debug, Default)]
pub struct Builds {
    next: AtomicU64,
    running: Mutex<HashMap<u64, Arc<Mutex<BuildProgress>>>>,
}

/// Starts `build_app` on `project_path`; returns the ticket to poll.
#[tauri::command]
pub fn build_start(
    tools: tauri::State<'_, Tools>,
    builds: tauri::State<'_, Builds>,
    project_path: String,
) -> Result<u64, CommandError> {
    let ticket = builds.next.fetch_add(1, Ordering::Relaxed) + 1;
    let progress = Arc::new(Mutex::new(BuildProgress::default()));
    builds
        .running
        .lock()
        .map_err(|e| CommandError {
            message: e.to_string(),
        })?
        .insert(ticket, Arc::clone(&progress));
    let runner = tools.runner();
    std::thread::spawn(move || {
        let report = |step: &str| {
            if let Ok(mut p) = progress.lock() {
                p.steps.push(step.to_owned());
            }
        };
        let outcome = runner.client().and_then(|client| {
            build_app_with_progress(
                &client,
                &BuildAppArgs {
                    project_path,
                    environment: None,
                    verbose: None,
                    architecture: None,
                    build_mode: None,
                    service_name: None,
                },
                &report,
            )
        });
        if let Ok(mut p) = progress.lock() {
            p.result = Some(slipway_toolkit::render(&outcome));
        }
    });
    Ok(ticket)
}

/// The steps and (once done) the result of build `ticket`; a finished build is forgotten
/// after it has been read.
#[tauri::command]
pub fn build_poll(
    builds: tauri::State<'_, Builds>,
    ticket: u64,
) -> Result<BuildProgress, CommandError> {
    let mut running = builds.running.lock().map_err(|e| CommandError {
        message: e.to_string(),
    })?;
    let progress = running
        .get(&ticket)
        .and_then(|p| p.lock().ok().map(|p| p.clone()))
        .ok_or_else(|| CommandError {
            message: format!("no build {ticket} was started in this window"),
        })?;
    if progress.result.is_some() {
        running.remove(&ticket);
    }
    Ok(progress)
}
