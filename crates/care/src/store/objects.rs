//! The eRX object configuration: which objects are additional, their record types and their
//! configured fields (`object_config`, `object_config_field`).

use std::collections::HashMap;

use slipway_server::db::native::{database_error, rusqlite};

use super::base::{Columns, Result, json_list, picklist_text};
use crate::db::{Tx, json_strings, now};
use crate::enrollment::validate::ObjectConfig;
use crate::fields::{FieldDef, FieldType};

/// The statement of every object's configuration (without its fields).
const OBJECTS: &str = "SELECT object_name, is_additional, record_types FROM object_config";
/// The statement of every configured field.
const FIELDS: &str =
    "SELECT object_name, field_name, field_type, length, scale, picklist FROM object_config_field";

/// Reads the whole eRX object configuration, by object name. Stored fields of an unknown
/// type are skipped.
pub async fn load_all(tx: &mut Tx) -> Result<HashMap<String, ObjectConfig>> {
    let mut objects = HashMap::new();
    for r in sqlx::query(OBJECTS).fetch_all(&mut **tx).await? {
        add_object(&mut objects, &r)?;
    }
    for r in sqlx::query(FIELDS).fetch_all(&mut **tx).await? {
        add_field(&mut objects, &r)?;
    }
    Ok(objects)
}

/// [`load_all`] on a native read connection (`slipway_server::db::native`): the same
/// statements, read by the same functions.
pub fn load_all_native(
    conn: &rusqlite::Connection,
) -> std::result::Result<HashMap<String, ObjectConfig>, sqlx::Error> {
    let mut objects = HashMap::new();
    let mut stmt = conn.prepare_cached(OBJECTS).map_err(database_error)?;
    let mut rows = stmt.query([]).map_err(database_error)?;
    while let Some(r) = rows.next().map_err(database_error)? {
        add_object(&mut objects, r)?;
    }
    let mut stmt = conn.prepare_cached(FIELDS).map_err(database_error)?;
    let mut rows = stmt.query([]).map_err(database_error)?;
    while let Some(r) = rows.next().map_err(database_error)? {
        add_field(&mut objects, r)?;
    }
    Ok(objects)
}

/// Adds the object of a row of [`OBJECTS`] (without its fields).
fn add_object(
    objects: &mut HashMap<String, ObjectConfig>,
    r: &impl Columns,
) -> std::result::Result<(), sqlx::Error> {
    let additional: i64 = r.column(1)?;
    let record_types: String = r.column(2)?;
    objects.insert(
        r.column(0)?,
        ObjectConfig {
            additional: additional != 0,
            record_types: json_strings(&record_types),
            fields: HashMap::new(),
        },
    );
    Ok(())
}

/// Adds the field of a row of [`FIELDS`] to its object, unless its type is unknown.
fn add_field(
    objects: &mut HashMap<String, ObjectConfig>,
    r: &impl Columns,
) -> std::result::Result<(), sqlx::Error> {
    let object: String = r.column(0)?;
    let field: String = r.column(1)?;
    let ty: String = r.column(2)?;
    let Some(ty) = FieldType::parse(&ty) else {
        return Ok(());
    };
    let picklist: Option<String> = r.column(5)?;
    let def = FieldDef {
        ty,
        length: r.column(3)?,
        scale: r.column(4)?,
        picklist: picklist.as_deref().map(json_strings).unwrap_or_default(),
    };
    objects.entry(object).or_default().fields.insert(field, def);
    Ok(())
}

/// Creates or replaces an object's configuration and all its fields (a field name given
/// twice violates the schema's uniqueness and fails the call).
pub async fn put(
    tx: &mut Tx,
    name: &str,
    additional: bool,
    record_types: &[String],
    fields: &[(String, FieldDef)],
) -> Result<()> {
    sqlx::query(
        "INSERT INTO object_config (object_name, is_additional, record_types, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (object_name) DO UPDATE SET is_additional = excluded.is_additional, record_types = excluded.record_types",
    )
    .bind(name.to_owned())
    .bind(i64::from(additional))
    .bind(json_list(record_types))
    .bind(now())
    .execute(&mut **tx)
    .await?;
    sqlx::query("DELETE FROM object_config_field WHERE object_name = $1")
        .bind(name.to_owned())
        .execute(&mut **tx)
        .await?;
    for (field, def) in fields {
        sqlx::query(
            "INSERT INTO object_config_field (object_name, field_name, field_type, length, scale, picklist) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(name.to_owned())
        .bind(field.clone())
        .bind(def.ty.as_str())
        .bind(def.length)
        .bind(def.scale)
        .bind(picklist_text(&def.picklist))
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Deletes an object's configuration and its fields; whether there was one.
pub async fn delete(tx: &mut Tx, name: &str) -> Result<bool> {
    let done = sqlx::query("DELETE FROM object_config WHERE object_name = $1")
        .bind(name.to_owned())
        .execute(&mut **tx)
        .await?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    sqlx::query("DELETE FROM object_config_field WHERE object_name = $1")
        .bind(name.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(true)
}
