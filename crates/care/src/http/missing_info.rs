//! `GET|POST {base}/{ns}/missingInformationRequest/{uuid}`: read the requested fields of a
//! data request, or submit their values; `GET …/{uuid}/fhir` reads them as a FHIR R4 bundle
//! and a POST with `Content-Type: application/fhir+json` submits a `QuestionnaireResponse`.
//! Both forms share authentication, rules and status codes, and every call on an existing
//! request leaves a request-history record, whatever its status code.

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;

use super::error::{ApiError, ErrorItem};
use super::{AppState, bearer, begin_as_caller, body_bytes, json};
use crate::auth::{Access, Caller};
use crate::fhir;
use crate::missing_info as mi;
use crate::model::{COMPLETED, DataRequest, EventStatus, RequestContext, Resolved, TaskStatus};
use crate::store::users::{load_caller, load_caller_native};
use crate::store::{data_requests, events};

/// Routes of the missing-information service (nested under `{base}/{ns}`).
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/missingInformationRequest/{uuid}",
            get(get_request).post(post_request),
        )
        .route(
            "/missingInformationRequest/{uuid}/fhir",
            get(super::amend::get_fhir),
        )
        .route(
            "/missingInformationRequest/{uuid}/answer",
            get(super::amend::get_answer),
        )
        .route(
            "/missingInformationRequest/{uuid}/amend",
            axum::routing::post(super::amend::amend),
        )
        .route("/missingInformationRequest", get(no_uuid).post(no_uuid))
        .route("/missingInformationRequest/", get(no_uuid).post(no_uuid))
}

async fn no_uuid() -> ApiError {
    ApiError::bad_request(
        "INVALID_UUID",
        "the data request UUID is missing from the path",
        "uuid",
    )
}

/// What a call does, as its history record names it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Get,
    Post,
    /// A correction of the answer (`…/amend`).
    Amend,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Amend => "AMEND",
        }
    }
    fn access(self) -> Access {
        match self {
            Method::Get => Access::Read,
            Method::Post | Method::Amend => Access::Edit,
        }
    }
}

/// The wire form of a call: the spec's JSON, or FHIR R4.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    Plain,
    Fhir,
}

impl Form {
    /// FHIR when the body is declared `application/fhir+json` (parameters ignored).
    pub(super) fn of_body(headers: &HeaderMap) -> Form {
        let media = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(str::trim);
        match media {
            Some(m) if m.eq_ignore_ascii_case(fhir::MEDIA_TYPE) => Form::Fhir,
            _ => Form::Plain,
        }
    }
}

async fn get_request(
    State(state): State<AppState>,
    Path(uuid): Path<String>,
    headers: HeaderMap,
) -> Response {
    handle(state, Method::Get, Form::Plain, uuid, headers, None).await
}

/// `GET …/{uuid}/fhir` of a request not answered (an answered one is read by
/// `amend::get_fhir`, with its `QuestionnaireResponse`).
pub(super) async fn get_fhir(
    State(state): State<AppState>,
    Path(uuid): Path<String>,
    headers: HeaderMap,
) -> Response {
    handle(state, Method::Get, Form::Fhir, uuid, headers, None).await
}

async fn post_request(
    State(state): State<AppState>,
    Path(uuid): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    post(state, Method::Post, uuid, headers, body).await
}

/// A call that writes values: the spec's POST, or a correction (`Method::Amend`, through
/// `amend::amend`); both read their body the same way and run through [`write`].
pub(super) async fn post(
    state: AppState,
    method: Method,
    uuid: String,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match body_bytes(body) {
        Ok(b) => {
            let form = Form::of_body(&headers);
            handle(state, method, form, uuid, headers, Some(b)).await
        }
        Err(e) => e.into_response(),
    }
}

/// Canonical form of a UUID path parameter, or 400 (the worklist's routes take the same).
pub(super) fn parse_uuid(raw: &str) -> Result<String, ApiError> {
    uuid::Uuid::try_parse(raw.trim())
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| {
            ApiError::bad_request(
                "INVALID_UUID",
                "the data request UUID is not a valid UUID",
                "uuid",
            )
        })
}

async fn handle(
    state: AppState,
    method: Method,
    form: Form,
    raw_uuid: String,
    headers: HeaderMap,
    body: Option<Bytes>,
) -> Response {
    match run(&state, method, form, &raw_uuid, &headers, body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn run(
    state: &AppState,
    method: Method,
    form: Form,
    raw_uuid: &str,
    headers: &HeaderMap,
    body: Option<Bytes>,
) -> Result<Response, ApiError> {
    match method {
        Method::Get => read(state, form, raw_uuid, headers).await,
        Method::Post | Method::Amend => write(state, method, form, raw_uuid, headers, body).await,
    }
}

/// A GET reads the caller and the request in one statement and leaves one history record:
/// on SQLite both in **one** job of the native writer, on its connection (whose page cache
/// every write keeps warm, where a read connection would find it dropped by the last
/// commit), batched with concurrent writes; on PostgreSQL the read outside any transaction,
/// then the record batched with those of concurrent GETs.
async fn read(
    state: &AppState,
    form: Form,
    raw_uuid: &str,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let token = bearer(headers)?;
    let uuid = match parse_uuid(raw_uuid) {
        Ok(uuid) => uuid,
        Err(malformed) => {
            // The token is checked first, as for every call.
            caller_of(state, &token).await?;
            return Err(malformed);
        }
    };
    let (req, checked) = match state.db().native() {
        Some(native) => native
            .write(move |conn| read_and_record_native(conn, &token, &uuid))
            .await
            .map_err(sqlx::Error::from)??,
        None => read_and_record(state, &token, &uuid).await?,
    };
    let outcome = checked.map(|resolved| match form {
        Form::Plain => json(StatusCode::OK, &mi::view(&req, &resolved)),
        Form::Fhir => {
            let mut response = json(StatusCode::OK, &fhir::bundle(&req, &resolved, None));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(fhir::MEDIA_TYPE),
            );
            response
        }
    });
    if !matches!(outcome, Err(ApiError::Database(_) | ApiError::Internal(_))) {
        log_call(Method::Get, result_status(&outcome), 0);
    }
    outcome
}

/// What a GET read, once its history record is written: the request and what its checks
/// ([`readable`]) gave.
type ReadRequest = (DataRequest, Result<Resolved, ApiError>);

/// [`read`] on PostgreSQL (or any pool without the native writer): the one statement on a
/// connection without a transaction, then the history record through the history writer.
async fn read_and_record(
    state: &AppState,
    token: &str,
    uuid: &str,
) -> Result<ReadRequest, ApiError> {
    let mut tx = state.db().begin_single_read().await?;
    let (caller, found) = data_requests::find_for_caller(&mut tx, token, uuid).await?;
    tx.rollback().await?;
    let (read, entry) = checked_read(caller, found)?;
    state.history().record(state.db(), entry).await?;
    Ok(read)
}

/// [`read`] on the native writer's connection (SQLite), inside its open batch: the same
/// statement and the same record, answered once the batch committed. A 401 or 404 writes
/// nothing (there is no request to keep a record of).
fn read_and_record_native(
    conn: &slipway_server::db::native::rusqlite::Connection,
    token: &str,
    uuid: &str,
) -> Result<ReadRequest, ApiError> {
    let (caller, found) = data_requests::find_for_caller_native(conn, token, uuid)?;
    let (read, entry) = checked_read(caller, found)?;
    data_requests::record_histories_native(conn, std::slice::from_ref(&entry))
        .map_err(slipway_server::db::native::database_error)?;
    Ok(read)
}

/// What a GET's read gives, checked: 401 for an unknown token, then 404 for an unknown
/// request; else the request, its checks ([`readable`]) and the history record to write.
fn checked_read(
    caller: Option<Caller>,
    found: Option<(DataRequest, RequestContext)>,
) -> Result<(ReadRequest, data_requests::NewHistory), ApiError> {
    let caller = caller.ok_or(ApiError::Unauthorized)?;
    let (req, context) = found.ok_or_else(request_not_found)?;
    let checked = readable(&caller, &req, context, Method::Get);
    let entry = history_entry(
        &req,
        &caller,
        Method::Get,
        result_status(&checked),
        Vec::new(),
    );
    Ok(((req, checked), entry))
}

/// The caller a token names, or 401.
async fn caller_of(state: &AppState, token: &str) -> Result<Caller, ApiError> {
    let caller = match state.db().native() {
        Some(native) => native.read_one(|conn| load_caller_native(conn, token))?,
        None => {
            let mut tx = state.db().begin_single_read().await?;
            let caller = load_caller(&mut tx, token).await?;
            tx.rollback().await?;
            caller
        }
    };
    caller.ok_or(ApiError::Unauthorized)
}

/// A POST (or a correction) reads what it checks and writes in one transaction, its history
/// record with it; a failed one is rolled back and leaves its record all the same.
async fn write(
    state: &AppState,
    method: Method,
    form: Form,
    raw_uuid: &str,
    headers: &HeaderMap,
    body: Option<Bytes>,
) -> Result<Response, ApiError> {
    let (mut tx, caller) = begin_as_caller(state, headers).await?;
    let uuid = parse_uuid(raw_uuid)?;
    let Some((req, context)) = data_requests::find_with_context(&mut tx, &uuid).await? else {
        return Err(request_not_found());
    };
    let mut submitted = Vec::new();
    let body = body.as_deref().unwrap_or_default();
    let call = (&req, context);
    let outcome = if method == Method::Amend {
        super::amend::correct(&mut tx, state, &caller, call, form, body, &mut submitted).await
    } else {
        submit(&mut tx, &caller, call, form, body, &mut submitted).await
    };
    let status = result_status(&outcome);
    let failed = matches!(outcome, Err(ApiError::Database(_) | ApiError::Internal(_)));
    let fields = submitted.len();
    let entry = history_entry(&req, &caller, method, status, submitted);
    if failed {
        // Roll the failed work back; the history record is still left, batched with those
        // of concurrent calls.
        tx.rollback().await?;
        state.history().record(state.db(), entry).await?;
    } else {
        data_requests::record_histories(&mut tx, std::slice::from_ref(&entry)).await?;
        tx.commit().await?;
        if outcome.is_ok() {
            state.events().notify();
        }
        log_call(method, status, fields);
    }
    outcome
}

/// The status code a result answers with (200, or the error's), as a history record keeps it.
pub(super) fn result_status<T>(result: &Result<T, ApiError>) -> StatusCode {
    match result {
        Ok(_) => StatusCode::OK,
        Err(e) => e.status(),
    }
}

/// The history record of a call on `req`.
pub(super) fn history_entry(
    req: &DataRequest,
    caller: &Caller,
    method: Method,
    status: StatusCode,
    submitted: Vec<String>,
) -> data_requests::NewHistory {
    data_requests::NewHistory {
        data_request_id: req.id,
        user_id: Some(caller.user_id),
        method: method.as_str(),
        status: status.as_u16(),
        submitted,
    }
}

/// One line per answered call: its method, status and how many fields it submitted (never
/// their values).
pub(super) fn log_call(method: Method, status: StatusCode, fields: usize) {
    tracing::info!(
        method = method.as_str(),
        status = status.as_u16(),
        fields,
        "missing-information call"
    );
}

/// The 404 of a UUID that names no data request (the worklist's routes answer the same).
pub(super) fn request_not_found() -> ApiError {
    ApiError::NotFound(ErrorItem::new(
        "REQUEST_NOT_FOUND",
        "no data request has this UUID",
        "uuid",
    ))
}

/// The checks every call makes before it reads or writes a value: the request is active,
/// its fields resolve, and the caller may `method` them.
fn readable(
    caller: &Caller,
    req: &DataRequest,
    context: RequestContext,
    method: Method,
) -> Result<Resolved, ApiError> {
    mi::check_active(req)?;
    let resolved = mi::resolve(context)?;
    mi::check_access(caller, &resolved, method.access())?;
    Ok(resolved)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PostResponse {
    uuid: String,
    status: &'static str,
    updated_fields: Vec<String>,
}

async fn submit(
    tx: &mut crate::db::Tx,
    caller: &Caller,
    (req, context): (&DataRequest, RequestContext),
    form: Form,
    body: &[u8],
    submitted: &mut Vec<String>,
) -> Result<Response, ApiError> {
    let resolved = readable(caller, req, context, Method::Post)?;
    let entries = mi::parse_body(body, form == Form::Fhir, submitted)
        .map_err(|v| ApiError::BadRequest(v.into_iter().map(ErrorItem::from).collect()))?;
    let values = mi::check_values(&resolved, &entries)?;
    mi::apply(tx, &resolved, &values).await?;
    data_requests::complete(tx, req, caller.user_id).await?;
    // Answered: the Task is completed, whoever held it.
    events::append(
        tx,
        &req.uuid,
        EventStatus::Task(TaskStatus::Completed),
        req.holder.as_ref().map(|h| h.user_id),
    )
    .await?;
    let body = PostResponse {
        uuid: req.uuid.clone(),
        status: COMPLETED,
        updated_fields: values.iter().map(|(f, _)| f.uuid.clone()).collect(),
    };
    Ok(json(StatusCode::OK, &body))
}
