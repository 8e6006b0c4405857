//! Following an app's live logs (`GET /v1/apps/{id}/logs/stream`, Server-Sent Events) from
//! blocking code, reconnecting with the last event's cursor when the connection drops, so
//! the caller sees every line once.
//!
//! The event format is parsed here (a few lines: `id:`, `event:`, `data:`, a blank line ends
//! an event) because the SSE crates are async and this client is blocking by design.

use std::io::BufRead as _;
use std::ops::ControlFlow;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::apps::encode;
use crate::client::Client;
use crate::error::ToolError;

/// One log line of the stream.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
pub struct LogLine {
    /// The service.
    pub service: String,
    /// `build` or `runtime`.
    pub kind: String,
    /// The build or the deployment.
    pub source_id: String,
    /// The line, without its newline.
    pub line: String,
}

/// What to follow.
#[derive(Debug, Clone, Default)]
pub struct Follow {
    /// Only this service.
    pub service: Option<String>,
    /// Lines of each log to start with (the server's default when `None`).
    pub tail: Option<u32>,
}

/// Calls `on_line` for every line until it returns `Break` or the platform refuses the stream
/// (a 4xx: wrong app, no access). A dropped connection is reopened after a second from the
/// last cursor, as often as it takes.
pub fn follow_logs(
    client: &Client,
    app_id: &str,
    follow: &Follow,
    mut on_line: impl FnMut(&LogLine) -> ControlFlow<()>,
) -> Result<(), ToolError> {
    let mut query = Vec::new();
    if let Some(service) = &follow.service {
        query.push(format!("service_name={}", encode(service)));
    }
    if let Some(tail) = follow.tail {
        query.push(format!("tail={tail}"));
    }
    let path = format!(
        "/v1/apps/{}/logs/stream{}{}",
        encode(app_id),
        if query.is_empty() { "" } else { "?" },
        query.join("&")
    );
    let mut cursor: Option<String> = None;
    loop {
        let response = match client.open_stream(&path, cursor.as_deref()) {
            Ok(r) => r,
            Err(ToolError::Unavailable(_)) => {
                std::thread::sleep(Duration::from_secs(1));
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut event = Event::default();
        for line in std::io::BufReader::new(response).lines() {
            let Ok(line) = line else { break };
            if !line.is_empty() {
                event.field(&line);
                continue;
            }
            let done = std::mem::take(&mut event);
            if done.name != "log" {
                continue;
            }
            if let Ok(parsed) = serde_json::from_str::<LogLine>(&done.data)
                && on_line(&parsed).is_break()
            {
                return Ok(());
            }
            cursor = Some(done.id);
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The fields of one event being read.
#[derive(Debug, Default)]
struct Event {
    id: String,
    name: String,
    data: String,
}

impl Event {
    fn field(&mut self, line: &str) {
        let (name, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match name {
            "id" => self.id = value.to_owned(),
            "event" => self.name = value.to_owned(),
            "data" => {
                if !self.data.is_empty() {
                    self.data.push('\n');
                }
                self.data.push_str(value);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_fields_follow_the_sse_rules() {
        let mut event = Event::default();
        for line in [
            "id: b:1:api=3",
            "event:log",
            "data: {\"a\":",
            "data: 1}",
            ": comment",
        ] {
            event.field(line);
        }
        assert_eq!(event.id, "b:1:api=3");
        assert_eq!(event.name, "log");
        assert_eq!(event.data, "{\"a\":\n1}");
    }
}
