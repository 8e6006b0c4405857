//! First start: the owner token file (mode 0600) and its reuse across restarts.

use reqwest::StatusCode;
use slipway_platform::PlatformError;

use crate::support::{backends, spawn_app};

#[tokio::test]
async fn bootstrap_token_is_0600_works_and_survives_restarts() {
    for backend in backends() {
        let mut app = spawn_app(backend).await;
        let first = app.token_file();
        assert!(first.trim().starts_with("slw_"), "{backend:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(app.token_path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{backend:?}");
        }
        let created = app.register(&app.owner, "kept-across-restart").await;
        app.restart().await;
        assert_eq!(
            app.token_file(),
            first,
            "{backend:?}: the token is not rotated"
        );
        let (status, body) = app
            .get_app(&app.owner, created["id"].as_str().unwrap())
            .await;
        assert_eq!(status, StatusCode::OK, "{backend:?}: {body}");
        // A second restart still reuses it and leaves no temporary files behind.
        app.restart().await;
        assert_eq!(app.token_file(), first, "{backend:?}");
        let files: Vec<String> = std::fs::read_dir(app.data_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp-"))
            .collect();
        assert!(files.is_empty(), "{backend:?}: {files:?}");
        app.finish().await;
    }
}

#[tokio::test]
async fn a_missing_token_file_is_reissued_without_revoking_the_old_token() {
    for backend in backends() {
        let mut app = spawn_app(backend).await;
        let old = app.owner.clone();
        app.stop().await;
        std::fs::remove_file(app.token_path()).unwrap();
        app.restart().await;
        assert_ne!(app.owner, old, "{backend:?}");
        for token in [&old, &app.owner] {
            let (status, _) = app.list_raw(token, "").await;
            assert_eq!(status, StatusCode::OK, "{backend:?}");
        }
        app.finish().await;
    }
}

#[tokio::test]
async fn a_token_file_unknown_to_the_database_stops_start_up() {
    for backend in backends() {
        let mut app = spawn_app(backend).await;
        app.stop().await;
        let before = "slw_not-a-token-of-this-database\n";
        std::fs::write(app.token_path(), before).unwrap();
        let err = slipway_platform::prepare(&app.config).await.unwrap_err();
        assert!(
            matches!(err, PlatformError::Bootstrap(_)),
            "{backend:?}: {err}"
        );
        assert_eq!(
            app.token_file(),
            before,
            "{backend:?}: the file is left alone"
        );
        app.finish().await;
    }
}
