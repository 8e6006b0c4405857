//! Enrollment persistence: reading the reference catalog a request is checked against, and
//! upserting every record of a valid enrollment by its external ID. (The eRX request record
//! is in [`super::erx`]; configured field values in [`super::records`].)

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};
use slipway_server::db::native::{database_error, rusqlite};
use sqlx::Row;

use super::base::Result;
use super::objects as object_config;
use super::records::set_record_field_on;
use crate::auth::objects;
use crate::db::{Change, Driver, Tx, UpsertRow, Val, upsert, upsert_many};
use crate::enrollment::model::{Enrollment, PartyKind, scoped_id};
use crate::enrollment::validate::Catalog;

/// Reads the reference data a request of `vendor` and `program` is checked against.
pub async fn load_catalog(tx: &mut Tx, vendor: &str, program: &str) -> Result<Catalog> {
    let vendor_exists = sqlx::query("SELECT id FROM vendor WHERE api_name = $1")
        .bind(vendor.to_owned())
        .fetch_optional(&mut **tx)
        .await?
        .is_some();
    let program_exists = sqlx::query("SELECT id FROM program WHERE api_name = $1")
        .bind(program.to_owned())
        .fetch_optional(&mut **tx)
        .await?
        .is_some();
    let purposes = sqlx::query("SELECT id, external_id FROM data_use_purpose ORDER BY external_id")
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<std::result::Result<Vec<_>, sqlx::Error>>()?;
    let products = sqlx::query(
        "SELECT id, product_code FROM product WHERE program_api_name = $1 ORDER BY product_code",
    )
    .bind(program.to_owned())
    .fetch_all(&mut **tx)
    .await?
    .iter()
    .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
    .collect::<std::result::Result<Vec<_>, sqlx::Error>>()?;
    Ok(Catalog {
        vendor_exists,
        program_exists,
        purposes,
        products,
        objects: object_config::load_all(tx).await?,
    })
}

/// [`load_catalog`] on a native read connection (`slipway_server::db::native`): the same
/// statements, in one read transaction.
pub fn load_catalog_native(
    conn: &rusqlite::Connection,
    vendor: &str,
    program: &str,
) -> std::result::Result<Catalog, sqlx::Error> {
    let mut catalog = reference_native(conn, vendor, program).map_err(database_error)?;
    catalog.objects = object_config::load_all_native(conn)?;
    Ok(catalog)
}

/// The catalog but its object configuration, on a native read connection.
fn reference_native(
    conn: &rusqlite::Connection,
    vendor: &str,
    program: &str,
) -> rusqlite::Result<Catalog> {
    use rusqlite::OptionalExtension as _;
    let vendor_exists = conn
        .prepare_cached("SELECT id FROM vendor WHERE api_name = ?1")?
        .query_row([vendor], |_| Ok(()))
        .optional()?
        .is_some();
    let program_exists = conn
        .prepare_cached("SELECT id FROM program WHERE api_name = ?1")?
        .query_row([program], |_| Ok(()))
        .optional()?
        .is_some();
    let purposes = conn
        .prepare_cached("SELECT id, external_id FROM data_use_purpose ORDER BY external_id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let products = conn
        .prepare_cached(
            "SELECT id, product_code FROM product WHERE program_api_name = ?1 ORDER BY product_code",
        )?
        .query_map([program], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Catalog {
        vendor_exists,
        program_exists,
        purposes,
        products,
        objects: HashMap::new(),
    })
}

/// What happened to one record, as the 200 body reports it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordChange {
    /// Object name (see the permission objects).
    pub object: &'static str,
    /// Where the record came from in the request (empty for the care plan).
    pub path: String,
    /// The record's external ID.
    pub external_id: String,
    /// `created`, `updated` or `unchanged`.
    pub result: Change,
}

fn cols(columns: &[(&'static str, String)]) -> Vec<(&'static str, Val)> {
    columns
        .iter()
        .map(|(c, v)| (*c, Val::from(v.clone())))
        .collect()
}

/// Upserts the configured field values of one record; returns whether any changed.
async fn upsert_extra<D: Driver>(
    d: &mut D,
    object: &'static str,
    record_id: i64,
    extra: &Map<String, Value>,
) -> std::result::Result<Change, D::Error> {
    let mut change = Change::Unchanged;
    for (name, value) in extra {
        change = change.and(set_record_field_on(d, object, record_id, name, value).await?);
    }
    Ok(change)
}

/// One record of an enrollment, ready for [`upsert_many`], and what the 200 body says of it.
struct Planned<'e> {
    object: &'static str,
    path: String,
    row: UpsertRow,
    extra: &'e Map<String, Value>,
}

impl<'e> Planned<'e> {
    fn new(
        object: &'static str,
        path: &str,
        external_id: String,
        cols: Vec<(&'static str, Val)>,
        extra: &'e Map<String, Value>,
    ) -> Self {
        Self {
            object,
            path: path.to_owned(),
            row: UpsertRow { external_id, cols },
            extra,
        }
    }
}

/// Upserts the planned records of one table (one multi-row insert for the new ones) and
/// their configured field values; appends what happened to `changes`; returns the row ids.
async fn upsert_all<D: Driver>(
    d: &mut D,
    table: &'static str,
    planned: Vec<Planned<'_>>,
    changes: &mut Vec<RecordChange>,
) -> std::result::Result<Vec<i64>, D::Error> {
    let (rows, about): (Vec<UpsertRow>, Vec<_>) = planned
        .into_iter()
        .map(|p| (p.row, (p.object, p.path, p.extra)))
        .unzip();
    let done = upsert_many(d, table, &rows).await?;
    let mut ids = Vec::with_capacity(done.len());
    for ((row, (object, path, extra)), (id, change)) in rows.into_iter().zip(about).zip(done) {
        let change = change.and(upsert_extra(d, object, id, extra).await?);
        ids.push(id);
        changes.push(RecordChange {
            object,
            path,
            external_id: row.external_id,
            result: change,
        });
    }
    Ok(ids)
}

/// Upserts every record of a valid enrollment, one table at a time (parties, care plan,
/// contacts, consents, insurances, prescriptions, additional records: each table's rows
/// point at rows of the tables before it); returns what happened to each, care plan first.
/// On the request's transaction, or on the native SQLite writer's connection
/// (`slipway_server::db::native`): the same records, statements and values.
pub async fn store<D: Driver>(
    d: &mut D,
    e: &Enrollment,
) -> std::result::Result<Vec<RecordChange>, D::Error> {
    let mut changes = Vec::new();
    let party_ids = upsert_all(d, "account", plan_parties(e), &mut changes).await?;
    let accounts = Accounts::of(e, &party_ids);
    let (plan, plan_change) = upsert_care_plan(d, e, &accounts).await?;
    changes.insert(0, plan_change);
    let contacts = plan_contacts(e, &party_ids);
    upsert_all(d, "contact_point", contacts, &mut changes).await?;
    upsert_all(d, "consent", plan_consents(e, &plan), &mut changes).await?;
    upsert_all(d, "member_plan", plan_insurances(e, &plan), &mut changes).await?;
    let prescriptions = plan_prescriptions(e, &plan, &accounts);
    upsert_all(d, "prescription", prescriptions, &mut changes).await?;
    let additional = plan_additional_records(e, &plan);
    upsert_all(d, "additional_record", additional, &mut changes).await?;
    Ok(changes)
}

/// The account rows of the request's parties, keyed by the party kind's key.
struct Accounts(HashMap<&'static str, i64>);

impl Accounts {
    /// Pairs each party of `e` with its row id (`ids`, in the order of `e.parties`).
    fn of(e: &Enrollment, ids: &[i64]) -> Self {
        Self(
            e.parties
                .iter()
                .zip(ids)
                .map(|((kind, _), id)| (kind.key(), *id))
                .collect(),
        )
    }

    fn get(&self, kind: PartyKind) -> Option<i64> {
        self.0.get(kind.key()).copied()
    }

    /// The patient's account (the validator requires a patient; 0 if there were none).
    fn patient(&self) -> i64 {
        self.get(PartyKind::Patient).unwrap_or_default()
    }
}

/// The stored care plan, which the later records point at.
struct StoredPlan {
    id: i64,
    external_id: String,
    patient_id: i64,
}

impl StoredPlan {
    /// The columns of a consent, insurance or prescription that tie it to the care plan and
    /// its patient, followed by `more`.
    fn with(&self, more: &[(&'static str, Val)]) -> Vec<(&'static str, Val)> {
        let mut c = vec![
            ("care_plan_id", Val::from(self.id)),
            ("patient_account_id", Val::from(self.patient_id)),
        ];
        c.extend_from_slice(more);
        c
    }
}

/// One account row per party of the request (patient, physician, pharmacy, …).
fn plan_parties(e: &Enrollment) -> Vec<Planned<'_>> {
    let vendor = e.vendor.as_str();
    e.parties
        .iter()
        .map(|(kind, party)| {
            let mut c = vec![
                ("kind", Val::from(kind.key())),
                ("vendor_api_name", Val::from(vendor)),
                ("source_id", Val::from(party.id.clone())),
            ];
            c.extend(cols(&party.columns));
            Planned::new(
                objects::ACCOUNT,
                &party.path,
                scoped_id(vendor, kind.key(), &party.id),
                c,
                &party.extra,
            )
        })
        .collect()
}

/// Upserts the care plan (one row, pointing at the parties' accounts); returns it and what
/// happened to it.
async fn upsert_care_plan<D: Driver>(
    d: &mut D,
    e: &Enrollment,
    accounts: &Accounts,
) -> std::result::Result<(StoredPlan, RecordChange), D::Error> {
    let (external_id, c) = care_plan_columns(e, accounts);
    let (id, change) = upsert(d, "care_plan", &external_id, &c).await?;
    Ok(stored_plan(id, change, external_id, accounts))
}

/// The care plan's external ID and columns.
fn care_plan_columns(e: &Enrollment, accounts: &Accounts) -> (String, Vec<(&'static str, Val)>) {
    let external_id = e.care_plan_external_id();
    let patient_id = accounts.patient();
    let mut c = vec![
        ("vendor_api_name", Val::from(e.vendor.as_str())),
        ("program_api_name", Val::from(e.program.clone())),
        ("enrollment_date", Val::from(e.enrollment_date.clone())),
        ("patient_account_id", Val::from(patient_id)),
    ];
    for (kind, column) in [
        (PartyKind::Physician, "physician_account_id"),
        (PartyKind::Staff, "staff_account_id"),
        (PartyKind::Caregiver, "caregiver_account_id"),
        (PartyKind::Pharmacy, "pharmacy_account_id"),
        (PartyKind::Organization, "organization_account_id"),
    ] {
        if let Some(id) = accounts.get(kind) {
            c.push((column, Val::from(id)));
        }
    }
    (external_id, c)
}

/// The stored care plan (row `id`, `change`d by its upsert) and what the 200 body says of it.
fn stored_plan(
    id: i64,
    change: Change,
    external_id: String,
    accounts: &Accounts,
) -> (StoredPlan, RecordChange) {
    let record = RecordChange {
        object: objects::CARE_PLAN,
        path: String::new(),
        external_id: external_id.clone(),
        result: change,
    };
    let plan = StoredPlan {
        id,
        external_id,
        patient_id: accounts.patient(),
    };
    (plan, record)
}

/// The contact points of every party, on the party's account (`party_ids`, in the order of
/// `e.parties`).
fn plan_contacts<'e>(e: &'e Enrollment, party_ids: &[i64]) -> Vec<Planned<'e>> {
    let vendor = e.vendor.as_str();
    e.parties
        .iter()
        .zip(party_ids)
        .flat_map(|((_, party), account_id)| party.contacts.iter().map(move |c| (*account_id, c)))
        .map(|(account_id, contact)| {
            let mut c = vec![
                ("account_id", Val::from(account_id)),
                ("kind", Val::from(contact.kind.name())),
            ];
            c.extend(cols(&contact.columns));
            if let Some(p) = contact.primary {
                c.push(("is_primary", Val::from(i64::from(p))));
            }
            Planned::new(
                objects::CONTACT_POINT,
                &contact.path,
                scoped_id(vendor, contact.kind.name(), &contact.id),
                c,
                &contact.extra,
            )
        })
        .collect()
}

/// Consents, on the care plan and the patient.
fn plan_consents<'e>(e: &'e Enrollment, plan: &StoredPlan) -> Vec<Planned<'e>> {
    e.consents
        .iter()
        .map(|consent| {
            let mut c = plan.with(&[("data_use_purpose_id", Val::from(consent.purpose_id))]);
            c.extend(cols(&consent.columns));
            Planned::new(
                objects::CONSENT,
                &consent.path,
                scoped_id(&e.vendor, "consent", &consent.id),
                c,
                &consent.extra,
            )
        })
        .collect()
}

/// Insurances; one without an `id` is keyed by the care plan and its place in the request.
fn plan_insurances<'e>(e: &'e Enrollment, plan: &StoredPlan) -> Vec<Planned<'e>> {
    e.insurances
        .iter()
        .map(|ins| {
            let external_id = match &ins.id {
                Some(id) => scoped_id(&e.vendor, "insurance", id),
                None => format!("{}:insurance#{}", plan.external_id, ins.index),
            };
            let mut c = plan.with(&[]);
            c.extend(cols(&ins.columns));
            Planned::new(objects::MEMBER_PLAN, &ins.path, external_id, c, &ins.extra)
        })
        .collect()
}

/// Prescriptions, on the request's pharmacy when it names one.
fn plan_prescriptions<'e>(
    e: &'e Enrollment,
    plan: &StoredPlan,
    accounts: &Accounts,
) -> Vec<Planned<'e>> {
    let pharmacy_id = accounts.get(PartyKind::Pharmacy);
    e.prescriptions
        .iter()
        .map(|rx| {
            let mut c = plan.with(&[("product_id", Val::from(rx.product_id))]);
            if let Some(p) = pharmacy_id {
                c.push(("pharmacy_account_id", Val::from(p)));
            }
            if let Some(r) = rx.refills {
                c.push(("refills", Val::from(r)));
            }
            c.extend(cols(&rx.columns));
            Planned::new(
                objects::PRESCRIPTION,
                &rx.path,
                scoped_id(&e.vendor, "prescription", &rx.id),
                c,
                &rx.extra,
            )
        })
        .collect()
}

/// Additional records, keyed by the care plan, their object and their place in the request.
fn plan_additional_records<'e>(e: &'e Enrollment, plan: &StoredPlan) -> Vec<Planned<'e>> {
    e.additional
        .iter()
        .map(|rec| {
            let c = vec![
                ("care_plan_id", Val::from(plan.id)),
                ("object_name", Val::from(rec.object_name.clone())),
                ("record_type", Val::from(rec.record_type.clone())),
            ];
            let external_id = format!("{}:{}#{}", plan.external_id, rec.object_name, rec.index);
            Planned::new(
                objects::ADDITIONAL_OBJECT,
                &rec.path,
                external_id,
                c,
                &rec.fields,
            )
        })
        .collect()
}
