//! The secrets vault over real HTTP, on SQLite and PostgreSQL: create/get/update/delete with
//! versions, list with prefix and pages, share, the path rules, concurrent updates, scopes,
//! the audit trail, key rotation, and a raw scan of the database and the server's log for
//! values.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::sync::{Arc, Mutex, OnceLock};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{Reply, TestApp, assert_error, backends, spawn_app};

/// `POST /v1/secrets`.
pub async fn create(app: &TestApp, token: &str, body: Value) -> Reply {
    app.send(
        Method::POST,
        "/v1/secrets",
        Some(token),
        Some(body.to_string()),
    )
    .await
}

/// `PUT /v1/secrets/entry`.
pub async fn update(app: &TestApp, token: &str, body: Value) -> Reply {
    app.send(
        Method::PUT,
        "/v1/secrets/entry",
        Some(token),
        Some(body.to_string()),
    )
    .await
}

fn query(pairs: &[(&str, &str)]) -> String {
    let mut url = url_encoded(pairs);
    if !url.is_empty() {
        url.insert(0, '?');
    }
    url
}

fn url_encoded(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            let v: String = v
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || b"-_.".contains(&b) {
                        (b as char).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect();
            format!("{k}={v}")
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// `GET /v1/secrets/entry?…`.
pub async fn get(app: &TestApp, token: &str, pairs: &[(&str, &str)]) -> Reply {
    app.send(
        Method::GET,
        &format!("/v1/secrets/entry{}", query(pairs)),
        Some(token),
        None,
    )
    .await
}

/// `DELETE /v1/secrets/entry?…`.
pub async fn delete(app: &TestApp, token: &str, pairs: &[(&str, &str)]) -> Reply {
    app.send(
        Method::DELETE,
        &format!("/v1/secrets/entry{}", query(pairs)),
        Some(token),
        None,
    )
    .await
}

/// `GET /v1/secrets?…`.
pub async fn list(app: &TestApp, token: &str, pairs: &[(&str, &str)]) -> Reply {
    app.send(
        Method::GET,
        &format!("/v1/secrets{}", query(pairs)),
        Some(token),
        None,
    )
    .await
}

/// `POST /v1/secrets/share`.
pub async fn share(app: &TestApp, token: &str, body: Value) -> Reply {
    app.send(
        Method::POST,
        "/v1/secrets/share",
        Some(token),
        Some(body.to_string()),
    )
    .await
}

fn paths(body: &Value) -> Vec<String> {
    body["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .map(|s| s["secret_path"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn create_get_update_delete_keep_every_version() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let t = app.owner.clone();
        let (status, body) = create(
            &app,
            &t,
            json!({"secret_type": "user", "secret_path": "db/creds",
                   "data": {"n": 1}, "metadata": {"owner": "ops"}}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{backend:?}: {body}");
        assert_eq!(body["version"], 1);
        assert_eq!(body["secret_path"], "db/creds");
        assert!(body.get("data").is_none(), "create does not echo the value");

        let again = create(
            &app,
            &t,
            json!({"secret_type": "user", "secret_path": "db/creds", "data": {"n": 0}}),
        )
        .await;
        assert_error(
            &again,
            StatusCode::CONFLICT,
            "already_exists",
            Some("secret_path"),
        );

        // Ten updates give versions 2..=11; metadata is kept when not given.
        for n in 2..=11 {
            let (status, body) = update(
                &app,
                &t,
                json!({"secret_type": "user", "secret_path": "db/creds", "data": {"n": n}}),
            )
            .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            assert_eq!(body["version"], n);
        }
        let (status, latest) = get(
            &app,
            &t,
            &[("secret_type", "user"), ("secret_path", "db/creds")],
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{latest}");
        assert_eq!(latest["version"], 11);
        assert_eq!(latest["latest_version"], 11);
        assert_eq!(latest["data"], json!({"n": 11}));
        assert_eq!(latest["metadata"], json!({"owner": "ops"}));
        assert_eq!(latest["versions"], json!((1..=11).collect::<Vec<i64>>()));
        for v in 1..=11 {
            let (status, body) = get(
                &app,
                &t,
                &[
                    ("secret_type", "user"),
                    ("secret_path", "db/creds"),
                    ("version", &v.to_string()),
                ],
            )
            .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            assert_eq!(body["version"], v);
            assert_eq!(
                body["data"],
                json!({"n": v}),
                "version {v} keeps its own data"
            );
        }
        let missing_version = get(
            &app,
            &t,
            &[
                ("secret_type", "user"),
                ("secret_path", "db/creds"),
                ("version", "12"),
            ],
        )
        .await;
        assert_error(&missing_version, StatusCode::NOT_FOUND, "not_found", None);
        assert_error(
            &get(
                &app,
                &t,
                &[
                    ("secret_type", "user"),
                    ("secret_path", "db/creds"),
                    ("version", "0"),
                ],
            )
            .await,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("version"),
        );

        // New metadata replaces the old.
        let (_, body) = update(
            &app,
            &t,
            json!({"secret_type": "user", "secret_path": "db/creds",
                   "data": {"n": 12}, "metadata": {}}),
        )
        .await;
        assert_eq!(body["version"], 12);
        let (_, body) = get(
            &app,
            &t,
            &[("secret_type", "user"), ("secret_path", "db/creds")],
        )
        .await;
        assert_eq!(body["metadata"], json!({}));

        // Missing paths are clear 404s for update, get and delete.
        let target = [("secret_type", "user"), ("secret_path", "no/such")];
        assert_error(
            &update(
                &app,
                &t,
                json!({"secret_type": "user", "secret_path": "no/such", "data": {"a": "b"}}),
            )
            .await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        assert_error(
            &get(&app, &t, &target).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        assert_error(
            &delete(&app, &t, &target).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );

        // Delete removes every version; the path is free again and starts over at 1.
        let (status, _) = delete(
            &app,
            &t,
            &[("secret_type", "user"), ("secret_path", "db/creds")],
        )
        .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        assert_error(
            &get(
                &app,
                &t,
                &[
                    ("secret_type", "user"),
                    ("secret_path", "db/creds"),
                    ("version", "3"),
                ],
            )
            .await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        let (status, body) = create(
            &app,
            &t,
            json!({"secret_type": "user", "secret_path": "db/creds", "data": {"n": 1}}),
        )
        .await;
        assert_eq!(
            (status, body["version"].clone()),
            (StatusCode::CREATED, json!(1))
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn data_and_metadata_must_be_flat_objects() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let cases = [
            (json!({"secret_type": "user", "secret_path": "a"}), "data"),
            (
                json!({"secret_type": "user", "secret_path": "a", "data": "{\"a\":1}"}),
                "data",
            ),
            (
                json!({"secret_type": "user", "secret_path": "a", "data": {}}),
                "data",
            ),
            (
                json!({"secret_type": "user", "secret_path": "a", "data": {"a": [1]}}),
                "data",
            ),
            (
                json!({"secret_type": "user", "secret_path": "a", "data": {"a": 1}, "metadata": 5}),
                "metadata",
            ),
            (
                json!({"secret_type": "team", "secret_path": "a", "data": {"a": 1}}),
                "secret_type",
            ),
            (
                json!({"secret_type": "app", "secret_path": "a", "data": {"a": 1}}),
                "app_id",
            ),
            (
                json!({"secret_type": "user", "app_id": uuid::Uuid::new_v4().to_string(),
                       "secret_path": "a", "data": {"a": 1}}),
                "app_id",
            ),
            (
                json!({"secret_type": "user", "secret_path": "a", "data": {"a": 1}, "x": 1}),
                "x",
            ),
        ];
        for (body, field) in cases {
            let reply = create(&app, &app.owner, body.clone()).await;
            assert_error(
                &reply,
                StatusCode::BAD_REQUEST,
                "invalid_argument",
                Some(field),
            );
        }
        let (_, listed) = list(&app, &app.owner, &[("secret_type", "user")]).await;
        assert_eq!(paths(&listed), Vec::<String>::new(), "{backend:?}");
        app.finish().await;
    }
}

#[tokio::test]
async fn bad_paths_are_rejected_and_nothing_is_stored() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let marker = format!("marker-{}", uuid::Uuid::new_v4().simple());
        let long = vec!["abcdefgh"; 40].join("/");
        let bad = [
            "/abs", "a/../b", "..", "", &long, "a b", "a//b", "a/", "./a", "a\\b", "naïve",
            "a\u{0}b", "a;rm -rf", "%2e%2e/x",
        ];
        for path in bad {
            for scope in ["user", "shared"] {
                let reply = create(
                    &app,
                    &app.owner,
                    json!({"secret_type": scope, "secret_path": path, "data": {"v": marker}}),
                )
                .await;
                assert_error(
                    &reply,
                    StatusCode::BAD_REQUEST,
                    "invalid_argument",
                    Some("secret_path"),
                );
                let message = reply.1["error"]["message"].as_str().unwrap().to_owned();
                assert!(message.starts_with("secret_path: must"), "{message}");
            }
            assert_error(
                &get(
                    &app,
                    &app.owner,
                    &[("secret_type", "user"), ("secret_path", path)],
                )
                .await,
                StatusCode::BAD_REQUEST,
                "invalid_argument",
                Some("secret_path"),
            );
            assert_error(
                &share(
                    &app,
                    &app.owner,
                    json!({"from_secret_type": "user", "from_secret_path": "ok",
                           "to_shared_path": path}),
                )
                .await,
                StatusCode::BAD_REQUEST,
                "invalid_argument",
                Some("to_shared_path"),
            );
        }
        for scope in ["user", "shared"] {
            let (_, listed) = list(&app, &app.owner, &[("secret_type", scope)]).await;
            assert!(paths(&listed).is_empty(), "{backend:?}: {listed}");
        }
        assert!(
            !raw_database(&app).await.contains(&marker),
            "{backend:?}: a rejected request stored something"
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn list_filters_by_prefix_and_pages_through_everything_once() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let mut expected = Vec::new();
        for i in 0..25 {
            let path = format!("team/key_{i:02}");
            let (status, _) = create(
                &app,
                &app.owner,
                json!({"secret_type": "shared", "secret_path": path, "data": {"i": i}}),
            )
            .await;
            assert_eq!(status, StatusCode::CREATED);
            expected.push(path);
        }
        // `_` is a literal here, not a wildcard.
        create(
            &app,
            &app.owner,
            json!({"secret_type": "shared", "secret_path": "teamXkey", "data": {"a": 1}}),
        )
        .await;
        create(
            &app,
            &app.owner,
            json!({"secret_type": "shared", "secret_path": "other/x", "data": {"a": 1}}),
        )
        .await;
        let mut seen = Vec::new();
        let mut next: Option<String> = None;
        let mut pages = 0;
        loop {
            let mut q = vec![
                ("secret_type", "shared"),
                ("prefix", "team/"),
                ("page_size", "10"),
            ];
            if let Some(t) = &next {
                q.push(("next_token", t));
            }
            let (status, body) = list(&app, &app.owner, &q).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            seen.extend(paths(&body));
            pages += 1;
            match body["next_token"].as_str() {
                Some(t) => next = Some(t.to_owned()),
                None => break,
            }
        }
        assert_eq!(pages, 3, "{backend:?}");
        assert_eq!(
            seen, expected,
            "{backend:?}: each path exactly once, in order"
        );
        let (_, body) = list(
            &app,
            &app.owner,
            &[("secret_type", "shared"), ("prefix", "team_")],
        )
        .await;
        assert!(paths(&body).is_empty(), "'_' must not match any character");
        assert_error(
            &list(
                &app,
                &app.owner,
                &[("secret_type", "shared"), ("next_token", "bogus")],
            )
            .await,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("next_token"),
        );
        assert_error(
            &list(
                &app,
                &app.owner,
                &[("secret_type", "shared"), ("prefix", "/x")],
            )
            .await,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            Some("prefix"),
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn share_copies_into_shared_and_never_overwrites() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let t = app.owner.clone();
        create(
            &app,
            &t,
            json!({"secret_type": "user", "secret_path": "mine", "data": {"k": "v1"},
                   "metadata": {"m": 1}}),
        )
        .await;
        update(
            &app,
            &t,
            json!({"secret_type": "user", "secret_path": "mine", "data": {"k": "v2"}}),
        )
        .await;
        let (status, body) = share(
            &app,
            &t,
            json!({"from_secret_type": "user", "from_secret_path": "mine",
                   "to_shared_path": "team/copy"}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{backend:?}: {body}");
        assert_eq!(body["secret_type"], "shared");
        assert_eq!(body["version"], 1);

        let member = app.add_user("member@example.org", "Member").await;
        let (status, got) = get(
            &app,
            member.token.expose(),
            &[("secret_type", "shared"), ("secret_path", "team/copy")],
        )
        .await;
        assert_eq!(status, StatusCode::OK, "members read shared secrets: {got}");
        assert_eq!(
            got["data"],
            json!({"k": "v2"}),
            "the latest version is copied"
        );
        assert_eq!(got["metadata"], json!({"m": 1}));

        // The source is unchanged.
        let (_, source) = get(
            &app,
            &t,
            &[("secret_type", "user"), ("secret_path", "mine")],
        )
        .await;
        assert_eq!(source["version"], 2);
        assert_eq!(source["data"], json!({"k": "v2"}));

        // An existing destination is an error and keeps its value.
        update(
            &app,
            &t,
            json!({"secret_type": "user", "secret_path": "mine", "data": {"k": "v3"}}),
        )
        .await;
        let again = share(
            &app,
            &t,
            json!({"from_secret_type": "user", "from_secret_path": "mine",
                   "to_shared_path": "team/copy"}),
        )
        .await;
        assert_error(
            &again,
            StatusCode::CONFLICT,
            "already_exists",
            Some("to_shared_path"),
        );
        let (_, kept) = get(
            &app,
            &t,
            &[("secret_type", "shared"), ("secret_path", "team/copy")],
        )
        .await;
        assert_eq!(kept["data"], json!({"k": "v2"}));

        // copy_metadata false leaves the metadata behind.
        share(
            &app,
            &t,
            json!({"from_secret_type": "user", "from_secret_path": "mine",
                   "to_shared_path": "team/bare", "copy_metadata": false}),
        )
        .await;
        let (_, bare) = get(
            &app,
            &t,
            &[("secret_type", "shared"), ("secret_path", "team/bare")],
        )
        .await;
        assert_eq!(bare["metadata"], json!({}));
        assert_eq!(bare["data"], json!({"k": "v3"}));

        // Another user's secrets are not theirs to share.
        let theirs = share(
            &app,
            member.token.expose(),
            json!({"from_secret_type": "user", "from_secret_path": "mine",
                   "to_shared_path": "stolen"}),
        )
        .await;
        assert_error(&theirs, StatusCode::NOT_FOUND, "not_found", None);
        app.finish().await;
    }
}

#[tokio::test]
async fn concurrent_updates_each_get_their_own_version() {
    for backend in backends() {
        let app = Arc::new(spawn_app(backend).await);
        create(
            &app,
            &app.owner,
            json!({"secret_type": "user", "secret_path": "race", "data": {"w": 0}}),
        )
        .await;
        let writers = 16;
        let mut tasks = Vec::new();
        for w in 1..=writers {
            let app = Arc::clone(&app);
            tasks.push(tokio::spawn(async move {
                let (status, body) = update(
                    &app,
                    &app.owner,
                    json!({"secret_type": "user", "secret_path": "race", "data": {"w": w}}),
                )
                .await;
                assert_eq!(status, StatusCode::OK, "{body}");
                body["version"].as_i64().unwrap()
            }));
        }
        let mut versions = BTreeSet::new();
        for t in tasks {
            versions.insert(t.await.unwrap());
        }
        assert_eq!(
            versions,
            (2..=writers + 1).collect::<BTreeSet<i64>>(),
            "{backend:?}"
        );
        let mut writers_seen = BTreeSet::new();
        for v in 1..=writers + 1 {
            let (status, body) = get(
                &app,
                &app.owner,
                &[
                    ("secret_type", "user"),
                    ("secret_path", "race"),
                    ("version", &v.to_string()),
                ],
            )
            .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            writers_seen.insert(body["data"]["w"].as_i64().unwrap());
        }
        assert_eq!(
            writers_seen,
            (0..=writers).collect::<BTreeSet<i64>>(),
            "every write is kept"
        );
        Arc::try_unwrap(app).ok().unwrap().finish().await;
    }
}

#[tokio::test]
async fn scopes_decide_who_sees_what() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let owner = app.owner.clone();
        let editor = app.add_user("editor@example.org", "Editor").await;
        let viewer = app.add_user("viewer@example.org", "Viewer").await;
        let member = app.add_user("member@example.org", "Member").await;
        let foreign = app.add_account("foreign@example.org").await;
        let created = app.register(&owner, "vaulted").await;
        let id = created["id"].as_str().unwrap().to_owned();
        for (who, role) in [(&editor, "editor"), (&viewer, "viewer")] {
            let (status, body) = app
                .send(
                    Method::POST,
                    &format!("/v1/apps/{id}/permissions"),
                    Some(&owner),
                    Some(json!({"user_id": who.email, "role": role}).to_string()),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }

        // User secrets: private to their owner; to anyone else they do not exist.
        create(
            &app,
            member.token.expose(),
            json!({"secret_type": "user", "secret_path": "private", "data": {"p": "x"}}),
        )
        .await;
        assert_error(
            &get(
                &app,
                &owner,
                &[("secret_type", "user"), ("secret_path", "private")],
            )
            .await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );

        // App secrets: editors write and read, viewers list only, others get the app's 404.
        let (status, body) = create(
            &app,
            editor.token.expose(),
            json!({"secret_type": "app", "app_id": id, "secret_path": "db", "data": {"pw": "s"}}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let target = [
            ("secret_type", "app"),
            ("app_id", id.as_str()),
            ("secret_path", "db"),
        ];
        let (status, _) = get(&app, &owner, &target).await;
        assert_eq!(status, StatusCode::OK);
        let (status, listed) = list(
            &app,
            viewer.token.expose(),
            &[("secret_type", "app"), ("app_id", &id)],
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{listed}");
        assert_eq!(paths(&listed), ["db"]);
        let denied = get(&app, viewer.token.expose(), &target).await;
        assert_error(&denied, StatusCode::FORBIDDEN, "permission_denied", None);
        assert!(
            denied.1["error"]["message"]
                .as_str()
                .unwrap()
                .contains("editor or owner"),
            "{}",
            denied.1
        );
        for token in [member.token.expose(), foreign.token.expose()] {
            assert_error(
                &get(&app, token, &target).await,
                StatusCode::NOT_FOUND,
                "not_found",
                None,
            );
        }

        // Shared secrets: every member reads; only the creator or the account owner changes.
        create(
            &app,
            member.token.expose(),
            json!({"secret_type": "shared", "secret_path": "team", "data": {"t": 1}}),
        )
        .await;
        let shared = [("secret_type", "shared"), ("secret_path", "team")];
        let (status, _) = get(&app, viewer.token.expose(), &shared).await;
        assert_eq!(status, StatusCode::OK);
        assert_error(
            &get(&app, foreign.token.expose(), &shared).await,
            StatusCode::NOT_FOUND,
            "not_found",
            None,
        );
        assert_error(
            &update(
                &app,
                editor.token.expose(),
                json!({"secret_type": "shared", "secret_path": "team", "data": {"t": 2}}),
            )
            .await,
            StatusCode::FORBIDDEN,
            "permission_denied",
            None,
        );
        let (status, _) = update(
            &app,
            &owner,
            json!({"secret_type": "shared", "secret_path": "team", "data": {"t": 3}}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "the account owner may change it");

        // Deleting the app deletes its secrets.
        let (status, _) = app.delete_app(&owner, &id).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let again = app.register(&owner, "vaulted").await;
        let new_id = again["id"].as_str().unwrap().to_owned();
        let (_, listed) = list(&app, &owner, &[("secret_type", "app"), ("app_id", &new_id)]).await;
        assert!(paths(&listed).is_empty());
        app.finish().await;
    }
}

#[tokio::test]
async fn the_audit_trail_records_who_did_what_without_values() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let member = app.add_user("m@example.org", "M").await;
        let value = format!("audit-value-{}", uuid::Uuid::new_v4().simple());
        create(
            &app,
            &app.owner,
            json!({"secret_type": "shared", "secret_path": "a", "data": {"v": value}}),
        )
        .await;
        get(
            &app,
            member.token.expose(),
            &[("secret_type", "shared"), ("secret_path", "a")],
        )
        .await;
        delete(
            &app,
            member.token.expose(),
            &[("secret_type", "shared"), ("secret_path", "a")],
        )
        .await;
        get(
            &app,
            member.token.expose(),
            &[("secret_type", "user"), ("secret_path", "none")],
        )
        .await;

        let (status, all) = app
            .send(Method::GET, "/v1/secrets/audit", Some(&app.owner), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{all}");
        let summary: Vec<(String, String, String)> = all["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["action"].as_str().unwrap().to_owned(),
                    e["secret_path"].as_str().unwrap_or_default().to_owned(),
                    e["outcome"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let expect = |a: &str, p: &str, o: &str| (a.to_owned(), p.to_owned(), o.to_owned());
        assert_eq!(
            summary,
            vec![
                expect("delete", "a", "permission_denied"),
                expect("get", "a", "success"),
                expect("create", "a", "success"),
            ],
            "{backend:?}: newest first; another member's user-secret entries stay private"
        );
        assert!(!all.to_string().contains(&value));
        let (_, mine) = app
            .send(
                Method::GET,
                "/v1/secrets/audit",
                Some(member.token.expose()),
                None,
            )
            .await;
        assert_eq!(
            mine["entries"].as_array().unwrap().len(),
            3,
            "a member sees their own entries: {mine}"
        );
        app.finish().await;
    }
}

#[tokio::test]
async fn rotating_the_master_key_keeps_every_version() {
    for backend in backends() {
        let mut app = spawn_app(backend).await;
        for (i, path) in ["a", "b/c"].iter().enumerate() {
            create(
                &app,
                &app.owner,
                json!({"secret_type": "user", "secret_path": path, "data": {"v": i}}),
            )
            .await;
        }
        update(
            &app,
            &app.owner,
            json!({"secret_type": "user", "secret_path": "a", "data": {"v": 10}}),
        )
        .await;
        let key_file = app.data_dir().join("vault.key");
        let before = std::fs::read_to_string(&key_file).unwrap();

        let busy = slipway_platform::rotate_vault_key(
            &app.config.data_dir,
            app.config.database_url.as_deref(),
            None,
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(busy.contains("stop it first"), "{busy}");

        app.stop().await;
        let rotation = slipway_platform::rotate_vault_key(
            &app.config.data_dir,
            app.config.database_url.as_deref(),
            None,
        )
        .await
        .expect("rotate");
        assert_eq!(rotation.versions, 3, "{backend:?}");
        let after = std::fs::read_to_string(&key_file).unwrap();
        assert_ne!(before, after);
        assert!(after.contains(&rotation.key_id));
        let old: Value = serde_json::from_str(&before).unwrap();
        let old_id = old["active"].as_str().unwrap();
        assert!(!after.contains(old_id), "the old key is retired");

        app.restart().await;
        for (path, version, v) in [("a", "1", 0), ("a", "2", 10), ("b/c", "1", 1)] {
            let (status, body) = get(
                &app,
                &app.owner,
                &[
                    ("secret_type", "user"),
                    ("secret_path", path),
                    ("version", version),
                ],
            )
            .await;
            assert_eq!(status, StatusCode::OK, "{backend:?}: {body}");
            assert_eq!(body["data"]["v"], v);
        }
        app.finish().await;
    }
}

/// Everything the database holds, as text: the SQLite files' bytes, or every PostgreSQL
/// table's rows as JSON.
pub async fn raw_database(app: &TestApp) -> String {
    match &app.config.database_url {
        None => String::from_utf8_lossy(&crate::support::sqlite_bytes(app)).into_owned(),
        Some(url) => {
            use sqlx::Connection;
            let mut conn = sqlx::postgres::PgConnection::connect(url).await.unwrap();
            let tables: Vec<(String,)> = sqlx::query_as(
                "SELECT table_name::text FROM information_schema.tables \
                 WHERE table_schema = 'public'",
            )
            .fetch_all(&mut conn)
            .await
            .unwrap();
            let mut out = String::new();
            for (table,) in tables {
                let sql = format!("SELECT row_to_json(t)::text FROM \"{table}\" t");
                let rows: Vec<(String,)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .fetch_all(&mut conn)
                    .await
                    .unwrap();
                for (row,) in rows {
                    out.push_str(&row);
                    out.push('\n');
                }
            }
            conn.close().await.unwrap();
            out
        }
    }
}

/// The file every log line of this test binary goes to (at TRACE level), installed once.
fn log_file() -> &'static std::path::Path {
    static LOG: OnceLock<tempfile::TempPath> = OnceLock::new();
    LOG.get_or_init(|| {
        let file = tempfile::NamedTempFile::new().unwrap();
        let (handle, path) = file.into_parts();
        let shared = Arc::new(Mutex::new(handle));
        let writer = move || LockedWriter(Arc::clone(&shared));
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(writer)
            .try_init();
        path
    })
}

struct LockedWriter(Arc<Mutex<std::fs::File>>);

impl std::io::Write for LockedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.0.lock() {
            Ok(mut f) => f.write(buf),
            Err(_) => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.0.lock() {
            Ok(mut f) => f.flush(),
            Err(_) => Ok(()),
        }
    }
}

#[tokio::test]
async fn no_value_reaches_the_database_or_the_log() {
    let log = log_file();
    for backend in backends() {
        let app = spawn_app(backend).await;
        let created = app.register(&app.owner, "scanned").await;
        let id = created["id"].as_str().unwrap().to_owned();
        let values: Vec<String> = (0..4)
            .map(|i| format!("plain-{i}-{}", uuid::Uuid::new_v4().simple()))
            .collect();
        let meta = format!("meta-{}", uuid::Uuid::new_v4().simple());
        create(
            &app,
            &app.owner,
            json!({"secret_type": "user", "secret_path": "u", "data": {"v": values[0]},
                   "metadata": {"note": meta}}),
        )
        .await;
        create(
            &app,
            &app.owner,
            json!({"secret_type": "app", "app_id": id, "secret_path": "db",
                   "data": {"password": values[1]}}),
        )
        .await;
        create(
            &app,
            &app.owner,
            json!({"secret_type": "shared", "secret_path": "s", "data": {"v": values[2]}}),
        )
        .await;
        update(
            &app,
            &app.owner,
            json!({"secret_type": "user", "secret_path": "u", "data": {"v": values[3]}}),
        )
        .await;
        share(
            &app,
            &app.owner,
            json!({"from_secret_type": "app", "app_id": id, "from_secret_path": "db",
                   "to_shared_path": "copied"}),
        )
        .await;
        // Reading them back works, so the values did go through the server.
        let (_, got) = get(
            &app,
            &app.owner,
            &[("secret_type", "shared"), ("secret_path", "copied")],
        )
        .await;
        assert_eq!(got["data"]["password"], values[1]);
        // A failing request with a value in it must not log it either.
        create(
            &app,
            &app.owner,
            json!({"secret_type": "shared", "secret_path": "s", "data": {"v": values[0]}}),
        )
        .await;

        // Invite codes and tokens, made, used and refused, reach neither either.
        let mut values = values;
        let (_, invite) = app
            .send(
                Method::POST,
                "/v1/account/invites",
                Some(&app.owner),
                Some(json!({"email": "scan@example.org"}).to_string()),
            )
            .await;
        let code = invite["code"].as_str().unwrap().to_owned();
        let accept = json!({"code": code}).to_string();
        let (_, joined) = app
            .send(
                Method::POST,
                "/v1/invites/accept",
                None,
                Some(accept.clone()),
            )
            .await;
        let (status, _) = app
            .send(Method::POST, "/v1/invites/accept", None, Some(accept))
            .await;
        assert_eq!(
            status,
            StatusCode::GONE,
            "{backend:?}: a used code is refused"
        );
        let (_, made) = app
            .send(
                Method::POST,
                "/v1/tokens",
                Some(&app.owner),
                Some(json!({"name": "scan"}).to_string()),
            )
            .await;
        values.push(code);
        values.push(joined["token"].as_str().unwrap().to_owned());
        values.push(made["token"].as_str().unwrap().to_owned());

        let db = raw_database(&app).await;
        assert!(db.contains("copied"), "{backend:?}: the scan sees the rows");
        app.finish().await;
        let _ = std::io::stderr().flush();
        let logged = std::fs::read_to_string(log).unwrap_or_default();
        assert!(
            logged.contains("request"),
            "the log capture works: {} bytes",
            logged.len()
        );
        for value in values.iter().chain([&meta]) {
            assert!(!db.contains(value), "{backend:?}: {value} in the database");
            assert!(!logged.contains(value), "{backend:?}: {value} in the log");
        }
    }
}
