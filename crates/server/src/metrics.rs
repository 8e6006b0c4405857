//! The `/metrics` plumbing both servers share: every request counted and timed by its route
//! template ([`Metrics::track`]), the figures a service reads when it is scraped
//! ([`Figures`]; [`counts`] makes the series of one counted by a stored status), and the
//! exposition itself in the format the scraper asks for ([`Metrics::exposition`]). The
//! service decides who may read it and which figures it has.
//!
//! **No label holds data.** The route is axum's [`MatchedPath`] (`/v1/apps/{app_id}`, never
//! the path with its ids), a request that matched no route is `unmatched`, the method is one
//! of the standard ones or `other`, and every other label value is a `&'static str`: a
//! constant of the code, never a token, a name or a patient's value (a stored status that is
//! not one of the code's counts as [`OTHER`]).
//!
//! The metrics live in the server's state, not in a process-wide registry, so two servers in
//! one process (the desktop's embedded platform and care service, or tests) count apart.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::{EncodeLabelSet, prometheus_text, text};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
pub use prometheus_client::registry::Registry;

/// The `route` label of a request that matched no route (a 404 from the fallback).
pub const UNMATCHED: &str = "unmatched";

/// The content type of the OpenMetrics answer (for a scraper whose `Accept` prefers it).
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The content type of the Prometheus text format (version 0.0.4), the default answer.
pub const TEXT_CONTENT_TYPE: &str = prometheus_text::CONTENT_TYPE;

/// Upper bounds of the latency buckets, in seconds: Prometheus's default buckets, which
/// cover an API answer (milliseconds) up to an upload (seconds).
const LATENCY_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The labels of a counted request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: String,
    status: u16,
}

/// The labels of a timed request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
    route: String,
}

/// One label whose value is a constant of the code.
type ConstLabel = [(&'static str, &'static str); 1];

/// The metrics of one server: its requests by route template, method and status, their
/// latencies, and the counters the service registered of its own. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Metrics {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    durations: Family<RouteLabels, Histogram, fn() -> Histogram>,
}

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// The request metrics alone.
    pub fn new() -> Self {
        Self::with(|_| ()).0
    }

    /// The request metrics and whatever `register` adds to the registry, with what
    /// `register` returns: the handles the service counts with, such as a [`CounterBy`].
    pub fn with<T>(register: impl FnOnce(&mut Registry) -> T) -> (Self, T) {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "slipway_http_requests",
            "HTTP requests answered, by method, route template and status",
            requests.clone(),
        );
        let durations = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram,
        );
        registry.register(
            "slipway_http_request_duration_seconds",
            "Time to answer an HTTP request (until the response headers), by method and route template",
            durations.clone(),
        );
        let handles = register(&mut registry);
        let metrics = Self {
            inner: Arc::new(Inner {
                registry,
                requests,
                durations,
            }),
        };
        (metrics, handles)
    }

    /// Counts and times every request of `router` (routes and fallback). Call it on the
    /// finished router, before `with_state`, so every route has its template.
    pub fn track<S: Clone + Send + Sync + 'static>(&self, router: Router<S>) -> Router<S> {
        router.layer(middleware::from_fn_with_state(self.clone(), record))
    }

    /// The `/metrics` answer: the request metrics, the service's counters and `figures`,
    /// as OpenMetrics when the `Accept` header prefers it (as Prometheus's does), else in the
    /// Prometheus text format 0.0.4.
    ///
    /// # Errors
    ///
    /// A metric that fails to encode (the ones here write to a `String` and do not).
    pub fn exposition(
        &self,
        headers: &HeaderMap,
        figures: &Figures,
    ) -> Result<Response, std::fmt::Error> {
        let mut body = String::new();
        let content_type = if prefers_openmetrics(headers) {
            text::encode_registry(&mut body, &self.inner.registry)?;
            text::encode_registry(&mut body, &figures.registry)?;
            text::encode_eof(&mut body)?;
            OPENMETRICS_CONTENT_TYPE
        } else {
            prometheus_text::encode(&mut body, &self.inner.registry)?;
            prometheus_text::encode(&mut body, &figures.registry)?;
            TEXT_CONTENT_TYPE
        };
        Ok(([(header::CONTENT_TYPE, content_type)], body).into_response())
    }
}

/// The middleware of [`Metrics::track`].
async fn record(State(metrics): State<Metrics>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(req.method());
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or(UNMATCHED, MatchedPath::as_str)
        .to_owned();
    let response = next.run(req).await;
    let elapsed = started.elapsed().as_secs_f64();
    metrics
        .inner
        .requests
        .get_or_create(&RequestLabels {
            method,
            route: route.clone(),
            status: response.status().as_u16(),
        })
        .inc();
    metrics
        .inner
        .durations
        .get_or_create(&RouteLabels { method, route })
        .observe(elapsed);
    response
}

/// The `method` label: a standard method as it is, anything else `other` (a client can send
/// any token as a method; each would be a new series).
fn method_label(method: &Method) -> &'static str {
    const STANDARD: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
    STANDARD
        .into_iter()
        .find(|m| *m == method.as_str())
        .unwrap_or("other")
}

/// Whether `Accept` rates OpenMetrics above the plain text format (RFC 9110 quality values;
/// `text/*` and `*/*` stand for the text format, which is the answer without a preference).
fn prefers_openmetrics(headers: &HeaderMap) -> bool {
    let mut openmetrics = 0.0_f32;
    let mut plain = 0.0_f32;
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else { continue };
        for entry in value.split(',') {
            let mut parts = entry.split(';').map(str::trim);
            let media = parts.next().unwrap_or_default().to_ascii_lowercase();
            let quality = parts
                .filter_map(|p| p.split_once('='))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
                .map_or(1.0, |(_, q)| q.trim().parse::<f32>().unwrap_or(0.0));
            match media.as_str() {
                "application/openmetrics-text" => openmetrics = openmetrics.max(quality),
                "text/plain" | "text/*" | "*/*" => plain = plain.max(quality),
                _ => {}
            }
        }
    }
    openmetrics > plain
}

/// A counter with one label, whose values are constants of the code (an outcome), each
/// exposed from the start at 0 so that a rate is defined before the first event.
#[derive(Clone, Debug)]
pub struct CounterBy {
    label: &'static str,
    family: Family<ConstLabel, Counter>,
}

impl CounterBy {
    /// Registers `name` (without `_total`: the encoding adds it) with one series per value.
    pub fn register(
        registry: &mut Registry,
        name: &str,
        help: &str,
        label: &'static str,
        values: &[&'static str],
    ) -> Self {
        let family = Family::<ConstLabel, Counter>::default();
        for value in values {
            // Creates the series, at 0.
            drop(family.get_or_create(&[(label, *value)]));
        }
        registry.register(name, help, family.clone());
        Self { label, family }
    }

    /// Adds one to the series of `value`.
    pub fn inc(&self, value: &'static str) {
        self.family.get_or_create(&[(self.label, value)]).inc();
    }
}

/// The label value of the stored values none of the known ones spells (see [`counts`]).
pub const OTHER: &str = "other";

/// The series of a gauge counted by a stored column (a status): one count per `known` value,
/// in that order and 0 when no row has it (so a series exists before its first row), and
/// [`OTHER`] for the rows whose stored value is none of them, so a label never carries stored
/// text. `rows` are the `GROUP BY`'s value and count.
pub fn counts(
    known: impl IntoIterator<Item = &'static str>,
    rows: &[(String, i64)],
) -> Vec<(&'static str, i64)> {
    let mut out: Vec<(&'static str, i64)> = known.into_iter().map(|s| (s, 0)).collect();
    let mut other = 0;
    for (value, n) in rows {
        match out.iter_mut().find(|(s, _)| s == value) {
            Some((_, count)) => *count += n,
            None => other += n,
        }
    }
    if other > 0 {
        out.push((OTHER, other));
    }
    out
}

/// The figures a service reads when it is scraped (counts from its database, its pool), as
/// gauges; built anew for each scrape, so no two scrapes share state.
#[derive(Debug, Default)]
pub struct Figures {
    registry: Registry,
}

impl Figures {
    /// No figures yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// One gauge.
    pub fn gauge(&mut self, name: &str, help: &str, value: i64) {
        let gauge = Gauge::<i64>::default();
        gauge.set(value);
        self.registry.register(name, help, gauge);
    }

    /// One gauge per value of `label` (each value a constant of the code, such as a status).
    pub fn gauge_by(
        &mut self,
        name: &str,
        help: &str,
        label: &'static str,
        values: impl IntoIterator<Item = (&'static str, i64)>,
    ) {
        let family = Family::<ConstLabel, Gauge>::default();
        for (value, count) in values {
            family.get_or_create(&[(label, value)]).set(count);
        }
        self.registry.register(name, help, family);
    }

    /// The database pool's connections: open, idle and the most it may open (what the writer
    /// queue and the spare connections hold counts as in use).
    #[cfg(feature = "db")]
    pub fn pool(&mut self, db: &crate::db::Db) {
        let pool = db.pool();
        self.gauge(
            "slipway_db_pool_connections",
            "Connections the database pool holds open",
            i64::from(pool.size()),
        );
        self.gauge(
            "slipway_db_pool_idle_connections",
            "Open connections of the database pool that no request holds",
            i64::try_from(pool.num_idle()).unwrap_or(i64::MAX),
        );
        self.gauge(
            "slipway_db_pool_max_connections",
            "The most connections the database pool opens",
            i64::from(pool.options().get_max_connections()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::{HeaderValue, StatusCode};
    use axum::routing::get;
    use tower::ServiceExt as _;

    async fn call(app: &Router, method: &str, path: &str) -> StatusCode {
        let req = Request::builder()
            .method(method)
            .uri(path)
            .body(Body::empty())
            .unwrap();
        app.clone().oneshot(req).await.unwrap().status()
    }

    async fn scrape(metrics: &Metrics, accept: Option<&str>) -> (String, String) {
        let mut headers = HeaderMap::new();
        if let Some(a) = accept {
            headers.insert(header::ACCEPT, HeaderValue::from_str(a).unwrap());
        }
        let response = metrics.exposition(&headers, &Figures::new()).unwrap();
        let content_type = response.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .to_owned();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (content_type, String::from_utf8(body.to_vec()).unwrap())
    }

    fn app(metrics: &Metrics) -> Router {
        let nested = Router::new().route("/items/{id}", get(|| async { "item" }));
        let router = Router::new()
            .nest("/v1", nested)
            .fallback(|| async { StatusCode::NOT_FOUND });
        metrics.track(router)
    }

    /// The label is the template of the route, nested prefix included; the ids of the
    /// paths reach no label, and a path no route matches is `unmatched`.
    #[tokio::test]
    async fn requests_are_counted_by_route_template() {
        let metrics = Metrics::new();
        let app = app(&metrics);
        for id in ["7f3c", "secret-id-1", "7f3c"] {
            assert_eq!(
                call(&app, "GET", &format!("/v1/items/{id}")).await,
                StatusCode::OK
            );
        }
        assert_eq!(
            call(&app, "GET", "/v1/elsewhere/secret-id-2").await,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            call(&app, "BREW", "/v1/items/1").await,
            StatusCode::METHOD_NOT_ALLOWED
        );
        let (content_type, body) = scrape(&metrics, None).await;
        assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
        for line in [
            "# TYPE slipway_http_requests_total counter",
            r#"slipway_http_requests_total{method="GET",route="/v1/items/{id}",status="200"} 3"#,
            r#"slipway_http_requests_total{method="GET",route="unmatched",status="404"} 1"#,
            r#"slipway_http_requests_total{method="other",route="/v1/items/{id}",status="405"} 1"#,
            "# TYPE slipway_http_request_duration_seconds histogram",
            r#"slipway_http_request_duration_seconds_count{method="GET",route="/v1/items/{id}"} 3"#,
            r#"slipway_http_request_duration_seconds_bucket{method="GET",route="/v1/items/{id}",le="+Inf"} 3"#,
        ] {
            assert!(
                body.lines().any(|l| l == line),
                "{line} missing from\n{body}"
            );
        }
        for id in ["7f3c", "secret-id", "BREW", "elsewhere"] {
            assert!(!body.contains(id), "{id} reached a label:\n{body}");
        }
        assert!(!body.contains("# EOF"), "{body}");
    }

    /// Prometheus asks for OpenMetrics first; curl and the parsers of the text format get
    /// the text format.
    #[tokio::test]
    async fn the_format_follows_the_accept_header() {
        let metrics = Metrics::new();
        call(&app(&metrics), "GET", "/v1/items/1").await;
        let prometheus = "application/openmetrics-text;version=1.0.0;q=0.5,\
                          application/openmetrics-text;version=0.0.1;q=0.4,\
                          text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
        for (accept, openmetrics) in [
            (Some(prometheus), true),
            (Some("application/openmetrics-text"), true),
            (None, false),
            (Some("*/*"), false),
            (Some("text/plain"), false),
            (
                Some("text/plain, application/openmetrics-text;q=0.9"),
                false,
            ),
            (Some("application/json"), false),
            (Some("application/openmetrics-text;q=0"), false),
        ] {
            let (content_type, body) = scrape(&metrics, accept).await;
            if openmetrics {
                assert_eq!(content_type, OPENMETRICS_CONTENT_TYPE, "{accept:?}");
                assert!(body.ends_with("# EOF\n"), "{accept:?}: {body}");
                assert!(
                    body.contains("# TYPE slipway_http_requests counter"),
                    "{body}"
                );
            } else {
                assert_eq!(content_type, TEXT_CONTENT_TYPE, "{accept:?}");
                assert!(
                    body.contains("# TYPE slipway_http_requests_total counter"),
                    "{body}"
                );
            }
        }
    }

    /// Every known value has its count, 0 included, in the order given; a stored value none
    /// of them spells (a name, a typo) adds to `other` and never becomes a label.
    #[test]
    fn counts_keep_the_known_values_and_fold_the_rest_into_other() {
        let rows = [("open", 2), ("Jane Doe", 1), ("closed", 5), ("my-app", 3)]
            .map(|(value, n)| (value.to_owned(), n));
        assert_eq!(
            counts(["closed", "open", "stale"], &rows),
            vec![("closed", 5), ("open", 2), ("stale", 0), ("other", 4)]
        );
        assert_eq!(
            counts(["open"], &[("open".to_owned(), 1)]),
            vec![("open", 1)],
            "no `other` series without an unknown value"
        );
    }

    /// A service's own counter starts every series at 0; figures come out as gauges.
    #[tokio::test]
    async fn counters_by_outcome_and_figures_are_exposed() {
        let (metrics, outcomes) = Metrics::with(|registry| {
            CounterBy::register(
                registry,
                "slipway_test_outcomes",
                "Outcomes",
                "outcome",
                &["accepted", "rejected"],
            )
        });
        outcomes.inc("accepted");
        let mut figures = Figures::new();
        figures.gauge("slipway_test_queue_length", "Queue", 4);
        figures.gauge_by(
            "slipway_test_items",
            "Items",
            "status",
            [("open", 2), ("closed", 0)],
        );
        let response = metrics.exposition(&HeaderMap::new(), &figures).unwrap();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let body = String::from_utf8(body.to_vec()).unwrap();
        for line in [
            r#"slipway_test_outcomes_total{outcome="accepted"} 1"#,
            r#"slipway_test_outcomes_total{outcome="rejected"} 0"#,
            "# TYPE slipway_test_queue_length gauge",
            "slipway_test_queue_length 4",
            r#"slipway_test_items{status="open"} 2"#,
            r#"slipway_test_items{status="closed"} 0"#,
        ] {
            assert!(
                body.lines().any(|l| l == line),
                "{line} missing from\n{body}"
            );
        }
    }
}
