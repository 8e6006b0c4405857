//! A blocking client for the care services (enrollment, missing information and the admin
//! API's users), for the desktop app. Every refusal becomes a [`Failure`] that says which
//! screen fits (`kind`), keeps every `{errorCode, message, fields}` of the answer and maps each
//! message onto the field it is about (`field_errors`), so a form only has to look a path up.
//! Nothing here logs: requests and answers carry patient data.

mod client;
pub mod draft;
#[cfg(test)]
mod layers;
pub mod sign_in;
pub mod worklist;

pub use client::*;
