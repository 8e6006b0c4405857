//! Watching a project directory: `notify` events, debounced (an editor's save is a burst of
//! events, often a write to a temporary file and a rename over the original), reduced to the
//! paths that can matter to a build.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use notify_debouncer_full::notify::event::{EventKind, MetadataKind, ModifyKind};
use notify_debouncer_full::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use crate::fingerprint::matters;
use slipway_platform_client::ToolError;

/// How long the directory must be quiet before a burst of events counts as one change.
pub const QUIET: Duration = Duration::from_millis(150);

/// A recursive watch of one project directory.
pub struct Watcher {
    root: PathBuf,
    _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
    events: Receiver<DebounceEventResult>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").field("root", &self.root).finish()
    }
}

impl Watcher {
    /// Starts watching `root` and everything below it (the whole directory, not single files,
    /// so a save by rename is seen).
    pub fn new(root: &Path) -> Result<Self, ToolError> {
        Self::with_mode(root, RecursiveMode::Recursive)
    }

    /// Starts watching the directory `dir` itself, not below it (to follow one file in it:
    /// an editor's save renames a new file over it, which a watch of the file would miss).
    pub fn flat(dir: &Path) -> Result<Self, ToolError> {
        Self::with_mode(dir, RecursiveMode::NonRecursive)
    }

    fn with_mode(root: &Path, mode: RecursiveMode) -> Result<Self, ToolError> {
        let root = root
            .canonicalize()
            .map_err(|e| ToolError::io("watch", root, &e))?;
        let (sender, events) = channel();
        let mut debouncer = new_debouncer(QUIET, None, sender)
            .map_err(|e| ToolError::Internal(format!("cannot watch {}: {e}", root.display())))?;
        debouncer
            .watch(&root, mode)
            .map_err(|e| ToolError::Internal(format!("cannot watch {}: {e}", root.display())))?;
        Ok(Self {
            root,
            _debouncer: debouncer,
            events,
        })
    }

    /// Waits up to `timeout` for a change; returns the changed paths that can matter to a
    /// build (empty after a timeout or when only ignored paths changed) and the watch's
    /// errors (such as the system's limit of watches), for the user to see.
    pub fn changes(&self, timeout: Duration) -> (Vec<PathBuf>, Vec<String>) {
        let mut paths = Vec::new();
        let mut problems = Vec::new();
        let deadline = std::time::Instant::now() + timeout;
        // Until something that matters arrived (a batch of only ignored paths keeps waiting)
        // or the time is up; then whatever else is already queued.
        while paths.is_empty() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let Ok(first) = self.events.recv_timeout(left) else {
                break;
            };
            let mut next = Ok(first);
            while let Ok(batch) = next {
                match batch {
                    Ok(events) => {
                        // Reading a file is an event too (inotify's open and close): the
                        // loop's own reads must not wake it.
                        for event in events
                            .into_iter()
                            .filter(|e| changes_content(&e.event.kind))
                        {
                            paths.extend(
                                event
                                    .event
                                    .paths
                                    .into_iter()
                                    .filter(|p| matters(&self.root, p)),
                            );
                        }
                    }
                    Err(errors) => problems.extend(errors.iter().map(ToString::to_string)),
                }
                next = self.events.try_recv();
            }
            if !problems.is_empty() {
                break;
            }
        }
        paths.sort();
        paths.dedup();
        (paths, problems)
    }
}

/// Whether an event kind can change what a build sees (not an open, a read or an access
/// time).
fn changes_content(kind: &EventKind) -> bool {
    !matches!(
        kind,
        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_save_by_rename_is_seen_and_git_is_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("main.py"), "a").unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let watcher = Watcher::new(dir.path()).unwrap();
        std::fs::write(dir.path().join(".git/index"), "x").unwrap();
        // Reading is not a change (the loop reads every file to fingerprint it).
        assert_eq!(std::fs::read(dir.path().join("main.py")).unwrap(), b"a");
        assert!(watcher.changes(Duration::from_millis(600)).0.is_empty());
        // What editors do: write a temporary file, rename it over the original.
        std::fs::write(dir.path().join(".main.py.swp"), "b").unwrap();
        std::fs::rename(dir.path().join(".main.py.swp"), dir.path().join("main.py")).unwrap();
        let (changed, _) = watcher.changes(Duration::from_secs(5));
        assert!(
            changed.iter().any(|p| p.ends_with("main.py")),
            "{changed:?}"
        );
    }
}
