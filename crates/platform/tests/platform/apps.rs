//! `/v1/apps`: register → get → list → delete → the name is free again; the name rule,
//! duplicates and other validation, each refused with nothing stored.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{assert_error, backends, spawn_app};

#[tokio::test]
async fn register_get_list_delete_frees_the_name() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (status, created) = app
            .register_raw(
                &app.owner,
                &json!({"name": "orders-api", "display_name": "Orders API", "description": "Takes orders"}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{backend:?}: {created}");
        assert_eq!(created["name"], "orders-api");
        assert_eq!(created["display_name"], "Orders API");
        assert_eq!(created["description"], "Takes orders");
        assert_eq!(created["status"], "registered");
        assert_eq!(created["enabled"], true);
        assert_eq!(created["url"], Value::Null);
        assert_eq!(created["devfile"], Value::Null);
        assert!(created["created_at"].as_str().unwrap().ends_with('Z'));
        let id = created["id"].as_str().unwrap().to_owned();
        assert!(uuid::Uuid::parse_str(&id).is_ok());

        let (status, got) = app.get_app(&app.owner, &id).await;
        assert_eq!(status, StatusCode::OK, "{backend:?}: {got}");
        assert_eq!(
            got, created,
            "{backend:?}: get returns what register returned"
        );
        // Upper-case UUIDs name the same app.
        let (status, _) = app.get_app(&app.owner, &id.to_uppercase()).await;
        assert_eq!(status, StatusCode::OK, "{backend:?}");

        let (status, page) = app.list_raw(&app.owner, "").await;
        assert_eq!(status, StatusCode::OK, "{backend:?}");
        assert_eq!(page["apps"].as_array().unwrap().len(), 1);
        assert_eq!(page["apps"][0]["id"], id.as_str());
        assert_eq!(page["apps"][0]["status"], "registered");
        assert_eq!(page["next_page_token"], Value::Null);

        let (status, body) = app.delete_app(&app.owner, &id).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{backend:?}: {body}");
        assert_error(
            &app.get_app(&app.owner, &id).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        assert_error(
            &app.delete_app(&app.owner, &id).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        assert!(app.list_all(&app.owner).await.is_empty(), "{backend:?}");

        let again = app.register(&app.owner, "orders-api").await;
        assert_ne!(
            again["id"],
            id.as_str(),
            "{backend:?}: a new app, not the old one"
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn duplicate_name_is_409_naming_the_field() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        app.register(&app.owner, "taken").await;
        let reply = app
            .register_raw(
                &app.owner,
                &json!({"name": "taken", "display_name": "Again"}),
            )
            .await;
        assert_error(&reply, StatusCode::CONFLICT, "already_exists", Some("name"));
        assert!(
            reply.1["error"]["message"]
                .as_str()
                .unwrap()
                .contains("already taken"),
            "{}",
            reply.1
        );
        assert_eq!(app.list_all(&app.owner).await, vec!["taken".to_owned()]);
        app.finish().await;
    }
}

/// Every clause of the app-name rule, each with a word of its message.
const NAME_RULES: &[(&str, &str)] = &[
    ("", "must not be empty"),
    (
        "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij",
        "at most 63",
    ),
    ("MyApp", "lowercase"),
    ("my_app", "lowercase"),
    ("my app", "lowercase"),
    ("1app", "start with a lowercase letter"),
    ("-app", "start with a lowercase letter"),
    ("app-", "end with a letter or digit"),
    ("my--app", "consecutive hyphens"),
];

#[tokio::test]
async fn each_name_rule_is_400_naming_name_and_nothing_is_stored() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        for (name, rule) in NAME_RULES {
            let reply = app
                .register_raw(&app.owner, &json!({"name": name, "display_name": "D"}))
                .await;
            assert_error(
                &reply,
                StatusCode::BAD_REQUEST,
                "invalid_argument",
                Some("name"),
            );
            let message = reply.1["error"]["message"].as_str().unwrap();
            assert!(message.contains(rule), "{backend:?} {name:?}: {message}");
        }
        for body in [
            json!({"display_name": "D"}),
            json!({"name": 7, "display_name": "D"}),
        ] {
            let reply = app.register_raw(&app.owner, &body).await;
            assert_error(
                &reply,
                StatusCode::BAD_REQUEST,
                "invalid_argument",
                Some("name"),
            );
        }
        assert!(
            app.list_all(&app.owner).await.is_empty(),
            "{backend:?}: nothing stored"
        );
        // The longest legal name is accepted.
        app.register(&app.owner, &"a".repeat(63)).await;
        app.finish().await;
    }
}

#[tokio::test]
async fn other_register_fields_are_checked_and_nothing_is_stored() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let cases = [
            (json!({"name": "x"}), "display_name"),
            (json!({"name": "x", "display_name": " "}), "display_name"),
            (
                json!({"name": "x", "display_name": "d".repeat(101)}),
                "display_name",
            ),
            (
                json!({"name": "x", "display_name": "D", "description": 3}),
                "description",
            ),
            (
                json!({"name": "x", "display_name": "D", "description": "d".repeat(4001)}),
                "description",
            ),
            (
                json!({"name": "x", "display_name": "D", "owner": "me"}),
                "owner",
            ),
        ];
        for (body, field) in cases {
            let reply = app.register_raw(&app.owner, &body).await;
            assert_error(
                &reply,
                StatusCode::BAD_REQUEST,
                "invalid_argument",
                Some(field),
            );
        }
        for raw in ["", "not json", "[]", "\"name\""] {
            let reply = app
                .send(
                    reqwest::Method::POST,
                    "/v1/apps",
                    Some(&app.owner),
                    Some(raw.to_owned()),
                )
                .await;
            assert_error(&reply, StatusCode::BAD_REQUEST, "invalid_body", None);
        }
        let huge = json!({"name": "x", "display_name": "D", "description": "d".repeat(70_000)});
        let reply = app.register_raw(&app.owner, &huge).await;
        assert_eq!(reply.0, StatusCode::PAYLOAD_TOO_LARGE, "{backend:?}");
        assert!(
            app.list_all(&app.owner).await.is_empty(),
            "{backend:?}: nothing stored"
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn malformed_ids_and_list_parameters_are_400() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let reply = app.get_app(&app.owner, "not-a-uuid").await;
        assert_error(
            &reply,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("app_id"),
        );
        for (query, field) in [
            ("page_size=0", "page_size"),
            ("page_size=101", "page_size"),
            ("page_size=ten", "page_size"),
            ("page_size=5&page_size=6", "page_size"),
            ("next_page_token=garbage!", "next_page_token"),
            ("pagesize=5", "pagesize"),
        ] {
            let reply = app.list_raw(&app.owner, query).await;
            assert_error(
                &reply,
                StatusCode::BAD_REQUEST,
                "invalid_argument",
                Some(field),
            );
        }
        let (status, _) = app.list_raw(&app.owner, "page_size=100").await;
        assert_eq!(status, StatusCode::OK, "{backend:?}");
        app.finish().await;
    }
}
