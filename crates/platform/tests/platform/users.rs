//! `slipway platform user add`: the returned token works and is stored only as a hash.

use reqwest::StatusCode;
use sha2::{Digest, Sha256};
use slipway_platform::{Backend, PlatformError};

use crate::support::{backends, spawn_app, sqlite_bytes};

fn sha256_hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn user_add_token_works_and_is_stored_hashed() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let user = app.add_user(" ada@example.org ", "Ada").await;
        let json = serde_json::to_value(&user).unwrap();
        let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["email", "id", "name", "token"], "{backend:?}");
        assert_eq!(json["email"], "ada@example.org");
        assert_eq!(json["name"], "Ada");
        assert!(uuid::Uuid::parse_str(json["id"].as_str().unwrap()).is_ok());
        let token = user.token.expose();
        assert!(token.len() >= 40, "{backend:?}: at least 32 random bytes");

        let (status, _) = app.list_raw(token, "").await;
        assert_eq!(status, StatusCode::OK, "{backend:?}");
        app.register(token, "adas-app").await;

        match backend {
            Backend::Sqlite => {
                let bytes = sqlite_bytes(&app);
                assert!(!bytes.is_empty());
                assert!(!contains(&bytes, token), "user token stored in clear");
                assert!(!contains(&bytes, &app.owner), "owner token stored in clear");
                assert!(
                    contains(&bytes, &sha256_hex(token)),
                    "hash is what is stored"
                );
            }
            Backend::Postgres => {
                use sqlx::Connection;
                let url = app.config.database_url.clone().unwrap();
                let mut conn = sqlx::postgres::PgConnection::connect(&url).await.unwrap();
                let dump: Vec<(String, String)> =
                    sqlx::query_as("SELECT token_hash, user_id FROM api_token")
                        .fetch_all(&mut conn)
                        .await
                        .unwrap();
                conn.close().await.unwrap();
                assert!(dump.iter().all(|(h, _)| h != token && !h.contains(token)));
                assert!(
                    dump.iter()
                        .any(|(h, u)| *h == sha256_hex(token) && *u == user.id)
                );
            }
        }
        app.finish().await;
    }
}

#[tokio::test]
async fn user_add_refuses_bad_input_and_duplicates() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        app.add_user("bob@example.org", "Bob").await;
        let again = slipway_platform::add_user(
            &app.config.data_dir,
            app.config.database_url.as_deref(),
            "bob@example.org",
            "Bob Two",
        )
        .await;
        assert!(
            matches!(again, Err(PlatformError::EmailTaken(_))),
            "{backend:?}: {again:?}"
        );
        for (email, name, field) in [("no-at-sign", "N", "email"), ("n@x.org", "  ", "name")] {
            let err = slipway_platform::add_user(
                &app.config.data_dir,
                app.config.database_url.as_deref(),
                email,
                name,
            )
            .await
            .unwrap_err();
            assert!(
                matches!(err, PlatformError::InvalidInput { field: f, .. } if f == field),
                "{backend:?}: {err}"
            );
        }
        app.finish().await;
    }
}

#[tokio::test]
async fn user_add_on_a_fresh_data_dir_bootstraps_first() {
    let dir = tempfile::tempdir().unwrap();
    let user = slipway_platform::add_user(dir.path(), None, "first@example.org", "First")
        .await
        .unwrap();
    assert!(
        dir.path()
            .join(slipway_platform::BOOTSTRAP_TOKEN_FILE)
            .exists()
    );
    assert_eq!(user.email, "first@example.org");
}
