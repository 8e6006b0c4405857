//! The demo data set `--demo` loads into an empty database, with the fixed identifiers the
//! README, the tests and users rely on.

use serde_json::json;

use crate::auth::{self, Caller, Flags, Grant, objects};
use crate::db::Db;
use crate::enrollment::{store, validate};
use crate::error::CareError;
use crate::http::admin::{self, DataRequestBody, GroupBody, GroupFieldBody};

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
    if auth::load_caller(&mut tx, ADMIN_TOKEN).await?.is_some() {
        tracing::info!("demo data set already present");
        return Ok(());
    }
    let users: i64 = sqlx::Row::try_get(
        &sqlx::query("SELECT COUNT(*) FROM app_user")
            .fetch_one(&mut *tx)
            .await?,
        0,
    )?;
    let vendors: i64 = sqlx::Row::try_get(
        &sqlx::query("SELECT COUNT(*) FROM vendor")
            .fetch_one(&mut *tx)
            .await?,
        0,
    )?;
    if users > 0 || vendors > 0 {
        return Err(CareError::DemoNeedsEmptyDatabase);
    }
    let ts = crate::db::now();
    for (sql, a, b) in [
        (
            "INSERT INTO vendor (api_name, name, created_at) VALUES ($1, $2, $3)",
            VENDOR,
            "Demo eRx vendor",
        ),
        (
            "INSERT INTO program (api_name, name, created_at) VALUES ($1, $2, $3)",
            PROGRAM,
            "Demo Care Program",
        ),
        (
            "INSERT INTO data_use_purpose (external_id, name, created_at) VALUES ($1, $2, $3)",
            "DUP-TREATMENT",
            "Treatment",
        ),
        (
            "INSERT INTO data_use_purpose (external_id, name, created_at) VALUES ($1, $2, $3)",
            "DUP-MARKETING",
            "Marketing",
        ),
    ] {
        sqlx::query(sql)
            .bind(a)
            .bind(b)
            .bind(ts)
            .execute(&mut *tx)
            .await?;
    }
    for (code, name) in [
        ("PROD-1001", "Demozumab 10 mg"),
        ("PROD-1002", "Demozumab 20 mg"),
    ] {
        sqlx::query("INSERT INTO product (product_code, name, program_api_name, created_at) VALUES ($1, $2, $3, $4)")
            .bind(code)
            .bind(name)
            .bind(PROGRAM)
            .bind(ts)
            .execute(&mut *tx)
            .await?;
    }
    admin::demo_object_config(
        &mut tx,
        "AdverseEvent",
        true,
        &["Serious", "NonSerious"],
        &[
            ("description", "STRING", Some(255), None),
            ("onsetDate", "DATE", None, None),
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
    auth::create_user(&mut tx, "Demo admin", ADMIN_TOKEN, true, &[]).await?;
    auth::create_user(&mut tx, "Demo care staff", STAFF_TOKEN, false, &full).await?;
    auth::create_user(
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
    let catalog = store::load_catalog(&mut tx, VENDOR, PROGRAM).await?;
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
    store::store(&mut tx, &enrollment).await?;
    let plan = enrollment.care_plan_external_id();

    let field = |n: u8,
                 ty: &str,
                 length,
                 scale,
                 label: &str,
                 object: &str,
                 target: &str,
                 picklist: &[&str]| GroupFieldBody {
        uuid: format!("5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f0{n}"),
        ty: ty.into(),
        length,
        scale,
        label: label.into(),
        target_object: object.into(),
        target_field: target.into(),
        picklist_values: picklist.iter().map(|s| (*s).to_owned()).collect(),
    };
    let group = GroupBody {
        name: "Demo intake".into(),
        fields: vec![
            field(
                1,
                "DATE",
                None,
                None,
                "Date of birth",
                objects::ACCOUNT,
                "dateOfBirth",
                &[],
            ),
            field(
                2,
                "DOUBLE",
                Some(3),
                Some(1),
                "Weight (kg)",
                objects::ACCOUNT,
                "weightKg",
                &[],
            ),
            field(
                3,
                "PICKLIST",
                None,
                None,
                "Preferred contact time",
                objects::CARE_PLAN,
                "preferredContactTime",
                &["Morning", "Afternoon", "Evening"],
            ),
            field(
                4,
                "BOOLEAN",
                None,
                None,
                "Consent to text messages",
                objects::CARE_PLAN,
                "smsConsent",
                &[],
            ),
        ],
    };
    admin::validate_group(&group)
        .map_err(|_| CareError::Config("the built-in demo group is invalid".into()))?;
    admin::put_group_tx(&mut tx, GROUP, &group)
        .await
        .map_err(|_| CareError::Config("could not store the demo group".into()))?;
    for (uuid, status, expiration) in [
        (ACTIVE_REQUEST, "Active", "2099-12-31"),
        (ENDED_REQUEST, "Ended", "2099-12-31"),
        (EXPIRED_REQUEST, "Active", "2020-01-01"),
    ] {
        let body = DataRequestBody {
            care_plan_external_id: plan.clone(),
            group_id: GROUP.into(),
            status: status.into(),
            expiration_date: expiration.into(),
        };
        admin::put_data_request_tx(&mut tx, uuid, &body).await?;
    }
    tx.commit().await?;
    tracing::info!("demo data set loaded");
    Ok(())
}
