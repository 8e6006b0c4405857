//! The error every tool returns, rendered as `{success: false, error, retryable}`.

use serde_json::{Value, json};

/// A tool failure: what went wrong, in words that name the field and the rule, and whether
/// calling again unchanged can help (an assistant retries only those).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// An argument breaks a rule; the message names the argument.
    #[error("{0}")]
    InvalidArgument(String),
    /// Something the call refers to does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The call would overwrite or duplicate something.
    #[error("{0}")]
    Conflict(String),
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
    /// Whether the same call may succeed if tried again.
    pub fn retryable(&self) -> bool {
        matches!(self, ToolError::Io(_) | ToolError::Unavailable(_))
    }

    /// The spec's failure shape.
    pub fn to_json(&self) -> Value {
        json!({ "success": false, "error": self.to_string(), "retryable": self.retryable() })
    }

    /// An I/O error with the path it concerns.
    pub fn io(action: &str, path: &std::path::Path, err: &std::io::Error) -> Self {
        ToolError::Io(format!("cannot {action} {}: {err}", path.display()))
    }
}
