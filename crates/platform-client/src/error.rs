//! The error every tool returns, rendered as `{success: false, error, retryable}` plus
//! `field` when the failure concerns one argument, and `build_app`'s two failures with what
//! they found (the devfile's findings, the failed builds' logs).

use std::collections::BTreeMap;

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
    /// `build_app` found the project's devfile.yaml invalid and uploaded nothing.
    #[error("{message}")]
    InvalidDevfile {
        /// What to fix, every error in one sentence.
        message: String,
        /// The validator's errors, each with its path and line.
        errors: Vec<String>,
        /// Its warnings.
        warnings: Vec<String>,
    },
    /// `build_app`'s builds ran on the platform and one or more did not succeed (boxed: the
    /// logs make it the largest variant by far, and every `Result` would carry its size).
    #[error("{}", .0.message)]
    BuildsFailed(Box<FailedBuilds>),
    /// The platform did not answer, or answered that it is unavailable.
    #[error("{0}")]
    Unavailable(String),
    /// A fault in Slipway itself.
    #[error("internal error: {0}")]
    Internal(String),
}

/// What `build_app` knows of builds that did not succeed, so the caller can show their logs
/// and cancel or inspect them without another request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedBuilds {
    /// Which builds failed and why, in one sentence.
    pub message: String,
    /// The app built.
    pub app_id: String,
    /// Every build of the upload, failed or not.
    pub build_ids: Vec<String>,
    /// Requests sent for the upload.
    pub attempts: u32,
    /// Each service's build log (null where the platform sent none).
    pub build_logs: BTreeMap<String, Option<String>>,
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

    /// A short stable word for the kind of failure (an audit entry's outcome).
    pub fn code(&self) -> &'static str {
        match self {
            ToolError::InvalidArgument { .. } => "invalid_argument",
            ToolError::NotFound(_) => "not_found",
            ToolError::Conflict { .. } => "conflict",
            ToolError::Io(_) => "io",
            ToolError::NotConfigured(_) => "not_configured",
            ToolError::PermissionDenied(_) => "permission_denied",
            ToolError::BuildFailed(_) | ToolError::BuildsFailed(_) => "build_failed",
            ToolError::InvalidDevfile { .. } => "invalid_devfile",
            ToolError::Unavailable(_) => "unavailable",
            ToolError::Internal(_) => "internal",
        }
    }

    /// Whether the same call may succeed if tried again.
    pub fn retryable(&self) -> bool {
        matches!(self, ToolError::Io(_) | ToolError::Unavailable(_))
    }

    /// The spec's failure shape, `{success: false, error, retryable}`, with `field` added
    /// when the failure concerns one argument (so a form can put the message beside it), and
    /// what `build_app`'s failures found (`errors` and `warnings`; `app_id`, `build_ids`,
    /// `attempts` and `build_logs`). The registry renders every failure with this, at the
    /// transport edge; nothing inside the toolkit reads it back.
    pub fn to_json(&self) -> Value {
        let mut out =
            json!({ "success": false, "error": self.to_string(), "retryable": self.retryable() });
        if let Some(field) = self.field() {
            out["field"] = Value::String(field.to_owned());
        }
        match self {
            ToolError::InvalidDevfile {
                errors, warnings, ..
            } => {
                out["errors"] = json!(errors);
                out["warnings"] = json!(warnings);
            }
            ToolError::BuildsFailed(failed) => {
                out["app_id"] = json!(failed.app_id);
                out["build_ids"] = json!(failed.build_ids);
                out["attempts"] = json!(failed.attempts);
                out["build_logs"] = json!(failed.build_logs);
            }
            _ => {}
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

    #[test]
    fn build_failures_carry_what_they_found() {
        let e = ToolError::InvalidDevfile {
            message: "devfile.yaml is invalid".into(),
            errors: vec!["e1".into()],
            warnings: vec![],
        };
        assert_eq!(
            e.to_json(),
            json!({"success": false, "error": "devfile.yaml is invalid", "retryable": false, "errors": ["e1"], "warnings": []})
        );
        let e = ToolError::BuildsFailed(Box::new(FailedBuilds {
            message: "build failed: api failed: boom".into(),
            app_id: "a".into(),
            build_ids: vec!["b".into()],
            attempts: 1,
            build_logs: BTreeMap::from([("api".to_owned(), None)]),
        }));
        assert_eq!(
            e.to_json(),
            json!({"success": false, "error": "build failed: api failed: boom", "retryable": false, "app_id": "a", "build_ids": ["b"], "attempts": 1, "build_logs": {"api": null}})
        );
    }
}
