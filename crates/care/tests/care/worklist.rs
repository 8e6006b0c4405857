//! The care staff's worklist: the FHIR Task search and its keyset paging, one Task, claims
//! and releases (concurrent claims included), and the live event stream with its
//! `Last-Event-ID` resume; each on SQLite and PostgreSQL.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{
    ACTIVE, ADMIN, ENDED, EXPIRED, RESTRICTED, STAFF, TestApp, backends, spawn_app,
};

/// Creates an active request expiring on `expires` on the demo request's care plan and group.
async fn create_request(app: &TestApp, expires: &str) -> String {
    let (status, existing) = app.admin_get(&format!("/data-requests/{ACTIVE}")).await;
    assert_eq!(status, StatusCode::OK, "{existing}");
    let uuid = uuid::Uuid::new_v4().to_string();
    let (status, body) = app
        .admin_put(
            &format!("/data-requests/{uuid}"),
            &json!({
                "carePlanExternalId": existing["carePlanExternalId"],
                "groupId": existing["groupId"],
                "status": "Active",
                "expirationDate": expires
            }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    uuid
}

/// A staff user with full access to data requests (and nothing else): its token and ID.
async fn staff_user(app: &TestApp, name: &str) -> (String, String) {
    let (status, user) = app
        .admin_post(
            "/users",
            &json!({ "name": name, "permissions": [
                { "object": "DataRequest", "read": true, "create": true, "edit": true }
            ] }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{user}");
    (
        user["token"].as_str().unwrap().to_owned(),
        user["id"].as_str().unwrap().to_owned(),
    )
}

async fn get(app: &TestApp, url: &str, token: Option<&str>) -> (StatusCode, Value, String) {
    let mut req = app.client.get(url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let r = req.send().await.expect("send");
    let status = r.status();
    let content_type = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = r.text().await.unwrap();
    (
        status,
        serde_json::from_str(&body).unwrap_or(Value::Null),
        content_type,
    )
}

async fn post(app: &TestApp, path: &str, token: &str) -> (StatusCode, Value) {
    let r = app
        .client
        .post(app.url(path))
        .bearer_auth(token)
        .send()
        .await
        .expect("send");
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

fn claim_path(uuid: &str) -> String {
    format!("/care/missingInformationRequest/{uuid}/claim")
}

fn release_path(uuid: &str) -> String {
    format!("/care/missingInformationRequest/{uuid}/release")
}

/// Every page of a search from its first URL: the Task ids in order, and the first page.
async fn all_pages(app: &TestApp, first: &str, token: &str) -> (Vec<String>, Value) {
    let mut url = app.url(first);
    let mut ids = Vec::new();
    let mut first_page = None;
    loop {
        let (status, bundle, content_type) = get(app, &url, Some(token)).await;
        assert_eq!(status, StatusCode::OK, "{bundle}");
        assert!(
            content_type.starts_with("application/fhir+json"),
            "{content_type}"
        );
        assert_eq!(bundle["resourceType"], "Bundle");
        assert_eq!(bundle["type"], "searchset");
        for e in bundle["entry"].as_array().unwrap() {
            assert_eq!(e["search"]["mode"], "match");
            let id = e["resource"]["id"].as_str().unwrap().to_owned();
            assert_eq!(e["fullUrl"], app.url(&format!("/fhir/Task/{id}")));
            ids.push(id);
        }
        let next = bundle["link"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["relation"] == "next")
            .map(|l| l["url"].as_str().unwrap().to_owned());
        match &first_page {
            None => first_page = Some(bundle),
            // Every page of a search counts (or not) as its first did.
            Some(first) => assert_eq!(bundle.get("total"), first.get("total")),
        }
        match next {
            Some(n) => url = n,
            None => break,
        }
    }
    (ids, first_page.unwrap())
}

#[tokio::test]
async fn paging_returns_every_open_request_once_in_expiry_then_age_order() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        // Expiries out of order, several on the same day (then age decides).
        let mut made = Vec::new();
        for (i, day) in [5, 3, 9, 3, 1, 7, 3, 5, 2, 8, 4, 3, 6].iter().enumerate() {
            let expires = format!("2098-01-{day:02}");
            made.push((expires.clone(), i, create_request(&app, &expires).await));
        }
        // The demo's active request expires on 2099-12-31, after all of these.
        made.push(("2099-12-31".into(), usize::MAX, ACTIVE.to_owned()));
        made.sort();
        let want: Vec<String> = made.iter().map(|(_, _, u)| u.clone()).collect();

        let (ids, first) = all_pages(
            &app,
            "/fhir/Task?status=requested&_count=4&_total=accurate",
            STAFF,
        )
        .await;
        assert_eq!(ids, want, "every open request once, by expiry then age");
        assert_eq!(first["total"], want.len());
        let task = &first["entry"][0]["resource"];
        assert_eq!(task["resourceType"], "Task");
        assert_eq!(task["status"], "requested");
        assert_eq!(task["restriction"]["period"]["end"], "2098-01-01");
        assert_eq!(
            task["for"]["identifier"]["value"],
            "DemoRx:patient:DEMO-PATIENT-1"
        );
        assert_eq!(task["focus"]["reference"], format!("urn:uuid:{}", want[0]));
        assert!(task["basedOn"][0]["display"].is_string(), "{task}");

        // Every status: the ended and expired demo requests too.
        let (all, everything) = all_pages(&app, "/fhir/Task?_count=100", STAFF).await;
        assert!(everything.get("total").is_none(), "counted without _total");
        assert_eq!(all.len(), want.len() + 2);
        let (ended, _) = all_pages(&app, "/fhir/Task?status=cancelled,failed", STAFF).await;
        // One Task a page: the next link carries across the status arms merged into a page.
        let (one_by_one, _) = all_pages(
            &app,
            "/fhir/Task?status=completed,cancelled,failed&_count=1",
            STAFF,
        )
        .await;
        assert_eq!(one_by_one.len(), 2, "{one_by_one:?}");
        assert_eq!(
            one_by_one.iter().cloned().collect::<HashSet<_>>(),
            HashSet::from([ENDED.to_owned(), EXPIRED.to_owned()])
        );
        assert_eq!(
            ended.iter().cloned().collect::<HashSet<_>>(),
            HashSet::from([ENDED.to_owned(), EXPIRED.to_owned()])
        );
        let (_, expired, _) = get(
            &app,
            &app.url(&format!("/fhir/Task/{EXPIRED}")),
            Some(STAFF),
        )
        .await;
        assert_eq!(expired["status"], "failed");
        assert_eq!(expired["statusReason"]["text"], "expired");
        app.finish().await;
    }
}

#[tokio::test]
async fn a_search_refuses_what_it_cannot_answer() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let url = app.url("/fhir/Task?status=requested,ready&_count=0");
        let (status, body, _) = get(&app, &url, Some(STAFF)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let fields: Vec<&str> = body
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["fields"][0].as_str().unwrap())
            .collect();
        assert_eq!(fields, ["status", "_count"]);
        assert!(body[0]["message"].as_str().unwrap().contains("\"ready\""));
        let (status, _, _) = get(&app, &app.url("/fhir/Task?_cursor=nope"), Some(STAFF)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let (status, _, _) = get(&app, &app.url("/fhir/Task"), None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, _, _) = get(&app, &app.url("/fhir/Task"), Some("not-a-token")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let unknown = uuid::Uuid::new_v4();
        let (status, body, _) = get(
            &app,
            &app.url(&format!("/fhir/Task/{unknown}")),
            Some(STAFF),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        let (status, _, _) = get(&app, &app.url("/fhir/Task/not-a-uuid"), Some(STAFF)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        // A user without any access to data requests sees no worklist.
        let (status, user) = app
            .admin_post("/users", &json!({ "name": "no access" }))
            .await;
        assert_eq!(status, StatusCode::CREATED);
        let token = user["token"].as_str().unwrap();
        let (status, body, _) = get(&app, &app.url("/fhir/Task"), Some(token)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        app.finish().await;
    }
}

#[tokio::test]
async fn claims_name_their_holder_and_the_history_records_them() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (nurse, nurse_id) = staff_user(&app, "Nurse Two").await;
        let uuid = create_request(&app, "2098-06-01").await;

        let (status, task) = post(&app, &claim_path(&uuid), &nurse).await;
        assert_eq!(status, StatusCode::OK, "{task}");
        assert_eq!(task["status"], "in-progress");
        assert_eq!(task["owner"]["identifier"]["value"], nurse_id);
        assert_eq!(task["owner"]["display"], "Nurse Two");
        // Access to data requests alone shows neither the patient nor the care plan.
        assert!(
            task.get("for").is_none() && task.get("basedOn").is_none(),
            "{task}"
        );
        // Claiming one's own again changes nothing.
        assert_eq!(
            post(&app, &claim_path(&uuid), &nurse).await.0,
            StatusCode::OK
        );

        // Someone else: 409 naming the holder, for a claim and for a release.
        for path in [claim_path(&uuid), release_path(&uuid)] {
            let (status, body) = post(&app, &path, RESTRICTED).await;
            assert_eq!(status, StatusCode::CONFLICT, "{path}: {body}");
            assert_eq!(body[0]["errorCode"], "ALREADY_CLAIMED");
            assert!(
                body[0]["message"].as_str().unwrap().contains("Nurse Two"),
                "{body}"
            );
        }

        // Mine, by owner; not in the open-and-unclaimed list.
        let (_, mine, _) = get(
            &app,
            &app.url(&format!(
                "/fhir/Task?owner=Practitioner/{nurse_id}&_total=accurate"
            )),
            Some(STAFF),
        )
        .await;
        assert_eq!(mine["total"], 1);
        assert_eq!(mine["entry"][0]["resource"]["id"], uuid.as_str());
        let (_, open, _) = get(
            &app,
            &app.url("/fhir/Task?status=requested&_count=100"),
            Some(STAFF),
        )
        .await;
        assert!(!open.to_string().contains(&uuid));
        let (_, me, _) = get(&app, &app.url("/care/me"), Some(&nurse)).await;
        assert_eq!(
            me,
            json!({ "id": nurse_id, "name": "Nurse Two", "admin": false })
        );

        let (status, task) = post(&app, &release_path(&uuid), &nurse).await;
        assert_eq!(status, StatusCode::OK, "{task}");
        assert_eq!(task["status"], "requested");
        assert!(task.get("owner").is_none());
        // Releasing an unclaimed request changes nothing.
        assert_eq!(
            post(&app, &release_path(&uuid), &nurse).await.0,
            StatusCode::OK
        );

        // An admin may release another's claim.
        assert_eq!(
            post(&app, &claim_path(&uuid), &nurse).await.0,
            StatusCode::OK
        );
        assert_eq!(
            post(&app, &release_path(&uuid), ADMIN).await.0,
            StatusCode::OK
        );

        // Ended, expired, unknown.
        for (target, want) in [
            (ENDED.to_owned(), StatusCode::CONFLICT),
            (EXPIRED.to_owned(), StatusCode::CONFLICT),
            (uuid::Uuid::new_v4().to_string(), StatusCode::NOT_FOUND),
        ] {
            let (status, body) = post(&app, &claim_path(&target), &nurse).await;
            assert_eq!(status, want, "{target}: {body}");
        }

        // A claim outlives neither the request's activity (its holder may still let go)...
        assert_eq!(
            post(&app, &claim_path(&uuid), &nurse).await.0,
            StatusCode::OK
        );
        let (status, existing) = app.admin_get(&format!("/data-requests/{uuid}")).await;
        assert_eq!(status, StatusCode::OK);
        let mut ended = existing.clone();
        ended["status"] = json!("Ended");
        for key in ["uuid", "history", "amendments"] {
            ended.as_object_mut().unwrap().remove(key);
        }
        let (status, body) = app
            .admin_put(&format!("/data-requests/{uuid}"), &ended)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, task) = post(&app, &release_path(&uuid), &nurse).await;
        assert_eq!(status, StatusCode::OK, "{task}");
        assert_eq!(task["status"], "cancelled");
        assert!(task.get("owner").is_none());
        // ... nor its holder: deleting a user gives their claims back.
        let other = create_request(&app, "2098-06-02").await;
        assert_eq!(
            post(&app, &claim_path(&other), &nurse).await.0,
            StatusCode::OK
        );
        let (status, _) = app.admin_delete(&format!("/users/{nurse_id}")).await;
        assert_eq!(status, StatusCode::OK);
        let (_, task, _) = get(&app, &app.url(&format!("/fhir/Task/{other}")), Some(STAFF)).await;
        assert_eq!(task["status"], "requested", "{task}");
        assert!(task.get("owner").is_none(), "{task}");

        let methods: Vec<(String, i64)> = app
            .history(&uuid)
            .await
            .iter()
            .map(|h| {
                (
                    h["method"].as_str().unwrap().to_owned(),
                    h["statusCode"].as_i64().unwrap(),
                )
            })
            .collect();
        let expect = [
            ("CLAIM", 200),
            ("CLAIM", 200),
            ("CLAIM", 409),
            ("RELEASE", 409),
            ("RELEASE", 200),
            ("RELEASE", 200),
            ("CLAIM", 200),
            ("RELEASE", 200),
            ("CLAIM", 200),
            ("RELEASE", 200),
        ];
        let expect: Vec<(String, i64)> = expect.iter().map(|(m, s)| (m.to_string(), *s)).collect();
        assert_eq!(methods, expect);
        app.finish().await;
    }
}

#[tokio::test]
async fn answering_completes_the_task_whoever_holds_it() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (nurse, _) = staff_user(&app, "Holder").await;
        assert_eq!(
            post(&app, &claim_path(ACTIVE), &nurse).await.0,
            StatusCode::OK
        );
        let answer = json!([
            { "uuid": "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f01", "value": "1980-05-06" },
            { "uuid": "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f02", "value": "72.5" },
            { "uuid": "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f03", "value": "Evening" },
            { "uuid": "5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7f04", "value": "true" }
        ]);
        let (status, body) = app.mi_post(STAFF, ACTIVE, &answer).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (_, task, _) = get(&app, &app.url(&format!("/fhir/Task/{ACTIVE}")), Some(STAFF)).await;
        assert_eq!(task["status"], "completed");
        app.finish().await;
    }
}

#[tokio::test]
async fn of_two_concurrent_claims_exactly_one_wins() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (a, _) = staff_user(&app, "A").await;
        let (b, _) = staff_user(&app, "B").await;
        for round in 0..10 {
            let uuid = create_request(&app, "2098-03-01").await;
            let path = claim_path(&uuid);
            let (ra, rb) = tokio::join!(post(&app, &path, &a), post(&app, &path, &b));
            let mut statuses = [ra.0, rb.0];
            statuses.sort();
            assert_eq!(
                statuses,
                [StatusCode::OK, StatusCode::CONFLICT],
                "round {round}: {ra:?} {rb:?}"
            );
            let winner = if ra.0 == StatusCode::OK { "A" } else { "B" };
            let (_, task, _) =
                get(&app, &app.url(&format!("/fhir/Task/{uuid}")), Some(STAFF)).await;
            assert_eq!(task["owner"]["display"], winner, "round {round}");
        }
        app.finish().await;
    }
}

/// A reader of an event stream: its events as (id, data) in order.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    async fn open(app: &TestApp, last_event_id: Option<&str>) -> Events {
        let mut req = app.client.get(app.url("/care/events")).bearer_auth(STAFF);
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        let response = req.send().await.expect("subscribe");
        assert_eq!(response.status(), StatusCode::OK);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        Events {
            response,
            buffer: String::new(),
        }
    }

    /// The next event within `within`, or `None`.
    async fn next(&mut self, within: Duration) -> Option<(String, Value)> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut id = None;
                let mut data: Option<Value> = None;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data = Some(serde_json::from_str(v.trim()).unwrap());
                    }
                }
                if let (Some(id), Some(data)) = (id, data) {
                    // The demo's expired request is announced by the sweeper at start, maybe
                    // after a test subscribed: not what these tests are about.
                    if data["uuid"] != EXPIRED {
                        return Some((id, data));
                    }
                }
                continue; // a keep-alive comment
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk()).await;
            match chunk {
                Ok(Ok(Some(bytes))) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                _ => return None,
            }
        }
    }
}

#[tokio::test]
async fn listeners_see_new_requests_within_a_second_and_resume_without_gaps() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let mut events = Events::open(&app, None).await;
        let first = create_request(&app, "2098-02-01").await;
        let second = create_request(&app, "2098-02-02").await;
        let (id1, e1) = events
            .next(Duration::from_secs(1))
            .await
            .expect("first event within 1 s");
        let (_, e2) = events
            .next(Duration::from_secs(1))
            .await
            .expect("second event within 1 s");
        assert_eq!(
            e1,
            json!({ "uuid": first, "status": "requested", "owner": null, "ownerName": null })
        );
        assert_eq!(e2["uuid"], second.as_str());

        // Disconnected: what happens meanwhile arrives on reconnect, after the last id seen.
        drop(events);
        let (nurse, nurse_id) = staff_user(&app, "Resumer").await;
        assert_eq!(
            post(&app, &claim_path(&second), &nurse).await.0,
            StatusCode::OK
        );
        assert_eq!(
            app.admin_delete(&format!("/data-requests/{first}")).await.0,
            StatusCode::OK
        );
        let mut resumed = Events::open(&app, Some(&id1)).await;
        let mut got = Vec::new();
        while let Some((_, e)) = resumed.next(Duration::from_secs(2)).await {
            got.push(e);
            if got.len() == 3 {
                break;
            }
        }
        assert_eq!(
            got,
            [
                json!({ "uuid": second, "status": "requested", "owner": null, "ownerName": null }),
                json!({ "uuid": second, "status": "in-progress", "owner": nurse_id, "ownerName": "Resumer" }),
                json!({ "uuid": first, "status": "entered-in-error", "owner": null, "ownerName": null }),
            ]
        );
        // And live again after the replay.
        assert_eq!(
            post(&app, &release_path(&second), &nurse).await.0,
            StatusCode::OK
        );
        let (_, e) = resumed
            .next(Duration::from_secs(1))
            .await
            .expect("live after resume");
        assert_eq!(e["status"], "requested");
        assert_eq!(e["uuid"], second.as_str());

        // A malformed Last-Event-ID names the header.
        let r = app
            .client
            .get(app.url("/care/events"))
            .bearer_auth(STAFF)
            .header("Last-Event-ID", "yesterday")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        drop(resumed);
        app.finish().await;
    }
}

#[tokio::test]
async fn a_server_with_listeners_still_shuts_down() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let _listening = Events::open(&app, None).await;
        tokio::time::timeout(Duration::from_secs(10), app.finish())
            .await
            .expect("the server stops while a stream is open");
    }
}
