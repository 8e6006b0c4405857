//! Apps: registration (the app row, its service principal and its access-control resource in
//! one transaction), reads limited to what the caller may see, keyset-paginated lists and
//! permanent deletion.

use slipway_devfile::AppName;
use sqlx::Row;
use sqlx::any::AnyRow;

use super::access;
use crate::db::{Tx, now_millis, rfc3339};
use crate::model::AppStatus;
use crate::model::Caller;
use crate::model::Role;
use crate::pagination::Cursor;

/// One app as stored (the HTTP layer shows it as [`slipway_api::AppDetails`]).
#[derive(Debug, Clone)]
pub struct AppRecord {
    /// The app's UUID (also the id of its access-control resource).
    pub id: String,
    /// Unique machine-readable name.
    pub name: String,
    /// Human-readable name.
    pub display_name: String,
    /// Description, empty when none was given.
    pub description: String,
    /// `registered`, `deploying`, `RUNNING`, `FAILED` or `suspended`.
    pub status: AppStatus,
    /// The app's URL; null until deployed.
    pub url: Option<String>,
    /// The devfile of the last build; null until built.
    pub devfile: Option<String>,
    /// False while disabled.
    pub enabled: bool,
    /// Epoch milliseconds.
    pub created_at: i64,
    /// Epoch milliseconds.
    pub updated_at: i64,
}

impl AppRecord {
    /// The app as a list shows it (times in RFC 3339, UTC).
    pub fn listing(&self) -> slipway_api::AppListing {
        slipway_api::AppListing {
            name: self.name.clone(),
            display_name: self.display_name.clone(),
            status: self.status,
            url: self.url.clone(),
            enabled: self.enabled,
            created_at: rfc3339(self.created_at),
            updated_at: rfc3339(self.updated_at),
        }
    }

    /// The app as `GET /v1/apps/{app_id}` shows it.
    pub fn details(&self) -> slipway_api::AppDetails {
        slipway_api::AppDetails {
            listing: self.listing(),
            description: self.description.clone(),
            devfile: self.devfile.clone(),
            resources: Vec::new(),
            volumes: Vec::new(),
        }
    }
}

/// What registering an app needs, already validated.
#[derive(Debug, Clone)]
pub struct NewApp {
    /// The name, checked by the app-name rule.
    pub name: AppName,
    /// Non-blank display name.
    pub display_name: String,
    /// Description (may be empty).
    pub description: String,
}

const COLUMNS: &str = "a.id, a.name, a.display_name, a.description, a.status, a.url, a.devfile, \
                       a.enabled, a.created_at, a.updated_at";

fn record(row: &AnyRow) -> Result<AppRecord, sqlx::Error> {
    let status: String = row.try_get(4)?;
    Ok(AppRecord {
        id: row.try_get(0)?,
        name: row.try_get(1)?,
        display_name: row.try_get(2)?,
        description: row.try_get(3)?,
        status: AppStatus::parse(&status)
            .ok_or_else(|| sqlx::Error::Decode(format!("unknown app status {status:?}").into()))?,
        url: row.try_get(5)?,
        devfile: row.try_get(6)?,
        enabled: row.try_get::<i64, _>(7)? != 0,
        created_at: row.try_get(8)?,
        updated_at: row.try_get(9)?,
    })
}

/// Registers an app for `caller`: the app row (status `registered`, enabled, no URL), its
/// service principal, and its access-control resource with the caller as owner. A taken
/// name fails with a unique violation (see [`super::is_unique_violation`]).
pub async fn register(
    tx: &mut Tx,
    caller: &Caller,
    app: &NewApp,
) -> Result<AppRecord, sqlx::Error> {
    let id = uuid::Uuid::new_v4().to_string();
    let now = now_millis();
    sqlx::query(
        "INSERT INTO app (id, account_id, name, display_name, description, status, url, devfile, \
         enabled, created_by, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL, 1, $7, $8, $8)",
    )
    .bind(id.clone())
    .bind(caller.account_id.clone())
    .bind(app.name.as_str().to_owned())
    .bind(app.display_name.clone())
    .bind(app.description.clone())
    .bind(AppStatus::Registered.as_str())
    .bind(caller.user_id.clone())
    .bind(now)
    .execute(&mut **tx)
    .await?;
    sqlx::query(
        "INSERT INTO service_principal (id, app_id, name, created_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(id.clone())
    .bind(format!("app-{}", app.name))
    .bind(now)
    .execute(&mut **tx)
    .await?;
    access::create_resource(tx, &id, "app", &caller.account_id).await?;
    access::grant(tx, &id, &caller.user_id, Role::Owner).await?;
    Ok(AppRecord {
        id,
        name: app.name.as_str().to_owned(),
        display_name: app.display_name.clone(),
        description: app.description.clone(),
        status: AppStatus::Registered,
        url: None,
        devfile: None,
        enabled: true,
        created_at: now,
        updated_at: now,
    })
}

/// The app `id` with the caller's role on it, or `None` when it does not exist or the caller
/// may not see it (the two are deliberately indistinguishable).
pub async fn get_visible(
    tx: &mut Tx,
    caller: &Caller,
    id: &str,
) -> Result<Option<(AppRecord, Role)>, sqlx::Error> {
    // An app the request's token does not reach is not there for it, as one of another
    // account is not.
    if !caller.scope.reaches(id) {
        return Ok(None);
    }
    let Some(role) = access::role_of(tx, id, &caller.user_id, &caller.account_id).await? else {
        return Ok(None);
    };
    let sql = format!("SELECT {COLUMNS} FROM app a WHERE a.id = $1 AND a.account_id = $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id.to_owned())
        .bind(caller.account_id.clone())
        .fetch_optional(&mut **tx)
        .await?;
    row.map(|r| Ok((record(&r)?, role))).transpose()
}

/// Up to `limit` apps the caller may see (and the request's token reaches), in
/// `(created_at, id)` order, starting after `after`.
pub async fn list_visible(
    tx: &mut Tx,
    caller: &Caller,
    after: Option<&Cursor>,
    limit: u32,
) -> Result<Vec<AppRecord>, sqlx::Error> {
    let (time, id) = match after {
        Some(c) => (c.created_at, c.id.clone()),
        None => (i64::MIN, String::new()),
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM app a WHERE a.account_id = $1 \
         AND EXISTS (SELECT 1 FROM acl_grant g WHERE g.resource_id = a.id AND g.user_id = $2) \
         AND (a.created_at > $3 OR (a.created_at = $3 AND a.id > $4)) \
         ORDER BY a.created_at, a.id LIMIT $5"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(caller.account_id.clone())
        .bind(caller.user_id.clone())
        .bind(time)
        .bind(id)
        // A token limited to some apps reads the whole list (an account's apps are a few
        // hundred at most) and keeps its own: a page is then as long as it should be.
        .bind(if caller.scope.apps.is_some() {
            i64::MAX
        } else {
            i64::from(limit)
        })
        .fetch_all(&mut **tx)
        .await?;
    rows.iter()
        .map(record)
        .filter(|r| r.as_ref().map_or(true, |a| caller.scope.reaches(&a.id)))
        .take(limit as usize)
        .collect()
}

/// Stores the devfile of the app's latest build upload.
pub async fn set_devfile(tx: &mut Tx, id: &str, devfile: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE app SET devfile = $1, updated_at = $2 WHERE id = $3")
        .bind(devfile.to_owned())
        .bind(now_millis())
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Sets the status (and, when given, the URL) of an app that is enabled. A disabled app is
/// left alone, so a deployment finishing while a disable commits can never make a
/// `suspended` app look RUNNING.
pub async fn set_status(
    tx: &mut Tx,
    id: &str,
    status: AppStatus,
    url: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE app SET status = $1, url = COALESCE($2, url), updated_at = $3 \
         WHERE id = $4 AND enabled = 1",
    )
    .bind(status.as_str())
    .bind(url.map(str::to_owned))
    .bind(now_millis())
    .bind(id.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Enables or disables the app, setting its status with it.
pub async fn set_enabled(
    tx: &mut Tx,
    id: &str,
    enabled: bool,
    status: AppStatus,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE app SET enabled = $1, status = $2, updated_at = $3 WHERE id = $4")
        .bind(i64::from(enabled))
        .bind(status.as_str())
        .bind(now_millis())
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The app `id` whatever the caller (for the deployer, which acts for the platform).
pub async fn get(tx: &mut Tx, id: &str) -> Result<Option<AppRecord>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM app a WHERE a.id = $1");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(record).transpose()
}

/// The account app `id` belongs to, whoever asks (the deployer, acting for the platform).
pub async fn account_of(tx: &mut Tx, id: &str) -> Result<Option<String>, sqlx::Error> {
    let row = sqlx::query("SELECT account_id FROM app WHERE id = $1")
        .bind(id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    row.map(|r| r.try_get::<String, _>(0)).transpose()
}

/// The name and account of app `id`, whoever asks (what an event about it says, and whose
/// subscriptions hear it).
pub async fn name_and_account(
    tx: &mut Tx,
    id: &str,
) -> Result<Option<(String, String)>, sqlx::Error> {
    let row = sqlx::query("SELECT name, account_id FROM app WHERE id = $1")
        .bind(id.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    row.map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).transpose()
}

/// The id of the app called `name`, whoever owns it (the legacy build flow tells "yours"
/// from "taken" with it, after checking visibility).
pub async fn id_by_name(tx: &mut Tx, name: &str) -> Result<Option<String>, sqlx::Error> {
    let row = sqlx::query("SELECT id FROM app WHERE name = $1")
        .bind(name.to_owned())
        .fetch_optional(&mut **tx)
        .await?;
    row.map(|r| r.try_get::<String, _>(0)).transpose()
}

/// Whether an app is called `name` (the gateway tells 502 from 404 with it).
pub async fn name_exists(tx: &mut Tx, name: &str) -> Result<bool, sqlx::Error> {
    let row = sqlx::query("SELECT COUNT(*) FROM app WHERE name = $1")
        .bind(name.to_owned())
        .fetch_one(&mut **tx)
        .await?;
    Ok(row.try_get::<i64, _>(0)? > 0)
}

/// Deletes the app `id` with its build jobs, app secrets, service principal and access-control
/// resource. Returns whether an app row was removed.
pub async fn delete(tx: &mut Tx, id: &str) -> Result<bool, sqlx::Error> {
    super::secrets::delete_app_secrets(tx, id).await?;
    super::builds::delete_for_app(tx, id).await?;
    super::deployments::delete_for_app(tx, id).await?;
    super::service_ports::delete_for_app(tx, id).await?;
    super::resources::delete_for_app(tx, id).await?;
    super::job_runs::delete_for_app(tx, id).await?;
    super::notifications::delete_for_app(tx, id).await?;
    super::domains::delete_for_app(tx, id).await?;
    super::git::delete(tx, id).await?;
    access::delete_resource(tx, id).await?;
    sqlx::query("DELETE FROM service_principal WHERE app_id = $1")
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    let done = sqlx::query("DELETE FROM app WHERE id = $1")
        .bind(id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Every app's id (for the retention pass, which looks at all of them).
pub async fn all_ids(tx: &mut Tx) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query("SELECT id FROM app ORDER BY id")
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(|r| r.try_get::<String, _>(0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_use_the_spec_spelling() {
        assert_eq!(AppStatus::Running.as_str(), "RUNNING");
        assert_eq!(AppStatus::Suspended.as_str(), "suspended");
        for s in ["registered", "deploying", "RUNNING", "FAILED", "suspended"] {
            assert_eq!(AppStatus::parse(s).map(AppStatus::as_str), Some(s));
        }
        assert_eq!(
            serde_json::to_value(AppStatus::Registered).unwrap(),
            "registered"
        );
    }
}
