//! Running a command's work off the window's thread: the toolkit's HTTP client blocks, so
//! every platform call runs on a blocking thread, and its typed outcome is rendered for the
//! window the way the tools' results are.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use slipway_platform_client::Client;
use slipway_toolkit::{Runner, ToolError};

use super::tools::CommandError;

/// Runs `work` with a client of the window's platform on a blocking thread (the toolkit's
/// HTTP client blocks), and renders its typed outcome for the window as the tools' results
/// are rendered (`slipway_toolkit::render`: `success: true` added, or the failure shape).
pub(crate) async fn with_client<T: Serialize + Send + 'static>(
    runner: Arc<Runner>,
    work: impl FnOnce(&Client) -> Result<T, ToolError> + Send + 'static,
) -> Result<Value, CommandError> {
    blocking(move || work(&runner.client()?)).await
}

/// Runs `work` on a blocking thread and renders its typed outcome for the window.
pub(crate) async fn blocking<T: Serialize + Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<Value, CommandError> {
    off_thread(work)
        .await
        .map(|outcome| slipway_toolkit::render(&outcome))
}

/// Runs `work` on a blocking thread and gives its outcome as it is, for a command that acts
/// on it before rendering it.
pub(crate) async fn off_thread<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<Result<T, ToolError>, CommandError> {
    tauri::async_runtime::spawn_blocking(work)
        .await
        .map_err(|e| CommandError {
            message: format!("the call stopped unexpectedly: {e}"),
        })
}
