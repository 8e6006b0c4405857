//! Token scopes through the real server, on SQLite and PostgreSQL: a read-only token reads
//! and changes nothing; a token limited to an app sees only that app and nothing of the
//! account; a token made without secrets lists secret paths but reads no value nor resource
//! credentials; a narrower token cannot make a broader one. Each refusal is a 403
//! `insufficient_scope` with the RFC 6750 header, and changes nothing.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{Reply, TestApp, assert_error, backends, spawn_app};

async fn call(app: &TestApp, method: Method, path: &str, token: &str, body: Value) -> Reply {
    let body = (!body.is_null()).then(|| body.to_string());
    app.send(method, path, Some(token), body).await
}

async fn token(app: &TestApp, by: &str, body: Value) -> String {
    let (status, made) = call(app, Method::POST, "/v1/tokens", by, body).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    made["token"].as_str().unwrap().to_owned()
}

/// The bootstrap token's name in the owner's list.
const BOOTSTRAP: &str = "bootstrap token (DATA_DIR/bootstrap-token)";

fn refused(reply: &Reply) {
    assert_error(reply, StatusCode::FORBIDDEN, "insufficient_scope", None);
}

#[tokio::test]
async fn scoped_tokens_do_only_what_their_scope_allows() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let owner = app.owner.clone();
        let orders = app.register(&owner, "orders").await;
        let billing = app.register(&owner, "billing").await;
        let orders_id = orders["id"].as_str().unwrap().to_owned();
        let billing_id = billing["id"].as_str().unwrap().to_owned();
        let secret = json!({"secret_type": "app", "app_id": orders_id,
            "secret_path": "db/password", "data": {"v": "s3cret"}});
        let r = call(&app, Method::POST, "/v1/secrets", &owner, secret).await;
        assert_eq!(r.0, StatusCode::CREATED, "{r:?}");

        // Refused at creation: an unknown app, an empty list, an unknown field.
        for (body, field) in [
            (json!({"name": "x", "apps": ["nope"]}), "apps"),
            (json!({"name": "x", "apps": []}), "apps"),
            (json!({"name": "x", "apps": "orders"}), "apps"),
            (json!({"name": "x", "read_only": "yes"}), "read_only"),
            (json!({"name": "x", "scope": "all"}), "scope"),
        ] {
            let r = call(&app, Method::POST, "/v1/tokens", &owner, body).await;
            assert_error(&r, StatusCode::BAD_REQUEST, "invalid_argument", Some(field));
        }

        // Read-only: every read, no write.
        let reader = token(&app, &owner, json!({"name": "monitor", "read_only": true})).await;
        let (status, list) = call(&app, Method::GET, "/v1/apps", &reader, Value::Null).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(list["apps"].as_array().unwrap().len(), 2, "{list}");
        let status_path = format!("/v1/apps/{orders_id}/status");
        assert_eq!(
            call(&app, Method::GET, &status_path, &reader, Value::Null)
                .await
                .0,
            StatusCode::OK
        );
        let value =
            format!("/v1/secrets/entry?secret_type=app&app_id={orders_id}&secret_path=db/password");
        let (status, read) = call(&app, Method::GET, &value, &reader, Value::Null).await;
        assert_eq!(
            (status, &read["data"]["v"]),
            (StatusCode::OK, &json!("s3cret"))
        );
        refused(
            &app.register_raw(&reader, &json!({"name": "more", "display_name": "More"}))
                .await,
        );
        refused(&app.delete_app(&reader, &billing_id).await);
        let disable = format!("/v1/apps/{orders_id}/disable");
        refused(&call(&app, Method::POST, &disable, &reader, json!({})).await);
        refused(
            &call(
                &app,
                Method::POST,
                "/v1/tokens",
                &reader,
                json!({"name": "y"}),
            )
            .await,
        );
        // The header a client reads to ask for more.
        let raw = reqwest::Client::new()
            .delete(format!("{}/v1/apps/{billing_id}", app.base))
            .bearer_auth(&reader)
            .send()
            .await
            .unwrap();
        assert_eq!(
            raw.headers()["www-authenticate"],
            r#"Bearer error="insufficient_scope""#
        );
        assert_eq!(
            app.get_app(&owner, &billing_id).await.0,
            StatusCode::OK,
            "kept"
        );

        // One app: the other is not there for it, nor is the account.
        let one = token(
            &app,
            &owner,
            json!({"name": "orders-ci", "apps": ["orders"]}),
        )
        .await;
        let (_, list) = call(&app, Method::GET, "/v1/apps", &one, Value::Null).await;
        let names: Vec<&str> = list["apps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["orders"]);
        assert_eq!(
            app.get_app(&one, &billing_id).await.0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            app.delete_app(&one, &billing_id).await.0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(app.get_app(&one, &orders_id).await.0, StatusCode::OK);
        refused(
            &app.register_raw(&one, &json!({"name": "more", "display_name": "More"}))
                .await,
        );
        refused(&call(&app, Method::GET, "/v1/account/audit", &one, Value::Null).await);
        let personal = json!({"secret_type": "user", "secret_path": "mine", "data": {"v": 1}});
        refused(&call(&app, Method::POST, "/v1/secrets", &one, personal).await);
        refused(
            &call(
                &app,
                Method::POST,
                "/v1/account/invites",
                &one,
                json!({"email": "a@b.c", "role": "member"}),
            )
            .await,
        );
        // It may make a token within itself, not one for every app.
        refused(
            &call(
                &app,
                Method::POST,
                "/v1/tokens",
                &one,
                json!({"name": "all"}),
            )
            .await,
        );
        let narrower = token(
            &app,
            &one,
            json!({"name": "orders-read", "apps": [orders_id], "read_only": true}),
        )
        .await;
        assert_eq!(app.get_app(&narrower, &orders_id).await.0, StatusCode::OK);
        // Nor revoke its person's other tokens.
        let (_, tokens) = call(&app, Method::GET, "/v1/tokens", &owner, Value::Null).await;
        let monitor = tokens["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "monitor")
            .unwrap();
        assert_eq!(monitor["scope"]["read_only"], true, "{monitor}");
        let path = format!("/v1/tokens/{}", monitor["id"].as_str().unwrap());
        refused(&call(&app, Method::DELETE, &path, &one, Value::Null).await);
        assert_eq!(
            call(&app, Method::GET, "/v1/apps", &reader, Value::Null)
                .await
                .0,
            StatusCode::OK,
            "still works"
        );
        // Within its app it acts as its person may.
        assert_eq!(
            call(&app, Method::POST, &disable, &one, json!({})).await.0,
            StatusCode::OK
        );

        // No secrets: the paths, not the values, nor resource credentials.
        let blind = token(&app, &owner, json!({"name": "blind", "secrets": false})).await;
        let paths = format!("/v1/secrets?secret_type=app&app_id={orders_id}");
        let (status, listed) = call(&app, Method::GET, &paths, &blind, Value::Null).await;
        assert_eq!(status, StatusCode::OK);
        assert!(listed.to_string().contains("db/password"), "{listed}");
        refused(&call(&app, Method::GET, &value, &blind, Value::Null).await);
        let credentials = format!("/v1/apps/{orders_id}/resources/database/main/credentials");
        refused(&call(&app, Method::GET, &credentials, &blind, Value::Null).await);
        let change = json!({"secret_type": "app", "app_id": orders_id,
            "secret_path": "db/password", "data": {"v": "changed"}});
        refused(&call(&app, Method::PUT, "/v1/secrets/entry", &blind, change).await);
        let (_, read) = call(&app, Method::GET, &value, &owner, Value::Null).await;
        assert_eq!(read["data"]["v"], "s3cret", "unchanged");

        // The owner's list shows each scope.
        let (_, tokens) = call(&app, Method::GET, "/v1/tokens", &owner, Value::Null).await;
        let scopes: Vec<(String, Value)> = tokens["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["name"].as_str().unwrap().to_owned(), t["scope"].clone()))
            .collect();
        let of = |name: &str| scopes.iter().find(|(n, _)| n == name).unwrap().1.clone();
        assert_eq!(
            of("orders-ci"),
            json!({"read_only": false, "apps": [orders_id], "secrets": true})
        );
        assert_eq!(
            of("blind"),
            json!({"read_only": false, "apps": null, "secrets": false})
        );
        assert_eq!(
            of(BOOTSTRAP),
            json!({"read_only": false, "apps": null, "secrets": true})
        );
        app.finish().await;
    }
}
