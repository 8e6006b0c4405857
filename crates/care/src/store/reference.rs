//! Reference data managed by the admin API: eRX vendors, programs, data use purposes (each a
//! key and a name) and products.

use sqlx::Row;

use super::base::Result;
use crate::db::{Tx, now};

/// The kinds of reference data that are a key and a display name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// eRX vendors, keyed by API name.
    Vendor,
    /// Care programs, keyed by API name.
    Program,
    /// Data use purposes, keyed by external ID.
    DataUsePurpose,
}

impl Named {
    fn list_sql(self) -> &'static str {
        match self {
            Named::Vendor => "SELECT api_name, name FROM vendor ORDER BY api_name",
            Named::Program => "SELECT api_name, name FROM program ORDER BY api_name",
            Named::DataUsePurpose => {
                "SELECT external_id, name FROM data_use_purpose ORDER BY external_id"
            }
        }
    }

    fn put_sql(self) -> &'static str {
        match self {
            Named::Vendor => {
                "INSERT INTO vendor (api_name, name, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (api_name) DO UPDATE SET name = excluded.name"
            }
            Named::Program => {
                "INSERT INTO program (api_name, name, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (api_name) DO UPDATE SET name = excluded.name"
            }
            Named::DataUsePurpose => {
                "INSERT INTO data_use_purpose (external_id, name, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (external_id) DO UPDATE SET name = excluded.name"
            }
        }
    }

    fn delete_sql(self) -> &'static str {
        match self {
            Named::Vendor => "DELETE FROM vendor WHERE api_name = $1",
            Named::Program => "DELETE FROM program WHERE api_name = $1",
            Named::DataUsePurpose => "DELETE FROM data_use_purpose WHERE external_id = $1",
        }
    }

    fn count_sql(self) -> &'static str {
        match self {
            Named::Vendor => "SELECT COUNT(*) FROM vendor",
            Named::Program => "SELECT COUNT(*) FROM program",
            Named::DataUsePurpose => "SELECT COUNT(*) FROM data_use_purpose",
        }
    }
}

/// One key-and-name record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedRow {
    /// API name or external ID.
    pub key: String,
    /// Display name.
    pub name: String,
}

/// Every record of a kind, ordered by key.
pub async fn list_named(tx: &mut Tx, kind: Named) -> Result<Vec<NamedRow>> {
    let rows = sqlx::query(kind.list_sql()).fetch_all(&mut **tx).await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        out.push(NamedRow {
            key: r.try_get(0)?,
            name: r.try_get(1)?,
        });
    }
    Ok(out)
}

/// Creates or renames a record.
pub async fn put_named(tx: &mut Tx, kind: Named, key: &str, name: &str) -> Result<()> {
    sqlx::query(kind.put_sql())
        .bind(key.to_owned())
        .bind(name.to_owned())
        .bind(now())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Deletes a record; whether there was one.
pub async fn delete_named(tx: &mut Tx, kind: Named, key: &str) -> Result<bool> {
    let done = sqlx::query(kind.delete_sql())
        .bind(key.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// How many records of a kind there are.
pub async fn count_named(tx: &mut Tx, kind: Named) -> Result<i64> {
    Ok(sqlx::query(kind.count_sql())
        .fetch_one(&mut **tx)
        .await?
        .try_get(0)?)
}

/// A product of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Product {
    /// Product ID (what `drugNdc` must contain).
    pub code: String,
    /// Display name.
    pub name: String,
    /// API name of its program.
    pub program_api_name: String,
}

/// Every product, ordered by product ID.
pub async fn list_products(tx: &mut Tx) -> Result<Vec<Product>> {
    let rows = sqlx::query(
        "SELECT product_code, name, program_api_name FROM product ORDER BY product_code",
    )
    .fetch_all(&mut **tx)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        out.push(Product {
            code: r.try_get(0)?,
            name: r.try_get(1)?,
            program_api_name: r.try_get(2)?,
        });
    }
    Ok(out)
}

/// Creates or replaces a product.
pub async fn put_product(tx: &mut Tx, product: &Product) -> Result<()> {
    sqlx::query(
        "INSERT INTO product (product_code, name, program_api_name, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (product_code) DO UPDATE SET name = excluded.name, program_api_name = excluded.program_api_name",
    )
    .bind(product.code.clone())
    .bind(product.name.clone())
    .bind(product.program_api_name.clone())
    .bind(now())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Deletes a product; whether there was one.
pub async fn delete_product(tx: &mut Tx, code: &str) -> Result<bool> {
    let done = sqlx::query("DELETE FROM product WHERE product_code = $1")
        .bind(code.to_owned())
        .execute(&mut **tx)
        .await?;
    Ok(done.rows_affected() > 0)
}
