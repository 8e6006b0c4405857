//! How the platform's answers read: the JSON body of a success, or the error its status and
//! message make (the same for every way a request travels).

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ToolError;

/// A successful answer: its JSON body (Null for 204) and how many attempts it took.
#[derive(Debug)]
pub struct Answer {
    /// Parsed body.
    pub body: Value,
    /// Requests sent.
    pub attempts: u32,
}

/// An answer's status and text as the tools read it: the parsed body, or the error the
/// status and the platform's message make.
pub(crate) fn read(
    status: reqwest::StatusCode,
    text: &str,
    attempts: u32,
) -> Result<Answer, ToolError> {
    let body: Value = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
    };
    if status.is_success() {
        return Ok(Answer { body, attempts });
    }
    let message = body
        .pointer("/error/message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| format!("HTTP {status}"));
    // The platform names the body field or query parameter of a 400 or 409; its names are
    // the tools' argument names.
    let field = body
        .pointer("/error/field")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Err(match status.as_u16() {
        400 | 413 | 415 => ToolError::InvalidArgument { message, field },
        401 => ToolError::NotConfigured(format!("the platform refused the token: {message}")),
        403 => ToolError::PermissionDenied(message),
        404 => ToolError::NotFound(message),
        409 => ToolError::Conflict { message, field },
        502..=504 => ToolError::Unavailable(format!("{message} (after {attempts} attempts)")),
        _ => ToolError::Internal(format!("platform answered {status}: {message}")),
    })
}

/// A platform answer read as `T`; one of another shape is an internal error (the platform and
/// this client disagree), never a user's mistake.
pub(crate) fn read_answer<T: DeserializeOwned>(body: Value) -> Result<T, ToolError> {
    serde_json::from_value(body)
        .map_err(|e| ToolError::Internal(format!("an unexpected platform answer: {e}")))
}
