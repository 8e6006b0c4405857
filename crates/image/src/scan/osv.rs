//! The advisory database: a directory of OSV JSON files (one advisory each, as
//! <https://ossf.github.io/osv-schema/> defines them; subdirectories are read too). An
//! advisory affects a package when an `affected` entry names its ecosystem and name (PyPI
//! names compared normalised: lower case, `_` and `.` as `-`) and either lists its version
//! in `versions` or puts it inside an `ECOSYSTEM` range (`introduced` ≤ v < `fixed`,
//! `introduced: "0"` meaning from the start). `SEMVER` ranges are read the same way; `GIT`
//! ranges are skipped.

use std::cmp::Ordering;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ScanError;
use super::sbom::Package;
use super::version::compare;

/// Most advisory files read from one directory tree.
const MAX_FILES: usize = 500_000;

/// An advisory that affects a package of the image.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Vulnerability {
    /// The advisory id (`GHSA-…`, `PYSEC-…`, `CVE-…`).
    pub id: String,
    /// The affected package.
    pub package: String,
    /// Its version in the image.
    pub version: String,
    /// The advisory's summary (or the start of its details).
    pub summary: String,
    /// `database_specific.severity` or the first `severity[].score`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// The first fixed version of the matching range, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Advisory {
    id: String,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    details: Option<String>,
    #[serde(default)]
    severity: Vec<Severity>,
    #[serde(default)]
    database_specific: Option<serde_json::Value>,
    #[serde(default)]
    affected: Vec<Affected>,
}

#[derive(Debug, Clone, Deserialize)]
struct Severity {
    #[serde(default)]
    score: String,
}

#[derive(Debug, Clone, Deserialize)]
struct Affected {
    package: Option<AffectedPackage>,
    #[serde(default)]
    versions: Vec<String>,
    #[serde(default)]
    ranges: Vec<Range>,
}

#[derive(Debug, Clone, Deserialize)]
struct AffectedPackage {
    ecosystem: String,
    name: String,
}

#[derive(Debug, Clone, Deserialize)]
struct Range {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    events: Vec<serde_json::Map<String, serde_json::Value>>,
}

/// The advisories of one directory.
#[derive(Debug, Clone, Default)]
pub struct Database {
    advisories: Vec<Advisory>,
}

impl Database {
    /// Reads every `*.json` under `dir`. A file that is not an OSV advisory is skipped with a
    /// warning (one bad file must not hide every other advisory); a missing directory is an
    /// error.
    pub fn load(dir: &Path) -> Result<Self, ScanError> {
        let mut advisories = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        let mut files = 0usize;
        while let Some(at) = stack.pop() {
            let entries = std::fs::read_dir(&at)
                .map_err(|e| ScanError::Database(format!("{}: {e}", at.display())))?;
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "json") {
                    files += 1;
                    if files > MAX_FILES {
                        return Err(ScanError::Database(format!("more than {MAX_FILES} files")));
                    }
                    match std::fs::read(&path)
                        .map_err(|e| e.to_string())
                        .and_then(|b| {
                            serde_json::from_slice::<Advisory>(&b).map_err(|e| e.to_string())
                        }) {
                        Ok(a) => advisories.push(a),
                        Err(e) => {
                            tracing::warn!(file = %path.display(), error = %e, "skipping an advisory file")
                        }
                    }
                }
            }
        }
        Ok(Self { advisories })
    }

    /// How many advisories were read.
    pub fn len(&self) -> usize {
        self.advisories.len()
    }

    /// Whether none were.
    pub fn is_empty(&self) -> bool {
        self.advisories.is_empty()
    }

    /// Every (advisory, package) pair where the advisory affects the package, by id.
    pub fn matches(&self, packages: &[Package]) -> Vec<Vulnerability> {
        let mut out = Vec::new();
        for advisory in &self.advisories {
            for package in packages {
                if let Some(fixed) = affects(advisory, package) {
                    out.push(Vulnerability {
                        id: advisory.id.clone(),
                        package: package.name.clone(),
                        version: package.version.clone(),
                        summary: advisory
                            .summary
                            .clone()
                            .or_else(|| {
                                advisory
                                    .details
                                    .as_ref()
                                    .map(|d| d.chars().take(200).collect())
                            })
                            .unwrap_or_default(),
                        severity: severity(advisory),
                        fixed,
                    });
                }
            }
        }
        out.sort_by(|a, b| (&a.id, &a.package).cmp(&(&b.id, &b.package)));
        out
    }
}

fn severity(advisory: &Advisory) -> Option<String> {
    advisory
        .database_specific
        .as_ref()
        .and_then(|d| d["severity"].as_str())
        .map(str::to_owned)
        .or_else(|| advisory.severity.first().map(|s| s.score.clone()))
        .filter(|s| !s.is_empty())
}

fn normalise(ecosystem: &str, name: &str) -> String {
    if ecosystem.eq_ignore_ascii_case("pypi") {
        name.to_lowercase().replace(['_', '.'], "-")
    } else {
        name.to_owned()
    }
}

/// `Some(fixed version if known)` when `advisory` affects `package`.
fn affects(advisory: &Advisory, package: &Package) -> Option<Option<String>> {
    for affected in &advisory.affected {
        let Some(p) = &affected.package else { continue };
        // OSV spells Debian releases `Debian:12`; the image's status file does not say which.
        let ecosystem = p.ecosystem.split(':').next().unwrap_or("");
        if !ecosystem.eq_ignore_ascii_case(&package.ecosystem)
            || normalise(ecosystem, &p.name) != normalise(ecosystem, &package.name)
        {
            continue;
        }
        let first_fixed = || {
            affected
                .ranges
                .iter()
                .flat_map(|r| &r.events)
                .find_map(|e| e.get("fixed").and_then(|v| v.as_str()).map(str::to_owned))
        };
        if affected.versions.iter().any(|v| v == &package.version) {
            return Some(first_fixed());
        }
        for range in &affected.ranges {
            if range.kind != "ECOSYSTEM" && range.kind != "SEMVER" {
                continue;
            }
            if let Some(fixed) = in_range(ecosystem, &range.events, &package.version) {
                return Some(fixed);
            }
        }
    }
    None
}

/// Walks the events in order: `introduced` opens an interval, `fixed` / `last_affected` /
/// `limit` closes it. `Some(fixed)` when `version` falls in one.
fn in_range(
    ecosystem: &str,
    events: &[serde_json::Map<String, serde_json::Value>],
    version: &str,
) -> Option<Option<String>> {
    let mut open: Option<&str> = None;
    for event in events {
        let get = |k: &str| event.get(k).and_then(|v| v.as_str());
        if let Some(intro) = get("introduced") {
            open = Some(intro);
        } else if let Some(start) = open {
            let after_start = start == "0" || compare(ecosystem, version, start) != Ordering::Less;
            if let Some(fixed) = get("fixed").or(get("limit")) {
                if after_start && compare(ecosystem, version, fixed) == Ordering::Less {
                    return Some(get("fixed").map(str::to_owned));
                }
                open = None;
            } else if let Some(last) = get("last_affected") {
                if after_start && compare(ecosystem, version, last) != Ordering::Greater {
                    return Some(None);
                }
                open = None;
            }
        }
    }
    match open {
        Some(start) if start == "0" || compare(ecosystem, version, start) != Ordering::Less => {
            Some(None)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkg(name: &str, version: &str) -> Package {
        Package {
            name: name.into(),
            version: version.into(),
            ecosystem: "PyPI".into(),
            purl: String::new(),
        }
    }

    #[test]
    fn ranges_and_exact_versions_match() {
        let advisory: Advisory = serde_json::from_str(
            r#"{"id":"PYSEC-1","summary":"bad","affected":[{"package":{"ecosystem":"PyPI","name":"Demo_Pkg"},
               "ranges":[{"type":"ECOSYSTEM","events":[{"introduced":"0"},{"fixed":"1.2.0"}]}],
               "versions":["2.0.0"]}]}"#,
        )
        .unwrap();
        let db = Database {
            advisories: vec![advisory],
        };
        for (version, hit) in [
            ("1.1.9", true),
            ("1.2.0", false),
            ("1.10", false),
            ("2.0.0", true),
        ] {
            assert_eq!(
                !db.matches(&[pkg("demo-pkg", version)]).is_empty(),
                hit,
                "{version}"
            );
        }
        assert_eq!(
            db.matches(&[pkg("demo-pkg", "1.0")])[0].fixed.as_deref(),
            Some("1.2.0")
        );
        assert!(db.matches(&[pkg("other", "1.0")]).is_empty());
    }
}
