//! History commands: an app's deployments, the diff of two, a rollback, the diagnosis, and
//! its builds with each one's log, each one call into `slipway_platform_client` on the
//! same platform the tools use (the configured one, or the embedded one).

use serde_json::Value;
use slipway_platform_client::{builds, history};

use super::run::with_client;
use super::tools::{CommandError, Tools};

/// The app's deployments, newest first (what each ran, why, how it ended).
#[tauri::command]
pub async fn app_deployments(
    tools: tauri::State<'_, Tools>,
    app_id: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| {
        history::deployments(c, &app_id, 50)
    })
    .await
}

/// What changed from `against` (default: the one before) to `deployment_id`.
#[tauri::command]
pub async fn app_deployment_diff(
    tools: tauri::State<'_, Tools>,
    app_id: String,
    deployment_id: String,
    against: Option<String>,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| {
        history::diff(c, &app_id, &deployment_id, against.as_deref())
    })
    .await
}

/// Deploys `deployment_id` again with its images and secret versions.
#[tauri::command]
pub async fn app_rollback(
    tools: tauri::State<'_, Tools>,
    app_id: String,
    deployment_id: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| {
        history::rollback(c, &app_id, Some(&deployment_id))
    })
    .await
}

/// Why the app is where it is.
#[tauri::command]
pub async fn app_diagnosis(
    tools: tauri::State<'_, Tools>,
    app_id: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| history::diagnosis(c, &app_id)).await
}

/// One page of the app's builds, newest first (`pageToken` from the page before).
#[tauri::command]
pub async fn app_builds(
    tools: tauri::State<'_, Tools>,
    app_id: String,
    page_token: Option<String>,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| {
        builds::list(c, &app_id, 20, page_token.as_deref())
    })
    .await
}

/// One build with its log.
#[tauri::command]
pub async fn build_log(
    tools: tauri::State<'_, Tools>,
    build_id: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| builds::with_log(c, &build_id)).await
}
