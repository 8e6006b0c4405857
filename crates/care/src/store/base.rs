//! What every store module builds on: the store's error and result, reading a row of either
//! driver by one function, and the JSON text lists are stored as. A leaf inside `store/`, so
//! the modules that share it use it and never each other through `mod.rs`.

use slipway_server::db::native::{database_error, rusqlite};

use crate::error::CareError;

/// Why a store function failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database failed (a fault, not a client error).
    #[error("database error")]
    Database(#[from] sqlx::Error),
    /// A unique key given in the input is already taken; `index` is the position of the
    /// offending item in the input list.
    #[error("duplicate key at input index {index}")]
    Duplicate {
        /// Position of the item in the input list.
        index: usize,
    },
    /// Stored data cannot be read back as a domain value (a fault).
    #[error("{0}")]
    Corrupt(&'static str),
}

/// Results of the store layer.
pub type Result<T> = std::result::Result<T, StoreError>;

/// A store failure at start-up (loading the demo data set): here, not in `error.rs`, so the
/// start-up error stays a leaf that knows nothing of the store.
impl From<StoreError> for CareError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Database(e) => CareError::Database(e),
            other => CareError::Config(format!("the data could not be stored: {other}")),
        }
    }
}

/// A column value both drivers decode: sqlx's (either backend) and the native SQLite
/// connection's (`rusqlite`).
pub(crate) trait ColumnValue:
    for<'r> sqlx::Decode<'r, sqlx::Any> + sqlx::Type<sqlx::Any> + rusqlite::types::FromSql
{
}

impl<T> ColumnValue for T where
    T: for<'r> sqlx::Decode<'r, sqlx::Any> + sqlx::Type<sqlx::Any> + rusqlite::types::FromSql
{
}

/// A result row of either driver, read by column index: a statement that runs through sqlx
/// and on a native SQLite read connection is turned into records by **one** function, so
/// the two paths cannot read a row differently.
pub(crate) trait Columns {
    /// The value of column `index`.
    fn column<T: ColumnValue>(&self, index: usize) -> std::result::Result<T, sqlx::Error>;
}

impl Columns for sqlx::any::AnyRow {
    fn column<T: ColumnValue>(&self, index: usize) -> std::result::Result<T, sqlx::Error> {
        sqlx::Row::try_get(self, index)
    }
}

impl Columns for rusqlite::Row<'_> {
    fn column<T: ColumnValue>(&self, index: usize) -> std::result::Result<T, sqlx::Error> {
        self.get(index).map_err(database_error)
    }
}

/// Column `column` of `r`, a JSON array text aggregated by a statement of
/// [`with_json_functions`], parsed.
pub(super) fn aggregated<T: serde::de::DeserializeOwned>(
    r: &impl Columns,
    column: usize,
) -> std::result::Result<T, sqlx::Error> {
    serde_json::from_str(&r.column::<String>(column)?).map_err(|e| sqlx::Error::Decode(Box::new(e)))
}

/// Serialises a list of strings as the JSON text the schema stores (`[]` if it cannot).
pub(super) fn json_list(items: &[String]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".into())
}

/// A picklist as stored: `NULL` when empty, else a JSON array.
pub(super) fn picklist_text(values: &[String]) -> Option<String> {
    (!values.is_empty()).then(|| serde_json::to_string(values).unwrap_or_default())
}
