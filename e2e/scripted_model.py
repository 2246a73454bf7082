"""A scripted model endpoint on 127.0.0.1 for driving real agent CLIs through toolgate.

It speaks the Anthropic Messages API (POST /v1/messages, streaming or not; Claude Code), the
OpenAI Responses API (POST /v1/responses, streaming; Codex CLI) and the Gemini API (POST
/v1beta/models/MODEL:streamGenerateContent?alt=sse, :generateContent and :countTokens; Gemini
CLI with GOOGLE_GEMINI_BASE_URL), and decides each turn from the request it got, like a model
that follows one plan:

1. call a tool it was never shown (a never-loaded memory tool) and read the refusal;
2. call toolgate's `tool_search` for "read the notes file";
3. call the reader that the search loaded, on the notes file;
4. answer with what the file says.

In bridge exposure (only `tool_search` and `call_tool` offered), steps 1 and 3 go through
`call_tool`, step 3 with the grant the search result showed next to the reader's schema when
there is one (2026-07-28 over HTTP, no session). Tools are found by the end of their names, whatever prefix the CLI gives a
server's tools (`mcp__toolgate__` in Claude Code, `mcp_toolgate_` in Gemini CLI), and the
never-loaded tool is called under `tool_search`'s prefix. Every request body is appended to
the log (one JSON line each), so a test can check what the CLI sent on each turn. Requests
that are not the agent's turns (title generation, token counting, quota checks, Gemini CLI's
model router) get a short text answer, or `{}` when they ask for JSON.

    python scripted_model.py --port-file F --log F --notes PATH
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

READER = "filesystem__read_text_file"
NEVER_LOADED = "memory__create_entities"
QUERY = "read the notes file"


def tool_names_anthropic(body: dict) -> list[str]:
    return [t.get("name", "") for t in body.get("tools", []) if isinstance(t, dict)]


def tool_names_openai(body: dict) -> list[str]:
    names = []
    for t in body.get("tools", []):
        if not isinstance(t, dict):
            continue
        if t.get("type") == "namespace":
            for inner in t.get("tools", []):
                names.append(t.get("name", "") + inner.get("name", ""))
        elif "name" in t:
            names.append(t["name"])
    return names


def tool_names_gemini(body: dict) -> list[str]:
    names = []
    for t in body.get("tools", []):
        if isinstance(t, dict):
            names += [d.get("name", "") for d in t.get("functionDeclarations", []) if isinstance(d, dict)]
    return names


def code_mode_tools(body: dict) -> list[str] | None:
    """Under Codex's code mode (one freeform `exec` tool, in the request's `additional_tools`),
    the tools `exec` declares (`declare const tools: { NAME(args: ...` in its description);
    None outside code mode."""
    for item in body.get("input", []):
        if item.get("type") != "additional_tools":
            continue
        for namespace in item.get("tools", []):
            for tool in namespace.get("tools", []):
                if tool.get("type") == "custom" and tool.get("name") == "exec":
                    return re.findall(r"declare const tools: \{ ([A-Za-z0-9_$]+)\(", tool.get("description", ""))
    return None


def find(names: list[str], suffix: str) -> str | None:
    return next((n for n in names if n.endswith(suffix)), None)


class Plan:
    """What the scripted model does next, from the transcript so far (as plain text)."""

    def __init__(self, notes: str) -> None:
        self.notes = notes

    turns = 0

    def next(self, names: list[str], transcript: str) -> tuple[str, str | None, dict | None]:
        """('call', tool, arguments) or ('say', text, None)."""
        search = find(names, "tool_search")
        if search is None:
            return ("say", "ok", None)
        # A bounded run: a plan that goes wrong ends instead of looping until a timeout.
        Plan.turns += 1
        if Plan.turns > 8:
            return ("say", "giving up after 8 turns", None)
        bridge = find(names, "call_tool")
        if "buy oat milk" in transcript:
            return ("say", "The notes say: buy oat milk", None)
        if "NEVER_LOADED_TRIED" not in transcript and NEVER_LOADED not in transcript:
            args = {"entities": [{"name": "intruder", "entityType": "x", "observations": ["y"]}]}
            if bridge:
                return ("call", bridge, {"name": NEVER_LOADED, "arguments": args})
            # The name the CLI would give it: tool_search's, with the tool's name at the end.
            return ("call", search[: -len("tool_search")] + NEVER_LOADED, args)
        if "Loaded " not in transcript:
            return ("call", search, {"query": QUERY})
        reader = find(names, READER)
        if bridge:
            call = {"name": READER, "arguments": {"path": self.notes}}
            # With no session (2026-07-28 over HTTP) the search gave a grant with each tool it
            # loaded, which the call must present, copied as a model would copy it.
            # Each schema line `- NAME: {...}` is followed by its own `grant: ...`.
            shown = r"- ([A-Za-z0-9_-]+): \{.*?grant: ([0-9a-f]{4}-[0-9a-f]{16}-[0-9]+-[A-Za-z0-9_-]{22})"
            grants = {name: grant for name, grant in re.findall(shown, transcript, re.S)}
            if READER in grants:
                call["grant"] = grants[READER]
            return ("call", bridge, call)
        if reader:
            return ("call", reader, {"path": self.notes})
        return ("say", "the reader was not offered to me", None)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    plan: Plan
    log_path: str
    lock = threading.Lock()
    counter = [0]

    def log_message(self, *args) -> None:  # quiet
        pass

    def _read(self) -> dict:
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length) if length else b"{}"
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        with self.lock:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"path": self.path, "body": body}) + "\n")
        return body

    def _send(self, status: int, payload: dict | list) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str | None, dict]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in events:
            chunk = ""
            if name:
                chunk += f"event: {name}\n"
            chunk += f"data: {json.dumps(data)}\n\n"
            self.wfile.write(chunk.encode())
            self.wfile.flush()
        self.close_connection = True

    def _id(self, prefix: str) -> str:
        with self.lock:
            self.counter[0] += 1
            return f"{prefix}{self.counter[0]}"

    def do_GET(self) -> None:
        self._send(200, {"data": [], "object": "list"})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.end_headers()

    def do_POST(self) -> None:
        body = self._read()
        path = self.path.split("?")[0]
        if path.endswith("/v1/messages/count_tokens"):
            self._send(200, {"input_tokens": 100})
        elif path.endswith("/v1/messages"):
            self.anthropic(body)
        elif path.endswith("/responses"):
            self.openai(body)
        elif path.endswith(":countTokens"):
            self._send(200, {"totalTokens": 100})
        elif path.endswith(":generateContent") or path.endswith(":streamGenerateContent"):
            self.gemini(body, path)
        else:
            self._send(404, {"error": {"message": f"no route {path}"}})

    # Anthropic Messages ------------------------------------------------------------------
    def anthropic(self, body: dict) -> None:
        transcript = json.dumps(body.get("messages", []), ensure_ascii=False)
        kind, what, args = self.plan.next(tool_names_anthropic(body), transcript)
        self.emit_anthropic(body, kind, what, args)

    def emit_anthropic(self, body: dict, kind: str, what: str, args: dict | None) -> None:
        """Answers a Messages request with a tool call (`kind` "call") or text ("say")."""
        message_id = self._id("msg_")
        model = body.get("model", "claude-sonnet-4-5")
        usage = {"input_tokens": 10, "output_tokens": 5}
        if kind == "call":
            block = {"type": "tool_use", "id": self._id("toolu_"), "name": what, "input": args}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": what}
            stop = "end_turn"
        if not body.get("stream"):
            self._send(200, {"id": message_id, "type": "message", "role": "assistant", "model": model,
                             "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage})
            return
        start = dict(block)
        if kind == "call":
            start["input"] = {}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
        else:
            start["text"] = ""
            delta = {"type": "text_delta", "text": what}
        self._sse([
            ("message_start", {"type": "message_start", "message": {
                "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    # OpenAI Responses --------------------------------------------------------------------
    def openai(self, body: dict) -> None:
        transcript = json.dumps(body.get("input", []), ensure_ascii=False)
        declared = code_mode_tools(body)
        if declared is not None:
            # Codex's code mode: the plan's calls become JavaScript run by `exec`.
            kind, what, args = self.plan.next(declared, transcript)
            if kind == "call":
                script = (
                    f"const answer = await tools.{what}({json.dumps(args)});\n"
                    'text(answer.content.map((c) => c.text ?? "").join("\\n"));'
                )
                return self.emit_openai(body, "custom", "exec", script)
            return self.emit_openai(body, kind, what, args)
        kind, what, args = self.plan.next(tool_names_openai(body), transcript)
        self.emit_openai(body, kind, what, args)

    def emit_openai(self, body: dict, kind: str, what: str, args) -> None:
        """Answers a Responses request with a function call ("call"), a client-executed tool
        search ("tool_search", `what` the query), a freeform tool call ("custom", `args` its
        input text, as Codex's code-mode `exec` takes JavaScript) or text ("say")."""
        response_id = self._id("resp_")
        model = body.get("model", "gpt-5")
        if kind == "tool_search":
            item = {"type": "tool_search_call", "id": self._id("tsc_"), "call_id": self._id("call_"),
                    "execution": "client", "arguments": {"query": what}, "status": "completed"}
        elif kind == "custom":
            item = {"type": "custom_tool_call", "id": self._id("ctc_"), "call_id": self._id("call_"),
                    "name": what, "input": args, "status": "completed"}
        elif kind == "call":
            # A name, split at the namespace of the request's tools it belongs to, or an
            # explicit (namespace, name) for a tool a tool search returned.
            namespace, name = what if isinstance(what, tuple) else ("", what)
            for t in body.get("tools", []) if not namespace else []:
                if t.get("type") == "namespace" and what.startswith(t.get("name", "")):
                    namespace, name = t["name"], what[len(t["name"]):]
            item = {"type": "function_call", "id": self._id("fc_"), "call_id": self._id("call_"),
                    "name": name, "arguments": json.dumps(args), "status": "completed"}
            if namespace:
                item["namespace"] = namespace
        else:
            item = {"type": "message", "id": self._id("msg_"), "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": what, "annotations": []}]}
        base = {"id": response_id, "object": "response", "model": model, "status": "in_progress", "output": []}
        done = dict(base, status="completed", output=[item],
                    usage={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                           "input_tokens_details": {"cached_tokens": 0},
                           "output_tokens_details": {"reasoning_tokens": 0}})
        self._sse([
            ("response.created", {"type": "response.created", "response": base}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": done}),
        ])

    # Gemini API ---------------------------------------------------------------------------
    def gemini(self, body: dict, path: str) -> None:
        transcript = json.dumps(body.get("contents", []), ensure_ascii=False)
        kind, what, args = self.plan.next(tool_names_gemini(body), transcript)
        self.emit_gemini(body, path, kind, what, args)

    def emit_gemini(self, body: dict, path: str, kind: str, what: str, args: dict | None) -> None:
        """Answers a Gemini request with a function call ("call") or text ("say")."""
        if kind == "call":
            # Gemini CLI adds `wait_for_previous` to every MCP tool and tells the model to set
            # it; a model that does sends it along with the tool's own arguments.
            part = {"functionCall": {"name": what, "args": dict(args, wait_for_previous=False)}}
        elif (body.get("generationConfig") or {}).get("responseMimeType") == "application/json":
            # A side request for JSON (Gemini CLI's model router, without --model) gets `{}`:
            # the router rejects it at once and keeps its default; plain text it retries 5 times.
            part = {"text": "{}"}
        else:
            part = {"text": what}
        model = path.rsplit("/", 1)[-1].split(":")[0]
        candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        response = {
            "candidates": [candidate],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": model,
            "responseId": self._id("gemini_"),
        }
        if not path.endswith(":streamGenerateContent"):
            self._send(200, response)
        elif "alt=sse" in self.path:
            self._sse([(None, response)])
        else:
            # Without alt=sse the stream is one JSON array of responses.
            self._send(200, [response])


def serve(handler: type[Handler], port_file: str) -> None:
    """Serves `handler` on a free loopback port, written to `port_file` once listening."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--notes", required=True)
    args = parser.parse_args()
    Handler.plan = Plan(args.notes)
    Handler.log_path = args.log
    serve(Handler, args.port_file)


if __name__ == "__main__":
    main()
