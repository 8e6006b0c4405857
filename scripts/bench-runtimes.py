#!/usr/bin/env python3
"""Build-to-RUNNING benchmark of the python-api template: the container runtime (buildah
builds the template's Dockerfile, podman runs it) against the process runtime (the native
builder runs the devfile's build command, the service runs as a process), in one sitting
(see BENCHMARKS.md).

For each runtime a platform is started in a temporary directory, a python-api project is
scaffolded, and `slipway build` runs once to warm that runtime's caches (pip's download
cache; buildah's base image and layers). Then, N times, `main.py` is edited and the time from
starting `slipway build` to the app answering its new content at the URL status reports
(Python's urllib, which is also what proves the URL reachable) is measured.

The container runtime needs podman, buildah and python:3.12-slim (`bash scripts/dev images`).

Usage: python3 scripts/bench-runtimes.py [SLIPWAY_BINARY] [--runs N]
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read().decode()
    except Exception:
        return ""


def measure(binary, runtime, builder, runs):
    work = tempfile.mkdtemp(prefix=f"slipway-bench-{runtime}-")
    port, gateway = free_port(), free_port()
    data = os.path.join(work, "platform")
    command = [binary, "platform", "serve", "--builder", builder, "--runtime", runtime,
               "--listen", f"127.0.0.1:{port}", "--gateway-listen", f"127.0.0.1:{gateway}",
               "--data-dir", data]
    if runtime == "container" and os.path.exists("/etc/ssl/certs/ca-certificates.crt"):
        command += ["--build-ca-bundle", "/etc/ssl/certs/ca-certificates.crt"]
    platform = subprocess.Popen(command, env={**os.environ, "RUST_LOG": "error"})
    try:
        token_file = os.path.join(data, "bootstrap-token")
        for _ in range(600):
            if os.path.exists(token_file):
                break
            time.sleep(0.1)
        env = {**os.environ, "SLIPWAY_PLATFORM_URL": f"http://127.0.0.1:{port}",
               "SLIPWAY_TOKEN": open(token_file).read().strip(), "NO_COLOR": "1"}
        subprocess.run([binary, "new", "benchrt", "--template", "python-api"], cwd=work, env=env,
                       check=True, stdout=subprocess.DEVNULL)
        project = os.path.join(work, "benchrt")
        main_py = os.path.join(project, "main.py")
        source = open(main_py).read()
        app_id = None
        times = []
        for run in range(runs + 1):
            marker = f"run-{run}-{time.time_ns()}"
            with open(main_py, "w") as f:
                f.write(source.replace('"docs": "/docs"', f'"docs": "/docs", "bench": "{marker}"', 1))
            start = time.monotonic()
            subprocess.run([binary, "build"], cwd=project, env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if app_id is None:
                app_id = json.load(open(os.path.join(project, ".app")))["app_id"]
            deadline = start + 600
            while time.monotonic() < deadline:
                status = json.loads(subprocess.run(
                    [binary, "call", "get_app_status", json.dumps({"app_id": app_id})],
                    env=env, check=True, capture_output=True, text=True).stdout)
                url = status.get("app_url")
                if status.get("status") == "RUNNING" and url and marker in get(url + "/"):
                    break
                time.sleep(0.05)
            else:
                raise SystemExit(f"{runtime}: run {run} never served its edit: {status}")
            elapsed = time.monotonic() - start
            if run > 0:  # run 0 warms the caches
                times.append(elapsed)
            print(f"{runtime:9} run {run}: {elapsed:6.2f} s{'  (warm-up)' if run == 0 else ''}", flush=True)
        return times
    finally:
        platform.terminate()
        platform.wait(timeout=60)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default="target/release/slipway")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    process = measure(binary, "process", "native", args.runs)
    container = measure(binary, "container", "buildah", args.runs)
    p, c = statistics.median(process), statistics.median(container)
    print(f"process   (native builder):  median {p:.2f} s  min {min(process):.2f}  max {max(process):.2f}")
    print(f"container (buildah, podman): median {c:.2f} s  min {min(container):.2f}  max {max(container):.2f}")
    print(f"container / process: {c / p:.2f}x")


if __name__ == "__main__":
    main()
