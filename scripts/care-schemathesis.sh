#!/usr/bin/env bash
# Runs schemathesis against a running care service and fails on any server error or any
# response that does not match the OpenAPI document.
#
# Usage: scripts/care-schemathesis.sh BASE_URL [MAX_EXAMPLES]
#   BASE_URL is where `slipway care serve --demo` listens, including --base-path if any,
#   for example http://127.0.0.1:8080. The demo token `demo-staff` is sent.
#   Start the server first, e.g. `slipway care serve --listen 127.0.0.1:8080 --demo`
#   (or `cargo run -p slipway-care --example serve -- 127.0.0.1:8080 --demo`).
#
# schemathesis is installed into a venv (default /tmp/slipway-schemathesis, override with
# SCHEMATHESIS_VENV) on first use.
#
# Excluded check: positive_data_acceptance — a schema-valid enrollment still needs existing
# vendors, programs, products and purposes, and a schema-valid UUID still needs an existing
# data request, so 400/404 answers to generated data are correct, not failures.
# Skipped phase: coverage — schemathesis 4.32's coverage phase crashes inside hypothesis on
# Python 3.11 ("AST constructor recursion depth mismatch"), a tool bug, not an API finding.
set -euo pipefail

base="${1:?usage: $0 BASE_URL [MAX_EXAMPLES]}"
base="${base%/}"
max_examples="${2:-50}"
venv="${SCHEMATHESIS_VENV:-/tmp/slipway-schemathesis}"

if [ ! -x "$venv/bin/schemathesis" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis>=4,<5"
fi

for _ in $(seq 1 60); do
    if curl -fsS "$base/openapi.json" >/dev/null 2>&1; then break; fi
    sleep 1
done

exec "$venv/bin/schemathesis" run "$base/openapi.json" \
    --url "$base" \
    --header "Authorization: Bearer demo-staff" \
    --checks all \
    --exclude-checks positive_data_acceptance \
    --max-examples "$max_examples" \
    --workers 2 \
    --max-time "${SCHEMATHESIS_MAX_TIME:-120}" \
    --phases examples,fuzzing,stateful \
    --seed 1
