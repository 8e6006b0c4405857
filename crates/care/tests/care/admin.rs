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
        for (path, what) in [
            ("/vendors/DemoRx", "vendor"),
            ("/programs/DemoCareProgram", "program"),
            ("/products/PROD-1002", "product"),
            ("/data-use-purposes/DUP-MARKETING", "data use purpose"),
            (
                "/data-requests/5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e03",
                "data request",
            ),
            ("/object-configs/AdverseEvent", "object configuration"),
            (
                "/missing-info-groups/DEMO-GROUP",
                "missing-information group",
            ),
        ] {
            let (status, body) = app.admin_delete(path).await;
            assert_eq!(status, StatusCode::OK, "{path}: {body}");
            assert_eq!(body, json!({ "deleted": true }), "{path}");
            let (status, body) = app.admin_delete(path).await;
            assert_eq!(
                status,
                StatusCode::NOT_FOUND,
                "{path} deleted twice: {body}"
            );
            assert_eq!(body[0]["message"], format!("no such {what}"), "{path}");
        }
        app.finish().await;
    }
}

/// One reference-data resource of the admin API and what it answers.
struct ReferenceCase {
    /// Collection path under `/admin`.
    collection: &'static str,
    /// The demo data's list, in key order.
    listed: serde_json::Value,
    /// A new record's key and body.
    key: &'static str,
    body: serde_json::Value,
    /// The PUT answer and the new record's list entry.
    stored: serde_json::Value,
    listed_new: serde_json::Value,
    /// A key the path rule refuses, and the field the refusal names.
    bad_key: &'static str,
    key_field: &'static str,
    key_message: &'static str,
    /// What a 404 on DELETE calls the record.
    what: &'static str,
}

fn reference_cases() -> Vec<ReferenceCase> {
    let api_name = "must be 1-80 letters, digits or '_'";
    let plain_id = "must be 1-80 characters";
    vec![
        ReferenceCase {
            collection: "/vendors",
            listed: json!([{ "apiName": "DemoRx", "name": "Demo eRx vendor" }]),
            key: "NewRx",
            body: json!({ "name": "New vendor" }),
            stored: json!({ "id": "NewRx", "name": "New vendor" }),
            listed_new: json!({ "apiName": "NewRx", "name": "New vendor" }),
            bad_key: "bad:name",
            key_field: "apiName",
            key_message: api_name,
            what: "vendor",
        },
        ReferenceCase {
            collection: "/programs",
            listed: json!([{ "apiName": "DemoCareProgram", "name": "Demo Care Program" }]),
            key: "NewProgram",
            body: json!({ "name": "New program" }),
            stored: json!({ "id": "NewProgram", "name": "New program" }),
            listed_new: json!({ "apiName": "NewProgram", "name": "New program" }),
            bad_key: "bad-name",
            key_field: "apiName",
            key_message: api_name,
            what: "program",
        },
        ReferenceCase {
            collection: "/data-use-purposes",
            listed: json!([
                { "externalId": "DUP-MARKETING", "name": "Marketing" },
                { "externalId": "DUP-TREATMENT", "name": "Treatment" },
            ]),
            key: "DUP-RESEARCH",
            body: json!({ "name": "Research" }),
            stored: json!({ "id": "DUP-RESEARCH", "name": "Research" }),
            listed_new: json!({ "externalId": "DUP-RESEARCH", "name": "Research" }),
            bad_key: "%20",
            key_field: "externalId",
            key_message: plain_id,
            what: "data use purpose",
        },
        ReferenceCase {
            collection: "/products",
            listed: json!([
                { "id": "PROD-1001", "name": "Demozumab 10 mg", "programApiName": "DemoCareProgram" },
                { "id": "PROD-1002", "name": "Demozumab 20 mg", "programApiName": "DemoCareProgram" },
            ]),
            key: "PROD-3001",
            body: json!({ "name": "New drug", "programApiName": "DemoCareProgram" }),
            stored: json!({ "id": "PROD-3001", "name": "New drug", "programApiName": "DemoCareProgram" }),
            listed_new: json!({ "id": "PROD-3001", "name": "New drug", "programApiName": "DemoCareProgram" }),
            bad_key: "%20",
            key_field: "productId",
            key_message: plain_id,
            what: "product",
        },
    ]
}

/// Vendors, programs, data use purposes and products answer the same way: a list in key
/// order, a PUT that answers the stored record, the path key checked after the token, and
/// a 404 that names the kind.
#[tokio::test]
async fn reference_data_resources_list_put_and_refuse_alike() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        for case in reference_cases() {
            let c = case.collection;
            let (status, listed) = app.admin_get(c).await;
            assert_eq!((status, &listed), (StatusCode::OK, &case.listed), "{c}");

            let (status, stored) = app
                .admin_put(&format!("{c}/{}", case.key), &case.body)
                .await;
            assert_eq!((status, &stored), (StatusCode::OK, &case.stored), "{c}");
            let (_, listed) = app.admin_get(c).await;
            assert!(
                listed.as_array().unwrap().contains(&case.listed_new),
                "{c}: {listed}"
            );

            let bad = format!("/admin{c}/{}", case.bad_key);
            let body = Some(case.body.to_string());
            let (status, _) = app.send(Method::PUT, &bad, Some(STAFF), body.clone()).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{c}: the token comes first");
            let (status, refused) = app.send(Method::PUT, &bad, Some(ADMIN), body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{c}: {refused}");
            assert_eq!(
                refused,
                json!([{ "errorCode": "INVALID_NAME", "message": case.key_message, "fields": [case.key_field] }]),
                "{c}"
            );
            let (status, refused) = app
                .admin_put(&format!("{c}/{}", case.key), &json!({ "nickname": "x" }))
                .await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{c}: {refused}");
            assert_eq!(refused[0]["errorCode"], "INVALID_BODY", "{c}");

            let (status, missing) = app.admin_delete(&format!("{c}/Nothing_here")).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{c}");
            assert_eq!(
                missing,
                json!([{ "errorCode": "NOT_FOUND", "message": format!("no such {}", case.what), "fields": [] }]),
                "{c}"
            );
        }
        let (status, refused) = app
            .admin_put("/programs/Fine", &json!({ "name": " " }))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(refused[0]["fields"], json!(["name"]));
        let (status, refused) = app
            .admin_put(
                "/products/PROD-3002",
                &json!({ "name": "x", "programApiName": "bad:name" }),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(refused[0]["fields"], json!(["programApiName"]));
        app.finish().await;
    }
}
