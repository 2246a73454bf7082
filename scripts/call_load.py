#!/usr/bin/env python3
"""Calls per second of a gateway over HTTP, with and without rate limits.

Starts `toolgate serve --http` on a configuration with the fixture upstream (deferral off, so a
2026-07-28 request may call the tool at once), then sends CALLS `tools/call` requests, CLIENTS
at a time, each client on a keep-alive connection, and prints calls per second and the p50 and
p99 latency. Each case runs RUNS times; the figures are medians over the runs.

    python3 scripts/call_load.py --toolgate target/release/toolgate \\
        --fixture target/release/toolgate-fixture-server [--redis-port PORT]

The cases: no limits; limits in memory (a limit no call reaches, so every call is counted
and none refused); with --redis-port (a running redis-server), limits in Redis; and with
--otlp URL (a running collector, such as `e2e/otlp_receiver.py`), traces exported to it.
"""

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

TOKEN = "load-test-token-0123456789"


def start(toolgate, config_text, workdir):
    path = os.path.join(workdir, "toolgate.toml")
    with open(path, "w") as f:
        f.write(config_text)
    env = dict(os.environ, TG_TOKEN=TOKEN, XDG_DATA_HOME=os.path.join(workdir, "data"), RUST_LOG="warn")
    proc = subprocess.Popen(
        [toolgate, "serve", "--http", "127.0.0.1:0", "--config", path],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True,
    )
    for line in proc.stderr:
        if line.startswith("toolgate: listening on http://"):
            addr = line.strip().removeprefix("toolgate: listening on http://").removesuffix("/mcp")
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return proc, addr
    raise SystemExit("toolgate did not start: " + (proc.stderr.read() if proc.stderr else ""))


def call_body(i):
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": "fx__echo", "arguments": {"text": "hi"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {},
                  "io.modelcontextprotocol/clientInfo": {"name": "load", "version": "1"}}}})


HEADERS = {
    "Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json", "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call", "Mcp-Name": "fx__echo",
}


def client(addr, count, out):
    host, port = addr.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    for i in range(count):
        t = time.perf_counter()
        conn.request("POST", "/mcp", body=call_body(i), headers=HEADERS)
        r = conn.getresponse()
        body = r.read()
        if r.status != 200 or b'"isError":false' not in body:
            raise SystemExit(f"call {i}: {r.status} {body[:300]!r}")
        out.append(time.perf_counter() - t)


def load(addr, calls, clients):
    # Warm up: the upstream started, the connection pool warm.
    client(addr, 20, [])
    latencies = []
    per = calls // clients
    threads = [threading.Thread(target=client, args=(addr, per, latencies)) for _ in range(clients)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    took = time.perf_counter() - t
    latencies.sort()
    return len(latencies) / took, latencies[len(latencies) // 2] * 1e3, latencies[int(len(latencies) * 0.99)] * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--toolgate", required=True)
    p.add_argument("--fixture", required=True)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--redis-port", type=int)
    p.add_argument("--otlp")
    a = p.parse_args()
    base = (f"[gateway]\nmode = \"off\"\n{{store}}\n[tokens.load]\nenv = \"TG_TOKEN\"\n\n{{limits}}"
            f"[servers.fx]\ncommand = {json.dumps(os.path.abspath(a.fixture))}\n")
    limits = "[limits]\ncalls_per_minute = 100000000\n[limits.servers.fx]\ncalls_per_minute = 100000000\n\n"
    cases = [("no limits", "", ""), ("limits, memory", "", limits)]
    if a.redis_port:
        store = f"sessions = \"redis://127.0.0.1:{a.redis_port}/0\""
        cases += [("no limits, Redis sessions", store, ""), ("limits, Redis", store, limits)]
    if a.otlp:
        cases += [("traces on", "", f"[telemetry]\notlp_endpoint = {json.dumps(a.otlp)}\n\n")]
    print(f"{a.calls} calls, {a.clients} clients, median of {a.runs} runs")
    print(f"{'case':<28} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for name, store, lim in cases:
        runs = []
        for _ in range(a.runs):
            with tempfile.TemporaryDirectory() as d:
                proc, addr = start(a.toolgate, base.format(store=store, limits=lim), d)
                try:
                    runs.append(load(addr, a.calls, a.clients))
                finally:
                    proc.kill()
                    proc.wait()
        med = [statistics.median(r[i] for r in runs) for i in range(3)]
        print(f"{name:<28} {med[0]:>9.0f} {med[1]:>8.2f} {med[2]:>8.2f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
