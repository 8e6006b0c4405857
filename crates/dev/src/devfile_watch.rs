//! One `devfile.yaml` watched and re-validated on every change on disk, for the desktop's
//! devfile view: an edit in the user's own editor shows up within a second. The watch is on
//! the file's directory (editors save by renaming a new file over the old one), debounced.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use slipway_devfile::{Severity, validate};

use crate::round::StopHandle;
use crate::watch::Watcher;
use slipway_platform_client::ProjectFiles;
use slipway_platform_client::ToolError;

/// One finding, with the text of its line.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Finding {
    /// `error` or `warning`.
    pub severity: Severity,
    /// The document path (`components[1].container.endpoints[0].targetPort`).
    pub path: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The line's text, when known.
    pub source: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// The latest check of the file.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Checked {
    /// Counts the checks, from 1: a front end redraws when it changes.
    pub version: u64,
    /// No error (warnings allowed).
    pub valid: bool,
    /// Every finding, errors first.
    pub findings: Vec<Finding>,
    /// Why the file could not be read, if it could not (deleted, renamed away).
    pub unreadable: Option<String>,
}

/// Checks the devfile at `path` now.
pub fn check(path: &Path, version: u64) -> Checked {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            return Checked {
                version,
                valid: false,
                findings: Vec::new(),
                unreadable: Some(format!("{}: {e}", path.display())),
            };
        }
    };
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let report = validate(&text, Some(&ProjectFiles(dir)));
    let lines: Vec<&str> = text.lines().collect();
    let mut findings: Vec<Finding> = report
        .diagnostics
        .iter()
        .map(|d| Finding {
            severity: d.severity,
            path: d.path.clone(),
            line: d.line,
            source: d
                .line
                .and_then(|n| lines.get(n.wrapping_sub(1)))
                .map(|l| (*l).to_owned()),
            message: d.message.clone(),
        })
        .collect();
    findings.sort_by_key(|f| f.severity != Severity::Error);
    Checked {
        version,
        valid: report.valid(),
        findings,
        unreadable: None,
    }
}

/// A devfile under watch.
#[derive(Debug)]
pub struct DevfileWatch {
    path: PathBuf,
    latest: Arc<Mutex<Checked>>,
    stop: StopHandle,
}

impl DevfileWatch {
    /// Checks `path` (a `devfile.yaml`, or a directory holding one) and keeps checking it on
    /// every change until dropped.
    pub fn start(path: &Path) -> Result<Self, ToolError> {
        let path = if path.is_dir() {
            path.join("devfile.yaml")
        } else {
            path.to_path_buf()
        };
        let path = match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => dir
                .canonicalize()
                .map_err(|e| ToolError::io("open", dir, &e))?
                .join(name),
            _ => return Err(ToolError::invalid("devfile_path", "must name a file")),
        };
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let watcher = Watcher::flat(&dir)?;
        let latest = Arc::new(Mutex::new(check(&path, 1)));
        let stop = StopHandle::new();
        let (file, shared, stopped) = (path.clone(), Arc::clone(&latest), stop.clone());
        std::thread::spawn(move || {
            while !stopped.stopped() {
                let (changed, _) = watcher.changes(std::time::Duration::from_millis(200));
                if !changed.iter().any(|p| p == &file) {
                    continue;
                }
                let version = shared.lock().map_or(0, |l| l.version) + 1;
                let next = check(&file, version);
                if let Ok(mut latest) = shared.lock() {
                    *latest = next;
                }
            }
        });
        Ok(Self { path, latest, stop })
    }

    /// The file watched.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The latest check.
    pub fn latest(&self) -> Option<Checked> {
        self.latest.lock().ok().map(|c| c.clone())
    }
}

impl Drop for DevfileWatch {
    fn drop(&mut self) {
        self.stop.stop();
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    use crate::fingerprint::tests::DEVFILE as VALID;

    #[test]
    fn an_edit_on_disk_is_checked_again_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("devfile.yaml");
        std::fs::write(&file, VALID).unwrap();
        std::fs::write(dir.path().join("Dockerfile"), "FROM scratch\n").unwrap();
        let watch = DevfileWatch::start(dir.path()).unwrap();
        let first = watch.latest().unwrap();
        assert_eq!((first.version, first.valid), (1, true), "{first:?}");

        // Saved the way editors save: a new file renamed over the old one.
        let temp = dir.path().join(".devfile.yaml.swp");
        std::fs::write(&temp, VALID.replace("2.2.0", "9.9.9")).unwrap();
        std::fs::rename(&temp, &file).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let second = loop {
            let latest = watch.latest().unwrap();
            if latest.version > 1 {
                break latest;
            }
            assert!(Instant::now() < deadline, "never checked again");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(!second.valid);
        let finding = &second.findings[0];
        assert_eq!(finding.line, Some(1), "{finding:?}");
        assert_eq!(finding.source.as_deref(), Some("schemaVersion: 9.9.9"));
    }
}
