//! The one HTTP error type of the care service and its JSON body: an array of
//! `{"errorCode", "message", "fields"}`. Internal errors are logged without details that
//! could carry patient data and are never sent to the client.
//!
//! Domain code reports [`Violation`]s, [`RequestError`]s and [`Rejection`]s and the store
//! [`StoreError`]s; the `From` conversions below are the one place they become statuses and
//! wire entries.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::enrollment::validate::Rejection;
use crate::missing_info::RequestError;
use crate::store::StoreError;
use crate::violation::Violation;

/// One entry of an error body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorItem {
    /// A stable, upper-case code (documented in the crate README).
    pub error_code: &'static str,
    /// A human-readable explanation.
    pub message: String,
    /// Paths of the fields concerned, for example `patient.addresses[0].city`.
    pub fields: Vec<String>,
}

impl ErrorItem {
    /// An entry about one field path (none if `path` is empty).
    pub fn new(code: &'static str, message: impl Into<String>, path: &str) -> Self {
        Self {
            error_code: code,
            message: message.into(),
            fields: if path.is_empty() {
                Vec::new()
            } else {
                vec![path.to_owned()]
            },
        }
    }
}

impl From<Violation> for ErrorItem {
    fn from(v: Violation) -> Self {
        Self {
            error_code: v.code,
            message: v.message,
            fields: v.fields,
        }
    }
}

fn items(violations: Vec<Violation>) -> Vec<ErrorItem> {
    violations.into_iter().map(ErrorItem::from).collect()
}

/// Every way a request can fail.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request is malformed or breaks a rule; every problem is listed.
    #[error("bad request")]
    BadRequest(Vec<ErrorItem>),
    /// 401: no bearer token, or an unknown one.
    #[error("unauthorized")]
    Unauthorized,
    /// 403: the caller lacks an access the request needs.
    #[error("forbidden")]
    Forbidden(Vec<ErrorItem>),
    /// 404: a record the request needs is missing; the entry says which.
    #[error("not found")]
    NotFound(ErrorItem),
    /// 409: the record is not in a state that allows the request.
    #[error("conflict")]
    Conflict(ErrorItem),
    /// 412: submitted values do not fulfil the requested fields.
    #[error("precondition failed")]
    PreconditionFailed(Vec<ErrorItem>),
    /// 413: the body is larger than the configured limit.
    #[error("payload too large")]
    PayloadTooLarge,
    /// 500: a database fault.
    #[error("database error")]
    Database(#[from] sqlx::Error),
    /// 500: any other server fault.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    /// A 400 with a single entry.
    pub fn bad_request(code: &'static str, message: impl Into<String>, path: &str) -> Self {
        Self::BadRequest(vec![ErrorItem::new(code, message, path)])
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PreconditionFailed(_) => StatusCode::PRECONDITION_FAILED,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Database(_) | ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The entries of the body.
    pub fn items(&self) -> Vec<ErrorItem> {
        match self {
            ApiError::BadRequest(items)
            | ApiError::Forbidden(items)
            | ApiError::PreconditionFailed(items) => items.clone(),
            ApiError::NotFound(item) | ApiError::Conflict(item) => vec![item.clone()],
            ApiError::Unauthorized => vec![ErrorItem::new(
                "UNAUTHORIZED",
                "a valid 'Authorization: Bearer <token>' header is required",
                "",
            )],
            ApiError::PayloadTooLarge => {
                vec![ErrorItem::new(
                    "PAYLOAD_TOO_LARGE",
                    "the request body is too large",
                    "",
                )]
            }
            ApiError::Database(_) | ApiError::Internal(_) => {
                vec![ErrorItem::new(
                    "INTERNAL_ERROR",
                    "internal server error",
                    "",
                )]
            }
        }
    }
}

/// A lone broken rule of a request body or path: 400.
impl From<Violation> for ApiError {
    fn from(v: Violation) -> Self {
        ApiError::BadRequest(vec![v.into()])
    }
}

/// Store faults are 500. A [`StoreError::Duplicate`] that reaches here is one the handler did
/// not expect, so a fault too; handlers that expect one map it to their own 409.
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Database(e) => ApiError::Database(e),
            StoreError::Corrupt(what) => ApiError::Internal(what.to_owned()),
            other @ StoreError::Duplicate { .. } => ApiError::Internal(other.to_string()),
        }
    }
}

/// An enrollment's rule violations are 400, its missing permissions 403.
impl From<Rejection> for ApiError {
    fn from(r: Rejection) -> Self {
        match r {
            Rejection::Invalid(v) => ApiError::BadRequest(items(v)),
            Rejection::Forbidden(v) => ApiError::Forbidden(items(v)),
        }
    }
}

/// Refusals of a missing-information call: 409, 404, 403, 412.
impl From<RequestError> for ApiError {
    fn from(e: RequestError) -> Self {
        match e {
            RequestError::NotActive(v) => ApiError::Conflict(v.into()),
            RequestError::Missing(v) => ApiError::NotFound(v.into()),
            RequestError::Forbidden(v) => ApiError::Forbidden(items(v)),
            RequestError::Unfulfilled(v) => ApiError::PreconditionFailed(items(v)),
            RequestError::Store(e) => e.into(),
        }
    }
}

/// A description of an internal error that is safe to log: database messages can quote
/// stored values (patient data), so only their code is kept.
fn loggable(e: &ApiError) -> String {
    match e {
        ApiError::Database(e) => slipway_server::sql_error::loggable(e),
        ApiError::Internal(msg) => msg.clone(),
        other => other.to_string(),
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        slipway_server::http::error_response(self.status(), self.items(), || loggable(&self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use slipway_server::http::{fault_body, json_of};

    #[tokio::test]
    async fn server_faults_are_one_internal_error_entry_without_detail() {
        let body = fault_body(ApiError::Internal("secret detail P-123".into()), "P-123").await;
        assert_eq!(body[0]["errorCode"], "INTERNAL_ERROR");
        fault_body(ApiError::Database(sqlx::Error::PoolTimedOut), "pool").await;
    }

    #[tokio::test]
    async fn client_errors_keep_their_status_and_entries() {
        let cases = [
            (ApiError::bad_request("X", "m", "a.b"), 400),
            (ApiError::Unauthorized, 401),
            (ApiError::Forbidden(vec![]), 403),
            (ApiError::NotFound(ErrorItem::new("X", "m", "")), 404),
            (ApiError::Conflict(ErrorItem::new("X", "m", "")), 409),
            (ApiError::PreconditionFailed(vec![]), 412),
            (ApiError::PayloadTooLarge, 413),
        ];
        for (e, code) in cases {
            let (status, body) = json_of(e).await;
            assert_eq!(status.as_u16(), code);
            assert!(body.is_array());
        }
    }

    #[tokio::test]
    async fn domain_violations_keep_the_wire_format() {
        let v = Violation {
            code: "STRING_TOO_LONG",
            message: "too long".into(),
            fields: vec!["a.b".into(), "a.c".into()],
        };
        let (status, body) = json_of(ApiError::from(Rejection::Invalid(vec![v.clone()]))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(
            body,
            serde_json::json!([{"errorCode": "STRING_TOO_LONG", "message": "too long", "fields": ["a.b", "a.c"]}])
        );
        let (status, _) = json_of(ApiError::from(Rejection::Forbidden(vec![v]))).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
}
