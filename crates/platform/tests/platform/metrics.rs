//! `GET /metrics`: only the admins of the first account read it; requests are counted by
//! route template (no id in any label); apps and builds by status follow what happens.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{TestApp, assert_error, backends, python_devfile, python_project, spawn_app};

/// The status, content type and body of a scrape with `token`.
async fn scrape(app: &TestApp, token: Option<&str>) -> (StatusCode, String, String) {
    let mut req = app.client.get(format!("{}/metrics", app.base));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let r = req.send().await.expect("scrape");
    let content_type = r.headers()["content-type"].to_str().unwrap().to_owned();
    (r.status(), content_type, r.text().await.unwrap())
}

/// The body of the owner's scrape.
async fn metrics(app: &TestApp) -> String {
    let (status, _, body) = scrape(app, Some(&app.owner)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// The value of the sample `name{labels}` (labels in any order), or 0 when there is none.
fn value(body: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    let mut wanted: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    wanted.sort();
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|line| {
            let (series, number) = line.rsplit_once(' ')?;
            let (metric, rest) = series.split_once('{').unwrap_or((series, "}"));
            let mut have: Vec<String> = rest
                .trim_end_matches('}')
                .split(',')
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect();
            have.sort();
            (metric == name && have == wanted).then(|| number.parse().unwrap())
        })
        .unwrap_or(0.0)
}

/// A status and a JSON error body, for `assert_error`.
fn reply(status: StatusCode, body: &str) -> crate::support::Reply {
    (status, serde_json::from_str(body).unwrap())
}

/// No token: 401; a member, or the admin of another account: 403; the first account's
/// owner, and a member once made an admin of it: 200 in the text format.
#[tokio::test]
async fn only_admins_of_the_first_account_read_the_metrics() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (status, content_type, body) = scrape(&app, None).await;
        assert_eq!(content_type, "application/json");
        assert_error(
            &reply(status, &body),
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            None,
        );
        let member = app.add_user("ada@example.org", "Ada").await;
        let other = app.add_account("eve@example.org").await;
        for token in [member.token.expose(), other.token.expose()] {
            let (status, _, body) = scrape(&app, Some(token)).await;
            assert_error(
                &reply(status, &body),
                StatusCode::FORBIDDEN,
                "permission_denied",
                None,
            );
        }
        let (status, content_type, body) = scrape(&app, Some(&app.owner)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
        for family in [
            "# TYPE slipway_http_requests_total counter",
            "# TYPE slipway_http_request_duration_seconds histogram",
            "# TYPE slipway_platform_apps gauge",
            "# TYPE slipway_platform_builds gauge",
            "# TYPE slipway_platform_deployments gauge",
            "# TYPE slipway_platform_build_queue_length gauge",
            "# TYPE slipway_db_pool_connections gauge",
            "# TYPE slipway_db_pool_idle_connections gauge",
        ] {
            assert!(body.contains(family), "{family} missing from\n{body}");
        }
        let (status, body) = app
            .send(
                Method::PATCH,
                "/v1/account/users/ada@example.org",
                Some(&app.owner),
                Some(json!({"role": "admin"}).to_string()),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, _, body) = scrape(&app, Some(member.token.expose())).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        app.finish().await;
    }
}

/// N requests to one route move its template's counter by N; the app's UUID, its name and
/// the tokens reach no label.
#[tokio::test]
async fn requests_are_counted_by_route_template() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let created = app.register(&app.owner, "metered").await;
        let id = created["id"].as_str().unwrap();
        let route = [
            ("method", "GET"),
            ("route", "/v1/apps/{app_id}"),
            ("status", "200"),
        ];
        let before = value(&metrics(&app).await, "slipway_http_requests_total", &route);
        for _ in 0..4 {
            let (status, body) = app.get_app(&app.owner, id).await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        let (status, _) = app
            .send(
                Method::GET,
                &format!("/v1/nothing/{id}"),
                Some(&app.owner),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let body = metrics(&app).await;
        assert_eq!(
            value(&body, "slipway_http_requests_total", &route) - before,
            4.0,
            "{body}"
        );
        let unmatched = [("method", "GET"), ("route", "unmatched"), ("status", "404")];
        assert_eq!(
            value(&body, "slipway_http_requests_total", &unmatched),
            1.0,
            "{body}"
        );
        assert!(
            value(
                &body,
                "slipway_http_request_duration_seconds_count",
                &route[..2]
            ) >= 4.0,
            "{body}"
        );
        let uuid = first_uuid(&body);
        assert!(uuid.is_none(), "an id reached a label: {uuid:?}\n{body}");
        for secret in [id, "metered", app.owner.as_str()] {
            assert!(!body.contains(secret), "{secret} reached a label:\n{body}");
        }
        app.finish().await;
    }
}

/// The first word of `body` shaped like a UUID (8-4-4-4-12 hex digits), if any.
fn first_uuid(body: &str) -> Option<String> {
    body.split(|c: char| !(c.is_ascii_hexdigit() || c == '-'))
        .find(|w| {
            let parts: Vec<&str> = w.split('-').collect();
            parts.iter().map(|p| p.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        })
        .map(str::to_owned)
}

/// A registered app moves the apps gauge of its state; a build that fails moves the builds
/// gauge of `failed`, and leaves the queue as it was.
#[tokio::test]
async fn apps_and_builds_by_status_follow_what_happens() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let before = metrics(&app).await;
        let created = app.register(&app.owner, "counted").await;
        let registered = [("status", "registered")];
        let after = metrics(&app).await;
        assert_eq!(
            value(&after, "slipway_platform_apps", &registered)
                - value(&before, "slipway_platform_apps", &registered),
            1.0,
            "{after}"
        );
        let files = python_project(&python_devfile("counted", "exit 3"));
        let id = app.build_one(created["id"].as_str().unwrap(), &files).await;
        let build = app.wait_build(&id, &["succeeded", "failed"]).await;
        assert_eq!(build["status"], "failed", "{build}");
        let last = metrics(&app).await;
        let failed = [("status", "failed")];
        assert_eq!(
            value(&last, "slipway_platform_builds", &failed)
                - value(&before, "slipway_platform_builds", &failed),
            1.0,
            "{last}"
        );
        assert_eq!(
            value(&last, "slipway_platform_build_queue_length", &[]),
            0.0
        );
        assert_eq!(
            value(&last, "slipway_platform_builds", &[("status", "queued")]),
            0.0
        );
        for status in ["deploying", "RUNNING", "FAILED", "stopped", "superseded"] {
            assert!(
                last.contains(&format!(
                    "slipway_platform_deployments{{status=\"{status}\"}} 0"
                )),
                "{status}:\n{last}"
            );
        }
        app.finish().await;
    }
}
