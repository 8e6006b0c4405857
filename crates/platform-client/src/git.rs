//! An app's git source: connect one (a repository, a branch, the devfile's directory, a
//! token or a deploy key), read it (with the webhook URL, and its secret for owners),
//! disconnect it, deploy its branch's tip now. `slipway git` calls these.

use reqwest::Method;
use serde::{Deserialize, Serialize};
pub use slipway_api::git::{
    GitAuth, GitCommit, GitConnect, GitSource, HookOutcome, Preview, PreviewList,
};

use crate::apps::uuid_arg;
use crate::client::Client;
use crate::error::ToolError;

/// What disconnecting answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Disconnected {
    /// The app.
    pub app_id: String,
}

fn git_path(app_id: &str) -> Result<String, ToolError> {
    Ok(format!("/v1/apps/{}/git", uuid_arg("app_id", app_id)?))
}

/// Connects (or replaces) the app's source; the first deploy starts at once.
pub fn connect_git(
    client: &Client,
    app_id: &str,
    source: &GitConnect,
) -> Result<GitSource, ToolError> {
    let body = serde_json::to_value(source)
        .map_err(|e| ToolError::Internal(format!("the source cannot be sent: {e}")))?;
    client.typed(Method::PUT, &git_path(app_id)?, Some(&body))
}

/// The app's source.
pub fn get_git(client: &Client, app_id: &str) -> Result<GitSource, ToolError> {
    client.typed(Method::GET, &git_path(app_id)?, None)
}

/// Stops deploying from the repository (the running deployment keeps serving).
pub fn disconnect_git(client: &Client, app_id: &str) -> Result<Disconnected, ToolError> {
    client.json(Method::DELETE, &git_path(app_id)?, None)?;
    Ok(Disconnected {
        app_id: app_id.trim().to_owned(),
    })
}

/// Fetches and deploys the tip of the source's branch now.
pub fn deploy_git(client: &Client, app_id: &str) -> Result<HookOutcome, ToolError> {
    client.typed(Method::POST, &format!("{}/deploy", git_path(app_id)?), None)
}

/// The previews of the app's pull requests.
pub fn list_previews(client: &Client, app_id: &str) -> Result<PreviewList, ToolError> {
    let id = uuid_arg("app_id", app_id)?;
    client.typed(Method::GET, &format!("/v1/apps/{id}/previews"), None)
}
