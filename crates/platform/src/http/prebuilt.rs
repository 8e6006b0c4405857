//! `POST /v1/apps/{app_id}/builds/prebuilt?service_name=…`: the spec's local build mode. The
//! body is an image built elsewhere, as an `oci-archive` or a `docker save` tar. It is
//! streamed to disk, unpacked (layout files only; a docker-archive is converted to an OCI
//! layout), imported into the content-addressed store with every blob
//! checked against its digest, and signed; only then is a build row written — `builder:
//! prebuilt`, already `succeeded` — and the app deploys as after any build. A refused archive
//! creates nothing.

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;
use slipway_devfile::Devfile;
use tempfile::NamedTempFile;

use super::apps::authorized_app;
use super::builds::{Build, editable_app, internal, query_map, receive_to_temp};
use super::error::ApiError;
use super::{Access, AppState};
use crate::deploy::AppUrls;
use crate::jobs::Runner;
use crate::policy::AppAction;
use crate::store::apps::AppRecord;
use crate::store::builds::{self, BuildRecord, NewBuild, Outcome};
use slipway_image::import::ArchiveFormat;
use slipway_image::{Digest, ImageError, import};
use slipway_runtime::build::{BuildError, buildah, image_uri};

/// The builder name prebuilt uploads are recorded under.
pub const PREBUILT: &str = "prebuilt";

/// The `Content-Type`s an archive may be sent with.
const ARCHIVE_TYPES: &[&str] = &[
    "application/x-tar",
    "application/tar",
    "application/vnd.oci.image.layout.v1+tar",
];

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new().route("/apps/{app_id}/builds/prebuilt", post(upload))
}

/// A refused archive as a client error, a fault of ours as an internal one.
fn import_error(e: BuildError) -> ApiError {
    let refused = |m: String| ApiError::invalid("image", m);
    match e {
        BuildError::Image(ImageError::Io(io)) | BuildError::Io(io)
            if io.kind() == std::io::ErrorKind::NotFound =>
        {
            refused("a blob the image names is missing from the archive".into())
        }
        BuildError::Image(ImageError::Io(io)) | BuildError::Io(io) => {
            internal("importing a prebuilt image", io)
        }
        other => refused(other.to_string()),
    }
}

/// The 201 body of `POST /v1/apps/{app_id}/builds/prebuilt`: the succeeded build and the
/// app's URLs.
#[derive(Debug, Serialize)]
pub struct PrebuiltCreated {
    /// The succeeded build.
    #[serde(flatten)]
    pub build: Build,
    /// The app's URL and its public services' URLs.
    #[serde(flatten)]
    pub urls: AppUrls,
}

/// `POST /v1/apps/{app_id}/builds/prebuilt?service_name=api`, body an image tar →
/// 201 with the succeeded build and the app's URLs.
async fn upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    body: Body,
) -> Result<Response, ApiError> {
    let (id, app) = editable_app(&state, &headers, &app_id).await?;
    let service = service_name(query)?;
    let (devfile_text, devfile) = devfile_with(&app, &service)?;
    check_archive_type(&headers)?;
    let runner = state.runner();
    let temp = receive_to_temp(runner, ".prebuilt-", body).await?;
    let image = import_archive(runner, temp, &app.name, &service).await?;
    let uri = image_uri(&app.name, &service, &image.digest);
    let record = record_build(&state, &headers, &id, &service, &devfile_text, &image, &uri).await?;
    let log = runner.log(&record.id);
    log.note(&format!(
        "prebuilt image uploaded for service {service} ({})",
        image.format.name()
    ));
    log.note(&format!("imported and signed {}", image.digest));
    log.note(&format!("succeeded: {uri}"));
    tracing::info!(app_id = %id, build_id = %record.id, "prebuilt image imported");
    runner.announce_built(id.clone());
    runner.scan(&record.id, image.digest.as_str()).await;
    let urls = state
        .deployer()
        .public_urls(&id, &app.name, &devfile.services())
        .await;
    let created = PrebuiltCreated {
        build: Build::from(record),
        urls,
    };
    Ok((StatusCode::CREATED, Json(created)).into_response())
}

/// `service_name`, required: the service the image runs (trimmed, not blank).
fn service_name(
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<String, ApiError> {
    let query = query_map(query, &["service_name"])?;
    query
        .get("service_name")
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            ApiError::invalid("service_name", "is required: the service this image runs")
        })
}

/// The app's devfile (text and parsed), which must have `service`: it says how the image
/// runs (port, health path, dependencies), so the app needs one from an earlier context
/// upload.
fn devfile_with(app: &AppRecord, service: &str) -> Result<(String, Devfile), ApiError> {
    let text = app.devfile.clone().ok_or_else(|| {
        ApiError::FailedPrecondition(
            "the app has no devfile yet; upload its build context once \
             (POST /v1/apps/{app_id}/builds) so the platform knows its services"
                .into(),
        )
    })?;
    let devfile =
        Devfile::parse(&text).map_err(|e| ApiError::InvalidDevfile(vec![e.to_string()]))?;
    let names: Vec<String> = devfile.services().into_iter().map(|s| s.name).collect();
    if !names.iter().any(|n| n == service) {
        return Err(ApiError::invalid(
            "service_name",
            format!(
                "the app's devfile has no service {service:?}; its services are {}",
                names.join(", ")
            ),
        ));
    }
    Ok((text, devfile))
}

/// 415 unless the body is sent as one of [`ARCHIVE_TYPES`].
fn check_archive_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if ARCHIVE_TYPES.contains(&content_type) {
        return Ok(());
    }
    Err(ApiError::UnsupportedMediaType(format!(
        "the body must be an oci-archive or docker-archive tar \
         ('Content-Type: application/x-tar'; also {})",
        ARCHIVE_TYPES[1..].join(", ")
    )))
}

/// An image imported into the store from an uploaded archive.
struct Imported {
    digest: Digest,
    format: ArchiveFormat,
}

/// Unpacks the archive in `temp` (into a scratch layout beside the contexts) and imports it
/// as `<app>/<service>`, every blob checked and the manifest signed.
async fn import_archive(
    runner: &Runner,
    temp: NamedTempFile,
    app_name: &str,
    service: &str,
) -> Result<Imported, ApiError> {
    let output = runner.output().clone();
    let scratch = runner.contexts_dir();
    let ref_name = format!("{app_name}/{service}");
    tokio::task::spawn_blocking(move || -> Result<_, BuildError> {
        let layout = tempfile::Builder::new()
            .prefix(".layout-")
            .tempdir_in(scratch)?;
        let format = import::unpack_image_archive(temp.path(), layout.path())?;
        let digest = buildah::import(&output, layout.path(), &ref_name)?;
        Ok(Imported { digest, format })
    })
    .await
    .map_err(|e| internal("importing a prebuilt image", e))?
    .map_err(import_error)
}

/// Records the import as a build of `service`, already succeeded, in a transaction that
/// checks the caller's access again (the upload took time).
async fn record_build(
    state: &AppState,
    headers: &HeaderMap,
    app_id: &str,
    service: &str,
    devfile_text: &str,
    image: &Imported,
    uri: &str,
) -> Result<BuildRecord, ApiError> {
    let (mut tx, caller) = state.begin_as(headers, Access::Write).await?;
    authorized_app(&mut tx, &caller, app_id, AppAction::Build).await?;
    let build_id = builds::insert(
        &mut tx,
        &NewBuild {
            app_id,
            service,
            builder: PREBUILT,
            devfile: devfile_text,
            context_id: &uuid::Uuid::new_v4().to_string(),
            context_encoding: image.format.name(),
            created_by: &caller.user_id,
        },
    )
    .await?;
    builds::start(&mut tx, &build_id).await?;
    builds::finish(
        &mut tx,
        &build_id,
        &Outcome::Succeeded {
            image_uri: uri.to_owned(),
            manifest_digest: image.digest.to_string(),
            builder: PREBUILT.to_owned(),
        },
    )
    .await?;
    let record = builds::get(&mut tx, &build_id)
        .await?
        .ok_or_else(|| internal("reading the new build", "missing"))?;
    tx.commit().await?;
    Ok(record)
}
