//! Retention (`slipway platform prune`): keeps the images and the app-secret versions the
//! newest N deployments of each app need, so a rollback to any of them still works, and
//! removes the rest, saying what it removed.
//!
//! Kept for every app:
//! - the images of its newest N deployments, of any deployment still running or starting,
//!   and of the latest succeeded build of each service (the next deployment's images);
//! - of each app secret: the current version, the newest N versions, and every version one
//!   of those deployments ran with.
//!
//! Everything else goes: other images with their signatures and `index.json` entries, blobs
//! no kept image reaches (and their unpacked copies in `DATA_DIR/layers`), and older secret
//! versions. Deployment records stay (they are the
//! history, and small); a rollback to one whose image or secret version is gone is refused
//! with that reason.
//!
//! The pass holds the data directory's lock, like a key rotation: the blob store has no
//! reference counts, so a build writing blobs while the pass decides what is unreachable
//! could lose a layer. Run it with the server stopped (`--dry-run` reports without removing).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use crate::db::Db;
use crate::error::PlatformError;
use crate::model::{BuildStatus, DeploymentStatus};
use crate::store::{apps, builds, deployments, secrets};

/// How many deployments of each app keep what they ran, unless told otherwise.
pub const DEFAULT_KEEP: usize = 10;

/// What a retention pass removed (or, in a dry run, would remove).
#[derive(Debug, Clone, Serialize)]
pub struct RetentionReport {
    /// N: how many deployments of each app kept what they ran.
    pub keep: usize,
    /// True when nothing was removed, only reported.
    pub dry_run: bool,
    /// How many images were kept.
    pub images_kept: usize,
    /// The images removed.
    pub images_removed: Vec<RemovedImage>,
    /// Blobs removed (manifests, configs and layers no kept image shares).
    pub blobs_removed: usize,
    /// Their bytes.
    pub bytes_freed: u64,
    /// The app-secret versions removed (paths and numbers, never values).
    pub secret_versions_removed: Vec<RemovedSecretVersion>,
    /// Unpacked copies of removed layers (`DATA_DIR/layers`) removed.
    pub unpacked_layers_removed: usize,
}

/// One removed image and the builds that made it (none for a stray blob).
#[derive(Debug, Clone, Serialize)]
pub struct RemovedImage {
    /// `sha256:…` of its manifest.
    pub digest: String,
    /// `app_id/service` of each build that produced it.
    pub built_for: Vec<String>,
}

/// One removed version of an app secret.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RemovedSecretVersion {
    /// The app.
    pub app_id: String,
    /// The secret's path.
    pub path: String,
    /// The version removed.
    pub version: i64,
}

/// Runs one pass over every app (see the module documentation). `keep` must be at least 1.
pub async fn prune(
    db: &Db,
    data_dir: &Path,
    keep: usize,
    dry_run: bool,
) -> Result<RetentionReport, PlatformError> {
    if keep == 0 {
        return Err(PlatformError::InvalidInput {
            field: "keep",
            message: "must be at least 1: the running deployment's images are always kept".into(),
        });
    }
    let _lock = crate::data_dir::lock(data_dir)?;
    let mut tx = db.begin_write().await?;
    let Kept {
        images,
        used,
        mut built_for,
    } = kept(&mut tx, keep).await?;
    let secret_versions_removed = prune_secret_versions(&mut tx, keep, &used, dry_run).await?;
    if dry_run {
        tx.rollback().await?;
    } else {
        tx.commit().await?;
    }

    let images_kept = images.len();
    let (removal, unpacked_layers_removed) = prune_images(data_dir, images, dry_run).await?;
    let images_removed = removal
        .images
        .into_iter()
        .map(|digest| RemovedImage {
            built_for: built_for.remove(&digest).unwrap_or_default(),
            digest,
        })
        .collect::<Vec<_>>();
    tracing::info!(
        keep,
        dry_run,
        images_removed = images_removed.len(),
        blobs_removed = removal.blobs,
        bytes_freed = removal.bytes,
        secret_versions_removed = secret_versions_removed.len(),
        "retention pass finished"
    );
    Ok(RetentionReport {
        keep,
        dry_run,
        images_kept,
        images_removed,
        blobs_removed: removal.blobs,
        bytes_freed: removal.bytes,
        secret_versions_removed,
        unpacked_layers_removed,
    })
}

/// What the pass keeps, over every app, and who built each image (for the report).
struct Kept {
    /// Manifest digests of the images kept.
    images: BTreeSet<String>,
    /// (app, path, version) of the secret versions kept deployments ran with.
    used: BTreeSet<(String, String, i64)>,
    /// `app_id/service` of each build that produced an image, by its manifest digest.
    built_for: BTreeMap<String, Vec<String>>,
}

/// Collects, app by app, what its newest `keep` deployments (and any still running or
/// starting) ran and its services' latest succeeded builds: all of it stays.
async fn kept(tx: &mut crate::db::Tx, keep: usize) -> Result<Kept, PlatformError> {
    let mut kept = Kept {
        images: BTreeSet::new(),
        used: BTreeSet::new(),
        built_for: BTreeMap::new(),
    };
    for app_id in apps::all_ids(tx).await? {
        let history = deployments::of_app_newest_first(tx, &app_id).await?;
        for (index, deployment) in history.iter().enumerate() {
            let live = matches!(
                deployment.status,
                DeploymentStatus::Running | DeploymentStatus::Deploying
            );
            if index >= keep && !live {
                continue;
            }
            for service in deployments::services(tx, &deployment.id).await? {
                kept.images.insert(service.manifest_digest);
            }
            for secret in deployments::secrets_of(tx, &deployment.id).await? {
                kept.used
                    .insert((app_id.clone(), secret.path, secret.version));
            }
        }
        let mut latest_seen = BTreeSet::new();
        for build in builds::of_app_newest_first(tx, &app_id).await? {
            let Some(digest) = build.manifest_digest else {
                continue;
            };
            kept.built_for
                .entry(digest.clone())
                .or_default()
                .push(format!("{app_id}/{}", build.service));
            if build.status == BuildStatus::Succeeded && latest_seen.insert(build.service) {
                kept.images.insert(digest);
            }
        }
    }
    Ok(kept)
}

/// Removes (unless `dry_run`) every app-secret version that is neither among the newest
/// `keep` of its secret nor `used` by a kept deployment; returns those versions.
async fn prune_secret_versions(
    tx: &mut crate::db::Tx,
    keep: usize,
    used: &BTreeSet<(String, String, i64)>,
    dry_run: bool,
) -> Result<Vec<RemovedSecretVersion>, PlatformError> {
    let mut removed = Vec::new();
    for row in secrets::app_secret_versions(tx).await? {
        let newest = row.version > row.current_version - keep as i64;
        let ran = used.contains(&(row.app_id.clone(), row.path.clone(), row.version));
        if newest || ran {
            continue;
        }
        if !dry_run {
            secrets::delete_version(tx, &row.secret_id, row.version).await?;
        }
        removed.push(RemovedSecretVersion {
            app_id: row.app_id,
            path: row.path,
            version: row.version,
        });
    }
    Ok(removed)
}

/// Removes (unless `dry_run`) every image but `images` from the image store, and the
/// unpacked copies of the layers that went with them, on a blocking thread.
async fn prune_images(
    data_dir: &Path,
    images: BTreeSet<String>,
    dry_run: bool,
) -> Result<(slipway_image::store::Removal, usize), PlatformError> {
    let dir = data_dir.to_owned();
    tokio::task::spawn_blocking(move || {
        let store = slipway_image::store::ImageStore::open(&dir)?;
        let removal = store.retain(&images, dry_run)?;
        let layers = if dry_run {
            0
        } else {
            slipway_runtime::layers::prune(&dir, &store)?
        };
        Ok::<_, slipway_image::ImageError>((removal, layers))
    })
    .await
    .map_err(|e| PlatformError::Config(format!("the retention pass stopped: {e}")))?
    .map_err(|e| PlatformError::Config(format!("the image store: {e}")))
}
