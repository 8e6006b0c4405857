//! `/v1/openapi.json`: valid JSON, public, listing every route, and every documented route
//! is served by the router.

use reqwest::{Method, StatusCode};
use serde_json::Value;
use slipway_platform::http::ROUTES;

use crate::support::{backends, spawn_app};

#[tokio::test]
async fn document_is_valid_json_with_every_route_and_matches_the_router() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let r = app
            .client
            .get(format!("{}/v1/openapi.json", app.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK, "public, no token needed");
        assert_eq!(r.headers()["content-type"], "application/json");
        let doc: Value = serde_json::from_str(&r.text().await.unwrap()).expect("valid JSON");
        for (method, path) in ROUTES {
            assert!(
                doc["paths"][path][method].is_object(),
                "{method} {path} is documented"
            );
            let concrete = path.replace("{app_id}", &uuid::Uuid::new_v4().to_string());
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let (status, body) = app
                .send(
                    method.clone(),
                    &concrete,
                    Some(&app.owner),
                    Some("{}".into()),
                )
                .await;
            assert_ne!(body["error"]["code"], "no_route", "{method} {path}: {body}");
            assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
        }
        for name in ["Error", "App", "AppPage", "RegisterApp"] {
            assert!(doc["components"]["schemas"][name].is_object(), "{name}");
        }
        // Routes outside the document are JSON 404s / 405s.
        let (status, body) = app
            .send(Method::GET, "/v1/nothing", Some(&app.owner), None)
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::NOT_FOUND, Some("no_route"))
        );
        let (status, body) = app
            .send(Method::PUT, "/v1/apps", Some(&app.owner), None)
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::METHOD_NOT_ALLOWED, Some("method_not_allowed"))
        );
        app.finish().await;
    }
}
