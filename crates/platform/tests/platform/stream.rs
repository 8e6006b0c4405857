//! The live log stream (`GET /v1/apps/{app_id}/logs/stream`): Server-Sent Events that follow
//! the build and runtime logs and resume from a cursor without losing or repeating a line.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use crate::deploy::wait_status;
use crate::support::{TestApp, backends, python_devfile, python_server, spawn_app, tar_zst};

/// Prints `tick N` every 20 ms on stdout, and answers HTTP.
fn ticker() -> String {
    python_server(
        r#"import threading, time
def tick():
    n = 0
    while True:
        n += 1
        print(f"tick {n}", flush=True)
        time.sleep(0.02)
threading.Thread(target=tick, daemon=True).start()
"#,
        r#""ok""#,
    )
}

/// One Server-Sent Event.
#[derive(Debug)]
struct Event {
    id: String,
    data: Value,
}

/// An open stream and what it has not parsed yet.
struct Stream {
    response: reqwest::Response,
    buffer: String,
}

impl Stream {
    /// The next `log` event (comments and keep-alives skipped).
    async fn next(&mut self) -> Event {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let (mut id, mut data, mut name) = (String::new(), String::new(), String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = v.trim_start().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    } else if let Some(v) = line.strip_prefix("event:") {
                        name = v.trim_start().to_owned();
                    }
                }
                if name == "log" {
                    return Event {
                        id,
                        data: serde_json::from_str(&data).expect("JSON data"),
                    };
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.response.chunk())
                .await
                .expect("an event within 20 s")
                .expect("the stream reads")
                .expect("the stream stays open");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

async fn open(app: &TestApp, id: &str, query: &str, last_event_id: Option<&str>) -> Stream {
    let mut request = app
        .client
        .get(format!("{}/v1/apps/{id}/logs/stream{query}", app.base))
        .bearer_auth(&app.owner);
    if let Some(last) = last_event_id {
        request = request.header("last-event-id", last);
    }
    let response = request.send().await.expect("request");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    Stream {
        response,
        buffer: String::new(),
    }
}

fn tick_of(event: &Event) -> Option<u64> {
    if event.data["kind"] != "runtime" {
        return None;
    }
    event.data["line"]
        .as_str()?
        .strip_prefix("tick ")?
        .parse()
        .ok()
}

/// Reads until `count` runtime ticks arrived; returns them, the build lines seen and the last
/// event's id.
async fn ticks(stream: &mut Stream, count: usize) -> (Vec<u64>, Vec<String>, String) {
    let (mut ticks, mut builds, mut last) = (Vec::new(), Vec::new(), String::new());
    while ticks.len() < count {
        let event = stream.next().await;
        last = event.id.clone();
        match tick_of(&event) {
            Some(n) => ticks.push(n),
            None => builds.push(event.data["line"].as_str().unwrap_or("").to_owned()),
        }
    }
    (ticks, builds, last)
}

fn consecutive(ticks: &[u64]) -> bool {
    ticks.windows(2).all(|w| w[1] == w[0] + 1)
}

#[tokio::test]
async fn a_dropped_stream_resumes_from_its_cursor_without_losing_or_repeating_a_line() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let id = app.register(&app.owner, "ticker").await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let files = vec![
            (
                "devfile.yaml".to_owned(),
                python_devfile("ticker", "echo building the ticker").into_bytes(),
            ),
            ("main.py".to_owned(), ticker().into_bytes()),
            (
                "Dockerfile".to_owned(),
                b"FROM scratch\nCOPY . /app\n".to_vec(),
            ),
        ];
        let (status, body) = app
            .upload(&app.owner, &id, "", "application/zstd", tar_zst(&files))
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        wait_status(&app, &id, &["RUNNING"]).await;

        // A new stream starts with the tail of each log: the build's and the service's.
        let mut first = open(&app, &id, "?tail=1000", None).await;
        let (seen, builds, cursor) = ticks(&mut first, 30).await;
        assert!(consecutive(&seen), "{backend:?}: {seen:?}");
        assert!(
            builds.iter().any(|l| l.contains("building the ticker")),
            "the build log's tail is sent: {builds:?}"
        );
        drop(first);
        // Lines keep coming while nobody listens.
        tokio::time::sleep(Duration::from_millis(400)).await;

        // Resumed through Last-Event-ID (what a browser's EventSource sends), and again
        // through ?cursor=: the next tick each time, and no build line twice.
        let mut second = open(&app, &id, "", Some(&cursor)).await;
        let (resumed, builds, cursor) = ticks(&mut second, 30).await;
        assert_eq!(
            resumed[0],
            seen.last().unwrap() + 1,
            "{backend:?}: {resumed:?}"
        );
        assert!(consecutive(&resumed), "{resumed:?}");
        assert!(builds.is_empty(), "no line repeated: {builds:?}");
        drop(second);
        let encoded: String = url_encode(&cursor);
        let mut third = open(&app, &id, &format!("?cursor={encoded}"), None).await;
        let (again, _, _) = ticks(&mut third, 5).await;
        assert_eq!(again[0], resumed.last().unwrap() + 1);

        // Refusals name the field.
        for (query, field) in [
            ("?tail=lots", "tail"),
            ("?cursor=nonsense", "cursor"),
            ("?follow=yes", "follow"),
        ] {
            let r = app
                .client
                .get(format!("{}/v1/apps/{id}/logs/stream{query}", app.base))
                .bearer_auth(&app.owner)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{query}");
            let body: Value = r.json().await.unwrap();
            assert_eq!(body["error"]["field"], field, "{query}: {body}");
        }
        // A cursor naming a deployment that is not this app's finds nothing.
        let foreign = app
            .client
            .get(format!(
                "{}/v1/apps/{id}/logs/stream?cursor=r:6f1c1f9e-58a5-4c1c-9a57-1f2d8f1b7a10:api=0",
                app.base
            ))
            .bearer_auth(&app.owner)
            .send()
            .await
            .unwrap();
        assert_eq!(foreign.status(), StatusCode::NOT_FOUND);
        let anonymous = app
            .client
            .get(format!("{}/v1/apps/{id}/logs/stream", app.base))
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);

        // An open stream does not hold up the server's shutdown.
        tokio::time::timeout(Duration::from_secs(30), app.finish())
            .await
            .expect("the server stops with a stream open");
        drop(third);
    }
}

fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
