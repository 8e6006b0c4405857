//! `build_app`: validate, pack, upload (remote) or build here and upload the image (local),
//! wait for the build jobs, then write each new `imageUri` into devfile.yaml.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};
use slipway_devfile::{Devfile, ProjectFiles, set_image_uri, validate};

use super::{APP_FILE, AppFile, Client, pack};
use crate::error::ToolError;
use crate::fsutil::atomic_write;

/// Arguments of `build_app` (names exactly as the spec).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildAppArgs {
    /// Project directory with devfile.yaml and the Dockerfile(s).
    pub project_path: String,
    /// Environment (default production).
    #[serde(default)]
    pub environment: Option<String>,
    /// Add the build logs to the result.
    #[serde(default)]
    pub verbose: Option<bool>,
    /// amd64 (default) or arm64, for local builds.
    #[serde(default)]
    pub architecture: Option<String>,
    /// remote (default) or local.
    #[serde(default)]
    pub build_mode: Option<String>,
    /// Rebuild only this service.
    #[serde(default)]
    pub service_name: Option<String>,
}

/// How long `build_app` waits for its build jobs.
const BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// A project directory as the devfile validator reads it (only inside the directory).
pub(crate) struct Files(pub(crate) PathBuf);

impl ProjectFiles for Files {
    fn read(&self, rel: &str) -> Option<String> {
        if rel.starts_with('/') || rel.split('/').any(|s| s == "..") {
            return None;
        }
        std::fs::read_to_string(self.0.join(rel)).ok()
    }
}

/// `build_app`.
pub fn build_app(client: &Client, args: &BuildAppArgs) -> Result<Value, ToolError> {
    build_app_with_progress(client, args, &|_| {})
}

/// [`build_app`] reporting each long step (packing, uploading, building) to `progress`, so an
/// interactive front end can show what is happening.
pub fn build_app_with_progress(
    client: &Client,
    args: &BuildAppArgs,
    progress: &dyn Fn(&str),
) -> Result<Value, ToolError> {
    let root = PathBuf::from(&args.project_path);
    if !root.is_dir() {
        return Err(ToolError::invalid(
            "project_path",
            format!("{} is not a directory", root.display()),
        ));
    }
    let arch = args.architecture.clone().unwrap_or_else(|| "amd64".into());
    if !["amd64", "arm64"].contains(&arch.as_str()) {
        return Err(ToolError::invalid(
            "architecture",
            format!("{arch:?} must be amd64 or arm64"),
        ));
    }
    let mode = args.build_mode.clone().unwrap_or_else(|| "remote".into());
    if !["remote", "local"].contains(&mode.as_str()) {
        return Err(ToolError::invalid(
            "build_mode",
            format!("{mode:?} must be remote or local"),
        ));
    }
    let devfile_path = root.join("devfile.yaml");
    let text = std::fs::read_to_string(&devfile_path).map_err(|_| {
        ToolError::invalid(
            "project_path",
            format!(
                "{} has no devfile.yaml (scaffold_app or generate_devfile make one)",
                root.display()
            ),
        )
    })?;
    let report = validate(&text, Some(&Files(root.clone())));
    if !report.valid() {
        return Ok(json!({
            "success": false,
            "error": format!("devfile.yaml is invalid; nothing was uploaded. Fix: {}", report.errors().join("; ")),
            "retryable": false,
            "errors": report.errors(),
            "warnings": report.warnings(),
        }));
    }
    let model =
        Devfile::parse(&text).map_err(|e| ToolError::Internal(format!("devfile.yaml: {e}")))?;
    let services = model.services();
    let selected: Vec<String> = match &args.service_name {
        Some(name) if !services.iter().any(|s| &s.name == name) => {
            let names: Vec<&str> = services.iter().map(|s| s.name.as_str()).collect();
            return Err(ToolError::invalid(
                "service_name",
                format!(
                    "{name:?} is not a service of devfile.yaml; services: {}",
                    names.join(", ")
                ),
            ));
        }
        Some(name) => vec![name.clone()],
        None => services.iter().map(|s| s.name.clone()).collect(),
    };
    for s in services.iter().filter(|s| selected.contains(&s.name)) {
        let dockerfile = s.dockerfile.clone().unwrap_or_else(|| "Dockerfile".into());
        if !root.join(&dockerfile).is_file() {
            return Err(ToolError::invalid(
                "project_path",
                format!(
                    "service {:?} needs {dockerfile}, which does not exist in {}",
                    s.name,
                    root.display()
                ),
            ));
        }
    }
    let local = if mode == "local" {
        Some(super::local::Builder::from_env()?)
    } else {
        None
    };
    let app_file = read_app_file(&root)?;

    let mut context_files = None;
    let query = args
        .service_name
        .as_ref()
        .map(|s| format!("?service_name={s}"))
        .unwrap_or_default();
    let (created, attempts) = match (&local, &app_file) {
        (None, Some(app)) => {
            progress("packing the build context");
            let packed = pack::pack_project(&root, &model)?;
            progress(&format!(
                "uploading {} files ({} KiB)",
                packed.files,
                packed.bytes.len() / 1024
            ));
            context_files = Some(packed.files);
            let answer = client
                .bytes(
                    &format!("/v1/apps/{}/builds{query}", app.app_id),
                    "application/gzip",
                    packed.bytes,
                )
                .map_err(|e| stale(e, &root, app))?;
            (answer.body, answer.attempts)
        }
        (None, None) => {
            progress("packing the build context");
            let packed = pack::pack_project(&root, &model)?;
            progress(&format!(
                "uploading {} files ({} KiB)",
                packed.files,
                packed.bytes.len() / 1024
            ));
            context_files = Some(packed.files);
            let answer = client.bytes(
                &format!("/v1/builds{query}"),
                "application/gzip",
                packed.bytes,
            )?;
            (answer.body, answer.attempts)
        }
        (Some(builder), app) => {
            let app_id = match app {
                Some(a) => a.app_id.clone(),
                None => ensure_app(client, &model)?,
            };
            let mut build_ids = Vec::new();
            let mut attempts = 0;
            for service in services.iter().filter(|s| selected.contains(&s.name)) {
                progress(&format!("building {} locally", service.name));
                let archive = builder.build(&root, service, &arch, model.metadata.name.as_str())?;
                progress(&format!("uploading the {} image", service.name));
                let bytes = std::fs::read(archive.path())
                    .map_err(|e| ToolError::io("read", archive.path(), &e))?;
                let answer = client
                    .bytes(
                        &format!(
                            "/v1/apps/{app_id}/builds/prebuilt?service_name={}",
                            service.name
                        ),
                        "application/x-tar",
                        bytes,
                    )
                    .map_err(|e| match &app_file {
                        Some(a) => stale(e, &root, a),
                        None => e,
                    })?;
                attempts += answer.attempts;
                build_ids.extend(
                    answer.body["build_ids"]
                        .as_array()
                        .cloned()
                        .unwrap_or_else(|| vec![answer.body["build_id"].clone()]),
                );
            }
            (json!({"app_id": app_id, "build_ids": build_ids}), attempts)
        }
    };
    let app_id = created["app_id"].as_str().unwrap_or_default().to_owned();
    // An app created inline gets its `.app` now, as register_app would have written it, so
    // the next build updates this app and a delete is noticed.
    let written_app_file = if app_file.is_none() && !app_id.is_empty() {
        let file = AppFile {
            app_id: app_id.clone(),
            name: model.metadata.name.clone(),
            platform_url: client.base_url().to_owned(),
        };
        Some(file.write(&root)?)
    } else {
        None
    };
    let build_ids: Vec<String> = created["build_ids"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();

    progress(&format!(
        "building {} service(s) on the platform",
        build_ids.len()
    ));
    let builds = wait(client, &build_ids, args.verbose.unwrap_or(false))?;
    let failed: Vec<&Value> = builds
        .iter()
        .filter(|b| b["status"] != "succeeded")
        .collect();
    if !failed.is_empty() {
        let reasons: Vec<String> = failed
            .iter()
            .map(|b| {
                format!(
                    "{} {}: {}",
                    b["service"].as_str().unwrap_or("?"),
                    b["status"].as_str().unwrap_or("?"),
                    b["error"].as_str().unwrap_or("see the build log")
                )
            })
            .collect();
        let mut out = json!({
            "success": false,
            "error": format!("build failed: {}", reasons.join("; ")),
            "retryable": false,
            "app_id": app_id,
            "build_ids": build_ids,
            "attempts": attempts,
        });
        add_logs(&mut out, &builds);
        return Ok(out);
    }

    let mut image_uris = BTreeMap::new();
    let mut edited = text.clone();
    for b in &builds {
        let (service, uri) = (
            b["service"].as_str().unwrap_or_default(),
            b["image_uri"].as_str().unwrap_or_default(),
        );
        edited = set_image_uri(&edited, service, uri)
            .map_err(|e| ToolError::Internal(format!("writing imageUri: {e}")))?;
        image_uris.insert(service.to_owned(), uri.to_owned());
    }
    if edited != text {
        atomic_write(&devfile_path, edited.as_bytes())
            .map_err(|e| ToolError::io("write", &devfile_path, &e))?;
    }
    let status = client
        .json(Method::GET, &format!("/v1/apps/{app_id}/status"), None)
        .map(|a| a.body)
        .unwrap_or(Value::Null);
    let app_url = status["app_url"].clone();
    let service_urls: BTreeMap<String, Value> = status["services"]
        .as_array()
        .into_iter()
        .flatten()
        // Services without a public endpoint have no URL and are not listed.
        .filter(|s| s["url"].is_string())
        .filter_map(|s| Some((s["name"].as_str()?.to_owned(), s["url"].clone())))
        .collect();
    let deploy_order = model.deploy_order().unwrap_or_default();
    let mut out = if services.len() == 1 {
        let b = &builds[0];
        json!({
            "success": true, "app_id": app_id, "app_url": app_url,
            "build_id": b["build_id"], "image_uri": b["image_uri"],
        })
    } else {
        json!({
            "success": true, "app_id": app_id, "app_url": app_url,
            "build_ids": build_ids, "image_uris": image_uris, "deploy_order": deploy_order,
            "service_urls": service_urls, "rollout_waited": false,
        })
    };
    out["attempts"] = json!(attempts);
    out["build_mode"] = json!(mode);
    if let Some(path) = written_app_file {
        out["app_file"] = json!(path.display().to_string());
    }
    if let Some(files) = context_files {
        out["context_files"] = json!(files);
    }
    out["next_step"] = json!(
        "the app is deploying: call get_app_status with app_id (every 10-15 s) until RUNNING or FAILED"
    );
    if args.verbose.unwrap_or(false) {
        add_logs(&mut out, &builds);
    }
    Ok(out)
}

/// Uploads the project at `root` to build `services` of app `app_id` (all of them in one
/// upload; `sync` asks for sync builds, see the platform's `?sync=true`) and waits for the
/// builds. Returns each build as `GET /v1/builds/{id}?log=true` answers it. The devfile is
/// not touched (the development loop does not write `imageUri`).
pub(crate) fn upload_services(
    client: &Client,
    root: &Path,
    app_id: &str,
    services: &[String],
    sync: bool,
    progress: &dyn Fn(&str),
) -> Result<Vec<Value>, ToolError> {
    let text = std::fs::read_to_string(root.join("devfile.yaml"))
        .map_err(|e| ToolError::io("read", &root.join("devfile.yaml"), &e))?;
    let model =
        Devfile::parse(&text).map_err(|e| ToolError::Internal(format!("devfile.yaml: {e}")))?;
    let packed = pack::pack_project(root, &model)?;
    progress(&format!(
        "uploading {} files ({} KiB) to {} {}",
        packed.files,
        packed.bytes.len() / 1024,
        if sync { "sync" } else { "build" },
        services.join(", ")
    ));
    let answer = client.bytes(
        &format!(
            "/v1/apps/{app_id}/builds?service_name={}{}",
            services.join(","),
            if sync { "&sync=true" } else { "" }
        ),
        "application/gzip",
        packed.bytes,
    )?;
    let build_ids: Vec<String> = answer.body["build_ids"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    progress(&format!("building {}", services.join(", ")));
    wait(client, &build_ids, true)
}

fn add_logs(out: &mut Value, builds: &[Value]) {
    let logs: BTreeMap<String, Value> = builds
        .iter()
        .filter_map(|b| {
            Some((
                b["service"].as_str()?.to_owned(),
                b.get("log").cloned().unwrap_or(Value::Null),
            ))
        })
        .collect();
    out["build_logs"] = json!(logs);
}

pub(crate) fn read_app_file(root: &Path) -> Result<Option<AppFile>, ToolError> {
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

/// A 404 for the app named in `.app` means the file is stale (the app was deleted).
fn stale(e: ToolError, root: &Path, app: &AppFile) -> ToolError {
    match e {
        ToolError::NotFound(_) => ToolError::NotFound(format!(
            "404: app {} named in {} does not exist on the platform (was it deleted?). Delete the .app file to create the app on the next build, or run register_app again",
            app.app_id,
            root.join(APP_FILE).display()
        )),
        other => other,
    }
}

/// The app for a local build without `.app`: registered from the devfile's metadata.
fn ensure_app(client: &Client, model: &Devfile) -> Result<String, ToolError> {
    let body = json!({"name": model.metadata.name, "display_name": model.metadata.display_name, "description": model.metadata.description});
    let app = client.json(Method::POST, "/v1/apps", Some(&body))?.body;
    Ok(app["id"].as_str().unwrap_or_default().to_owned())
}

/// Polls every build until it finishes; returns the final records (with logs when verbose).
fn wait(client: &Client, build_ids: &[String], verbose: bool) -> Result<Vec<Value>, ToolError> {
    let deadline = Instant::now() + BUILD_TIMEOUT;
    let mut done: BTreeMap<String, Value> = BTreeMap::new();
    while done.len() < build_ids.len() {
        let pending: Vec<&String> = build_ids
            .iter()
            .filter(|id| !done.contains_key(*id))
            .collect();
        for id in pending {
            let b = client
                .json(
                    Method::GET,
                    &format!("/v1/builds/{id}{}", if verbose { "?log=true" } else { "" }),
                    None,
                )?
                .body;
            if matches!(
                b["status"].as_str(),
                Some("succeeded" | "failed" | "cancelled")
            ) {
                done.insert(id.clone(), b);
            }
        }
        if done.len() < build_ids.len() {
            if Instant::now() > deadline {
                return Err(ToolError::Unavailable(format!(
                    "the builds did not finish within {} minutes; cancel_build or check get_app_logs",
                    BUILD_TIMEOUT.as_secs() / 60
                )));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    Ok(build_ids.iter().filter_map(|id| done.remove(id)).collect())
}
