//! The admin API under `{base}/admin`: reference data (vendors, programs, products, data use
//! purposes, eRX object configuration, missing-information groups, data requests) and users.
//! Admin tokens only. PUT creates or replaces by the identifier in the path.
//!
//! Each handler parses the path and body, turns them into domain values with the rules of
//! [`crate::reference`], calls [`crate::store`], and shapes the JSON answer. The four kinds of
//! key-and-record reference data (vendors, programs, products, data use purposes) share one
//! set of handlers, in [`reference_data`].

use std::future::Future;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{MethodRouter, get, put};
use serde::Deserialize;
use serde_json::{Value, json};

use self::reference_data::Products;
use super::error::{ApiError, ErrorItem};
use super::{AppState, begin_as_caller, body_bytes, json as respond};
use crate::auth::{self, Grant, objects};
use crate::db::Tx;
use crate::model::{DataRequestInput, EventStatus, Group, TaskStatus};
use crate::reference::{
    check_api_name, check_data_request, check_display_name, check_grants, check_plain_id,
    field_def, group_field,
};
use crate::store::reference::Named;
use crate::store::{self, StoreError, data_requests, erx, groups, records, stats, users};

mod reference_data;

/// Routes of the admin API (nested under `{base}/admin`).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/stats", get(stats))
        .route("/vendors", reference_data::collection(Named::Vendor))
        .route("/vendors/{name}", reference_data::record(Named::Vendor))
        .route("/programs", reference_data::collection(Named::Program))
        .route("/programs/{name}", reference_data::record(Named::Program))
        .route("/products", reference_data::collection(Products))
        .route("/products/{id}", reference_data::record(Products))
        .route(
            "/data-use-purposes",
            reference_data::collection(Named::DataUsePurpose),
        )
        .route(
            "/data-use-purposes/{id}",
            reference_data::record(Named::DataUsePurpose),
        )
        .route("/object-configs", get(list_object_configs))
        .route(
            "/object-configs/{name}",
            put(put_object_config).merge(delete_by_key(Record::ObjectConfig)),
        )
        .route(
            "/missing-info-groups/{id}",
            get(get_group)
                .put(put_group)
                .merge(delete_by_key(Record::Group)),
        )
        .route(
            "/data-requests/{uuid}",
            get(get_data_request)
                .put(put_data_request)
                .merge(delete_by_key(Record::DataRequest)),
        )
        .route("/users", get(list_users).post(create_user))
        .route("/users/{id}", axum::routing::delete(delete_user))
        .route("/users/{id}/permissions", put(put_permissions))
        .route("/accounts/{external_id}", delete_by_key(Record::Account))
        .route("/care-plans/{external_id}", get(get_care_plan))
        .route("/erx-requests/{id}", get(get_erx_request))
        .layer(axum::middleware::from_fn(reject_nul_in_path))
}

/// Identifiers in admin paths are stored as text; PostgreSQL text cannot hold NUL.
async fn reject_nul_in_path(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    if req.uri().path().contains("%00") {
        return axum::response::IntoResponse::into_response(ApiError::bad_request(
            "INVALID_NAME",
            "identifiers must not contain NUL characters",
            "",
        ));
    }
    next.run(req).await
}

async fn begin_admin(state: &AppState, headers: &HeaderMap) -> Result<Tx, ApiError> {
    let (tx, caller) = begin_as_caller(state, headers).await?;
    if !caller.admin {
        return Err(ApiError::Forbidden(vec![ErrorItem::new(
            "ADMIN_ONLY",
            "the admin API needs an admin token",
            "",
        )]));
    }
    Ok(tx)
}

fn parse<T: for<'de> Deserialize<'de>>(body: Result<Bytes, BytesRejection>) -> Result<T, ApiError> {
    let body = body_bytes(body)?;
    if body.contains(&0) || body.windows(6).any(|w| w == b"\\u0000") {
        return Err(ApiError::bad_request(
            "INVALID_BODY",
            "text must not contain NUL characters",
            "",
        ));
    }
    serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request("INVALID_BODY", e.to_string(), ""))
}

/// The canonical (hyphenated, lower-case) form of a UUID path parameter, or 400.
fn parse_uuid(raw: &str) -> Result<String, ApiError> {
    Ok(uuid::Uuid::try_parse(raw)
        .map_err(|_| ApiError::bad_request("INVALID_UUID", "must be a UUID", "uuid"))?
        .hyphenated()
        .to_string())
}

fn ok_json(v: Value) -> Response {
    respond(StatusCode::OK, &v)
}

fn not_found(what: &str) -> ApiError {
    ApiError::NotFound(ErrorItem::new("NOT_FOUND", format!("no such {what}"), ""))
}

fn deleted() -> Response {
    ok_json(json!({ "deleted": true }))
}

async fn stats(State(st): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let counts = stats::row_counts(&mut tx).await?;
    tx.commit().await?;
    let out: serde_json::Map<String, Value> = counts
        .into_iter()
        .map(|(table, n)| (table.to_owned(), Value::from(n)))
        .collect();
    Ok(ok_json(Value::Object(out)))
}

/// A kind of record a DELETE by the path's one key removes (what else goes with it is the
/// store's business), so one handler, [`delete_by_key`], serves every such kind.
trait Deletable: Copy + Send + Sync + 'static {
    /// What a 404 calls a record ("no such …").
    fn what(self) -> &'static str;

    /// Deletes the record `key` names; whether there was one.
    fn delete(
        self,
        tx: &mut Tx,
        key: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// The records deleted by key that are not reference data (see [`reference_data`]).
#[derive(Debug, Clone, Copy)]
enum Record {
    /// An eRX object configuration, by object name.
    ObjectConfig,
    /// A missing-information group, by ID.
    Group,
    /// A data request, by UUID.
    DataRequest,
    /// A patient's or another party's account, by external ID.
    Account,
}

impl Deletable for Record {
    fn what(self) -> &'static str {
        match self {
            Record::ObjectConfig => "object configuration",
            Record::Group => "missing-information group",
            Record::DataRequest => "data request",
            Record::Account => "account",
        }
    }

    async fn delete(self, tx: &mut Tx, key: &str) -> Result<bool, StoreError> {
        match self {
            Record::ObjectConfig => store::objects::delete(tx, key).await,
            Record::Group => groups::delete(tx, key).await,
            Record::DataRequest => data_requests::delete(tx, key).await,
            Record::Account => records::delete_account(tx, key).await,
        }
    }
}

/// A DELETE handler that removes the record whose key is the path's one parameter.
fn delete_by_key(kind: impl Deletable) -> MethodRouter<AppState> {
    axum::routing::delete(
        move |State(st): State<AppState>, Path(key): Path<String>, headers: HeaderMap| async move {
            let mut tx = begin_admin(&st, &headers).await?;
            if !kind.delete(&mut tx, &key).await? {
                return Err(not_found(kind.what()));
            }
            tx.commit().await?;
            // A deleted data request announced its deletion in the transaction.
            st.events().notify();
            Ok::<_, ApiError>(deleted())
        },
    )
}

/// A configured field in admin bodies.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FieldBody {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    length: Option<i64>,
    #[serde(default)]
    scale: Option<i64>,
    #[serde(default)]
    picklist_values: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ObjectConfigBody {
    #[serde(default)]
    additional: bool,
    #[serde(default)]
    record_types: Vec<String>,
    #[serde(default)]
    fields: Vec<FieldBody>,
}

async fn put_object_config(
    State(st): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    check_api_name(&name, "objectName")?;
    let body: ObjectConfigBody = parse(body)?;
    let mut fields = Vec::with_capacity(body.fields.len());
    for (i, f) in body.fields.into_iter().enumerate() {
        check_api_name(&f.name, &format!("fields[{i}].name"))?;
        let def = field_def(
            &f.ty,
            f.length,
            f.scale,
            f.picklist_values,
            &format!("fields[{i}]"),
        )?;
        fields.push((f.name, def));
    }
    store::objects::put(&mut tx, &name, body.additional, &body.record_types, &fields).await?;
    tx.commit().await?;
    Ok(ok_json(json!({ "objectName": name })))
}

async fn list_object_configs(
    State(st): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let configs = store::objects::load_all(&mut tx).await?;
    tx.commit().await?;
    let mut names: Vec<&String> = configs.keys().collect();
    names.sort();
    let out: Vec<Value> = names
        .into_iter()
        .map(|n| {
            let c = &configs[n];
            let mut fields: Vec<Value> = c
                .fields
                .iter()
                .map(|(name, d)| json!({ "name": name, "type": d.ty.as_str(), "length": d.length, "scale": d.scale, "picklistValues": d.picklist }))
                .collect();
            fields.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
            json!({ "objectName": n, "additional": c.additional, "recordTypes": c.record_types, "fields": fields })
        })
        .collect();
    Ok(ok_json(Value::Array(out)))
}

/// A requested field in a missing-information group body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct GroupFieldBody {
    uuid: String,
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    length: Option<i64>,
    #[serde(default)]
    scale: Option<i64>,
    label: String,
    target_object: String,
    target_field: String,
    #[serde(default)]
    picklist_values: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupBody {
    name: String,
    fields: Vec<GroupFieldBody>,
}

/// The group a body describes; the first broken rule is a 400.
fn group_of(body: GroupBody) -> Result<Group, ApiError> {
    let mut fields = Vec::with_capacity(body.fields.len());
    for (i, f) in body.fields.into_iter().enumerate() {
        let path = format!("fields[{i}]");
        let def = field_def(&f.ty, f.length, f.scale, f.picklist_values, &path);
        fields.push(group_field(
            f.uuid,
            def,
            f.label,
            f.target_object,
            f.target_field,
            &path,
        )?);
    }
    Ok(Group {
        name: body.name,
        fields,
    })
}

async fn put_group(
    State(st): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    check_plain_id(&id, "groupId")?;
    let group = group_of(parse(body)?)?;
    match groups::put(&mut tx, &id, &group).await {
        Err(StoreError::Duplicate { index }) => {
            return Err(ApiError::Conflict(ErrorItem::new(
                "DUPLICATE_ID",
                "a field with this uuid already exists",
                &format!("fields[{index}].uuid"),
            )));
        }
        other => other?,
    }
    tx.commit().await?;
    Ok(ok_json(json!({ "id": id, "fields": group.fields.len() })))
}

async fn get_group(
    State(st): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let name = groups::name(&mut tx, &id)
        .await?
        .ok_or_else(|| not_found("missing-information group"))?;
    let fields = groups::fields(&mut tx, &id).await?;
    tx.commit().await?;
    let fields: Vec<Value> = fields
        .into_iter()
        .map(|f| {
            json!({
                "uuid": f.uuid,
                "type": f.def.ty.as_str(),
                "length": f.def.length,
                "scale": f.def.scale,
                "label": f.label,
                "targetObject": f.target_object,
                "targetField": f.target_field,
                "picklistValues": f.def.picklist,
            })
        })
        .collect();
    Ok(ok_json(json!({ "id": id, "name": name, "fields": fields })))
}

/// A data request in admin bodies.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct DataRequestBody {
    care_plan_external_id: String,
    group_id: String,
    status: String,
    expiration_date: String,
}

async fn put_data_request(
    State(st): State<AppState>,
    Path(raw): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let uuid = parse_uuid(&raw)?;
    let body: DataRequestBody = parse(body)?;
    check_data_request(&body.status, &body.expiration_date)?;
    let input = DataRequestInput {
        care_plan_external_id: body.care_plan_external_id,
        group_external_id: body.group_id,
        status: body.status,
        expiration_date: body.expiration_date,
    };
    data_requests::put(&mut tx, &uuid, &input).await?;
    // Created or changed, the request's Task status is announced to the worklist.
    let req = data_requests::find(&mut tx, &uuid)
        .await?
        .ok_or_else(|| ApiError::Internal("a data request just written is missing".into()))?;
    store::events::append(
        &mut tx,
        &uuid,
        EventStatus::Task(TaskStatus::of(&req)),
        req.holder.as_ref().map(|h| h.user_id),
    )
    .await?;
    tx.commit().await?;
    st.events().notify();
    Ok(ok_json(json!({ "uuid": uuid })))
}

async fn get_data_request(
    State(st): State<AppState>,
    Path(raw): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let uuid = parse_uuid(&raw)?;
    let req = data_requests::find(&mut tx, &uuid)
        .await?
        .ok_or_else(|| not_found("data request"))?;
    let history = data_requests::history(&mut tx, req.id).await?;
    let amendments = crate::store::amendments::list(&mut tx, req.id).await?;
    tx.commit().await?;
    // Each amendment with the values it replaced: the care admin's audit of what was
    // corrected (no other view shows a previous value).
    let amendments: Vec<Value> = amendments
        .into_iter()
        .map(|a| {
            json!({
                "at": a.at,
                "by": a.by_id,
                "byName": a.by_name,
                "changes": a.changed,
            })
        })
        .collect();
    let history: Vec<Value> = history
        .into_iter()
        .map(|h| {
            json!({
                "at": h.at,
                "userId": h.user_id,
                "method": h.method,
                "statusCode": h.status_code,
                "submittedFields": h.submitted_fields,
            })
        })
        .collect();
    Ok(ok_json(json!({
        "uuid": req.uuid,
        "carePlanExternalId": req.care_plan_external_id,
        "groupId": req.group_external_id,
        "status": req.status,
        "expirationDate": req.expiration_date,
        "history": history,
        "amendments": amendments,
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UserBody {
    name: String,
    #[serde(default)]
    admin: bool,
    #[serde(default)]
    permissions: Vec<Grant>,
}

async fn create_user(
    State(st): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let body: UserBody = parse(body)?;
    check_grants(&body.permissions)?;
    check_display_name(&body.name)?;
    let token =
        auth::new_token().map_err(|e| ApiError::Internal(format!("no OS randomness: {e}")))?;
    let id = users::create(&mut tx, &body.name, &token, body.admin, &body.permissions).await?;
    tx.commit().await?;
    // The token is shown once; only its hash is stored.
    Ok(respond(
        StatusCode::CREATED,
        &json!({ "id": id, "name": body.name, "admin": body.admin, "token": token }),
    ))
}

async fn user_row_id(tx: &mut Tx, external_id: &str) -> Result<i64, ApiError> {
    users::row_id(tx, external_id)
        .await?
        .ok_or_else(|| not_found("user"))
}

async fn list_users(State(st): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let mut out = Vec::new();
    for u in users::list(&mut tx).await? {
        let grants = users::list_grants(&mut tx, u.row_id).await?;
        out.push(json!({
            "id": u.external_id,
            "name": u.name,
            "admin": u.admin,
            "permissions": grants,
        }));
    }
    tx.commit().await?;
    Ok(ok_json(Value::Array(out)))
}

async fn put_permissions(
    State(st): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let grants: Vec<Grant> = parse(body)?;
    check_grants(&grants)?;
    let row_id = user_row_id(&mut tx, &id).await?;
    users::replace_grants(&mut tx, row_id, &grants).await?;
    tx.commit().await?;
    Ok(ok_json(json!({ "id": id, "permissions": grants })))
}

async fn delete_user(
    State(st): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let row_id = user_row_id(&mut tx, &id).await?;
    // Their claims go back to the worklist, announced: a claim must not outlive its holder
    // (nor pass, on SQLite, to a later user given the same row id).
    for uuid in store::worklist::release_all_of(&mut tx, row_id).await? {
        if let Some(req) = data_requests::find(&mut tx, &uuid).await? {
            store::events::append(
                &mut tx,
                &uuid,
                EventStatus::Task(TaskStatus::of(&req)),
                None,
            )
            .await?;
        }
    }
    users::delete(&mut tx, row_id).await?;
    tx.commit().await?;
    st.events().notify();
    Ok(deleted())
}

async fn get_care_plan(
    State(st): State<AppState>,
    Path(ext): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let plan = records::care_plan(&mut tx, &ext)
        .await?
        .ok_or_else(|| not_found("care plan"))?;
    let patient = match records::patient(&mut tx, plan.patient_account_id).await? {
        Some(p) => json!({
            "externalId": p.external_id,
            "firstName": p.first_name,
            "middleName": p.middle_name,
            "lastName": p.last_name,
            "gender": p.gender,
            "dateOfBirth": p.birthdate,
            "additionalFields":
                records::record_fields(&mut tx, objects::ACCOUNT, plan.patient_account_id).await?,
        }),
        None => Value::Null,
    };
    let extra = records::record_fields(&mut tx, objects::CARE_PLAN, plan.id).await?;
    tx.commit().await?;
    Ok(ok_json(json!({
        "externalId": ext,
        "programApiName": plan.program_api_name,
        "enrollmentDate": plan.enrollment_date,
        "patient": patient,
        "additionalFields": extra,
    })))
}

async fn get_erx_request(
    State(st): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let r = erx::find(&mut tx, &id)
        .await?
        .ok_or_else(|| not_found("eRX request"))?;
    tx.commit().await?;
    Ok(ok_json(json!({
        "id": r.external_id,
        "receivedAt": r.received_at,
        "outcome": r.outcome,
        "errors": r.errors,
        "carePlanExternalId": r.care_plan_external_id,
        "payload": r.payload,
    })))
}
