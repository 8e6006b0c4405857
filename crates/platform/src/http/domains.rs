//! `/v1/apps/{app_id}/domains`: an app's custom domains (docs/domains.md). Every role lists
//! them and reads their state; editors and owners add and remove them. A domain is checked
//! (the name rule, the platform's own domains, a name another app has) before anything is
//! stored or asked of a CA; the certificate worker takes it from there.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use slipway_api::domains::{Domain, DomainCertificate, DomainList, DomainState};

use super::apps::authorized_app;
use super::error::ApiError;
use super::extract::Fields;
use super::{Access, AppState, json_object};
use crate::db::rfc3339;
use crate::domains::rules::{self, Existing, RuleError};
use crate::policy::AppAction;
use crate::store::domains::{self as store, DomainRow};

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/apps/{app_id}/domains", get(list).post(add))
        .route("/apps/{app_id}/domains/{name}", get(one).delete(remove))
}

fn state_of(row: &DomainRow) -> DomainState {
    match row.state.as_str() {
        store::ISSUED => DomainState::Issued,
        store::RENEWING => DomainState::Renewing,
        store::FAILED => DomainState::Failed,
        _ => DomainState::Pending,
    }
}

/// A stored domain as the API shows it.
pub(crate) fn view(state: &AppState, row: DomainRow) -> Domain {
    let certificate = match (&row.issuer, &row.serial, row.not_before, row.not_after) {
        (Some(issuer), Some(serial), Some(from), Some(until)) => Some(DomainCertificate {
            source: row.source.clone(),
            issuer: issuer.clone(),
            serial: serial.clone(),
            not_before: rfc3339(from.saturating_mul(1000)),
            expires_at: rfc3339(until.saturating_mul(1000)),
            renews_at: (row.source == store::SOURCE_ACME)
                .then_some(row.next_attempt_at)
                .flatten()
                .map(rfc3339),
        }),
        _ => None,
    };
    let waiting = matches!(row.state.as_str(), store::PENDING | store::FAILED);
    Domain {
        url: state.domains().url(&row),
        state: state_of(&row),
        next_attempt_at: waiting
            .then_some(row.next_attempt_at)
            .flatten()
            .map(rfc3339),
        created_at: rfc3339(row.created_at),
        name: row.name,
        app_id: row.app_id,
        service: row.service,
        redirect_to: row.redirect_to,
        reason: row.reason,
        certificate,
        created_by: row.created_by,
    }
}

async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<Json<DomainList>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::View).await?;
    let rows = store::of_app(&mut tx, &app.id).await?;
    tx.commit().await?;
    Ok(Json(DomainList {
        domains: rows.into_iter().map(|r| view(&state, r)).collect(),
    }))
}

async fn one(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((app_id, name)): Path<(String, String)>,
) -> Result<Json<Domain>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::View).await?;
    let row = of_this_app(&mut tx, &app.id, &name).await?;
    tx.commit().await?;
    Ok(Json(view(&state, row)))
}

async fn of_this_app(
    tx: &mut crate::db::Tx,
    app_id: &str,
    name: &str,
) -> Result<DomainRow, ApiError> {
    let key = crate::domains::host_name(name);
    store::get(tx, &key)
        .await?
        .filter(|d| d.app_id == app_id)
        .ok_or_else(|| ApiError::NotFound(format!("the app has no domain {:?}", name.trim())))
}

/// A refusal as the API answers it: what the request's shape breaks is a 400 (the OpenAPI
/// document states those rules), what it breaks against the stored state or the platform's
/// own names is a 409, each naming its field.
fn refused(e: RuleError) -> ApiError {
    let (field, shape) = match &e {
        RuleError::Name(_) => ("name", true),
        RuleError::PlatformDomain { .. } | RuleError::TooMany => ("name", false),
        RuleError::ServiceAndRedirect | RuleError::RedirectName(_) => ("redirect_to", true),
        RuleError::RedirectTarget { .. } => ("redirect_to", false),
        RuleError::Service(_) => ("service", true),
    };
    let text = e.to_string();
    let message = text
        .strip_prefix(&format!("{field}: "))
        .unwrap_or(&text)
        .to_owned();
    if shape {
        ApiError::invalid(field, message)
    } else {
        ApiError::Precondition {
            field: field.to_owned(),
            message,
        }
    }
}

async fn add(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Domain>), ApiError> {
    let fields = Fields::from_body(json_object(body)?, &["name", "service", "redirect_to"])?;
    let name = fields.required("name")?;
    let service = fields.string("service")?;
    let redirect_to = fields.string("redirect_to")?;
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::ManageDomains).await?;
    let existing = store::of_app(&mut tx, &app.id).await?;
    let seen: Vec<Existing<'_>> = existing
        .iter()
        .map(|d| Existing {
            name: &d.name,
            redirects: d.redirect_to.is_some(),
        })
        .collect();
    let checked = rules::check(
        &name,
        service.as_deref(),
        redirect_to.as_deref(),
        &state.domains().platform_domains(),
        &seen,
    )
    .map_err(refused)?;
    if !state.domains().enabled() {
        return Err(ApiError::FailedPrecondition(
            "this platform serves no custom domains: its operator starts it with \
             --gateway-http-listen and --gateway-https-listen (ports 80 and 443)"
                .into(),
        ));
    }
    let inserted = store::insert(
        &mut tx,
        checked.name.as_str(),
        &app.id,
        checked.service.as_deref(),
        checked.redirect_to.as_deref(),
        store::SOURCE_ACME,
        &caller.user_id,
    )
    .await;
    let row = match inserted {
        Ok(row) => row,
        Err(e) if slipway_server::sql_error::is_unique_violation(&e) => {
            return Err(ApiError::AlreadyExists {
                field: "name".into(),
                message: format!(
                    "{} is already a domain of an app on this platform; a name serves one app",
                    checked.name
                ),
            });
        }
        Err(e) => return Err(e.into()),
    };
    tx.commit().await?;
    tracing::info!(app_id = %app.id, domain = %row.name, "custom domain added");
    reload(&state).await;
    Ok((StatusCode::CREATED, Json(view(&state, row))))
}

async fn remove(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((app_id, name)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::ManageDomains).await?;
    let row = of_this_app(&mut tx, &app.id, &name).await?;
    if let Some(other) = store::of_app(&mut tx, &app.id)
        .await?
        .into_iter()
        .find(|d| d.redirect_to.as_deref() == Some(row.name.as_str()))
    {
        return Err(ApiError::FailedPrecondition(format!(
            "{} redirects to {}; remove that domain first",
            other.name, row.name
        )));
    }
    store::delete(&mut tx, &row.name).await?;
    tx.commit().await?;
    tracing::info!(app_id = %app.id, domain = %row.name, "custom domain removed");
    reload(&state).await;
    Ok(StatusCode::NO_CONTENT)
}

/// Routes and certificates follow the change at once; a failure to read them back is
/// logged (the change is committed, and the next change or restart reads them).
pub(crate) async fn reload(state: &AppState) {
    if let Err(e) = state.domains().reload().await {
        tracing::warn!(error = %e, "the custom domains could not be read again");
    }
}
