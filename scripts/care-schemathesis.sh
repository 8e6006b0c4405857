#!/usr/bin/env bash
# Runs schemathesis against a running care service with EVERY check enabled: no server
# error, responses as documented, schema-invalid data rejected and schema-valid data
# accepted (positive_data_acceptance included).
#
# Usage: scripts/care-schemathesis.sh BASE_URL [MAX_EXAMPLES]
#   BASE_URL is where a FRESH `slipway care serve --demo` listens, including --base-path if
#   any, for example http://127.0.0.1:8080. The demo token `demo-staff` is sent. Fresh,
#   because the run completes the demo's active data request (its example POST).
#   Start the server first, e.g. `slipway care serve --listen 127.0.0.1:8080 --demo`
#   (or `cargo run -p slipway-care --example serve -- 127.0.0.1:8080 --demo`).
#
# schemathesis is installed into a venv (default /tmp/slipway-schemathesis, override with
# SCHEMATHESIS_VENV) on first use.
#
# The OpenAPI document says every syntactic rule of the validator (it is generated from the
# validator's tables). What no schema can say (records of the deployment, rules across keys,
# month lengths) is handled for positive cases by scripts/care-schemathesis-hooks.py, and a
# 412 to a schema-valid missing-information POST is allowed by scripts/care-schemathesis.toml
# (which fields fulfil a data request is stored data); both files say why.
# Skipped phase: coverage — schemathesis 4.32's coverage phase crashes inside hypothesis on
# Python 3.11 ("AST constructor recursion depth mismatch"), a tool bug, not an API finding.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
base="${1:?usage: $0 BASE_URL [MAX_EXAMPLES]}"
base="${base%/}"
max_examples="${2:-50}"

schemathesis=$(bash "$here/schemathesis-venv.sh")

for _ in $(seq 1 60); do
    if curl -fsS "$base/openapi.json" >/dev/null 2>&1; then break; fi
    sleep 1
done

export SCHEMATHESIS_HOOKS="$here/care-schemathesis-hooks.py"
exec "$schemathesis" --config-file "$here/care-schemathesis.toml" run "$base/openapi.json" \
    --url "$base" \
    --header "Authorization: Bearer demo-staff" \
    --checks all \
    --max-examples "$max_examples" \
    --workers 2 \
    --max-time "${SCHEMATHESIS_MAX_TIME:-150}" \
    --phases examples,fuzzing,stateful \
    --seed 1
