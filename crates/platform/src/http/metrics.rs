//! `GET /metrics`: the Prometheus exposition of the whole server (docs/metrics.md).
//!
//! Who may read it: the figures span every account, so an account's own admin is not
//! enough; only the admins of the platform's first account (the one the server made on its
//! first start, whose owner's token is `DATA_DIR/bootstrap-token`) may, the people who run
//! the server. Any other token is a 403, no token a 401.
//!
//! What it reads when scraped, besides the requests by route template: apps, builds and
//! deployments by status (three `GROUP BY`s in one read transaction), the build queue (builds
//! waiting for a slot) and the database pool.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use slipway_server::metrics::{Figures, counts};

use super::error::ApiError;
use super::{Access, AppState};
use crate::bootstrap;
use crate::model::{AppStatus, BuildStatus, DeploymentStatus};
use crate::store::metrics::{Counted, by_status};

/// The exposition, for an admin of the first account.
pub async fn serve(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let operators = bootstrap::first_account(&mut tx).await?;
    if !caller.is_admin() || operators.as_deref() != Some(caller.account_id.as_str()) {
        return Err(ApiError::PermissionDenied(
            "the server's metrics are for the admins of the platform's first account (the one \
             whose owner's token is DATA_DIR/bootstrap-token)"
                .into(),
        ));
    }
    let apps = by_status(&mut tx, Counted::Apps).await?;
    let builds = by_status(&mut tx, Counted::Builds).await?;
    let deployments = by_status(&mut tx, Counted::Deployments).await?;
    tx.rollback().await?;
    let builds = counts(BuildStatus::ALL.map(BuildStatus::as_str), &builds);
    let queued = builds
        .iter()
        .find(|(s, _)| *s == BuildStatus::Queued.as_str())
        .map_or(0, |(_, n)| *n);
    let mut figures = Figures::new();
    figures.gauge_by(
        "slipway_platform_apps",
        "Apps of every account, by state",
        "status",
        counts(AppStatus::ALL.map(AppStatus::as_str), &apps),
    );
    figures.gauge_by(
        "slipway_platform_builds",
        "Builds on record, by status (a finished build's status is its outcome: succeeded, failed or cancelled)",
        "status",
        builds,
    );
    figures.gauge_by(
        "slipway_platform_deployments",
        "Deployments on record, by status (RUNNING and deploying are current; FAILED, stopped and superseded are outcomes)",
        "status",
        counts(DeploymentStatus::ALL.map(DeploymentStatus::as_str), &deployments),
    );
    figures.gauge(
        "slipway_platform_build_queue_length",
        "Builds waiting for a free build slot",
        queued,
    );
    figures.pool(state.db());
    state
        .metrics()
        .exposition(&headers, &figures)
        .map_err(|e| ApiError::Internal(format!("the metrics could not be encoded: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_is_counted_and_unknown_text_stays_out_of_the_labels() {
        let rows = vec![
            ("queued".to_owned(), 2),
            ("succeeded".to_owned(), 5),
            ("my-app".to_owned(), 1),
        ];
        assert_eq!(
            counts(BuildStatus::ALL.map(BuildStatus::as_str), &rows),
            vec![
                ("queued", 2),
                ("in_progress", 0),
                ("succeeded", 5),
                ("failed", 0),
                ("cancelled", 0),
                ("other", 1)
            ]
        );
    }
}
