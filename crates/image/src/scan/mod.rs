//! Scan reports: the image's packages as an SBOM ([`sbom`]) matched against an advisory
//! database of OSV JSON files ([`osv`], `--advisory-db DIR`). A report is made after every
//! successful build and kept as `DATA_DIR/builds/<build_id>/scan.json`; without an advisory
//! database the result says so in `error` and carries the SBOM alone — never a report that
//! looks clean because nothing was checked.

pub mod osv;
pub mod sbom;
pub mod version;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::digest::{Digest, ImageError};
use crate::store::ImageStore;

/// The directory of per-build files (`builds/<build_id>/log`, `…/scan.json`) in a data
/// directory. It lives with its one user in this crate rather than in lib.rs, which sits
/// above every module (`slipway_image::BUILDS_DIR` re-exports it).
pub const BUILDS_DIR: &str = "builds";

/// The `error` of a scan made without an advisory database.
pub const NO_ADVISORY_DB: &str =
    "no advisory database configured (start the platform with --advisory-db DIR of OSV JSON files)";

/// What `GET /v1/builds/{id}/scan` returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScanResult {
    /// The build scanned.
    pub build_id: String,
    /// The image's packages (present whenever the image could be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sbom: Option<sbom::Sbom>,
    /// The vulnerability report, when an advisory database was checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
    /// Why there is no report.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A scan against an advisory database.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// The image's packages.
    pub sbom: sbom::Sbom,
    /// Advisories that affect a package of the SBOM.
    pub vulnerabilities: Vec<osv::Vulnerability>,
    /// The database directory and how many advisories it held.
    pub advisory_db: AdvisoryDbInfo,
    /// RFC 3339, UTC.
    pub scanned_at: String,
}

/// Which advisory database a report used.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AdvisoryDbInfo {
    /// The directory given with `--advisory-db`.
    pub path: String,
    /// Advisories read from it.
    pub advisories: usize,
}

/// Where the stored scan of `build_id` lives.
pub fn report_path(data_dir: &Path, build_id: &str) -> PathBuf {
    data_dir.join(BUILDS_DIR).join(build_id).join("scan.json")
}

/// What one scan reads: image `digest` of build `build_id` in `store`, the advisory
/// database if there is one, and `scanned_at` (RFC 3339), the caller's clock reading, so a
/// scan is a pure function of its inputs.
#[derive(Debug, Clone, Copy)]
pub struct ScanInput<'a> {
    /// The store holding the image.
    pub store: &'a ImageStore,
    /// The build that made it.
    pub build_id: &'a str,
    /// Its manifest digest (`sha256:…`).
    pub digest: &'a str,
    /// The directory of OSV JSON files (`--advisory-db`), if configured.
    pub advisory_db: Option<&'a Path>,
    /// When the scan is made.
    pub scanned_at: &'a str,
}

/// Scans an image; never fails: a problem becomes the result's `error`.
pub fn scan(input: &ScanInput<'_>) -> ScanResult {
    let ScanInput {
        store,
        build_id,
        digest,
        advisory_db,
        scanned_at,
    } = *input;
    let failed = |error: String, sbom: Option<sbom::Sbom>| ScanResult {
        build_id: build_id.to_owned(),
        sbom,
        report: None,
        error: Some(error),
    };
    let packages = match Digest::parse(digest).and_then(|d| sbom::of_image(store, &d)) {
        Ok(p) => p,
        Err(e) => return failed(format!("the image could not be read: {e}"), None),
    };
    let Some(dir) = advisory_db else {
        return failed(NO_ADVISORY_DB.to_owned(), Some(packages));
    };
    let db = match osv::Database::load(dir) {
        Ok(db) => db,
        Err(e) => return failed(format!("advisory database: {e}"), Some(packages)),
    };
    let vulnerabilities = db.matches(&packages.packages);
    ScanResult {
        build_id: build_id.to_owned(),
        sbom: Some(packages.clone()),
        report: Some(Report {
            sbom: packages,
            vulnerabilities,
            advisory_db: AdvisoryDbInfo {
                path: dir.display().to_string(),
                advisories: db.len(),
            },
            scanned_at: scanned_at.to_owned(),
        }),
        error: None,
    }
}

/// Scans and stores the result beside the build log (best effort; logged on failure).
pub fn scan_and_store(
    data_dir: &Path,
    store: &ImageStore,
    build_id: &str,
    digest: &str,
    advisory_db: Option<&Path>,
    scanned_at: &str,
) -> ScanResult {
    let result = scan(&ScanInput {
        store,
        build_id,
        digest,
        advisory_db,
        scanned_at,
    });
    let path = report_path(data_dir, build_id);
    let written = serde_json::to_vec(&result)
        .map_err(std::io::Error::other)
        .and_then(|bytes| {
            slipway_server::file::write(&path, &bytes, slipway_server::file::Mode::Ordinary)
        });
    if let Err(e) = written {
        tracing::error!(build_id, error = %e, "cannot store a scan report");
    }
    result
}

/// The stored scan of `build_id`, if one was made.
pub fn stored(data_dir: &Path, build_id: &str) -> Option<ScanResult> {
    let bytes = std::fs::read(report_path(data_dir, build_id)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Why a scan could not run (kept for callers that want a typed error).
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The image could not be read.
    #[error("{0}")]
    Image(#[from] ImageError),
    /// The advisory database could not be read.
    #[error("advisory database: {0}")]
    Database(String),
}
