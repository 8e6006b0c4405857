//! The domain's report of a broken rule: a stable code, a message and the paths of the
//! fields concerned. Domain code returns these; only `http::error` turns them into the wire
//! error body (`{"errorCode", "message", "fields"}`) and picks the status code.

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// A stable, upper-case code (documented in the crate README).
    pub code: &'static str,
    /// A human-readable explanation.
    pub message: String,
    /// Paths of the fields concerned, for example `patient.addresses[0].city`.
    pub fields: Vec<String>,
}

impl Violation {
    /// A violation about one field path (none if `path` is empty).
    pub fn new(code: &'static str, message: impl Into<String>, path: &str) -> Self {
        Self {
            code,
            message: message.into(),
            fields: if path.is_empty() {
                Vec::new()
            } else {
                vec![path.to_owned()]
            },
        }
    }
}
