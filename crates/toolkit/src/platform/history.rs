//! Deployment history, rollback and diagnosis on the platform (not among the spec's 26
//! tools: the CLI's `slipway deployments`, `slipway rollback` and `slipway why`, and the
//! desktop, use them).

use reqwest::Method;
use serde_json::{Value, json};

use super::Client;
use super::apps::{uuid_arg, with_success};
use crate::error::ToolError;

/// The app's deployments, newest first (the first page of `page_size`).
pub fn deployments(client: &Client, app_id: &str, page_size: u32) -> Result<Value, ToolError> {
    let id = uuid_arg("app_id", app_id)?;
    let body = client
        .json(
            Method::GET,
            &format!("/v1/apps/{id}/deployments?page_size={page_size}"),
            None,
        )?
        .body;
    Ok(with_success(body, &[]))
}

/// The deployment a rollback without an explicit target goes back to: the newest one before
/// the current that ran well (it became RUNNING and was later superseded or stopped).
pub fn previous_good(history: &Value) -> Option<String> {
    let all = history["deployments"].as_array()?;
    all.iter()
        .skip(1)
        .find(|d| {
            matches!(
                d["status"].as_str(),
                Some("RUNNING" | "superseded" | "stopped")
            ) && !d["finished_at"].is_null()
        })
        .and_then(|d| d["id"].as_str().map(str::to_owned))
}

/// Rolls `app_id` back to `deployment` (default: [`previous_good`]).
pub fn rollback(
    client: &Client,
    app_id: &str,
    deployment: Option<&str>,
) -> Result<Value, ToolError> {
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
    let body = client
        .json(
            Method::POST,
            &format!("/v1/apps/{id}/rollback"),
            Some(&json!({ "deployment_id": target })),
        )?
        .body;
    Ok(with_success(body, &[]))
}

/// What changed from `against` (default: the deployment before it) to `deployment`.
pub fn diff(
    client: &Client,
    app_id: &str,
    deployment: &str,
    against: Option<&str>,
) -> Result<Value, ToolError> {
    let id = uuid_arg("app_id", app_id)?;
    let deployment = uuid_arg("deployment_id", deployment)?;
    let mut path = format!("/v1/apps/{id}/deployments/{deployment}/diff");
    if let Some(other) = against {
        path.push_str(&format!("?against={}", uuid_arg("against", other)?));
    }
    let body = client.json(Method::GET, &path, None)?.body;
    Ok(with_success(body, &[]))
}

/// Why the app is where it is.
pub fn diagnosis(client: &Client, app_id: &str) -> Result<Value, ToolError> {
    let id = uuid_arg("app_id", app_id)?;
    let body = client
        .json(Method::GET, &format!("/v1/apps/{id}/diagnosis"), None)?
        .body;
    Ok(with_success(body, &[]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_target_is_the_newest_earlier_deployment_that_ran_well() {
        let history = json!({"deployments": [
            {"id": "c", "status": "FAILED", "finished_at": "t"},
            {"id": "b", "status": "FAILED", "finished_at": "t"},
            {"id": "a2", "status": "stopped", "finished_at": null},
            {"id": "a", "status": "superseded", "finished_at": "t"},
        ]});
        assert_eq!(previous_good(&history).as_deref(), Some("a"));
        assert_eq!(previous_good(&json!({"deployments": [{"id": "x"}]})), None);
    }
}
