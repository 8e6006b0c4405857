//! The care staff's worklist: who am I (`{ns}/me`), the missing-information requests as FHIR
//! Tasks (`fhir/Task`, paged by the service's `next` link), claiming and releasing one, and
//! the live event stream (`{ns}/events`, `text/event-stream`) that keeps a worklist current.
//!
//! Tasks are flattened here into [`Task`] (patient, program, holder, expiry), so the window
//! shows fields and holds no FHIR. The event stream is read with `eventsource-stream` (a
//! maintained SSE parser) over the blocking response's bytes; a dropped stream is opened again
//! with `Last-Event-ID` after a growing pause, so no event is lost across a reconnect.
//! Nothing here logs: tasks carry patient names.

use std::io::Read as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use eventsource_stream::Eventsource as _;
use reqwest::Method;
use reqwest::Url;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::client::{Client, Failure, Kind, refusal, request_uuid};

/// Who the staff token belongs to (`GET {ns}/me`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Me {
    /// The user's external id (what a Task's owner names).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Whether the user is a care admin.
    #[serde(default)]
    pub admin: bool,
}

/// A Task's status: where a missing-information request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Open: nobody holds it.
    Requested,
    /// Claimed by someone.
    InProgress,
    /// Answered.
    Completed,
    /// Cancelled, or ended by the program.
    Cancelled,
    /// Expired unanswered.
    Failed,
    /// Deleted (only in events).
    EnteredInError,
}

impl Status {
    /// The FHIR code.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Requested => "requested",
            Status::InProgress => "in-progress",
            Status::Completed => "completed",
            Status::Cancelled => "cancelled",
            Status::Failed => "failed",
            Status::EnteredInError => "entered-in-error",
        }
    }

    /// A status a search can ask for, from its FHIR code.
    pub fn parse(code: &str) -> Result<Self, Failure> {
        let status = match code.trim() {
            "requested" => Status::Requested,
            "in-progress" => Status::InProgress,
            "completed" => Status::Completed,
            "cancelled" => Status::Cancelled,
            "failed" => Status::Failed,
            other => {
                return Err(Failure::invalid(
                    "status",
                    format!(
                        "status: {other:?} is none of requested, in-progress, completed, cancelled, failed"
                    ),
                ));
            }
        };
        Ok(status)
    }
}

/// One missing-information request as the worklist shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The request's UUID.
    pub uuid: String,
    /// The Task status code (`requested`, `in-progress`, …).
    pub status: String,
    /// The patient's external id.
    pub patient_id: Option<String>,
    /// The patient's name, when the caller may read it.
    pub patient: Option<String>,
    /// The program (care plan) name.
    pub program: Option<String>,
    /// Who holds it: their user id, when claimed.
    pub owner_id: Option<String>,
    /// Who holds it: their name, when claimed.
    pub owner: Option<String>,
    /// The last day it can be answered (`yyyy-mm-dd`).
    pub expires: Option<String>,
    /// When it was made (RFC 3339).
    pub authored: Option<String>,
    /// The service's description of it.
    pub description: Option<String>,
    /// Whether its answer has been corrected since it was submitted.
    pub amended: bool,
}

/// How lately a request must have been made for an event about it to be news: events reach
/// the window within a second of a request's making, so this only allows for the service's
/// clock and the desktop's differing.
pub const RECENT: Duration = Duration::from_secs(10 * 60);

impl Task {
    /// Whether it was made lately ([`RECENT`] before `now`, or after), so that an open request
    /// the window has not seen is a new one, not an old one released (or listed on a page not
    /// loaded). One whose making time is unknown counts as recent.
    pub fn is_recent(&self, now: SystemTime) -> bool {
        self.authored_at().is_none_or(|at| at + RECENT >= now)
    }

    /// When it was made, from [`Task::authored`]; `None` when absent or not RFC 3339
    /// (`YYYY-MM-DDTHH:MM:SS`, optional fraction, `Z` or an offset).
    pub fn authored_at(&self) -> Option<SystemTime> {
        let secs = rfc3339_seconds(self.authored.as_deref()?)?;
        let secs = u64::try_from(secs).ok()?;
        UNIX_EPOCH.checked_add(Duration::from_secs(secs))
    }

    /// Reads a FHIR Task; `None` when it has no id.
    pub fn from_fhir(task: &Value) -> Option<Self> {
        let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
        Some(Self {
            uuid: text(&task["id"])?,
            status: text(&task["status"]).unwrap_or_default(),
            patient_id: text(&task["for"]["identifier"]["value"]),
            patient: text(&task["for"]["display"]),
            program: task["basedOn"]
                .as_array()
                .and_then(|plans| plans.iter().find_map(|p| text(&p["display"]))),
            owner_id: text(&task["owner"]["identifier"]["value"]),
            owner: text(&task["owner"]["display"]),
            expires: text(&task["restriction"]["period"]["end"]),
            authored: text(&task["authoredOn"]),
            description: text(&task["description"]),
            amended: task["businessStatus"]["text"] == "amended",
        })
    }
}

/// One page of a Task search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    /// The tasks of this page, in the service's order (expiry, then age).
    pub tasks: Vec<Task>,
    /// How many tasks match in all, when [`Query::total`] asked for it.
    pub total: Option<u64>,
    /// The `next` link (a path on the service's server), when there is a further page.
    pub next: Option<String>,
}

impl Page {
    /// Reads a FHIR searchset Bundle.
    pub fn from_bundle(bundle: &Value) -> Self {
        let tasks = bundle["entry"]
            .as_array()
            .map(|entries| {
                entries
                    .iter()
                    .filter_map(|e| Task::from_fhir(&e["resource"]))
                    .collect()
            })
            .unwrap_or_default();
        let next = bundle["link"].as_array().and_then(|links| {
            links.iter().find_map(|l| {
                (l["relation"] == "next")
                    .then(|| l["url"].as_str().map(str::to_owned))
                    .flatten()
            })
        });
        Self {
            tasks,
            total: bundle["total"].as_u64(),
            next,
        }
    }
}

/// What to list: a first page by filters, or the page a `next` link names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// Only these statuses (none: every status).
    pub statuses: Vec<Status>,
    /// Only tasks this user (external id) holds.
    pub owner: Option<String>,
    /// Page size, 1–100 (the service's default when absent).
    pub count: Option<u32>,
    /// Whether the service counts every match (`_total=accurate`, a scan of the whole
    /// filter); otherwise the page has no `total`.
    pub total: bool,
    /// A `next` link of an earlier page: when given, the filters are in it already.
    pub next: Option<String>,
}

/// One change of a request, as the event stream tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskEvent {
    /// The event's id (what a reconnect resumes after).
    #[serde(default)]
    pub id: Option<String>,
    /// The request's UUID.
    pub uuid: String,
    /// Its Task status now (`entered-in-error`: deleted).
    pub status: String,
    /// Who holds it now.
    #[serde(default)]
    pub owner: Option<String>,
    /// Their name.
    #[serde(default)]
    pub owner_name: Option<String>,
}

/// What a subscription reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Signal {
    /// The stream is open. `resumed`: after the last event seen, so nothing was missed;
    /// otherwise it starts from now and a list shown earlier may be stale.
    Connected {
        /// Whether the stream continues after the last event seen.
        resumed: bool,
    },
    /// A request changed.
    Task(TaskEvent),
    /// The stream dropped or could not be opened; another attempt follows.
    Lost {
        /// Why.
        message: String,
        /// In how many milliseconds the next attempt is made.
        retry_in_ms: u64,
    },
}

/// How a subscription waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// The pause before the first reconnect; each failed attempt doubles it.
    pub first_retry: Duration,
    /// The longest pause.
    pub max_retry: Duration,
    /// A stream silent for this long is taken as dropped (the service sends a keep-alive
    /// every 15 s).
    pub idle: Duration,
}

impl Default for Pacing {
    fn default() -> Self {
        Self {
            first_retry: Duration::from_secs(1),
            max_retry: Duration::from_secs(30),
            idle: Duration::from_secs(45),
        }
    }
}

impl Client {
    /// Where this client's calls go, and whose token they present (a subscription is kept
    /// while that stays the same).
    pub fn endpoint(&self) -> &crate::client::Endpoint {
        &self.endpoint
    }

    fn fhir(&self, path: &str) -> String {
        format!("{}/fhir/{path}", self.endpoint.base_url)
    }

    /// `GET {ns}/me`: whose the staff token is.
    pub fn me(&self) -> Result<Me, Failure> {
        let v = self.send(Method::GET, &self.service("me"), None, str::to_owned)?;
        serde_json::from_value(v)
            .map_err(|e| unexpected(format!("the care service's /me answer: {e}")))
    }

    /// `GET fhir/Task?…`: one page of requests.
    pub fn tasks(&self, query: &Query) -> Result<Page, Failure> {
        let url = match &query.next {
            Some(next) => self.next_url(next)?,
            None => {
                let mut url = Url::parse(&self.fhir("Task"))
                    .map_err(|e| Failure::unavailable(format!("the care service URL: {e}")))?;
                {
                    let mut pairs = url.query_pairs_mut();
                    if !query.statuses.is_empty() {
                        let codes: Vec<&str> = query.statuses.iter().map(|s| s.as_str()).collect();
                        pairs.append_pair("status", &codes.join(","));
                    }
                    if let Some(owner) = &query.owner {
                        pairs.append_pair("owner", owner);
                    }
                    if let Some(count) = query.count {
                        if !(1..=100).contains(&count) {
                            return Err(Failure::invalid("count", "count: 1 to 100"));
                        }
                        pairs.append_pair("_count", &count.to_string());
                    }
                    if query.total {
                        pairs.append_pair("_total", "accurate");
                    }
                }
                url.to_string()
            }
        };
        let bundle = self.send(Method::GET, &url, None, str::to_owned)?;
        if bundle["resourceType"] != "Bundle" {
            return Err(unexpected(
                "the care service's Task search did not answer a Bundle",
            ));
        }
        Ok(Page::from_bundle(&bundle))
    }

    /// The URL a `next` link names, on the care service's own server: the service writes it
    /// absolute (with the `Host` it was asked on) or as a path; only its path and query are
    /// taken, so the token never goes to another server whatever the link says.
    fn next_url(&self, next: &str) -> Result<String, Failure> {
        let base = Url::parse(&self.endpoint.base_url)
            .map_err(|e| Failure::unavailable(format!("the care service URL: {e}")))?;
        let link = base
            .join(next)
            .map_err(|e| Failure::invalid("next", format!("next: not a link: {e}")))?;
        let mut url = base;
        url.set_path(link.path());
        url.set_query(link.query());
        url.set_fragment(None);
        Ok(url.to_string())
    }

    /// `GET fhir/Task/{uuid}`: one request.
    pub fn task(&self, uuid: &str) -> Result<Task, Failure> {
        let uuid = request_uuid(uuid)?;
        let v = self.send(
            Method::GET,
            &self.fhir(&format!("Task/{uuid}")),
            None,
            str::to_owned,
        )?;
        Task::from_fhir(&v).ok_or_else(|| unexpected("the care service answered no Task"))
    }

    /// `POST {ns}/missingInformationRequest/{uuid}/claim`: the caller holds it now. A 409
    /// says who holds it already, or that it has ended.
    pub fn claim(&self, uuid: &str) -> Result<Task, Failure> {
        self.hold(uuid, "claim")
    }

    /// `POST {ns}/missingInformationRequest/{uuid}/release`: open again for anyone. Only its
    /// holder may (a 409 names the holder); releasing an unclaimed request changes nothing.
    pub fn release(&self, uuid: &str) -> Result<Task, Failure> {
        self.hold(uuid, "release")
    }

    fn hold(&self, uuid: &str, action: &str) -> Result<Task, Failure> {
        let uuid = request_uuid(uuid)?;
        let v = self
            .send(
                Method::POST,
                &self.service(&format!("missingInformationRequest/{uuid}/{action}")),
                None,
                str::to_owned,
            )
            .map_err(conflict_said_plainly)?;
        Task::from_fhir(&v).ok_or_else(|| unexpected("the care service answered no Task"))
    }

    /// Follows `GET {ns}/events` until `stop` is set, handing each signal to `on`: a drop
    /// (or a stream silent for longer than `pacing.idle`) is followed by a pause that doubles
    /// up to `pacing.max_retry` and a new request with `Last-Event-ID`, so events are neither
    /// lost nor repeated. `last_event_id` resumes an earlier subscription; an id the service
    /// refuses (400) is dropped and the stream opened afresh (not resumed: a list shown may be
    /// stale). Returns `Ok` once stopped (within one keep-alive), and the refusal when
    /// retrying cannot help: the token is unknown or lacks access (401, 403), or the service
    /// has no event stream (404).
    pub fn watch(
        &self,
        mut last_event_id: Option<String>,
        pacing: Pacing,
        stop: &AtomicBool,
        mut on: impl FnMut(Signal),
    ) -> Result<(), Failure> {
        let http = slipway_platform_client::trust::client_builder(&self.endpoint.base_url)
            .map_err(|e| Failure::unavailable(e.to_string()))?
            .connect_timeout(Duration::from_secs(10))
            // Per read in the blocking client: a silent stream ends after `idle`.
            .timeout(pacing.idle)
            .build()
            .map_err(|e| Failure::unavailable(format!("HTTP client: {e}")))?;
        let url = self.service("events");
        let mut pause = pacing.first_retry;
        while !stop.load(Ordering::Relaxed) {
            let mut req = http
                .get(&url)
                .bearer_auth(&self.endpoint.token)
                .header(reqwest::header::ACCEPT, "text/event-stream");
            if let Some(id) = &last_event_id {
                req = req.header("Last-Event-ID", id.as_str());
            }
            let why = match req.send() {
                Err(e) => format!(
                    "the care service at {} did not answer: {}",
                    self.endpoint.base_url,
                    slipway_platform_client::trust::describe_send_error(
                        &self.endpoint.base_url,
                        &e
                    )
                ),
                Ok(response) if !response.status().is_success() => {
                    let status = response.status().as_u16();
                    let body = response
                        .text()
                        .ok()
                        .and_then(|t| serde_json::from_str(&t).ok());
                    let failure = refusal(status, body.as_ref(), str::to_owned);
                    if status == 400 && last_event_id.is_some() {
                        last_event_id = None;
                    } else if matches!(status, 400 | 401 | 403 | 404) {
                        return Err(failure);
                    }
                    failure.message
                }
                Ok(response) => {
                    on(Signal::Connected {
                        resumed: last_event_id.is_some(),
                    });
                    pause = pacing.first_retry;
                    match follow(response, stop, &mut last_event_id, &mut on) {
                        Ok(()) => "the event stream ended".to_owned(),
                        Err(e) => e,
                    }
                }
            };
            if stop.load(Ordering::Relaxed) {
                break;
            }
            on(Signal::Lost {
                message: why,
                retry_in_ms: u64::try_from(pause.as_millis()).unwrap_or(u64::MAX),
            });
            sleep_unless_stopped(pause, stop);
            pause = (pause * 2).min(pacing.max_retry);
        }
        Ok(())
    }
}

/// Reads one open stream to its end (or until `stop`): every `task` event goes to `on`, and
/// every id is remembered for the reconnect. `Err` says why the stream broke off.
fn follow(
    response: reqwest::blocking::Response,
    stop: &AtomicBool,
    last_event_id: &mut Option<String>,
    on: &mut impl FnMut(Signal),
) -> Result<(), String> {
    let chunks = Chunks {
        body: response,
        stop,
        failed: false,
    };
    let events = futures_util::stream::iter(chunks).eventsource();
    for event in futures_executor::block_on_stream(events) {
        let event = event.map_err(|e| format!("the event stream broke off: {e}"))?;
        if !event.id.is_empty() {
            *last_event_id = Some(event.id.clone());
        }
        if event.event != "task" {
            continue;
        }
        // An event this client cannot read is passed over: the next list load shows it.
        if let Ok(mut task) = serde_json::from_str::<TaskEvent>(&event.data) {
            task.id = (!event.id.is_empty()).then_some(event.id);
            on(Signal::Task(task));
        }
    }
    Ok(())
}

/// The response body as a stream of chunks for the SSE parser, ending early when `stop` is
/// set (checked before each read; keep-alives make reads return every 15 s).
struct Chunks<'a> {
    body: reqwest::blocking::Response,
    stop: &'a AtomicBool,
    failed: bool,
}

impl Iterator for Chunks<'_> {
    type Item = Result<Vec<u8>, std::io::Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let mut buf = vec![0; 8192];
        match self.body.read(&mut buf) {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some(Ok(buf))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// Seconds since the Unix epoch of an RFC 3339 date-time.
fn rfc3339_seconds(text: &str) -> Option<i64> {
    let (date, time) = text.split_once(['T', 't'])?;
    let mut ymd = date.splitn(3, '-').map(str::parse::<i64>);
    let (y, m, d) = (ymd.next()?.ok()?, ymd.next()?.ok()?, ymd.next()?.ok()?);
    let (clock, offset) = match time.find(['Z', 'z', '+', '-']) {
        Some(at) => time.split_at(at),
        None => return None,
    };
    let mut hms = clock.splitn(3, ':');
    let h: i64 = hms.next()?.parse().ok()?;
    let min: i64 = hms.next()?.parse().ok()?;
    let sec: i64 = hms.next()?.split('.').next()?.parse().ok()?;
    let offset = match offset {
        "Z" | "z" => 0,
        _ => {
            let sign = if offset.starts_with('-') { -1 } else { 1 };
            let (oh, om) = offset.get(1..)?.split_once(':')?;
            sign * (oh.parse::<i64>().ok()? * 3600 + om.parse::<i64>().ok()? * 60)
        }
    };
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || h > 23 || min > 59 || sec > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + min * 60 + sec - offset)
}

fn sleep_unless_stopped(pause: Duration, stop: &AtomicBool) {
    let step = Duration::from_millis(50);
    let mut waited = Duration::ZERO;
    while waited < pause && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(step.min(pause - waited));
        waited += step;
    }
}

/// A 409 of claim or release is not "no longer active" in general: its message says what
/// stands in the way (who holds it, or that it has ended), so it is the headline.
fn conflict_said_plainly(mut failure: Failure) -> Failure {
    if failure.status == Some(409)
        && let Some(first) = failure.errors.first()
        && !first.message.is_empty()
    {
        failure.message = first.message.clone();
    }
    failure
}

fn unexpected(message: impl Into<String>) -> Failure {
    Failure {
        kind: Kind::Server,
        status: None,
        message: message.into(),
        field: None,
        errors: Vec::new(),
        field_errors: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    //! Against a small real HTTP server (tiny_http) on a loopback port: the requests the
    //! client makes, and what it makes of the answers.

    use std::sync::Arc;
    use std::sync::mpsc;

    use serde_json::json;

    use super::*;
    use crate::Endpoint;

    /// A request's URL and headers (names in lower case).
    type Seen = (String, Vec<(String, String)>);

    /// A server answering each request with the next of `answers` (status, content type,
    /// body) and reporting every request's URL and headers.
    fn serve(answers: Vec<(u16, &'static str, String)>) -> (String, mpsc::Receiver<Seen>) {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for (status, kind, body) in answers {
                let Ok(request) = server.recv() else { return };
                let headers = request
                    .headers()
                    .iter()
                    .map(|h| {
                        (
                            h.field.to_string().to_ascii_lowercase(),
                            h.value.to_string(),
                        )
                    })
                    .collect();
                let _ = tx.send((request.url().to_owned(), headers));
                let header =
                    tiny_http::Header::from_bytes(&b"Content-Type"[..], kind.as_bytes()).unwrap();
                let _ = request.respond(
                    tiny_http::Response::from_string(body)
                        .with_status_code(status)
                        .with_header(header),
                );
            }
        });
        (url, rx)
    }

    fn client(url: &str) -> Client {
        Client::new(Endpoint::new(url, "care", "demo-staff")).unwrap()
    }

    fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn task(uuid: &str, status: &str, owner: Option<(&str, &str)>) -> Value {
        let mut t = json!({"resourceType": "Task", "id": uuid, "status": status,
            "for": {"type": "Patient", "identifier": {"value": "P-1"}, "display": "Ann Doe"},
            "basedOn": [{"type": "CarePlan", "display": "DemoCareProgram"}],
            "restriction": {"period": {"end": "2026-12-31"}}, "authoredOn": "2026-01-15T10:00:00Z"});
        if let Some((id, name)) = owner {
            t["owner"] = json!({"type": "Practitioner", "identifier": {"system": "urn:slipway:care:user", "value": id}, "display": name});
        }
        t
    }

    #[test]
    fn a_page_of_tasks_is_flattened_and_next_links_followed_on_the_services_own_server() {
        let bundle = |next: Option<&str>| {
            let mut links = vec![json!({"relation": "self", "url": "/fhir/Task?status=requested"})];
            if let Some(n) = next {
                links.push(json!({"relation": "next", "url": n}));
            }
            json!({"resourceType": "Bundle", "type": "searchset", "total": 3, "link": links,
                "entry": [{"fullUrl": "Task/u-1", "resource": task("u-1", "in-progress", Some(("staff-1", "Demo care staff"))), "search": {"mode": "match"}},
                          {"fullUrl": "Task/u-2", "resource": task("u-2", "requested", None)}]})
            .to_string()
        };
        let (url, seen) = serve(vec![
            (
                200,
                "application/fhir+json",
                bundle(Some("/fhir/Task?status=requested,in-progress&_cursor=abc")),
            ),
            (200, "application/fhir+json", bundle(None)),
            (200, "application/fhir+json", bundle(None)),
            (200, "application/fhir+json", bundle(None)),
            (200, "application/fhir+json", bundle(None)),
        ]);
        let c = client(&url);
        let page = c
            .tasks(&Query {
                statuses: vec![Status::Requested, Status::InProgress],
                owner: Some("staff 1".into()),
                count: Some(2),
                next: None,
                total: true,
            })
            .unwrap();
        let (asked, headers) = seen.recv().unwrap();
        assert_eq!(
            asked,
            "/fhir/Task?status=requested%2Cin-progress&owner=staff+1&_count=2&_total=accurate"
        );
        assert_eq!(header(&headers, "authorization"), Some("Bearer demo-staff"));
        assert_eq!(page.total, Some(3));
        assert_eq!(
            page.next.as_deref(),
            Some("/fhir/Task?status=requested,in-progress&_cursor=abc")
        );
        assert_eq!(
            page.tasks[0],
            Task {
                uuid: "u-1".into(),
                status: "in-progress".into(),
                patient_id: Some("P-1".into()),
                patient: Some("Ann Doe".into()),
                program: Some("DemoCareProgram".into()),
                owner_id: Some("staff-1".into()),
                owner: Some("Demo care staff".into()),
                expires: Some("2026-12-31".into()),
                authored: Some("2026-01-15T10:00:00Z".into()),
                description: None,
                amended: false,
            }
        );
        assert_eq!(page.tasks[1].owner, None);

        let second = c
            .tasks(&Query {
                next: page.next.clone(),
                ..Query::default()
            })
            .unwrap();
        assert_eq!(
            seen.recv().unwrap().0,
            "/fhir/Task?status=requested,in-progress&_cursor=abc"
        );
        assert_eq!(second.next, None);

        // The link as the service writes it (absolute) is followed on the service's own
        // server; one naming another server too: the token never goes there.
        for link in [
            format!("{url}/fhir/Task?_cursor=def"),
            "http://elsewhere.example/fhir/Task?_cursor=def".to_owned(),
            "//elsewhere.example/fhir/Task?_cursor=def".to_owned(),
        ] {
            c.tasks(&Query {
                next: Some(link.clone()),
                ..Query::default()
            })
            .unwrap();
            assert_eq!(seen.recv().unwrap().0, "/fhir/Task?_cursor=def", "{link}");
        }
        assert_eq!(
            Status::parse("done").unwrap_err().field.as_deref(),
            Some("status")
        );
    }

    #[test]
    fn a_claim_refused_with_409_says_who_holds_it() {
        let held = json!([{"errorCode": "ALREADY_CLAIMED", "message": "Nurse Jo holds this request", "fields": []}]);
        let (url, seen) = serve(vec![
            (
                200,
                "application/fhir+json",
                task("u-1", "in-progress", Some(("s", "Demo"))).to_string(),
            ),
            (409, "application/json", held.to_string()),
            (
                200,
                "application/json",
                json!({"id": "s", "name": "Demo care staff", "admin": false}).to_string(),
            ),
        ]);
        let c = client(&url);
        let claimed = c.claim("u-1").unwrap();
        assert_eq!(claimed.status, "in-progress");
        assert_eq!(
            seen.recv().unwrap().0,
            "/care/missingInformationRequest/u-1/claim"
        );
        let refused = c.release("u-1").unwrap_err();
        assert_eq!(
            seen.recv().unwrap().0,
            "/care/missingInformationRequest/u-1/release"
        );
        assert_eq!(refused.status, Some(409));
        assert_eq!(refused.message, "Nurse Jo holds this request");
        assert_eq!(refused.errors[0].code, "ALREADY_CLAIMED");
        assert_eq!(
            c.me().unwrap(),
            Me {
                id: "s".into(),
                name: "Demo care staff".into(),
                admin: false
            }
        );
        assert_eq!(c.claim("../x").unwrap_err().kind, Kind::Invalid);
    }

    /// A request's target and `Last-Event-ID`.
    type Asked = (String, Option<String>);

    /// A server for event streams on a plain socket (tiny_http buffers streamed bodies):
    /// the first request gets a 503, each later one a `text/event-stream` whose body is what
    /// the test sends on that request's channel, closed when the sender is dropped. Reports
    /// each request's line and `Last-Event-ID`.
    fn stream_server(bodies: Vec<mpsc::Receiver<Vec<u8>>>) -> (String, mpsc::Receiver<Asked>) {
        use std::io::{BufRead as _, BufReader, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (asked_tx, asked) = mpsc::channel();
        std::thread::spawn(move || {
            let mut bodies = bodies.into_iter();
            let mut first = true;
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let target = line.split(' ').nth(1).unwrap_or_default().to_owned();
                let mut resume = None;
                loop {
                    let mut h = String::new();
                    reader.read_line(&mut h).unwrap();
                    if h.trim().is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':')
                        && k.eq_ignore_ascii_case("last-event-id")
                    {
                        resume = Some(v.trim().to_owned());
                    }
                }
                let _ = asked_tx.send((target, resume));
                if std::mem::take(&mut first) {
                    let _ = conn.write_all(
                        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                    continue;
                }
                let Some(body) = bodies.next() else { return };
                std::thread::spawn(move || {
                    let _ = conn.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
                    );
                    for bytes in body {
                        if conn.write_all(&bytes).and_then(|()| conn.flush()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (url, asked)
    }

    #[test]
    fn the_event_stream_resumes_after_a_drop_with_the_last_event_id() {
        let (first_tx, first_rx) = mpsc::channel::<Vec<u8>>();
        let (second_tx, second_rx) = mpsc::channel::<Vec<u8>>();
        let (url, asked) = stream_server(vec![first_rx, second_rx]);
        let event = |id: u32, uuid: &str, status: &str| {
            format!("id: {id}\nevent: task\ndata: {{\"uuid\":\"{uuid}\",\"status\":\"{status}\",\"owner\":null,\"ownerName\":null}}\n\n").into_bytes()
        };
        // The first stream: a keep-alive, two events (the second split across reads), then
        // it drops.
        first_tx.send(b": keep-alive\n\n".to_vec()).unwrap();
        first_tx.send(event(7, "u-1", "requested")).unwrap();
        let split = event(8, "u-2", "in-progress");
        first_tx.send(split[..20].to_vec()).unwrap();
        first_tx.send(split[20..].to_vec()).unwrap();
        drop(first_tx);
        second_tx.send(event(9, "u-1", "entered-in-error")).unwrap();

        let stop = Arc::new(AtomicBool::new(false));
        let pacing = Pacing {
            first_retry: Duration::from_millis(20),
            max_retry: Duration::from_millis(40),
            idle: Duration::from_secs(10),
        };
        let mut signals = Vec::new();
        let c = client(&url);
        c.watch(None, pacing, &stop, |s| {
            if matches!(&s, Signal::Task(t) if t.id.as_deref() == Some("9")) {
                stop.store(true, Ordering::Relaxed);
            }
            signals.push(s);
        })
        .unwrap();
        drop(second_tx);

        assert_eq!(asked.recv().unwrap(), ("/care/events".to_owned(), None));
        assert_eq!(asked.recv().unwrap(), ("/care/events".to_owned(), None));
        assert_eq!(
            asked.recv().unwrap(),
            ("/care/events".to_owned(), Some("8".to_owned()))
        );
        let tasks: Vec<(&str, &str, &str)> = signals
            .iter()
            .filter_map(|s| match s {
                Signal::Task(t) => {
                    Some((t.id.as_deref().unwrap(), t.uuid.as_str(), t.status.as_str()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            tasks,
            [
                ("7", "u-1", "requested"),
                ("8", "u-2", "in-progress"),
                ("9", "u-1", "entered-in-error")
            ]
        );
        assert!(
            matches!(
                signals[0],
                Signal::Lost {
                    retry_in_ms: 20,
                    ..
                }
            ),
            "{signals:?}"
        );
        assert_eq!(signals[1], Signal::Connected { resumed: false });
        assert!(
            matches!(&signals[4], Signal::Lost { message, retry_in_ms: 20 } if message.contains("ended")),
            "the pause starts again after a good connection: {signals:?}"
        );
        assert_eq!(signals[5], Signal::Connected { resumed: true });
    }

    #[test]
    fn a_resume_point_the_service_refuses_is_dropped_and_the_stream_opened_afresh() {
        let refused = json!([{"errorCode": "INVALID_HEADER", "message": "Last-Event-ID must be the id of an event this stream sent", "fields": ["Last-Event-ID"]}]);
        let event = "id: 3\nevent: task\ndata: {\"uuid\":\"u-1\",\"status\":\"requested\"}\n\n";
        let (url, seen) = serve(vec![
            (400, "application/json", refused.to_string()),
            (200, "text/event-stream", event.to_owned()),
        ]);
        let stop = AtomicBool::new(false);
        let pacing = Pacing {
            first_retry: Duration::from_millis(10),
            ..Pacing::default()
        };
        let mut signals = Vec::new();
        client(&url)
            .watch(Some("not-ours".into()), pacing, &stop, |s| {
                if matches!(s, Signal::Task(_)) {
                    stop.store(true, Ordering::Relaxed);
                }
                signals.push(s);
            })
            .unwrap();
        let (_, first) = seen.recv().unwrap();
        assert_eq!(header(&first, "last-event-id"), Some("not-ours"));
        let (_, second) = seen.recv().unwrap();
        assert_eq!(header(&second, "last-event-id"), None);
        assert!(matches!(&signals[0], Signal::Lost { .. }), "{signals:?}");
        assert_eq!(signals[1], Signal::Connected { resumed: false });
        assert!(matches!(&signals[2], Signal::Task(t) if t.uuid == "u-1"));
    }

    #[test]
    fn when_a_task_was_made_is_read_from_its_rfc_3339_time() {
        for (text, secs) in [
            ("2025-11-26T00:00:00Z", Some(1_764_115_200)),
            ("1970-01-01T00:00:00Z", Some(0)),
            ("2024-02-29T12:30:15.250Z", Some(1_709_209_815)),
            ("2025-11-26T01:00:00+01:00", Some(1_764_115_200)),
            ("2025-11-25T23:00:00-01:00", Some(1_764_115_200)),
            ("2025-11-26", None),
            ("2025-13-01T00:00:00Z", None),
            ("2025-11-26T00:00:00", None),
            ("yesterday", None),
        ] {
            assert_eq!(rfc3339_seconds(text), secs, "{text}");
        }
        let task =
            Task::from_fhir(&json!({"id": "u-1", "authoredOn": "2025-11-26T00:00:00Z"})).unwrap();
        let made = UNIX_EPOCH + Duration::from_secs(1_764_115_200);
        assert_eq!(task.authored_at(), Some(made));
        // Recent: made within ten minutes (or "later", another clock); an old one released is not.
        assert!(task.is_recent(made + Duration::from_secs(2)));
        assert!(task.is_recent(made - Duration::from_secs(30)));
        assert!(!task.is_recent(made + Duration::from_secs(3600)));
        let unknown = Task::from_fhir(&json!({"id": "u-2"})).unwrap();
        assert!(unknown.is_recent(made));
    }

    #[test]
    fn an_unknown_token_ends_the_subscription() {
        let body = json!([{"errorCode": "UNAUTHORIZED", "message": "a valid token is required", "fields": []}]);
        let (url, _seen) = serve(vec![(401, "application/json", body.to_string())]);
        let stop = AtomicBool::new(false);
        let mut signals = Vec::new();
        let refused = client(&url)
            .watch(None, Pacing::default(), &stop, |s| signals.push(s))
            .unwrap_err();
        assert_eq!(refused.kind, Kind::Unauthorized);
        assert!(signals.is_empty(), "{signals:?}");
    }
}
