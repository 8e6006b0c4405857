#!/usr/bin/env bash
# Builds the desktop app and drives its real window through WebDriver under Xvfb
# (tests/desktop/test_desktop.py).
#   SLIPWAY_DEB=target/debug/bundle/deb/slipway_….deb bash scripts/desktop-e2e.sh
# instead tests that package as a user gets it (tests/desktop/test_package.py, as root):
# installed with apt-get, its window started and started again with a slipway:// link, then
# removed. Nothing is built then: the package holds the app.
#
# WebKitWebDriver on this kind of machine sometimes drops a WebDriver connection mid-session
# ("Remote end closed connection"). That is the driver, not the app: such a run is repeated
# (up to 5 times, each with a fresh driver and window). Any assertion failure fails at once.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tauri-driver >/dev/null || cargo install tauri-driver --locked --quiet
suite=tests/desktop/test_desktop.py
if [ -n "${SLIPWAY_DEB+set}" ]; then
  [ -f "$SLIPWAY_DEB" ] || { echo "desktop e2e: SLIPWAY_DEB=$SLIPWAY_DEB is not a file" >&2; exit 2; }
  suite=tests/desktop/test_package.py
  SLIPWAY_DEB=$(realpath "$SLIPWAY_DEB")
  export SLIPWAY_DEB SLIPWAY_DESKTOP_BIN=/usr/bin/slipway-desktop
else
  # The UI's unit tests (api.js, the form state) first: no window needed. With SCREENSHOT_DIR
  # set (for example docs/screenshots), the run saves a PNG of every view there.
  if command -v node >/dev/null; then (cd ui && node --test tests/); else echo "node not found: skipping the UI unit tests" >&2; fi
  # axe-core, which the tests inject into the window to check every view against WCAG 2.1
  # A and AA: exactly the version tests/desktop/package-lock.json pins.
  command -v npm >/dev/null || { echo "desktop e2e: npm is needed for axe-core (apt-get install npm)" >&2; exit 2; }
  (cd tests/desktop && npm ci --prefer-offline --no-audit --no-fund --loglevel=error)
  export SLIPWAY_DESKTOP_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/slipway-desktop"
  # The window's files are embedded at compile time, and cargo does not notice a changed file
  # deep in ui/: recompile the shell when any is newer than the binary.
  if [ -e "$SLIPWAY_DESKTOP_BIN" ] && [ -n "$(find ui -type f -newer "$SLIPWAY_DESKTOP_BIN" -print -quit)" ]; then
    touch src-tauri/src/lib.rs
  fi
  cargo build -p slipway-desktop -p slipway-cli --bins --quiet
  # The notification server the worklist's notification test reads and clicks (no desktop
  # runs one under Xvfb): tests/notification-server, in a cargo call of its own so that its
  # dependencies' features never change the app's build (the app tested is the one shipped).
  cargo build -p slipway-notification-server --quiet
  export SLIPWAY_NOTIFICATION_SERVER_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/notification_server"
  # The tests add a platform user with the CLI, as an admin would.
  export SLIPWAY_CLI_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/slipway"
fi
unset SLIPWAY_PLATFORM_URL SLIPWAY_TOKEN
# WebKitWebDriver's screenshots hang on some pages when compositing is off (the window's lean
# default): a screenshot run keeps WebKit's defaults. The tests themselves run as users do.
if [ -n "${SCREENSHOT_DIR:-}" ]; then export SLIPWAY_WEBVIEW_DEFAULTS=1; fi
for attempt in 1 2 3 4 5; do
  # No platform configured: the app starts its embedded one under a fresh throwaway home.
  home=$(mktemp -d)
  if [ "$suite" = tests/desktop/test_package.py ]; then
    # The installed app keeps its data where a user's would be: under a throwaway HOME.
    unset XDG_DATA_HOME XDG_CONFIG_HOME SLIPWAY_CONFIG_DIR
    export HOME="$home"
  else
    export XDG_DATA_HOME="$home/data" XDG_CONFIG_HOME="$home/config" SLIPWAY_CONFIG_DIR="$home/config/slipway"
  fi
  # The system browser is an edge faked here (the notification server above is the other): an
  # xdg-open first on PATH records what the window asked it to open, and which of the window's
  # own settings reached it.
  mkdir -p "$home/bin"
  cat >"$home/bin/xdg-open" <<'FAKE'
#!/bin/sh
{
  echo "url=$1"
  for v in JSC_useJIT GDK_GL WEBKIT_DISABLE_DMABUF_RENDERER WEBKIT_WEB_RENDER_DEVICE_FILE SLIPWAY_LEAN_ENV; do
    eval "echo $v=\${$v-unset}"
  done
} >"$SLIPWAY_E2E_OPENED.tmp" && mv "$SLIPWAY_E2E_OPENED.tmp" "$SLIPWAY_E2E_OPENED"
FAKE
  chmod +x "$home/bin/xdg-open"
  export PATH="$home/bin:$PATH" SLIPWAY_E2E_OPENED="$home/opened"
  log=$(mktemp)
  status=0
  # Free ports for this run's drivers: a WebDriver left over from something else on the
  # default 4444 must never answer for this run.
  read -r port native_port < <(python3 -c 'import socket
ports = []
for _ in range(2):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); ports.append(s); 
print(*(p.getsockname()[1] for p in ports))')
  export E2E_SUITE=$suite E2E_TESTS=${E2E_TESTS:-} DRIVER_PORT=$port NATIVE_PORT=$native_port WEBDRIVER_URL="http://127.0.0.1:$port"
  xvfb-run -a dbus-run-session -- bash -c '
    export NO_AT_BRIDGE=1
    tauri-driver --port "$DRIVER_PORT" --native-port "$NATIVE_PORT" --native-driver /usr/bin/WebKitWebDriver >/tmp/slipway-tauri-driver.log 2>&1 &
    driver=$!
    trap "kill $driver 2>/dev/null || true" EXIT
    for _ in $(seq 1 50); do curl -s "$WEBDRIVER_URL/status" >/dev/null && break; sleep 0.2; done
    status=0
    python3 "$E2E_SUITE" $E2E_TESTS || status=$?
    kill $driver 2>/dev/null || true
    exit $status
  ' >"$log" 2>&1 || status=$?
  # Each test's outcome, then the end of the run (a failure's traceback).
  grep -E -e '\.\.\. (ok|ERROR|FAIL)' -e '^(ERROR|FAIL):' "$log" || true
  grep -v -e dbus-daemon -e portal -e PipeWire -e pw.conf "$log" | tail -n 30
  rm -rf "$home"
  # A failed attempt's whole log is kept for reading (the lines above are only its end).
  if [ "$status" -ne 0 ]; then cp "$log" "${TMPDIR:-/tmp}/slipway-desktop-e2e-attempt-$attempt.log"; fi
  if [ "$status" -eq 0 ]; then
    rm -f "$log"
    exit 0
  fi
  if ! grep -q -e RemoteDisconnected -e "Connection reset" -e "Connection refused" "$log"; then
    rm -f "$log"
    exit "$status"
  fi
  rm -f "$log"
  echo "desktop e2e: the WebDriver connection dropped (attempt $attempt of 5); retrying with a fresh driver" >&2
done
exit 1
