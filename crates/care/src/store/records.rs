//! Enrolled records as the admin API and missing-information requests read and change them:
//! care plans, accounts (patients), and the configured field values of any record.

use serde_json::{Map, Value};
use sqlx::Row;

use super::base::Result;
use crate::db::{Change, Driver, Tx, now, upsert};

/// A care plan's row.
#[derive(Debug, Clone)]
pub struct CarePlanRow {
    /// Row id.
    pub id: i64,
    /// API name of its program.
    pub program_api_name: String,
    /// Row id of its patient account.
    pub patient_account_id: i64,
    /// `yyyy-mm-dd`.
    pub enrollment_date: String,
}

/// A patient account's columns.
#[derive(Debug, Clone)]
pub struct PatientRow {
    /// External ID.
    pub external_id: String,
    /// First name.
    pub first_name: Option<String>,
    /// Middle name.
    pub middle_name: Option<String>,
    /// Last name.
    pub last_name: Option<String>,
    /// Gender.
    pub gender: Option<String>,
    /// Date of birth, `yyyy-mm-dd`.
    pub birthdate: Option<String>,
}

/// The care plan with this external ID.
pub async fn care_plan(tx: &mut Tx, external_id: &str) -> Result<Option<CarePlanRow>> {
    let row = sqlx::query(
        "SELECT id, program_api_name, patient_account_id, enrollment_date FROM care_plan \
         WHERE external_id = $1",
    )
    .bind(external_id.to_owned())
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row
        .map(|r| -> std::result::Result<_, sqlx::Error> {
            Ok(CarePlanRow {
                id: r.try_get(0)?,
                program_api_name: r.try_get(1)?,
                patient_account_id: r.try_get(2)?,
                enrollment_date: r.try_get(3)?,
            })
        })
        .transpose()?)
}

/// The patient columns of an account.
pub async fn patient(tx: &mut Tx, id: i64) -> Result<Option<PatientRow>> {
    let row = sqlx::query(
        "SELECT external_id, first_name, middle_name, last_name, gender, birthdate FROM account \
         WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row
        .map(|r| -> std::result::Result<_, sqlx::Error> {
            Ok(PatientRow {
                external_id: r.try_get(0)?,
                first_name: r.try_get(1)?,
                middle_name: r.try_get(2)?,
                last_name: r.try_get(3)?,
                gender: r.try_get(4)?,
                birthdate: r.try_get(5)?,
            })
        })
        .transpose()?)
}

/// Deletes the account with this external ID; whether there was one. Dependent records
/// are kept (references are soft).
pub async fn delete_account(tx: &mut Tx, external_id: &str) -> Result<bool> {
    let done = sqlx::query("DELETE FROM account WHERE external_id = $1")
        .bind(external_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Account fields stored in columns (any other field is a configured field value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountColumn {
    /// `firstName`.
    FirstName,
    /// `middleName`.
    MiddleName,
    /// `lastName`.
    LastName,
    /// `gender`.
    Gender,
    /// `dateOfBirth`.
    DateOfBirth,
}

impl AccountColumn {
    /// The column a field name is stored in, if it is one.
    pub fn for_field(field: &str) -> Option<Self> {
        Some(match field {
            "firstName" => Self::FirstName,
            "middleName" => Self::MiddleName,
            "lastName" => Self::LastName,
            "gender" => Self::Gender,
            "dateOfBirth" => Self::DateOfBirth,
            _ => return None,
        })
    }

    /// The column's value in a patient row.
    pub fn of(self, p: &PatientRow) -> &Option<String> {
        match self {
            Self::FirstName => &p.first_name,
            Self::MiddleName => &p.middle_name,
            Self::LastName => &p.last_name,
            Self::Gender => &p.gender,
            Self::DateOfBirth => &p.birthdate,
        }
    }

    fn update_sql(self) -> &'static str {
        match self {
            Self::FirstName => "UPDATE account SET first_name = $1, updated_at = $2 WHERE id = $3",
            Self::MiddleName => {
                "UPDATE account SET middle_name = $1, updated_at = $2 WHERE id = $3"
            }
            Self::LastName => "UPDATE account SET last_name = $1, updated_at = $2 WHERE id = $3",
            Self::Gender => "UPDATE account SET gender = $1, updated_at = $2 WHERE id = $3",
            Self::DateOfBirth => "UPDATE account SET birthdate = $1, updated_at = $2 WHERE id = $3",
        }
    }
}

/// Sets one column of an account.
pub async fn set_account_column(
    tx: &mut Tx,
    account_id: i64,
    column: AccountColumn,
    text: &str,
) -> Result<()> {
    sqlx::query(column.update_sql())
        .bind(text.to_owned())
        .bind(now())
        .bind(account_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The configured field values of a record, by field name (values that are not JSON read
/// as `null`).
pub async fn record_fields(tx: &mut Tx, object: &str, id: i64) -> Result<Map<String, Value>> {
    let rows = sqlx::query(
        "SELECT field_name, value_json FROM record_field WHERE object_name = $1 AND record_id = $2",
    )
    .bind(object.to_owned())
    .bind(id)
    .fetch_all(&mut **tx)
    .await?;
    let mut out = Map::new();
    for r in rows {
        let v: String = r.try_get(1)?;
        out.insert(
            r.try_get(0)?,
            serde_json::from_str(&v).unwrap_or(Value::Null),
        );
    }
    Ok(out)
}

/// Writes one configured field value of a record (enrollments and missing-information
/// POSTs).
pub async fn set_record_field(
    tx: &mut Tx,
    object: &'static str,
    record_id: i64,
    name: &str,
    value: &Value,
) -> Result<Change> {
    Ok(set_record_field_on(tx, object, record_id, name, value).await?)
}

/// [`set_record_field`] on any [`Driver`] (an enrollment on the native writer's connection
/// too).
pub(super) async fn set_record_field_on<D: Driver>(
    d: &mut D,
    object: &'static str,
    record_id: i64,
    name: &str,
    value: &Value,
) -> std::result::Result<Change, D::Error> {
    let ext = format!("{object}:{record_id}:{name}");
    let (_, c) = upsert(
        d,
        "record_field",
        &ext,
        &[
            ("object_name", object.into()),
            ("record_id", record_id.into()),
            ("field_name", name.into()),
            ("value_json", value.to_string().into()),
        ],
    )
    .await?;
    // A new field on an existing record is an update of that record, not a new record.
    Ok(if c == Change::Created {
        Change::Updated
    } else {
        c
    })
}
