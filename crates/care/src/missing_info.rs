//! Missing-information requests: data requests, their group's field definitions, the
//! records they fill, and the request-history trail.

use serde::Serialize;
use serde_json::Value;
use sqlx::Row;

use crate::auth::objects;
use crate::db::{Tx, json_strings, now};
use crate::fields::{FieldDef, FieldType};
use crate::http::error::{ApiError, ErrorItem};

/// Status of a data request that accepts GET and POST (with an unexpired date).
pub const ACTIVE: &str = "Active";
/// Status after a successful POST.
pub const COMPLETED: &str = "Completed";
/// All statuses a data request can have; every one but `Active` is "no longer active".
pub const STATUSES: &[&str] = &[ACTIVE, COMPLETED, "Ended", "Cancelled"];

/// The data request a UUID names.
#[derive(Debug, Clone)]
pub struct DataRequest {
    /// Row id (history records point to it).
    pub id: i64,
    /// The UUID.
    pub uuid: String,
    /// External ID of its care plan.
    pub care_plan_external_id: String,
    /// External ID of its missing-information group.
    pub group_external_id: String,
    /// Status (see [`STATUSES`]).
    pub status: String,
    /// `yyyy-mm-dd`; the request is expired after that day (UTC).
    pub expiration_date: String,
}

/// One requested field: its definition and the record field it fills.
#[derive(Debug, Clone)]
pub struct GroupField {
    /// The field's UUID.
    pub uuid: String,
    /// Type and limits.
    pub def: FieldDef,
    /// Display label.
    pub label: String,
    /// `Account` (the care plan's patient) or `CarePlan`.
    pub target_object: String,
    /// Field of the target record.
    pub target_field: String,
}

/// The records a data request touches, once all are found.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Row id of the care plan.
    pub care_plan_id: i64,
    /// Row id of the patient account.
    pub patient_account_id: i64,
    /// Display name of the care program.
    pub program_name: String,
    /// Requested fields, in order.
    pub fields: Vec<GroupField>,
}

/// One field of the GET body (the spec's shape).
#[derive(Debug, Serialize)]
pub struct FieldView {
    uuid: String,
    #[serde(rename = "type")]
    ty: &'static str,
    scale: Option<i64>,
    length: Option<i64>,
    label: String,
}

/// The GET body.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestView {
    uuid: String,
    fields: Vec<FieldView>,
    expiration_date: String,
    drug_program: String,
}

/// Finds a data request by UUID.
pub async fn find(tx: &mut Tx, uuid: &str) -> Result<Option<DataRequest>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT id, external_id, care_plan_external_id, group_external_id, status, expiration_date \
         FROM data_request WHERE external_id = $1",
    )
    .bind(uuid.to_owned())
    .fetch_optional(&mut **tx)
    .await?;
    row.map(|r| {
        Ok(DataRequest {
            id: r.try_get(0)?,
            uuid: r.try_get(1)?,
            care_plan_external_id: r.try_get(2)?,
            group_external_id: r.try_get(3)?,
            status: r.try_get(4)?,
            expiration_date: r.try_get(5)?,
        })
    })
    .transpose()
}

/// 409 unless the request is active and not past its expiration date.
pub fn check_active(req: &DataRequest) -> Result<(), ApiError> {
    if req.status != ACTIVE {
        return Err(ApiError::Conflict(ErrorItem::new(
            "REQUEST_NOT_ACTIVE",
            format!(
                "the data request is no longer active (status {})",
                req.status
            ),
            "",
        )));
    }
    if req.expiration_date < crate::fields::today() {
        return Err(ApiError::Conflict(ErrorItem::new(
            "REQUEST_EXPIRED",
            format!("the data request expired on {}", req.expiration_date),
            "",
        )));
    }
    Ok(())
}

fn missing(code: &'static str, what: &str) -> ApiError {
    ApiError::NotFound(ErrorItem::new(
        code,
        format!("the {what} of this data request is missing"),
        "",
    ))
}

/// Finds the care plan, program, group with its fields, and patient account; 404 naming the
/// first one missing.
pub async fn resolve(tx: &mut Tx, req: &DataRequest) -> Result<Resolved, ApiError> {
    let plan = sqlx::query(
        "SELECT id, program_api_name, patient_account_id FROM care_plan WHERE external_id = $1",
    )
    .bind(req.care_plan_external_id.clone())
    .fetch_optional(&mut **tx)
    .await?
    .ok_or_else(|| missing("CARE_PLAN_NOT_FOUND", "care plan"))?;
    let care_plan_id: i64 = plan.try_get(0)?;
    let program: String = plan.try_get(1)?;
    let patient_account_id: i64 = plan.try_get(2)?;
    let program_name: String = sqlx::query("SELECT name FROM program WHERE api_name = $1")
        .bind(program)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or_else(|| missing("CARE_PROGRAM_NOT_FOUND", "care program"))?
        .try_get(0)?;
    sqlx::query("SELECT id FROM mi_group WHERE external_id = $1")
        .bind(req.group_external_id.clone())
        .fetch_optional(&mut **tx)
        .await?
        .ok_or_else(|| missing("GROUP_NOT_FOUND", "missing-information group metadata"))?;
    sqlx::query("SELECT id FROM account WHERE id = $1")
        .bind(patient_account_id)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or_else(|| missing("PATIENT_ACCOUNT_NOT_FOUND", "patient account"))?;
    let rows = sqlx::query(
        "SELECT external_id, field_type, length, scale, label, target_object, target_field, picklist \
         FROM mi_group_field WHERE group_external_id = $1 ORDER BY position, external_id",
    )
    .bind(req.group_external_id.clone())
    .fetch_all(&mut **tx)
    .await?;
    let mut fields = Vec::with_capacity(rows.len());
    for r in rows {
        let ty: String = r.try_get(1)?;
        let ty = FieldType::parse(&ty)
            .ok_or_else(|| ApiError::Internal("unknown field type in group metadata".into()))?;
        let picklist: Option<String> = r.try_get(7)?;
        fields.push(GroupField {
            uuid: r.try_get(0)?,
            def: FieldDef {
                ty,
                length: r.try_get(2)?,
                scale: r.try_get(3)?,
                picklist: picklist.as_deref().map(json_strings).unwrap_or_default(),
            },
            label: r.try_get(4)?,
            target_object: r.try_get(5)?,
            target_field: r.try_get(6)?,
        });
    }
    Ok(Resolved {
        care_plan_id,
        patient_account_id,
        program_name,
        fields,
    })
}

/// The GET body of a resolved request.
pub fn view(req: &DataRequest, r: &Resolved) -> RequestView {
    RequestView {
        uuid: req.uuid.clone(),
        fields: r
            .fields
            .iter()
            .map(|f| FieldView {
                uuid: f.uuid.clone(),
                ty: f.def.ty.as_str(),
                scale: f.def.scale,
                length: f.def.length,
                label: f.label.clone(),
            })
            .collect(),
        expiration_date: req.expiration_date.clone(),
        drug_program: r.program_name.clone(),
    }
}

/// Account fields stored in columns; any other field name is a configured field value.
fn account_column(field: &str) -> Option<&'static str> {
    Some(match field {
        "firstName" => "first_name",
        "middleName" => "middle_name",
        "lastName" => "last_name",
        "gender" => "gender",
        "dateOfBirth" => "birthdate",
        _ => return None,
    })
}

/// Writes the checked values onto their target records.
pub async fn apply(
    tx: &mut Tx,
    r: &Resolved,
    values: &[(&GroupField, Value)],
) -> Result<(), sqlx::Error> {
    for (field, value) in values {
        let (object, record_id) = if field.target_object == objects::CARE_PLAN {
            (objects::CARE_PLAN, r.care_plan_id)
        } else {
            (objects::ACCOUNT, r.patient_account_id)
        };
        match (object, account_column(&field.target_field)) {
            (o, Some(column)) if o == objects::ACCOUNT => {
                let text = match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let sql =
                    format!("UPDATE account SET {column} = $1, updated_at = $2 WHERE id = $3");
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(text)
                    .bind(now())
                    .bind(record_id)
                    .execute(&mut **tx)
                    .await?;
            }
            _ => {
                crate::enrollment::store::set_record_field(
                    tx,
                    object,
                    record_id,
                    &field.target_field,
                    value,
                )
                .await?;
            }
        }
    }
    Ok(())
}

/// Ends a request after a successful POST.
pub async fn complete(tx: &mut Tx, req: &DataRequest) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE data_request SET status = $1, updated_at = $2 WHERE id = $3")
        .bind(COMPLETED)
        .bind(now())
        .bind(req.id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Adds a request-history record: time, caller, method, status code, submitted field UUIDs
/// (never values).
pub async fn record_history(
    tx: &mut Tx,
    data_request_id: i64,
    user_id: Option<i64>,
    method: &str,
    status: u16,
    submitted: &[String],
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO data_request_history (data_request_id, at, user_id, method, status_code, submitted_fields) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(data_request_id)
    .bind(now())
    .bind(user_id)
    .bind(method.to_owned())
    .bind(i64::from(status))
    .bind(serde_json::to_string(submitted).unwrap_or_else(|_| "[]".into()))
    .execute(&mut **tx)
    .await?;
    Ok(())
}
