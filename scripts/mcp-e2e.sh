#!/usr/bin/env bash
# Drives `slipway mcp` and the platform's `/mcp` with the official Python MCP client (a client
# this project did not write) through the whole workflow against a real platform server.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${MCP_VENV:-/tmp/slipway-mcp-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import mcp" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp>=2.3,<3"
fi
cargo build -q -p slipway-cli
# The stdio server (`slipway mcp`), then the platform's own (`/mcp`, Streamable HTTP), side by
# side: each starts its own platform.
SLIPWAY_BIN="$PWD/target/debug/slipway" "$venv/bin/python" tests/mcp/test_mcp.py &
stdio=$!
(cd tests/mcp && SLIPWAY_BIN="$PWD/../../target/debug/slipway" "$venv/bin/python" -m unittest test_remote_mcp)
wait "$stdio"
# The official conformance suite against /mcp (revision 2026-07-28, with the baseline).
bash scripts/mcp-conformance.sh
