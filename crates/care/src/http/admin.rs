//! The admin API under `{base}/admin`: reference data (vendors, programs, products, data use
//! purposes, eRX object configuration, missing-information groups, data requests) and users.
//! Admin tokens only. PUT creates or replaces by the identifier in the path.

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{MethodRouter, get, put};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::Row;

use super::error::{ApiError, ErrorItem, is_unique_violation};
use super::{AppState, begin_as_caller, body_bytes, json as respond};
use crate::auth::{self, Grant, objects};
use crate::db::{Tx, json_strings, now};
use crate::fields::{self, FieldType};
use crate::missing_info::STATUSES;

/// Routes of the admin API (nested under `{base}/admin`).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/stats", get(stats))
        .route("/vendors", get(list_vendors))
        .route(
            "/vendors/{name}",
            put(put_vendor).merge(delete_by_key(
                "DELETE FROM vendor WHERE api_name = $1",
                "vendor",
            )),
        )
        .route("/programs", get(list_programs))
        .route(
            "/programs/{name}",
            put(put_program).merge(delete_by_key(
                "DELETE FROM program WHERE api_name = $1",
                "program",
            )),
        )
        .route("/products", get(list_products))
        .route(
            "/products/{id}",
            put(put_product).merge(delete_by_key(
                "DELETE FROM product WHERE product_code = $1",
                "product",
            )),
        )
        .route("/data-use-purposes", get(list_purposes))
        .route(
            "/data-use-purposes/{id}",
            put(put_purpose).merge(delete_by_key(
                "DELETE FROM data_use_purpose WHERE external_id = $1",
                "data use purpose",
            )),
        )
        .route("/object-configs", get(list_object_configs))
        .route(
            "/object-configs/{name}",
            put(put_object_config).delete(delete_object_config),
        )
        .route(
            "/missing-info-groups/{id}",
            get(get_group).put(put_group).delete(delete_group),
        )
        .route(
            "/data-requests/{uuid}",
            get(get_data_request)
                .put(put_data_request)
                .merge(delete_by_key(
                    "DELETE FROM data_request WHERE external_id = $1",
                    "data request",
                )),
        )
        .route("/users", get(list_users).post(create_user))
        .route("/users/{id}", axum::routing::delete(delete_user))
        .route("/users/{id}/permissions", put(put_permissions))
        .route(
            "/accounts/{external_id}",
            delete_by_key("DELETE FROM account WHERE external_id = $1", "account"),
        )
        .route("/care-plans/{external_id}", get(get_care_plan))
        .route("/erx-requests/{id}", get(get_erx_request))
        .layer(axum::middleware::from_fn(reject_nul_in_path))
}

/// Identifiers in admin paths are stored as text; PostgreSQL text cannot hold NUL.
async fn reject_nul_in_path(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    if req.uri().path().contains("%00") {
        return axum::response::IntoResponse::into_response(bad(
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
        return Err(bad(
            "INVALID_BODY",
            "text must not contain NUL characters",
            "",
        ));
    }
    serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request("INVALID_BODY", e.to_string(), ""))
}

fn bad(code: &'static str, message: impl Into<String>, path: &str) -> ApiError {
    ApiError::bad_request(code, message, path)
}

/// API names (vendors, programs, objects) are letters, digits and `_`, so that the care-plan
/// external ID formula stays unambiguous.
fn check_api_name(name: &str, path: &str) -> Result<(), ApiError> {
    if name.is_empty()
        || name.len() > 80
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(bad(
            "INVALID_NAME",
            "must be 1-80 letters, digits or '_'",
            path,
        ));
    }
    Ok(())
}

fn check_plain_id(id: &str, path: &str) -> Result<(), ApiError> {
    if id.trim().is_empty() || id.chars().count() > 80 {
        return Err(bad("INVALID_NAME", "must be 1-80 characters", path));
    }
    Ok(())
}

fn ok_json(v: Value) -> Response {
    respond(StatusCode::OK, &v)
}

fn not_found(what: &str) -> ApiError {
    ApiError::NotFound(ErrorItem::new("NOT_FOUND", format!("no such {what}"), ""))
}

async fn delete_where(
    tx: &mut Tx,
    sql: &'static str,
    key: String,
    what: &str,
) -> Result<(), ApiError> {
    let done = sqlx::query(sql).bind(key).execute(&mut **tx).await?;
    if done.rows_affected() == 0 {
        return Err(not_found(what));
    }
    Ok(())
}

async fn stats(State(st): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let mut out = serde_json::Map::new();
    for table in [
        "care_plan",
        "account",
        "contact_point",
        "consent",
        "member_plan",
        "prescription",
        "additional_record",
        "record_field",
        "erx_request",
        "data_request",
        "data_request_history",
        "app_user",
    ] {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        let n: i64 = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_one(&mut *tx)
            .await?
            .try_get(0)?;
        out.insert(table.to_owned(), Value::from(n));
    }
    tx.commit().await?;
    Ok(ok_json(Value::Object(out)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NamedBody {
    name: String,
}

async fn list_named(
    st: &AppState,
    headers: &HeaderMap,
    sql: &'static str,
    key: &str,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(st, headers).await?;
    let rows = sqlx::query(sql).fetch_all(&mut *tx).await?;
    let mut out = Vec::new();
    for r in rows {
        out.push(json!({ key: r.try_get::<String, _>(0)?, "name": r.try_get::<String, _>(1)? }));
    }
    tx.commit().await?;
    Ok(ok_json(Value::Array(out)))
}

async fn list_vendors(
    State(st): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    list_named(
        &st,
        &headers,
        "SELECT api_name, name FROM vendor ORDER BY api_name",
        "apiName",
    )
    .await
}

async fn list_programs(
    State(st): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    list_named(
        &st,
        &headers,
        "SELECT api_name, name FROM program ORDER BY api_name",
        "apiName",
    )
    .await
}

async fn list_purposes(
    State(st): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    list_named(
        &st,
        &headers,
        "SELECT external_id, name FROM data_use_purpose ORDER BY external_id",
        "externalId",
    )
    .await
}

async fn put_named(
    st: &AppState,
    headers: &HeaderMap,
    sql: &'static str,
    key: String,
    key_ok: Result<(), ApiError>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(st, headers).await?;
    key_ok?;
    let body: NamedBody = parse(body)?;
    if body.name.trim().is_empty() || body.name.chars().count() > 255 {
        return Err(bad(
            "INVALID_NAME",
            "'name' must be 1-255 characters",
            "name",
        ));
    }
    sqlx::query(sql)
        .bind(key.clone())
        .bind(body.name.clone())
        .bind(now())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(ok_json(json!({ "id": key, "name": body.name })))
}

async fn put_vendor(
    State(st): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    put_named(
        &st,
        &headers,
        "INSERT INTO vendor (api_name, name, created_at) VALUES ($1, $2, $3) \
        ON CONFLICT (api_name) DO UPDATE SET name = excluded.name",
        name.clone(),
        check_api_name(&name, "apiName"),
        body,
    )
    .await
}

async fn put_program(
    State(st): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    put_named(
        &st,
        &headers,
        "INSERT INTO program (api_name, name, created_at) VALUES ($1, $2, $3) \
        ON CONFLICT (api_name) DO UPDATE SET name = excluded.name",
        name.clone(),
        check_api_name(&name, "apiName"),
        body,
    )
    .await
}

async fn put_purpose(
    State(st): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    put_named(
        &st,
        &headers,
        "INSERT INTO data_use_purpose (external_id, name, created_at) VALUES ($1, $2, $3) \
        ON CONFLICT (external_id) DO UPDATE SET name = excluded.name",
        id.clone(),
        check_plain_id(&id, "externalId"),
        body,
    )
    .await
}

/// A DELETE handler that removes the record whose key is the path's one parameter.
///
/// Reference data has no dependants to cascade to (references are soft), so one parametrised
/// handler serves every simple kind; `sql` takes the key as `$1`.
fn delete_by_key(sql: &'static str, what: &'static str) -> MethodRouter<AppState> {
    axum::routing::delete(
        move |State(st): State<AppState>, Path(key): Path<String>, headers: HeaderMap| async move {
            let mut tx = begin_admin(&st, &headers).await?;
            delete_where(&mut tx, sql, key, what).await?;
            tx.commit().await?;
            Ok::<_, ApiError>(ok_json(json!({ "deleted": true })))
        },
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ProductBody {
    name: String,
    program_api_name: String,
}

async fn put_product(
    State(st): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    check_plain_id(&id, "productId")?;
    let body: ProductBody = parse(body)?;
    check_api_name(&body.program_api_name, "programApiName")?;
    sqlx::query(
        "INSERT INTO product (product_code, name, program_api_name, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (product_code) DO UPDATE SET name = excluded.name, program_api_name = excluded.program_api_name",
    )
    .bind(id.clone())
    .bind(body.name.clone())
    .bind(body.program_api_name.clone())
    .bind(now())
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(ok_json(
        json!({ "id": id, "name": body.name, "programApiName": body.program_api_name }),
    ))
}

async fn list_products(
    State(st): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let rows = sqlx::query(
        "SELECT product_code, name, program_api_name FROM product ORDER BY product_code",
    )
    .fetch_all(&mut *tx)
    .await?;
    let mut out = Vec::new();
    for r in rows {
        out.push(json!({
            "id": r.try_get::<String, _>(0)?,
            "name": r.try_get::<String, _>(1)?,
            "programApiName": r.try_get::<String, _>(2)?,
        }));
    }
    tx.commit().await?;
    Ok(ok_json(Value::Array(out)))
}

/// A configured field in admin bodies.
#[derive(Debug, Clone, Serialize, Deserialize)]
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

fn check_field_def(
    ty: &str,
    length: Option<i64>,
    scale: Option<i64>,
    picklist: &[String],
    path: &str,
) -> Result<(), ApiError> {
    let Some(t) = FieldType::parse(ty) else {
        let all: Vec<&str> = FieldType::ALL.iter().map(|t| t.as_str()).collect();
        return Err(bad(
            "INVALID_TYPE",
            format!("type must be one of {}", all.join(", ")),
            path,
        ));
    };
    if length.is_some_and(|l| !(1..=131_072).contains(&l))
        || scale.is_some_and(|s| !(0..=18).contains(&s))
    {
        return Err(bad(
            "INVALID_VALUE",
            "length must be 1-131072 and scale 0-18",
            path,
        ));
    }
    if t == FieldType::Picklist && picklist.is_empty() {
        return Err(bad(
            "INVALID_VALUE",
            "a PICKLIST needs picklistValues",
            path,
        ));
    }
    Ok(())
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
    for (i, f) in body.fields.iter().enumerate() {
        check_api_name(&f.name, &format!("fields[{i}].name"))?;
        check_field_def(
            &f.ty,
            f.length,
            f.scale,
            &f.picklist_values,
            &format!("fields[{i}]"),
        )?;
    }
    put_object_config_tx(
        &mut tx,
        &name,
        body.additional,
        &body.record_types,
        &body.fields,
    )
    .await?;
    tx.commit().await?;
    Ok(ok_json(json!({ "objectName": name })))
}

async fn put_object_config_tx(
    tx: &mut Tx,
    name: &str,
    additional: bool,
    record_types: &[String],
    fields: &[FieldBody],
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO object_config (object_name, is_additional, record_types, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (object_name) DO UPDATE SET is_additional = excluded.is_additional, record_types = excluded.record_types",
    )
    .bind(name.to_owned())
    .bind(i64::from(additional))
    .bind(serde_json::to_string(record_types).unwrap_or_else(|_| "[]".into()))
    .bind(now())
    .execute(&mut **tx)
    .await?;
    sqlx::query("DELETE FROM object_config_field WHERE object_name = $1")
        .bind(name.to_owned())
        .execute(&mut **tx)
        .await?;
    for f in fields {
        sqlx::query(
            "INSERT INTO object_config_field (object_name, field_name, field_type, length, scale, picklist) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(name.to_owned())
        .bind(f.name.clone())
        .bind(f.ty.clone())
        .bind(f.length)
        .bind(f.scale)
        .bind((!f.picklist_values.is_empty()).then(|| serde_json::to_string(&f.picklist_values).unwrap_or_default()))
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

async fn delete_object_config(
    State(st): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    delete_where(
        &mut tx,
        "DELETE FROM object_config WHERE object_name = $1",
        name.clone(),
        "object configuration",
    )
    .await?;
    sqlx::query("DELETE FROM object_config_field WHERE object_name = $1")
        .bind(name)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(ok_json(json!({ "deleted": true })))
}

async fn list_object_configs(
    State(st): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let configs = crate::enrollment::store::load_object_configs(&mut tx).await?;
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
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct GroupFieldBody {
    pub uuid: String,
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(default)]
    pub length: Option<i64>,
    #[serde(default)]
    pub scale: Option<i64>,
    pub label: String,
    pub target_object: String,
    pub target_field: String,
    #[serde(default)]
    pub picklist_values: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GroupBody {
    pub name: String,
    pub fields: Vec<GroupFieldBody>,
}

fn check_group(body: &GroupBody) -> Result<(), ApiError> {
    for (i, f) in body.fields.iter().enumerate() {
        let p = format!("fields[{i}]");
        if uuid::Uuid::try_parse(&f.uuid).is_err() {
            return Err(bad(
                "INVALID_UUID",
                "uuid must be a UUID",
                &format!("{p}.uuid"),
            ));
        }
        check_field_def(&f.ty, f.length, f.scale, &f.picklist_values, &p)?;
        if f.target_object != objects::ACCOUNT && f.target_object != objects::CARE_PLAN {
            return Err(bad(
                "INVALID_VALUE",
                "targetObject must be Account or CarePlan",
                &format!("{p}.targetObject"),
            ));
        }
        check_api_name(&f.target_field, &format!("{p}.targetField"))?;
    }
    Ok(())
}

/// Creates or replaces a missing-information group and its fields.
pub(crate) async fn put_group_tx(tx: &mut Tx, id: &str, body: &GroupBody) -> Result<(), ApiError> {
    sqlx::query(
        "INSERT INTO mi_group (external_id, name, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (external_id) DO UPDATE SET name = excluded.name",
    )
    .bind(id.to_owned())
    .bind(body.name.clone())
    .bind(now())
    .execute(&mut **tx)
    .await?;
    sqlx::query("DELETE FROM mi_group_field WHERE group_external_id = $1")
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    for (i, f) in body.fields.iter().enumerate() {
        let r = sqlx::query(
            "INSERT INTO mi_group_field (external_id, group_external_id, position, field_type, length, scale, label, \
             target_object, target_field, picklist) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(f.uuid.to_lowercase())
        .bind(id.to_owned())
        .bind(i64::try_from(i).unwrap_or(i64::MAX))
        .bind(f.ty.clone())
        .bind(f.length)
        .bind(f.scale)
        .bind(f.label.clone())
        .bind(f.target_object.clone())
        .bind(f.target_field.clone())
        .bind((!f.picklist_values.is_empty()).then(|| serde_json::to_string(&f.picklist_values).unwrap_or_default()))
        .execute(&mut **tx)
        .await;
        if let Err(e) = r {
            if is_unique_violation(&e) {
                return Err(ApiError::Conflict(ErrorItem::new(
                    "DUPLICATE_ID",
                    "a field with this uuid already exists",
                    &format!("fields[{i}].uuid"),
                )));
            }
            return Err(e.into());
        }
    }
    Ok(())
}

async fn put_group(
    State(st): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    check_plain_id(&id, "groupId")?;
    let body: GroupBody = parse(body)?;
    check_group(&body)?;
    put_group_tx(&mut tx, &id, &body).await?;
    tx.commit().await?;
    Ok(ok_json(json!({ "id": id, "fields": body.fields.len() })))
}

async fn get_group(
    State(st): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let name: String = sqlx::query("SELECT name FROM mi_group WHERE external_id = $1")
        .bind(id.clone())
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| not_found("missing-information group"))?
        .try_get(0)?;
    let rows = sqlx::query(
        "SELECT external_id, field_type, length, scale, label, target_object, target_field, picklist \
         FROM mi_group_field WHERE group_external_id = $1 ORDER BY position",
    )
    .bind(id.clone())
    .fetch_all(&mut *tx)
    .await?;
    let mut fields = Vec::new();
    for r in rows {
        let picklist: Option<String> = r.try_get(7)?;
        fields.push(json!({
            "uuid": r.try_get::<String, _>(0)?,
            "type": r.try_get::<String, _>(1)?,
            "length": r.try_get::<Option<i64>, _>(2)?,
            "scale": r.try_get::<Option<i64>, _>(3)?,
            "label": r.try_get::<String, _>(4)?,
            "targetObject": r.try_get::<String, _>(5)?,
            "targetField": r.try_get::<String, _>(6)?,
            "picklistValues": picklist.as_deref().map(json_strings).unwrap_or_default(),
        }));
    }
    tx.commit().await?;
    Ok(ok_json(json!({ "id": id, "name": name, "fields": fields })))
}

async fn delete_group(
    State(st): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    delete_where(
        &mut tx,
        "DELETE FROM mi_group WHERE external_id = $1",
        id.clone(),
        "missing-information group",
    )
    .await?;
    sqlx::query("DELETE FROM mi_group_field WHERE group_external_id = $1")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(ok_json(json!({ "deleted": true })))
}

/// A data request in admin bodies.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct DataRequestBody {
    pub care_plan_external_id: String,
    pub group_id: String,
    pub status: String,
    pub expiration_date: String,
}

/// Creates or replaces a data request.
pub(crate) async fn put_data_request_tx(
    tx: &mut Tx,
    uuid: &str,
    b: &DataRequestBody,
) -> Result<(), sqlx::Error> {
    let ts = now();
    sqlx::query(
        "INSERT INTO data_request (external_id, care_plan_external_id, group_external_id, status, expiration_date, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (external_id) DO UPDATE SET \
         care_plan_external_id = excluded.care_plan_external_id, group_external_id = excluded.group_external_id, \
         status = excluded.status, expiration_date = excluded.expiration_date, updated_at = excluded.updated_at",
    )
    .bind(uuid.to_owned())
    .bind(b.care_plan_external_id.clone())
    .bind(b.group_id.clone())
    .bind(b.status.clone())
    .bind(b.expiration_date.clone())
    .bind(ts)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn put_data_request(
    State(st): State<AppState>,
    Path(raw): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let uuid = uuid::Uuid::try_parse(&raw)
        .map_err(|_| bad("INVALID_UUID", "must be a UUID", "uuid"))?
        .hyphenated()
        .to_string();
    let body: DataRequestBody = parse(body)?;
    if !STATUSES.contains(&body.status.as_str()) {
        return Err(bad(
            "INVALID_VALUE",
            format!("status must be one of {}", STATUSES.join(", ")),
            "status",
        ));
    }
    if !fields::is_date(&body.expiration_date) {
        return Err(bad(
            "INVALID_DATE",
            "expirationDate must be yyyy-mm-dd",
            "expirationDate",
        ));
    }
    put_data_request_tx(&mut tx, &uuid, &body).await?;
    tx.commit().await?;
    Ok(ok_json(json!({ "uuid": uuid })))
}

async fn get_data_request(
    State(st): State<AppState>,
    Path(raw): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let uuid = uuid::Uuid::try_parse(&raw)
        .map_err(|_| bad("INVALID_UUID", "must be a UUID", "uuid"))?
        .hyphenated()
        .to_string();
    let req = crate::missing_info::find(&mut tx, &uuid)
        .await?
        .ok_or_else(|| not_found("data request"))?;
    let rows = sqlx::query(
        "SELECT at, user_id, method, status_code, submitted_fields FROM data_request_history \
         WHERE data_request_id = $1 ORDER BY id",
    )
    .bind(req.id)
    .fetch_all(&mut *tx)
    .await?;
    let mut history = Vec::new();
    for r in rows {
        let submitted: String = r.try_get(4)?;
        history.push(json!({
            "at": r.try_get::<i64, _>(0)?,
            "userId": r.try_get::<Option<i64>, _>(1)?,
            "method": r.try_get::<String, _>(2)?,
            "statusCode": r.try_get::<i64, _>(3)?,
            "submittedFields": json_strings(&submitted),
        }));
    }
    tx.commit().await?;
    Ok(ok_json(json!({
        "uuid": req.uuid,
        "carePlanExternalId": req.care_plan_external_id,
        "groupId": req.group_external_id,
        "status": req.status,
        "expirationDate": req.expiration_date,
        "history": history,
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

fn check_grants(grants: &[Grant]) -> Result<(), ApiError> {
    for (i, g) in grants.iter().enumerate() {
        if !objects::ALL.contains(&g.object.as_str()) {
            return Err(bad(
                "INVALID_VALUE",
                format!("object must be one of {}", objects::ALL.join(", ")),
                &format!("permissions[{i}].object"),
            ));
        }
    }
    Ok(())
}

async fn create_user(
    State(st): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let body: UserBody = parse(body)?;
    check_grants(&body.permissions)?;
    if body.name.trim().is_empty() || body.name.chars().count() > 255 {
        return Err(bad(
            "INVALID_NAME",
            "'name' must be 1-255 characters",
            "name",
        ));
    }
    let token =
        auth::new_token().map_err(|e| ApiError::Internal(format!("no OS randomness: {e}")))?;
    let id = auth::create_user(&mut tx, &body.name, &token, body.admin, &body.permissions).await?;
    tx.commit().await?;
    // The token is shown once; only its hash is stored.
    Ok(respond(
        StatusCode::CREATED,
        &json!({ "id": id, "name": body.name, "admin": body.admin, "token": token }),
    ))
}

async fn user_row_id(tx: &mut Tx, external_id: &str) -> Result<i64, ApiError> {
    Ok(
        sqlx::query("SELECT id FROM app_user WHERE external_id = $1")
            .bind(external_id.to_owned())
            .fetch_optional(&mut **tx)
            .await?
            .ok_or_else(|| not_found("user"))?
            .try_get(0)?,
    )
}

async fn list_users(State(st): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let rows =
        sqlx::query("SELECT id, external_id, name, is_admin FROM app_user ORDER BY name, id")
            .fetch_all(&mut *tx)
            .await?;
    let mut out = Vec::new();
    for r in rows {
        let grants = auth::list_grants(&mut tx, r.try_get(0)?).await?;
        out.push(json!({
            "id": r.try_get::<String, _>(1)?,
            "name": r.try_get::<String, _>(2)?,
            "admin": r.try_get::<i64, _>(3)? != 0,
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
    auth::replace_grants(&mut tx, row_id, &grants).await?;
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
    sqlx::query("DELETE FROM user_permission WHERE user_id = $1")
        .bind(row_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM app_user WHERE id = $1")
        .bind(row_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(ok_json(json!({ "deleted": true })))
}

async fn get_care_plan(
    State(st): State<AppState>,
    Path(ext): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let plan = sqlx::query("SELECT id, program_api_name, patient_account_id, enrollment_date FROM care_plan WHERE external_id = $1")
        .bind(ext.clone())
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| not_found("care plan"))?;
    let plan_id: i64 = plan.try_get(0)?;
    let patient_id: i64 = plan.try_get(2)?;
    let patient = sqlx::query(
        "SELECT external_id, first_name, middle_name, last_name, gender, birthdate FROM account WHERE id = $1",
    )
    .bind(patient_id)
    .fetch_optional(&mut *tx)
    .await?;
    let patient = match patient {
        Some(r) => json!({
            "externalId": r.try_get::<String, _>(0)?,
            "firstName": r.try_get::<Option<String>, _>(1)?,
            "middleName": r.try_get::<Option<String>, _>(2)?,
            "lastName": r.try_get::<Option<String>, _>(3)?,
            "gender": r.try_get::<Option<String>, _>(4)?,
            "dateOfBirth": r.try_get::<Option<String>, _>(5)?,
            "additionalFields": record_fields(&mut tx, objects::ACCOUNT, patient_id).await?,
        }),
        None => Value::Null,
    };
    let extra = record_fields(&mut tx, objects::CARE_PLAN, plan_id).await?;
    tx.commit().await?;
    Ok(ok_json(json!({
        "externalId": ext,
        "programApiName": plan.try_get::<String, _>(1)?,
        "enrollmentDate": plan.try_get::<String, _>(3)?,
        "patient": patient,
        "additionalFields": extra,
    })))
}

async fn record_fields(tx: &mut Tx, object: &str, id: i64) -> Result<Value, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT field_name, value_json FROM record_field WHERE object_name = $1 AND record_id = $2",
    )
    .bind(object.to_owned())
    .bind(id)
    .fetch_all(&mut **tx)
    .await?;
    let mut out = serde_json::Map::new();
    for r in rows {
        let v: String = r.try_get(1)?;
        out.insert(
            r.try_get(0)?,
            serde_json::from_str(&v).unwrap_or(Value::Null),
        );
    }
    Ok(Value::Object(out))
}

async fn get_erx_request(
    State(st): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let r = sqlx::query(
        "SELECT external_id, received_at, outcome, errors, care_plan_external_id, payload FROM erx_request WHERE external_id = $1",
    )
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| not_found("eRX request"))?;
    let errors: String = r.try_get(3)?;
    let out = json!({
        "id": r.try_get::<String, _>(0)?,
        "receivedAt": r.try_get::<i64, _>(1)?,
        "outcome": r.try_get::<String, _>(2)?,
        "errors": serde_json::from_str::<Value>(&errors).unwrap_or(Value::Null),
        "carePlanExternalId": r.try_get::<Option<String>, _>(4)?,
        "payload": r.try_get::<String, _>(5)?,
    });
    tx.commit().await?;
    Ok(ok_json(out))
}

/// Used by the demo loader to share the admin validation of a group.
pub(crate) fn validate_group(body: &GroupBody) -> Result<(), ApiError> {
    check_group(body)
}

/// Used by the demo loader to create object configurations.
pub(crate) async fn demo_object_config(
    tx: &mut Tx,
    name: &str,
    additional: bool,
    record_types: &[&str],
    fields: &[(&str, &str, Option<i64>, Option<i64>)],
) -> Result<(), sqlx::Error> {
    let record_types: Vec<String> = record_types.iter().map(|s| (*s).to_owned()).collect();
    let fields: Vec<FieldBody> = fields
        .iter()
        .map(|(n, t, l, s)| FieldBody {
            name: (*n).into(),
            ty: (*t).into(),
            length: *l,
            scale: *s,
            picklist_values: vec![],
        })
        .collect();
    put_object_config_tx(tx, name, additional, &record_types, &fields).await
}
