//! The demo data set `--demo` loads into an empty database, with the fixed identifiers the
//! README, the tests and users rely on.

use serde_json::json;

use crate::auth::{Caller, Flags, Grant, objects};
use crate::db::{Db, Tx};
use crate::enrollment::validate;
use crate::error::CareError;
use crate::fields::{FieldDef, FieldType};
use crate::model::{DataRequestInput, Group, GroupField};
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
/// alone (restarting with `--demo` is fine); any other data is an error. One transaction:
/// a failed load leaves nothing behind.
pub async fn load(db: &Db) -> Result<(), CareError> {
    let mut tx = db.begin_write().await?;
    match existing_data(&mut tx).await? {
        Existing::Demo => {
            tracing::info!("demo data set already present");
            return Ok(());
        }
        Existing::Other => return Err(CareError::DemoNeedsEmptyDatabase),
        Existing::Nothing => {}
    }
    put_reference_data(&mut tx).await?;
    put_adverse_event_config(&mut tx).await?;
    create_users(&mut tx).await?;
    let plan = enroll_demo_patient(&mut tx).await?;
    put_group_and_requests(&mut tx, &plan).await?;
    tx.commit().await?;
    tracing::info!("demo data set loaded");
    Ok(())
}

/// What a database holds before the demo set is loaded.
enum Existing {
    /// Nothing: the demo set goes in.
    Nothing,
    /// The demo set (its admin token is known).
    Demo,
    /// Users or vendors of someone else's.
    Other,
}

/// Tells an empty database from one holding the demo set or other data.
async fn existing_data(tx: &mut Tx) -> Result<Existing, CareError> {
    if store::users::load_caller(tx, ADMIN_TOKEN).await?.is_some() {
        return Ok(Existing::Demo);
    }
    let users = store::users::count(tx).await?;
    let vendors = store::reference::count_named(tx, Named::Vendor).await?;
    Ok(if users > 0 || vendors > 0 {
        Existing::Other
    } else {
        Existing::Nothing
    })
}

/// The vendor, the program, two data use purposes and the program's two products.
async fn put_reference_data(tx: &mut Tx) -> Result<(), CareError> {
    for (kind, key, name) in [
        (Named::Vendor, VENDOR, "Demo eRx vendor"),
        (Named::Program, PROGRAM, "Demo Care Program"),
        (Named::DataUsePurpose, "DUP-TREATMENT", "Treatment"),
        (Named::DataUsePurpose, "DUP-MARKETING", "Marketing"),
    ] {
        store::reference::put_named(tx, kind, key, name).await?;
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
        store::reference::put_product(tx, &product).await?;
    }
    Ok(())
}

/// `AdverseEvent`, an additional object with two record types and two configured fields.
async fn put_adverse_event_config(tx: &mut Tx) -> Result<(), CareError> {
    let def = |ty, length| FieldDef {
        ty,
        length,
        scale: None,
        picklist: vec![],
    };
    store::objects::put(
        tx,
        "AdverseEvent",
        true,
        &["Serious".into(), "NonSerious".into()],
        &[
            ("description".into(), def(FieldType::String, Some(255))),
            ("onsetDate".into(), def(FieldType::Date, None)),
        ],
    )
    .await?;
    Ok(())
}

/// The admin, the care staff with full access and the restricted user (no
/// `Account.dateOfBirth`), with their fixed tokens.
async fn create_users(tx: &mut Tx) -> Result<(), CareError> {
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
    store::users::create_user(tx, "Demo admin", ADMIN_TOKEN, true, &[]).await?;
    store::users::create_user(tx, "Demo care staff", STAFF_TOKEN, false, &full).await?;
    store::users::create_user(
        tx,
        "Demo restricted user",
        RESTRICTED_TOKEN,
        false,
        &restricted,
    )
    .await?;
    Ok(())
}

/// Enrolls the demo patient through the enrollment service's own code path (validator and
/// store), so the demo records are what a real request stores; returns the care plan's
/// external ID.
async fn enroll_demo_patient(tx: &mut Tx) -> Result<String, CareError> {
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
    let catalog = store::enrollment::load_catalog(tx, VENDOR, PROGRAM).await?;
    let settings = validate::Settings::default();
    let enrollment = validate::validate(&doc, &catalog, &settings, &Caller::system())
        .map_err(|_| CareError::Config("the built-in demo enrollment is invalid".into()))?;
    store::enrollment::store(tx, &enrollment).await?;
    Ok(enrollment.care_plan_external_id())
}

/// The demo group and its three data requests on `plan`: active, ended, and past its
/// expiration date.
async fn put_group_and_requests(tx: &mut Tx, plan: &str) -> Result<(), CareError> {
    store::groups::put(tx, GROUP, &group())
        .await
        .map_err(|_| CareError::Config("could not store the demo group".into()))?;
    for (uuid, status, expiration) in [
        (ACTIVE_REQUEST, "Active", "2099-12-31"),
        (ENDED_REQUEST, "Ended", "2099-12-31"),
        (EXPIRED_REQUEST, "Active", "2020-01-01"),
    ] {
        let input = DataRequestInput {
            care_plan_external_id: plan.to_owned(),
            group_external_id: GROUP.into(),
            status: status.into(),
            expiration_date: expiration.into(),
        };
        store::data_requests::put(tx, uuid, &input).await?;
    }
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
