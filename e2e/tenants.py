"""A second tenant attacks another's session through toolgate's streamable HTTP, for the
regression tests of `crates/toolgate-cli/tests/tenants.rs`.

The attacker, mallory, holds a valid bearer token of a narrow profile (it sees only the
`other` server's tools) and knows the `Mcp-Session-Id` of alice's session (alice's token is
unrestricted). The upstream is `e2e/tenant_server.py` (a real MCP server of the Python SDK),
which writes down every call, cancellation and `logging/setLevel` it receives. Each attack runs
against gateways of its own (so against upstreams of its own), which share one `redis-server`:

1. `steal_result`: GET with alice's session id and a `Last-Event-ID` for each of her request
   streams, while her call is in flight.
2. `hijack_stream`: GET without `Last-Event-ID`, to become alice's event stream
   (`list_changed`, and log lines of a server mallory's profile cannot see).
3. `cancel_call`: `notifications/cancelled` of alice's call in flight.
4. `delete_session`: DELETE of alice's session.
5. `set_log_level`: `logging/setLevel` (`emergency`) on alice's session.
6. `restore_unbound`: alice's session, only initialized, restored by mallory on her profile's
   path `/mcp/narrow`, and on a second replica.
7. `delete_across_replicas`: alice DELETEs her session on replica A; replica B, which had
   restored it, must end it too.
8. `restore_past_max_sessions`: a session restored on a replica with `max_sessions = 2` and
   two sessions open counts like a new one.
9. `discover_instructions`: a sessionless `server/discover` with mallory's token: as the issue
   wrote it (2026-07-28, no `Mcp-Method`), with the `Mcp-Method` header, and at 2025-11-25.

For 1-6 the fixed behaviour is: 403 with a JSON-RPC error body, nothing reaches mallory, the
upstream receives nothing of hers, and alice's session and call go on (the control). For 7
the session is gone on B (404) and stays gone; for 8 the restore gets 503; for 9 the
instructions name no tool mallory cannot see. All raw HTTP is written here by hand (the
stdlib's sockets), so that every header is the attacker's choice; every wait is bounded.

Prints one JSON object: `{"attacks": [{"name", "attacker_status", "attacker_saw",
"upstream_saw", "owner_ok", "blocked", "why"}, ...]}`; `blocked` is the verdict that the fixed
behaviour held.

    python tenants.py --toolgate PATH [--only NAME,...] [--verbose] [--control]

`--control` leaves mallory's moves out (each gets a made-up 403): only the victim acts, which
checks that every control holds when nothing attacks it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

E2E = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.path.join(E2E, ".venv", "bin", "python")
SERVER = os.path.join(E2E, "tenant_server.py")

ALICE = "alice-secret-0123456789abcdef"
MALLORY = "mallory-secret-0123456789abcdef"
PROTOCOL = "2025-11-25"
# How long one request or one wait may take: a hanging attack fails instead of hanging.
WAIT = 10.0
VERBOSE = False
CONTROL = False


def note(*what) -> None:
    if VERBOSE:
        print("tenants:", *what, file=sys.stderr, flush=True)


def excerpt(text: str, size: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= size else text[:size] + "..."


# ---------------------------------------------------------------------------------------------
# Raw HTTP/1.1, read by hand (chunked bodies and server-sent events included).


class Reply:
    """One HTTP response, read as it arrives: its status, headers, body and SSE events."""

    def __init__(self, sock: socket.socket | None):
        self.sock = sock
        self.raw = b""
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = b""
        self.done = False
        self.events: list[dict] = []
        self._rest = b""  # body bytes not yet decoded (chunked framing)
        self._sse = ""  # SSE text not yet split into events
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.lock = threading.Lock()

    def _receive(self, deadline: float) -> bool:
        """Reads what arrived (waiting at most until `deadline`); False once nothing more will."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        self.sock.settimeout(min(remaining, 0.25))
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return True
        except OSError:
            data = b""
        if not data:
            self._finish()
            return False
        if not self.status:
            self.raw += data
            if b"\r\n\r\n" not in self.raw:
                return True
            head, data = self.raw.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            self.status = int(lines[0].split()[1])
            for line in lines[1:]:
                key, _, value = line.partition(":")
                self.headers[key.strip().lower()] = value.strip()
            if self.headers.get("content-length") == "0" or self.status in (202, 204, 304):
                if "transfer-encoding" not in self.headers:
                    self._finish()
                    return False
        self._take(data)
        return not self.done

    def _take(self, data: bytes) -> None:
        """Decodes body bytes (chunked or not) and splits SSE events."""
        self._rest += data
        fresh = b""
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            while True:
                line, sep, after = self._rest.partition(b"\r\n")
                if not sep:
                    break
                try:
                    size = int(line.split(b";")[0].strip() or b"0", 16)
                except ValueError:
                    self._finish()
                    break
                if size == 0:
                    self._rest = b""
                    self.done = True
                    break
                if len(after) < size + 2:
                    break
                fresh += after[:size]
                self._rest = after[size + 2 :]
        else:
            fresh, self._rest = self._rest, b""
        with self.lock:
            self.body += fresh
            length = self.headers.get("content-length")
            if length is not None and len(self.body) >= int(length):
                self.done = True
            if "text/event-stream" in self.headers.get("content-type", ""):
                self._sse += fresh.decode("utf-8", "replace").replace("\r\n", "\n")
                while "\n\n" in self._sse:
                    block, self._sse = self._sse.split("\n\n", 1)
                    self._event(block)
        if self.done:
            self._finish()

    def _event(self, block: str) -> None:
        event: dict = {"id": None, "data": ""}
        data = []
        for line in block.split("\n"):
            if line.startswith(":"):
                continue
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "data":
                data.append(value)
            elif key == "id":
                event["id"] = value
        event["data"] = "\n".join(data)
        if not event["data"]:
            return
        try:
            event["json"] = json.loads(event["data"])
        except ValueError:
            event["json"] = None
        self.events.append(event)

    def _finish(self) -> None:
        self.done = True
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass

    def read(self, until=None, timeout: float = WAIT) -> "Reply":
        """Reads until the response ends, `until(self)` holds or `timeout` passes."""
        deadline = time.monotonic() + timeout
        while not self.done and not self._stop.is_set():
            if until is not None and self.status and until(self):
                break
            if not self._receive(deadline):
                break
        return self

    def head(self, timeout: float = WAIT) -> "Reply":
        """Reads until the status line and headers are in."""
        return self.read(until=lambda r: True, timeout=timeout)

    def start(self, until=None, timeout: float = WAIT) -> "Reply":
        """Reads in the background (see [`Reply.read`]); `join` waits for it."""
        self._thread = threading.Thread(target=self.read, args=(until, timeout), daemon=True)
        self._thread.start()
        return self

    def join(self, timeout: float = WAIT + 2) -> "Reply":
        if self._thread is not None:
            self._thread.join(timeout)
        return self

    def stop(self) -> "Reply":
        """Stops a background read and closes the connection."""
        self._stop.set()
        self.join()
        self._finish()
        return self

    def messages(self) -> list:
        """The JSON-RPC messages received: SSE events' data, or a JSON body."""
        with self.lock:
            found = [e["json"] for e in self.events if e.get("json") is not None]
            if not found and "application/json" in self.headers.get("content-type", ""):
                try:
                    found = [json.loads(self.body)]
                except ValueError:
                    pass
        return found

    def streamed(self) -> list:
        """The JSON-RPC messages that came as server-sent events (not a JSON error body)."""
        with self.lock:
            return [e["json"] for e in self.events if e.get("json") is not None]

    def answer(self, id_) -> dict | None:
        """The response (result or error) to request `id_`, if it arrived."""
        for m in self.messages():
            if isinstance(m, dict) and m.get("id") == id_ and ("result" in m or "error" in m):
                return m
        return None

    def text(self) -> str:
        with self.lock:
            return self.body.decode("utf-8", "replace")

    def shown(self) -> str:
        """What this connection received, shortly."""
        return excerpt(f"{self.status} {self.text()}")

    def is_refusal(self, status: int) -> bool:
        """Whether the reply is `status` with a JSON-RPC error body."""
        if self.status != status:
            return False
        try:
            body = json.loads(self.text())
        except ValueError:
            return False
        return isinstance(body, dict) and body.get("jsonrpc") == "2.0" and "error" in body


def refused() -> Reply:
    """What mallory's move gets with `--control`: a 403 made up here, nothing sent."""
    reply = Reply(None)
    reply.status = 403
    reply.headers = {"content-type": "application/json"}
    reply.body = b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": "--control"}}'
    reply.done = True
    return reply


def mallory(move) -> Reply:
    """Mallory's move (a function sending it), or with `--control` none: only the victim acts,
    which checks that each attack's control holds when nothing attacks it."""
    return refused() if CONTROL else move()


def until(pred, timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def send(addr: str, method: str, path: str, headers: dict, body: str | None = None) -> Reply:
    """Writes one request (`Connection: close`) and reads its head."""
    host, port = addr.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=WAIT)
    payload = (body or "").encode()
    lines = [f"{method} {path} HTTP/1.1", f"Host: {addr}", "Connection: close"]
    if body is not None or method == "POST":
        lines.append(f"Content-Length: {len(payload)}")
    lines += [f"{k}: {v}" for k, v in headers.items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
    return Reply(sock).head()


def mcp_headers(token: str, session: str | None = None, extra: dict | None = None) -> dict:
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": PROTOCOL,
    }
    if session:
        headers["Mcp-Session-Id"] = session
    headers.update(extra or {})
    return headers


def post(addr, path, token, session, message: dict, extra=None) -> Reply:
    """POSTs one JSON-RPC message and reads the head of the reply."""
    return send(addr, "POST", path, mcp_headers(token, session, extra), json.dumps(message))


def answered(id_):
    return lambda reply: reply.answer(id_) is not None


def get_stream(addr, path, token, session, extra=None) -> Reply:
    """Opens a GET event stream (read in the background for up to three WAITs)."""
    reply = send(addr, "GET", path, mcp_headers(token, session, extra))
    return reply.start(timeout=3 * WAIT)


def result_text(message: dict | None) -> str:
    """A tools/call result's text, or '' for none or an error."""
    if not message or "result" not in message:
        return ""
    result = message["result"]
    if result.get("isError"):
        return ""
    return "\n".join(c.get("text", "") for c in result.get("content", []) if isinstance(c, dict))


# ---------------------------------------------------------------------------------------------
# Sessions.


class Session:
    """An MCP session over raw HTTP: its gateway address, path, token and id."""

    def __init__(self, addr: str, token: str, path: str = "/mcp", session: str | None = None):
        self.addr, self.token, self.path, self.id = addr, token, path, session
        self.next_id = 1

    def fresh_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def initialize(self, name: str) -> Reply:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": name, "version": "1"}},
        }
        reply = post(self.addr, self.path, self.token, None, message).read(until=answered(1))
        self.id = reply.headers.get("mcp-session-id")
        if reply.status != 200 or not self.id or not (reply.answer(1) or {}).get("result"):
            raise Setup(f"initialize on {self.addr}{self.path} failed: {reply.shown()}")
        done = self.notify("notifications/initialized")
        if done.status != 202:
            raise Setup(f"notifications/initialized failed: {done.shown()}")
        return reply

    def notify(self, method: str, params: dict | None = None) -> Reply:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return post(self.addr, self.path, self.token, self.id, message).read()

    def begin(self, method: str, params: dict | None = None) -> tuple[int, Reply]:
        """Sends a request; its reply is read in the background until answered."""
        id_ = self.fresh_id()
        message = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}
        reply = post(self.addr, self.path, self.token, self.id, message)
        return id_, reply.start(until=answered(id_), timeout=2 * WAIT)

    def request(self, method: str, params: dict | None = None) -> tuple[dict | None, Reply]:
        id_, reply = self.begin(method, params)
        reply.join(2 * WAIT + 2)
        return reply.answer(id_), reply

    def tools(self) -> list[str]:
        answer, reply = self.request("tools/list")
        if not answer or "result" not in answer:
            raise Setup(f"tools/list failed: {reply.shown()}")
        return [t["name"] for t in answer["result"]["tools"]]

    def load(self, *names: str) -> None:
        """Loads tools with tool_search `select:` and lists them, as a client would."""
        answer, reply = self.request("tools/call", {"name": "tool_search", "arguments": {"query": "select:" + ",".join(names)}})
        if not answer or "result" not in answer:
            raise Setup(f"tool_search failed: {reply.shown()}")
        listed = self.tools()
        missing = [n for n in names if n not in listed]
        if missing:
            raise Setup(f"tool_search did not load {missing}: {reply.shown()}; listed {listed}")

    def call(self, tool: str, arguments: dict) -> tuple[int, Reply]:
        return self.begin("tools/call", {"name": tool, "arguments": arguments})

    def works(self) -> tuple[bool, str]:
        """Whether a tools/list of this session is answered with a result."""
        answer, reply = self.request("tools/list")
        return bool(answer and "result" in answer), reply.shown()


def opened(addr: str, token: str = ALICE, path: str = "/mcp", name: str = "victim") -> Session:
    session = Session(addr, token, path)
    session.initialize(name)
    return session


class Setup(Exception):
    """The attack could not be staged (not a verdict on the gateway)."""


# ---------------------------------------------------------------------------------------------
# The processes: one redis-server, toolgate gateways, and their upstreams.


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(process: subprocess.Popen) -> None:
    """Ends a process this script started, and its process group (its upstreams)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except OSError:
            pass
        try:
            process.wait(3)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)  # the upstreams, if they outlived it
    except OSError:
        pass
    try:
        process.wait(3)
    except subprocess.TimeoutExpired:
        pass


class Redis:
    def __init__(self, dir_: str):
        self.port = free_port()
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            cwd=dir_,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + WAIT
        while self.command("PING") != "+PONG":
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise Setup("redis-server did not answer PING")
            time.sleep(0.05)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self, *words: str) -> str:
        """One command's first reply line ('' when Redis is not there)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
                s.sendall((" ".join(words) + "\r\n").encode())
                return s.recv(4096).decode().split("\r\n")[0]
        except OSError:
            return ""

    def has_session(self, id_: str) -> bool:
        return self.command("EXISTS", f"toolgate:session:{id_}") == ":1"


class Gateway:
    """`toolgate serve --http 127.0.0.1:0` on a configuration of its own."""

    def __init__(self, toolgate: str, dir_: str, name: str, redis: Redis, max_sessions: int | None = None):
        self.tenant_log = os.path.join(dir_, f"{name}-tenant.jsonl")
        self.other_log = os.path.join(dir_, f"{name}-other.jsonl")
        self.config = os.path.join(dir_, f"{name}.toml")
        q = json.dumps
        gateway = [f"sessions = {q(redis.url)}", "ready_timeout_secs = 30"]
        if max_sessions is not None:
            gateway.append(f"max_sessions = {max_sessions}")
        server = lambda key, log: (
            f"[servers.{key}]\ncommand = {q(PYTHON)}\nargs = [{q(SERVER)}]\nprotocol = \"2025-11-25\"\n"
            f"env = {{ TENANT_LOG = {q(log)}, TENANT_NAME = {q(key)} }}\n"
        )
        text = (
            "[gateway]\n" + "\n".join(gateway) + "\n\n"
            '[tokens.alice]\nenv = "TG_ALICE"\n'
            '[tokens.mallory]\nenv = "TG_MALLORY"\nprofile = "narrow"\n\n'
            '[profiles.narrow]\ntools = ["other__*"]\n\n' + server("tenant", self.tenant_log) + "\n" + server("other", self.other_log)
        )
        with open(self.config, "w", encoding="utf-8") as f:
            f.write(text)
        env = dict(os.environ, TG_ALICE=ALICE, TG_MALLORY=MALLORY)
        self.process = subprocess.Popen(
            [toolgate, "serve", "--http", "127.0.0.1:0", "--config", self.config],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        self.log: list[str] = []
        found = threading.Event()
        self.addr = ""

        def drain():
            for raw in self.process.stderr:
                line = raw.decode("utf-8", "replace").rstrip()
                self.log.append(line)
                prefix = "toolgate: listening on http://"
                if not found.is_set() and line.startswith(prefix):
                    self.addr = line[len(prefix) :].removesuffix("/mcp")
                    found.set()

        threading.Thread(target=drain, daemon=True).start()
        try:
            if not found.wait(3 * WAIT):
                raise Setup(f"toolgate did not say where it listens: {self.log[-20:]}")
            self.wait_ready()
        except BaseException:
            self.close()
            raise

    def wait_ready(self) -> None:
        """Waits until both upstreams are ready (the status page, with alice's token)."""
        deadline = time.monotonic() + 3 * WAIT
        status = ""
        while time.monotonic() < deadline:
            reply = send(self.addr, "GET", "/status.json", {"Authorization": f"Bearer {ALICE}"}).read()
            status = reply.text()
            try:
                servers = json.loads(status).get("servers", [])
            except ValueError:
                servers = []
            if len(servers) == 2 and all(s.get("state") == "ready" for s in servers):
                return
            time.sleep(0.1)
        raise Setup(f"the upstreams did not become ready: {excerpt(status)}")

    def upstream(self, server: str = "tenant") -> list[dict]:
        path = self.tenant_log if server == "tenant" else self.other_log
        events = []
        try:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    try:
                        events.append(json.loads(line))
                    except ValueError:
                        pass  # a line still being written
        except FileNotFoundError:
            pass
        return events

    def until_upstream(self, pred, timeout: float = WAIT) -> bool:
        return until(lambda: any(pred(e) for e in self.upstream()), timeout)

    def close(self) -> None:
        stop(self.process)
        if VERBOSE:
            note(f"gateway {self.config} log:\n  " + "\n  ".join(self.log[-60:]))


# ---------------------------------------------------------------------------------------------
# The attacks. Each takes a `Lab` (the toolgate path, a folder, Redis) and returns its verdict.


class Lab:
    def __init__(self, toolgate: str, dir_: str, redis: Redis):
        self.toolgate, self.dir, self.redis = toolgate, dir_, redis
        self.gateways: list[Gateway] = []
        self.count = 0

    def gateway(self, max_sessions: int | None = None) -> Gateway:
        self.count += 1
        gateway = Gateway(self.toolgate, self.dir, f"g{self.count}", self.redis, max_sessions)
        self.gateways.append(gateway)
        return gateway

    def close(self) -> None:
        for gateway in self.gateways:
            gateway.close()
        self.gateways = []


def verdict(name, status, saw, upstream, owner_ok, blocked, why) -> dict:
    return {
        "name": name,
        "attacker_status": status,
        "attacker_saw": excerpt(saw) if isinstance(saw, str) else saw,
        "upstream_saw": upstream,
        "owner_ok": bool(owner_ok),
        "blocked": bool(blocked and owner_ok),
        "why": why,
    }


def worst(replies: list[Reply]) -> int:
    """The attacker's status: the first that is not 403, else 403 (0 if none)."""
    for reply in replies:
        if reply.status != 403:
            return reply.status
    return replies[0].status if replies else 0


def steal_result(lab: Lab) -> dict:
    """1. GET with Last-Event-ID `0/K` for each of alice's request streams, her call in flight."""
    g = lab.gateway()
    alice = opened(g.addr)
    alice.load("tenant__slow_echo")
    call_id, call = alice.call("tenant__slow_echo", {"text": "VICTIM-RESULT-1", "seconds": 3})
    if not g.until_upstream(lambda e: e.get("tool") == "slow_echo"):
        raise Setup("alice's call never reached the upstream")
    # The request streams of a session are numbered from 0; alice has made a few.
    thefts = [
        mallory(lambda k=k: get_stream(g.addr, "/mcp", MALLORY, alice.id, {"Last-Event-ID": f"0/{k}"}))
        for k in range(12)
    ]
    # Until the result came to someone, or could have (the call sleeps 3 s).
    until(lambda: call.answer(call_id) or any("VICTIM-RESULT-1" in t.text() for t in thefts), 3 + WAIT)
    call.join()
    time.sleep(0.5)
    for theft in thefts:
        theft.stop()
    stolen = [t for t in thefts if "VICTIM-RESULT-1" in t.text()]
    leaked = [t for t in thefts if t.streamed()]
    mine = result_text(call.answer(call_id))
    owner_ok = mine == "VICTIM-RESULT-1"
    refused = all(t.is_refusal(403) for t in thefts)
    saw = " | ".join(t.shown() for t in (stolen or leaked or thefts[:1]))
    why = (
        f"mallory's {len(thefts)} GETs: statuses {sorted({t.status for t in thefts})}, {len(leaked)} "
        f"received events, {len(stolen)} received alice's result; alice's own call got "
        f"{mine or 'no result: ' + call.shown()!r}"
    )
    upstream = [e for e in g.upstream() if e.get("tool") == "slow_echo"]
    return verdict("steal_result", worst(thefts), saw, upstream, owner_ok, refused and not leaked, why)


def hijack_stream(lab: Lab) -> dict:
    """2. GET without Last-Event-ID: the stream of alice's list changes and log lines."""
    g = lab.gateway()
    alice = opened(g.addr)
    alice.tools()
    theft = mallory(lambda: get_stream(g.addr, "/mcp", MALLORY, alice.id))
    time.sleep(0.3)
    own = get_stream(g.addr, "/mcp", ALICE, alice.id)
    time.sleep(0.3)
    alice.load("tenant__chatty")
    call_id, call = alice.call("tenant__chatty", {"text": "VICTIM-LOG-2"})
    call.join()
    time.sleep(1.0)
    theft.stop()
    own.stop()

    def relevant(reply: Reply) -> list:
        """alice's notices: the list change, and her call's log lines."""
        return [
            m
            for m in reply.streamed()
            if isinstance(m, dict)
            and (
                m.get("method") == "notifications/tools/list_changed"
                or (m.get("method") == "notifications/message" and "VICTIM-LOG-2" in json.dumps(m))
            )
        ]

    stolen = relevant(theft)
    alice_saw = relevant(own) + relevant(call)
    heard = [m for m in alice_saw if m.get("method") == "notifications/message"]
    owner_ok = result_text(call.answer(call_id)) == "VICTIM-LOG-2" and bool(heard)
    saw = excerpt(f"{theft.status} " + " ".join(json.dumps(m) for m in stolen)) if stolen else theft.shown()
    why = (
        f"mallory's GET: {theft.status}, {len(theft.streamed())} events, {len(stolen)} of them alice's "
        f"list_changed or log lines; alice's own GET ({own.status}) and call stream got {len(alice_saw)} "
        f"({len(heard)} of her log lines)"
    )
    upstream = [e for e in g.upstream() if e.get("tool") == "chatty"]
    return verdict("hijack_stream", theft.status, saw, upstream, owner_ok, theft.is_refusal(403) and not theft.streamed(), why)


def cancel_call(lab: Lab) -> dict:
    """3. notifications/cancelled of alice's call in flight, with mallory's token."""
    g = lab.gateway()
    alice = opened(g.addr)
    alice.load("tenant__slow_echo")
    call_id, call = alice.call("tenant__slow_echo", {"text": "VICTIM-RESULT-3", "seconds": 3})
    if not g.until_upstream(lambda e: e.get("tool") == "slow_echo"):
        raise Setup("alice's call never reached the upstream")
    attack = mallory(
        lambda: Session(g.addr, MALLORY, "/mcp", alice.id).notify(
            "notifications/cancelled", {"requestId": call_id, "reason": "mallory"}
        )
    )
    call.join()
    time.sleep(0.3)
    cancelled = [e for e in g.upstream() if e.get("event") == "cancelled"]
    mine = result_text(call.answer(call_id))
    owner_ok = mine == "VICTIM-RESULT-3"
    why = (
        f"mallory's notifications/cancelled: {attack.status}; the upstream logged {len(cancelled)} "
        f"cancellations; alice's call got {mine or 'no result: ' + call.shown()!r}"
    )
    return verdict("cancel_call", attack.status, attack.shown(), cancelled, owner_ok, attack.is_refusal(403) and not cancelled, why)


def delete_session(lab: Lab) -> dict:
    """4. DELETE of alice's session with mallory's token."""
    g = lab.gateway()
    alice = opened(g.addr)
    alice.tools()
    attack = mallory(lambda: send(g.addr, "DELETE", "/mcp", mcp_headers(MALLORY, alice.id)).read())
    time.sleep(0.2)
    owner_ok, after = alice.works()
    why = f"mallory's DELETE: {attack.status}; alice's tools/list after it: {after}"
    return verdict("delete_session", attack.status, attack.shown(), [], owner_ok, attack.is_refusal(403), why)


def set_log_level(lab: Lab) -> dict:
    """5. logging/setLevel `emergency` on alice's session, with mallory's token."""
    g = lab.gateway()
    alice = opened(g.addr)
    alice.load("tenant__chatty")
    own = get_stream(g.addr, "/mcp", ALICE, alice.id)
    time.sleep(0.3)
    message = {"jsonrpc": "2.0", "id": 7, "method": "logging/setLevel", "params": {"level": "emergency"}}
    attack = mallory(lambda: post(g.addr, "/mcp", MALLORY, alice.id, message).read(until=answered(7)))
    time.sleep(0.5)
    call_id, call = alice.call("tenant__chatty", {"text": "VICTIM-LOG-5"})
    call.join()
    time.sleep(1.0)
    own.stop()
    heard = [
        m
        for r in (own, call)
        for m in r.streamed()
        if isinstance(m, dict) and m.get("method") == "notifications/message" and "VICTIM-LOG-5" in json.dumps(m)
    ]
    set_levels = [e for e in g.upstream() if e.get("event") == "set_level" and e.get("level") == "emergency"]
    owner_ok = result_text(call.answer(call_id)) == "VICTIM-LOG-5" and len(heard) >= 1
    why = (
        f"mallory's logging/setLevel: {attack.status}; the upstream received {len(set_levels)} "
        f"setLevel emergency; alice then heard {len(heard)} of her call's 3 log lines"
    )
    return verdict("set_log_level", attack.status, attack.shown(), set_levels, owner_ok, attack.is_refusal(403) and not set_levels, why)


def restore_unbound(lab: Lab) -> dict:
    """6. alice's session, only initialized, restored by mallory on /mcp/narrow and on replica B."""
    a = lab.gateway()
    b = lab.gateway()
    results = []
    for where, addr, path in (("A's /mcp/narrow", a.addr, "/mcp/narrow"), ("replica B's /mcp", b.addr, "/mcp")):
        alice = opened(a.addr)  # initialize and notifications/initialized, nothing more
        attack = mallory(lambda: Session(addr, MALLORY, path, alice.id).request("tools/list")[1])
        time.sleep(0.2)
        owner_ok, after = alice.works()
        results.append((where, attack, owner_ok, after))
    saw = " | ".join(f"{where}: {attack.shown()}" for where, attack, _, _ in results)
    why = "; ".join(
        f"mallory's tools/list on {where}: {attack.status}; alice's tools/list on A after it: {after}"
        for where, attack, _, after in results
    )
    owner_ok = all(ok for _, _, ok, _ in results)
    refused = all(attack.is_refusal(403) for _, attack, _, _ in results)
    return verdict("restore_unbound", worst([r[1] for r in results]), saw, [], owner_ok, refused, why)


def delete_across_replicas(lab: Lab) -> dict:
    """7. alice's DELETE on replica A must end the session on replica B, which restored it."""
    a = lab.gateway()
    b = lab.gateway()
    alice = opened(a.addr)
    alice.tools()
    on_b = Session(b.addr, ALICE, "/mcp", alice.id)
    before, before_shown = on_b.works()
    if not before:
        raise Setup(f"replica B did not serve alice's session before the DELETE: {before_shown}")
    deleted = send(a.addr, "DELETE", "/mcp", mcp_headers(ALICE, alice.id)).read()
    time.sleep(0.3)
    _, stale = on_b.request("tools/list")
    time.sleep(0.2)
    record = lab.redis.has_session(alice.id)
    _, again = alice.request("tools/list")
    owner_ok = deleted.status in (200, 202, 204)
    why = (
        f"alice's DELETE on A: {deleted.status}; then on B: {stale.status}; the Redis record "
        f"{'is back' if record else 'stays gone'}; then on A: {again.status}"
    )
    blocked = stale.is_refusal(404) and not record and again.status == 404
    return verdict("delete_across_replicas", stale.status, stale.shown(), [], owner_ok, blocked, why)


def restore_past_max_sessions(lab: Lab) -> dict:
    """8. A session restored on replica B (max_sessions = 2, two open) counts as a new one."""
    a = lab.gateway()
    b = lab.gateway(max_sessions=2)
    first = opened(b.addr, name="first")
    first.tools()
    second = opened(b.addr, name="second")
    second.tools()
    third = Session(b.addr, ALICE)
    try:
        third.initialize("third")
        cap = f"a third initialize on B was let in ({third.id})"
    except Setup as e:
        cap = f"a third initialize on B was refused ({e})"
    alice = opened(a.addr)
    alice.tools()
    _, restore = Session(b.addr, ALICE, "/mcp", alice.id).request("tools/list")
    owner_ok = first.works()[0] and second.works()[0] and alice.works()[0]
    why = f"{cap}; the session opened on A, restored on B: {restore.status}; the other sessions still work: {owner_ok}"
    return verdict("restore_past_max_sessions", restore.status, restore.shown(), [], owner_ok, restore.is_refusal(503), why)


def discover_instructions(lab: Lab) -> dict:
    """9. A sessionless server/discover with mallory's profile-bound token, in three forms: as
    the issue wrote it (2026-07-28), with the `Mcp-Method` header 2026-07-28 also asks for, and
    at 2025-11-25 (rmcp answers a sessionless discover of a revision it serves over HTTP)."""
    g = lab.gateway()

    def message(version: str) -> dict:
        meta = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "x", "version": "1"},
        }
        return {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}

    forms = [
        ("2026-07-28", {"MCP-Protocol-Version": "2026-07-28"}),
        ("2026-07-28 with Mcp-Method", {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}),
        ("2025-11-25", {"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "server/discover"}),
    ]

    def discover(token: str, form) -> Reply:
        label, extra = form
        version = extra["MCP-Protocol-Version"]
        return post(g.addr, "/mcp", token, None, message(version), extra).read(until=answered(1))

    def instructions(reply: Reply) -> str:
        result = (reply.answer(1) or {}).get("result") or {}
        return str(result.get("instructions") or "")

    def shown(reply: Reply) -> str:
        if "result" in (reply.answer(1) or {}):
            return f"{reply.status} instructions: {instructions(reply)}"
        return reply.shown()

    attacks = [mallory(lambda form=form: discover(MALLORY, form)) for form in forms]
    owns = [discover(ALICE, form) for form in forms]
    # The instructions list deferred tools by server ("tenant: chatty, echo, slow_echo"): the
    # narrow profile sees only `other`, so any mention of `tenant` is a leak.
    leaked = [label for (label, _), attack in zip(forms, attacks) if "tenant" in attack.text()]
    # The control: each of alice's is answered (a result, or a JSON-RPC error for a form the
    # gateway does not serve), and a result's instructions name her tools.
    def served(reply: Reply) -> bool:
        answer = reply.answer(1) or {}
        return "error" in answer or ("result" in answer and "tenant:" in instructions(reply))

    owner_ok = all(served(own) for own in owns)
    saw = " | ".join(f"{label}: {excerpt(shown(a), 220)}" for (label, _), a in zip(forms, attacks))
    why = (
        f"mallory's discovers ({', '.join(f'{l}: {a.status}' for (l, _), a in zip(forms, attacks))}) "
        f"named the tenant server in {leaked or 'none'}; alice's: "
        + "; ".join(f"{l}: {excerpt(shown(o), 120)}" for (l, _), o in zip(forms, owns))
    )
    status = next((a.status for (l, _), a in zip(forms, attacks) if l in leaked), attacks[-1].status)
    return verdict("discover_instructions", status, saw, [], owner_ok, all(a.status for a in attacks) and not leaked, why)


ATTACKS = [
    steal_result,
    hijack_stream,
    cancel_call,
    delete_session,
    set_log_level,
    restore_unbound,
    delete_across_replicas,
    restore_past_max_sessions,
    discover_instructions,
]


def main() -> int:
    global VERBOSE, CONTROL
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--toolgate", required=True, help="the toolgate binary")
    parser.add_argument("--only", help="comma-separated attack names")
    parser.add_argument("--verbose", action="store_true", help="the gateways' logs on stderr")
    parser.add_argument(
        "--control", action="store_true", help="mallory sends nothing: checks that every control holds unattacked"
    )
    args = parser.parse_args()
    VERBOSE, CONTROL = args.verbose, args.control
    # Ended from outside (the test's `timeout`): the `finally` blocks still stop every child.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    only = set(args.only.split(",")) if args.only else None
    results = []
    with tempfile.TemporaryDirectory(prefix="toolgate-tenants-") as dir_:
        redis = Redis(dir_)
        try:
            for attack in ATTACKS:
                if only and attack.__name__ not in only:
                    continue
                lab = Lab(args.toolgate, dir_, redis)
                started = time.monotonic()
                try:
                    result = attack(lab)
                except Exception as e:  # a failed attack is a verdict, not a crash
                    result = verdict(attack.__name__, 0, "", [], False, False, f"{type(e).__name__}: {e}")
                    note(traceback.format_exc())
                finally:
                    lab.close()
                result["seconds"] = round(time.monotonic() - started, 1)
                note(json.dumps(result))
                results.append(result)
        finally:
            stop(redis.process)
    print(json.dumps({"attacks": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
