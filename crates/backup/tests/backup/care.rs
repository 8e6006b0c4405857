//! The care service's round trip: a backup of a serving care service restored into a new
//! database keeps every row (the admin API's counts) and the request history, and its staff
//! tokens keep working.

use reqwest::{Method, StatusCode};
use serde_json::Value;
use slipway_backup::care::{Backup, Restore};

use crate::support::{ACTIVE, ADMIN, Care, Db, RESTRICTED, STAFF, WORK, backends, passphrase};

async fn stats(care: &Care) -> Value {
    let (status, body) = care
        .send(Method::GET, "/admin/stats", Some(ADMIN), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn history(care: &Care) -> Value {
    let (status, body) = care
        .send(
            Method::GET,
            &format!("/admin/data-requests/{ACTIVE}"),
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["history"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_care_backup_restores_every_row_and_the_history() {
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        let source_dir = dir.path().join("care");
        let db = Db::new(backend, "backup_care_source").await;
        let source = Care::start(&source_dir, db.url.as_deref(), true).await;
        let path = format!("/care/missingInformationRequest/{ACTIVE}");
        let (status, request) = source.send(Method::GET, &path, Some(STAFF), None).await;
        assert_eq!(status, StatusCode::OK, "{request}");
        let (status, _) = source
            .send(Method::GET, &path, Some(RESTRICTED), None)
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let counts = stats(&source).await;
        let trail = history(&source).await;
        assert_eq!(trail.as_array().map(Vec::len), Some(2), "{trail}");

        let (_, pass) = passphrase(dir.path(), "pass", "care passphrase");
        let archive = dir.path().join("care.age");
        let report = slipway_backup::care::backup(Backup {
            database_url: db.url.clone(),
            data_dir: source_dir.clone(),
            to: archive.clone(),
            passphrase: pass.clone(),
            work_factor: WORK,
        })
        .await
        .expect("backup");
        assert_eq!(report.files, 1);
        let bytes = std::fs::read(&archive).unwrap();
        assert!(!crate::support::contains(&bytes, b"SQLite format 3"));
        assert!(!crate::support::contains(&bytes, STAFF.as_bytes()));

        let restored_dir = dir.path().join("restored");
        let target_db = Db::new(backend, "backup_care_target").await;
        slipway_backup::care::restore(Restore {
            from: archive,
            database_url: target_db.url.clone(),
            data_dir: restored_dir.clone(),
            passphrase: pass,
        })
        .await
        .expect("restore");
        let copy = Care::start(&restored_dir, target_db.url.as_deref(), false).await;
        assert_eq!(stats(&copy).await, counts, "{backend:?}");
        assert_eq!(history(&copy).await, trail, "{backend:?}");
        let (status, again) = copy.send(Method::GET, &path, Some(STAFF), None).await;
        assert_eq!(status, StatusCode::OK, "{again}");
        assert_eq!(again, request);
        copy.stop().await;
        source.stop().await;
    }
}
