//! Every refusal of a restore, and that it leaves its target exactly as it was: a wrong
//! passphrase, a truncated archive, an altered byte, an archive of the other service, a data
//! directory that is not empty or that a running server holds, a database that is not
//! empty, and a backup that would replace a file.

use std::path::{Path, PathBuf};

use slipway_backup::{BackupError, Passphrase};
use slipway_server::testing::Backend;

use crate::support::{Care, Db, Platform, WORK, backends, passphrase, tree};

/// A platform's archive and the directory it was taken from.
async fn platform_archive(dir: &Path, db: &Db, pass: &Passphrase) -> (PathBuf, PathBuf) {
    let data_dir = dir.join("source");
    let platform = Platform::start(&data_dir, db.url.as_deref()).await;
    platform.stop().await;
    let archive = dir.join("platform.age");
    slipway_backup::platform::backup(slipway_backup::platform::Backup {
        data_dir: data_dir.clone(),
        database_url: db.url.clone(),
        vault_key_file: None,
        to: archive.clone(),
        passphrase: pass.clone(),
        work_factor: WORK,
    })
    .await
    .expect("platform backup");
    (archive, data_dir)
}

async fn restore_platform(
    from: &Path,
    data_dir: &Path,
    database_url: Option<&str>,
    pass: &Passphrase,
) -> Result<slipway_backup::Restored, BackupError> {
    slipway_backup::platform::restore(slipway_backup::platform::Restore {
        from: from.to_path_buf(),
        data_dir: data_dir.to_path_buf(),
        database_url: database_url.map(str::to_owned),
        passphrase: pass.clone(),
    })
    .await
}

/// A copy of `archive` changed by `change`.
fn altered(archive: &Path, name: &str, change: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut bytes = std::fs::read(archive).unwrap();
    change(&mut bytes);
    let path = archive.with_file_name(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_restore_writes_nothing() {
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        let (_, pass) = passphrase(dir.path(), "pass", "the right one");
        let (_, wrong) = passphrase(dir.path(), "wrong", "the wrong one");
        let db = Db::new(backend, "backup_refusal_source").await;
        let (archive, source_dir) = platform_archive(dir.path(), &db, &pass).await;
        let target_db = Db::new(backend, "backup_refusal_target").await;
        let target = dir.path().join("target");
        let before = tree(dir.path());
        let unchanged = |what: &str| {
            assert_eq!(
                tree(dir.path()),
                before,
                "{backend:?}: {what} wrote something"
            );
        };

        let err = restore_platform(&archive, &target, target_db.url.as_deref(), &wrong)
            .await
            .unwrap_err();
        assert!(matches!(err, BackupError::WrongPassphrase(_)), "{err}");
        unchanged("a wrong passphrase");

        let cut = altered(&archive, "cut.age", |b| b.truncate(b.len() - 100));
        let flipped = altered(&archive, "flipped.age", |b| {
            let middle = b.len() / 2;
            b[middle] ^= 0x01;
        });
        let before = tree(dir.path());
        let unchanged = |what: &str| {
            assert_eq!(
                tree(dir.path()),
                before,
                "{backend:?}: {what} wrote something"
            );
        };
        for (archive, what) in [(&cut, "a truncated archive"), (&flipped, "an altered byte")] {
            let err = restore_platform(archive, &target, target_db.url.as_deref(), &pass)
                .await
                .unwrap_err();
            assert!(matches!(err, BackupError::Damaged { .. }), "{what}: {err}");
            unchanged(what);
        }

        // An archive of the care service is not a platform's.
        let care_dir = dir.path().join("care");
        let care = Care::start(&care_dir, None, true).await;
        care.stop().await;
        let care_archive = dir.path().join("care.age");
        slipway_backup::care::backup(slipway_backup::care::Backup {
            database_url: None,
            data_dir: care_dir.clone(),
            to: care_archive.clone(),
            passphrase: pass.clone(),
            work_factor: WORK,
        })
        .await
        .expect("care backup");
        let before = tree(dir.path());
        let err = restore_platform(&care_archive, &target, target_db.url.as_deref(), &pass)
            .await
            .unwrap_err();
        assert!(matches!(err, BackupError::WrongKind { .. }), "{err}");
        assert!(err.to_string().contains("slipway care restore"), "{err}");
        assert_eq!(
            tree(dir.path()),
            before,
            "{backend:?}: the wrong kind wrote something"
        );

        // A data directory that is not empty, or that a running server holds.
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("notes.txt"), b"mine").unwrap();
        let err = restore_platform(&archive, &target, target_db.url.as_deref(), &pass)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("is not empty"), "{err}");
        assert_eq!(tree(&target), ["notes.txt"]);
        let running = Platform::start(&source_dir, db.url.as_deref()).await;
        let held = tree(&source_dir);
        let err = restore_platform(&archive, &source_dir, None, &pass)
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("in use by a running platform server"),
            "{err}"
        );
        assert_eq!(tree(&source_dir), held);
        running.stop().await;

        // A backup never replaces a file.
        let err = slipway_backup::platform::backup(slipway_backup::platform::Backup {
            data_dir: source_dir.clone(),
            database_url: db.url.clone(),
            vault_key_file: None,
            to: care_archive.clone(),
            passphrase: pass.clone(),
            work_factor: WORK,
        })
        .await
        .unwrap_err();
        assert!(err.to_string().starts_with("--to "), "{err}");

        // A database that is not empty: the care service's own (SQLite) file, or the
        // platform's PostgreSQL database.
        let err = slipway_backup::care::restore(slipway_backup::care::Restore {
            from: care_archive.clone(),
            database_url: None,
            data_dir: care_dir.clone(),
            passphrase: pass.clone(),
        })
        .await
        .unwrap_err();
        assert!(err.to_string().contains("exists"), "{err}");
        if backend == Backend::Postgres {
            let empty = dir.path().join("empty");
            let err = restore_platform(&archive, &empty, db.url.as_deref(), &pass)
                .await
                .unwrap_err();
            assert!(err.to_string().contains("tables already"), "{err}");
            assert!(!empty.exists());
        }
        // After all that, the right archive still restores into the emptied target.
        std::fs::remove_file(target.join("notes.txt")).unwrap();
        restore_platform(&archive, &target, target_db.url.as_deref(), &pass)
            .await
            .expect("restore into an empty directory");
        assert!(tree(&target).iter().any(|f| f == "vault.key"));
    }
}

/// How many tables the schema of the PostgreSQL database `url` holds.
async fn table_count(url: &str) -> i64 {
    use sqlx::Connection as _;
    let mut conn = sqlx::PgConnection::connect(url).await.expect("connect");
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()",
    )
    .fetch_one(&mut conn)
    .await
    .expect("count the tables")
}

/// A restore that fails after the archive was checked, while putting things in place, leaves
/// its targets as they were: a SQLite file whose link fails takes the data directory back
/// (and an empty one given as `--data-dir` is there again, empty); a `pg_restore` that fails
/// rolls back and puts no data directory beside the empty database. And the refusals that
/// come before: a care restore with a wrong passphrase creates no directory; a backup into
/// the data directory is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_restore_leaves_its_targets_as_they_were() {
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        let (_, pass) = passphrase(dir.path(), "pass", "the right one");
        let db = Db::new(backend, "backup_failure_source").await;
        let (archive, source_dir) = platform_archive(dir.path(), &db, &pass).await;
        let owner =
            std::fs::read_to_string(source_dir.join(slipway_platform::BOOTSTRAP_TOKEN_FILE))
                .unwrap()
                .trim()
                .to_owned();

        // A backup written into the data directory would archive itself.
        std::fs::create_dir_all(source_dir.join("builds")).unwrap();
        let held = tree(&source_dir);
        let err = slipway_backup::platform::backup(slipway_backup::platform::Backup {
            data_dir: source_dir.clone(),
            database_url: db.url.clone(),
            vault_key_file: None,
            to: source_dir.join("builds/platform.age"),
            passphrase: pass.clone(),
            work_factor: WORK,
        })
        .await
        .unwrap_err();
        assert!(
            err.to_string().starts_with("--to ") && err.to_string().contains("inside the data"),
            "{err}"
        );
        assert_eq!(tree(&source_dir), held, "{backend:?}");

        match backend {
            Backend::Sqlite => {
                // A SQLite file in a directory that does not exist: the link fails after the
                // data directory was put in place, which goes back (empty, as it was).
                let target = dir.path().join("target");
                std::fs::create_dir(&target).unwrap();
                let before = tree(dir.path());
                let url = format!("sqlite://{}", target.join("missing/p.sqlite3").display());
                let err = restore_platform(&archive, &target, Some(&url), &pass)
                    .await
                    .unwrap_err();
                assert!(err.to_string().contains("p.sqlite3"), "{err}");
                assert_eq!(tree(dir.path()), before, "the failed link left something");

                // A SQLite --database-url inside the data directory, which exists and is
                // empty: both are restored, and the copy serves the same owner.
                let url = format!("sqlite://{}", target.join("p.sqlite3").display());
                restore_platform(&archive, &target, Some(&url), &pass)
                    .await
                    .expect("restore with a SQLite file inside the data directory");
                let files = tree(&target);
                assert!(files.iter().any(|f| f == "p.sqlite3"), "{files:?}");
                assert!(files.iter().any(|f| f == "vault.key"), "{files:?}");
                assert!(!files.iter().any(|f| f == "platform.sqlite3"), "{files:?}");
                let copy = Platform::start(&target, Some(&url)).await;
                let (status, me) = copy
                    .send(reqwest::Method::GET, "/v1/account/me", Some(&owner), None)
                    .await;
                assert_eq!(status, reqwest::StatusCode::OK, "{me}");
                copy.stop().await;

                // A care restore refused for its passphrase makes no directory.
                let care_dir = dir.path().join("care");
                let care = Care::start(&care_dir, None, true).await;
                care.stop().await;
                let care_archive = dir.path().join("care.age");
                slipway_backup::care::backup(slipway_backup::care::Backup {
                    database_url: None,
                    data_dir: care_dir,
                    to: care_archive.clone(),
                    passphrase: pass.clone(),
                    work_factor: WORK,
                })
                .await
                .expect("care backup");
                let (_, wrong) = passphrase(dir.path(), "wrong", "the wrong one");
                let before = tree(dir.path());
                let err = slipway_backup::care::restore(slipway_backup::care::Restore {
                    from: care_archive,
                    database_url: None,
                    data_dir: dir.path().join("new/care"),
                    passphrase: wrong,
                })
                .await
                .unwrap_err();
                assert!(matches!(err, BackupError::WrongPassphrase(_)), "{err}");
                assert_eq!(tree(dir.path()), before, "a refused care restore wrote");
            }
            Backend::Postgres => {
                // A view is no table, so the database passes as empty, but pg_restore cannot
                // create the table of that name: it fails, and its transaction rolls back.
                let target_db = Db::new(backend, "backup_failure_target").await;
                let url = target_db.url.clone().unwrap();
                {
                    use sqlx::Connection as _;
                    let mut conn = sqlx::PgConnection::connect(&url).await.expect("connect");
                    sqlx::query("CREATE VIEW _sqlx_migrations AS SELECT 1 AS version")
                        .execute(&mut conn)
                        .await
                        .expect("create the view");
                }
                let target = dir.path().join("target");
                let before = tree(dir.path());
                let err = restore_platform(&archive, &target, Some(&url), &pass)
                    .await
                    .unwrap_err();
                assert!(
                    matches!(err, BackupError::Database { .. })
                        && err.to_string().contains("pg_restore")
                        && err.to_string().contains("rolled back"),
                    "{err}"
                );
                assert_eq!(tree(dir.path()), before, "a failed pg_restore left files");
                assert_eq!(
                    table_count(&url).await,
                    0,
                    "a failed pg_restore left tables"
                );
            }
        }
    }
}
