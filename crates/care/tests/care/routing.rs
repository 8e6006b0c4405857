//! Routing: namespace and base path, the OpenAPI document, unknown routes, body limits.

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::support::{STAFF, backends, full_enrollment, spawn_app, spawn_app_with};

#[tokio::test]
async fn base_path_and_namespace_move_both_services() {
    for backend in backends() {
        let app = spawn_app_with(backend, |c| {
            c.base_path = "/services/apexrest".into();
            c.namespace = "mvn".into();
        })
        .await;
        assert!(app.base.ends_with("/services/apexrest"));
        let (status, body) = app
            .send(
                Method::POST,
                "/mvn/eRxApi",
                Some(STAFF),
                Some(full_enrollment("NS-1").to_string()),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, _) = app
            .send(
                Method::GET,
                "/mvn/missingInformationRequest/5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01",
                Some(STAFF),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        let (status, _) = app
            .send(Method::POST, "/care/eRxApi", Some(STAFF), Some("{}".into()))
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, doc) = app.send(Method::GET, "/openapi.json", None, None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(doc["servers"][0]["url"], "/services/apexrest");
        assert!(doc["paths"].get("/mvn/eRxApi").is_some(), "{doc}");
        app.finish().await;
    }
}

#[tokio::test]
async fn the_openapi_document_names_every_service_route() {
    let app = spawn_app(slipway_care::Backend::Sqlite).await;
    let (status, doc) = app.send(Method::GET, "/openapi.json", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        doc["openapi"].as_str().map(|v| v.starts_with("3.")),
        Some(true)
    );
    let paths = doc["paths"].as_object().expect("paths");
    for p in ["/care/eRxApi", "/care/missingInformationRequest/{uuid}"] {
        assert!(paths.contains_key(p), "{p} missing");
    }
    let codes = |path: &str, method: &str| -> Vec<String> {
        doc["paths"][path][method]["responses"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    assert_eq!(
        codes("/care/missingInformationRequest/{uuid}", "post"),
        [
            "200", "400", "401", "403", "404", "409", "412", "413", "500"
        ]
    );
    assert_eq!(
        codes("/care/eRxApi", "post"),
        ["200", "400", "401", "403", "413", "500"]
    );
    app.finish().await;
}

#[tokio::test]
async fn unknown_routes_are_json_404_and_large_bodies_413() {
    let app = spawn_app_with(slipway_care::Backend::Sqlite, |c| c.max_body_bytes = 4096).await;
    let (status, body) = app.send(Method::GET, "/nowhere", Some(STAFF), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.is_array());
    let big = format!("{{\"vendorName\": \"{}\"}}", "x".repeat(10_000));
    let (status, body) = app
        .send(Method::POST, "/care/eRxApi", Some(STAFF), Some(big))
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body[0]["errorCode"], "PAYLOAD_TOO_LARGE");
    let (status, body) = app.send(Method::GET, "/health", None, None).await;
    assert_eq!((status, body), (StatusCode::OK, Value::Null));
    app.finish().await;
}

/// Regression: PostgreSQL text cannot hold NUL, which once turned such input into a 500
/// (found by schemathesis).
#[tokio::test]
async fn nul_characters_are_client_errors_not_server_faults() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let mut doc = full_enrollment("NUL-1");
        doc["programName"] = Value::String("Demo\u{0}".into());
        doc["patient"]["firstName"] = Value::String("A\u{0}".into());
        let (status, body) = app.enroll(STAFF, &doc).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let (status, body) = app.enroll_raw(STAFF, "\u{0}{").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let (_, get) = app.mi_get(STAFF, crate::support::ACTIVE).await;
        let mut answers = get["fields"].clone();
        for (f, v) in answers.as_array_mut().unwrap().iter_mut().zip([
            "1980-01-01",
            "70.0",
            "Evening",
            "true",
        ]) {
            f["value"] = Value::String(v.into());
        }
        answers[1]["value"] = Value::String("7\u{0}".into());
        let (status, body) = app.mi_post(STAFF, crate::support::ACTIVE, &answers).await;
        assert_eq!(status, StatusCode::PRECONDITION_FAILED, "{body}");
        let (status, _) = app.admin_get("/care-plans/x%00y").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let (status, _) = app
            .admin_put("/vendors/Ok", &serde_json::json!({ "name": "a\u{0}" }))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        app.finish().await;
    }
}
