//! Who may use a Slipway platform, and what happened to whom.
//!
//! People belong to an account with the role `admin` or `member`; admins invite people
//! (single-use codes, stored hashed), change roles and remove people; everybody keeps personal
//! tokens with lifetimes; a company's OpenID Connect provider can sign people in
//! ([`oidc`]); every such change lands in the audit ([`audit`]).
//!
//! This crate owns the rules and the SQL; the platform's HTTP layer maps requests to these
//! functions and their [`IdentityError`]s to its wire format. Every function that changes
//! something takes the caller's open transaction, so an identity change and the platform's
//! own part of it (the app roles of a removed person) commit together or not at all; the tool
//! server's per-call work (`tokens::authenticate_alone`, `tokens::record`) takes the database. The migrations are this
//! crate's own set ([`migrate`]), run after the platform's, whose first migration made the
//! account tables.

pub mod audit;
pub mod error;
pub mod invites;
#[cfg(test)]
mod layers;
pub mod model;
pub mod oauth;
pub mod oidc;
pub mod people;
pub mod rules;
mod store;
pub mod tokens;

pub use error::IdentityError;
pub use invites::INVITE_PREFIX;
pub use model::{AccountRole, Caller, Person};
// The modules import these from `slipway-server` themselves (lib.rs is the top layer, which
// no module may use); the re-exports keep `slipway_identity::Tx` and the others for callers.
pub use slipway_server::db::{Db, Tx};
pub use slipway_server::token::Token;
pub use tokens::TOKEN_PREFIX;

/// The identity migrations, recorded in their own table so the platform's migration set and
/// this one never take each other's versions for missing ones.
pub async fn migrate(db: &Db) -> Result<(), sqlx::migrate::MigrateError> {
    let mut migrator = sqlx::migrate!("./migrations");
    migrator.dangerous_set_table_name("_identity_migrations");
    db.migrate(&migrator).await
}
