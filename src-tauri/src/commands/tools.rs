//! Tool commands: the UI names a tool and passes its JSON arguments; the toolkit does the rest.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};
use slipway_platform::embedded::Lazy;
use slipway_toolkit::Runner;

/// What tool calls share: the runner, and the embedded platform it falls back to when no
/// platform is configured (stopped when the window closes).
#[derive(Debug)]
pub struct Tools {
    runner: Arc<Runner>,
    embedded: Arc<Lazy>,
}

impl Tools {
    /// Tools whose platform calls go to the remote environment `selection` names, else to
    /// the configured platform, else to an embedded platform on `data_dir`.
    pub fn new(data_dir: std::path::PathBuf, selection: Arc<super::selection::Selection>) -> Self {
        let embedded = Arc::new(Lazy::new(data_dir));
        let fallback = Arc::clone(&embedded);
        let runner = Runner::with_fallback(Box::new(move || {
            fallback
                .endpoint()
                .map(|(url, token)| slipway_platform_client::Endpoint::new(url, token))
                .map_err(slipway_toolkit::ToolError::Unavailable)
        }))
        .with_chooser(Box::new(move || selection.platform()));
        Self {
            runner: Arc::new(runner),
            embedded,
        }
    }

    /// The runner (for commands that are not tools but talk to the same platform).
    pub fn runner(&self) -> Arc<Runner> {
        Arc::clone(&self.runner)
    }

    /// Stops the embedded platform (and the apps it runs), if it was started.
    pub fn shutdown(&self) {
        self.embedded.shutdown();
    }
}

/// A tool as the UI lists it.
#[derive(Debug, Serialize)]
pub struct ToolEntry {
    /// Tool name.
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
}

/// A call that could not be attempted; tool failures are results (`success: false`), not this.
#[derive(Debug, thiserror::Error, Serialize)]
#[error("{message}")]
pub struct CommandError {
    /// Why the call was refused.
    pub message: String,
}

/// The tools this build offers.
#[tauri::command]
pub fn list_tools() -> Vec<ToolEntry> {
    slipway_toolkit::TOOLS
        .iter()
        .map(|t| ToolEntry {
            name: t.name,
            description: t.description,
        })
        .collect()
}

/// Runs a tool by name. Tools block (files, the platform's HTTP API), so they run on a
/// blocking thread, never on the UI thread or an async worker.
#[tauri::command]
pub async fn call_tool(
    tools: tauri::State<'_, Tools>,
    name: String,
    args: Value,
) -> Result<Value, CommandError> {
    run(Arc::clone(&tools.runner), name, args).await
}

/// After an app is deleted: removes the `.app` file in its project folder, only when the
/// file names that app. Returns the removed file's path.
#[tauri::command]
pub fn forget_app_file(project_path: String, app_id: String) -> Result<String, CommandError> {
    slipway_platform_client::AppFile::forget(std::path::Path::new(&project_path), &app_id)
        .map(|path| path.display().to_string())
        .map_err(|e| CommandError {
            message: e.to_string(),
        })
}

/// Checks a new app's settings with `scaffold_app`'s own rules and writes nothing; the New
/// app view calls it as the user types. `{valid: true, project_path}` or
/// `{valid: false, field, error}`.
#[tauri::command]
pub fn check_new_app(args: Value) -> Value {
    let checked = serde_json::from_value::<slipway_toolkit::ScaffoldArgs>(args)
        .map_err(|e| slipway_toolkit::ToolError::invalid_args(e.to_string()))
        .and_then(|a| slipway_toolkit::check_scaffold(&a));
    match checked {
        Ok(project) => json!({"valid": true, "project_path": project.display().to_string()}),
        Err(e) => json!({"valid": false, "field": e.field(), "error": e.to_string()}),
    }
}

async fn run(runner: Arc<Runner>, name: String, args: Value) -> Result<Value, CommandError> {
    tauri::async_runtime::spawn_blocking(move || runner.call(&name, args))
        .await
        .map_err(|e| CommandError {
            message: format!("the tool call stopped unexpectedly: {e}"),
        })?
        .map_err(|e| CommandError {
            message: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_the_toolkit_tools() {
        let names: Vec<&str> = list_tools().iter().map(|t| t.name).collect();
        assert!(names.contains(&"scaffold_app"));
    }

    #[test]
    fn unknown_tool_is_a_command_error() {
        let runner = Arc::new(Runner::new());
        let err = tauri::async_runtime::block_on(run(runner, "nope".into(), serde_json::json!({})))
            .unwrap_err();
        assert!(err.message.contains("unknown tool"));
    }
}
