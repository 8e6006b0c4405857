//! `service_port`: the loopback port each public service keeps in the `ports` gateway mode.

use std::collections::BTreeMap;

use sqlx::Row;

use crate::db::Tx;

/// Service → port of app `app_id`.
pub async fn of_app(tx: &mut Tx, app_id: &str) -> Result<BTreeMap<String, u16>, sqlx::Error> {
    let rows = sqlx::query("SELECT service, port FROM service_port WHERE app_id = $1")
        .bind(app_id.to_owned())
        .fetch_all(&mut **tx)
        .await?;
    rows.iter()
        .map(|r| {
            let port: i64 = r.try_get(1)?;
            Ok((r.try_get::<String, _>(0)?, port as u16))
        })
        .collect()
}

/// Records the port of `service` (replacing an earlier one).
pub async fn set(tx: &mut Tx, app_id: &str, service: &str, port: u16) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO service_port (app_id, service, port) VALUES ($1, $2, $3) \
         ON CONFLICT (app_id, service) DO UPDATE SET port = excluded.port",
    )
    .bind(app_id.to_owned())
    .bind(service.to_owned())
    .bind(i64::from(port))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Forgets every port of a deleted app.
pub async fn delete_for_app(tx: &mut Tx, app_id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM service_port WHERE app_id = $1")
        .bind(app_id.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}
