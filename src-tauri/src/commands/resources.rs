//! Resource commands: an app's backing resources (`managedInfra`) and volumes, one
//! resource's credentials (editors and owners), their rotation, and a resource's destruction
//! (owners), each one call into `slipway_platform_client::resources` on the platform the
//! window uses. The platform decides who may do what; a refusal is a result naming its
//! field (`{success: false, field, error}`), as the tools' are.

use serde::Serialize;
use serde_json::Value;
use slipway_platform_client::resources::{self, ResourceInfo};

use slipway_platform_client::{Client, ToolError};

use super::run::with_client;
use super::tools::{CommandError, Tools};

/// The app's resources and volumes: `{app_id, resources, volumes}`.
#[tauri::command]
pub async fn app_resources(
    tools: tauri::State<'_, Tools>,
    app_id: String,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| {
        resources::list_resources(c, &app_id)
    })
    .await
}

/// One resource's credentials: `{kind, name, engine, url, host, port, user, password,
/// database}`.
#[tauri::command]
pub async fn resource_credentials(
    tools: tauri::State<'_, Tools>,
    app_id: String,
    kind: String,
    name: String,
) -> Result<Value, CommandError> {
    on_resource(&tools, app_id, kind, name, resources::reveal_credentials).await
}

/// What a rotation answers: the app's resources afterwards (a result is an object).
#[derive(Debug, Serialize)]
struct Rotated {
    app_id: String,
    kind: String,
    name: String,
    resources: Vec<ResourceInfo>,
}

/// New credentials for a resource; the app is redeployed on them: `{app_id, kind, name,
/// resources}`.
#[tauri::command]
pub async fn resource_rotate(
    tools: tauri::State<'_, Tools>,
    app_id: String,
    kind: String,
    name: String,
) -> Result<Value, CommandError> {
    let (a, k, n) = (app_id.clone(), kind.clone(), name.clone());
    let rotated = move |c: &Client, _: &str, _: &str, _: &str| {
        resources::rotate_credentials(c, &a, &k, &n).map(|resources| Rotated {
            app_id: a.clone(),
            kind: k.clone(),
            name: n.clone(),
            resources,
        })
    };
    on_resource(&tools, app_id, kind, name, rotated).await
}

/// Destroys a resource and its data for good: `{app_id, kind, name, message}`.
#[tauri::command]
pub async fn resource_destroy(
    tools: tauri::State<'_, Tools>,
    app_id: String,
    kind: String,
    name: String,
) -> Result<Value, CommandError> {
    on_resource(&tools, app_id, kind, name, resources::destroy_resource).await
}

/// One call about one resource of an app, on the window's platform.
async fn on_resource<T: Serialize + Send + 'static>(
    tools: &Tools,
    app_id: String,
    kind: String,
    name: String,
    call: impl FnOnce(&Client, &str, &str, &str) -> Result<T, ToolError> + Send + 'static,
) -> Result<Value, CommandError> {
    with_client(tools.runner(), move |c| call(c, &app_id, &kind, &name)).await
}
