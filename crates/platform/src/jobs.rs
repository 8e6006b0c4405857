//! The job runner: build jobs run on tokio tasks, at most [`MAX_CONCURRENT_BUILDS`] at a
//! time, each cancellable. On start, jobs a stop or crash left queued or in progress are
//! marked failed ("server restarted during the build"); on shutdown, running build processes
//! are killed and their rows left for that rule.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use slipway_devfile::Devfile;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::BuilderKind;
use crate::db::Db;
use crate::error::PlatformError;
use crate::model::BuildStatus;
use crate::store::builds::{self, BuildRecord, Outcome};
use slipway_image::{ImageStore, PlatformKey};
use slipway_runtime::build::context::Encoding;
use slipway_runtime::build::trust::{BuildCaBundle, CaBundle};
use slipway_runtime::build::{BuildError, BuildLog, BuiltImage, Job, Output, buildah, native};

/// Builds that run at once; more wait in `queued`.
pub const MAX_CONCURRENT_BUILDS: usize = 2;

/// The `error` of jobs found unfinished at start-up.
pub const RESTART_REASON: &str = "server restarted during the build";

pub use crate::data_dir::CONTEXTS_DIR;
use slipway_runtime::build::context::ContextError;

/// A build context whose devfile passed [`Runner::check_context`].
#[derive(Debug)]
pub struct CheckedContext {
    /// The devfile's text, as it is in the context.
    pub devfile_text: String,
    /// The devfile, parsed.
    pub devfile: Devfile,
}

/// Why a context cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum ContextCheck {
    /// The archive: unreadable, unsafe, too large, or without a devfile.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// The devfile breaks rules (each error listed).
    #[error("the devfile is not valid: {}", errors.join("; "))]
    Invalid {
        /// Every rule broken.
        errors: Vec<String>,
        /// The devfile's text.
        devfile: String,
    },
}

/// Runs build jobs. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Runner {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    db: Db,
    data_dir: PathBuf,
    builder: BuilderKind,
    /// `--builder auto`: a buildah build whose base images are not here and cannot be pulled
    /// is built by the native builder instead (said in the build log).
    auto: bool,
    output: Output,
    slots: Semaphore,
    jobs: Mutex<HashMap<String, CancellationToken>>,
    work_locks: Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    /// Told the app id of every build that succeeds, so the deployer can deploy it.
    built: tokio::sync::mpsc::UnboundedSender<String>,
    /// The OSV advisory directory scans check against (`--advisory-db`).
    advisory_db: Option<PathBuf>,
    /// The CA bundle buildah builds mount, resolved from `--build-ca-bundle` at start-up.
    ca_bundle: Option<CaBundle>,
    /// Whether deployments run on the container runtime: `auto` then builds Dockerfiles with
    /// buildah; on the process runtime it prefers the native builder, whose images that
    /// runtime runs whole (a Dockerfile image's system paths would resolve on the host).
    containers: bool,
}

/// The CA bundle buildah builds trust: resolved once and said once in the log, so a wrong
/// `--build-ca-bundle FILE` stops the start rather than failing every build. The default
/// never stops it: an `SSL_CERT_FILE` that cannot serve is a warning, and the usual places
/// are looked at instead. With `--builder native` no build mounts a bundle, so nothing is
/// resolved (a named file is still checked: the flag was given for a reason).
pub fn resolve_ca_bundle(
    choice: &BuildCaBundle,
    builder: BuilderKind,
) -> Result<Option<CaBundle>, PlatformError> {
    if builder == BuilderKind::Native && !matches!(choice, BuildCaBundle::File(_)) {
        return Ok(None);
    }
    let resolved = choice
        .resolve()
        .map_err(|e| PlatformError::Config(e.to_string()))?;
    if let Some(why) = &resolved.passed_over {
        tracing::warn!(
            "{why}; Dockerfile builds get the first CA bundle found in the usual places instead (unset or fix SSL_CERT_FILE, or pass --build-ca-bundle FILE|none)"
        );
    }
    match (&resolved.bundle, choice) {
        (Some(b), _) => tracing::info!(
            path = %b.path.display(),
            chosen = b.chosen,
            "Dockerfile builds trust this CA bundle (--build-ca-bundle none turns it off)"
        ),
        (None, BuildCaBundle::None) => {
            tracing::info!(
                "Dockerfile builds trust only their images' own CA bundles (--build-ca-bundle none)"
            );
        }
        (None, _) => tracing::info!(
            "no system CA bundle found on this host; Dockerfile builds trust only their images' own (--build-ca-bundle FILE gives them one)"
        ),
    }
    Ok(resolved.bundle)
}

/// The builder `kind` stands for on this machine: `auto` is buildah when it runs, else
/// native; `buildah` when it does not run is a configuration error.
pub fn resolve_builder(kind: BuilderKind) -> Result<BuilderKind, PlatformError> {
    match kind {
        BuilderKind::Native => Ok(BuilderKind::Native),
        BuilderKind::Buildah if buildah::available() => Ok(BuilderKind::Buildah),
        BuilderKind::Buildah => Err(PlatformError::Config(
            "--builder buildah: `buildah --version` does not run on this machine".into(),
        )),
        BuilderKind::Auto if buildah::available() => Ok(BuilderKind::Buildah),
        BuilderKind::Auto => Ok(BuilderKind::Native),
    }
}

impl Runner {
    /// Prepares the runner: resolves the builder, opens the image store, loads (or makes) the
    /// signing key, marks jobs a previous run left unfinished as failed, and clears the
    /// scratch and upload directories they used.
    /// Every succeeded build's app id is sent on `built`.
    pub async fn start(
        db: Db,
        data_dir: &Path,
        kind: BuilderKind,
        built: tokio::sync::mpsc::UnboundedSender<String>,
        advisory_db: Option<PathBuf>,
        ca_bundle: Option<CaBundle>,
        containers: bool,
    ) -> Result<Self, PlatformError> {
        let builder = resolve_builder(kind)?;
        let store = ImageStore::open(data_dir).map_err(|e| PlatformError::Config(e.to_string()))?;
        let key = PlatformKey::load_or_create(data_dir)
            .map_err(|e| PlatformError::Config(e.to_string()))?;
        let mut tx = db.begin_write().await?;
        let interrupted = builds::fail_unfinished(&mut tx, RESTART_REASON).await?;
        tx.commit().await?;
        for id in &interrupted {
            BuildLog::new(data_dir, id).note(&format!("failed: {RESTART_REASON}"));
        }
        if !interrupted.is_empty() {
            tracing::warn!(
                count = interrupted.len(),
                "marked interrupted builds failed"
            );
        }
        for dir in ["work", CONTEXTS_DIR] {
            let path = data_dir.join(dir);
            if path.exists() {
                std::fs::remove_dir_all(&path)?;
            }
            std::fs::create_dir_all(&path)?;
        }
        tracing::info!(builder = %builder, key_id = %key.key_id(), "build runner ready");
        Ok(Self {
            inner: Arc::new(Inner {
                db,
                data_dir: data_dir.to_path_buf(),
                builder,
                auto: kind == BuilderKind::Auto,
                containers,
                output: Output { store, key },
                slots: Semaphore::new(MAX_CONCURRENT_BUILDS),
                jobs: Mutex::new(HashMap::new()),
                work_locks: Mutex::new(HashMap::new()),
                shutdown: CancellationToken::new(),
                tracker: TaskTracker::new(),
                built,
                advisory_db,
                ca_bundle,
            }),
        })
    }

    /// The builder in use (`native` or `buildah`).
    pub fn builder(&self) -> BuilderKind {
        self.inner.builder
    }

    /// The platform signing key.
    pub fn key(&self) -> &PlatformKey {
        &self.inner.output.key
    }

    /// The image store and signing key (prebuilt uploads import into them).
    pub fn output(&self) -> &Output {
        &self.inner.output
    }

    /// Tells the deployer that a build of `app_id` succeeded outside a job (a prebuilt
    /// upload), so the app deploys as after any build.
    pub fn announce_built(&self, app_id: String) {
        let _ = self.inner.built.send(app_id);
    }

    /// Scans the image of succeeded build `build_id` and stores the report (see
    /// [`crate::scan`]); returns it.
    pub async fn scan(&self, build_id: &str, digest: &str) -> slipway_image::scan::ScanResult {
        scan_now(&self.inner, build_id, digest).await
    }

    /// The data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.inner.data_dir.clone()
    }

    /// Where uploaded contexts are kept until their jobs finish.
    pub fn contexts_dir(&self) -> PathBuf {
        self.inner.data_dir.join(CONTEXTS_DIR)
    }

    /// The stored upload `context_id`.
    pub fn context_path(&self, context_id: &str, encoding: Encoding) -> PathBuf {
        self.contexts_dir()
            .join(format!("{context_id}.{}", encoding.extension()))
    }

    /// The log of `build_id`.
    pub fn log(&self, build_id: &str) -> BuildLog {
        BuildLog::new(&self.inner.data_dir, build_id)
    }

    /// Checks a stored context the way every build's is checked (an upload's, a git commit's):
    /// a readable archive whose devfile is valid against the files it holds.
    pub async fn check_context(
        &self,
        path: &Path,
        encoding: Encoding,
    ) -> Result<CheckedContext, ContextCheck> {
        let path = path.to_path_buf();
        let inspected = tokio::task::spawn_blocking(move || {
            slipway_runtime::build::context::inspect(&path, encoding)
        })
        .await
        .map_err(|e| ContextError::Io(std::io::Error::other(e)))??;
        let report = slipway_devfile::validate(&inspected.devfile, Some(&inspected));
        if !report.valid() {
            return Err(ContextCheck::Invalid {
                errors: report.errors(),
                devfile: inspected.devfile,
            });
        }
        match Devfile::parse(&inspected.devfile) {
            Ok(devfile) => Ok(CheckedContext {
                devfile_text: inspected.devfile,
                devfile,
            }),
            Err(e) => Err(ContextCheck::Invalid {
                errors: vec![e.to_string()],
                devfile: inspected.devfile,
            }),
        }
    }

    /// Why `service` cannot be built by the builder in use, if it cannot.
    pub fn unbuildable(&self, service: &slipway_devfile::ServiceSpec) -> Option<String> {
        match self.inner.builder {
            BuilderKind::Buildah => buildah::unbuildable(service),
            _ => native::unbuildable(service),
        }
    }

    /// Starts the task of a job committed as `queued`.
    pub fn enqueue(&self, build_id: String) {
        let token = self.inner.shutdown.child_token();
        if let Ok(mut jobs) = self.inner.jobs.lock() {
            jobs.insert(build_id.clone(), token.clone());
        }
        self.log(&build_id).note("queued");
        let inner = Arc::clone(&self.inner);
        self.inner.tracker.spawn(async move {
            let context = run_job(&inner, &build_id, token).await;
            if let Ok(mut jobs) = inner.jobs.lock() {
                jobs.remove(&build_id);
            }
            if let Some((context_id, encoding)) = context {
                release_context(&inner, &context_id, encoding).await;
            }
        });
    }

    /// Stops job `build_id` if it is queued or running here (its row is already
    /// `cancelled`): a running build's process group is killed.
    pub fn cancel(&self, build_id: &str) {
        if let Ok(jobs) = self.inner.jobs.lock()
            && let Some(token) = jobs.get(build_id)
        {
            token.cancel();
        }
    }

    /// Kills every running build and waits for the job tasks to end. Rows are left as they
    /// are; the next start marks them failed.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        self.inner.tracker.close();
        self.inner.tracker.wait().await;
    }
}

/// Runs one job to its end. Returns the job's context (to delete when no other job needs
/// it), or `None` when the server is shutting down (the next start clears contexts).
async fn run_job(
    inner: &Inner,
    build_id: &str,
    token: CancellationToken,
) -> Option<(String, Encoding)> {
    let log = BuildLog::new(&inner.data_dir, build_id);
    let _permit = tokio::select! {
        permit = inner.slots.acquire() => permit.ok()?,
        () = token.cancelled() => {
            return load(inner, build_id).await.ok().flatten().and_then(|(r, _)| context_of(&r));
        }
    };
    let (record, app_name) = match load(inner, build_id).await {
        Ok(Some(found)) => found,
        Ok(None) => return None,
        Err(e) => {
            tracing::error!(build_id, error = %e, "cannot load a build job");
            return None;
        }
    };
    let context = context_of(&record);
    if record.status != BuildStatus::Queued || !start(inner, build_id).await {
        return context;
    }
    let encoding = Encoding::parse(&record.context_encoding).unwrap_or(Encoding::Zstd);
    note_started(inner, &log, &record, &app_name);
    let outcome = match build(inner, &record, app_name, encoding, &log, &token).await {
        Ok((image, builder)) => {
            log.note(&format!("succeeded: {}", image.image_uri));
            Outcome::Succeeded {
                image_uri: image.image_uri,
                manifest_digest: image.digest.to_string(),
                builder: builder.to_owned(),
            }
        }
        Err(BuildError::Cancelled) => return finish_cancelled(inner, &log, context),
        Err(e) => {
            let reason = e.to_string();
            log.note(&format!("failed: {reason}"));
            Outcome::Failed(reason)
        }
    };
    record_outcome(inner, &record, &log, &outcome).await;
    context
}

/// Says in the build log and the server log that the job started, and with which builder.
fn note_started(inner: &Inner, log: &BuildLog, record: &BuildRecord, app_name: &str) {
    let builder_name = if record.builder == builds::SYNC_BUILDER {
        builds::SYNC_BUILDER
    } else {
        inner.builder.as_str()
    };
    log.note(&format!(
        "started: service {} of app {app_name} with the {builder_name} builder",
        record.service
    ));
    let build_id = record.id.as_str();
    tracing::info!(build_id, service = %record.service, "build started");
}

/// Builds the job's image in its work directory (one job at a time per directory, removed
/// afterwards); returns the image and the name of the builder that made it.
/// [`BuildError::Cancelled`] when the job is cancelled, also while it waits for the directory.
async fn build(
    inner: &Inner,
    record: &BuildRecord,
    app_name: String,
    encoding: Encoding,
    log: &BuildLog,
    token: &CancellationToken,
) -> Result<(BuiltImage, &'static str), BuildError> {
    let job = job_of(
        inner,
        record,
        app_name,
        encoding,
        log.clone(),
        token.clone(),
    )?;
    let lock = work_lock(inner, &job.work);
    let _guard = tokio::select! {
        guard = lock.lock() => guard,
        () = token.cancelled() => return Err(BuildError::Cancelled),
    };
    let result = if record.builder == builds::SYNC_BUILDER {
        sync_build(inner, record, &job)
            .await
            .map(|image| (image, builds::SYNC_BUILDER))
    } else {
        build_with_builder(inner, &job, log).await
    };
    let _ = tokio::fs::remove_dir_all(&job.work).await;
    result
}

/// A full build with the builder in use. Under `--builder auto`, the native builder builds
/// what it can when deployments run as processes, and what buildah cannot for want of base
/// images (each said in the build log).
async fn build_with_builder(
    inner: &Inner,
    job: &Job,
    log: &BuildLog,
) -> Result<(BuiltImage, &'static str), BuildError> {
    match inner.builder {
        BuilderKind::Buildah
            if inner.auto && !inner.containers && native::unbuildable(&job.service).is_none() =>
        {
            log.note(
                "--builder auto: deployments run as processes here, which run what the native builder makes: building with the devfile's build command (with --runtime container, auto builds the Dockerfile with buildah)",
            );
            native_build(inner, job).await
        }
        BuilderKind::Buildah => match buildah::build(job, &inner.output).await {
            Err(missing @ BuildError::BaseImagesMissing(_))
                if inner.auto && native::unbuildable(&job.service).is_none() =>
            {
                log.note(&format!(
                    "--builder auto: buildah cannot build this service ({missing}); \
                     building it with the native builder instead"
                ));
                native_build(inner, job).await
            }
            other => other.map(|image| (image, BuilderKind::Buildah.as_str())),
        },
        _ => native_build(inner, job).await,
    }
}

/// A build with the native builder.
async fn native_build(inner: &Inner, job: &Job) -> Result<(BuiltImage, &'static str), BuildError> {
    native::build(job, &inner.output)
        .await
        .map(|image| (image, BuilderKind::Native.as_str()))
}

/// Records the job's end. A success is announced to the deployer and its image scanned
/// (the scan's summary goes to the build log); a job cancelled meanwhile keeps its row.
async fn record_outcome(inner: &Inner, record: &BuildRecord, log: &BuildLog, outcome: &Outcome) {
    let build_id = record.id.as_str();
    let recorded = async {
        let mut tx = inner.db.begin_write().await?;
        let done = builds::finish(&mut tx, build_id, outcome).await?;
        tx.commit().await?;
        Ok::<bool, sqlx::Error>(done)
    }
    .await;
    match recorded {
        Ok(true) => {
            let ok = matches!(outcome, Outcome::Succeeded { .. });
            tracing::info!(build_id, ok, "build finished");
            if let Outcome::Succeeded {
                manifest_digest, ..
            } = outcome
            {
                let _ = inner.built.send(record.app_id.clone());
                let scanned = scan_now(inner, build_id, manifest_digest).await;
                log.note(&match (&scanned.report, &scanned.error) {
                    (Some(r), _) => format!(
                        "scanned: {} packages, {} vulnerabilities",
                        r.sbom.packages.len(),
                        r.vulnerabilities.len()
                    ),
                    (None, Some(e)) => format!("scan: {e}"),
                    (None, None) => "scanned".to_owned(),
                });
            }
        }
        Ok(false) => tracing::info!(build_id, "build ended after it was cancelled"),
        Err(e) => tracing::error!(build_id, error = %e, "cannot record a build's end"),
    }
}

/// Scans on a blocking thread and stores the report.
async fn scan_now(inner: &Inner, build_id: &str, digest: &str) -> slipway_image::scan::ScanResult {
    let data_dir = inner.data_dir.clone();
    let store = inner.output.store.clone();
    let db = inner.advisory_db.clone();
    let (id, digest) = (build_id.to_owned(), digest.to_owned());
    let fallback = id.clone();
    tokio::task::spawn_blocking(move || {
        slipway_image::scan::scan_and_store(
            &data_dir,
            &store,
            &id,
            &digest,
            db.as_deref(),
            &crate::db::rfc3339(crate::db::now_millis()),
        )
    })
    .await
    .unwrap_or_else(|e| slipway_image::scan::ScanResult {
        build_id: fallback,
        sbom: None,
        report: None,
        error: Some(format!("the scan did not finish: {e}")),
    })
}

fn finish_cancelled(
    inner: &Inner,
    log: &BuildLog,
    context: Option<(String, Encoding)>,
) -> Option<(String, Encoding)> {
    if inner.shutdown.is_cancelled() {
        log.note("stopped: the server is shutting down");
        None
    } else {
        log.note("cancelled: the build process group was killed");
        context
    }
}

fn context_of(record: &BuildRecord) -> Option<(String, Encoding)> {
    Some((
        record.context_id.clone(),
        Encoding::parse(&record.context_encoding)?,
    ))
}

/// The job's row and its app's name; `None` when either is gone (the app was deleted).
async fn load(inner: &Inner, build_id: &str) -> Result<Option<(BuildRecord, String)>, sqlx::Error> {
    let mut tx = inner.db.begin_read().await?;
    let Some(record) = builds::get(&mut tx, build_id).await? else {
        return Ok(None);
    };
    let name = crate::store::apps::get(&mut tx, &record.app_id)
        .await?
        .map(|app| app.name);
    tx.commit().await?;
    Ok(name.map(|n| (record, n)))
}

async fn start(inner: &Inner, build_id: &str) -> bool {
    let started = async {
        let mut tx = inner.db.begin_write().await?;
        let ok = builds::start(&mut tx, build_id).await?;
        tx.commit().await?;
        Ok::<bool, sqlx::Error>(ok)
    }
    .await;
    started.unwrap_or_else(|e| {
        tracing::error!(build_id, error = %e, "cannot start a build job");
        false
    })
}

/// A sync build of `job` over the last full build of its service (see [`native::sync`]).
async fn sync_build(
    inner: &Inner,
    record: &BuildRecord,
    job: &Job,
) -> Result<slipway_runtime::build::BuiltImage, BuildError> {
    let base = async {
        let mut tx = inner.db.begin_read().await?;
        let base = builds::latest_full_build(&mut tx, &record.app_id, &record.service).await?;
        tx.commit().await?;
        Ok::<_, sqlx::Error>(base)
    }
    .await
    .map_err(|e| BuildError::Spec(format!("cannot find the image to sync onto: {e}")))?;
    let digest = base.and_then(|b| b.manifest_digest).ok_or_else(|| {
        BuildError::Spec("the service has no succeeded build to sync onto".into())
    })?;
    let digest = slipway_image::Digest::parse(&digest)
        .map_err(|e| BuildError::Spec(format!("the image to sync onto: {e}")))?;
    native::sync(job, &inner.output, &digest).await
}

fn job_of(
    inner: &Inner,
    record: &BuildRecord,
    app_name: String,
    encoding: Encoding,
    log: BuildLog,
    cancel: CancellationToken,
) -> Result<Job, BuildError> {
    let devfile = Devfile::parse(&record.devfile)
        .map_err(|e| BuildError::Spec(format!("the devfile no longer parses: {e}")))?;
    let service = devfile
        .services()
        .into_iter()
        .find(|s| s.name == record.service)
        .ok_or_else(|| {
            BuildError::Spec(format!("the devfile has no service {:?}", record.service))
        })?;
    Ok(Job {
        build_id: record.id.clone(),
        work: inner
            .data_dir
            .join(crate::data_dir::WORK_DIR)
            .join(&record.app_id)
            .join(&record.service),
        context: inner.data_dir.join(CONTEXTS_DIR).join(format!(
            "{}.{}",
            record.context_id,
            encoding.extension()
        )),
        app_name,
        service,
        encoding,
        cache: inner.data_dir.join(crate::data_dir::CACHE_DIR),
        log,
        cancel,
        ca_bundle: inner.ca_bundle.clone(),
    })
}

fn work_lock(inner: &Inner, work: &Path) -> Arc<tokio::sync::Mutex<()>> {
    match inner.work_locks.lock() {
        Ok(mut locks) => Arc::clone(locks.entry(work.to_path_buf()).or_default()),
        Err(_) => Arc::new(tokio::sync::Mutex::new(())),
    }
}

/// Deletes an uploaded context once no queued or running job needs it.
async fn release_context(inner: &Inner, context_id: &str, encoding: Encoding) {
    let in_use = async {
        let mut tx = inner.db.begin_read().await?;
        let used = builds::context_in_use(&mut tx, context_id).await?;
        tx.commit().await?;
        Ok::<bool, sqlx::Error>(used)
    }
    .await;
    if let Ok(false) = in_use {
        let path = inner
            .data_dir
            .join(CONTEXTS_DIR)
            .join(format!("{context_id}.{}", encoding.extension()));
        let _ = tokio::fs::remove_file(path).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_native_builder_resolves_no_bundle_but_a_named_one_is_still_checked() {
        assert_eq!(
            resolve_ca_bundle(&BuildCaBundle::System, BuilderKind::Native).unwrap(),
            None
        );
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("ca.pem");
        let err = resolve_ca_bundle(&BuildCaBundle::File(missing.clone()), BuilderKind::Native)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("--build-ca-bundle {}", missing.display())),
            "{err}"
        );
    }
}
