//! The enrollment service's domain: the typed request, its validation, and its storage.

pub mod model;
pub mod store;
pub mod validate;
