//! Users of the care services (`app_user`, `user_permission`): the caller a token names (with
//! its permissions), and the users the admin API manages. Tokens are stored only as hashes.

use sqlx::Row;

use super::base::{Columns, Result, aggregated};
use crate::db::Tx;

use std::collections::HashMap;

use crate::auth::{Caller, Flags, Grant, hash_token};

/// Creating a user under the admin API's name for it.
pub use create_user as create;

/// A user as listed (never its token).
#[derive(Debug, Clone)]
pub struct UserRow {
    /// Row id (permission entries point to it).
    pub row_id: i64,
    /// The external id the admin API shows.
    pub external_id: String,
    /// Display name.
    pub name: String,
    /// Whether the user is an admin.
    pub admin: bool,
}

/// Every user, ordered by name.
pub async fn list(tx: &mut Tx) -> Result<Vec<UserRow>> {
    let rows =
        sqlx::query("SELECT id, external_id, name, is_admin FROM app_user ORDER BY name, id")
            .fetch_all(&mut **tx)
            .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        out.push(UserRow {
            row_id: r.try_get(0)?,
            external_id: r.try_get(1)?,
            name: r.try_get(2)?,
            admin: r.try_get::<i64, _>(3)? != 0,
        });
    }
    Ok(out)
}

/// Who a user is, as `GET {ns}/me` answers it: the ID the worklist's `owner` filters by,
/// the display name, and whether the user is an admin.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Profile {
    /// The user's external ID.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Whether the user is an admin.
    pub admin: bool,
}

/// The profile of the user with this row id.
pub async fn profile(tx: &mut Tx, row_id: i64) -> Result<Option<Profile>> {
    let row = sqlx::query("SELECT external_id, name, is_admin FROM app_user WHERE id = $1")
        .bind(row_id)
        .fetch_optional(&mut **tx)
        .await?;
    row.map(|r| {
        Ok(Profile {
            id: r.try_get(0)?,
            name: r.try_get(1)?,
            admin: r.try_get::<i64, _>(2)? != 0,
        })
    })
    .transpose()
}

/// The row id of the user with this external id.
pub async fn row_id(tx: &mut Tx, external_id: &str) -> Result<Option<i64>> {
    let row = sqlx::query("SELECT id FROM app_user WHERE external_id = $1")
        .bind(external_id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    Ok(row.map(|r| r.try_get(0)).transpose()?)
}

/// Deletes a user and its permission entries.
pub async fn delete(tx: &mut Tx, row_id: i64) -> Result<()> {
    sqlx::query("DELETE FROM user_permission WHERE user_id = $1")
        .bind(row_id)
        .execute(&mut **tx)
        .await?;
    sqlx::query("DELETE FROM app_user WHERE id = $1")
        .bind(row_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// How many users there are.
pub async fn count(tx: &mut Tx) -> Result<i64> {
    Ok(sqlx::query("SELECT COUNT(*) FROM app_user")
        .fetch_one(&mut **tx)
        .await?
        .try_get(0)?)
}

/// The columns of a caller read by [`caller_from_row`], from `u` (`app_user`): its id, its
/// admin flag and its permissions (object, field, read, create, edit), aggregated into one
/// JSON array text (`[]` without any) with the backend's JSON functions (`$agg` aggregates
/// rows into an array, `$arr` makes one row's array): one row per caller, because on SQLite
/// each row of a result crosses from the connection's thread as a message of its own.
macro_rules! caller_columns {
    ($agg:literal, $arr:literal) => {
        concat!(
            "u.id, u.is_admin, (SELECT COALESCE(CAST(",
            $agg,
            "(",
            $arr,
            "(p.object_name, p.field_name, p.can_read, p.can_create, p.can_edit)) AS TEXT), '[]') \
             FROM user_permission p WHERE p.user_id = u.id)"
        )
    };
}
pub(super) use caller_columns;

/// How many columns [`caller_columns`] has.
pub(super) const CALLER_COLUMNS: usize = 3;

/// [`load_caller`]'s statement with the JSON functions of a backend.
macro_rules! caller {
    ($agg:literal, $arr:literal) => {
        concat!(
            "SELECT ",
            caller_columns!($agg, $arr),
            " FROM app_user u WHERE u.token_hash = $1"
        )
    };
}

/// Loads the user a token belongs to, with permissions, in one statement that answers one
/// row; `None` if the token is unknown.
pub async fn load_caller(
    tx: &mut Tx,
    token: &str,
) -> std::result::Result<Option<Caller>, sqlx::Error> {
    let row = sqlx::query(with_json_functions!(tx, caller))
        .bind(hash_token(token))
        .fetch_optional(&mut **tx)
        .await?;
    row.map(|r| caller_from_row(&r, 0)).transpose()
}

/// [`load_caller`] on a native SQLite read connection (`slipway_server::db::native`): the
/// same statement (SQLite's JSON functions), read by the same [`caller_from_row`].
pub fn load_caller_native(
    conn: &slipway_server::db::native::rusqlite::Connection,
    token: &str,
) -> std::result::Result<Option<Caller>, sqlx::Error> {
    use slipway_server::db::native::database_error;
    static STATEMENT: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| caller!("json_group_array", "json_array").replace("$1", "?1"));
    let mut statement = conn.prepare_cached(&STATEMENT).map_err(database_error)?;
    let mut rows = statement
        .query([hash_token(token)])
        .map_err(database_error)?;
    match rows.next().map_err(database_error)? {
        Some(r) => caller_from_row(r, 0).map(Some),
        None => Ok(None),
    }
}

/// The caller of [`caller_columns`] starting at column `at`, whose id is not NULL.
pub(super) fn caller_from_row(
    r: &impl Columns,
    at: usize,
) -> std::result::Result<Caller, sqlx::Error> {
    let user_id: i64 = r.column(at)?;
    let admin: i64 = r.column(at + 1)?;
    Ok(caller_from_grants(
        user_id,
        admin != 0,
        aggregated(r, at + 2)?,
    ))
}

/// A caller from its permissions as stored: object, field (empty for the object itself),
/// and the read, create and edit flags (non-zero for yes).
fn caller_from_grants(
    user_id: i64,
    admin: bool,
    grants: Vec<(String, String, i64, i64, i64)>,
) -> Caller {
    let mut objects = HashMap::new();
    let mut fields = HashMap::new();
    for (object, field, read, create, edit) in grants {
        let flags = Flags {
            read: read != 0,
            create: create != 0,
            edit: edit != 0,
        };
        if field.is_empty() {
            objects.insert(object, flags);
        } else {
            fields.insert((object, field), flags);
        }
    }
    Caller::new(user_id, admin, objects, fields)
}

/// Creates a user and its permissions; returns the user's external id.
pub async fn create_user(
    tx: &mut Tx,
    name: &str,
    token: &str,
    admin: bool,
    grants: &[Grant],
) -> std::result::Result<String, sqlx::Error> {
    let external_id = uuid::Uuid::new_v4().to_string();
    let row = sqlx::query(
        "INSERT INTO app_user (external_id, name, token_hash, is_admin, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(external_id.clone())
    .bind(name.to_owned())
    .bind(hash_token(token))
    .bind(i64::from(admin))
    .bind(crate::db::now())
    .fetch_one(&mut **tx)
    .await?;
    let user_id: i64 = row.try_get(0)?;
    replace_grants(tx, user_id, grants).await?;
    Ok(external_id)
}

/// Replaces every permission entry of a user.
pub async fn replace_grants(
    tx: &mut Tx,
    user_id: i64,
    grants: &[Grant],
) -> std::result::Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM user_permission WHERE user_id = $1")
        .bind(user_id)
        .execute(&mut **tx)
        .await?;
    for g in grants {
        sqlx::query(
            "INSERT INTO user_permission (user_id, object_name, field_name, can_read, can_create, can_edit) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (user_id, object_name, field_name) DO UPDATE SET \
             can_read = excluded.can_read, can_create = excluded.can_create, can_edit = excluded.can_edit",
        )
        .bind(user_id)
        .bind(g.object.clone())
        .bind(g.field.clone().unwrap_or_default())
        .bind(i64::from(g.flags.read))
        .bind(i64::from(g.flags.create))
        .bind(i64::from(g.flags.edit))
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Reads the permission entries of a user.
pub async fn list_grants(
    tx: &mut Tx,
    user_id: i64,
) -> std::result::Result<Vec<Grant>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT object_name, field_name, can_read, can_create, can_edit FROM user_permission \
         WHERE user_id = $1 ORDER BY object_name, field_name",
    )
    .bind(user_id)
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| {
            let field: String = r.try_get(1)?;
            Ok(Grant {
                object: r.try_get(0)?,
                field: (!field.is_empty()).then_some(field),
                flags: Flags {
                    read: r.try_get::<i64, _>(2)? != 0,
                    create: r.try_get::<i64, _>(3)? != 0,
                    edit: r.try_get::<i64, _>(4)? != 0,
                },
            })
        })
        .collect()
}
