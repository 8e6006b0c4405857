#!/usr/bin/env python3
"""`get_app_status` through the platform's `/mcp` against the same read on the REST API, in one
sitting: 16 clients, each on its own keep-alive connection, each sending its next request as
soon as it has its answer (closed loop), for --seconds per round, rounds alternating REST and
MCP. Prints requests per second, p50 and p99 per round, the medians, the ratio MCP/REST, and
the server's resident memory before and after.

Usage: python3 scripts/bench-mcp.py target/release/slipway [--seconds 10] [--rounds 3] [--clients 16]
                                   [--driver wrk|python]

The default driver is wrk (`apt install wrk`): two threads of C drive the 16 connections, so
the load generator takes little of a small machine's CPU from the server; `--driver python`
is the same loop in Python threads (no install, but it competes with the server for CPU).
"""

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import tempfile
import threading
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def run(port, seconds, clients, make_request):
    """Closed loop: returns (requests per second, latencies in ms)."""
    latencies = []
    failures = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port)
        mine = []
        while time.monotonic() < stop:
            method, path, body, headers = make_request()
            start = time.perf_counter()
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            data = response.read()
            mine.append((time.perf_counter() - start) * 1000)
            if response.status != 200 or b'"isError":true' in data:
                with lock:
                    failures.append(f"{path}: {response.status} {data[:200]!r}")
                return
        conn.close()
        with lock:
            latencies.extend(mine)

    started = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    if failures:
        raise SystemExit(failures[0])
    return len(latencies) / elapsed, latencies


def run_wrk(port, seconds, clients, request):
    """The same closed loop driven by wrk (C, epoll: far less CPU than Python's threads, so
    the server gets the machine): returns (requests per second, p50 ms, p99 ms)."""
    method, path, body, headers = request
    lines = [f"wrk.method = {json.dumps(method)}"]
    if body is not None:
        lines.append(f"wrk.body = {json.dumps(body)}")
    for name, value in headers.items():
        lines.append(f"wrk.headers[{json.dumps(name)}] = {json.dumps(value)}")
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write("\n".join(lines) + "\n")
    try:
        out = subprocess.run(
            ["wrk", "-t2", f"-c{clients}", f"-d{int(seconds)}s", "--latency", "-s", script.name,
             f"http://127.0.0.1:{port}{path}"],
            check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(script.name)
    if "Non-2xx" in out:
        raise SystemExit(f"{path}: some answers were not 2xx:\n{out}")

    def millis(text):
        value = float(text.rstrip("unms"))
        return value / 1000 if text.endswith("us") else value * 1000 if text.endswith("s") and not text.endswith("ms") else value

    latency = {}
    rps = 0.0
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("50%", "99%"):
            latency[parts[0]] = millis(parts[1])
        if line.startswith("Requests/sec:"):
            rps = float(parts[1])
    return rps, latency["50%"], latency["99%"]


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("slipway")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--driver", choices=["wrk", "python"], default="wrk",
                        help="the load generator (wrk: apt install wrk)")
    args = parser.parse_args()

    data = tempfile.mkdtemp(prefix="slipway-bench-mcp-")
    port = free_port()
    server = subprocess.Popen(
        [args.slipway, "platform", "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data,
         "--builder", "native", "--gateway-listen", f"127.0.0.1:{free_port()}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        token_file = os.path.join(data, "bootstrap-token")
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                probe = http.client.HTTPConnection("127.0.0.1", port)
                probe.request("GET", "/health")
                if probe.getresponse().status == 200 and os.path.exists(token_file):
                    break
            except OSError:
                pass
            time.sleep(0.1)
        token = open(token_file).read().strip()
        auth = {"authorization": f"Bearer {token}", "content-type": "application/json"}
        conn = http.client.HTTPConnection("127.0.0.1", port)
        conn.request("POST", "/v1/apps", body=json.dumps({"name": "bench", "display_name": "Bench"}),
                     headers=auth)
        app_id = json.loads(conn.getresponse().read())["id"]
        print(f"server pid {server.pid}: {rss_mib(server.pid):.1f} MiB resident after start")

        rest = ("GET", f"/v1/apps/{app_id}/status", None, auth)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "get_app_status", "arguments": {"app_id": app_id}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}}}})
        mcp_headers = dict(auth, **{"accept": "application/json, text/event-stream",
                                    "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call",
                                    "mcp-name": "get_app_status"})
        mcp = ("POST", "/mcp", body, mcp_headers)

        # Each path answered as it should before it is timed (wrk only sees statuses).
        for method, path, body, headers in (rest, mcp):
            conn.request(method, path, body=body, headers=headers)
            answer = conn.getresponse()
            data = answer.read()
            if answer.status != 200 or b'"isError":true' in data:
                raise SystemExit(f"{path}: {answer.status} {data[:300]!r}")

        results = {"REST": [], "MCP": []}
        for round_ in range(args.rounds):
            for name, request in (("REST", rest), ("MCP", mcp)):
                if args.driver == "wrk":
                    rps, p50, p99 = run_wrk(port, args.seconds, args.clients, request)
                else:
                    rps, lat = run(port, args.seconds, args.clients, lambda r=request: r)
                    p50, p99 = percentile(lat, 0.5), percentile(lat, 0.99)
                results[name].append((rps, p50, p99))
                print(f"round {round_ + 1} {name:4}: {rps:7.0f} req/s  p50 {p50:6.2f} ms  p99 {p99:6.2f} ms")
        med = {k: tuple(statistics.median(r[i] for r in v) for i in range(3)) for k, v in results.items()}
        for name, (rps, p50, p99) in med.items():
            print(f"median {name:4}: {rps:7.0f} req/s  p50 {p50:6.2f} ms  p99 {p99:6.2f} ms")
        print(f"MCP/REST throughput: {med['MCP'][0] / med['REST'][0]:.2f}")
        print(f"server: {rss_mib(server.pid):.1f} MiB resident after the runs")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
