//! An app's git source (docs/git.md), as `GET|PUT|DELETE /v1/apps/{app_id}/git` answer it,
//! the commit a deployment was built from, and what the platform answers a forge's webhook.

use serde::{Deserialize, Serialize};

/// How the platform reads the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GitAuth {
    /// A public repository.
    None,
    /// HTTPS with an access token (sealed; never shown again).
    Token,
    /// SSH with a deploy key the platform made (`deploy_key` is its public half).
    DeployKey,
}

impl GitAuth {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Token => "token",
            Self::DeployKey => "deploy_key",
        }
    }

    /// The variant of a wire spelling.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::None, Self::Token, Self::DeployKey]
            .into_iter()
            .find(|a| a.as_str() == s)
    }
}

/// A commit a deployment was built from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GitCommit {
    /// The full commit id.
    pub sha: String,
    /// The branch (or pull request ref) it was fetched from.
    pub branch: String,
    /// The author's name.
    pub author: String,
    /// The first line of its message.
    pub subject: String,
}

/// An app's git source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GitSource {
    /// The app.
    pub app_id: String,
    /// The repository's address.
    pub repo_url: String,
    /// The branch that deploys.
    pub branch: String,
    /// The directory of the repository holding the devfile (`""`: the root).
    pub path: String,
    /// How the platform reads the repository.
    pub auth: GitAuth,
    /// The deploy key's public half (`auth: deploy_key`): add it to the repository as a
    /// read-only deploy key.
    pub deploy_key: Option<String>,
    /// Where the forge sends push and pull-request events.
    pub webhook_url: String,
    /// The secret the forge signs them with: shown to the app's owners (and once to whoever
    /// connects), null for everyone else.
    pub webhook_secret: Option<String>,
    /// How often the platform asks the repository for a new commit (null: only webhooks).
    pub poll_interval_seconds: Option<u64>,
    /// The commit last built from the source.
    pub last_commit: Option<GitCommit>,
    /// Why the last attempt failed (null when it did not).
    pub last_error: Option<String>,
    /// A deploy waiting to be fetched (its ref), if any.
    pub pending: Option<String>,
    /// How many pull requests may have a preview at once (0: none).
    pub max_previews: u32,
    /// For a preview: the app whose pull request it builds.
    pub preview_of: Option<String>,
    /// For a preview: the pull request's number.
    pub pull_request: Option<u64>,
    /// Who connected it.
    pub connected_by: String,
    /// RFC 3339.
    pub connected_at: String,
}

/// A pull request's preview: an app of its own, built from the request's head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Preview {
    /// The pull request's number.
    pub number: u64,
    /// The preview's app.
    pub app_id: String,
    /// Its name (`<app>-pr-<number>`).
    pub app_name: String,
    /// Its status.
    pub status: crate::AppStatus,
    /// Where it answers, once deployed.
    pub url: Option<String>,
    /// The commit last built.
    pub commit: Option<GitCommit>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
}

/// An app's previews.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PreviewList {
    /// By pull request number.
    pub previews: Vec<Preview>,
}

/// What the platform did with a webhook delivery (exactly one of the two is set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HookOutcome {
    /// A deploy was queued: which commit of which ref.
    Queued(String),
    /// Nothing was queued, on purpose: why.
    Ignored(String),
}

/// What `PUT /v1/apps/{app_id}/git` takes (absent fields take their defaults). Its `Debug`
/// leaves the token out.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GitConnect {
    /// The repository's address: https://…, ssh://… or user@host:path.
    pub repo_url: String,
    /// The branch that deploys (default main).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The devfile's directory (default the root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// How to read it (default: token with a token, deploy_key for ssh, else none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<GitAuth>,
    /// An access token (never through an assistant: the CLI and the desktop take it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Also poll this often, in seconds (10 to 86400).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_seconds: Option<u64>,
    /// Pull requests with a preview at once, at most (0 to 20; default 5; 0: no previews).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_previews: Option<u32>,
}

impl std::fmt::Debug for GitConnect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitConnect")
            .field("repo_url", &self.repo_url)
            .field("branch", &self.branch)
            .field("path", &self.path)
            .field("auth", &self.auth)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}
