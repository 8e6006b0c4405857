//! The SBOM of an image: every layer is read (gzip or plain tar) and its package metadata
//! collected — Python `*.dist-info/METADATA` under any `site-packages` (ecosystem `PyPI`),
//! `node_modules/**/package.json` (`npm`), and Debian's `var/lib/dpkg/status` (`Debian`).
//! Nothing is unpacked to disk; only those small files are read.

use std::collections::BTreeSet;
use std::io::Read as _;

use serde::{Deserialize, Serialize};

use crate::digest::{Digest, ImageError};
use crate::document::Manifest;
use crate::store::ImageStore;

/// Largest metadata file read (a bigger one is skipped, not trusted).
const MAX_METADATA_BYTES: u64 = 4 << 20;

/// One package found in the image.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Package {
    /// As its metadata spells it.
    pub name: String,
    /// As its metadata spells it.
    pub version: String,
    /// `PyPI`, `npm` or `Debian` (OSV's spellings).
    pub ecosystem: String,
    /// Package URL (`pkg:pypi/fastapi@0.165.0`).
    pub purl: String,
}

/// The packages of an image, sorted, each once.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Sbom {
    /// The packages.
    pub packages: Vec<Package>,
}

/// The SBOM of image `digest` in `store`.
pub fn of_image(store: &ImageStore, digest: &Digest) -> Result<Sbom, ImageError> {
    let manifest = Manifest::parse(&store.read_blob(digest)?)?;
    let mut found = BTreeSet::new();
    for layer in &manifest.layers {
        let path = store.blob_path(&Digest::parse(&layer.digest)?);
        let file = std::io::BufReader::new(std::fs::File::open(&path)?);
        let reader: Box<dyn std::io::Read> = if layer.media_type.ends_with("gzip") {
            Box::new(flate2::read::GzDecoder::new(file))
        } else if layer.media_type.ends_with("zstd") {
            Box::new(zstd::stream::read::Decoder::new(file)?)
        } else {
            Box::new(file)
        };
        scan_layer(reader, &mut found)?;
    }
    Ok(Sbom {
        packages: found.into_iter().collect(),
    })
}

/// Collects the packages of one layer tar.
pub fn scan_layer(
    reader: impl std::io::Read,
    found: &mut BTreeSet<Package>,
) -> Result<(), ImageError> {
    let mut tar = tar::Archive::new(reader);
    for entry in tar
        .entries()
        .map_err(|e| ImageError::Document(format!("layer: {e}")))?
    {
        let mut entry = entry.map_err(|e| ImageError::Document(format!("layer: {e}")))?;
        if !entry.header().entry_type().is_file() || entry.size() > MAX_METADATA_BYTES {
            continue;
        }
        let Ok(path) = entry.path() else { continue };
        let path = path.to_string_lossy().into_owned();
        let kind = classify(&path);
        if kind == Kind::None {
            continue;
        }
        let mut text = String::new();
        if entry.read_to_string(&mut text).is_err() {
            continue;
        }
        match kind {
            Kind::Python => found.extend(python(&text)),
            Kind::Npm => found.extend(npm(&text)),
            Kind::Dpkg => found.extend(dpkg(&text)),
            Kind::None => {}
        }
    }
    Ok(())
}

#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Python,
    Npm,
    Dpkg,
    None,
}

fn classify(path: &str) -> Kind {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    match parts.as_slice() {
        [.., "var", "lib", "dpkg", "status"] => Kind::Dpkg,
        [.., site, info, "METADATA"]
            if (*site == "site-packages" || *site == "dist-packages")
                && info.ends_with(".dist-info") =>
        {
            Kind::Python
        }
        [.., "node_modules", _, "package.json"] => Kind::Npm,
        [.., "node_modules", scope, _, "package.json"] if scope.starts_with('@') => Kind::Npm,
        _ => Kind::None,
    }
}

fn package(name: &str, version: &str, ecosystem: &str, purl_type: &str) -> Option<Package> {
    let (name, version) = (name.trim(), version.trim());
    if name.is_empty() || version.is_empty() {
        return None;
    }
    let purl_name = if purl_type == "pypi" {
        name.to_lowercase().replace('_', "-")
    } else {
        name.replace('@', "%40")
    };
    Some(Package {
        name: name.to_owned(),
        version: version.to_owned(),
        ecosystem: ecosystem.to_owned(),
        purl: format!("pkg:{purl_type}/{purl_name}@{version}"),
    })
}

/// `Name:` and `Version:` of a wheel's METADATA (the headers before the first blank line).
fn python(text: &str) -> Option<Package> {
    let (mut name, mut version) = (None, None);
    for line in text.lines() {
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Name:") {
            name = Some(v);
        } else if let Some(v) = line.strip_prefix("Version:") {
            version = Some(v);
        }
    }
    package(name?, version?, "PyPI", "pypi")
}

fn npm(text: &str) -> Option<Package> {
    let json: serde_json::Value = serde_json::from_str(text).ok()?;
    package(
        json["name"].as_str()?,
        json["version"].as_str()?,
        "npm",
        "npm",
    )
}

/// Installed packages of a dpkg status file.
fn dpkg(text: &str) -> Vec<Package> {
    text.split("\n\n")
        .filter_map(|para| {
            let field = |key: &str| {
                para.lines()
                    .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':')))
                    .map(str::trim)
            };
            if !field("Status").is_some_and(|s| s.ends_with("installed")) {
                return None;
            }
            package(field("Package")?, field("Version")?, "Debian", "deb")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_files_are_recognised_where_they_live() {
        assert_eq!(
            classify("app/.venv/lib/python3.12/site-packages/fastapi-0.1.dist-info/METADATA"),
            Kind::Python
        );
        assert_eq!(
            classify("app/node_modules/left-pad/package.json"),
            Kind::Npm
        );
        assert_eq!(
            classify("app/node_modules/@types/node/package.json"),
            Kind::Npm
        );
        assert_eq!(classify("./var/lib/dpkg/status"), Kind::Dpkg);
        assert_eq!(classify("app/package.json"), Kind::None);
        assert_eq!(classify("app/node_modules/x/lib/package.json"), Kind::None);
        let p = python("Metadata-Version: 2.1\nName: Flask_Thing\nVersion: 1.2.0\n\nVersion: 9")
            .unwrap();
        assert_eq!(
            (p.name.as_str(), p.version.as_str()),
            ("Flask_Thing", "1.2.0")
        );
        assert_eq!(p.purl, "pkg:pypi/flask-thing@1.2.0");
        let d = dpkg(
            "Package: zlib1g\nStatus: install ok installed\nVersion: 1:1.2.13\n\nPackage: gone\nStatus: deinstall ok config-files\nVersion: 1\n",
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].purl, "pkg:deb/zlib1g@1:1.2.13");
    }
}
