//! The platform's database: the shared pool and write strategy of `slipway_server::db`
//! (SQLite writers queue in-process, then `BEGIN IMMEDIATE`), with foreign keys on, and this
//! crate's one migration set (portable types only, so one set serves both backends).

pub use slipway_server::clock::{now_millis, rfc3339};
pub use slipway_server::db::{Backend, Db, Tx};

use crate::error::PlatformError;

/// One migration set for both backends.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Opens the pool the URL names and runs the migrations that have not run yet.
pub async fn open(url: &str) -> Result<Db, PlatformError> {
    let foreign_keys = slipway_server::db::Options {
        sqlite_foreign_keys: true,
    };
    let mut db = Db::connect(url, foreign_keys).await?;
    db.migrate(&MIGRATOR).await?;
    // Identity's own set changes the account tables the platform's first migration made.
    slipway_identity::migrate(&db).await?;
    // On a SQLite file, the tool server's per-call work (the token's lookup, the call's audit
    // entry) runs on native connections, not the pool's threads (see ARCHITECTURE).
    db.start_native_writer().await?;
    Ok(db)
}
