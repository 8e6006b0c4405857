//! The app-management tools: register_app (and its `.app` file), list_apps, get_app,
//! get_app_status, get_app_logs, enable_app, disable_app, delete_app, cancel_build,
//! get_build_scan_report. Each returns a typed result carrying the platform's typed answer;
//! the registry adds `success` when it renders one.

use std::path::{Path, PathBuf};

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::client::Client;
use crate::error::ToolError;
use crate::fsutil::atomic_write;
use crate::model::{App, AppListing, AppState, Build};
use crate::one_call::OneCall;

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
        let named = read_app_file(dir)?.ok_or_else(|| {
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

/// The project's `.app` file, if it has one (the app a build or a dev round updates).
pub fn read_app_file(root: &Path) -> Result<Option<AppFile>, ToolError> {
    let path = root.join(APP_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
            ToolError::invalid_args(format!(
                "{} is not a Slipway .app file ({e}); delete it or run register_app again",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ToolError::io("read", &path, &e)),
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

/// `register_app`'s result: the registered app, what happened in words, and the `.app` file
/// written when `project_path` was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RegisteredApp {
    /// The app as registered.
    #[serde(flatten)]
    pub app: App,
    /// What happened, in words.
    pub message: String,
    /// The `.app` file written, with `project_path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_file: Option<String>,
}

/// An app as `list_apps` lists it: everything but the description and the devfile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppSummary {
    /// The app's UUID (the platform's `id`).
    #[serde(rename(serialize = "app_id", deserialize = "id"), alias = "app_id")]
    pub app_id: String,
    /// Everything else, as the platform writes it.
    #[serde(flatten)]
    pub listing: AppListing,
}

/// `list_apps`'s result: one page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppList {
    /// The apps of this page, oldest first.
    pub apps: Vec<AppSummary>,
    /// Pass as `next_page_token` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}

/// Whether a log is a build's or a running service's. (The platform writes these two words
/// as plain strings; only its clients name them as a type.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum LogKind {
    /// An image build's log.
    #[serde(rename = "build")]
    Build,
    /// A deployed service's output.
    #[serde(rename = "runtime")]
    Runtime,
}

impl LogKind {
    /// The platform's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            LogKind::Build => "build",
            LogKind::Runtime => "runtime",
        }
    }
}

impl std::fmt::Display for LogKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One log of an app, with a presigned URL to its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LogEntry {
    /// The service.
    pub service: String,
    /// A build's or a running service's.
    pub kind: LogKind,
    /// The build, for build logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_id: Option<String>,
    /// The deployment, for runtime logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_id: Option<String>,
    /// When the build or deployment was created (RFC 3339).
    pub time: String,
    /// Bytes in the log then.
    pub size: u64,
    /// Presigned URL serving the log without a token, good for 15 minutes.
    pub url: String,
}

/// `get_app_logs`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppLogs {
    /// The app.
    pub app_id: String,
    /// Its logs, build logs and runtime logs.
    pub logs: Vec<LogEntry>,
}

/// The platform's list of an app's logs.
#[derive(Debug, Deserialize)]
struct LogList {
    logs: Vec<LogEntry>,
}

/// `enable_app`'s and `disable_app`'s result: the app's state afterwards, and what to do next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LifecycleChange {
    /// The app's state after the change.
    #[serde(flatten)]
    pub state: AppState,
    /// What happened and what to do next.
    pub message: String,
}

/// `delete_app`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeletedApp {
    /// The app deleted.
    pub app_id: String,
    /// What happened, and that the project's `.app` file must go too.
    pub message: String,
    /// The data that went with it: each backing resource and volume, in words.
    #[serde(default)]
    pub data_removed: Vec<String>,
}

/// `cancel_build`'s result: the build as it is now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CancelledBuild {
    /// The build, cancelled.
    #[serde(flatten)]
    pub build: Build,
    /// That a running deployment is not affected.
    pub message: String,
}

/// One package found in a build's image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Package {
    /// As its metadata spells it.
    pub name: String,
    /// As its metadata spells it.
    pub version: String,
    /// `PyPI`, `npm` or `Debian` (OSV's spellings).
    pub ecosystem: String,
    /// Package URL (`pkg:pypi/fastapi@0.165.0`).
    pub purl: String,
}

/// The packages of an image, sorted, each once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sbom {
    /// The packages.
    pub packages: Vec<Package>,
}

/// An advisory that affects a package of the image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Vulnerability {
    /// The advisory id (`GHSA-…`, `PYSEC-…`, `CVE-…`).
    pub id: String,
    /// The affected package.
    pub package: String,
    /// Its version in the image.
    pub version: String,
    /// The advisory's summary.
    pub summary: String,
    /// Its severity, when the advisory gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// The first fixed version, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed: Option<String>,
}

/// Which advisory database a report used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AdvisoryDb {
    /// The directory the platform was given with `--advisory-db`.
    pub path: String,
    /// Advisories read from it.
    pub advisories: u64,
}

/// A scan against an advisory database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VulnerabilityReport {
    /// The image's packages.
    pub sbom: Sbom,
    /// Advisories that affect a package of the SBOM.
    pub vulnerabilities: Vec<Vulnerability>,
    /// The database used.
    pub advisory_db: AdvisoryDb,
    /// RFC 3339, UTC.
    pub scanned_at: String,
}

/// `get_build_scan_report`'s result (and the platform's answer it passes on).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScanReport {
    /// The build scanned.
    pub build_id: String,
    /// The vulnerability report, when an advisory database was checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<VulnerabilityReport>,
    /// The image's packages, whenever the image could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sbom: Option<Sbom>,
    /// Why there is no report (no advisory database, an unreadable image).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `register_app`: reserves the name, creates the service principal and the access-control
/// resource (the platform does all three in one transaction), and writes `.app` atomically.
pub fn register_app(client: &Client, args: &RegisterAppArgs) -> Result<RegisteredApp, ToolError> {
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
    let app: App = client.typed(Method::POST, "/v1/apps", Some(&body))?;
    let app_file = match &args.project_path {
        Some(dir) => Some(
            AppFile {
                app_id: app.app_id.clone(),
                name: args.name.clone(),
                platform_url: client.base_url().to_owned(),
            }
            .write(Path::new(dir))?
            .display()
            .to_string(),
        ),
        None => None,
    };
    Ok(RegisteredApp {
        message: format!("registered {} ({})", args.name, app.app_id),
        app,
        app_file,
    })
}

/// `list_apps`: one page of apps and the token of the next page, when there is one.
pub fn list_apps(args: &ListAppsArgs) -> Result<OneCall<AppList>, ToolError> {
    let mut query = vec![format!("page_size={}", args.page_size.unwrap_or(20))];
    if let Some(token) = args.next_page_token.as_deref().filter(|t| !t.is_empty()) {
        query.push(format!("next_page_token={}", encode(token)));
    }
    Ok(OneCall::new(
        Method::GET,
        format!("/v1/apps?{}", query.join("&")),
        None,
    ))
}

/// `get_app`: name, description, status, URL, devfile, enabled state, timestamps.
pub fn get_app(args: &AppIdArgs) -> Result<OneCall<App>, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    Ok(OneCall::new(Method::GET, format!("/v1/apps/{id}"), None))
}

/// `get_app_status`: status and app_url (plus per-service detail).
pub fn get_app_status(args: &AppIdArgs) -> Result<OneCall<AppState>, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    Ok(OneCall::new(
        Method::GET,
        format!("/v1/apps/{id}/status"),
        None,
    ))
}

/// `get_app_logs`: log entries with presigned URLs.
pub fn get_app_logs(args: &GetLogsArgs) -> Result<OneCall<AppLogs>, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    let mut path = format!(
        "/v1/apps/{id}/logs?latest_only={}",
        args.latest_only.unwrap_or(true)
    );
    if let Some(service) = &args.service_name {
        path.push_str(&format!("&service_name={}", encode(service)));
    }
    Ok(
        OneCall::<LogList>::new(Method::GET, path, None).map(move |list| AppLogs {
            app_id: id,
            logs: list.logs,
        }),
    )
}

/// `enable_app`: resumes a suspended app (poll get_app_status until RUNNING).
pub fn enable_app(client: &Client, args: &AppIdArgs) -> Result<LifecycleChange, ToolError> {
    lifecycle(
        client,
        args,
        "enable",
        "enabled; the app is deploying — poll get_app_status until RUNNING",
    )
}

/// `disable_app`: suspends a running app without deleting it.
pub fn disable_app(client: &Client, args: &AppIdArgs) -> Result<LifecycleChange, ToolError> {
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
) -> Result<LifecycleChange, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    let state = client.typed(Method::POST, &format!("/v1/apps/{id}/{action}"), None)?;
    Ok(LifecycleChange {
        state,
        message: message.to_owned(),
    })
}

/// `delete_app`: permanent. Reminds the caller that a project's `.app` file must go too.
pub fn delete_app(client: &Client, args: &AppIdArgs) -> Result<DeletedApp, ToolError> {
    let id = uuid_arg("app_id", &args.app_id)?;
    // Read first, so the answer can name the data that goes with the app.
    let app: App = client.typed(Method::GET, &format!("/v1/apps/{id}"), None)?;
    let data_removed = app.data();
    client.json(Method::DELETE, &format!("/v1/apps/{id}"), None)?;
    let data = if data_removed.is_empty() {
        String::new()
    } else {
        format!(
            " Its data was destroyed with it: {}.",
            data_removed.join("; ")
        )
    };
    Ok(DeletedApp {
        message: format!(
            "app {id} deleted permanently.{data} Delete the {APP_FILE} file in its project directory, or later builds fail with 404 (or register the app again)"
        ),
        app_id: id,
        data_removed,
    })
}

/// `cancel_build`: cancels a queued or running build job; a running deployment is untouched.
pub fn cancel_build(client: &Client, args: &CancelBuildArgs) -> Result<CancelledBuild, ToolError> {
    let id = uuid_arg("build_id", &args.build_id)?;
    let build = client.typed(Method::POST, &format!("/v1/builds/{id}/cancel"), None)?;
    Ok(CancelledBuild {
        build,
        message: "build cancelled; a running deployment is not affected".to_owned(),
    })
}

/// `get_build_scan_report`: the image's SBOM and the vulnerabilities found against the
/// platform's advisory database. When the platform has none, `error` says so (never a fake
/// clean report).
pub fn get_build_scan_report(args: &CancelBuildArgs) -> Result<OneCall<ScanReport>, ToolError> {
    let id = uuid_arg("build_id", &args.build_id)?;
    let scan = OneCall::<ScanReport>::new(Method::GET, format!("/v1/builds/{id}/scan"), None);
    Ok(scan.map(move |scan| ScanReport {
        build_id: id,
        ..scan
    }))
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
