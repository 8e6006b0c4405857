//! Tauri commands, one module per domain.

pub mod browser;
pub mod build;
pub mod care;
pub mod dev;
pub mod drafts;
pub mod env;
pub mod history;
pub mod links;
pub mod people;
pub mod startup;
pub mod tools;
pub mod worklist;

use std::sync::Arc;

use serde_json::Value;
use slipway_toolkit::platform::Client;
use slipway_toolkit::{Runner, ToolError};

use tools::CommandError;

/// Runs `work` with a client of the window's platform on a blocking thread (the toolkit's
/// HTTP client blocks); a tool error becomes the `{success: false, …}` result.
pub(crate) async fn with_client(
    runner: Arc<Runner>,
    work: impl FnOnce(&Client) -> Result<Value, ToolError> + Send + 'static,
) -> Result<Value, CommandError> {
    blocking(move || work(&runner.client()?)).await
}

/// Runs `work` on a blocking thread; a tool error becomes the `{success: false, …}` result.
pub(crate) async fn blocking(
    work: impl FnOnce() -> Result<Value, ToolError> + Send + 'static,
) -> Result<Value, CommandError> {
    tauri::async_runtime::spawn_blocking(work)
        .await
        .map_err(|e| CommandError {
            message: format!("the call stopped unexpectedly: {e}"),
        })?
        .or_else(|e| Ok(e.to_json()))
}
