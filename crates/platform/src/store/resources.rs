//! `resource`: the backing resources of each app (see migration 0007) and whether its
//! current devfile declares them (`attached`) or not any more (`detached`, data kept).

use sqlx::Row;

use crate::db::{Tx, now_millis};

/// One resource row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRow {
    /// The app.
    pub app_id: String,
    /// `relationalDatabase`, `cache`, `inMemoryDatabase`.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// `postgres`, `mysql`, `redis`, `memcached`.
    pub engine: String,
    /// The memory cap asked for, in MiB.
    pub memory_mb: Option<i64>,
    /// `attached` or `detached`.
    pub state: String,
    /// Epoch milliseconds.
    pub created_at: i64,
}

/// Declared by the app's current devfile.
pub const ATTACHED: &str = "attached";
/// Declared once, not any more: its data is kept until it is destroyed.
pub const DETACHED: &str = "detached";

/// Every resource of the app, by kind and name.
pub async fn of_app(tx: &mut Tx, app_id: &str) -> Result<Vec<ResourceRow>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT app_id, kind, name, engine, memory_mb, state, created_at FROM resource \
         WHERE app_id = $1 ORDER BY kind, name",
    )
    .bind(app_id.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(ResourceRow {
                app_id: r.try_get(0)?,
                kind: r.try_get(1)?,
                name: r.try_get(2)?,
                engine: r.try_get(3)?,
                memory_mb: r.try_get(4)?,
                state: r.try_get(5)?,
                created_at: r.try_get(6)?,
            })
        })
        .collect()
}

/// The apps with an attached resource of one of `engines` (who a shared server going down
/// concerns).
pub async fn apps_with_engines(tx: &mut Tx, engines: &[&str]) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT DISTINCT app_id, engine FROM resource WHERE state = $1 ORDER BY app_id",
    )
    .bind(ATTACHED.to_owned())
    .fetch_all(&mut **tx)
    .await?;
    let mut apps: Vec<String> = Vec::new();
    for r in &rows {
        let (app, engine): (String, String) = (r.try_get(0)?, r.try_get(1)?);
        if engines.contains(&engine.as_str()) && !apps.contains(&app) {
            apps.push(app);
        }
    }
    Ok(apps)
}

/// Records a declared resource as attached (inserting it, or updating its engine settings).
pub async fn attach(
    tx: &mut Tx,
    app_id: &str,
    kind: &str,
    name: &str,
    engine: &str,
    memory_mb: Option<i64>,
) -> Result<(), sqlx::Error> {
    let now = now_millis();
    sqlx::query(
        "INSERT INTO resource (app_id, kind, name, engine, memory_mb, state, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7) \
         ON CONFLICT (app_id, kind, name) DO UPDATE SET engine = excluded.engine, \
         memory_mb = excluded.memory_mb, state = excluded.state, updated_at = excluded.updated_at",
    )
    .bind(app_id.to_owned())
    .bind(kind.to_owned())
    .bind(name.to_owned())
    .bind(engine.to_owned())
    .bind(memory_mb)
    .bind(ATTACHED)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Marks a resource detached.
pub async fn detach(tx: &mut Tx, app_id: &str, kind: &str, name: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE resource SET state = $1, updated_at = $2 WHERE app_id = $3 AND kind = $4 AND name = $5",
    )
    .bind(DETACHED)
    .bind(now_millis())
    .bind(app_id.to_owned())
    .bind(kind.to_owned())
    .bind(name.to_owned())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Forgets one resource (after it was destroyed).
pub async fn delete(
    tx: &mut Tx,
    app_id: &str,
    kind: &str,
    name: &str,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query("DELETE FROM resource WHERE app_id = $1 AND kind = $2 AND name = $3")
        .bind(app_id.to_owned())
        .bind(kind.to_owned())
        .bind(name.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Forgets every resource of a deleted app.
pub async fn delete_for_app(tx: &mut Tx, app_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM resource WHERE app_id = $1")
        .bind(app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}
