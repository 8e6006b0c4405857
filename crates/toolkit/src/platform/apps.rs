//! The app-management tools: register_app (and its `.app` file), list_apps, get_app,
//! get_app_status, get_app_logs, enable_app, disable_app, delete_app, cancel_build.

use std::path::{Path, PathBuf};

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::Client;
use crate::error::ToolError;
use crate::fsutil::atomic_write;

/// Name of the file `register_app` writes into the project directory.
pub const APP_FILE: &str = ".app";

/// The `.app` file: JSON, so people and tools can read it. `build_app` reads `app_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppFile {
    /// The app's UUID.
    pub app_id: String,
    /// The app name, for people reading the file.
    pub name: String,
    /// The platform the app lives on.
    pub platform_url: String,
}

impl AppFile {
    /// Writes `dir/.app` atomically; returns its path.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, ToolError> {
        let path = dir.join(APP_FILE);
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| ToolError::Internal(e.to_string()))?
            + "\n";
        atomic_write(&path, text.as_bytes()).map_err(|e| ToolError::io("write", &path, &e))?;
        Ok(path)
    }

    /// Removes `dir/.app` after its app was deleted, but only when it names `app_id`: a file
    /// that names another app (the folder was registered again) is left alone and the error
    /// says so. Returns the removed file's path.
    pub fn forget(dir: &Path, app_id: &str) -> Result<PathBuf, ToolError> {
        let path = dir.join(APP_FILE);
        let named = super::build::read_app_file(dir)?.ok_or_else(|| {
            ToolError::invalid("project_path", format!("{} does not exist", path.display()))
        })?;
        if named.app_id != app_id {
            return Err(ToolError::invalid(
                "project_path",
                format!(
                    "{} names app {} ({}), not {app_id}: it was left alone",
                    path.display(),
                    named.name,
                    named.app_id
                ),
            ));
        }
        std::fs::remove_file(&path).map_err(|e| ToolError::io("remove", &path, &e))?;
        Ok(path)
    }
}

/// Arguments of `register_app`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterAppArgs {
    /// App name (app-name rule, checked here before any request).
    pub name: String,
    /// Human-readable name.
    pub display_name: String,
    /// Where to write `.app`; omit when app_id will be passed by hand.
    #[serde(default)]
    pub project_path: Option<String>,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Environment (default production).
    #[serde(default)]
    pub environment: Option<String>,
}

/// Arguments of tools that take only an app id.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppIdArgs {
    /// App UUID.
    pub app_id: String,
    /// Environment (default production).
    #[serde(default)]
    pub environment: Option<String>,
}

/// Arguments of `list_apps`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListAppsArgs {
    /// Page size (default 20, at most 100).
    #[serde(default)]
    pub page_size: Option<i64>,
    /// Token from a previous page.
    #[serde(default)]
    pub next_page_token: Option<String>,
    /// Environment (default production).
    #[serde(default)]
    pub environment: Option<String>,
}

/// Arguments of `get_app_logs`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetLogsArgs {
    /// App UUID.
    pub app_id: String,
    /// Only the latest build/deployment (default true).
    #[serde(default)]
    pub latest_only: Option<bool>,
    /// One service of a multi-service app.
    #[serde(default)]
    pub service_name: Option<String>,
    /// Environment (default production).
    #[serde(default)]
    pub environment: Option<String>,
}

/// Arguments of `cancel_build`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelBuildArgs {
    /// Build job id from build_app.
    pub build_id: String,
    /// Environment (default production).
    #[serde(default)]
    pub environment: Option<String>,
}

pub(crate) fn uuid_arg(field: &str, value: &str) -> Result<String, ToolError> {
    let v = value.trim();
    let ok = v.len() == 36
        && v.chars().enumerate().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    if ok {
        Ok(v.to_ascii_lowercase())
    } else {
        Err(ToolError::invalid(
            field,
            format!("{value:?} is not a UUID"),
        ))
    }
}

pub(crate) fn with_success(mut body: Value, extra: &[(&str, Value)]) -> Value {
    let mut map = match body.take() {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    map.insert("success".into(), Value::Bool(true));
    for (k, v) in extra {
        map.insert((*k).into(), v.clone());
    }
    Value::Object(map)
}

/// Renames the platform's `id` to the spec's `app_id`.
fn app_view(mut app: Value) -> Value {
    if let Some(obj) = app.as_object_mut()
        && let Some(id) = obj.remove("id")
    {
        obj.insert("app_id".into(), id);
    }
    app
}

/// `register_app`: reserves the name, creates the service principal and the access-control
/// resource (the platform does all three in one transaction), and writes `.app` atomically.
pub fn register_app(client: &Client, args: &RegisterAppArgs) -> Result<Value, ToolError> {
    slipway_devfile::AppName::parse(&args.name).map_err(|e| ToolError::invalid("name", e))?;
    if let Some(dir) = &args.project_path
        && !Path::new(dir).is_dir()
    {
        return Err(ToolError::invalid(
            "project_path",
            format!("{dir} is not a directory"),
        ));
    }
    let body = json!({"name": args.name, "display_name": args.display_name, "description": args.description});
    let app = client.json(Method::POST, "/v1/apps", Some(&body))?.body;
    let app_id = app["id"].as_str().unwrap_or_default().to_owned();
    let mut extra = vec![(
        "message",
        json!(format!("registered {} ({app_id})", args.name)),
    )];
    if let Some(dir) = &args.project_path {
        let path = AppFile {
            app_id: app_id.clone(),
            name: args.name.clone(),
            platform_url: client.base_url().to_owned(),
        }
        .write(Path::new(dir))?;
        extra.push(("app_file", json!(path.display().to_string())));
    }
    Ok(with_success(app_view(app), &extra))
}

/// `list_apps`: one page of apps and the token of the next page, when there is one.
pub fn list_apps(client: &Client, args: &ListAppsArgs) -> Result<Value, ToolError> {
    let mut query = vec![format!("page_size={}", args.page_size.unwrap_or(20))];
    if let Some(token) = args.next_page_token.as_deref().filter(|t| !t.is_empty()) {
        query.push(format!("next_page_token={}", encode(token)));
    }
    let body = client
        .json(Method::GET, &format!("/v1/apps?{}", query.join("&")), None)?
        .body;
    let apps: Vec<Value> = body["apps"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(app_view)
        .collect();
    let mut out = json!({"success": true, "apps": apps});
    if let Some(token) = body["next_page_token"].as_str() {
        out["next_page_token"] = json!(token);
    }
    Ok(out)
}

/// `get_app`: name, description, status, URL, devfile, enabled state, timestamps.
pub fn get_app(client: &Client, args: &AppIdArgs) -> Result<Value, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    let app = client
        .json(Method::GET, &format!("/v1/apps/{id}"), None)?
        .body;
    Ok(with_success(app_view(app), &[]))
}

/// `get_app_status`: status and app_url (plus per-service detail).
pub fn get_app_status(client: &Client, args: &AppIdArgs) -> Result<Value, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    let status = client
        .json(Method::GET, &format!("/v1/apps/{id}/status"), None)?
        .body;
    Ok(with_success(status, &[]))
}

/// `get_app_logs`: log entries with presigned URLs.
pub fn get_app_logs(client: &Client, args: &GetLogsArgs) -> Result<Value, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    let mut path = format!(
        "/v1/apps/{id}/logs?latest_only={}",
        args.latest_only.unwrap_or(true)
    );
    if let Some(service) = &args.service_name {
        path.push_str(&format!("&service_name={}", encode(service)));
    }
    let body = client.json(Method::GET, &path, None)?.body;
    Ok(json!({"success": true, "app_id": id, "logs": body["logs"].clone()}))
}

/// `enable_app`: resumes a suspended app (poll get_app_status until RUNNING).
pub fn enable_app(client: &Client, args: &AppIdArgs) -> Result<Value, ToolError> {
    lifecycle(
        client,
        args,
        "enable",
        "enabled; the app is deploying — poll get_app_status until RUNNING",
    )
}

/// `disable_app`: suspends a running app without deleting it.
pub fn disable_app(client: &Client, args: &AppIdArgs) -> Result<Value, ToolError> {
    lifecycle(
        client,
        args,
        "disable",
        "disabled; the app is suspended and can be enabled again",
    )
}

fn lifecycle(
    client: &Client,
    args: &AppIdArgs,
    action: &str,
    message: &str,
) -> Result<Value, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    let status = client
        .json(Method::POST, &format!("/v1/apps/{id}/{action}"), None)?
        .body;
    Ok(with_success(status, &[("message", json!(message))]))
}

/// `delete_app`: permanent. Reminds the caller that a project's `.app` file must go too.
pub fn delete_app(client: &Client, args: &AppIdArgs) -> Result<Value, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    client.json(Method::DELETE, &format!("/v1/apps/{id}"), None)?;
    Ok(json!({
        "success": true,
        "app_id": id,
        "message": format!("app {id} deleted permanently. Delete the {APP_FILE} file in its project directory, or later builds fail with 404 (or register the app again)"),
    }))
}

/// `cancel_build`: cancels a queued or running build job; a running deployment is untouched.
pub fn cancel_build(client: &Client, args: &CancelBuildArgs) -> Result<Value, ToolError> {
    let id = uuid_arg("build_id", &args.build_id)?;
    let build = client
        .json(Method::POST, &format!("/v1/builds/{id}/cancel"), None)?
        .body;
    Ok(with_success(
        build,
        &[(
            "message",
            json!("build cancelled; a running deployment is not affected"),
        )],
    ))
}

/// `get_build_scan_report`: the image's SBOM and the vulnerabilities found against the
/// platform's advisory database. When the platform has none, `error` says so (never a fake
/// clean report).
pub fn get_build_scan_report(client: &Client, args: &CancelBuildArgs) -> Result<Value, ToolError> {
    let id = uuid_arg("build_id", &args.build_id)?;
    let body = client
        .json(Method::GET, &format!("/v1/builds/{id}/scan"), None)?
        .body;
    let mut out = json!({"success": true, "build_id": id});
    for key in ["report", "sbom", "error"] {
        if let Some(v) = body.get(key).filter(|v| !v.is_null()) {
            out[key] = v.clone();
        }
    }
    Ok(out)
}

/// Percent-encodes a query value.
pub(crate) fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgetting_removes_only_the_file_that_names_the_app() {
        let dir = tempfile::tempdir().unwrap();
        let file = AppFile {
            app_id: "11111111-1111-1111-1111-111111111111".into(),
            name: "orders".into(),
            platform_url: "http://127.0.0.1:8700".into(),
        };
        let path = file.write(dir.path()).unwrap();
        let other = AppFile::forget(dir.path(), "22222222-2222-2222-2222-222222222222")
            .unwrap_err()
            .to_string();
        assert!(
            other.contains("names app orders") && other.contains("left alone"),
            "{other}"
        );
        assert!(path.exists());
        assert_eq!(AppFile::forget(dir.path(), &file.app_id).unwrap(), path);
        assert!(!path.exists());
        let missing = AppFile::forget(dir.path(), &file.app_id).unwrap_err();
        assert!(missing.to_string().contains("does not exist"), "{missing}");
    }
}
