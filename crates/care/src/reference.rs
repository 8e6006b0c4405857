//! Rules of the reference data the admin API manages: identifiers and names, configured
//! field definitions, missing-information group fields, data requests and permission
//! entries. Each check returns a [`Violation`] naming the offending path, or the typed value.

use crate::auth::{Grant, objects};
use crate::fields::{self, FieldDef, FieldType};
use crate::model::{GroupField, STATUSES};
use crate::violation::Violation;

/// API names (vendors, programs, objects, fields) are 1-80 letters, digits and `_`, so that
/// the care-plan external ID formula stays unambiguous.
pub fn check_api_name(name: &str, path: &str) -> Result<(), Violation> {
    if name.is_empty()
        || name.len() > 80
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(Violation::new(
            "INVALID_NAME",
            "must be 1-80 letters, digits or '_'",
            path,
        ));
    }
    Ok(())
}

/// Other identifiers (product IDs, data use purposes, groups) are 1-80 characters, not blank.
pub fn check_plain_id(id: &str, path: &str) -> Result<(), Violation> {
    if id.trim().is_empty() || id.chars().count() > 80 {
        return Err(Violation::new(
            "INVALID_NAME",
            "must be 1-80 characters",
            path,
        ));
    }
    Ok(())
}

/// Display names (of reference records and users) are 1-255 characters, not blank.
pub fn check_display_name(name: &str) -> Result<(), Violation> {
    if name.trim().is_empty() || name.chars().count() > 255 {
        return Err(Violation::new(
            "INVALID_NAME",
            "'name' must be 1-255 characters",
            "name",
        ));
    }
    Ok(())
}

/// A configured field definition: a known type, length 1-131072, scale 0-18, and values for
/// a PICKLIST.
pub fn field_def(
    ty: &str,
    length: Option<i64>,
    scale: Option<i64>,
    picklist: Vec<String>,
    path: &str,
) -> Result<FieldDef, Violation> {
    let Some(t) = FieldType::parse(ty) else {
        let all: Vec<&str> = FieldType::ALL.iter().map(|t| t.as_str()).collect();
        return Err(Violation::new(
            "INVALID_TYPE",
            format!("type must be one of {}", all.join(", ")),
            path,
        ));
    };
    if length.is_some_and(|l| !(1..=131_072).contains(&l))
        || scale.is_some_and(|s| !(0..=18).contains(&s))
    {
        return Err(Violation::new(
            "INVALID_VALUE",
            "length must be 1-131072 and scale 0-18",
            path,
        ));
    }
    if t == FieldType::Picklist && picklist.is_empty() {
        return Err(Violation::new(
            "INVALID_VALUE",
            "a PICKLIST needs picklistValues",
            path,
        ));
    }
    Ok(FieldDef {
        ty: t,
        length,
        scale,
        picklist,
    })
}

/// A requested field of a missing-information group, checked in this order: UUID, field
/// definition, target object (`Account` or `CarePlan`), target field (an API name).
/// `path` is the field's path (`fields[i]`).
pub fn group_field(
    uuid: String,
    def: Result<FieldDef, Violation>,
    label: String,
    target_object: String,
    target_field: String,
    path: &str,
) -> Result<GroupField, Violation> {
    if uuid::Uuid::try_parse(&uuid).is_err() {
        return Err(Violation::new(
            "INVALID_UUID",
            "uuid must be a UUID",
            &format!("{path}.uuid"),
        ));
    }
    let def = def?;
    if target_object != objects::ACCOUNT && target_object != objects::CARE_PLAN {
        return Err(Violation::new(
            "INVALID_VALUE",
            "targetObject must be Account or CarePlan",
            &format!("{path}.targetObject"),
        ));
    }
    check_api_name(&target_field, &format!("{path}.targetField"))?;
    Ok(GroupField {
        uuid,
        def,
        label,
        target_object,
        target_field,
    })
}

/// A data request's status is one of [`STATUSES`] and its expiration date `yyyy-mm-dd`.
pub fn check_data_request(status: &str, expiration_date: &str) -> Result<(), Violation> {
    if !STATUSES.contains(&status) {
        return Err(Violation::new(
            "INVALID_VALUE",
            format!("status must be one of {}", STATUSES.join(", ")),
            "status",
        ));
    }
    if !fields::is_date(expiration_date) {
        return Err(Violation::new(
            "INVALID_DATE",
            "expirationDate must be yyyy-mm-dd",
            "expirationDate",
        ));
    }
    Ok(())
}

/// Permission entries name one of the permission objects.
pub fn check_grants(grants: &[Grant]) -> Result<(), Violation> {
    for (i, g) in grants.iter().enumerate() {
        if !objects::ALL.contains(&g.object.as_str()) {
            return Err(Violation::new(
                "INVALID_VALUE",
                format!("object must be one of {}", objects::ALL.join(", ")),
                &format!("permissions[{i}].object"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_field_checks_uuid_before_type() {
        let def = field_def("NOPE", None, None, vec![], "fields[0]");
        let e = group_field(
            "not-a-uuid".into(),
            def,
            "L".into(),
            "Account".into(),
            "x".into(),
            "fields[0]",
        )
        .unwrap_err();
        assert_eq!(e.code, "INVALID_UUID");
        assert_eq!(e.fields, ["fields[0].uuid"]);
    }

    #[test]
    fn field_defs_need_known_types_limits_and_picklist_values() {
        assert_eq!(
            field_def("TEXT", None, None, vec![], "f").unwrap_err().code,
            "INVALID_TYPE"
        );
        assert_eq!(
            field_def("STRING", Some(0), None, vec![], "f")
                .unwrap_err()
                .code,
            "INVALID_VALUE"
        );
        assert_eq!(
            field_def("PICKLIST", None, None, vec![], "f")
                .unwrap_err()
                .code,
            "INVALID_VALUE"
        );
        assert!(field_def("DOUBLE", Some(3), Some(1), vec![], "f").is_ok());
    }
}
