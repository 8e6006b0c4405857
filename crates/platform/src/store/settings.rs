//! `platform_setting`: a few named values the server keeps about itself (the first account
//! and its owner).

use sqlx::Row;

use crate::db::Tx;

/// The values of `keys` that are set, as `(key, value)`.
pub async fn get_many(tx: &mut Tx, keys: &[&str]) -> Result<Vec<(String, String)>, sqlx::Error> {
    let mut out = Vec::new();
    for key in keys {
        let row = sqlx::query("SELECT value FROM platform_setting WHERE key = $1")
            .bind((*key).to_owned())
            .fetch_optional(&mut **tx)
            .await?;
        if let Some(row) = row {
            out.push(((*key).to_owned(), row.try_get(0)?));
        }
    }
    Ok(out)
}

/// Sets `key` for the first time (a second set of the same key is a unique violation).
pub async fn insert(tx: &mut Tx, key: &str, value: &str) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO platform_setting (key, value) VALUES ($1, $2)")
        .bind(key.to_owned())
        .bind(value.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(())
}
