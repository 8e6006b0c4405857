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
