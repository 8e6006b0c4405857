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
use slipway_devfile::Devfile;

use super::apps::authorized_app;
use super::builds::{BuildView, editable_app, internal, query_map, receive};
use super::error::ApiError;
use super::{Access, AppState};
use crate::policy::AppAction;
use crate::store::builds::{self, NewBuild, Outcome};
use slipway_image::{ImageError, import};
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

/// `POST /v1/apps/{app_id}/builds/prebuilt?service_name=api`, body an image tar →
/// 201 with the succeeded build.
async fn upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    body: Body,
) -> Result<Response, ApiError> {
    let (id, app) = editable_app(&state, &headers, &app_id).await?;
    let query = query_map(query, &["service_name"])?;
    let service = query
        .get("service_name")
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            ApiError::invalid("service_name", "is required: the service this image runs")
        })?;
    // The devfile says how the image runs (port, health path, dependencies): the app must
    // have one from an earlier context upload.
    let devfile_text = app.devfile.clone().ok_or_else(|| {
        ApiError::FailedPrecondition(
            "the app has no devfile yet; upload its build context once \
             (POST /v1/apps/{app_id}/builds) so the platform knows its services"
                .into(),
        )
    })?;
    let devfile =
        Devfile::parse(&devfile_text).map_err(|e| ApiError::InvalidDevfile(vec![e.to_string()]))?;
    let names: Vec<String> = devfile.services().into_iter().map(|s| s.name).collect();
    if !names.contains(&service) {
        return Err(ApiError::invalid(
            "service_name",
            format!(
                "the app's devfile has no service {service:?}; its services are {}",
                names.join(", ")
            ),
        ));
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !ARCHIVE_TYPES.contains(&content_type) {
        return Err(ApiError::UnsupportedMediaType(format!(
            "the body must be an oci-archive or docker-archive tar \
             ('Content-Type: application/x-tar'; also {})",
            ARCHIVE_TYPES[1..].join(", ")
        )));
    }

    let runner = state.runner().clone();
    let temp = tempfile::Builder::new()
        .prefix(".prebuilt-")
        .tempfile_in(runner.contexts_dir())
        .map_err(|e| internal("creating the upload file", e))?;
    let mut file = tokio::fs::File::from_std(
        temp.reopen()
            .map_err(|e| internal("opening the upload file", e))?,
    );
    receive(body, &mut file).await?;
    drop(file);

    let output = runner.output().clone();
    let scratch = runner.contexts_dir();
    let ref_name = format!("{}/{service}", app.name);
    let (digest, format) = tokio::task::spawn_blocking(move || -> Result<_, BuildError> {
        let layout = tempfile::Builder::new()
            .prefix(".layout-")
            .tempdir_in(scratch)?;
        let format = import::unpack_image_archive(temp.path(), layout.path())?;
        Ok((buildah::import(&output, layout.path(), &ref_name)?, format))
    })
    .await
    .map_err(|e| internal("importing a prebuilt image", e))?
    .map_err(import_error)?;
    let uri = image_uri(&app.name, &service, &digest);

    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    authorized_app(&mut tx, &caller, &id, AppAction::Build).await?;
    let build_id = builds::insert(
        &mut tx,
        &NewBuild {
            app_id: &id,
            service: &service,
            builder: PREBUILT,
            devfile: &devfile_text,
            context_id: &uuid::Uuid::new_v4().to_string(),
            context_encoding: format.name(),
            created_by: &caller.user_id,
        },
    )
    .await?;
    builds::start(&mut tx, &build_id).await?;
    builds::finish(
        &mut tx,
        &build_id,
        &Outcome::Succeeded {
            image_uri: uri.clone(),
            manifest_digest: digest.to_string(),
            builder: PREBUILT.to_owned(),
        },
    )
    .await?;
    let record = builds::get(&mut tx, &build_id)
        .await?
        .ok_or_else(|| internal("reading the new build", "missing"))?;
    tx.commit().await?;
    let log = runner.log(&build_id);
    log.note(&format!(
        "prebuilt image uploaded for service {service} ({})",
        format.name()
    ));
    log.note(&format!("imported and signed {digest}"));
    log.note(&format!("succeeded: {uri}"));
    tracing::info!(app_id = %id, build_id = %build_id, "prebuilt image imported");
    runner.announce_built(id.clone());
    runner.scan(&build_id, digest.as_str()).await;
    Ok((StatusCode::CREATED, Json(BuildView::from(record))).into_response())
}
