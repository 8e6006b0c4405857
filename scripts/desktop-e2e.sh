#!/usr/bin/env bash
# Builds the desktop app and drives its real window through WebDriver under Xvfb.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tauri-driver >/dev/null || cargo install tauri-driver --locked --quiet
cargo build -p slipway-desktop --quiet
export SLIPWAY_DESKTOP_BIN="$PWD/target/debug/slipway-desktop"
xvfb-run -a dbus-run-session -- bash -c '
  export NO_AT_BRIDGE=1
  tauri-driver --native-driver /usr/bin/WebKitWebDriver >/tmp/slipway-tauri-driver.log 2>&1 &
  driver=$!
  for _ in $(seq 1 50); do curl -s http://127.0.0.1:4444/status >/dev/null && break; sleep 0.2; done
  status=0
  python3 tests/desktop/test_desktop.py || status=$?
  kill $driver 2>/dev/null || true
  exit $status
'
