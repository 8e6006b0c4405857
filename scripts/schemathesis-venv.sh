#!/usr/bin/env bash
# Prints the path of schemathesis 4 in its virtual environment (SCHEMATHESIS_VENV, default
# /tmp/slipway-schemathesis), creating the environment first when it lacks it. Both
# schemathesis scripts use it; `scripts/dev test` calls it once before starting them side by
# side, so the two never create the same environment at once.
set -euo pipefail
venv="${SCHEMATHESIS_VENV:-/tmp/slipway-schemathesis}"
if [ ! -x "$venv/bin/schemathesis" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis>=4,<5"
fi
echo "$venv/bin/schemathesis"
