//! `GET|POST /secrets/enter?page=KEY`: the page where a person types the value of a secret
//! their assistant asked to write ([`super::entry_requests`]). Its address holds the key: 256
//! random bits, known to the platform only by its hash, given only to the assistant's client
//! that asked (which shows it to its person), working for ten minutes and for one value. The
//! key travels in the query string (and the form's body), which request logs never record.
//!
//! The page says who asked, for whom and for which secret, so a link passed on to someone
//! else reads as what it is. The value is saved as the token that asked, with that token's
//! rights at the moment of saving (a revoked grant saves nothing), audited like any secret
//! write, and answered with the version only. The address never leaves the page
//! (`Referrer-Policy: no-referrer`), the page is never framed, cached or scripted.

use axum::Form;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Map, Value};
use slipway_identity::oidc::Outcome;
use slipway_server::token::hash_token;

use super::cookies;
use super::entry_requests::{EntryRequest, Operation, Status};
use super::sso::{escape, page};
use super::{AppState, secrets};
use crate::model::Caller;
use crate::vault::Content;
use crate::vault::payload::{self, Part};

/// Key/value rows the page offers.
const ROWS: usize = 5;

/// The page's route (outside `/v1`: a browser's, not the API's).
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/secrets/enter", get(show).post(save))
}

/// Where the page's key is: `?page=`.
#[derive(Debug, Deserialize)]
struct PageQuery {
    page: Option<String>,
}

/// `GET /secrets/enter?page=KEY`: the form (with single sign-on, once the person signed in
/// here for it), or how the request ended.
async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<PageQuery>,
) -> Response {
    let Some(key) = query.page else {
        return ended();
    };
    let Some(request) = state.entry_requests().by_page(&key) else {
        return ended();
    };
    if !request.open() {
        return outcome(&request);
    }
    match asker(&state, &request).await {
        Ok(who) if !signed_in_here(&state, &request, &headers) => {
            sign_in_first(&key, &request, &who)
        }
        Ok(who) => form(&key, &request, &who, None, &[]),
        Err(response) => response,
    }
}

/// What a single sign-on started from a secret's page is for: the page's key follows.
const PURPOSE: &str = "secret-page:";

/// Whether this browser may type the request's value: any that has the page without single
/// sign-on; with it, only the one where the person signed in for this page.
fn signed_in_here(state: &AppState, request: &EntryRequest, headers: &HeaderMap) -> bool {
    if state.sso().is_none() {
        return true;
    }
    let key = cookies::get(headers, cookies::APPROVAL, state.mcp().secure());
    match (&request.browser, key) {
        (Some(browser), Some(key)) => hash_token(&key) == *browser,
        _ => false,
    }
}

/// Sends the person to the identity provider to show who they are for page `key`, in this
/// browser (its key in the `SameSite=Lax` cookie the callback reads).
async fn start_sign_in(state: &AppState, headers: &HeaderMap, key: &str) -> Response {
    let Some(sso) = state.sso() else {
        return now(state, key);
    };
    let secure = state.mcp().secure();
    // The key an assistant's approval in this browser may hold already is kept: both work.
    let browser = cookies::get(headers, cookies::APPROVAL, secure).unwrap_or_else(cookies::new_key);
    match sso
        .start_confirmation(&format!("{PURPOSE}{key}"), &browser)
        .await
    {
        Outcome::Redirect(to) => {
            let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response();
            response.headers_mut().append(
                header::SET_COOKIE,
                cookies::set(cookies::APPROVAL, &browser, secure, false, 900),
            );
            private(response)
        }
        other => private(super::sso::respond(other)),
    }
}

/// The single sign-on callback of a secret's page: the person who signed in is the one the
/// page is for, so this browser may type the value; back to the page.
pub(crate) fn signed_in(
    state: &AppState,
    purpose: &str,
    caller: &Caller,
    browser: Option<&str>,
) -> Response {
    let (Some(key), Some(browser)) = (purpose.strip_prefix(PURPOSE), browser) else {
        return private(page(
            400,
            "This sign-in went astray",
            "Open the page again.",
        ));
    };
    let Some(request) = state.entry_requests().by_page(key) else {
        return ended();
    };
    if request.user_id != caller.user_id {
        return private(page(
            403,
            "This page is someone else's",
            "You signed in as another person than the one whose assistant asked for this secret, so nothing can be typed here as you. If it was meant for you, ask your own assistant.",
        ));
    }
    state
        .entry_requests()
        .signed_in(&request.view.id, hash_token(browser));
    private(
        (
            StatusCode::SEE_OTHER,
            [(header::LOCATION, format!("/secrets/enter?page={key}"))],
        )
            .into_response(),
    )
}

/// Who asked, for the page: the person's e-mail and the app's name.
struct Asker {
    email: String,
    app_name: Option<String>,
}

/// The token that asked, as it stands now, and who it belongs to; a page saying the access
/// ended when it does not work any more.
async fn asker(state: &AppState, request: &EntryRequest) -> Result<Asker, Response> {
    let found = async {
        let mut tx = state.db().begin_read().await?;
        let caller = caller(&mut tx, request).await?;
        let me = slipway_identity::people::me(&mut tx, &caller).await?;
        let app_name = match &request.target.app_id {
            Some(id) => crate::store::apps::name_and_account(&mut tx, id)
                .await?
                .map(|(name, _)| name),
            None => None,
        };
        tx.commit().await?;
        Ok::<_, super::error::ApiError>(Asker {
            email: me.email,
            app_name,
        })
    }
    .await;
    found.map_err(|e| refused(&e))
}

/// The caller the request's token stands for now.
async fn caller(
    tx: &mut crate::db::Tx,
    request: &EntryRequest,
) -> Result<Caller, super::error::ApiError> {
    let known = slipway_identity::tokens::authenticate_hash(tx, &request.token_hash).await?;
    if known.caller.user_id != request.user_id {
        return Err(super::error::ApiError::Unauthenticated);
    }
    Ok(known.caller)
}

/// The page for a refusal of the request's token or rights.
fn refused(e: &super::error::ApiError) -> Response {
    match e.status() {
        StatusCode::UNAUTHORIZED => private(page(
            403,
            "Your assistant's access has ended",
            "The sign-in or token that asked for this secret was revoked or has expired, so nothing can be saved here. Connect the assistant again and ask once more.",
        )),
        _ => private(page(
            e.status().as_u16(),
            "This secret cannot be saved",
            &e.body().error.message,
        )),
    }
}

/// The page of a link that no longer works.
fn ended() -> Response {
    private(page(
        410,
        "This link has ended",
        "It was used, declined, or not used within ten minutes (or the platform restarted). Ask your assistant again for a new one.",
    ))
}

/// The page of a saved value: its version, never the value.
fn saved(version: i64, path: &str) -> Response {
    private(page(
        200,
        "Saved",
        &format!(
            "Version {version} of {path} is in Slipway's vault. Tell your assistant you are done; you can close this page."
        ),
    ))
}

/// The page of a request that no longer takes a value.
fn outcome(request: &EntryRequest) -> Response {
    let path = &request.view.secret_path;
    match (request.view.status, &request.view.secret) {
        (Status::Written, Some(secret)) => saved(secret.version, path),
        (Status::Declined, _) => private(page(
            200,
            "Nothing was saved",
            request
                .view
                .message
                .as_deref()
                .unwrap_or("The request was declined."),
        )),
        (Status::Waiting, _) => private(page(
            409,
            "Saving…",
            "A value for this secret is being saved from another window. Reload this page in a moment.",
        )),
        _ => ended(),
    }
}

/// `POST /secrets/enter`: the person's value (rows of `key` and `value`), or their no; the
/// page's key in the form's `page` field (or the query string's).
async fn save(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<PageQuery>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let key = fields
        .iter()
        .find(|(n, _)| n == "page")
        .map(|(_, v)| v.clone())
        .or(query.page);
    let Some(key) = key else {
        return ended();
    };
    // A post from another site's page is never the person's: the address is the key, but a
    // browser tells where a post came from.
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok())
        && origin != "null"
        && !same_origin(origin, &state.mcp().base(&headers))
    {
        return private(page(
            403,
            "Not from this page",
            "This form was sent from another site; nothing was saved.",
        ));
    }
    let Some(request) = state.entry_requests().by_page(&key) else {
        return ended();
    };
    if !request.open() {
        return outcome(&request);
    }
    let requests = state.entry_requests();
    let id = request.view.id.clone();
    let action = fields
        .iter()
        .find(|(n, _)| n == "action")
        .map(|(_, v)| v.as_str());
    if action == Some("sso") {
        return start_sign_in(&state, &headers, &key).await;
    }
    if action == Some("decline") {
        if requests
            .decline(&id, "the person declined on Slipway's page")
            .is_err()
        {
            return now(&state, &key);
        }
        return private(page(
            200,
            "Nothing was saved",
            "You declined. Your assistant will hear that you did.",
        ));
    }
    let who = match asker(&state, &request).await {
        Ok(who) => who,
        Err(response) => return response,
    };
    if !signed_in_here(&state, &request, &headers) {
        return sign_in_first(&key, &request, &who);
    }
    let data = match read_rows(&fields) {
        Ok(read) => read,
        Err((why, keys)) => return form(&key, &request, &who, Some(&why), &keys),
    };
    if !requests.take(&id) {
        return now(&state, &key);
    }
    // Saved, and the outcome kept, in a task of its own: a browser that goes away mid-save
    // does not leave the request taken and its outcome untold.
    let saver = {
        let (state, request) = (state.clone(), request.clone());
        tokio::spawn(async move { save_and_tell(&state, &request, data).await })
    };
    match saver.await {
        Ok(Ok(version)) => saved(version, &request.view.secret_path),
        // A fault of the platform's own: the page takes the value again once it is back.
        Ok(Err(e)) if e.status().is_server_error() => private(page(
            503,
            "Not saved, for now",
            "Slipway could not save it just now; nothing was saved. Go back and save again in a moment.",
        )),
        Ok(Err(e)) => refused(&e),
        Err(_) => private(page(
            503,
            "Not saved, for now",
            "Slipway could not save it just now. Reload this page to see whether it was saved.",
        )),
    }
}

/// Writes the request's value and keeps the outcome: the version, a refusal that ends the
/// request, or a fault after which the page takes the value again.
async fn save_and_tell(
    state: &AppState,
    request: &EntryRequest,
    data: Map<String, Value>,
) -> Result<i64, super::error::ApiError> {
    let requests = state.entry_requests();
    let id = &request.view.id;
    match write(state, request, data).await {
        Ok(secret) => {
            let version = secret.version;
            requests.finish(id, Status::Written, Some(secret), None);
            Ok(version)
        }
        Err(e) if e.status().is_server_error() => {
            requests.release(id);
            Err(e)
        }
        Err(e) => {
            let message = e.body().error.message.clone();
            requests.finish(id, Status::Declined, None, Some(message));
            Err(e)
        }
    }
}

/// The page of how request `key` stands now.
fn now(state: &AppState, key: &str) -> Response {
    match state.entry_requests().by_page(key) {
        Some(request) => outcome(&request),
        None => ended(),
    }
}

/// Whether `origin` (a browser's `Origin`) is the platform's `base` address's origin.
fn same_origin(origin: &str, base: &str) -> bool {
    match (url::Url::parse(origin), url::Url::parse(base)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin(),
        _ => false,
    }
}

/// Saves `data` as the request says, as its token.
async fn write(
    state: &AppState,
    request: &EntryRequest,
    data: Map<String, Value>,
) -> Result<super::secrets::SecretInfo, super::error::ApiError> {
    let mut tx = state.db().begin_write().await?;
    let caller = caller(&mut tx, request).await?;
    caller.require_writes("saving a secret")?;
    match request.view.operation {
        Operation::Create => {
            let content = Content {
                data,
                metadata: request.metadata.clone().unwrap_or_default(),
            };
            secrets::create_with(state, tx, &caller, &request.target, &content).await
        }
        Operation::Update => {
            secrets::update_with(
                state,
                tx,
                &caller,
                &request.target,
                data,
                request.metadata.clone(),
            )
            .await
        }
    }
}

/// The rows the person filled, as the secret's data; else why not, with the keys typed (the
/// values are never sent back).
fn read_rows(fields: &[(String, String)]) -> Result<Map<String, Value>, (String, Vec<String>)> {
    let keys: Vec<String> = fields
        .iter()
        .filter(|(n, _)| n == "key")
        .map(|(_, v)| v.trim().to_owned())
        .collect();
    let values: Vec<&str> = fields
        .iter()
        .filter(|(n, _)| n == "value")
        .map(|(_, v)| v.as_str())
        .collect();
    let mut data = Map::new();
    for (row, key) in keys.iter().enumerate() {
        let value = values.get(row).copied().unwrap_or("");
        match (key.is_empty(), value.is_empty()) {
            (true, true) => {}
            (true, false) => {
                return Err((format!("Row {}: a value needs a key.", row + 1), keys));
            }
            (false, true) => {
                return Err((format!("Row {}: {key} has no value.", row + 1), keys));
            }
            (false, false) => {
                if data
                    .insert(key.clone(), Value::String(value.to_owned()))
                    .is_some()
                {
                    return Err((format!("Row {}: {key} is there twice.", row + 1), keys));
                }
            }
        }
    }
    if data.is_empty() {
        return Err(("Type at least one key and its value.".into(), keys));
    }
    payload::check(Part::Data, &Value::Object(data))
        .map_err(|rule| (format!("The value breaks a rule of secrets: {rule}."), keys))
}

/// The form: who asks, for which secret, and the rows to fill; `error` above them when the
/// last post was refused (with the keys it had; the values are typed again).
fn form(
    key: &str,
    request: &EntryRequest,
    who: &Asker,
    error: Option<&str>,
    keys: &[String],
) -> Response {
    let mut rows = String::new();
    for row in 0..ROWS.max(keys.len()) {
        let k = keys.get(row).map_or("", String::as_str);
        rows.push_str(&format!(
            "<tr><td><input name=\"key\" value=\"{k}\" aria-label=\"Key {n}\" autocomplete=\"off\" spellcheck=\"false\"></td>\
<td><textarea name=\"value\" rows=\"1\" cols=\"36\" aria-label=\"Value {n}\" autocomplete=\"off\" spellcheck=\"false\"></textarea></td></tr>",
            k = escape(k),
            n = row + 1,
        ));
    }
    let error = error
        .map(|e| {
            format!(
                "<p role=\"alert\" class=\"error\">{} Type the values again.</p>",
                escape(e)
            )
        })
        .unwrap_or_default();
    let inner = format!(
        "{error}<form method=\"post\" action=\"/secrets/enter\"><input type=\"hidden\" name=\"page\" value=\"{key}\"><table><thead><tr><th>Key</th><th>Value</th></tr></thead><tbody>{rows}</tbody></table>\
<p><button type=\"submit\" name=\"action\" value=\"save\">Save in the vault</button> \
<button type=\"submit\" name=\"action\" value=\"decline\">Decline</button></p>\
<p>This page works until {expires} (UTC), for one value.</p></form>",
        key = escape(key),
        expires = escape(&request.view.expires_at),
    );
    shell(request, who, &inner)
}

/// With single sign-on: the page asks the person to show who they are first.
fn sign_in_first(key: &str, request: &EntryRequest, who: &Asker) -> Response {
    let inner = format!(
        "<form method=\"post\" action=\"/secrets/enter\"><input type=\"hidden\" name=\"page\" value=\"{key}\">\
<p>Sign in as yourself first: only the person it was asked of can type it, and only in the browser where they signed in.</p>\
<p><button type=\"submit\" name=\"action\" value=\"sso\">Sign in with single sign-on to type it</button> \
<button type=\"submit\" name=\"action\" value=\"decline\">Decline</button></p></form>",
        key = escape(key),
    );
    shell(request, who, &inner)
}

/// The page around `inner`: who asks, for whom, and which secret.
fn shell(request: &EntryRequest, who: &Asker, inner: &str) -> Response {
    let view = &request.view;
    let client = request.client.as_deref().unwrap_or("Your assistant");
    let target = match (&view.app_id, &who.app_name) {
        (Some(_), Some(name)) => format!("app {name}'s secret"),
        (Some(id), None) => format!("app {id}'s secret"),
        (None, _) => format!("your {} secret", view.secret_type),
    };
    let verb = match view.operation {
        Operation::Create => "create",
        Operation::Update => "write a new version of",
    };
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Type a secret · Slipway</title>\
<style>body{{font:16px system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}}\
input,textarea{{font:15px ui-monospace,monospace}}td{{vertical-align:top;padding:.2em}}.error{{color:#a00}}</style>\
</head><body><main><h1>Type the value of {path}</h1>\
<p><strong>{client}</strong> asks you, <strong>{email}</strong>, to {verb} {target} <strong>{path}</strong>. \
What you type goes to Slipway's vault and nowhere else: the assistant learns only that it was saved, and its version.</p>\
<p>Not you, or not expected? Decline: nothing is saved.</p>{inner}</main></body></html>",
        path = escape(&view.secret_path),
        client = escape(client),
        email = escape(&who.email),
        target = escape(&target),
    );
    private(
        (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            body,
        )
            .into_response(),
    )
}

/// The headers every response of the page carries: its address is its key.
fn private(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CACHE_CONTROL, "no-store"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (
            header::CONTENT_SECURITY_POLICY,
            // No `form-action`: signing in posts the form on to the identity provider.
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
        ),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn rows_become_the_data_or_say_which_row_is_wrong() {
        let data = read_rows(&rows(&[
            ("key", " API_KEY "),
            ("key", ""),
            ("value", "multi\nline"),
            ("value", ""),
        ]))
        .unwrap();
        assert_eq!(data["API_KEY"], "multi\nline");
        assert_eq!(data.len(), 1);
        let (why, keys) = read_rows(&rows(&[("key", "A"), ("value", "")])).unwrap_err();
        assert_eq!(
            (why.as_str(), keys),
            ("Row 1: A has no value.", vec!["A".to_owned()])
        );
        let (why, _) = read_rows(&rows(&[("key", ""), ("value", "")])).unwrap_err();
        assert!(why.contains("at least one"), "{why}");
        let long = "k".repeat(200);
        let (why, _) = read_rows(&rows(&[("key", &long), ("value", "v")])).unwrap_err();
        assert!(why.contains("rule"), "{why}");
    }
}
