//! The demo data set `--demo` loads into an empty database, with the fixed identifiers the
//! README, the tests and users rely on.

use serde_json::json;

use crate::auth::{Caller, Flags, Grant, objects};
use crate::db::Db;
use crate::enrollment::validate;
use crate::error::CareError;
use crate::fields::{FieldDef, FieldType};
use crate::missing_info::{DataRequestInput, Group, GroupField};
use crate::store;
use crate::store::reference::{Named, Product};

/// eRX vendor API name.
pub const VENDOR: &str = "DemoRx";
/// Program API name.
pub const PROGRAM: &str = "DemoCareProgram";
/// Admin token.
pub const ADMIN_TOKEN: &str = "demo-admin";
/// Care staff token (full access).
pub const STAFF_TOKEN: &str = "demo-staff";
/// Restricted token: no access to `Account.dateOfBirth`, a field of the active request.
pub const RESTRICTED_TOKEN: &str = "demo-restricted";
/// The active data request.
pub const ACTIVE_REQUEST: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01";
/// A data request that has ended.
pub const ENDED_REQUEST: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e02";
/// A data request past its expiration date.
pub const EXPIRED_REQUEST: &str = "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e03";
/// The missing-information group of the demo requests.
pub const GROUP: &str = "DEMO-GROUP";

/// Loads the demo set into an empty database; a database that already holds it is left
/// alone (restarting with `--demo` is fine); any other data is an error.
pub async fn load(db: &Db) -> Result<(), CareError> {
    let mut tx = db.begin_write().await?;
    if crate::store::users::load_caller(&mut tx, ADMIN_TOKEN)
        .await?
        .is_some()
    {
        tracing::info!("demo data set already present");
        return Ok(());
    }
    let users = store::users::count(&mut tx).await?;
    let vendors = store::reference::count_named(&mut tx, Named::Vendor).await?;
    if users > 0 || vendors > 0 {
        return Err(CareError::DemoNeedsEmptyDatabase);
    }
    for (kind, key, name) in [
        (Named::Vendor, VENDOR, "Demo eRx vendor"),
        (Named::Program, PROGRAM, "Demo Care Program"),
        (Named::DataUsePurpose, "DUP-TREATMENT", "Treatment"),
        (Named::DataUsePurpose, "DUP-MARKETING", "Marketing"),
    ] {
        store::reference::put_named(&mut tx, kind, key, name).await?;
    }
    for (code, name) in [
        ("PROD-1001", "Demozumab 10 mg"),
        ("PROD-1002", "Demozumab 20 mg"),
    ] {
        let product = Product {
            code: code.into(),
            name: name.into(),
            program_api_name: PROGRAM.into(),
        };
        store::reference::put_product(&mut tx, &product).await?;
    }
    let def = |ty, length| FieldDef {
        ty,
        length,
        scale: None,
        picklist: vec![],
    };
    store::objects::put(
        &mut tx,
        "AdverseEvent",
        true,
        &["Serious".into(), "NonSerious".into()],
        &[
            ("description".into(), def(FieldType::String, Some(255))),
            ("onsetDate".into(), def(FieldType::Date, None)),
        ],
    )
    .await?;

    let full: Vec<Grant> = objects::ALL
        .iter()
        .map(|o| Grant {
            object: (*o).to_owned(),
            field: None,
            flags: Flags::FULL,
        })
        .collect();
    let mut restricted = full.clone();
    restricted.push(Grant {
        object: objects::ACCOUNT.into(),
        field: Some("dateOfBirth".into()),
        flags: Flags::default(),
    });
    crate::store::users::create_user(&mut tx, "Demo admin", ADMIN_TOKEN, true, &[]).await?;
    crate::store::users::create_user(&mut tx, "Demo care staff", STAFF_TOKEN, false, &full).await?;
    crate::store::users::create_user(
        &mut tx,
        "Demo restricted user",
        RESTRICTED_TOKEN,
        false,
        &restricted,
    )
    .await?;

    // The demo patient is enrolled through the enrollment service's own code path.
    let doc = json!({
        "vendorName": VENDOR,
        "programName": PROGRAM,
        "enrollmentDate": "2026-01-15",
        "patient": {
            "id": "DEMO-PATIENT-1",
            "firstName": "Dana",
            "lastName": "Demo",
            "gender": "F",
            "phones": [{ "id": "DEMO-PHONE-1", "countryCode": "+1", "phoneNumber": "5550100", "type": "mobile", "primary": true }]
        },
        "consents": [{ "id": "DEMO-CONSENT-1", "name": "DUP-TREATMENT consent", "effectiveDate": "2026-01-15" }],
        "prescriptions": [{ "id": "DEMO-RX-1", "drugNdc": "PROD-1001", "quantity": "30", "numberOfRefills": 2 }]
    });
    let catalog = store::enrollment::load_catalog(&mut tx, VENDOR, PROGRAM).await?;
    let settings = validate::Settings {
        contact_types: crate::DEFAULT_CONTACT_TYPES
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        genders: crate::DEFAULT_GENDERS
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
    };
    let enrollment = validate::validate(&doc, &catalog, &settings, &Caller::system())
        .map_err(|_| CareError::Config("the built-in demo enrollment is invalid".into()))?;
    store::enrollment::store(&mut tx, &enrollment).await?;
    let plan = enrollment.care_plan_external_id();

    let group = group();
    store::groups::put(&mut tx, GROUP, &group)
        .await
        .map_err(|_| CareError::Config("could not store the demo group".into()))?;
    for (uuid, status, expiration) in [
        (ACTIVE_REQUEST, "Active", "2099-12-31"),
        (ENDED_REQUEST, "Ended", "2099-12-31"),
        (EXPIRED_REQUEST, "Active", "2020-01-01"),
    ] {
        let input = DataRequestInput {
            care_plan_external_id: plan.clone(),
            group_external_id: GROUP.into(),
            status: status.into(),
            expiration_date: expiration.into(),
        };
        store::data_requests::put(&mut tx, uuid, &input).await?;
    }
    tx.commit().await?;
    tracing::info!("demo data set loaded");
    Ok(())
}

/// The demo missing-information group (UUID prefix `5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f0`).
fn group() -> Group {
    let field = |n: u8,
                 ty: FieldType,
                 length,
                 scale,
                 label: &str,
                 object: &str,
                 target: &str,
                 picklist: &[&str]| GroupField {
        uuid: format!("5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f0{n}"),
        def: FieldDef {
            ty,
            length,
            scale,
            picklist: picklist.iter().map(|s| (*s).to_owned()).collect(),
        },
        label: label.into(),
        target_object: object.into(),
        target_field: target.into(),
    };
    Group {
        name: "Demo intake".into(),
        fields: vec![
            field(
                1,
                FieldType::Date,
                None,
                None,
                "Date of birth",
                objects::ACCOUNT,
                "dateOfBirth",
                &[],
            ),
            field(
                2,
                FieldType::Double,
                Some(3),
                Some(1),
                "Weight (kg)",
                objects::ACCOUNT,
                "weightKg",
                &[],
            ),
            field(
                3,
                FieldType::Picklist,
                None,
                None,
                "Preferred contact time",
                objects::CARE_PLAN,
                "preferredContactTime",
                &["Morning", "Afternoon", "Evening"],
            ),
            field(
                4,
                FieldType::Boolean,
                None,
                None,
                "Consent to text messages",
                objects::CARE_PLAN,
                "smsConsent",
                &[],
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{field_def, group_field};

    /// The demo group obeys the rules the admin API applies to a group body.
    #[test]
    fn demo_group_passes_the_admin_rules() {
        for (i, f) in group().fields.into_iter().enumerate() {
            let path = format!("fields[{i}]");
            let def = field_def(
                f.def.ty.as_str(),
                f.def.length,
                f.def.scale,
                f.def.picklist.clone(),
                &path,
            );
            let checked = group_field(
                f.uuid.clone(),
                def,
                f.label.clone(),
                f.target_object.clone(),
                f.target_field.clone(),
                &path,
            )
            .unwrap();
            assert_eq!(checked.def, f.def);
        }
    }
}
