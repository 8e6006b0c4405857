//! Deployment history, rollback and diagnosis on the platform (not among the spec's 26
//! tools: the CLI's `slipway deployments`, `slipway rollback` and `slipway why`, the desktop,
//! the MCP server's prompt and resource, and the development loop use them). Each answer is
//! typed as the platform defines it.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::apps::uuid_arg;
use crate::client::Client;
use crate::error::ToolError;
use crate::model::{AppStatus, ServiceStatus};
pub use slipway_api::{DeploymentCause, DeploymentStatus};

/// A secret path and the version a service was given (never a value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretVersion {
    /// The secret's path.
    pub path: String,
    /// The version.
    pub version: i64,
}

/// What one service of a deployment ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServiceRun {
    /// The service.
    pub service: String,
    /// The build whose image it ran.
    pub build_id: String,
    /// The image's manifest digest.
    pub image_digest: String,
    /// Its status.
    pub status: ServiceStatus,
    /// The app secrets it was given, with their versions.
    pub secrets: Vec<SecretVersion>,
}

/// One deployment in the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Deployment {
    /// The deployment's UUID.
    pub id: String,
    /// Its status.
    pub status: DeploymentStatus,
    /// Why it failed or stopped.
    pub reason: Option<String>,
    /// Why it was started.
    pub cause: DeploymentCause,
    /// The user who started it (null for a build or a restart).
    pub started_by: Option<String>,
    /// The deployment a rollback went back to.
    pub rollback_of: Option<String>,
    /// `sha256:…` of the devfile it ran.
    pub devfile_digest: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339, when it became RUNNING or FAILED.
    pub finished_at: Option<String>,
    /// What each service ran.
    pub services: Vec<ServiceRun>,
}

/// One page of an app's deployments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct History {
    /// Newest first.
    pub deployments: Vec<Deployment>,
    /// Pass as `next_page_token` for the next page; null on the last.
    pub next_page_token: Option<String>,
}

/// A rollback the platform accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RollbackAccepted {
    /// The deployment being deployed again.
    pub rollback_of: String,
    /// What happens next.
    pub message: String,
}

/// An image that differs between two deployments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImageChange {
    /// The service.
    pub service: String,
    /// Its image digest in the older deployment (null: the service is new).
    pub from: Option<String>,
    /// Its image digest in the newer one (null: the service is gone).
    pub to: Option<String>,
}

/// A secret whose version differs between two deployments (paths and versions only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretChange {
    /// The service that received it.
    pub service: String,
    /// The secret's path.
    pub path: String,
    /// The version the older deployment gave (null: not given).
    pub from_version: Option<i64>,
    /// The version the newer one gave (null: not given).
    pub to_version: Option<i64>,
}

/// The devfile lines that changed, as a unified diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DevfileChange {
    /// Whether the text differs at all.
    pub changed: bool,
    /// The unified diff, empty when unchanged.
    pub diff: String,
}

/// What changed from one deployment to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeploymentDiff {
    /// The older deployment.
    pub from: String,
    /// The newer deployment.
    pub to: String,
    /// Images that changed.
    pub images: Vec<ImageChange>,
    /// The devfile.
    pub devfile: DevfileChange,
    /// Secrets whose version changed.
    pub secrets: Vec<SecretChange>,
}

/// A service of the latest deployment that is not healthy, with the end of its log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FailingService {
    /// The service.
    pub service: String,
    /// Its status.
    pub status: ServiceStatus,
    /// The last lines of its runtime log.
    pub log_tail: String,
}

/// The app's newest build, when it failed, with the end of its log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FailedBuild {
    /// The build.
    pub build_id: String,
    /// The service it built.
    pub service: String,
    /// Why it failed.
    pub error: Option<String>,
    /// The last lines of the build log.
    pub log_tail: String,
}

/// The app's devfile, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DevfileFindings {
    /// No errors.
    pub valid: bool,
    /// Errors, each with its path and line.
    pub errors: Vec<String>,
    /// Warnings, likewise.
    pub warnings: Vec<String>,
}

/// Why an app is where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Diagnosis {
    /// The app.
    pub app_id: String,
    /// Its status.
    pub status: AppStatus,
    /// The reason of the latest deployment that failed or stopped, if it is the latest.
    pub reason: Option<String>,
    /// The latest deployment.
    pub deployment_id: Option<String>,
    /// Its services that are not healthy, with their log tails.
    pub failing_services: Vec<FailingService>,
    /// The newest build, when it failed.
    pub failed_build: Option<FailedBuild>,
    /// The app's devfile, checked.
    pub devfile: Option<DevfileFindings>,
    /// The last deployment that ran well (became RUNNING) before the latest one.
    pub last_good_deployment_id: Option<String>,
    /// What changed from that one to the latest.
    pub changes_since_last_good: Option<DeploymentDiff>,
}

/// The app's deployments, newest first (the first page of `page_size`).
pub fn deployments(client: &Client, app_id: &str, page_size: u32) -> Result<History, ToolError> {
    let id = uuid_arg("app_id", app_id)?;
    client.typed(
        Method::GET,
        &format!("/v1/apps/{id}/deployments?page_size={page_size}"),
        None,
    )
}

/// The deployment a rollback without an explicit target goes back to: the newest one before
/// the current that ran well (it became RUNNING and was later superseded or stopped).
pub fn previous_good(history: &History) -> Option<String> {
    history
        .deployments
        .iter()
        .skip(1)
        .find(|d| {
            matches!(
                d.status,
                DeploymentStatus::Running
                    | DeploymentStatus::Superseded
                    | DeploymentStatus::Stopped
            ) && d.finished_at.is_some()
        })
        .map(|d| d.id.clone())
}

/// Rolls `app_id` back to `deployment` (default: [`previous_good`]).
pub fn rollback(
    client: &Client,
    app_id: &str,
    deployment: Option<&str>,
) -> Result<RollbackAccepted, ToolError> {
    let id = uuid_arg("app_id", app_id)?;
    let target = match deployment {
        Some(d) => uuid_arg("deployment_id", d)?,
        None => previous_good(&deployments(client, &id, 100)?).ok_or_else(|| {
            ToolError::invalid(
                "deployment_id",
                "the app has no earlier deployment that ran well; name one",
            )
        })?,
    };
    client.typed(
        Method::POST,
        &format!("/v1/apps/{id}/rollback"),
        Some(&json!({ "deployment_id": target })),
    )
}

/// What changed from `against` (default: the deployment before it) to `deployment`.
pub fn diff(
    client: &Client,
    app_id: &str,
    deployment: &str,
    against: Option<&str>,
) -> Result<DeploymentDiff, ToolError> {
    let id = uuid_arg("app_id", app_id)?;
    let deployment = uuid_arg("deployment_id", deployment)?;
    let mut path = format!("/v1/apps/{id}/deployments/{deployment}/diff");
    if let Some(other) = against {
        path.push_str(&format!("?against={}", uuid_arg("against", other)?));
    }
    client.typed(Method::GET, &path, None)
}

/// Why the app is where it is.
pub fn diagnosis(client: &Client, app_id: &str) -> Result<Diagnosis, ToolError> {
    let id = uuid_arg("app_id", app_id)?;
    client.typed(Method::GET, &format!("/v1/apps/{id}/diagnosis"), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(id: &str, status: DeploymentStatus, finished: bool) -> Deployment {
        Deployment {
            id: id.into(),
            status,
            reason: None,
            cause: DeploymentCause::Build,
            started_by: None,
            rollback_of: None,
            devfile_digest: None,
            created_at: "t".into(),
            finished_at: finished.then(|| "t".to_owned()),
            services: Vec::new(),
        }
    }

    #[test]
    fn the_default_target_is_the_newest_earlier_deployment_that_ran_well() {
        let history = History {
            deployments: vec![
                deployment("c", DeploymentStatus::Failed, true),
                deployment("b", DeploymentStatus::Failed, true),
                deployment("a2", DeploymentStatus::Stopped, false),
                deployment("a", DeploymentStatus::Superseded, true),
            ],
            next_page_token: None,
        };
        assert_eq!(previous_good(&history).as_deref(), Some("a"));
        let only = History {
            deployments: vec![deployment("x", DeploymentStatus::Running, true)],
            next_page_token: None,
        };
        assert_eq!(previous_good(&only), None);
    }
}
