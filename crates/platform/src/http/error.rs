//! The one HTTP error type and its body, `{"error": {"code", "message", "field"}}`.
//! Internal errors are logged (without values that could hold secrets) and answered with a
//! generic 500; their details never reach the client.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// Every way an API request can fail.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400 `invalid_argument`: a field breaks a rule; `field` names it, `message` the rule.
    #[error("invalid {field}: {message}")]
    Invalid {
        /// The body field or query parameter.
        field: String,
        /// The rule that was broken.
        message: String,
    },
    /// 400 `invalid_body`: the body is not a JSON object.
    #[error("invalid body: {0}")]
    InvalidBody(String),
    /// 401 `unauthenticated`: no bearer token, or an unknown one.
    #[error("unauthenticated")]
    Unauthenticated,
    /// 401 `unauthenticated`: a webhook delivery not signed with the app's secret (the
    /// message says which header).
    #[error("unauthenticated: {0}")]
    Unsigned(String),
    /// 403 `permission_denied`: the caller sees the resource but its role does not allow this.
    #[error("permission denied: {0}")]
    PermissionDenied(String),
    /// 404 `not_found`: no such resource, or the caller may not see it.
    #[error("not found: {0}")]
    NotFound(String),
    /// 404 `no_route`: no such path.
    #[error("no such route")]
    NoRoute,
    /// 405 `method_not_allowed`.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// 409 `already_exists`: a unique value is taken; `field` names it.
    #[error("conflict on {field}: {message}")]
    AlreadyExists {
        /// The field whose value is taken.
        field: String,
        /// What is taken.
        message: String,
    },
    /// 400 `invalid_argument` on `devfile`: the devfile breaks rules; every error is listed
    /// in `details`.
    #[error("invalid devfile")]
    InvalidDevfile(Vec<String>),
    /// 409 `failed_precondition`: the resource is not in a state that allows this.
    #[error("failed precondition: {0}")]
    FailedPrecondition(String),
    /// 409 `failed_precondition` because of one field's value against the stored state (a
    /// redirect to a domain the app does not have); `field` names it.
    #[error("failed precondition on {field}: {message}")]
    Precondition {
        /// The field.
        field: String,
        /// Why its value does not fit the state.
        message: String,
    },
    /// 413 `payload_too_large`.
    #[error("payload too large")]
    PayloadTooLarge,
    /// 413 `payload_too_large` with the limit that was passed.
    #[error("payload too large: {0}")]
    TooLarge(String),
    /// 415 `unsupported_media_type`: the body's `Content-Type` is not accepted here.
    #[error("unsupported media type: {0}")]
    UnsupportedMediaType(String),
    /// An identity refusal, with its own status and code (`admin_only`, `last_admin`,
    /// `token_expired`, `invite_used`, …; see docs/people.md).
    #[error("{0}")]
    Identity(slipway_identity::IdentityError),
    /// 500 `internal`: a database fault.
    #[error("database error")]
    Database(#[from] sqlx::Error),
    /// 500 `internal`: any other server fault.
    #[error("internal error: {0}")]
    Internal(String),
}

/// The JSON body of every error response.
#[derive(Debug, Serialize)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// The content of an error body.
#[derive(Debug, Serialize)]
pub struct ErrorDetail {
    /// A stable code (`invalid_argument`, `unauthenticated`, `not_found`, …).
    pub code: &'static str,
    /// A human-readable explanation naming the rule.
    pub message: String,
    /// The field or query parameter concerned, or null.
    pub field: Option<String>,
    /// Every finding when there are several (the errors of an invalid devfile); omitted
    /// otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
}

impl ApiError {
    /// A 400 about one field.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.to_owned(),
            message: message.into(),
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Invalid { .. } | ApiError::InvalidBody(_) | ApiError::InvalidDevfile(_) => {
                StatusCode::BAD_REQUEST
            }
            ApiError::Unauthenticated | ApiError::Unsigned(_) => StatusCode::UNAUTHORIZED,
            ApiError::PermissionDenied(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) | ApiError::NoRoute => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::AlreadyExists { .. }
            | ApiError::FailedPrecondition(_)
            | ApiError::Precondition { .. } => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge | ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::Identity(e) => {
                StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
            }
            ApiError::Database(_) | ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The body sent to the client.
    pub fn body(&self) -> ErrorBody {
        let mut details = Vec::new();
        let (code, message, field) = match self {
            ApiError::Invalid { field, message } => (
                "invalid_argument",
                format!("{field}: {message}"),
                Some(field.clone()),
            ),
            ApiError::InvalidBody(m) => ("invalid_body", m.clone(), None),
            ApiError::Unauthenticated => (
                "unauthenticated",
                "a valid 'Authorization: Bearer <token>' header is required".to_owned(),
                None,
            ),
            ApiError::Unsigned(m) => ("unauthenticated", m.clone(), None),
            ApiError::PermissionDenied(m) => ("permission_denied", m.clone(), None),
            ApiError::NotFound(m) => ("not_found", m.clone(), None),
            ApiError::NoRoute => ("no_route", "no such route".to_owned(), None),
            ApiError::MethodNotAllowed => (
                "method_not_allowed",
                "this method is not allowed on this route".to_owned(),
                None,
            ),
            ApiError::AlreadyExists { field, message } => {
                ("already_exists", message.clone(), Some(field.clone()))
            }
            ApiError::InvalidDevfile(errors) => {
                details.clone_from(errors);
                (
                    "invalid_argument",
                    format!(
                        "devfile: the devfile has {} error(s): {}",
                        errors.len(),
                        errors.join("; ")
                    ),
                    Some("devfile".to_owned()),
                )
            }
            ApiError::FailedPrecondition(m) => ("failed_precondition", m.clone(), None),
            ApiError::Precondition { field, message } => (
                "failed_precondition",
                format!("{field}: {message}"),
                Some(field.clone()),
            ),
            ApiError::PayloadTooLarge => (
                "payload_too_large",
                "the request body is too large".to_owned(),
                None,
            ),
            ApiError::TooLarge(m) => ("payload_too_large", m.clone(), None),
            ApiError::UnsupportedMediaType(m) => ("unsupported_media_type", m.clone(), None),
            ApiError::Identity(e) => (e.code(), e.to_string(), e.field().map(str::to_owned)),
            ApiError::Database(_) | ApiError::Internal(_) => {
                ("internal", "internal server error".to_owned(), None)
            }
        };
        ErrorBody {
            error: ErrorDetail {
                code,
                message,
                field,
                details,
            },
        }
    }
}

/// A description of an internal error that is safe to log: database messages can quote
/// stored values, so only their code is kept.
pub(crate) fn loggable(e: &ApiError) -> String {
    match e {
        ApiError::Database(e) => slipway_server::sql_error::loggable(e),
        other => other.to_string(),
    }
}

impl From<slipway_identity::IdentityError> for ApiError {
    fn from(e: slipway_identity::IdentityError) -> Self {
        match e {
            slipway_identity::IdentityError::Database(e) => ApiError::Database(e),
            slipway_identity::IdentityError::Random(e) => ApiError::Internal(e),
            other => ApiError::Identity(other),
        }
    }
}

impl From<crate::apps::RegisterError> for ApiError {
    fn from(e: crate::apps::RegisterError) -> Self {
        use crate::apps::RegisterError;
        match e {
            RegisterError::Invalid { field, message } => ApiError::invalid(field, message),
            RegisterError::Taken(_) => ApiError::AlreadyExists {
                field: "name".into(),
                message: e.to_string(),
            },
            RegisterError::Database(e) => ApiError::Database(e),
        }
    }
}

impl From<crate::vault::access::AccessError> for ApiError {
    fn from(e: crate::vault::access::AccessError) -> Self {
        use crate::vault::access::AccessError;
        match e {
            AccessError::NoApp(_) | AccessError::NoSecret(_) => ApiError::NotFound(e.to_string()),
            AccessError::Denied(d) => d.into(),
            AccessError::NotCreator => ApiError::PermissionDenied(e.to_string()),
            AccessError::Scope(e) => e.into(),
            AccessError::Database(e) => ApiError::Database(e),
        }
    }
}

impl From<crate::policy::Denied> for ApiError {
    fn from(d: crate::policy::Denied) -> Self {
        ApiError::PermissionDenied(d.to_string())
    }
}

impl From<slipway_server::http::BodyError> for ApiError {
    fn from(e: slipway_server::http::BodyError) -> Self {
        match e {
            slipway_server::http::BodyError::TooLarge => ApiError::PayloadTooLarge,
            slipway_server::http::BodyError::Unreadable => ApiError::InvalidBody(e.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let scope = matches!(
            self,
            ApiError::Identity(slipway_identity::IdentityError::InsufficientScope(_))
        );
        let mut response =
            slipway_server::http::error_response(self.status(), self.body(), || loggable(&self));
        if scope {
            // RFC 6750 §3.1: a client that can ask for more (an MCP client's step-up) reads
            // this header.
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static(r#"Bearer error="insufficient_scope""#),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use slipway_server::http::{fault_body, json_of};

    #[tokio::test]
    async fn server_faults_are_internal_without_detail() {
        let body = fault_body(ApiError::Internal("secret detail X-123".into()), "X-123").await;
        assert_eq!(body["error"]["code"], "internal");
        fault_body(ApiError::Database(sqlx::Error::PoolTimedOut), "pool").await;
    }

    #[tokio::test]
    async fn client_errors_have_status_code_and_field() {
        let (status, body) = json_of(ApiError::invalid("name", "must not be empty")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["error"]["code"], "invalid_argument");
        assert_eq!(body["error"]["field"], "name");
        let (status, body) = json_of(ApiError::Unauthenticated).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(body["error"]["field"], serde_json::Value::Null);
    }
}
