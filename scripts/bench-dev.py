#!/usr/bin/env python3
"""Save-to-serve benchmark of `slipway dev` (see BENCHMARKS.md).

Starts a platform (native builder, process runtime) in a temporary directory, scaffolds the
python-api template, runs `slipway dev` on it, then measures, for each of N edits, the time
from saving `main.py` (written to a temporary file and renamed over the original, as editors
do) to the first response of the app's URL that carries the edit. The baseline, in the same
sitting, is the same measure when the edit touches `requirements.txt` too, which makes the
loop build in full (what every save cost before sync builds).

Usage: python3 scripts/bench-dev.py [SLIPWAY_BINARY] [--edits N] [--full-edits M]
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(gateway, host):
    request = urllib.request.Request(f"http://127.0.0.1:{gateway}/", headers={"Host": f"{host}:{gateway}"})
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return response.read().decode()
    except Exception:
        return ""


def save(path, text):
    temp = path + ".tmp~"
    with open(temp, "w") as f:
        f.write(text)
    os.rename(temp, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default="target/release/slipway")
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--full-edits", type=int, default=3)
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    work = tempfile.mkdtemp(prefix="slipway-bench-dev-")
    port, gateway = free_port(), free_port()
    data = os.path.join(work, "platform")
    platform = subprocess.Popen(
        [binary, "platform", "serve", "--builder", "native", "--runtime", "process",
         "--listen", f"127.0.0.1:{port}", "--gateway-listen", f"127.0.0.1:{gateway}", "--data-dir", data],
        env={**os.environ, "RUST_LOG": "error"},
    )
    dev = None
    try:
        token_file = os.path.join(data, "bootstrap-token")
        for _ in range(300):
            if os.path.exists(token_file):
                break
            time.sleep(0.1)
        env = {**os.environ, "SLIPWAY_PLATFORM_URL": f"http://127.0.0.1:{port}",
               "SLIPWAY_TOKEN": open(token_file).read().strip(), "NO_COLOR": "1"}
        subprocess.run([binary, "new", "benchdev", "--template", "python-api"], cwd=work, env=env,
                       check=True, stdout=subprocess.DEVNULL)
        project = os.path.join(work, "benchdev")
        dev = subprocess.Popen([binary, "dev", "--no-logs"], cwd=project, env=env,
                               stdout=subprocess.PIPE, text=True)
        lines = []
        ready = threading.Event()

        def read():
            for line in dev.stdout:
                lines.append(line.rstrip("\n"))
                if line.startswith("==> RUNNING"):
                    ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(600):
            sys.exit("slipway dev never reached RUNNING:\n" + "\n".join(lines))
        host = "benchdev.localhost"
        main_py = os.path.join(project, "main.py")
        requirements = os.path.join(project, "requirements.txt")
        original = open(main_py).read()
        original_requirements = open(requirements).read()
        anchor = '"docs": "/docs"'

        def measure(n, full):
            marker = f"edit-{'full' if full else 'sync'}-{n}"
            time.sleep(1.0)  # the loop is back to watching
            if full:
                save(requirements, original_requirements + f"# {marker}\n")
            started = time.monotonic()
            save(main_py, original.replace(anchor, f'{anchor}, "marker": "{marker}"', 1))
            deadline = started + 600
            while time.monotonic() < deadline:
                if marker in fetch(gateway, host):
                    return time.monotonic() - started
                time.sleep(0.01)
            sys.exit(f"{marker} was never served:\n" + "\n".join(lines[-30:]))

        sync_times = [measure(n, False) for n in range(args.edits)]
        full_times = [measure(n, True) for n in range(args.full_edits)]
        result = {
            "edits": args.edits,
            "sync_median_s": round(statistics.median(sync_times), 3),
            "sync_max_s": round(max(sync_times), 3),
            "full_edits": args.full_edits,
            "full_median_s": round(statistics.median(full_times), 3),
            "ratio_full_over_sync": round(statistics.median(full_times) / statistics.median(sync_times), 1),
            "sync_times_s": [round(t, 3) for t in sync_times],
            "full_times_s": [round(t, 3) for t in full_times],
        }
        print(json.dumps(result, indent=2))
    finally:
        if dev:
            dev.terminate()
            dev.wait(30)
        platform.terminate()
        platform.wait(60)


if __name__ == "__main__":
    main()
