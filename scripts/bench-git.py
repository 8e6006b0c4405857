#!/usr/bin/env python3
"""Push-to-serving benchmark of the python-api template: the git path (a push to a bare
repository, then the forge's signed push event; the platform fetches, packs and builds the
commit) against the upload path (`slipway build` packs the checkout and uploads it), on one
platform, in one sitting (see BENCHMARKS.md).

A platform (process runtime, native builder) is started in a temporary directory, a
python-api project is scaffolded and committed to a bare repository served over smart HTTP
by `git http-backend` (behind this script's own HTTP server), and the app is connected to it.
Each path runs once to warm the caches (pip's, the fetch cache), then N times: `main.py` is
edited, and the time from starting the push (`git commit` + `git push` + the signed event) or
the upload (`slipway build`) to the app answering its new content through its URL is
measured. The two paths alternate, so neither profits from the other's warmth.

Usage: python3 scripts/bench-git.py [SLIPWAY_BINARY] [--runs N]
"""

import argparse
import hashlib
import hmac
import http.server
import json
import os
import socket
import statistics
import subprocess
import tempfile
import threading
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


def serve_git(root):
    """git http-backend as CGI behind a threading HTTP server; returns its port."""

    class Cgi(http.server.BaseHTTPRequestHandler):
        def handle_one(self, method):
            path, _, query = self.path.partition("?")
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            env = {
                **os.environ,
                "GIT_PROJECT_ROOT": root, "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path,
                "QUERY_STRING": query, "REQUEST_METHOD": method,
                "CONTENT_TYPE": self.headers.get("content-type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "HTTP_CONTENT_ENCODING": self.headers.get("content-encoding", ""),
                "GIT_PROTOCOL": self.headers.get("git-protocol", ""),
                "REMOTE_ADDR": "127.0.0.1",
            }
            out = subprocess.run(["git", "http-backend"], input=body, env=env,
                                 capture_output=True).stdout
            head, _, rest = out.partition(b"\r\n\r\n")
            if not rest and b"\n\n" in out:
                head, _, rest = out.partition(b"\n\n")
            status, headers = 200, []
            for line in head.decode().splitlines():
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.strip()[:3])
                else:
                    headers.append((name.strip(), value.strip()))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("content-length", str(len(rest)))
            self.end_headers()
            self.wfile.write(rest)

        def do_GET(self):
            self.handle_one("GET")

        def do_POST(self):
            self.handle_one("POST")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Cgi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def git(cwd, *args):
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "Bench",
           "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "Bench",
           "GIT_COMMITTER_EMAIL": "bench@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default="target/release/slipway")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    work = tempfile.mkdtemp(prefix="slipway-bench-git-")
    port, gateway = free_port(), free_port()
    data = os.path.join(work, "platform")
    platform = subprocess.Popen(
        [binary, "platform", "serve", "--listen", f"127.0.0.1:{port}",
         "--gateway-listen", f"127.0.0.1:{gateway}", "--data-dir", data],
        env={**os.environ, "RUST_LOG": "error"})
    try:
        token_file = os.path.join(data, "bootstrap-token")
        for _ in range(600):
            if os.path.exists(token_file):
                break
            time.sleep(0.1)
        base = f"http://127.0.0.1:{port}"
        token = open(token_file).read().strip()
        env = {**os.environ, "SLIPWAY_PLATFORM_URL": base, "SLIPWAY_TOKEN": token,
               "NO_COLOR": "1"}
        subprocess.run([binary, "new", "benchgit", "--template", "python-api"], cwd=work,
                       env=env, check=True, stdout=subprocess.DEVNULL)
        project = os.path.join(work, "benchgit")
        main_py = os.path.join(project, "main.py")
        source = open(main_py).read()
        repos = os.path.join(work, "repos")
        os.makedirs(repos)
        bare = os.path.join(repos, "benchgit.git")
        git(repos, "init", "-q", "--bare", "-b", "main", bare)
        git(project, "init", "-q", "-b", "main")
        with open(os.path.join(project, ".gitignore"), "w") as f:
            f.write(".venv/\n__pycache__/\n.app\n")
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "scaffold")
        git(project, "push", "-q", bare, "main")
        git_port = serve_git(repos)

        # The app, registered by a first upload (which writes .app), then connected.
        subprocess.run([binary, "build"], cwd=project, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        app_id = json.load(open(os.path.join(project, ".app")))["app_id"]
        request = urllib.request.Request(
            f"{base}/v1/apps/{app_id}/git", method="PUT",
            data=json.dumps({"repo_url": f"http://127.0.0.1:{git_port}/benchgit.git"}).encode(),
            headers={"authorization": f"Bearer {token}", "content-type": "application/json"})
        secret = json.load(urllib.request.urlopen(request))["webhook_secret"]

        def serving(marker, start):
            deadline = start + 600
            while time.monotonic() < deadline:
                status = json.loads(subprocess.run(
                    [binary, "call", "get_app_status", json.dumps({"app_id": app_id})],
                    env=env, check=True, capture_output=True, text=True).stdout)
                url = status.get("app_url")
                if status.get("status") == "RUNNING" and url and marker in get(url + "/"):
                    return time.monotonic() - start
                time.sleep(0.05)
            raise SystemExit(f"never served {marker}: {status}")

        def edit(marker):
            with open(main_py, "w") as f:
                f.write(source.replace('"docs": "/docs"', f'"docs": "/docs", "bench": "{marker}"', 1))

        def upload(marker):
            edit(marker)
            start = time.monotonic()
            subprocess.run([binary, "build"], cwd=project, env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return serving(marker, start)

        def push(marker, n):
            edit(marker)
            start = time.monotonic()
            git(project, "commit", "-q", "-am", marker)
            git(project, "push", "-q", bare, "main")
            sha = git(project, "rev-parse", "HEAD")
            body = json.dumps({"ref": "refs/heads/main", "after": sha}).encode()
            signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
            hook = urllib.request.Request(
                f"{base}/v1/hooks/git/{app_id}", data=body, method="POST",
                headers={"content-type": "application/json", "x-github-event": "push",
                         "x-github-delivery": f"bench-{n}-{time.time_ns()}",
                         "x-hub-signature-256": signature})
            urllib.request.urlopen(hook).read()
            return serving(marker, start)

        uploads, pushes = [], []
        for run in range(args.runs + 1):
            u = upload(f"upload-{run}-{time.time_ns()}")
            p = push(f"push-{run}-{time.time_ns()}", run)
            note = "  (warm-up)" if run == 0 else ""
            print(f"run {run}: upload {u:6.2f} s   git push {p:6.2f} s{note}", flush=True)
            if run > 0:
                uploads.append(u)
                pushes.append(p)
        mu, mp = statistics.median(uploads), statistics.median(pushes)
        print(f"upload (slipway build): median {mu:.2f} s  min {min(uploads):.2f}  max {max(uploads):.2f}")
        print(f"git push + event:       median {mp:.2f} s  min {min(pushes):.2f}  max {max(pushes):.2f}")
        print(f"git / upload: {mp / mu:.2f}x")
    finally:
        platform.terminate()
        platform.wait(timeout=60)


if __name__ == "__main__":
    main()
