//! A secret's value typed by its person on the platform's page, never by an assistant: the
//! entry request a tool server makes for `create_secret`/`update_secret` without `data`, the
//! page (who asks, which secret; refusals that write nothing; one value), the outcome its asker
//! reads, and the token's rights checked again when the value is saved. On SQLite and
//! PostgreSQL. The tool servers' side (URL-mode elicitation) is walked by the official Python
//! client in tests/mcp.

use reqwest::{Method, StatusCode, redirect};
use serde_json::{Value, json};

use crate::support::{TestApp, assert_error, backends, spawn_app};

async fn ask(app: &TestApp, token: &str, body: &Value) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        "/v1/secrets/entry-requests",
        Some(token),
        Some(body.to_string()),
    )
    .await
}

/// The page as a browser opens it: status, headers' policy and text.
async fn open(url: &str) -> (StatusCode, String, String) {
    let r = reqwest::Client::builder()
        .redirect(redirect::Policy::none())
        .build()
        .unwrap()
        .get(url)
        .send()
        .await
        .unwrap();
    let referrer = r.headers()["referrer-policy"].to_str().unwrap().to_owned();
    (r.status(), referrer, r.text().await.unwrap())
}

/// The page's form posted, as a browser of `origin` would.
async fn post(url: &str, form: &[(&str, &str)], origin: Option<&str>) -> (StatusCode, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded");
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let r = request.body(body).send().await.unwrap();
    (r.status(), r.text().await.unwrap())
}

async fn secret(app: &TestApp, app_id: &str, path: &str) -> (StatusCode, Value) {
    app.send(
        Method::GET,
        &format!("/v1/secrets/entry?secret_type=app&app_id={app_id}&secret_path={path}"),
        Some(&app.owner),
        None,
    )
    .await
}

async fn status(app: &TestApp, token: &str, id: &str) -> (StatusCode, Value) {
    app.send(
        Method::GET,
        &format!("/v1/secrets/entry-requests/{id}"),
        Some(token),
        None,
    )
    .await
}

#[tokio::test]
async fn a_person_types_the_value_an_assistant_asked_for() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let owner = app.owner.clone();
        let orders = app.register(&owner, "orders").await;
        let app_id = orders["id"].as_str().unwrap().to_owned();
        let target = json!({"secret_type": "app", "app_id": app_id, "secret_path": "stripe"});
        let with = |extra: Value| {
            let mut body = target.clone();
            body.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            body
        };

        // Bad requests name the field.
        assert_error(
            &ask(&app, &owner, &target).await,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("operation"),
        );
        assert_error(
            &ask(&app, &owner, &with(json!({"operation": "replace"}))).await,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("operation"),
        );
        // Updating what does not exist is refused before anyone types.
        assert_error(
            &ask(&app, &owner, &with(json!({"operation": "update"}))).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );

        let (code, asked) = ask(
            &app,
            &owner,
            &with(json!({"operation": "create", "metadata": {"owner": "ops"}, "client": "Claude"})),
        )
        .await;
        assert_eq!(code, StatusCode::CREATED, "{asked}");
        assert_eq!(asked["status"], "waiting");
        let url = asked["url"].as_str().unwrap().to_owned();
        assert!(
            url.starts_with(&format!("{}/secrets/enter?page=", app.base)),
            "{url}"
        );
        let id = asked["id"].as_str().unwrap().to_owned();

        // The page names who asks and what for; its address never leaves it.
        let (code, referrer, page) = open(&url).await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(referrer, "no-referrer");
        assert!(page.contains("Claude") && page.contains("stripe") && page.contains("orders"));
        let me = app
            .send(Method::GET, "/v1/account/me", Some(&owner), None)
            .await
            .1;
        assert!(page.contains(me["email"].as_str().unwrap()), "{page}");
        let (code, _, _) = open(&format!("{}/secrets/enter?page=made-up", app.base)).await;
        assert_eq!(code, StatusCode::GONE);

        // Somebody else cannot read the request, nor another token of the same person (a
        // read-only one would otherwise see the page's address).
        let other = app.add_user("other@example.org", "Other").await;
        assert_error(
            &status(&app, other.token.expose(), &id).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        let (_, second) = app
            .send(
                Method::POST,
                "/v1/tokens",
                Some(&owner),
                Some(json!({"name": "monitor", "read_only": true}).to_string()),
            )
            .await;
        let second = second["token"].as_str().unwrap().to_owned();
        assert_error(
            &status(&app, &second, &id).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );

        // A post from another site, or rows that break a rule: nothing is written, and the
        // page still waits.
        let save = [("key", "API_KEY"), ("value", "sk-1"), ("action", "save")];
        let (code, _) = post(&url, &save, Some("https://evil.example")).await;
        assert_eq!(code, StatusCode::FORBIDDEN);
        let (code, page) = post(
            &url,
            &[("key", ""), ("value", "sk-1"), ("action", "save")],
            None,
        )
        .await;
        assert_eq!(code, StatusCode::OK);
        assert!(page.contains("Row 1: a value needs a key."), "{page}");
        assert!(!page.contains("sk-1"), "a refused value is never sent back");
        let (code, page) = post(
            &url,
            &[
                ("key", "A"),
                ("value", "1"),
                ("key", "A"),
                ("value", "2"),
                ("action", "save"),
            ],
            None,
        )
        .await;
        assert_eq!(code, StatusCode::OK);
        assert!(page.contains("A is there twice"), "{page}");
        assert_eq!(
            secret(&app, &app_id, "stripe").await.0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(status(&app, &owner, &id).await.1["status"], "waiting");

        // Saved once, as the asker, with the call's metadata.
        let (code, page) = post(&url, &save, Some(&app.base)).await;
        assert_eq!(code, StatusCode::OK, "{page}");
        assert!(page.contains("Saved"), "{page}");
        let (_, done) = status(&app, &owner, &id).await;
        assert_eq!(done["status"], "written", "{done}");
        assert_eq!(done["secret"]["version"], 1);
        assert!(done["url"].is_null());
        let (_, stored) = secret(&app, &app_id, "stripe").await;
        assert_eq!(stored["data"], json!({"API_KEY": "sk-1"}));
        assert_eq!(stored["metadata"], json!({"owner": "ops"}));
        let (_, page) = post(
            &url,
            &[("key", "API_KEY"), ("value", "sk-2"), ("action", "save")],
            None,
        )
        .await;
        assert!(page.contains("Version 1 of stripe"), "{page}");
        assert_eq!(secret(&app, &app_id, "stripe").await.1["version"], 1);

        // Creating it again is refused at once; an update can be declined from the assistant.
        assert_error(
            &ask(&app, &owner, &with(json!({"operation": "create"}))).await,
            StatusCode::CONFLICT,
            "already_exists",
            Some("secret_path"),
        );
        let (_, update) = ask(&app, &owner, &with(json!({"operation": "update"}))).await;
        let update_id = update["id"].as_str().unwrap();
        let (code, _) = app
            .send(
                Method::DELETE,
                &format!("/v1/secrets/entry-requests/{update_id}"),
                Some(&owner),
                None,
            )
            .await;
        assert_eq!(code, StatusCode::NO_CONTENT);
        assert_eq!(
            status(&app, &owner, update_id).await.1["status"],
            "declined"
        );
        let (_, _, page) = open(update["url"].as_str().unwrap()).await;
        assert!(page.contains("Nothing was saved"), "{page}");

        // A token revoked before the person saves writes nothing.
        let (_, made) = app
            .send(
                Method::POST,
                "/v1/tokens",
                Some(&owner),
                Some(json!({"name": "assistant"}).to_string()),
            )
            .await;
        let short = made["token"].as_str().unwrap();
        let (_, update) = ask(&app, short, &with(json!({"operation": "update"}))).await;
        app.send(
            Method::DELETE,
            &format!("/v1/tokens/{}", made["id"].as_str().unwrap()),
            Some(&owner),
            None,
        )
        .await;
        let (code, page) = post(update["url"].as_str().unwrap(), &save, None).await;
        assert_eq!(code, StatusCode::FORBIDDEN);
        assert!(page.contains("access has ended"), "{page}");
        assert_eq!(secret(&app, &app_id, "stripe").await.1["version"], 1);

        // A read-only token asks for no page; nor does a viewer of the app.
        let (code, _) = ask(&app, &second, &with(json!({"operation": "update"}))).await;
        assert_eq!(code, StatusCode::FORBIDDEN);
        let (code, body) = ask(
            &app,
            other.token.expose(),
            &with(json!({"operation": "update"})),
        )
        .await;
        assert_eq!(
            code,
            StatusCode::NOT_FOUND,
            "an app the person cannot see: {body}"
        );
        app.finish().await;
    }
}
