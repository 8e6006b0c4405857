//! The Watch switch: one development loop (`slipway_dev`) per app, on the platform
//! the tools use, polled by the window for its state, the last change, the rebuilt services
//! and the live log. The loop itself lives in the toolkit; these commands only map.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use slipway_dev::DevOptions;
use slipway_dev::devfile_watch::{Checked, DevfileWatch};
use slipway_dev::session::{Session, Snapshot, attach};
use slipway_platform_client::{AppIdArgs, get_app};

use super::tools::{CommandError, Tools};

/// The running loops, by app id.
#[derive(Debug, Default)]
pub struct DevSessions(Mutex<HashMap<String, Session>>);

impl DevSessions {
    /// Stops every loop (the window is closing); the apps keep running.
    pub fn shutdown(&self) {
        let sessions: Vec<Session> = match self.0.lock() {
            Ok(mut map) => map.drain().map(|(_, s)| s).collect(),
            Err(_) => return,
        };
        for session in sessions {
            session.stop();
        }
    }
}

fn failed(message: impl ToString) -> CommandError {
    CommandError {
        message: message.to_string(),
    }
}

/// Starts watching `project_path` for app `app_id` (writing the folder's `.app` when it has
/// none; refused when it belongs to another app). A loop already running for the app is
/// replaced.
#[tauri::command]
pub async fn dev_start(
    tools: tauri::State<'_, Tools>,
    sessions: tauri::State<'_, DevSessions>,
    app_id: String,
    project_path: String,
) -> Result<Snapshot, CommandError> {
    let runner = tools.runner();
    let id = app_id.clone();
    let session = tauri::async_runtime::spawn_blocking(move || {
        let client = runner.client()?;
        let app = client.run(get_app(&AppIdArgs {
            app_id: id.clone(),
            environment: None,
        })?)?;
        let root = PathBuf::from(project_path.trim());
        attach(&root, &id, &app.details.listing.name, client.base_url())?;
        Ok::<_, slipway_toolkit::ToolError>(Session::start(
            client,
            DevOptions {
                project: root,
                down: false,
                logs: true,
            },
        ))
    })
    .await
    .map_err(failed)?
    .map_err(failed)?;
    let snapshot = session.poll(0);
    let previous = sessions.0.lock().map_err(failed)?.insert(app_id, session);
    if let Some(old) = previous {
        tauri::async_runtime::spawn_blocking(move || old.stop());
    }
    Ok(snapshot)
}

/// The loop's state and the events after `after`; null when the app is not watched.
#[tauri::command]
pub fn dev_poll(
    sessions: tauri::State<'_, DevSessions>,
    app_id: String,
    after: u64,
) -> Result<Option<Snapshot>, CommandError> {
    Ok(sessions
        .0
        .lock()
        .map_err(failed)?
        .get(&app_id)
        .map(|s| s.poll(after)))
}

/// Stops watching the app (it keeps running as it is).
#[tauri::command]
pub async fn dev_stop(
    sessions: tauri::State<'_, DevSessions>,
    app_id: String,
) -> Result<(), CommandError> {
    let session = sessions.0.lock().map_err(failed)?.remove(&app_id);
    if let Some(session) = session {
        tauri::async_runtime::spawn_blocking(move || session.stop())
            .await
            .map_err(failed)?;
    }
    Ok(())
}

/// The devfile the check view watches (one at a time).
#[derive(Debug, Default)]
pub struct WatchedDevfile(Mutex<Option<DevfileWatch>>);

/// Checks `devfile_path` (a file or its project folder) and keeps re-checking it on every
/// change on disk; replaces the file watched before.
#[tauri::command]
pub async fn devfile_watch(
    watched: tauri::State<'_, WatchedDevfile>,
    devfile_path: String,
) -> Result<Checked, CommandError> {
    let watch = tauri::async_runtime::spawn_blocking(move || {
        DevfileWatch::start(std::path::Path::new(devfile_path.trim()))
    })
    .await
    .map_err(failed)?
    .map_err(failed)?;
    let first = watch
        .latest()
        .ok_or_else(|| failed("the devfile could not be checked"))?;
    *watched.0.lock().map_err(failed)? = Some(watch);
    Ok(first)
}

/// The latest check of the watched devfile; null when none is watched.
#[tauri::command]
pub fn devfile_latest(
    watched: tauri::State<'_, WatchedDevfile>,
) -> Result<Option<Checked>, CommandError> {
    Ok(watched
        .0
        .lock()
        .map_err(failed)?
        .as_ref()
        .and_then(DevfileWatch::latest))
}
