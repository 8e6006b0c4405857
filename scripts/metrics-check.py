"""Independent check of a running server's /metrics with Prometheus's own Python parsers.

Usage: python metrics-check.py SERVICE BASE_URL [TOKEN]
  SERVICE: care or platform.
  BASE_URL: a running `slipway care serve --demo` (including --base-path if any) or
  `slipway platform serve`. It starts nothing itself.
  TOKEN: a token allowed to read the metrics; for care it defaults to the demo's admin token
  (demo-admin), for the platform pass the owner's (DATA_DIR/bootstrap-token).

Checks: without a token the answer is 401; the default answer is the Prometheus text format
0.0.4 and parses with prometheus_client.parser.text_string_to_metric_families; the expected
families are there with their types; N requests to one route move the counter of that
route's template by exactly N; no label value looks like a UUID; and the OpenMetrics answer
(Accept: application/openmetrics-text) parses with the strict OpenMetrics parser. Every
metric the Grafana dashboard (docs/grafana/slipway.json) queries that belongs to SERVICE (or
to both servers) must be among the families, so the dashboard cannot drift from the names.
Exit status 0 on success; any failure raises.
"""

import json
import pathlib
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families

COMMON = {
    "slipway_http_requests": "counter",
    "slipway_http_request_duration_seconds": "histogram",
    "slipway_db_pool_connections": "gauge",
    "slipway_db_pool_idle_connections": "gauge",
    "slipway_db_pool_max_connections": "gauge",
}
SERVICES = {
    "care": {
        "families": {
            "slipway_care_enrollments": "counter",
            "slipway_care_missing_information_requests": "gauge",
        },
        "token": "demo-admin",
        # A public route whose template is known: the OpenAPI document.
        "probe": "/openapi.json",
    },
    "platform": {
        "families": {
            "slipway_platform_apps": "gauge",
            "slipway_platform_builds": "gauge",
            "slipway_platform_deployments": "gauge",
            "slipway_platform_build_queue_length": "gauge",
        },
        "token": None,
        "probe": "/v1/openapi.json",
    },
}
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
REQUESTS = 5
DASHBOARD = pathlib.Path(__file__).resolve().parent.parent / "docs" / "grafana" / "slipway.json"


def get(url, token=None, accept=None):
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if accept:
        req.add_header("Accept", accept)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def scrape(base, token):
    status, content_type, body = get(f"{base}/metrics", token)
    assert status == 200, f"GET /metrics answered {status}: {body[:500]}"
    assert content_type.startswith("text/plain; version=0.0.4"), content_type
    return {f.name: f for f in text_string_to_metric_families(body)}


def requests_of(families, route):
    """The requests counted for GET `route` with status 200."""
    return sum(
        s.value
        for s in families["slipway_http_requests"].samples
        if s.name == "slipway_http_requests_total"
        and s.labels == {"method": "GET", "route": route, "status": "200"}
    )


def dashboard_families(service):
    """The families the dashboard's queries name that SERVICE (or every server) exposes."""
    exprs = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("expr", "definition") and isinstance(value, str):
                    exprs.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(json.loads(DASHBOARD.read_text()))
    names = set()
    for expr in exprs:
        for name in re.findall(r"\bslipway_[a-z_]+", expr):
            name = re.sub(r"_(total|bucket|sum|count)$", "", name)
            if name.startswith(("slipway_http_", "slipway_db_", f"slipway_{service}_")):
                names.add(name)
    return names


def main():
    service, base = sys.argv[1], sys.argv[2].rstrip("/")
    config = SERVICES[service]
    token = sys.argv[3] if len(sys.argv) > 3 else config["token"]
    assert token, "pass the token that may read the metrics"

    status, _, _ = get(f"{base}/metrics")
    assert status == 401, f"without a token: {status}"

    before = scrape(base, token)
    expected = {**COMMON, **config["families"]}
    for name, kind in expected.items():
        assert name in before, f"{name} missing; families: {sorted(before)}"
        assert before[name].type == kind, f"{name} is a {before[name].type}, not a {kind}"

    # The route label is the template as routed: the base path is part of it.
    route = urllib.parse.urlsplit(base).path.rstrip("/") + config["probe"]
    for _ in range(REQUESTS):
        status, _, _ = get(f"{base}{config['probe']}")
        assert status == 200, f"GET {config['probe']}: {status}"
    after = scrape(base, token)
    moved = requests_of(after, route) - requests_of(before, route)
    assert moved == REQUESTS, f"the counter of {route} moved by {moved}, not {REQUESTS}"

    for family in after.values():
        for sample in family.samples:
            for key, value in sample.labels.items():
                assert not UUID.search(value), f"{sample.name}{{{key}={value!r}}} holds an id"

    status, content_type, body = get(
        f"{base}/metrics", token, accept="application/openmetrics-text; version=1.0.0"
    )
    assert status == 200, status
    assert content_type.startswith("application/openmetrics-text"), content_type
    names = {f.name for f in openmetrics_families(body)}
    missing = set(expected) - names
    assert not missing, f"missing from the OpenMetrics answer: {sorted(missing)}"

    unknown = dashboard_families(service) - set(after)
    assert not unknown, f"the dashboard queries metrics this service does not have: {sorted(unknown)}"

    print(
        f"{service}: /metrics parses (text 0.0.4 and OpenMetrics), {len(expected)} families as "
        f"expected, {route} counted {REQUESTS} requests"
    )


if __name__ == "__main__":
    main()
