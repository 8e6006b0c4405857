//! `POST {base}/{ns}/eRxApi`: validates the body against the reference catalog, then one
//! write transaction upserts every record it describes and records the eRX request (kept
//! for refused and failed requests too).

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::Serialize;
use serde_json::Value;

use super::error::ApiError;
use super::{AppState, bearer, body_bytes, json, metrics, read_as_caller};
use crate::db::native::{Native, finished};
use crate::enrollment::model::Enrollment;
use crate::enrollment::validate::{self, Rejection, codes};
use crate::store::enrollment::{self as store, RecordChange};
use crate::store::erx;
use crate::violation::Violation;

/// Routes of the enrollment service (nested under `{base}/{ns}`).
pub fn router() -> Router<AppState> {
    Router::new().route("/eRxApi", post(enroll))
}

/// The 200 body: which request record was written and what happened to each record.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct EnrollmentResponse {
    request_id: String,
    outcome: &'static str,
    care_plan_external_id: String,
    records: Vec<RecordChange>,
}

const REQUEST_ID_HEADER: &str = "x-erx-request-id";

fn with_request_id(mut response: Response, id: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(id) {
        response.headers_mut().insert(REQUEST_ID_HEADER, v);
    }
    response
}

async fn enroll(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body_bytes(body)?;
    // Authentication, parsing and validation against the reference catalog only read: they
    // run in a read transaction, outside the writer queue. The writes (the records and the
    // eRX request record) then take one write transaction. A catalog change that commits in
    // between is seen by the next request, as if it had committed just after this one.
    // On SQLite they run on native read connections on this thread (`check` reads the
    // catalog there too); elsewhere in a read transaction of the pool.
    let (mut read, caller) = match state.db().native() {
        Some(native) => {
            let token = bearer(&headers)?;
            let caller = native
                .read(|conn| crate::store::users::load_caller_native(conn, &token))?
                .ok_or(ApiError::Unauthorized)?;
            (None, caller)
        }
        None => {
            let (read, caller) = read_as_caller(&state, &headers).await?;
            (Some(read), caller)
        }
    };
    let request_id = uuid::Uuid::new_v4().to_string();
    // PostgreSQL text cannot hold NUL; a raw NUL can only come with a body that is not JSON.
    let payload = String::from_utf8_lossy(&body).replace('\0', "\u{fffd}");
    let checked = check(&state, read.as_mut(), &caller, &body).await;
    if let Some(read) = read {
        read.rollback().await?;
    }
    let outcome = match &checked {
        Ok(Ok(_)) => Some(metrics::ACCEPTED),
        Ok(Err(Rejection::Invalid(_))) => Some(metrics::REJECTED),
        Ok(Err(Rejection::Forbidden(_))) => Some(metrics::FORBIDDEN),
        Err(_) => None,
    };
    let written = match checked {
        Ok(outcome) if state.db().native().is_some() => {
            write_native(&state, &caller, &request_id, &payload, outcome).await
        }
        Ok(outcome) => {
            let mut tx = state.db().begin_write().await?;
            match write(&mut tx, &caller, &request_id, &payload, outcome).await {
                Ok(response) => tx.commit().await.map(|()| response).map_err(ApiError::from),
                Err(error) => {
                    tx.rollback().await?;
                    Err(error)
                }
            }
        }
        Err(error) => Err(error),
    };
    match written {
        Ok(response) => {
            // Counted once its records and audit record are committed.
            if let Some(outcome) = outcome {
                state.enrollments().inc(outcome);
            }
            Ok(with_request_id(response, &request_id))
        }
        Err(error) => {
            // The work is rolled back; the audit record of the request is still kept.
            let errors = serde_json::to_value(error.items()).unwrap_or_default();
            let mut tx = state.db().begin_write().await?;
            erx::record(
                &mut tx,
                &request_id,
                caller.user_id,
                &payload,
                "error",
                &errors,
                None,
            )
            .await?;
            tx.commit().await?;
            Err(error)
        }
    }
}

/// Parses the body and validates it against the reference catalog (read in `tx`).
async fn check(
    state: &AppState,
    tx: Option<&mut crate::db::Tx>,
    caller: &crate::auth::Caller,
    body: &[u8],
) -> Result<Result<Enrollment, Rejection>, ApiError> {
    let doc = match serde_json::from_slice::<Value>(body) {
        Err(e) => {
            return Ok(Err(Rejection::Invalid(vec![Violation::new(
                codes::INVALID_JSON,
                format!(
                    "the request body is not valid JSON (line {}, column {})",
                    e.line(),
                    e.column()
                ),
                "",
            )])));
        }
        Ok(doc) => doc,
    };
    let text = |k: &str| {
        doc.get(k)
            .and_then(Value::as_str)
            .filter(|v| !v.contains('\0'))
            .unwrap_or_default()
            .to_owned()
    };
    let (vendor, program) = (text("vendorName"), text("programName"));
    let catalog = match (state.db().native(), tx) {
        // On SQLite, read on a native connection (one snapshot, on this thread).
        (Some(native), _) => {
            native.read(|conn| store::load_catalog_native(conn, &vendor, &program))?
        }
        (None, Some(tx)) => store::load_catalog(tx, &vendor, &program).await?,
        (None, None) => {
            return Err(ApiError::Internal(
                "no transaction to read the catalog in".into(),
            ));
        }
    };
    Ok(validate::validate(&doc, &catalog, state.settings(), caller))
}

/// The 200 answer of an enrollment whose records committed (both write paths).
fn stored(request_id: &str, plan: String, records: Vec<RecordChange>) -> Response {
    let created = records
        .iter()
        .filter(|r| r.result == crate::db::Change::Created)
        .count();
    tracing::info!(records = records.len(), created, "enrollment stored");
    let body = EnrollmentResponse {
        request_id: request_id.to_owned(),
        outcome: "success",
        care_plan_external_id: plan,
        records,
    };
    json(StatusCode::OK, &body)
}

impl Rejection {
    /// The outcome its eRX request record keeps.
    fn label(&self) -> &'static str {
        match self {
            Rejection::Invalid(_) => "rejected",
            Rejection::Forbidden(_) => "forbidden",
        }
    }
}

/// The writes of one checked enrollment inside the request's write transaction: its
/// records if it is valid, and its eRX request record either way; the caller commits.
async fn write(
    tx: &mut crate::db::Tx,
    caller: &crate::auth::Caller,
    request_id: &str,
    payload: &str,
    outcome: Result<Enrollment, Rejection>,
) -> Result<Response, ApiError> {
    match outcome {
        Ok(enrollment) => {
            let records = store::store(tx, &enrollment).await?;
            let plan = enrollment.care_plan_external_id();
            erx::record(
                tx,
                request_id,
                caller.user_id,
                payload,
                "success",
                &Value::Array(vec![]),
                Some(&plan),
            )
            .await?;
            Ok(stored(request_id, plan, records))
        }
        Err(rejection) => {
            let label = rejection.label();
            let error = ApiError::from(rejection);
            let errors = serde_json::to_value(error.items()).unwrap_or_default();
            erx::record(
                tx,
                request_id,
                caller.user_id,
                payload,
                label,
                &errors,
                None,
            )
            .await?;
            tracing::info!(
                errors = error.items().len(),
                status = error.status().as_u16(),
                "enrollment refused"
            );
            Ok(error.into_response())
        }
    }
}

/// [`write`] on SQLite: the same records and eRX request record, written whole by the native
/// writer's thread in one job (`slipway_server::db::native`), which answers once the batch
/// holding them committed; a job that fails leaves nothing, as a rolled-back transaction.
async fn write_native(
    state: &AppState,
    caller: &crate::auth::Caller,
    request_id: &str,
    payload: &str,
    outcome: Result<Enrollment, Rejection>,
) -> Result<Response, ApiError> {
    use slipway_server::db::native::database_error;
    let native = state.db().native().ok_or(ApiError::Internal(
        "the native SQLite writer is not running".into(),
    ))?;
    let (user_id, id, body) = (caller.user_id, request_id.to_owned(), payload.to_owned());
    match outcome {
        Ok(enrollment) => {
            let plan = enrollment.care_plan_external_id();
            let recorded = plan.clone();
            let records = native
                .write(move |conn| {
                    finished(async {
                        let d = &mut Native(conn);
                        let records = store::store(d, &enrollment).await?;
                        let none = Value::Array(vec![]);
                        erx::record(d, &id, user_id, &body, "success", &none, Some(&recorded))
                            .await?;
                        Ok(records)
                    })
                })
                .await
                .map_err(sqlx::Error::from)?
                .map_err(database_error)?;
            Ok(stored(request_id, plan, records))
        }
        Err(rejection) => {
            let label = rejection.label();
            let error = ApiError::from(rejection);
            let errors = serde_json::to_value(error.items()).unwrap_or_default();
            native
                .write(move |conn| {
                    let d = &mut Native(conn);
                    finished(erx::record(d, &id, user_id, &body, label, &errors, None))
                })
                .await
                .map_err(sqlx::Error::from)?
                .map_err(database_error)?;
            tracing::info!(
                errors = error.items().len(),
                status = error.status().as_u16(),
                "enrollment refused"
            );
            Ok(error.into_response())
        }
    }
}
