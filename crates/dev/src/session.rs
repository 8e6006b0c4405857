//! The development loop on its own thread, with what it has reported, for a front end that
//! polls (the desktop's Watch switch): the loop's current state and its recent events, each
//! numbered so a poll asks only for what is new.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde::Serialize;

use crate::fingerprint::Mode;
use crate::round::{DevEvent, DevOptions, Emit, StopHandle, run};
use slipway_platform_client::ToolError;
use slipway_platform_client::{APP_FILE, AppFile, Client};

/// Events kept for polling (log lines included); older ones are dropped.
const KEPT_EVENTS: usize = 1000;

/// Where the loop stands, summed up from its events.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DevState {
    /// `starting`, `building`, `running`, `failed`, `invalid` or `stopped`.
    pub phase: String,
    /// The latest progress or failure message.
    pub message: Option<String>,
    /// The files of the latest change.
    pub last_change: Vec<String>,
    /// The services the latest round updated, and how.
    pub rebuilt: BTreeMap<String, Mode>,
    /// The app's URL once it runs.
    pub url: Option<String>,
    /// Seconds from the latest change to serving.
    pub seconds: Option<f64>,
    /// False once the loop has ended.
    pub active: bool,
}

/// One numbered event.
#[derive(Debug, Clone, Serialize)]
pub struct Numbered {
    /// Its number, from 1.
    pub seq: u64,
    /// The event.
    #[serde(flatten)]
    pub event: DevEvent,
}

/// What a poll returns.
#[derive(Debug, Clone, Serialize)]
pub struct Snapshot {
    /// The state now.
    pub state: DevState,
    /// The events after the asked number, oldest first.
    pub events: Vec<Numbered>,
    /// The number to ask after next time.
    pub last: u64,
}

#[derive(Debug, Default)]
struct Record {
    state: DevState,
    events: VecDeque<Numbered>,
    last: u64,
}

impl Record {
    fn add(&mut self, event: DevEvent) {
        let state = &mut self.state;
        match &event {
            DevEvent::Progress { message } => {
                if state.phase != "building" {
                    state.phase = "building".into();
                }
                state.message = Some(message.clone());
            }
            DevEvent::Invalid { errors, .. } => {
                state.phase = "invalid".into();
                state.message = Some(errors.join("; "));
            }
            DevEvent::Changed { files } => state.last_change = files.clone(),
            DevEvent::Rebuilding { services } => {
                state.phase = "building".into();
                state.rebuilt = services.clone();
            }
            DevEvent::Running { url, seconds, .. } => {
                state.phase = "running".into();
                state.url = url.clone();
                state.seconds = Some(*seconds);
                state.message = None;
            }
            DevEvent::Failed { message } => {
                state.phase = "failed".into();
                state.message = Some(message.clone());
            }
            DevEvent::Stopped { .. } => {
                state.phase = "stopped".into();
                state.active = false;
            }
            DevEvent::Log { .. } | DevEvent::Watching => {}
        }
        self.last += 1;
        self.events.push_back(Numbered {
            seq: self.last,
            event,
        });
        while self.events.len() > KEPT_EVENTS {
            self.events.pop_front();
        }
    }
}

/// A loop running on its own thread.
#[derive(Debug)]
pub struct Session {
    stop: StopHandle,
    record: Arc<Mutex<Record>>,
    thread: Option<JoinHandle<()>>,
}

impl Session {
    /// Starts the loop for `options` on `client`'s platform.
    pub fn start(client: Client, options: DevOptions) -> Self {
        let stop = StopHandle::new();
        let record = Arc::new(Mutex::new(Record {
            state: DevState {
                phase: "starting".into(),
                active: true,
                ..DevState::default()
            },
            ..Record::default()
        }));
        let sink = Arc::clone(&record);
        let emit: Emit = Arc::new(move |event| {
            if let Ok(mut r) = sink.lock() {
                r.add(event);
            }
        });
        let thread_stop = stop.clone();
        let thread = std::thread::spawn(move || {
            if let Err(e) = run(&client, &options, &thread_stop, &emit) {
                emit(DevEvent::Failed {
                    message: e.to_string(),
                });
                emit(DevEvent::Stopped { disabled: false });
            }
        });
        Self {
            stop,
            record,
            thread: Some(thread),
        }
    }

    /// The state and the events after `after`.
    pub fn poll(&self, after: u64) -> Snapshot {
        let Ok(r) = self.record.lock() else {
            return Snapshot {
                state: DevState::default(),
                events: Vec::new(),
                last: after,
            };
        };
        Snapshot {
            state: r.state.clone(),
            events: r.events.iter().filter(|e| e.seq > after).cloned().collect(),
            last: r.last,
        }
    }

    /// Whether the loop still runs.
    pub fn active(&self) -> bool {
        self.record.lock().map(|r| r.state.active).unwrap_or(false)
    }

    /// Stops the loop and waits for it (at most the step under way).
    pub fn stop(mut self) {
        self.stop.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Ties the project at `root` to app `app_id` before a loop runs on it: writes its `.app`
/// when there is none, and refuses a folder whose `.app` names another app.
pub fn attach(
    root: &Path,
    app_id: &str,
    app_name: &str,
    platform_url: &str,
) -> Result<(), ToolError> {
    if !root.join("devfile.yaml").is_file() {
        return Err(ToolError::invalid(
            "project_path",
            format!("{} has no devfile.yaml", root.display()),
        ));
    }
    let path = root.join(APP_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let existing: AppFile = serde_json::from_str(&text).map_err(|e| {
                ToolError::invalid(
                    "project_path",
                    format!("{} is not a Slipway .app file: {e}", path.display()),
                )
            })?;
            if existing.app_id != app_id {
                return Err(ToolError::invalid(
                    "project_path",
                    format!(
                        "{} belongs to app {} ({}), not to this one",
                        root.display(),
                        existing.name,
                        existing.app_id
                    ),
                ));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => AppFile {
            app_id: app_id.to_owned(),
            name: app_name.to_owned(),
            platform_url: platform_url.to_owned(),
        }
        .write(root)
        .map(|_| ()),
        Err(e) => Err(ToolError::io("read", &path, &e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_follows_the_events_and_polls_see_only_what_is_new() {
        let mut record = Record::default();
        record.add(DevEvent::Changed {
            files: vec!["main.py".into()],
        });
        record.add(DevEvent::Rebuilding {
            services: BTreeMap::from([("api".into(), Mode::Sync)]),
        });
        assert_eq!(record.state.phase, "building");
        record.add(DevEvent::Running {
            deployment_id: "d".into(),
            url: Some("http://x.localhost".into()),
            seconds: 1.5,
        });
        assert_eq!(record.state.phase, "running");
        assert_eq!(record.state.last_change, vec!["main.py".to_owned()]);
        assert_eq!(record.last, 3);
        for _ in 0..KEPT_EVENTS + 5 {
            record.add(DevEvent::Watching);
        }
        assert_eq!(record.events.len(), KEPT_EVENTS);
        assert_eq!(record.events.front().unwrap().seq, 9);
    }

    #[test]
    fn attach_writes_the_app_file_and_refuses_another_apps_folder() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            attach(dir.path(), "a1", "one", "http://p").is_err(),
            "no devfile"
        );
        std::fs::write(dir.path().join("devfile.yaml"), "x").unwrap();
        attach(dir.path(), "a1", "one", "http://p").unwrap();
        attach(dir.path(), "a1", "one", "http://p").unwrap();
        let err = attach(dir.path(), "a2", "two", "http://p").unwrap_err();
        assert!(err.to_string().contains("belongs to app one"), "{err}");
    }
}
