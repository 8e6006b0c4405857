#!/usr/bin/env python3
"""Start-up time and memory of the desktop window (see BENCHMARKS.md).

Each run starts the desktop binary under a virtual display (run this script itself under
`xvfb-run -a dbus-run-session --`) with a fresh throwaway home, nothing configured, so the
embedded platform and care service with the demo data are what it uses. It measures:

- interactive: from starting the process to the UI reporting its first view rendered (the
  shell prints one line when `SLIPWAY_STARTUP_REPORT=1`; see src-tauri/src/commands/startup.rs);
- memory: the proportional set size (PSS, /proc/<pid>/smaps_rollup) summed over the app and
  every process it started (WebKit's web and network processes), read after the window has
  loaded the demo data (the welcome view) and settled for a few seconds.

Usage: xvfb-run -a dbus-run-session -- python3 scripts/bench-desktop.py [BINARY] [--runs N]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time


def children(pid):
    """Every descendant of pid (from /proc/*/stat's parent field)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                parents.setdefault(int(fields[1]), []).append(int(entry))
            except OSError:
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in parents.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def name(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def one_run(binary, settle):
    home = tempfile.mkdtemp(prefix="slipway-bench-desktop-")
    env = {**os.environ, "XDG_DATA_HOME": f"{home}/data", "XDG_CONFIG_HOME": f"{home}/config",
           "SLIPWAY_CONFIG_DIR": f"{home}/config/slipway", "SLIPWAY_STARTUP_REPORT": "1",
           "NO_AT_BRIDGE": "1", "RUST_LOG": "error"}
    for key in ("SLIPWAY_PLATFORM_URL", "SLIPWAY_TOKEN"):
        env.pop(key, None)
    start = time.monotonic()
    app = subprocess.Popen([binary], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = app.stdout.readline()
        ready = time.monotonic() - start
        if not line.strip().startswith("{"):
            raise SystemExit(f"the window never reported ready (exit code {app.poll()})")
        time.sleep(settle)
        tree = [app.pid] + children(app.pid)
        by_process = {p: pss_kib(p) for p in tree}
        return ready, sum(by_process.values()) / 1024, {f"{name(p)}[{p}]": kib // 1024 for p, kib in by_process.items()}
    finally:
        app.terminate()
        try:
            app.wait(timeout=20)
        except subprocess.TimeoutExpired:
            app.kill()
        shutil.rmtree(home, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default="target/release/slipway-desktop")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--settle", type=float, default=5.0, help="seconds to wait after ready before reading memory")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    one_run(binary, 1.0)  # warms the page cache: the figures are for a warm start
    times, memory = [], []
    for i in range(args.runs):
        ready, mib, parts = one_run(binary, args.settle)
        times.append(ready)
        memory.append(mib)
        print(f"run {i + 1}: interactive after {ready * 1000:.0f} ms; PSS {mib:.0f} MiB {json.dumps(parts)}", flush=True)
    print(f"interactive: median {statistics.median(times) * 1000:.0f} ms (min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f})")
    print(f"PSS of the app and its WebKit processes: median {statistics.median(memory):.0f} MiB (min {min(memory):.0f}, max {max(memory):.0f})")


if __name__ == "__main__":
    main()
