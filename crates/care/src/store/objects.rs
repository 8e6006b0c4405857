//! The eRX object configuration: which objects are additional, their record types and their
//! configured fields (`object_config`, `object_config_field`).

use std::collections::HashMap;

use sqlx::Row;

use super::{Result, json_list, picklist_text};
use crate::db::{Tx, json_strings, now};
use crate::enrollment::validate::ObjectConfig;
use crate::fields::{FieldDef, FieldType};

/// Reads the whole eRX object configuration, by object name. Stored fields of an unknown
/// type are skipped.
pub async fn load_all(tx: &mut Tx) -> Result<HashMap<String, ObjectConfig>> {
    let mut objects = HashMap::new();
    for r in sqlx::query("SELECT object_name, is_additional, record_types FROM object_config")
        .fetch_all(&mut **tx)
        .await?
    {
        let name: String = r.try_get(0)?;
        let additional: i64 = r.try_get(1)?;
        let record_types: String = r.try_get(2)?;
        objects.insert(
            name,
            ObjectConfig {
                additional: additional != 0,
                record_types: json_strings(&record_types),
                fields: HashMap::new(),
            },
        );
    }
    for r in sqlx::query(
        "SELECT object_name, field_name, field_type, length, scale, picklist FROM object_config_field",
    )
    .fetch_all(&mut **tx)
    .await?
    {
        let object: String = r.try_get(0)?;
        let field: String = r.try_get(1)?;
        let ty: String = r.try_get(2)?;
        let Some(ty) = FieldType::parse(&ty) else { continue };
        let picklist: Option<String> = r.try_get(5)?;
        let def = FieldDef {
            ty,
            length: r.try_get(3)?,
            scale: r.try_get(4)?,
            picklist: picklist.as_deref().map(json_strings).unwrap_or_default(),
        };
        objects.entry(object).or_default().fields.insert(field, def);
    }
    Ok(objects)
}

/// [`load_all`] on a native read connection (`slipway_server::db::native`).
pub fn load_all_native(
    conn: &slipway_server::db::native::rusqlite::Connection,
) -> slipway_server::db::native::rusqlite::Result<HashMap<String, ObjectConfig>> {
    let mut objects = HashMap::new();
    let mut stmt =
        conn.prepare_cached("SELECT object_name, is_additional, record_types FROM object_config")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let name: String = r.get(0)?;
        let additional: i64 = r.get(1)?;
        let record_types: String = r.get(2)?;
        objects.insert(
            name,
            ObjectConfig {
                additional: additional != 0,
                record_types: json_strings(&record_types),
                fields: HashMap::new(),
            },
        );
    }
    let mut stmt = conn.prepare_cached(
        "SELECT object_name, field_name, field_type, length, scale, picklist FROM object_config_field",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let object: String = r.get(0)?;
        let field: String = r.get(1)?;
        let ty: String = r.get(2)?;
        let Some(ty) = FieldType::parse(&ty) else {
            continue;
        };
        let picklist: Option<String> = r.get(5)?;
        let def = FieldDef {
            ty,
            length: r.get(3)?,
            scale: r.get(4)?,
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
