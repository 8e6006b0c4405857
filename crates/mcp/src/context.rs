//! What the MCP server offers besides its tools (the spec's 26 and the platform's domain
//! tools, `slipway_toolkit::all_tools`):
//! prompts that walk an assistant through a job, and resources it can read.
//!
//! - Prompt `explain_failed_deploy(app_id)`: the app's diagnosis (status, reason, failing
//!   services' log tails, a failed build, the devfile's findings, the change since the last
//!   deployment that ran well) with the request to explain it and propose a fix.
//! - Prompt `deploy_new_app(app_name, app_type)`: the spec's workflow for a new app, step by
//!   step, with the tools to call.
//! - Resources `slipway://apps/{app_id}/deployments` (the deployment history as JSON: per
//!   deployment the images and secret versions it ran, why and how it ended) and
//!   `slipway://apps/{app_id}/logs` (the latest build and runtime logs, per service) and
//!   `slipway://apps/{app_id}/jobs` (the scheduled jobs and their newest runs), listed for
//!   every app the caller sees and as templates, and `slipway://apps/{app_id}/notifications`
//!   (who hears the app's events and its newest notification deliveries with their
//!   attempts). Starting a job by hand or managing channels is not a tool here: `slipway jobs run-now`, `slipway notify`.

use rmcp::model::{
    GetPromptResult, Prompt, PromptArgument, PromptMessage, Resource, ResourceContents,
    ResourceTemplate, Role,
};
use serde_json::Value;
use slipway_platform_client::{self as platform, Client, GetLogsArgs, ListAppsArgs};
use slipway_toolkit::ToolError;

/// The prompts, as `prompts/list` shows them.
pub fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "explain_failed_deploy",
            Some(
                "Explain why an app's deployment failed, from its diagnosis (log tails, failed \
                 build, devfile findings, what changed since it last ran well), and propose a \
                 fix or a rollback.",
            ),
            Some(vec![
                PromptArgument::new("app_id")
                    .with_description("The app's UUID (from .app or list_apps).")
                    .with_required(true),
            ]),
        ),
        Prompt::new(
            "deploy_new_app",
            Some(
                "Walk through creating and deploying a new app: templates, scaffold, validate, \
                 register, secrets, build, status, logs.",
            ),
            Some(vec![
                PromptArgument::new("app_name")
                    .with_description("The app name (lowercase letters, digits and '-').")
                    .with_required(true),
                PromptArgument::new("app_type")
                    .with_description("A template name from get_available_templates (optional).")
                    .with_required(false),
            ]),
        ),
    ]
}

fn argument<'a>(args: &'a serde_json::Map<String, Value>, name: &str) -> Option<&'a str> {
    args.get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
}

/// Why a prompt or a resource could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// No prompt or resource of that name.
    #[error("{0}")]
    Unknown(String),
    /// An argument is missing or wrong.
    #[error("{0}")]
    Argument(String),
    /// The platform refused or could not be reached.
    #[error(transparent)]
    Platform(#[from] ToolError),
}

/// The prompt `name` with `args` (blocking: it may ask the platform).
pub fn get_prompt(
    client: impl FnOnce() -> Result<Client, ToolError>,
    name: &str,
    args: &serde_json::Map<String, Value>,
) -> Result<GetPromptResult, ContextError> {
    match name {
        "explain_failed_deploy" => {
            let app_id = argument(args, "app_id")
                .ok_or_else(|| ContextError::Argument("app_id is required".into()))?;
            let diagnosis = platform::history::diagnosis(&client()?, app_id)?;
            let text = format!(
                "The Slipway app {app_id} is {status}. Here is its diagnosis from the platform \
                 (JSON): the latest deployment's reason, the last log lines of each service that \
                 is not healthy, the log tail of a failed build, the devfile's findings, and \
                 what changed since the last deployment that ran well (images, devfile lines, \
                 secret versions).\n\n```json\n{json}\n```\n\nExplain to the user, in plain \
                 words, what failed and why, quoting the log line that shows it. Then propose \
                 the smallest fix (a code or devfile change, a secret to set), and if a \
                 deployment ran well before, say that `slipway rollback {good}` would bring it \
                 back with the images and secret versions it ran with. Do not change anything \
                 without the user's consent.",
                status = diagnosis.status.as_str(),
                json = serde_json::to_string_pretty(&diagnosis).unwrap_or_default(),
                good = diagnosis
                    .last_good_deployment_id
                    .as_deref()
                    .unwrap_or("<deployment>"),
            );
            Ok(
                GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                    .with_description("Explain a failed deployment from its diagnosis"),
            )
        }
        "deploy_new_app" => {
            let app_name = argument(args, "app_name")
                .ok_or_else(|| ContextError::Argument("app_name is required".into()))?;
            let template = argument(args, "app_type").map_or_else(
                || "the template the user picks (call get_available_templates first and offer them)".to_owned(),
                |t| format!("template `{t}`"),
            );
            let text = format!(
                "Create and deploy a new app called `{app_name}` from {template}, following \
                 Slipway's workflow:\n\
                 1. get_available_templates — show the templates and confirm the choice.\n\
                 2. scaffold_app with app_name `{app_name}`, the app_type and an \
                 output_directory the user agrees to.\n\
                 3. validate_devfile on the new project's devfile.yaml; fix every error before \
                 going on.\n\
                 4. register_app with project_path (it writes .app) — required before build_app \
                 when the app uses secrets.\n\
                 5. If the devfile lists secrets (attributes.secrets), create_secret with \
                 secret_type app for each, asking the user for the values.\n\
                 6. build_app with project_path; print app_id and every service URL.\n\
                 7. Ask before polling: then get_app_status every 10–15 s until RUNNING or \
                 FAILED.\n\
                 8. On FAILED, get_app_logs and explain the failure (the explain_failed_deploy \
                 prompt gathers everything at once).\n\
                 Report each step's result briefly; stop and ask when a step fails."
            );
            Ok(
                GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                    .with_description("Walk through creating and deploying a new app"),
            )
        }
        other => Err(ContextError::Unknown(format!("no prompt called {other:?}"))),
    }
}

/// The resource templates.
pub fn resource_templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new("slipway://apps/{app_id}/deployments", "deployment-history")
            .with_title("Deployment history")
            .with_description(
                "An app's deployments, newest first: per service the image and the secret \
                 versions it ran with, why it was started and how it ended.",
            )
            .with_mime_type("application/json"),
        ResourceTemplate::new("slipway://apps/{app_id}/logs", "latest-logs")
            .with_title("Latest logs")
            .with_description("An app's latest build and runtime logs, per service.")
            .with_mime_type("text/plain"),
        ResourceTemplate::new("slipway://apps/{app_id}/jobs", "scheduled-jobs")
            .with_title("Scheduled jobs")
            .with_description(
                "An app's scheduled jobs (schedule, time zone, next due time) with their \
                 newest runs: status, trigger, exit code, why a run failed, was skipped or \
                 missed.",
            )
            .with_mime_type("application/json"),
        ResourceTemplate::new("slipway://apps/{app_id}/notifications", "notifications")
            .with_title("Notifications")
            .with_description(
                "Who is told about an app's events (its subscriptions and the whole \
                 account's) and its newest notification deliveries, each with its attempts \
                 and why one failed.",
            )
            .with_mime_type("application/json"),
    ]
}

/// One concrete resource per app and kind, for every app the caller sees (first 100).
pub fn resources(client: &Client) -> Result<Vec<Resource>, ContextError> {
    let listed = client.run(platform::list_apps(&ListAppsArgs {
        page_size: Some(100),
        ..ListAppsArgs::default()
    })?)?;
    let mut out = Vec::new();
    for app in &listed.apps {
        let (id, name) = (&app.app_id, &app.listing.name);
        out.push(
            Resource::new(
                format!("slipway://apps/{id}/deployments"),
                format!("{name} deployments"),
            )
            .with_description(format!("Deployment history of {name}"))
            .with_mime_type("application/json"),
        );
        out.push(
            Resource::new(format!("slipway://apps/{id}/logs"), format!("{name} logs"))
                .with_description(format!(
                    "Latest build and runtime logs of {name}, per service"
                ))
                .with_mime_type("text/plain"),
        );
        out.push(
            Resource::new(format!("slipway://apps/{id}/jobs"), format!("{name} jobs"))
                .with_description(format!("Scheduled jobs of {name} and their newest runs"))
                .with_mime_type("application/json"),
        );
        out.push(
            Resource::new(
                format!("slipway://apps/{id}/notifications"),
                format!("{name} notifications"),
            )
            .with_description(format!(
                "Who hears {name}'s events, and its newest notification deliveries"
            ))
            .with_mime_type("application/json"),
        );
    }
    Ok(out)
}

/// The contents of resource `uri`.
pub fn read(client: &Client, uri: &str) -> Result<ResourceContents, ContextError> {
    let rest = uri
        .strip_prefix("slipway://apps/")
        .ok_or_else(|| ContextError::Unknown(format!("no resource {uri:?}")))?;
    let (app_id, kind) = rest
        .split_once('/')
        .ok_or_else(|| ContextError::Unknown(format!("no resource {uri:?}")))?;
    match kind {
        "deployments" => {
            let history = platform::history::deployments(client, app_id, 100)?;
            Ok(ResourceContents::text(
                serde_json::to_string_pretty(&history.deployments).unwrap_or_default(),
                uri,
            )
            .with_mime_type("application/json"))
        }
        "logs" => {
            let logs = client.run(platform::get_app_logs(&GetLogsArgs {
                app_id: app_id.to_owned(),
                latest_only: Some(true),
                service_name: None,
                environment: None,
            })?)?;
            let mut text = String::new();
            for entry in &logs.logs {
                text.push_str(&format!("=== {} {}\n", entry.service, entry.kind.as_str()));
                match platform::fetch_text(&entry.url) {
                    Ok(body) => text.push_str(&body),
                    Err(e) => text.push_str(&format!("(cannot fetch: {e})\n")),
                }
            }
            Ok(ResourceContents::text(text, uri).with_mime_type("text/plain"))
        }
        "jobs" => {
            let list = platform::jobs::list_jobs(client, app_id)?;
            let mut jobs = Vec::new();
            for job in list.jobs {
                let mut runs = platform::jobs::list_runs(client, app_id, &job.name)?.runs;
                runs.truncate(10);
                jobs.push(serde_json::json!({"job": job, "runs": runs}));
            }
            Ok(
                ResourceContents::text(
                    serde_json::to_string_pretty(&jobs).unwrap_or_default(),
                    uri,
                )
                .with_mime_type("application/json"),
            )
        }
        "notifications" => {
            let subscriptions: Vec<_> = platform::notifications::list_subscriptions(client)?
                .subscriptions
                .into_iter()
                .filter(|s| s.app_id.as_deref().is_none_or(|a| a == app_id))
                .collect();
            let deliveries =
                platform::notifications::list_deliveries(client, Some(app_id), None, Some(20))?
                    .deliveries;
            let body =
                serde_json::json!({"subscriptions": subscriptions, "deliveries": deliveries});
            Ok(
                ResourceContents::text(
                    serde_json::to_string_pretty(&body).unwrap_or_default(),
                    uri,
                )
                .with_mime_type("application/json"),
            )
        }
        _ => Err(ContextError::Unknown(format!("no resource {uri:?}"))),
    }
}
