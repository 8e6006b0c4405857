//! Missing-information requests (domain): the rules a call must pass (active, records
//! present, access, submitted values) and how values reach their target records. The values
//! themselves (a data request, its group and fields) are in `model`; SQL is in
//! `store::{data_requests, groups, records}`; refusals are [`RequestError`]s, which the HTTP
//! layer maps to status codes.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::Value;

use crate::auth::{Access, Caller, objects};
use crate::db::Tx;
use crate::fields;
use crate::model::{ACTIVE, DataRequest, GroupField, RequestContext, Resolved, Submitted};
use crate::store::{self, StoreError};
use crate::violation::Violation;

/// All statuses a data request can have, named here too for the metrics scrape.
pub use crate::model::STATUSES;

/// Why a call on an existing data request is refused.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The request is not active or has expired (409).
    #[error("data request not active")]
    NotActive(Violation),
    /// A record the request needs is missing (404).
    #[error("record of the data request missing")]
    Missing(Violation),
    /// The caller lacks read (GET) or edit (POST) access (403).
    #[error("insufficient access")]
    Forbidden(Vec<Violation>),
    /// The submitted values do not fulfil the requested fields (412).
    #[error("values do not fulfil the request")]
    Unfulfilled(Vec<Violation>),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for RequestError {
    fn from(e: sqlx::Error) -> Self {
        RequestError::Store(e.into())
    }
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
    /// Added to the spec's keys for PICKLIST fields: the allowed values, in order.
    #[serde(rename = "picklistValues", skip_serializing_if = "Option::is_none")]
    picklist_values: Option<Vec<String>>,
}

impl FieldView {
    /// The view of a requested field.
    pub fn of(f: &GroupField) -> Self {
        FieldView {
            uuid: f.uuid.clone(),
            ty: f.def.ty.as_str(),
            scale: f.def.scale,
            length: f.def.length,
            label: f.label.clone(),
            picklist_values: (f.def.ty == fields::FieldType::Picklist)
                .then(|| f.def.picklist.clone()),
        }
    }
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

/// Refused unless the request is active and not past its expiration date.
pub fn check_active(req: &DataRequest) -> Result<(), RequestError> {
    if req.status != ACTIVE {
        return Err(RequestError::NotActive(Violation::new(
            "REQUEST_NOT_ACTIVE",
            format!(
                "the data request is no longer active (status {})",
                req.status
            ),
            "",
        )));
    }
    if req.is_expired() {
        return Err(RequestError::NotActive(Violation::new(
            "REQUEST_EXPIRED",
            format!("the data request expired on {}", req.expiration_date),
            "",
        )));
    }
    Ok(())
}

fn missing(code: &'static str, what: &str) -> RequestError {
    RequestError::Missing(Violation::new(
        code,
        format!("the {what} of this data request is missing"),
        "",
    ))
}

/// The care plan, program, group with its fields, and patient account of a request (read with
/// it by `store::data_requests::find_with_context`); refused naming the first one missing.
pub fn resolve(context: RequestContext) -> Result<Resolved, RequestError> {
    let (care_plan_id, patient_account_id) = context
        .plan
        .ok_or_else(|| missing("CARE_PLAN_NOT_FOUND", "care plan"))?;
    let program_name = context
        .program_name
        .ok_or_else(|| missing("CARE_PROGRAM_NOT_FOUND", "care program"))?;
    if !context.group_exists {
        return Err(missing(
            "GROUP_NOT_FOUND",
            "missing-information group metadata",
        ));
    }
    let patient_external_id = context
        .patient_external_id
        .ok_or_else(|| missing("PATIENT_ACCOUNT_NOT_FOUND", "patient account"))?;
    Ok(Resolved {
        care_plan_id,
        patient_account_id,
        patient_external_id,
        program_name,
        fields: context.fields,
    })
}

/// The GET body of a resolved request.
pub fn view(req: &DataRequest, r: &Resolved) -> RequestView {
    RequestView {
        uuid: req.uuid.clone(),
        fields: r.fields.iter().map(FieldView::of).collect(),
        expiration_date: req.expiration_date.clone(),
        drug_program: r.program_name.clone(),
    }
}

/// Refused listing every object and field the caller may not read (GET) or edit (POST).
pub fn check_access(caller: &Caller, r: &Resolved, access: Access) -> Result<(), RequestError> {
    let verb = if access == Access::Read {
        "read"
    } else {
        "edit"
    };
    let mut denied = Vec::new();
    let mut seen = HashSet::new();
    for object in [objects::DATA_REQUEST, objects::CARE_PLAN, objects::ACCOUNT] {
        if !caller.can(object, access) && seen.insert(object.to_owned()) {
            denied.push(Violation::new(
                "INSUFFICIENT_ACCESS",
                format!("no {verb} access to {object}"),
                "",
            ));
        }
    }
    for f in &r.fields {
        if seen.contains(&f.target_object) {
            continue;
        }
        if !caller.can(&f.target_object, access) {
            seen.insert(f.target_object.clone());
            denied.push(Violation::new(
                "INSUFFICIENT_ACCESS",
                format!("no {verb} access to {}", f.target_object),
                "",
            ));
        } else if !caller.can_field(&f.target_object, &f.target_field, access) {
            denied.push(Violation {
                code: "INSUFFICIENT_ACCESS",
                message: format!(
                    "no {verb} access to the field '{}' of {}",
                    f.target_field, f.target_object
                ),
                fields: vec![f.uuid.clone()],
            });
        }
    }
    if denied.is_empty() {
        Ok(())
    } else {
        Err(RequestError::Forbidden(denied))
    }
}

/// Refused unless the entries are exactly the requested fields, each with a valid value;
/// otherwise the checked values with their fields.
pub fn check_values<'r>(
    r: &'r Resolved,
    entries: &[Submitted],
) -> Result<Vec<(&'r GroupField, Value)>, RequestError> {
    let by_uuid: HashMap<&str, &GroupField> =
        r.fields.iter().map(|f| (f.uuid.as_str(), f)).collect();
    let mut errors = Vec::new();
    let mut seen = HashSet::new();
    let mut values = Vec::new();
    for e in entries {
        let path = &e.value_path;
        let Some(field) = by_uuid.get(e.uuid.as_str()) else {
            errors.push(Violation::new(
                "UNKNOWN_FIELD",
                "this field is not requested by the data request",
                &e.uuid_path,
            ));
            continue;
        };
        if !seen.insert(e.uuid.as_str()) {
            errors.push(Violation::new(
                "DUPLICATE_FIELD",
                "this field is submitted twice",
                &e.uuid_path,
            ));
            continue;
        }
        if e.value.trim().is_empty() {
            errors.push(Violation::new(
                "VALUE_REQUIRED",
                format!("'{}' needs a value", field.label),
                path,
            ));
            continue;
        }
        match fields::check_text(&field.def, &e.value) {
            Ok(v) => values.push((*field, v)),
            Err(reason) => errors.push(Violation::new(
                "INVALID_VALUE",
                format!("'{}' ({}): {reason}", field.label, field.def.ty.as_str()),
                path,
            )),
        }
    }
    for f in &r.fields {
        if !seen.contains(f.uuid.as_str()) {
            errors.push(Violation::new(
                "FIELD_MISSING",
                format!("'{}' is requested but not submitted", f.label),
                &f.uuid,
            ));
        }
    }
    if errors.is_empty() {
        Ok(values)
    } else {
        Err(RequestError::Unfulfilled(errors))
    }
}

/// Writes the checked values onto their target records: patient columns for the account
/// fields that are columns, configured field values otherwise.
pub async fn apply(
    tx: &mut Tx,
    r: &Resolved,
    values: &[(&GroupField, Value)],
) -> Result<(), StoreError> {
    for (field, value) in values {
        let (object, record_id) = if field.target_object == objects::CARE_PLAN {
            (objects::CARE_PLAN, r.care_plan_id)
        } else {
            (objects::ACCOUNT, r.patient_account_id)
        };
        match store::records::AccountColumn::for_field(&field.target_field) {
            Some(column) if object == objects::ACCOUNT => {
                let text = fields::text_of(value);
                store::records::set_account_column(tx, record_id, column, &text).await?;
            }
            _ => {
                store::records::set_record_field(tx, object, record_id, &field.target_field, value)
                    .await?;
            }
        }
    }
    Ok(())
}

/// The entries of a POST body: the spec's JSON array of `{uuid, value}` objects, or (`fhir`)
/// a FHIR `QuestionnaireResponse`. Refused (`INVALID_BODY` violations) unless well formed;
/// UUIDs of well-formed entries are noted in `submitted` for the history record either way.
pub fn parse_body(
    body: &[u8],
    fhir: bool,
    submitted: &mut Vec<String>,
) -> Result<Vec<Submitted>, Vec<Violation>> {
    let doc: Value = serde_json::from_slice(body).map_err(|e| {
        vec![Violation::new(
            "INVALID_BODY",
            format!(
                "the request body is not valid JSON (line {}, column {})",
                e.line(),
                e.column()
            ),
            "",
        )]
    })?;
    if fhir {
        return crate::fhir::answers(&doc, submitted);
    }
    let invalid = |msg: &str, path: String| Violation::new("INVALID_BODY", msg, &path);
    let Some(items) = doc.as_array() else {
        return Err(vec![invalid(
            "the request body must be a JSON array of field objects",
            String::new(),
        )]);
    };
    let mut errors = Vec::new();
    let mut entries = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let Some(obj) = item.as_object() else {
            errors.push(invalid(
                "each element must be a field object",
                format!("[{index}]"),
            ));
            continue;
        };
        let uuid = obj.get("uuid").and_then(Value::as_str);
        let value = obj.get("value").and_then(Value::as_str);
        if uuid.is_none() {
            errors.push(invalid(
                "'uuid' must be a string",
                format!("[{index}].uuid"),
            ));
        }
        if value.is_none() {
            errors.push(invalid(
                "'value' must be a string",
                format!("[{index}].value"),
            ));
        }
        if let Some(u) = uuid {
            submitted.push(u.to_owned());
        }
        if let (Some(uuid), Some(value)) = (uuid, value) {
            entries.push(Submitted {
                uuid: uuid.to_owned(),
                value: value.to_owned(),
                uuid_path: format!("[{index}].uuid"),
                value_path: format!("[{index}].value"),
            });
        }
    }
    if errors.is_empty() {
        Ok(entries)
    } else {
        Err(errors)
    }
}
