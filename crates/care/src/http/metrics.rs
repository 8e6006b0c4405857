//! `GET {base}/metrics`: the Prometheus exposition of this service (docs/metrics.md), for
//! admin tokens only, as the admin API. Besides the requests by route template every server
//! has, it reads, when scraped, the missing-information requests by status (one `GROUP BY`)
//! and the database pool; the enrollments accepted, rejected and refused for lack of
//! permission are counted in this process as they are answered (`slipway_care_enrollments`).

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use slipway_server::metrics::{self, CounterBy, Figures, Registry};

use super::error::{ApiError, ErrorItem};
use super::{AppState, read_as_caller};
use crate::missing_info::STATUSES;
use crate::store::stats;

/// The `outcome` of an enrollment the service answered with its records written.
pub const ACCEPTED: &str = "accepted";
/// The `outcome` of an enrollment refused because the document breaks a rule.
pub const REJECTED: &str = "rejected";
/// The `outcome` of an enrollment refused because the caller lacks a permission it needs.
pub const FORBIDDEN: &str = "forbidden";

/// Registers the counters this service keeps in process: the enrollments by outcome.
pub(crate) fn register(registry: &mut Registry) -> CounterBy {
    CounterBy::register(
        registry,
        "slipway_care_enrollments",
        "Enrollments (POST eRxApi) answered since the service started, by outcome: accepted \
         (records written), rejected (the document breaks a rule), forbidden (a permission is missing)",
        "outcome",
        &[ACCEPTED, REJECTED, FORBIDDEN],
    )
}

/// The exposition, for an admin token; 401 without a known token, 403 for a staff token.
pub async fn serve(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (mut tx, caller) = read_as_caller(&state, &headers).await?;
    if !caller.admin {
        return Err(ApiError::Forbidden(vec![ErrorItem::new(
            "ADMIN_ONLY",
            "the metrics need an admin token",
            "",
        )]));
    }
    let by_status = stats::data_requests_by_status(&mut tx).await?;
    tx.rollback().await?;
    let mut figures = Figures::new();
    figures.gauge_by(
        "slipway_care_missing_information_requests",
        "Missing-information requests (data requests) on record, by status",
        "status",
        status_counts(&by_status),
    );
    figures.pool(state.db());
    state
        .metrics()
        .exposition(&headers, &figures)
        .map_err(|e| ApiError::Internal(format!("the metrics could not be encoded: {e}")))
}

/// The requests by status: one count per status of [`STATUSES`], and `other` for any stored
/// status that is not one of them.
fn status_counts(rows: &[(String, i64)]) -> Vec<(&'static str, i64)> {
    metrics::counts(STATUSES.iter().copied(), rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_is_counted_and_unknown_text_stays_out_of_the_labels() {
        let rows = vec![
            ("Active".to_owned(), 3),
            ("Completed".to_owned(), 1),
            ("Jane Doe".to_owned(), 2),
        ];
        assert_eq!(
            status_counts(&rows),
            vec![
                ("Active", 3),
                ("Completed", 1),
                ("Ended", 0),
                ("Cancelled", 0),
                ("other", 2)
            ]
        );
    }
}
