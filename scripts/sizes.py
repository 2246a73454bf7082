#!/usr/bin/env python3
"""The sizes of docs/deploy.md: a gateway's memory and start-up on large catalogs, and what an
idle HTTP session costs.

    python3 scripts/sizes.py --toolgate target/release/toolgate [--tools 10000,100000] [--sessions 2000]

Makes catalogs of N tools by repeating LiveMCPBench's 527 (bench/livemcpbench/catalog.jsonl)
under new server names, in a temporary directory. For each N, three runs of
`/usr/bin/time -v toolgate serve --stdio` answering one `initialize`, one `tools/list` and
one `tool_search` (listing the tools again when told they changed): the time to each answer
and the peak RSS. Then one `toolgate serve --http` on a free loopback
port with the largest catalog: RSS (VmRSS) before (after one status page, which loads the
tokenizer) and after opening the sessions (each an
`initialize` and `notifications/initialized`, nothing after), after they hibernate (the run
sets `[gateway] session_hibernate_secs`, `--hibernate`; a quiet session with no event stream
then keeps only its record in the session store), after a hundred of them are asked for
their tools again (each restored from its record), and after closing them all with DELETE.
Only the standard library; talks to loopback only.
"""

import argparse
import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "sizes", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
SEARCH = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "tool_search", "arguments": {"query": "search the web for recent news"}},
}


def make_catalog(directory, n, index_cache="off", strategy=None):
    """A JSONL catalog of n tools and a config serving it, ranking with `strategy` if given;
    returns the config's path. `index_cache`: "off" sets `index_cache = false`, "dir" a cache
    directory beside the catalog, "auto" leaves it unset (the gateway's default: the user's
    cache directory, which every run here points into the temporary directory)."""
    with open(os.path.join(ROOT, "bench/livemcpbench/catalog.jsonl"), encoding="utf-8") as f:
        tools = [json.loads(line) for line in f if line.strip()]
    path = os.path.join(directory, f"cat{n}.jsonl")
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            tool = dict(tools[i % len(tools)])
            tool["server"] = f"{tool['server']}-{i // len(tools)}"
            out.write(json.dumps(tool, ensure_ascii=False) + "\n")
    config = os.path.join(directory, f"big{n}.toml")
    with open(config, "w", encoding="utf-8") as out:
        search = []
        if strategy:
            search.append(f'strategy = "{strategy}"')
        if index_cache == "off":
            search.append("index_cache = false")
        elif index_cache == "dir":
            search.append(f'index_cache = "{os.path.join(directory, "index-cache")}"')
        if search:
            out.write("[search]\n" + "\n".join(search) + "\n\n")
        out.write(f'[servers.big]\ncatalog = "{path}"\n')
    return config


def stdio_run(toolgate, config):
    """Seconds to the initialize answer, to the tool list's and to the search's, and the peak
    RSS in MB. The client lists the tools again when told they changed, as clients do (a
    search that loads tools waits a moment for that re-list)."""
    t0 = time.monotonic()
    p = subprocess.Popen(
        ["/usr/bin/time", "-v", toolgate, "serve", "--stdio", "--config", config],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )

    def send(message):
        p.stdin.write((json.dumps(message) + "\n").encode())
        p.stdin.flush()

    def answer(id_):
        while True:
            line = p.stdout.readline()
            if not line:
                raise RuntimeError("the gateway closed its output")
            message = json.loads(line)
            if message.get("method") == "notifications/tools/list_changed":
                send(dict(LIST, id=100))
            if message.get("id") == id_:
                return time.monotonic() - t0

    send(INIT)
    initialized = answer(1)
    send(INITIALIZED)
    send(LIST)
    listed = answer(LIST["id"])
    send(SEARCH)
    searched = answer(SEARCH["id"])
    p.stdin.close()
    err = p.stderr.read().decode()
    p.wait()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1)) / 1024
    return initialized, listed, searched, rss


QUERIES = [
    "search the web for recent news",
    "send an email to my team about the release",
    "convert this pdf to markdown",
    "what is the weather in Paris tomorrow",
    "create a github issue for the crash",
]


def searches_run(toolgate, config, count):
    """Searches a second: one `serve --stdio` answering `count` `tool_search` calls in turn,
    once its catalog is indexed (a search before that says servers are still starting)."""
    p = subprocess.Popen(
        [toolgate, "serve", "--stdio", "--config", config],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def ask(message):
        p.stdin.write((json.dumps(message) + "\n").encode())
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if not line:
                raise RuntimeError("the gateway closed its output")
            answer = json.loads(line)
            if answer.get("id") == message["id"]:
                return answer

    def search(i):
        query = QUERIES[i % len(QUERIES)]
        arguments = {"name": "tool_search", "arguments": {"query": query}}
        return ask({"jsonrpc": "2.0", "id": 3 + i, "method": "tools/call", "params": arguments})

    try:
        ask(INIT)
        p.stdin.write((json.dumps(INITIALIZED) + "\n").encode())
        while "still starting" in json.dumps(search(-1)):
            time.sleep(0.2)
        t0 = time.monotonic()
        for i in range(count):
            search(i)
        return count / (time.monotonic() - t0)
    finally:
        p.stdin.close()
        p.wait()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def post(port, body, session=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
    conn.request("POST", "/mcp", json.dumps(body), headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status, response.getheader("Mcp-Session-Id")


def delete(port, session):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("DELETE", "/mcp", headers={"Mcp-Session-Id": session})
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status


LIST = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}


def live_sessions(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/status.json")
    status = json.loads(conn.getresponse().read())
    conn.close()
    return len(status["sessions"])


def sessions_run(toolgate, config, count, directory, hibernate):
    """RSS in MB: before, opened, hibernated, after a hundred restores, after DELETE; with the
    live session counts and how many answered."""
    port = free_port()
    settings = os.path.join(directory, "http.toml")
    with open(config, encoding="utf-8") as f, open(settings, "w", encoding="utf-8") as out:
        out.write(f"[gateway]\nmax_sessions = {count + 10}\nsession_hibernate_secs = {hibernate}\n\n" + f.read())
    p = subprocess.Popen(
        [toolgate, "serve", "--http", f"127.0.0.1:{port}", "--config", settings],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # The first session waits for the catalog; then the gateway settles.
        status, first = post(port, INIT) if wait_listening(port) else (None, None)
        if status != 200 or not first:
            raise RuntimeError(f"initialize answered {status}")
        post(port, INITIALIZED, first)
        # The status page counts tokens: its first answer loads the tokenizer's vocabulary
        # (about 28 MB, kept for the process's life), which belongs to "before", not to the
        # sessions.
        live_sessions(port)
        time.sleep(2)
        before = rss_mb(p.pid)
        ids = []
        for _ in range(count):
            status, sid = post(port, INIT)
            if status != 200 or not sid:
                raise RuntimeError(f"initialize answered {status}")
            post(port, INITIALIZED, sid)
            ids.append(sid)
        time.sleep(2)
        opened, live_opened = rss_mb(p.pid), live_sessions(port)
        time.sleep(hibernate + 15)
        hibernated, live_hibernated = rss_mb(p.pid), live_sessions(port)
        restored_ok = sum(1 for sid in ids[:100] if post(port, LIST, sid)[0] == 200)
        time.sleep(1)
        restored = rss_mb(p.pid)
        closed_ok = sum(1 for sid in ids if delete(port, sid) in (200, 202, 204))
        time.sleep(3)
        closed = rss_mb(p.pid)
        return {
            "before": before,
            "opened": opened,
            "live_opened": live_opened,
            "hibernated": hibernated,
            "live_hibernated": live_hibernated,
            "restored": restored,
            "restored_ok": restored_ok,
            "closed": closed,
            "closed_ok": closed_ok,
        }
    finally:
        p.terminate()
        p.wait()


def wait_listening(port, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.02)
    return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--toolgate", default=os.path.join(ROOT, "target/release/toolgate"))
    parser.add_argument("--tools", default="10000,100000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--hibernate", type=int, default=20, help="[gateway] session_hibernate_secs for the sessions run")
    parser.add_argument(
        "--index-cache",
        choices=["off", "dir", "auto"],
        default="off",
        help="[search] index_cache: false (off), a directory (dir) or unset (auto, the default "
        "cache directory for large catalogs); with a cache, the first start, which writes it, is "
        "reported apart",
    )
    parser.add_argument("--strategy", help="set [search] strategy (lexical, semantic, ...)")
    parser.add_argument(
        "--searches", type=int, default=0, help="also time this many tool_search calls in turn on each size"
    )
    args = parser.parse_args()
    sizes = [int(n) for n in args.tools.split(",")]
    with tempfile.TemporaryDirectory() as directory:
        # The default cache directory, for `--index-cache auto`: never the user's own.
        os.environ["XDG_CACHE_HOME"] = os.path.join(directory, "xdg-cache")
        configs = {n: make_catalog(directory, n, args.index_cache, args.strategy) for n in sizes}
        for n in sizes:
            if args.index_cache != "off":
                init, _, _, rss = stdio_run(args.toolgate, configs[n])
                print(f"{n:>7} tools, first start (index built and saved): {init:.2f} s, peak RSS {rss:.0f} MB")
            runs = [stdio_run(args.toolgate, configs[n]) for _ in range(args.runs)]
            init, listed, searched = (statistics.median(r[i] for r in runs) for i in range(3))
            rss = [r[3] for r in runs]
            print(
                f"{n:>7} tools: initialize answered after {init:.2f} s, the tool list after {listed:.2f} s, "
                f"the first search after {searched:.2f} s (medians of {args.runs}), "
                f"peak RSS {min(rss):.0f}-{max(rss):.0f} MB"
            )
            if args.searches:
                rate = searches_run(args.toolgate, configs[n], args.searches)
                print(f"{n:>7} tools: {rate:.0f} searches a second ({args.searches} tool_search calls in turn)")
        if args.sessions:
            n = sizes[-1]
            r = sessions_run(args.toolgate, configs[n], args.sessions, directory, args.hibernate)
            per = lambda mb: (mb - r["before"]) * 1024 / args.sessions
            print(
                f"{args.sessions} idle HTTP sessions on {n} tools: RSS {r['before']:.0f} -> {r['opened']:.0f} MB "
                f"({per(r['opened']):.1f} KB a session, {r['live_opened']} live); hibernated after "
                f"{args.hibernate} s: {r['hibernated']:.0f} MB ({per(r['hibernated']):.1f} KB a session, "
                f"{r['live_hibernated']} live); {r['restored_ok']} of 100 restored: {r['restored']:.0f} MB; "
                f"after {r['closed_ok']} DELETEs {r['closed']:.0f} MB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
