//! `GET {base}/metrics`: admin tokens only, requests counted by route template (no id in
//! any label), and the domain's figures following what happens (enrollments by outcome,
//! missing-information requests by status).

use reqwest::StatusCode;
use serde_json::json;

use crate::support::{
    ACTIVE, ADMIN, RESTRICTED, STAFF, TestApp, backends, full_enrollment, spawn_app, spawn_app_with,
};

/// The status, content type and body of a scrape with `token`.
async fn scrape(app: &TestApp, token: Option<&str>) -> (StatusCode, String, String) {
    let mut req = app.client.get(app.url("/metrics"));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let r = req.send().await.expect("scrape");
    let content_type = r.headers()["content-type"].to_str().unwrap().to_owned();
    (r.status(), content_type, r.text().await.unwrap())
}

/// The body of an admin's scrape.
async fn metrics(app: &TestApp) -> String {
    let (status, _, body) = scrape(app, Some(ADMIN)).await;
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

#[tokio::test]
async fn only_admin_tokens_read_the_metrics() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let (status, content_type, body) = scrape(&app, None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(content_type, "application/json");
        let body: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body[0]["errorCode"], "UNAUTHORIZED", "{body}");
        let (status, _, _) = scrape(&app, Some("no-such-token")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, _, body) = scrape(&app, Some(STAFF)).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let body: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body[0]["errorCode"], "ADMIN_ONLY", "{body}");
        let (status, content_type, body) = scrape(&app, Some(ADMIN)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
        for family in [
            "# TYPE slipway_http_requests_total counter",
            "# TYPE slipway_http_request_duration_seconds histogram",
            "# TYPE slipway_care_enrollments_total counter",
            "# TYPE slipway_care_missing_information_requests gauge",
            "# TYPE slipway_db_pool_connections gauge",
            "# TYPE slipway_db_pool_idle_connections gauge",
        ] {
            assert!(body.contains(family), "{family} missing from\n{body}");
        }
        assert!(
            value(&body, "slipway_db_pool_connections", &[]) >= 1.0,
            "{body}"
        );
        app.finish().await;
    }
}

/// N requests to one route move its template's counter by N; the UUIDs of the paths reach
/// no label, and neither do tokens.
#[tokio::test]
async fn requests_are_counted_by_route_template() {
    let uuid = regex::Regex::new("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-").unwrap();
    for backend in backends() {
        let app = spawn_app(backend).await;
        let route = [
            ("method", "GET"),
            ("route", "/care/missingInformationRequest/{uuid}"),
            ("status", "200"),
        ];
        let before = value(&metrics(&app).await, "slipway_http_requests_total", &route);
        for _ in 0..3 {
            let (status, body) = app.mi_get(STAFF, ACTIVE).await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        let (status, _) = app
            .send(reqwest::Method::GET, "/no/such/route", Some(STAFF), None)
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let body = metrics(&app).await;
        assert_eq!(
            value(&body, "slipway_http_requests_total", &route) - before,
            3.0,
            "{body}"
        );
        let unmatched = [("method", "GET"), ("route", "unmatched"), ("status", "404")];
        assert!(
            value(&body, "slipway_http_requests_total", &unmatched) >= 1.0,
            "{body}"
        );
        assert!(
            value(
                &body,
                "slipway_http_request_duration_seconds_count",
                &route[..2]
            ) >= 3.0,
            "{body}"
        );
        assert!(!uuid.is_match(&body), "an id reached a label:\n{body}");
        for secret in [STAFF, ADMIN, "no/such"] {
            assert!(!body.contains(secret), "{secret} reached a label:\n{body}");
        }
        app.finish().await;
    }
}

/// The routes of a configured namespace and base path are templates too.
#[tokio::test]
async fn templates_follow_the_base_path_and_namespace() {
    let backend = backends()[0];
    let app = spawn_app_with(backend, |c| {
        c.base_path = "/services/apexrest".into();
        c.namespace = "mvn".into();
    })
    .await;
    let r = app
        .client
        .get(app.url(&format!("/mvn/missingInformationRequest/{ACTIVE}")))
        .bearer_auth(STAFF)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let body = metrics(&app).await;
    let route = [
        ("method", "GET"),
        (
            "route",
            "/services/apexrest/mvn/missingInformationRequest/{uuid}",
        ),
        ("status", "200"),
    ];
    assert_eq!(
        value(&body, "slipway_http_requests_total", &route),
        1.0,
        "{body}"
    );
    app.finish().await;
}

/// An accepted, a rejected and a forbidden enrollment each move their counter by one; a
/// new missing-information request moves its status's gauge, and completing it moves it on.
#[tokio::test]
async fn domain_figures_follow_what_happens() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let enrollments = "slipway_care_enrollments_total";
        let requests = "slipway_care_missing_information_requests";
        let before = metrics(&app).await;
        let (status, body) = app.enroll(STAFF, &full_enrollment("METRICS-1")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, body) = app.enroll(STAFF, &json!({ "vendorName": "DemoRx" })).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let (status, body) = app.enroll(RESTRICTED, &full_enrollment("METRICS-2")).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
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
                    "expirationDate": "2099-12-31"
                }),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let after = metrics(&app).await;
        for (outcome, moved) in [("accepted", 1.0), ("rejected", 1.0), ("forbidden", 1.0)] {
            let labels = [("outcome", outcome)];
            assert_eq!(
                value(&after, enrollments, &labels) - value(&before, enrollments, &labels),
                moved,
                "{outcome}:\n{after}"
            );
        }
        let active = [("status", "Active")];
        assert_eq!(
            value(&after, requests, &active) - value(&before, requests, &active),
            1.0,
            "{after}"
        );
        let (status, body) = app
            .admin_put(
                &format!("/data-requests/{uuid}"),
                &json!({
                    "carePlanExternalId": existing["carePlanExternalId"],
                    "groupId": existing["groupId"],
                    "status": "Cancelled",
                    "expirationDate": "2099-12-31"
                }),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let last = metrics(&app).await;
        let cancelled = [("status", "Cancelled")];
        assert_eq!(
            value(&last, requests, &active),
            value(&before, requests, &active)
        );
        assert_eq!(
            value(&last, requests, &cancelled) - value(&before, requests, &cancelled),
            1.0,
            "{last}"
        );
        app.finish().await;
    }
}
