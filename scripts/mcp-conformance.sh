#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, the release that knows
# 2026-07-28) against a real platform's /mcp, with the requirements of revision 2026-07-28 and
# the committed baseline of excused checks (tests/mcp/conformance-baseline.yml, each with its
# reason). The suite takes a URL only, so a small proxy adds the platform's token
# (tests/mcp/auth_proxy.py). The suite needs Node >= 22: npm's `node@22` package brings one
# into the suite's own directory, leaving the system's Node alone.
set -euo pipefail
cd "$(dirname "$0")/.."
slipway="${SLIPWAY_BIN:-$PWD/target/debug/slipway}"
suite="${MCP_CONFORMANCE_DIR:-/tmp/slipway-mcp-conformance}"
version=0.2.0-alpha.12
if [ ! -x "$suite/node_modules/.bin/conformance" ] || ! grep -q "\"version\": \"$version\"" "$suite/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null; then
  mkdir -p "$suite"
  (cd "$suite" && [ -f package.json ] || npm init -y >/dev/null)
  (cd "$suite" && npm install --no-audit --no-fund --silent "@modelcontextprotocol/conformance@$version" node@22)
fi
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
data=$(mktemp -d)
api=$(port); proxy=$(port)
"$slipway" platform serve --listen "127.0.0.1:$api" --gateway-listen "127.0.0.1:$(port)" \
  --data-dir "$data" --builder native >"$data/server.log" 2>&1 &
server=$!
trap 'kill "$server" ${proxy_pid:-} 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 1 300); do
  [ -s "$data/bootstrap-token" ] && curl -sf "http://127.0.0.1:$api/health" >/dev/null && break
  sleep 0.1
done
python3 tests/mcp/auth_proxy.py "$proxy" "http://127.0.0.1:$api" "$(cat "$data/bootstrap-token")" &
proxy_pid=$!
for _ in $(seq 1 100); do
  curl -s -o /dev/null "http://127.0.0.1:$proxy/health" && break
  sleep 0.1
done
PATH="$suite/node_modules/.bin:$PATH" conformance server --url "http://127.0.0.1:$proxy/mcp" \
  --requirements 2026-07-28 --expected-failures tests/mcp/conformance-baseline.yml \
  --output-dir "$data/results"
