//! SQL access, one module per resource. Functions take the request's transaction so a
//! request is all-or-nothing; none of them commits.

pub mod access;
pub mod accounts;
pub mod apps;
pub mod audit;
pub mod builds;
pub mod deployments;
pub mod secrets;

/// Whether a database error is a unique-constraint violation (a client conflict, not a fault).
pub fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.is_unique_violation())
}
