//! The admin API: admin tokens only, users with random tokens and permissions, reference
//! data that the services then use.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{ADMIN, STAFF, backends, full_enrollment, set, spawn_app};

#[tokio::test]
async fn the_admin_api_is_for_admin_tokens_only() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        for token in [Some(STAFF), Some("demo-restricted")] {
            let (status, body) = app.send(Method::GET, "/admin/stats", token, None).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
            assert_eq!(body[0]["errorCode"], "ADMIN_ONLY");
        }
        let (status, _) = app.send(Method::GET, "/admin/users", None, None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, _) = app
            .send(
                Method::PUT,
                "/admin/vendors/X",
                Some(STAFF),
                Some("{\"name\":\"x\"}".into()),
            )
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, users) = app
            .send(Method::GET, "/admin/users", Some(ADMIN), None)
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(users.as_array().map(Vec::len), Some(3), "{users}");
        assert!(
            !users.to_string().contains("demo-staff"),
            "tokens are never listed: {users}"
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn users_get_random_tokens_and_their_permissions_can_change() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (status, user) = app
            .admin_post("/users", &json!({ "name": "new staff" }))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{user}");
        let token = user["token"].as_str().unwrap().to_owned();
        // The prefix and 32 random bytes in base64url (43 characters): 256 bits.
        assert!(
            token.starts_with("cst_") && token.len() >= 4 + 43,
            "{token}"
        );
        let doc = full_enrollment("USR-1");
        assert_eq!(app.enroll(&token, &doc).await.0, StatusCode::FORBIDDEN);
        let grants: Vec<_> = [
            "CarePlan",
            "Account",
            "ContactPoint",
            "Consent",
            "MemberPlan",
            "Prescription",
            "AdditionalObject",
        ]
        .iter()
        .map(|o| json!({ "object": o, "read": true, "create": true, "edit": true }))
        .collect();
        let id = user["id"].as_str().unwrap();
        let (status, body) = app
            .admin_put(&format!("/users/{id}/permissions"), &json!(grants))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(app.enroll(&token, &doc).await.0, StatusCode::OK);
        let (status, body) = app
            .admin_put(
                &format!("/users/{id}/permissions"),
                &json!([{ "object": "Nope" }]),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(
            app.admin_delete(&format!("/users/{id}")).await.0,
            StatusCode::OK
        );
        assert_eq!(app.enroll(&token, &doc).await.0, StatusCode::UNAUTHORIZED);
        app.finish().await;
    }
}

#[tokio::test]
async fn reference_data_from_the_admin_api_is_used_by_enrollment() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        for (path, body) in [
            ("/vendors/OtherRx", json!({ "name": "Other vendor" })),
            ("/programs/OtherProgram", json!({ "name": "Other program" })),
            (
                "/products/PROD-2001",
                json!({ "name": "Other drug", "programApiName": "OtherProgram" }),
            ),
            (
                "/data-use-purposes/DUP-RESEARCH",
                json!({ "name": "Research" }),
            ),
        ] {
            let (status, reply) = app.admin_put(path, &body).await;
            assert_eq!(status, StatusCode::OK, "{path}: {reply}");
        }
        let mut doc = full_enrollment("REF-1");
        set(&mut doc, "/vendorName", json!("OtherRx"));
        set(&mut doc, "/programName", json!("OtherProgram"));
        set(&mut doc, "/consents/1/name", json!("DUP-RESEARCH"));
        // Products are those of the request's program.
        let (status, body) = app.enroll(STAFF, &doc).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(
            crate::support::error_paths(&body),
            ["prescriptions[0].drugNdc", "prescriptions[1].drugNdc"]
        );
        set(&mut doc, "/prescriptions/0/drugNdc", json!("PROD-2001"));
        set(&mut doc, "/prescriptions/1/drugNdc", json!("NDC:PROD-2001"));
        let (status, body) = app.enroll(STAFF, &doc).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(
            body["carePlanExternalId"],
            "OtherRx:OtherProgram:REF-1:2026-02-01"
        );
        // Invalid admin input is a 400.
        for (path, body) in [
            ("/vendors/bad:name", json!({ "name": "x" })),
            ("/vendors/Fine", json!({ "name": "" })),
            ("/vendors/Fine", json!({ "label": "x" })),
            (
                "/object-configs/Thing",
                json!({ "fields": [{ "name": "f", "type": "NOPE" }] }),
            ),
            ("/data-requests/not-a-uuid", json!({})),
        ] {
            let (status, reply) = app.admin_put(path, &body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {reply}");
        }
        app.finish().await;
    }
}

#[tokio::test]
async fn restarting_with_demo_on_a_demo_database_keeps_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = slipway_care::CareConfig::new("127.0.0.1:0".parse().unwrap());
    config.demo = true;
    config.data_dir = dir.path().to_path_buf();
    slipway_care::prepare(&config).await.expect("first start");
    slipway_care::prepare(&config).await.expect("second start");
    // A database with other data refuses the demo set.
    let other = tempfile::tempdir().unwrap();
    let mut plain = slipway_care::CareConfig::new("127.0.0.1:0".parse().unwrap());
    plain.data_dir = other.path().to_path_buf();
    let state = slipway_care::prepare(&plain).await.expect("plain start");
    drop(state);
    let url = format!("sqlite://{}", other.path().join("care.sqlite3").display());
    {
        use sqlx::Connection;
        let mut conn = sqlx::sqlite::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query("INSERT INTO vendor (api_name, name, created_at) VALUES ('X', 'X', 0)")
            .execute(&mut conn)
            .await
            .unwrap();
    }
    plain.demo = true;
    let err = slipway_care::prepare(&plain)
        .await
        .expect_err("demo into a non-empty database");
    assert!(
        matches!(err, slipway_care::CareError::DemoNeedsEmptyDatabase),
        "{err}"
    );
}

#[tokio::test]
async fn every_reference_kind_can_be_deleted_once() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        for path in [
            "/vendors/DemoRx",
            "/programs/DemoCareProgram",
            "/products/PROD-1002",
            "/data-use-purposes/DUP-MARKETING",
            "/data-requests/5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e03",
        ] {
            let (status, body) = app.admin_delete(path).await;
            assert_eq!(status, StatusCode::OK, "{path}: {body}");
            assert_eq!(body["deleted"], true, "{path}");
            let (status, body) = app.admin_delete(path).await;
            assert_eq!(
                status,
                StatusCode::NOT_FOUND,
                "{path} deleted twice: {body}"
            );
        }
        app.finish().await;
    }
}
