//! Every `/v1` route needs a known bearer token: 401 with a JSON error otherwise.

use reqwest::{Method, StatusCode};

use crate::support::{assert_error, backends, spawn_app};

#[tokio::test]
async fn requests_without_a_valid_token_are_401() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let id = uuid::Uuid::new_v4().to_string();
        let routes = [
            (Method::GET, "/v1/apps".to_owned()),
            (Method::POST, "/v1/apps".to_owned()),
            (Method::GET, format!("/v1/apps/{id}")),
            (Method::DELETE, format!("/v1/apps/{id}")),
        ];
        let bad_tokens = [
            None,
            Some(""),
            Some("slw_wrong"),
            Some(app.owner.as_str()).map(|t| &t[..t.len() - 1]),
        ];
        for (method, path) in &routes {
            for token in bad_tokens {
                let reply = app
                    .send(method.clone(), path, token, Some("{}".to_owned()))
                    .await;
                assert_error(&reply, StatusCode::UNAUTHORIZED, "unauthenticated", None);
            }
        }
        // A token in another scheme is not a bearer token.
        let r = app
            .client
            .get(format!("{}/v1/apps", app.base))
            .header("authorization", format!("Basic {}", app.owner))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(r.headers()["www-authenticate"], "Bearer");
        // The owner's token works.
        let (status, _) = app.list_raw(&app.owner, "").await;
        assert_eq!(status, StatusCode::OK, "{backend:?}");
        app.finish().await;
    }
}

#[tokio::test]
async fn unauthenticated_register_writes_nothing() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let body = serde_json::json!({"name": "sneaky", "display_name": "S"});
        let reply = app.register_raw("slw_wrong", &body).await;
        assert_error(&reply, StatusCode::UNAUTHORIZED, "unauthenticated", None);
        assert!(app.list_all(&app.owner).await.is_empty(), "{backend:?}");
        app.finish().await;
    }
}
