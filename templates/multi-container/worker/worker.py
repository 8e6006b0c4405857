"""__APP_NAME__ / worker: processes jobs from the api service of a Slipway multi-container app.

It polls `POST $API_URL/jobs/claim`, does the work and reports back with
`POST $API_URL/jobs/{id}/result`. The platform sets API_URL because the worker dependsOn `api`.
A tiny HTTP server on $PORT (default 8002) answers /health for the readiness probe.
Run locally:  python worker.py
"""

import json
import logging
import os
import re
import signal
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

API_URL = os.environ.get("API_URL", "http://127.0.0.1:8001").rstrip("/")
PORT = int(os.environ.get("PORT", "8002"))
POLL_INTERVAL = float(os.environ.get("POLL_INTERVAL_SECONDS", "1"))
WORK_DELAY = float(os.environ.get("WORK_DELAY_SECONDS", "1"))  # pretend the work takes a while

logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"), format="%(asctime)s worker %(levelname)s %(message)s")
log = logging.getLogger("worker")
stop = threading.Event()
state = {"processed": 0, "failed": 0, "last_poll_ok": None, "last_error": None}


# --- The work ---------------------------------------------------------------------------------


def text_stats(text: str) -> dict:
    words = re.findall(r"[\w']+", text.lower())
    return {
        "characters": len(text),
        "words": len(words),
        "lines": text.count("\n") + 1,
        "top_words": Counter(words).most_common(5),
    }


OPERATIONS = {
    "stats": text_stats,
    "uppercase": str.upper,
    "reverse": lambda text: text[::-1],
}


def process(job: dict) -> dict:
    time.sleep(WORK_DELAY)
    operation = OPERATIONS.get(job["operation"])
    if operation is None:
        return {"error": f"unknown operation {job['operation']!r}"}
    try:
        return {"result": operation(job["text"])}
    except Exception as exc:  # report the failure instead of crashing the worker
        return {"error": f"{type(exc).__name__}: {exc}"}


def run_loop() -> None:
    log.info("polling %s every %.1fs", API_URL, POLL_INTERVAL)
    with httpx.Client(base_url=API_URL, timeout=10) as client:
        while not stop.is_set():
            try:
                response = client.post("/jobs/claim")
                response.raise_for_status()
                state["last_poll_ok"], state["last_error"] = time.time(), None
                if response.status_code == 204:  # nothing to do
                    stop.wait(POLL_INTERVAL)
                    continue
                job = response.json()
                outcome = process(job)
                client.post(f"/jobs/{job['id']}/result", json=outcome).raise_for_status()
                state["failed" if "error" in outcome else "processed"] += 1
                log.info("job %s (%s): %s", job["id"], job["operation"], "failed" if "error" in outcome else "done")
            except httpx.HTTPError as exc:
                state["last_error"] = str(exc)
                log.warning("api not reachable: %s", exc)
                stop.wait(max(POLL_INTERVAL, 2))


# --- Health endpoint --------------------------------------------------------------------------


class Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        if self.path.split("?")[0] != "/health":
            self.send_error(404)
            return
        body = json.dumps({"status": "ok", "service": "worker", "api_url": API_URL, **state}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:  # keep probes out of the log
        pass


def main() -> None:
    server = ThreadingHTTPServer(("0.0.0.0", PORT), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    log.info("health on http://0.0.0.0:%d/health", PORT)

    def shutdown(*_: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    try:
        run_loop()
    finally:
        server.shutdown()
        log.info("stopped")


if __name__ == "__main__":
    main()
