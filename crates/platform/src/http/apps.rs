//! `/v1/apps`: register, get, list and delete apps. Each handler authenticates, validates the
//! whole request, then does its work in one transaction; a refused request writes nothing.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use serde_json::{Map, Value};

use super::error::ApiError;
use super::{Access, AppState, json_object};
use crate::model::Role;
use crate::pagination::{Cursor, next_page, parse_page_size};
use crate::policy::{self, AppAction};
use crate::store::apps::{self, AppRecord, NewApp};

pub use crate::apps::{DESCRIPTION_MAX, DISPLAY_NAME_MAX};

/// The routes of this module, relative to `/v1`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/apps", get(list).post(register))
        .route("/apps/{app_id}", get(get_one).delete(delete))
}

/// An app as `GET /v1/apps` lists it: everything but the description and the devfile.
#[derive(Debug, Serialize)]
pub struct AppSummary {
    /// The app's UUID.
    pub id: String,
    /// The rest.
    #[serde(flatten)]
    pub listing: slipway_api::AppListing,
}

impl From<AppRecord> for AppSummary {
    fn from(a: AppRecord) -> Self {
        Self {
            listing: a.listing(),
            id: a.id,
        }
    }
}

/// An app as `GET /v1/apps/{app_id}` and `POST /v1/apps` show it.
#[derive(Debug, Serialize)]
pub struct AppView {
    /// The app's UUID (also the id of its access-control resource).
    pub id: String,
    /// The rest.
    #[serde(flatten)]
    pub details: slipway_api::AppDetails,
}

impl From<AppRecord> for AppView {
    fn from(a: AppRecord) -> Self {
        Self {
            details: a.details(),
            id: a.id,
        }
    }
}

/// One page of `GET /v1/apps`.
#[derive(Debug, Serialize)]
pub struct AppPage {
    /// The apps of this page, oldest first.
    pub apps: Vec<AppSummary>,
    /// Pass as `next_page_token` to get the next page; null on the last page.
    pub next_page_token: Option<String>,
}

/// The fields of `POST /v1/apps` (the OpenAPI document lists exactly these).
pub(crate) const REGISTER_FIELDS: &[&str] = &["name", "display_name", "description"];

/// Reads and checks the body of `POST /v1/apps`.
pub(crate) fn parse_register(body: &Map<String, Value>) -> Result<NewApp, ApiError> {
    if let Some(unknown) = body.keys().find(|k| !REGISTER_FIELDS.contains(&k.as_str())) {
        return Err(ApiError::invalid(
            unknown,
            "unknown field; allowed fields are name, display_name, description",
        ));
    }
    let text = |field: &str| match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(ApiError::invalid(field, "must be a string")),
    };
    let name = text("name")?.ok_or_else(|| ApiError::invalid("name", "is required"))?;
    let display_name =
        text("display_name")?.ok_or_else(|| ApiError::invalid("display_name", "is required"))?;
    let description = text("description")?;
    Ok(crate::apps::check(name, display_name, description)?)
}

/// The app id of a path, normalised; 400 when it is not a UUID.
pub(crate) fn parse_app_id(raw: &str) -> Result<String, ApiError> {
    uuid::Uuid::parse_str(raw)
        .map(|u| u.to_string())
        .map_err(|_| ApiError::invalid("app_id", "must be a UUID"))
}

pub(crate) fn app_not_found(id: &str) -> ApiError {
    ApiError::NotFound(format!("no app with id {id}"))
}

/// The app `raw_id` names with the caller's role, when the caller may do `action` to it:
/// 400 for a malformed id, 404 when the caller cannot see the app (no role, another account,
/// or no such app), 403 when its role does not allow `action` ([`policy::require`]). Every app
/// endpoint goes through here, so the role matrix is enforced in one place.
pub(crate) async fn authorized_app(
    tx: &mut crate::db::Tx,
    caller: &crate::model::Caller,
    raw_id: &str,
    action: AppAction,
) -> Result<(AppRecord, Role), ApiError> {
    let id = parse_app_id(raw_id)?;
    let (app, role) = apps::get_visible(tx, caller, &id)
        .await?
        .ok_or_else(|| app_not_found(&id))?;
    policy::require(role, action)?;
    policy::require_scope(caller, action)?;
    Ok((app, role))
}

/// `POST /v1/apps`: registers an app → 201 with the app.
async fn register(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    let new = parse_register(&json_object(body)?)?;
    caller.require_account_wide("registering an app")?;
    let app = crate::apps::register_app(&mut tx, &caller, &new).await?;
    tx.commit().await?;
    let location = format!("/v1/apps/{}", app.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(AppView::from(app)),
    )
        .into_response())
}

/// `GET /v1/apps/{app_id}`.
async fn get_one(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<Json<AppView>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::View).await?;
    let mut view = AppView::from(app);
    view.details.resources = state
        .deployer()
        .resources()
        .describe(&mut tx, &view.id)
        .await?;
    view.details.volumes = crate::resources::volumes(
        state.deployer().data_dir(),
        &view.id,
        view.details.devfile.as_deref(),
    );
    tx.commit().await?;
    Ok(Json(view))
}

/// `GET /v1/apps?page_size=&next_page_token=`.
async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<AppPage>, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Read).await?;
    let Query(pairs) =
        query.map_err(|_| ApiError::InvalidBody("the query string could not be read".into()))?;
    let mut page_size = None;
    let mut token = None;
    for (key, value) in &pairs {
        let slot = match key.as_str() {
            "page_size" => &mut page_size,
            "next_page_token" => &mut token,
            _ => {
                return Err(ApiError::invalid(
                    key,
                    "unknown query parameter; allowed are page_size, next_page_token",
                ));
            }
        };
        if slot.replace(value.as_str()).is_some() {
            return Err(ApiError::invalid(key, "must be given at most once"));
        }
    }
    let page_size =
        parse_page_size(page_size).map_err(|e| ApiError::invalid("page_size", e.to_string()))?;
    let cursor = match token {
        None | Some("") => None,
        Some(t) => Some(
            Cursor::decode(t).map_err(|e| ApiError::invalid("next_page_token", e.to_string()))?,
        ),
    };
    let mut rows = apps::list_visible(&mut tx, &caller, cursor.as_ref(), page_size + 1).await?;
    tx.commit().await?;
    let next_page_token = next_page(&mut rows, page_size, |a| (a.created_at, a.id.clone()));
    Ok(Json(AppPage {
        apps: rows.into_iter().map(AppSummary::from).collect(),
        next_page_token,
    }))
}

/// `DELETE /v1/apps/{app_id}`: permanent; frees the name, stops the app's processes and
/// builds and deletes their rows and logs → 204. Owners only.
async fn delete(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(app_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let (mut tx, caller) = state.begin_as(&headers, Access::Write).await?;
    // Serialises with secret writes and role changes of this app.
    crate::store::access::lock_resource(&mut tx, &parse_app_id(&app_id)?).await?;
    let (app, _) = authorized_app(&mut tx, &caller, &app_id, AppAction::Delete).await?;
    let id = app.id.clone();
    let previews = crate::store::git::previews_of(&mut tx, &id).await?;
    let Some(teardown) = crate::teardown::delete_rows(&mut tx, &id).await? else {
        return Err(app_not_found(&id));
    };
    // Its pull requests' previews go with it.
    let mut gone = vec![teardown];
    for preview in previews {
        gone.extend(crate::teardown::delete_rows(&mut tx, &preview).await?);
    }
    tx.commit().await?;
    for teardown in gone {
        teardown.finish(state.deployer(), state.runner()).await;
    }
    // Its custom domains (deleted with it) stop being served.
    super::domains::reload(&state).await;
    tracing::info!(app_id = %id, app_name = %app.name, "app deleted");
    Ok(StatusCode::NO_CONTENT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn register_body_rules_name_the_field() {
        let cases = [
            (json!({"display_name": "D"}), "name"),
            (json!({"name": 5, "display_name": "D"}), "name"),
            (json!({"name": "Bad", "display_name": "D"}), "name"),
            (json!({"name": "ok"}), "display_name"),
            (json!({"name": "ok", "display_name": "  "}), "display_name"),
            (
                json!({"name": "ok", "display_name": "D", "description": 1}),
                "description",
            ),
            (
                json!({"name": "ok", "display_name": "D", "extra": 1}),
                "extra",
            ),
        ];
        for (value, field) in cases {
            match parse_register(&body(value.clone())) {
                Err(ApiError::Invalid { field: f, .. }) => assert_eq!(f, field, "{value}"),
                other => panic!("{value}: expected a 400 on {field}, got {other:?}"),
            }
        }
        let ok = parse_register(&body(json!({"name": "ok", "display_name": " D "}))).unwrap();
        assert_eq!((ok.name.as_str(), ok.display_name.as_str()), ("ok", "D"));
        assert_eq!(ok.description, "");
    }
}
