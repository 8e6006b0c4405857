//! Missing-information groups and their requested fields (`mi_group`, `mi_group_field`).

use slipway_server::sql_error::is_unique_violation;
use sqlx::Row;

use super::base::{Result, StoreError, picklist_text};
use crate::db::{Tx, json_strings, now};
use crate::fields::{FieldDef, FieldType};
use crate::model::{Group, GroupField};

/// The name of the group with this external ID.
pub async fn name(tx: &mut Tx, id: &str) -> Result<Option<String>> {
    let row = sqlx::query("SELECT name FROM mi_group WHERE external_id = $1")
        .bind(id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    Ok(row.map(|r| r.try_get(0)).transpose()?)
}

/// The columns of a requested field in a query's select list, in the order [`group_field`]
/// reads them (`f` is the table's alias); a macro so that `concat!` builds the SQL text.
macro_rules! field_columns {
    () => {
        "f.external_id, f.field_type, f.length, f.scale, f.label, f.target_object, \
         f.target_field, f.picklist"
    };
}
pub(super) use field_columns;

/// The requested fields of a group, in order.
pub async fn fields(tx: &mut Tx, id: &str) -> Result<Vec<GroupField>> {
    let rows = sqlx::query(concat!(
        "SELECT ",
        field_columns!(),
        " FROM mi_group_field f WHERE f.group_external_id = $1 \
             ORDER BY f.position, f.external_id"
    ))
    .bind(id.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    rows.iter().map(|r| group_field(r, 0)).collect()
}

/// A requested field from the eight columns of `field_columns!()` starting at `at`.
fn group_field(r: &sqlx::any::AnyRow, at: usize) -> Result<GroupField> {
    FieldColumns(
        r.try_get(at)?,
        r.try_get(at + 1)?,
        r.try_get(at + 2)?,
        r.try_get(at + 3)?,
        r.try_get(at + 4)?,
        r.try_get(at + 5)?,
        r.try_get(at + 6)?,
        r.try_get(at + 7)?,
    )
    .into_field()
}

/// The values of [`field_columns`], in order, as read from a row or from a JSON array that
/// aggregates them.
#[derive(serde::Deserialize)]
pub(super) struct FieldColumns(
    String,
    String,
    Option<i64>,
    Option<i64>,
    String,
    String,
    String,
    Option<String>,
);

impl FieldColumns {
    pub(super) fn into_field(self) -> Result<GroupField> {
        let FieldColumns(uuid, ty, length, scale, label, target_object, target_field, picklist) =
            self;
        let ty = FieldType::parse(&ty)
            .ok_or(StoreError::Corrupt("unknown field type in group metadata"))?;
        Ok(GroupField {
            uuid,
            def: FieldDef {
                ty,
                length,
                scale,
                picklist: picklist.as_deref().map(json_strings).unwrap_or_default(),
            },
            label,
            target_object,
            target_field,
        })
    }
}

/// Creates or replaces a group and its fields (UUIDs are stored in lower case). A field
/// UUID already used (by this or another group) is [`StoreError::Duplicate`] with the
/// field's index.
pub async fn put(tx: &mut Tx, id: &str, group: &Group) -> Result<()> {
    sqlx::query(
        "INSERT INTO mi_group (external_id, name, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (external_id) DO UPDATE SET name = excluded.name",
    )
    .bind(id.to_owned())
    .bind(group.name.clone())
    .bind(now())
    .execute(&mut **tx)
    .await?;
    sqlx::query("DELETE FROM mi_group_field WHERE group_external_id = $1")
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    for (i, f) in group.fields.iter().enumerate() {
        let r = sqlx::query(
            "INSERT INTO mi_group_field (external_id, group_external_id, position, field_type, length, scale, label, \
             target_object, target_field, picklist) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(f.uuid.to_lowercase())
        .bind(id.to_owned())
        .bind(i64::try_from(i).unwrap_or(i64::MAX))
        .bind(f.def.ty.as_str())
        .bind(f.def.length)
        .bind(f.def.scale)
        .bind(f.label.clone())
        .bind(f.target_object.clone())
        .bind(f.target_field.clone())
        .bind(picklist_text(&f.def.picklist))
        .execute(&mut **tx)
        .await;
        match r {
            Err(e) if is_unique_violation(&e) => return Err(StoreError::Duplicate { index: i }),
            Err(e) => return Err(e.into()),
            Ok(_) => {}
        }
    }
    Ok(())
}

/// Deletes a group and its fields; whether there was one.
pub async fn delete(tx: &mut Tx, id: &str) -> Result<bool> {
    let done = sqlx::query("DELETE FROM mi_group WHERE external_id = $1")
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    sqlx::query("DELETE FROM mi_group_field WHERE group_external_id = $1")
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(true)
}
