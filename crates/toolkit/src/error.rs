//! The error every tool returns, rendered as `{success: false, error, retryable}` plus
//! `field` when the failure concerns one argument.

use serde_json::{Value, json};

/// A tool failure: what went wrong, in words that name the field and the rule, and whether
/// calling again unchanged can help (an assistant retries only those).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// An argument breaks a rule; the message names the argument.
    #[error("{message}")]
    InvalidArgument {
        /// The rule broken, prefixed with the argument's name when there is one.
        message: String,
        /// The top-level argument at fault (`app_name`, `secret_path`, …), when one is.
        field: Option<String>,
    },
    /// Something the call refers to does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The call would overwrite or duplicate something.
    #[error("{message}")]
    Conflict {
        /// What is taken.
        message: String,
        /// The argument whose value is taken (`name`, `to_shared_path`, …), when known.
        field: Option<String>,
    },
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(String),
    /// No platform is configured, or it refused the credentials.
    #[error("{0}")]
    NotConfigured(String),
    /// The caller's role does not allow the operation.
    #[error("{0}")]
    PermissionDenied(String),
    /// An image build failed (the message carries the end of its log).
    #[error("{0}")]
    BuildFailed(String),
    /// The platform did not answer, or answered that it is unavailable.
    #[error("{0}")]
    Unavailable(String),
    /// A fault in Slipway itself.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ToolError {
    /// Argument `field` breaks `rule`: the message reads `"<field>: <rule>"`.
    pub fn invalid(field: &str, rule: impl std::fmt::Display) -> Self {
        ToolError::InvalidArgument {
            message: format!("{field}: {rule}"),
            field: Some(field.to_owned()),
        }
    }

    /// Arguments break a rule that no single argument owns (or whose argument is unknown).
    pub fn invalid_args(message: impl Into<String>) -> Self {
        ToolError::InvalidArgument {
            message: message.into(),
            field: None,
        }
    }

    /// A conflict not tied to one argument.
    pub fn conflict(message: impl Into<String>) -> Self {
        ToolError::Conflict {
            message: message.into(),
            field: None,
        }
    }

    /// The same error, about argument `field` (only argument errors and conflicts carry one;
    /// other kinds are returned unchanged).
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        if let ToolError::InvalidArgument { field: f, .. } | ToolError::Conflict { field: f, .. } =
            &mut self
        {
            *f = Some(field.into());
        }
        self
    }

    /// The argument at fault, when the failure concerns one.
    pub fn field(&self) -> Option<&str> {
        match self {
            ToolError::InvalidArgument { field, .. } | ToolError::Conflict { field, .. } => {
                field.as_deref()
            }
            _ => None,
        }
    }

    /// Whether the same call may succeed if tried again.
    pub fn retryable(&self) -> bool {
        matches!(self, ToolError::Io(_) | ToolError::Unavailable(_))
    }

    /// The spec's failure shape, `{success: false, error, retryable}`, with `field` added
    /// when the failure concerns one argument (so a form can put the message beside it).
    pub fn to_json(&self) -> Value {
        let mut out =
            json!({ "success": false, "error": self.to_string(), "retryable": self.retryable() });
        if let Some(field) = self.field() {
            out["field"] = Value::String(field.to_owned());
        }
        out
    }

    /// An I/O error with the path it concerns.
    pub fn io(action: &str, path: &std::path::Path, err: &std::io::Error) -> Self {
        ToolError::Io(format!("cannot {action} {}: {err}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failure_object_names_the_field_only_when_known() {
        let e = ToolError::invalid("app_name", "must not be empty");
        assert_eq!(e.to_string(), "app_name: must not be empty");
        assert_eq!(
            e.to_json(),
            json!({"success": false, "error": "app_name: must not be empty", "retryable": false, "field": "app_name"})
        );
        let e = ToolError::invalid_args("provide a or b");
        assert_eq!(
            e.to_json(),
            json!({"success": false, "error": "provide a or b", "retryable": false})
        );
        let e = ToolError::conflict("taken").with_field("name");
        assert_eq!(e.field(), Some("name"));
        let e = ToolError::Unavailable("down".into()).with_field("x");
        assert_eq!(e.field(), None);
        assert_eq!(e.to_json()["retryable"], true);
    }
}
