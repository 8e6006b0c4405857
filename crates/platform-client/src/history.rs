//! Deployment history, rollback and diagnosis on the platform (not among the spec's 26
//! tools: the CLI's `slipway deployments`, `slipway rollback` and `slipway why`, the desktop,
//! the MCP server's prompt and resource, and the development loop use them). Each answer is
//! `slipway-api`'s, the type the platform writes.

use reqwest::Method;
use serde_json::json;

use crate::apps::uuid_arg;
use crate::client::Client;
use crate::error::ToolError;
/// The answers, `slipway-api`'s: the very types the platform serialises.
pub use slipway_api::deployments::{
    Deployment, DeploymentDiff, DevfileChange, DevfileFindings, Diagnosis, FailedBuild,
    FailingService, History, ImageChange, RollbackAccepted, SecretChange, SecretVersion,
    ServiceRun,
};
pub use slipway_api::{DeploymentCause, DeploymentStatus};

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
            commit: None,
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
