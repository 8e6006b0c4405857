//! `build_app`: validate, pack, upload (remote) or build here and upload the image (local),
//! wait for the build jobs, then write each new `imageUri` into devfile.yaml.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::json;
use slipway_devfile::{Devfile, ProjectFiles, ServiceSpec, set_image_uri, validate};

use crate::answer::read_answer;
use crate::apps::{APP_FILE, AppFile, read_app_file};
use crate::client::Client;
use crate::error::{FailedBuilds, ToolError};
use crate::fsutil::atomic_write;
use crate::model::{App, AppState, Build, BuildStatus};
use crate::pack;

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
pub struct Files(pub PathBuf);

impl ProjectFiles for Files {
    fn read(&self, rel: &str) -> Option<String> {
        if rel.starts_with('/') || rel.split('/').any(|s| s == "..") {
            return None;
        }
        std::fs::read_to_string(self.0.join(rel)).ok()
    }
}

/// `build_app`. An invalid devfile ([`ToolError::InvalidDevfile`]) and builds that did not
/// succeed ([`ToolError::BuildsFailed`]) are errors carrying what was found.
pub fn build_app(client: &Client, args: &BuildAppArgs) -> Result<BuildAppResult, ToolError> {
    build_app_with_progress(client, args, &|_| {})
}

/// [`build_app`] reporting each long step (packing, uploading, building) to `progress`, so an
/// interactive front end can show what is happening.
pub fn build_app_with_progress(
    client: &Client,
    args: &BuildAppArgs,
    progress: &dyn Fn(&str),
) -> Result<BuildAppResult, ToolError> {
    let request = BuildRequest::parse(args)?;
    let project = Project::load(&request.root)?;
    let selected = project.selected(args.service_name.as_deref())?;
    check_dockerfiles(&request.root, &selected)?;
    let local = match request.mode {
        BuildMode::Local => Some(crate::local::Builder::from_env()?),
        BuildMode::Remote => None,
    };
    let app_file = read_app_file(&request.root)?;
    let mut uploaded = match &local {
        None => upload_context(client, &request, &project, app_file.as_ref(), progress)?,
        Some(builder) => upload_images(
            client,
            builder,
            &request,
            &project,
            &selected,
            app_file.as_ref(),
            progress,
        )?,
    };
    let written_app_file =
        remember_inline_app(client, &request.root, &project, &app_file, &uploaded)?;

    progress(&format!(
        "building {} service(s) on the platform",
        uploaded.build_ids.len()
    ));
    let builds = wait(client, &uploaded.build_ids, request.verbose)?;
    if let Some(failed) = failed_builds(&uploaded, &builds) {
        return Err(ToolError::BuildsFailed(Box::new(failed)));
    }
    let image_uris = write_image_uris(&project, &builds)?;
    uploaded.urls_from_status_when_unanswered(client);
    Ok(BuildAppResult::new(
        &request,
        &project,
        uploaded,
        &builds,
        image_uris,
        written_app_file,
    ))
}

/// Where the image of a local build runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Architecture {
    Amd64,
    Arm64,
}

impl Architecture {
    /// The argument's values, the default first.
    const VALUES: &[(&str, Self)] = &[("amd64", Self::Amd64), ("arm64", Self::Arm64)];

    fn as_str(self) -> &'static str {
        Self::VALUES
            .iter()
            .find(|(_, v)| *v == self)
            .map_or("amd64", |(name, _)| name)
    }
}

/// Where the images are built: by the platform from an uploaded context, or here (with
/// `BUILDER_HOST`) and uploaded as images.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BuildMode {
    /// Built by the platform from the uploaded project.
    Remote,
    /// Built here and uploaded as images.
    Local,
}

impl BuildMode {
    /// The argument's values, the default first.
    const VALUES: &[(&str, Self)] = &[("remote", Self::Remote), ("local", Self::Local)];
}

/// Argument `field`'s value among `values` (the default first, taken when `raw` is absent);
/// another value is refused on `field`, naming the values allowed.
fn one_of<T: Copy>(field: &str, raw: Option<&str>, values: &[(&str, T)]) -> Result<T, ToolError> {
    let raw = raw.unwrap_or(values[0].0);
    values
        .iter()
        .find(|(name, _)| *name == raw)
        .map(|(_, value)| *value)
        .ok_or_else(|| {
            let names: Vec<&str> = values.iter().map(|(name, _)| *name).collect();
            ToolError::invalid(field, format!("{raw:?} must be {}", names.join(" or ")))
        })
}

/// A `build_app` call with its arguments checked.
struct BuildRequest {
    /// The project directory.
    root: PathBuf,
    arch: Architecture,
    mode: BuildMode,
    /// Whether the result carries the build logs.
    verbose: bool,
    /// `?service_name=…` when one service is rebuilt, else empty.
    query: String,
}

impl BuildRequest {
    fn parse(args: &BuildAppArgs) -> Result<Self, ToolError> {
        let root = PathBuf::from(&args.project_path);
        if !root.is_dir() {
            return Err(ToolError::invalid(
                "project_path",
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Self {
            root,
            arch: one_of(
                "architecture",
                args.architecture.as_deref(),
                Architecture::VALUES,
            )?,
            mode: one_of("build_mode", args.build_mode.as_deref(), BuildMode::VALUES)?,
            verbose: args.verbose.unwrap_or(false),
            query: args
                .service_name
                .as_ref()
                .map(|s| format!("?service_name={s}"))
                .unwrap_or_default(),
        })
    }
}

/// The project's devfile, valid.
struct Project {
    path: PathBuf,
    text: String,
    model: Devfile,
}

impl Project {
    /// Reads and validates `root`'s devfile.yaml (against the project's files); an invalid
    /// one is [`ToolError::InvalidDevfile`], with the validator's findings.
    fn load(root: &Path) -> Result<Self, ToolError> {
        let path = root.join("devfile.yaml");
        let text = std::fs::read_to_string(&path).map_err(|_| {
            ToolError::invalid(
                "project_path",
                format!(
                    "{} has no devfile.yaml (scaffold_app or generate_devfile make one)",
                    root.display()
                ),
            )
        })?;
        let report = validate(&text, Some(&Files(root.to_path_buf())));
        if !report.valid() {
            return Err(ToolError::InvalidDevfile {
                message: format!(
                    "devfile.yaml is invalid; nothing was uploaded. Fix: {}",
                    report.errors().join("; ")
                ),
                errors: report.errors(),
                warnings: report.warnings(),
            });
        }
        let model =
            Devfile::parse(&text).map_err(|e| ToolError::Internal(format!("devfile.yaml: {e}")))?;
        Ok(Self { path, text, model })
    }

    /// The services to build, in devfile order: `service_name` alone, else every one.
    fn selected(&self, service_name: Option<&str>) -> Result<Vec<ServiceSpec>, ToolError> {
        let services = self.model.services();
        let Some(name) = service_name else {
            return Ok(services);
        };
        if !services.iter().any(|s| s.name == name) {
            let names: Vec<&str> = services.iter().map(|s| s.name.as_str()).collect();
            return Err(ToolError::invalid(
                "service_name",
                format!(
                    "{name:?} is not a service of devfile.yaml; services: {}",
                    names.join(", ")
                ),
            ));
        }
        Ok(services.into_iter().filter(|s| s.name == name).collect())
    }
}

/// Every selected service's Dockerfile exists: a missing one is named before anything is
/// uploaded.
fn check_dockerfiles(root: &Path, selected: &[ServiceSpec]) -> Result<(), ToolError> {
    for s in selected {
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
    Ok(())
}

/// What the platform answered to the uploads: the app, its build jobs and its URLs.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Uploaded {
    app_id: String,
    build_ids: Vec<String>,
    app_url: Option<String>,
    service_urls: BTreeMap<String, String>,
    /// Requests sent.
    #[serde(skip)]
    attempts: u32,
    /// Files in the uploaded context (remote builds).
    #[serde(skip)]
    context_files: Option<usize>,
}

impl Uploaded {
    /// A platform from before build uploads answered the app's URLs says nothing of them:
    /// read them from the app's status, as builds did then (they are there once a deployment
    /// started; a failed read leaves them out, the build itself succeeded).
    fn urls_from_status_when_unanswered(&mut self, client: &Client) {
        if self.app_url.is_some() || !self.service_urls.is_empty() {
            return;
        }
        let Ok(state) = client.typed::<AppState>(
            Method::GET,
            &format!("/v1/apps/{}/status", self.app_id),
            None,
        ) else {
            return;
        };
        self.app_url = state.app_url;
        self.service_urls = state
            .services
            .into_iter()
            .filter_map(|s| Some((s.name, s.url?)))
            .collect();
    }
}

/// The answer to a prebuilt image upload: its (succeeded) build and the app's URLs.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PrebuiltAnswer {
    build_id: String,
    app_url: Option<String>,
    service_urls: BTreeMap<String, String>,
}

/// Remote mode: packs the project and uploads it, to the app `.app` names or (without
/// one) to the app the devfile names, registered by the platform when new.
fn upload_context(
    client: &Client,
    request: &BuildRequest,
    project: &Project,
    app_file: Option<&AppFile>,
    progress: &dyn Fn(&str),
) -> Result<Uploaded, ToolError> {
    progress("packing the build context");
    let packed = pack::pack_project(&request.root, &project.model)?;
    progress(&format!(
        "uploading {} files ({} KiB)",
        packed.files,
        packed.bytes.len() / 1024
    ));
    let path = match app_file {
        Some(app) => format!("/v1/apps/{}/builds{}", app.app_id, request.query),
        None => format!("/v1/builds{}", request.query),
    };
    let answer = client
        .bytes(&path, "application/gzip", packed.bytes)
        .map_err(|e| stale(e, &request.root, app_file))?;
    let mut uploaded: Uploaded = read_answer(answer.body)?;
    uploaded.attempts = answer.attempts;
    uploaded.context_files = Some(packed.files);
    Ok(uploaded)
}

/// Local mode: builds each selected service here and uploads its image, to the app `.app`
/// names or (without one) to an app registered from the devfile's metadata now.
fn upload_images(
    client: &Client,
    builder: &crate::local::Builder,
    request: &BuildRequest,
    project: &Project,
    selected: &[ServiceSpec],
    app_file: Option<&AppFile>,
    progress: &dyn Fn(&str),
) -> Result<Uploaded, ToolError> {
    let app_id = match app_file {
        Some(a) => a.app_id.clone(),
        None => ensure_app(client, &project.model)?,
    };
    let mut uploaded = Uploaded {
        app_id,
        ..Uploaded::default()
    };
    let app_name = devfile_app_name(&project.model)?;
    let app_name = app_name.as_str();
    for service in selected {
        progress(&format!("building {} locally", service.name));
        let archive = builder.build(&request.root, service, request.arch.as_str(), app_name)?;
        progress(&format!("uploading the {} image", service.name));
        let bytes =
            std::fs::read(archive.path()).map_err(|e| ToolError::io("read", archive.path(), &e))?;
        let path = format!(
            "/v1/apps/{}/builds/prebuilt?service_name={}",
            uploaded.app_id, service.name
        );
        let answer = client
            .bytes(&path, "application/x-tar", bytes)
            .map_err(|e| stale(e, &request.root, app_file))?;
        uploaded.attempts += answer.attempts;
        let built: PrebuiltAnswer = read_answer(answer.body)?;
        uploaded.build_ids.push(built.build_id);
        uploaded.app_url = built.app_url;
        uploaded.service_urls = built.service_urls;
    }
    Ok(uploaded)
}

/// An app created by this build (no `.app` before) gets its `.app` now, as register_app
/// would have written it, so the next build updates this app and a delete is noticed.
/// Returns the file written.
fn remember_inline_app(
    client: &Client,
    root: &Path,
    project: &Project,
    app_file: &Option<AppFile>,
    uploaded: &Uploaded,
) -> Result<Option<PathBuf>, ToolError> {
    if app_file.is_some() || uploaded.app_id.is_empty() {
        return Ok(None);
    }
    let file = AppFile {
        app_id: uploaded.app_id.clone(),
        name: devfile_app_name(&project.model)?.to_string(),
        platform_url: client.base_url().to_owned(),
    };
    file.write(root).map(Some)
}

/// Each build's log, by service (null where the platform sent none).
fn logs_of(builds: &[Build]) -> BTreeMap<String, Option<String>> {
    builds
        .iter()
        .map(|b| (b.service.clone(), b.log.clone()))
        .collect()
}

/// What is known of the builds when one did not succeed; `None` when all did.
fn failed_builds(uploaded: &Uploaded, builds: &[Build]) -> Option<FailedBuilds> {
    let reasons: Vec<String> = builds
        .iter()
        .filter(|b| b.status != BuildStatus::Succeeded)
        .map(|b| {
            format!(
                "{} {}: {}",
                b.service,
                b.status,
                b.error.as_deref().unwrap_or("see the build log")
            )
        })
        .collect();
    if reasons.is_empty() {
        return None;
    }
    Some(FailedBuilds {
        message: format!("build failed: {}", reasons.join("; ")),
        app_id: uploaded.app_id.clone(),
        build_ids: uploaded.build_ids.clone(),
        attempts: uploaded.attempts,
        build_logs: logs_of(builds),
    })
}

/// Writes each new image's `imageUri` into devfile.yaml (only when one changed); returns
/// the images by service.
fn write_image_uris(
    project: &Project,
    builds: &[Build],
) -> Result<BTreeMap<String, String>, ToolError> {
    let mut image_uris = BTreeMap::new();
    let mut edited = project.text.clone();
    for b in builds {
        let uri = b.image_uri.clone().unwrap_or_default();
        edited = set_image_uri(&edited, &b.service, &uri)
            .map_err(|e| ToolError::Internal(format!("writing imageUri: {e}")))?;
        image_uris.insert(b.service.clone(), uri);
    }
    if edited != project.text {
        atomic_write(&project.path, edited.as_bytes())
            .map_err(|e| ToolError::io("write", &project.path, &e))?;
    }
    Ok(image_uris)
}

/// What the next step is once the builds succeeded.
const NEXT_STEP: &str =
    "the app is deploying: call get_app_status with app_id (every 10-15 s) until RUNNING or FAILED";

/// `build_app`'s result: the app, its URLs and the images built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BuildAppResult {
    /// The app built (created from the devfile when the project had no `.app`).
    pub app_id: String,
    /// The app's URL, which answers once it is RUNNING.
    pub app_url: Option<String>,
    /// Each public service's URL, which answers once the app is RUNNING.
    pub service_urls: BTreeMap<String, String>,
    /// The images built.
    #[serde(flatten)]
    pub images: BuiltImages,
    /// Requests sent for the upload(s).
    pub attempts: u32,
    /// Where the images were built.
    pub build_mode: BuildMode,
    /// The `.app` file written for an app this build created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_file: Option<String>,
    /// Files in the uploaded context (remote builds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_files: Option<usize>,
    /// What to do next.
    pub next_step: String,
    /// Each service's build log, with `verbose` (null where the platform sent none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_logs: Option<BTreeMap<String, Option<String>>>,
}

/// The images built: the spec's single-service and multi-service keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum BuiltImages {
    /// A project of one service.
    One {
        /// Its build (for cancel_build and get_build_scan_report).
        build_id: String,
        /// Its image.
        image_uri: String,
    },
    /// A project of several services (all or one of them rebuilt).
    Several {
        /// The builds, one per service built.
        build_ids: Vec<String>,
        /// Each service built and its image.
        image_uris: BTreeMap<String, String>,
        /// The order the services deploy in (dependencies first).
        deploy_order: Vec<String>,
        /// Always false: the result comes before the deployment ends.
        rollout_waited: bool,
    },
}

impl BuildAppResult {
    fn new(
        request: &BuildRequest,
        project: &Project,
        uploaded: Uploaded,
        builds: &[Build],
        image_uris: BTreeMap<String, String>,
        app_file: Option<PathBuf>,
    ) -> Self {
        let images = match builds {
            [only] if project.model.services().len() == 1 => BuiltImages::One {
                build_id: only.build_id.clone(),
                image_uri: only.image_uri.clone().unwrap_or_default(),
            },
            _ => BuiltImages::Several {
                build_ids: uploaded.build_ids,
                image_uris,
                deploy_order: project.model.deploy_order().unwrap_or_default(),
                rollout_waited: false,
            },
        };
        Self {
            app_id: uploaded.app_id,
            app_url: uploaded.app_url,
            service_urls: uploaded.service_urls,
            images,
            attempts: uploaded.attempts,
            build_mode: request.mode,
            app_file: app_file.map(|p| p.display().to_string()),
            context_files: uploaded.context_files,
            next_step: NEXT_STEP.to_owned(),
            build_logs: request.verbose.then(|| logs_of(builds)),
        }
    }
}

/// Uploads the project at `root` to build `services` of app `app_id` (all of them in one
/// upload; `sync` asks for sync builds, see the platform's `?sync=true`) and waits for the
/// builds. Returns each build as `GET /v1/builds/{id}?log=true` answers it. The devfile is
/// not touched (the development loop does not write `imageUri`).
pub fn upload_services(
    client: &Client,
    root: &Path,
    app_id: &str,
    services: &[String],
    sync: bool,
    progress: &dyn Fn(&str),
) -> Result<Vec<Build>, ToolError> {
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
    let uploaded: Uploaded = read_answer(answer.body)?;
    progress(&format!("building {}", services.join(", ")));
    wait(client, &uploaded.build_ids, true)
}

/// A 404 for the app named in `.app` means the file is stale (the app was deleted).
fn stale(e: ToolError, root: &Path, app: Option<&AppFile>) -> ToolError {
    match (e, app) {
        (ToolError::NotFound(_), Some(app)) => ToolError::NotFound(format!(
            "404: app {} named in {} does not exist on the platform (was it deleted?). Delete the .app file to create the app on the next build, or run register_app again",
            app.app_id,
            root.join(APP_FILE).display()
        )),
        (other, _) => other,
    }
}

/// The app for a local build without `.app`: registered from the devfile's metadata.
fn ensure_app(client: &Client, model: &Devfile) -> Result<String, ToolError> {
    let body = json!({"name": devfile_app_name(model)?.as_str(), "display_name": model.metadata.display_name, "description": model.metadata.description});
    let app: App = client.typed(Method::POST, "/v1/apps", Some(&body))?;
    Ok(app.app_id)
}

/// The app name the devfile's `metadata.name` gives (any string in the devfile schema; the
/// app is named by the app name derived from it, as the validator says).
fn devfile_app_name(model: &Devfile) -> Result<slipway_devfile::AppName, ToolError> {
    model
        .metadata
        .app_name()
        .map_err(|e| ToolError::invalid("metadata.name", e))
}

/// Polls every build until it finishes; returns the final records (with logs when verbose).
fn wait(client: &Client, build_ids: &[String], verbose: bool) -> Result<Vec<Build>, ToolError> {
    let deadline = Instant::now() + BUILD_TIMEOUT;
    let mut done: BTreeMap<String, Build> = BTreeMap::new();
    while done.len() < build_ids.len() {
        let pending: Vec<&String> = build_ids
            .iter()
            .filter(|id| !done.contains_key(*id))
            .collect();
        for id in pending {
            let b: Build = client.typed(
                Method::GET,
                &format!("/v1/builds/{id}{}", if verbose { "?log=true" } else { "" }),
                None,
            )?;
            if b.status.is_finished() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architecture_and_build_mode_default_and_refuse_other_values_by_field() {
        let arch = |raw| one_of("architecture", raw, Architecture::VALUES);
        assert_eq!(arch(None).unwrap(), Architecture::Amd64);
        assert_eq!(arch(Some("arm64")).unwrap().as_str(), "arm64");
        let refused = arch(Some("x86")).unwrap_err();
        assert_eq!(refused.field(), Some("architecture"));
        assert_eq!(
            refused.to_string(),
            "architecture: \"x86\" must be amd64 or arm64"
        );
        let mode = |raw| one_of("build_mode", raw, BuildMode::VALUES);
        assert_eq!(mode(None).unwrap(), BuildMode::Remote);
        assert_eq!(mode(Some("local")).unwrap(), BuildMode::Local);
        assert_eq!(
            mode(Some("cloud")).unwrap_err().to_string(),
            "build_mode: \"cloud\" must be remote or local"
        );
    }
}
