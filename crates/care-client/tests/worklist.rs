//! The care worklist client against the real care service (embedded, with the demo data):
//! pages followed by their next links, claim and release with the 409 naming the holder, and
//! the event stream, resumed after a stop with Last-Event-ID.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use serde_json::{Value, json};
use slipway_care::embedded::{DEMO_ACTIVE_REQUEST, Embedded, tokens};
use slipway_care_client::worklist::{Pacing, Query, Signal, Status, TaskEvent};
use slipway_care_client::{Client, Endpoint};

fn admin(url: &str, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
    let mut req = reqwest::blocking::Client::new()
        .request(method, format!("{url}/admin/{path}"))
        .bearer_auth(tokens::ADMIN);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let res = req.send().unwrap();
    assert!(res.status().is_success(), "{path}: {}", res.status());
    serde_json::from_str(&res.text().unwrap()).unwrap_or(Value::Null)
}

/// A new active request on the demo patient's care plan.
fn new_request(url: &str, uuid: &str, expires: &str) {
    let demo = admin(
        url,
        reqwest::Method::GET,
        &format!("data-requests/{DEMO_ACTIVE_REQUEST}"),
        None,
    );
    admin(
        url,
        reqwest::Method::PUT,
        &format!("data-requests/{uuid}"),
        Some(
            json!({"carePlanExternalId": demo["carePlanExternalId"], "groupId": demo["groupId"],
            "status": "Active", "expirationDate": expires}),
        ),
    );
}

/// Follows the events on a thread until stopped: each task event arrives on the channel.
fn watch(
    client: Client,
    from: Option<String>,
) -> (
    Arc<AtomicBool>,
    mpsc::Receiver<Signal>,
    std::thread::JoinHandle<()>,
) {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let flag = Arc::clone(&stop);
    let thread = std::thread::spawn(move || {
        client
            .watch(from, Pacing::default(), &flag, |s| {
                let _ = tx.send(s);
            })
            .unwrap();
    });
    (stop, rx, thread)
}

fn next_task(rx: &mpsc::Receiver<Signal>) -> TaskEvent {
    loop {
        match rx.recv_timeout(Duration::from_secs(20)).expect("an event") {
            Signal::Task(t) => return t,
            Signal::Connected { .. } => continue,
            lost @ Signal::Lost { .. } => panic!("the stream dropped: {lost:?}"),
        }
    }
}

const MADE: [&str; 3] = [
    "7a1c0000-0000-4000-8000-000000000001",
    "7a1c0000-0000-4000-8000-000000000002",
    "7a1c0000-0000-4000-8000-000000000003",
];

/// The embedded care service on a fresh directory, with a staff and a restricted client.
struct Care {
    _dir: tempfile::TempDir,
    service: Embedded,
    staff: Client,
    other: Client,
}

impl Care {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let service = Embedded::start(dir.path()).unwrap();
        let client =
            |token| Client::new(Endpoint::new(service.url(), service.namespace(), token)).unwrap();
        let (staff, other) = (client(tokens::STAFF), client(tokens::RESTRICTED));
        Self {
            _dir: dir,
            service,
            staff,
            other,
        }
    }

    fn url(&self) -> &str {
        self.service.url()
    }

    /// Three new requests, expiring one month apart.
    fn make_three(&self) {
        for (i, uuid) in MADE.iter().enumerate() {
            new_request(self.url(), uuid, &format!("2098-0{}-01", i + 1));
        }
    }
}

#[test]
fn pages_by_next_links_then_claim_and_release() {
    let care = Care::start();
    let staff = &care.staff;
    let me = staff.me().unwrap();
    assert_eq!(me.name, "Demo care staff");
    care.make_three();

    // Open, two at a time: two pages by the next link, every request once.
    let open = Query {
        statuses: vec![Status::Requested, Status::InProgress],
        count: Some(2),
        total: true,
        ..Query::default()
    };
    let first = staff.tasks(&open).unwrap();
    assert_eq!(first.total, Some(4));
    assert_eq!(first.tasks.len(), 2);
    assert_eq!(first.tasks[0].uuid, MADE[0], "sorted by expiry");
    assert_eq!(first.tasks[0].program.as_deref(), Some("Demo Care Program"));
    let second = staff
        .tasks(&Query {
            next: first.next.clone(),
            ..Query::default()
        })
        .unwrap();
    assert_eq!(second.next, None);
    let mut all: Vec<String> = first
        .tasks
        .iter()
        .chain(&second.tasks)
        .map(|t| t.uuid.clone())
        .collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 4);

    // Claim; another user's claim is refused naming the holder; Mine lists it; release.
    let claimed = staff.claim(MADE[0]).unwrap();
    assert_eq!(
        (claimed.status.as_str(), claimed.owner_id.as_deref()),
        ("in-progress", Some(me.id.as_str()))
    );
    let refused = care.other.claim(MADE[0]).unwrap_err();
    assert_eq!(refused.status, Some(409));
    assert!(
        refused.message.contains("Demo care staff"),
        "{}",
        refused.message
    );
    let mine = staff
        .tasks(&Query {
            owner: Some(me.id.clone()),
            ..Query::default()
        })
        .unwrap();
    assert_eq!(mine.tasks.len(), 1);
    assert_eq!(mine.total, None, "counted only when asked");
    assert_eq!(staff.release(MADE[0]).unwrap().status, "requested");
    assert_eq!(staff.task(MADE[0]).unwrap().owner, None);
}

#[test]
fn events_arrive_in_order_and_resume_after_the_last_one_seen() {
    let care = Care::start();
    let url = care.url().to_owned();
    let (stop, events, thread) = watch(care.staff.clone(), None);
    // The stream is open before anything changes.
    assert!(matches!(
        events.recv_timeout(Duration::from_secs(20)).unwrap(),
        Signal::Connected { resumed: false }
    ));
    care.make_three();
    care.staff.claim(MADE[0]).unwrap();
    care.staff.release(MADE[0]).unwrap();

    // Three new requests, the claim (with its holder), the release.
    let seen: Vec<TaskEvent> = (0..5).map(|_| next_task(&events)).collect();
    let said: Vec<(&str, &str)> = seen
        .iter()
        .map(|e| (e.uuid.as_str(), e.status.as_str()))
        .collect();
    assert_eq!(
        said,
        [
            (MADE[0], "requested"),
            (MADE[1], "requested"),
            (MADE[2], "requested"),
            (MADE[0], "in-progress"),
            (MADE[0], "requested"),
        ]
    );
    assert_eq!(seen[3].owner_name.as_deref(), Some("Demo care staff"));
    stop.store(true, Ordering::Relaxed);
    // Stopped within a keep-alive at most (the next change ends the wait at once).
    admin(
        &url,
        reqwest::Method::DELETE,
        &format!("data-requests/{}", MADE[2]),
        None,
    );
    thread.join().unwrap();

    // Resumed after the last event seen: what happened in between comes first.
    let last = seen[4].id.clone();
    assert!(last.is_some());
    let (stop, events, thread) = watch(care.staff.clone(), last);
    assert!(matches!(
        events.recv_timeout(Duration::from_secs(20)).unwrap(),
        Signal::Connected { resumed: true }
    ));
    let deleted = next_task(&events);
    assert_eq!(
        (deleted.uuid.as_str(), deleted.status.as_str()),
        (MADE[2], "entered-in-error")
    );
    stop.store(true, Ordering::Relaxed);
    new_request(&url, "7a1c0000-0000-4000-8000-000000000004", "2098-05-01");
    thread.join().unwrap();
}
