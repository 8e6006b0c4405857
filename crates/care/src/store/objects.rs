//! The eRX object configuration: which objects are additional, their record types and their
//! configured fields (`object_config`, `object_config_field`).

use std::collections::HashMap;

use super::{Result, aggregated, json_list, picklist_text};
use crate::db::{Tx, json_strings, now};
use crate::enrollment::validate::ObjectConfig;
use crate::fields::{FieldDef, FieldType};

/// The columns of the whole eRX object configuration, read by [`objects_from_row`]: the
/// objects (name, additional flag, record types) and their fields (object, name, type,
/// length, scale, picklist), each aggregated into one JSON array text (`[]` without any)
/// with the backend's JSON functions (`$agg` aggregates rows into an array, `$arr` makes one
/// row's array), so that the configuration crosses from SQLite's connection thread as one
/// row, not one message per object and field.
macro_rules! object_columns {
    ($agg:literal, $arr:literal) => {
        concat!(
            "(SELECT COALESCE(CAST(",
            $agg,
            "(",
            $arr,
            "(object_name, is_additional, record_types)) AS TEXT), '[]') FROM object_config), \
             (SELECT COALESCE(CAST(",
            $agg,
            "(",
            $arr,
            "(object_name, field_name, field_type, length, scale, picklist)) AS TEXT), '[]') \
             FROM object_config_field)"
        )
    };
}
pub(super) use object_columns;

/// [`load_all`]'s statement with the JSON functions of a backend.
macro_rules! all_objects {
    ($agg:literal, $arr:literal) => {
        concat!("SELECT ", object_columns!($agg, $arr))
    };
}

/// Reads the whole eRX object configuration, by object name, in one statement that answers
/// one row. Stored fields of an unknown type are skipped.
pub async fn load_all(tx: &mut Tx) -> Result<HashMap<String, ObjectConfig>> {
    let r = sqlx::query(with_json_functions!(tx, all_objects))
        .fetch_one(&mut **tx)
        .await?;
    Ok(objects_from_row(&r, 0)?)
}

/// One object as stored: name, additional flag (non-zero for yes), record types (JSON text).
type ObjectColumns = (String, i64, String);

/// One configured field as stored: object, name, type, length, scale, picklist (JSON text).
type FieldColumns = (
    String,
    String,
    String,
    Option<i64>,
    Option<i64>,
    Option<String>,
);

/// The configuration of [`object_columns`] starting at column `at`.
pub(super) fn objects_from_row(
    r: &sqlx::any::AnyRow,
    at: usize,
) -> std::result::Result<HashMap<String, ObjectConfig>, sqlx::Error> {
    let stored: Vec<ObjectColumns> = aggregated(r, at)?;
    let fields: Vec<FieldColumns> = aggregated(r, at + 1)?;
    let mut objects: HashMap<String, ObjectConfig> = stored
        .into_iter()
        .map(|(name, additional, record_types)| {
            let config = ObjectConfig {
                additional: additional != 0,
                record_types: json_strings(&record_types),
                fields: HashMap::new(),
            };
            (name, config)
        })
        .collect();
    for (object, field, ty, length, scale, picklist) in fields {
        let Some(ty) = FieldType::parse(&ty) else {
            continue;
        };
        let def = FieldDef {
            ty,
            length,
            scale,
            picklist: picklist.as_deref().map(json_strings).unwrap_or_default(),
        };
        objects.entry(object).or_default().fields.insert(field, def);
    }
    Ok(objects)
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
