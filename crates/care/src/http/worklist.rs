//! The care staff's worklist over HTTP: `GET {base}/fhir/Task` (a FHIR `searchset` of the
//! missing-information requests as Tasks, keyset-paged by its `next` link), `GET
//! {base}/fhir/Task/{uuid}`, `POST {base}/{ns}/missingInformationRequest/{uuid}/claim` and
//! `…/release`, and `GET {base}/{ns}/me` (who the token is, so a client can ask for its own
//! Tasks). Same tokens and 401 as every other call; reading needs read access to
//! `DataRequest`, claiming and releasing edit access.

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;

use super::error::{ApiError, ErrorItem};
use super::missing_info::{parse_uuid, request_not_found};
use super::{AppState, begin_as_caller, json, read_as_caller};
use crate::auth::{Access, Caller, objects};
use crate::db::Tx;
use crate::fhir::{self, TaskFacts};
use crate::model::{DataRequest, EventStatus, Holder, Search, TaskStatus};
use crate::store::worklist::TaskRow;
use crate::store::{data_requests, events, users, worklist as store};
use crate::worklist::{ClaimError, check_claimable};

/// `{base}/fhir/…` routes.
pub fn fhir_router() -> Router<AppState> {
    Router::new()
        .route("/Task", get(search))
        .route("/Task/{uuid}", get(read_one))
}

/// `{base}/{ns}/…` routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/missingInformationRequest/{uuid}/claim", post(claim))
        .route("/missingInformationRequest/{uuid}/release", post(release))
        .route("/me", get(me))
}

/// The query parameters of a Task search (FHIR's names).
#[derive(Debug, Deserialize)]
struct SearchParams {
    status: Option<String>,
    owner: Option<String>,
    #[serde(rename = "_count")]
    count: Option<String>,
    #[serde(rename = "_cursor")]
    cursor: Option<String>,
    #[serde(rename = "_total")]
    total: Option<String>,
}

/// A FHIR JSON answer.
fn fhir_json<T: serde::Serialize>(body: &T) -> Response {
    let mut response = json(StatusCode::OK, body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(fhir::MEDIA_TYPE),
    );
    response
}

/// Refused (403) unless the caller has `access` to data requests.
fn require(caller: &Caller, access: Access, what: &str) -> Result<(), ApiError> {
    if caller.can(objects::DATA_REQUEST, access) {
        return Ok(());
    }
    let verb = match access {
        Access::Read => "read",
        Access::Create => "create",
        Access::Edit => "edit",
    };
    Err(ApiError::Forbidden(vec![ErrorItem::new(
        "OBJECT_ACCESS_DENIED",
        format!("{what} needs {verb} access to {}", objects::DATA_REQUEST),
        objects::DATA_REQUEST,
    )]))
}

/// What the caller may see of the patient's name: the account's `name`, else first and last
/// name, each only with read access to that field (by its API name, as grants name fields).
fn patient_name(caller: &Caller, row: &TaskRow) -> Option<String> {
    let readable = |field: &str, value: &Option<String>| {
        value
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty() && caller.can_field(objects::ACCOUNT, field, Access::Read))
            .map(str::to_owned)
    };
    let [name, first, last] = &row.patient_name;
    readable("name", name).or_else(|| {
        let parts: Vec<String> = [readable("firstName", first), readable("lastName", last)]
            .into_iter()
            .flatten()
            .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    })
}

/// The Task of a worklist row as this caller may see it: the patient only with read access to
/// accounts, the care plan and its program only with read access to care plans (what the
/// missing-information GET asks before it shows either).
fn task_of(caller: &Caller, row: &TaskRow) -> fhir::Task {
    let sees_patient = caller.can(objects::ACCOUNT, Access::Read);
    let sees_plan = caller.can(objects::CARE_PLAN, Access::Read);
    let name = sees_patient.then(|| patient_name(caller, row)).flatten();
    fhir::task(TaskFacts {
        request: &row.request,
        patient_external_id: row.patient_external_id.as_deref().filter(|_| sees_patient),
        patient_name: name.as_deref(),
        care_plan: sees_plan,
        program_name: row.program_name.as_deref().filter(|_| sees_plan),
    })
}

/// Where the service is reached, for absolute links: the scheme the request came over and
/// its `Host`, then the base path; relative (the base path alone) without a `Host`.
fn origin(state: &AppState, headers: &HeaderMap, over_tls: bool) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| !h.is_empty() && !h.contains(['/', ' ', '?', '#']));
    let scheme = if over_tls { "https" } else { "http" };
    match host {
        Some(host) => format!("{scheme}://{host}{}", state.base_path()),
        None => state.base_path().to_owned(),
    }
}

async fn search(
    State(state): State<AppState>,
    tls: Option<axum::Extension<slipway_server::tls::OverTls>>,
    headers: HeaderMap,
    params: Result<Query<SearchParams>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let (mut tx, caller) = read_as_caller(&state, &headers).await?;
    let Query(params) = params.map_err(|e| {
        ApiError::bad_request("INVALID_QUERY", format!("the query string: {e}"), "")
    })?;
    let search = Search::parse(
        params.status.as_deref(),
        params.owner.as_deref(),
        params.count.as_deref(),
        params.cursor.as_deref(),
        params.total.as_deref(),
    )
    .map_err(|v| ApiError::BadRequest(v.into_iter().map(ErrorItem::from).collect()))?;
    require(&caller, Access::Read, "the worklist")?;
    let page = store::search(&mut tx, &search).await?;
    let total = match search.total {
        true => Some(store::count(&mut tx, &search).await?),
        false => None,
    };
    tx.rollback().await?;
    let origin = origin(&state, &headers, tls.is_some());
    let tasks = page.rows.iter().map(|r| task_of(&caller, r)).collect();
    let bundle = fhir::search_bundle(
        tasks,
        |id| format!("{origin}/fhir/Task/{id}"),
        format!(
            "{origin}/fhir/Task?{}",
            search.query_string(search.after.as_ref())
        ),
        page.next
            .as_ref()
            .map(|c| format!("{origin}/fhir/Task?{}", search.query_string(Some(c)))),
        total,
    );
    Ok(fhir_json(&bundle))
}

async fn read_one(
    State(state): State<AppState>,
    Path(raw): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (mut tx, caller) = read_as_caller(&state, &headers).await?;
    let uuid = parse_uuid(&raw)?;
    require(&caller, Access::Read, "reading a Task")?;
    let row = store::find(&mut tx, &uuid)
        .await?
        .ok_or_else(request_not_found)?;
    tx.rollback().await?;
    Ok(fhir_json(&task_of(&caller, &row)))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Claim,
    Release,
}

impl Change {
    fn method(self) -> &'static str {
        match self {
            Change::Claim => "CLAIM",
            Change::Release => "RELEASE",
        }
    }
}

async fn claim(
    State(state): State<AppState>,
    Path(raw): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    change(state, raw, headers, Change::Claim).await
}

async fn release(
    State(state): State<AppState>,
    Path(raw): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    change(state, raw, headers, Change::Release).await
}

/// A claim or a release, in one write transaction with its history record and its event;
/// every call on an existing request leaves a history record, whatever its status code.
async fn change(
    state: AppState,
    raw: String,
    headers: HeaderMap,
    change: Change,
) -> Result<Response, ApiError> {
    let (mut tx, caller) = begin_as_caller(&state, &headers).await?;
    let uuid = parse_uuid(&raw)?;
    let req = data_requests::find(&mut tx, &uuid)
        .await?
        .ok_or_else(request_not_found)?;
    let outcome = apply(&mut tx, &caller, &req, change).await;
    let status = match &outcome {
        Ok(_) => StatusCode::OK,
        Err(e) => e.status(),
    };
    let outcome = match outcome {
        Err(e @ (ApiError::Database(_) | ApiError::Internal(_))) => {
            tx.rollback().await?;
            return Err(e);
        }
        other => other,
    };
    let changed = matches!(outcome, Ok(Some(())));
    let entry = data_requests::NewHistory {
        data_request_id: req.id,
        user_id: Some(caller.user_id),
        method: change.method(),
        status: status.as_u16(),
        submitted: Vec::new(),
    };
    data_requests::record_histories(&mut tx, std::slice::from_ref(&entry)).await?;
    let result = match outcome {
        Ok(_) => Ok(store::find(&mut tx, &uuid)
            .await?
            .ok_or_else(request_not_found)?),
        Err(e) => Err(e),
    };
    tx.commit().await?;
    if changed {
        state.events().notify();
    }
    tracing::info!(
        method = change.method(),
        status = status.as_u16(),
        "worklist call"
    );
    result.map(|row| fhir_json(&task_of(&caller, &row)))
}

/// The change itself: `Some` when it changed the holder (its event is appended), `None` when
/// there was nothing to do (claiming one's own, releasing an unclaimed request).
async fn apply(
    tx: &mut Tx,
    caller: &Caller,
    req: &DataRequest,
    change: Change,
) -> Result<Option<()>, ApiError> {
    let what = match change {
        Change::Claim => "claiming a request",
        Change::Release => "releasing a request",
    };
    require(caller, Access::Edit, what)?;
    let held_by_other = |holder: &Holder| {
        ApiError::Conflict(ClaimError::HeldByOther(holder.clone()).violation().into())
    };
    match change {
        Change::Claim => {
            check_claimable(req).map_err(|e| ApiError::Conflict(e.violation().into()))?;
            if req
                .holder
                .as_ref()
                .is_some_and(|h| h.user_id == caller.user_id)
            {
                return Ok(None);
            }
            if !store::claim(tx, req.id, caller.user_id).await? {
                // Something committed since the read (PostgreSQL): say what it is now.
                let now = data_requests::find(tx, &req.uuid)
                    .await?
                    .ok_or_else(request_not_found)?;
                check_claimable(&now).map_err(|e| ApiError::Conflict(e.violation().into()))?;
                return Err(match &now.holder {
                    Some(h) if h.user_id != caller.user_id => held_by_other(h),
                    _ => {
                        ApiError::Internal("a claim of a claimable request changed nothing".into())
                    }
                });
            }
            events::append(
                tx,
                &req.uuid,
                EventStatus::Task(TaskStatus::InProgress),
                Some(caller.user_id),
            )
            .await?;
        }
        Change::Release => {
            // No check that the request is still active: a claim on a request that ended or
            // expired can still be let go (and would come back if it were made active again).
            let Some(holder) = &req.holder else {
                return Ok(None);
            };
            // The holder releases; so may a care admin (someone away leaves a claim behind).
            if holder.user_id != caller.user_id && !caller.admin {
                return Err(held_by_other(holder));
            }
            if !store::release(tx, req.id, holder.user_id).await? {
                // Released or claimed again since the read (PostgreSQL).
                let now = data_requests::find(tx, &req.uuid)
                    .await?
                    .ok_or_else(request_not_found)?;
                return match &now.holder {
                    None => Ok(None),
                    Some(h) if h.user_id != caller.user_id && !caller.admin => {
                        Err(held_by_other(h))
                    }
                    Some(_) => Err(ApiError::Internal("a release matched no row".into())),
                };
            }
            let mut released = req.clone();
            released.holder = None;
            events::append(
                tx,
                &req.uuid,
                EventStatus::Task(TaskStatus::of(&released)),
                None,
            )
            .await?;
        }
    }
    Ok(Some(()))
}

async fn me(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let (mut tx, caller) = read_as_caller(&state, &headers).await?;
    let user = users::profile(&mut tx, caller.user_id)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    tx.rollback().await?;
    Ok(json(StatusCode::OK, &user).into_response())
}
