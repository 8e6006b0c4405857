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

/// Arguments of the `connect_git_source` tool. No token: a token never passes through an
/// assistant (the user runs `slipway git connect --token-env VAR` for a private HTTPS
/// repository).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectGitArgs {
    /// App UUID.
    pub app_id: String,
    /// The repository: https://host/owner/repo.git (public), or ssh://git@host/owner/repo.git
    /// or git@host:owner/repo.git (read with a deploy key the platform makes).
    pub repo_url: String,
    /// The branch that deploys (default main).
    #[serde(default)]
    pub branch: Option<String>,
    /// The repository's directory holding the devfile (default: the root).
    #[serde(default)]
    pub path: Option<String>,
    /// Also ask the repository for new commits this often, in seconds (10 to 86400).
    #[serde(default)]
    pub poll_interval_seconds: Option<u64>,
    /// Pull requests with a preview app at once, at most (0 to 20; default 5).
    #[serde(default)]
    pub max_previews: Option<u32>,
    /// Environment (default production).
    #[serde(default)]
    pub environment: Option<String>,
}

/// The `connect_git_source` tool.
pub fn connect_git_tool(client: &Client, args: &ConnectGitArgs) -> Result<GitSource, ToolError> {
    connect_git(
        client,
        &args.app_id,
        &GitConnect {
            repo_url: args.repo_url.clone(),
            branch: args.branch.clone(),
            path: args.path.clone(),
            auth: None,
            token: None,
            poll_interval_seconds: args.poll_interval_seconds,
            max_previews: args.max_previews,
        },
    )
}

/// The `get_git_source` tool.
pub fn get_git_tool(
    client: &Client,
    args: &crate::apps::AppIdArgs,
) -> Result<GitSource, ToolError> {
    get_git(client, &args.app_id)
}

/// What the `deploy_git_source` tool answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeployQueued {
    /// The app.
    pub app_id: String,
    /// What is being fetched and deployed.
    pub queued: String,
}

/// The `deploy_git_source` tool.
pub fn deploy_git_tool(
    client: &Client,
    args: &crate::apps::AppIdArgs,
) -> Result<DeployQueued, ToolError> {
    let queued = match deploy_git(client, &args.app_id)? {
        HookOutcome::Queued(what) | HookOutcome::Ignored(what) => what,
    };
    Ok(DeployQueued {
        app_id: args.app_id.trim().to_owned(),
        queued,
    })
}

/// The `disconnect_git_source` tool.
pub fn disconnect_git_tool(
    client: &Client,
    args: &crate::apps::AppIdArgs,
) -> Result<Disconnected, ToolError> {
    disconnect_git(client, &args.app_id)
}

/// The `list_previews` tool.
pub fn list_previews_tool(
    client: &Client,
    args: &crate::apps::AppIdArgs,
) -> Result<PreviewList, ToolError> {
    list_previews(client, &args.app_id)
}
