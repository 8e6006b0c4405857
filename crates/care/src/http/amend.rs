//! An answered missing-information request over HTTP, beside the spec's routes (whose GET and
//! POST keep answering 409 once a request has ended):
//! - `GET {base}/{ns}/missingInformationRequest/{uuid}/answer`: what was answered, by whom,
//!   its amendments, and whether the caller may correct it (the window's form);
//! - `GET …/{uuid}/fhir` of an answered request: its bundle with the `QuestionnaireResponse`
//!   (`completed`, or `amended`) and the Task's notes of each amendment;
//! - `POST …/{uuid}/amend`: the POST's body and field rules (400, 412), by the person who
//!   answered or a care admin (403), within the configured window (409 after it).
//!
//! Each call on an existing request leaves a history record, as the spec's calls do.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;

use super::error::{ApiError, ErrorItem};
use super::missing_info::{
    Form, Method, history_entry, log_call, parse_uuid, request_not_found, result_status,
};
use super::{AppState, json, read_as_caller};
use crate::amend::{self, AnswerFacts, Person};
use crate::auth::{Access, Caller};
use crate::db::{Tx, now};
use crate::fhir;
use crate::missing_info as mi;
use crate::model::{COMPLETED, DataRequest, EventStatus, RequestContext, TaskStatus};
use crate::store::{amendments, data_requests, events, users};

/// `GET …/{uuid}/answer`.
pub(super) async fn get_answer(
    State(state): State<AppState>,
    Path(uuid): Path<String>,
    headers: HeaderMap,
) -> Response {
    match read_answered(&state, &uuid, &headers, Form::Plain).await {
        Ok(Some(response)) => response,
        Ok(None) => unreachable_not_answered(),
        Err(e) => e.into_response(),
    }
}

/// `GET …/{uuid}/fhir`: an answered request's bundle here, any other through the spec's path.
pub(super) async fn get_fhir(
    State(state): State<AppState>,
    Path(uuid): Path<String>,
    headers: HeaderMap,
) -> Response {
    match read_answered(&state, &uuid, &headers, Form::Fhir).await {
        Ok(Some(response)) => response,
        Ok(None) => super::missing_info::get_fhir(State(state), Path(uuid), headers).await,
        Err(e) => e.into_response(),
    }
}

/// [`read_answered`] answers `Some` for every request in its plain form; kept total anyway.
fn unreachable_not_answered() -> Response {
    ApiError::Internal("the answer's read gave nothing".into()).into_response()
}

/// Reads an answered request for the caller. `Ok(None)` (FHIR form only) when the request is
/// not answered: the spec's path answers it then. Leaves a history record once the request
/// is found.
async fn read_answered(
    state: &AppState,
    raw_uuid: &str,
    headers: &HeaderMap,
    form: Form,
) -> Result<Option<Response>, ApiError> {
    let (mut tx, caller) = read_as_caller(state, headers).await?;
    let uuid = parse_uuid(raw_uuid)?;
    let Some((req, context)) = data_requests::find_with_context(&mut tx, &uuid).await? else {
        return Err(request_not_found());
    };
    let answered = req.status == COMPLETED && req.answered.is_some();
    if form == Form::Fhir && !answered {
        tx.rollback().await?;
        return Ok(None);
    }
    let outcome = answer(&mut tx, state, &caller, &req, context, form).await;
    tx.rollback().await?;
    let status = result_status(&outcome);
    if !matches!(outcome, Err(ApiError::Database(_) | ApiError::Internal(_))) {
        let entry = history_entry(&req, &caller, Method::Get, status, Vec::new());
        state.history().record(state.db(), entry).await?;
        log_call(Method::Get, status, 0);
    }
    outcome.map(Some)
}

async fn answer(
    tx: &mut Tx,
    state: &AppState,
    caller: &Caller,
    req: &DataRequest,
    context: RequestContext,
    form: Form,
) -> Result<Response, ApiError> {
    let resolved = mi::resolve(context)?;
    let answered = amend::check_answered(req)?;
    mi::check_access(caller, &resolved, Access::Read)?;
    let values = amendments::current_values(tx, &resolved).await?;
    let history = amendments::list(tx, req.id).await?;
    let answered_by = match answered.by {
        Some(id) => users::profile(tx, id).await?.map(|p| (p.id, p.name)),
        None => None,
    };
    if form == Form::Fhir {
        let bundle = fhir::bundle(
            req,
            &resolved,
            Some(fhir::AnswerFacts {
                answered_by: answered_by.as_ref().map(|(i, n)| (i.as_str(), n.as_str())),
                values: &values,
                amendments: &history,
            }),
        );
        let mut response = json(StatusCode::OK, &bundle);
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(fhir::MEDIA_TYPE),
        );
        return Ok(response);
    }
    let amendable = amend::check_amendable(req, caller, now(), state.amend_window()).is_ok()
        && mi::check_access(caller, &resolved, Access::Edit).is_ok();
    let view = amend::answer_view(AnswerFacts {
        request: req,
        answered,
        answered_by: answered_by.map(|(id, name)| Person { id, name }),
        resolved: &resolved,
        values: &values,
        amendments: &history,
        window: state.amend_window(),
        amendable,
    });
    Ok(json(StatusCode::OK, &view))
}

/// The answer of an amendment.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AmendResponse {
    uuid: String,
    status: &'static str,
    /// Whether anything changed (a body equal to the answer changes nothing and records no
    /// amendment).
    amended: bool,
    updated_fields: Vec<String>,
    changed_fields: Vec<String>,
    amendable_until: String,
}

/// `POST …/{uuid}/amend`: the POST's path (`missing_info::post`), checked by [`correct`].
pub(super) async fn amend(
    State(state): State<AppState>,
    Path(uuid): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    super::missing_info::post(state, Method::Amend, uuid, headers, body).await
}

/// Checks and writes a correction inside the POST's transaction (`missing_info::write`,
/// which keeps its history record and rolls a refusal back).
pub(super) async fn correct(
    tx: &mut Tx,
    state: &AppState,
    caller: &Caller,
    (req, context): (&DataRequest, RequestContext),
    form: Form,
    body: &[u8],
    submitted: &mut Vec<String>,
) -> Result<Response, ApiError> {
    let resolved = mi::resolve(context)?;
    let answered = amend::check_amendable(req, caller, now(), state.amend_window())?;
    mi::check_access(caller, &resolved, Access::Edit)?;
    let entries = mi::parse_body(body, form == Form::Fhir, submitted)
        .map_err(|v| ApiError::BadRequest(v.into_iter().map(ErrorItem::from).collect()))?;
    let values = mi::check_values(&resolved, &entries)?;
    let current: HashMap<String, Value> = amendments::current_values(tx, &resolved).await?;
    let changed = amend::changes(&current, &values);
    if !changed.is_empty() {
        let changed_values: Vec<_> = values
            .iter()
            .filter(|(f, _)| changed.iter().any(|c| c.uuid == f.uuid))
            .map(|(f, v)| (*f, v.clone()))
            .collect();
        mi::apply(tx, &resolved, &changed_values).await?;
        amendments::record(tx, req.id, caller.user_id, &changed).await?;
        // The worklist hears of it (the Task is still completed, now amended).
        events::append(
            tx,
            &req.uuid,
            EventStatus::Task(TaskStatus::Completed),
            req.holder.as_ref().map(|h| h.user_id),
        )
        .await?;
    }
    let body = AmendResponse {
        uuid: req.uuid.clone(),
        status: COMPLETED,
        amended: !changed.is_empty(),
        updated_fields: values.iter().map(|(f, _)| f.uuid.clone()).collect(),
        changed_fields: changed.into_iter().map(|c| c.uuid).collect(),
        amendable_until: fhir::date_time(amend::closes(&answered, state.amend_window())),
    };
    Ok(json(StatusCode::OK, &body))
}
