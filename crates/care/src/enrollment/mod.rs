//! The enrollment service's domain: the typed request and its validation. Its storage is
//! `store::enrollment` (catalog, upserts) and `store::erx` (the audit record).

pub mod model;
pub mod validate;
