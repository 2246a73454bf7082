"""A scripted model endpoint on loopback for `crates/toolgate/examples/agent.rs`.

Speaks three APIs, non-streaming: Anthropic Messages (POST /v1/messages), OpenAI Responses
(POST /v1/responses) and Chat Completions (POST /v1/chat/completions). Each request is one
turn of the same task; the turn is read from the history the client sent (how many model
turns it holds), so the server keeps no session. Before it answers, it checks what it
received on that turn, as the provider documents it, and answers HTTP 400 naming the first
thing that is wrong:

- turn 1: the deferral is rendered (Anthropic: every tool but `tool_search` has
  `defer_loading`, none of those carries `cache_control`; Responses: a client `tool_search`
  and namespaces of deferred functions; Chat: `tool_search` first, then what preselection
  loaded). The model searches.
- turn 2: the search's answer is in the history (a `tool_reference` to `weather__forecast`, a
  `tool_search_output` holding its definition, or a tool message naming it); the native modes
  sent the same tools as on turn 1, Chat kept turn 1's tools and lists the loaded one. The
  model calls it.
- turn 3: the tool's result is in the history. The model calls `git__git_log`, which it never
  loaded.
- turn 4: the gate's refusal ("not loaded") is in the history. The model answers in words.

Usage: python scripted_provider.py   (prints "listening on http://127.0.0.1:PORT")
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOOL = "weather__forecast"
NEVER_LOADED = "git__git_log"
SEARCH = {"query": "weather forecast for a city", "limit": 1}

first_tools = {}


class Wrong(Exception):
    pass


def check(ok, what):
    if not ok:
        raise Wrong(what)


def anthropic(body):
    tools = body["tools"]
    messages = body["messages"]
    turn = sum(1 for m in messages if m["role"] == "assistant") + 1
    eager = [t for t in tools if not t.get("defer_loading")]
    check(len(eager) >= 1, "every tool is deferred")
    check(all("cache_control" not in t for t in tools if t.get("defer_loading")), "a deferred tool has cache_control")
    check(any(t.get("name") == "tool_search" for t in eager), "tool_search is missing or deferred")
    first_tools.setdefault("anthropic", tools)
    check(tools == first_tools["anthropic"], f"turn {turn}: the tools changed")
    last = json.dumps(messages[-1])
    if turn == 1:
        check(any(t.get("name") == TOOL and t.get("defer_loading") for t in tools), f"{TOOL} is not sent deferred")
        content = [{"type": "tool_use", "id": "toolu_1", "name": "tool_search", "input": SEARCH}]
    elif turn == 2:
        check('"tool_reference"' in last and TOOL in last, "turn 2: no tool_reference to the tool")
        content = [{"type": "tool_use", "id": "toolu_2", "name": TOOL, "input": {"city": "Paris"}}]
    elif turn == 3:
        check("Sunny" in last, "turn 3: the tool's result is missing")
        content = [{"type": "tool_use", "id": "toolu_3", "name": NEVER_LOADED, "input": {"repo_path": "."}}]
    else:
        check("not loaded" in last and '"is_error": true' in last, "turn 4: the refusal is missing")
        content = [{"type": "text", "text": "It will be sunny in Paris."}]
    stop = "tool_use" if content[0]["type"] == "tool_use" else "end_turn"
    return {"id": f"msg_{turn}", "type": "message", "role": "assistant", "model": body["model"],
            "content": content, "stop_reason": stop, "usage": {"input_tokens": 1, "output_tokens": 1}}


def responses(body):
    tools = body["tools"]
    items = body["input"]
    turn = sum(1 for i in items if i.get("type") in ("tool_search_call", "function_call")) + 1
    check(tools[0] == {**tools[0], "type": "tool_search", "execution": "client"}, "no client tool_search first")
    spaces = [t for t in tools if t["type"] == "namespace"]
    check(spaces and all(f.get("defer_loading") for n in spaces for f in n["tools"]), "no deferred namespaces")
    first_tools.setdefault("responses", tools)
    check(tools == first_tools["responses"], f"turn {turn}: the tools changed")
    last = json.dumps(items[-1])
    if turn == 1:
        out = [{"type": "tool_search_call", "id": "tsc_1", "call_id": "ts_1", "execution": "client",
                "status": "completed", "arguments": SEARCH}]
    elif turn == 2:
        check(items[-1].get("type") == "tool_search_output" and '"forecast"' in last and '"weather"' in last,
              "turn 2: no tool_search_output with the definition")
        out = [{"type": "function_call", "id": "fc_1", "call_id": "call_2", "namespace": "weather",
                "name": "forecast", "arguments": json.dumps({"city": "Paris"}), "status": "completed"}]
    elif turn == 3:
        check("Sunny" in last, "turn 3: the tool's result is missing")
        out = [{"type": "function_call", "id": "fc_2", "call_id": "call_3", "namespace": "git",
                "name": "git_log", "arguments": json.dumps({"repo_path": "."}), "status": "completed"}]
    else:
        check("not loaded" in last, "turn 4: the refusal is missing")
        out = [{"type": "message", "id": "msg_4", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "It will be sunny in Paris.", "annotations": []}]}]
    return {"id": f"resp_{turn}", "object": "response", "model": body["model"], "status": "completed", "output": out}


def chat(body):
    tools = body.get("tools", [])
    messages = body["messages"]
    turn = sum(1 for m in messages if m["role"] == "assistant") + 1
    names = [t["function"]["name"] for t in tools]
    check(messages[0]["role"] == "system" and "<available-deferred-tools>" in messages[0]["content"],
          "no announcement in the system prompt")
    last = json.dumps(messages[-1])
    first_tools.setdefault("chat", tools)
    before = first_tools["chat"]
    if turn == 1:
        check(names[0] == "tool_search", f"turn 1: tool_search is not first: {names}")
        call = ("tool_search", SEARCH)
    elif turn == 2:
        check(TOOL in names, f"turn 2: the loaded tool is not listed: {names}")
        check(tools[: len(before)] == before, "turn 2: the tools of turn 1 changed (only appending keeps the cache)")
        check(TOOL in last, "turn 2: the search's answer does not name the tool")
        call = (TOOL, {"city": "Paris"})
    elif turn == 3:
        check("Sunny" in last, "turn 3: the tool's result is missing")
        call = (NEVER_LOADED, {"repo_path": "."})
    else:
        check("not loaded" in last, "turn 4: the refusal is missing")
        call = None
    if call is None:
        message = {"role": "assistant", "content": "It will be sunny in Paris."}
        finish = "stop"
    else:
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{turn}", "type": "function",
             "function": {"name": call[0], "arguments": json.dumps(call[1])}}]}
        finish = "tool_calls"
    return {"id": f"chatcmpl_{turn}", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}]}


ROUTES = {"/v1/messages": anthropic, "/v1/responses": responses, "/v1/chat/completions": chat}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        route = ROUTES.get(self.path)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        try:
            if route is None:
                raise Wrong(f"no route {self.path}")
            status, reply = 200, route(body)
        except Wrong as e:
            status, reply = 400, {"error": {"message": str(e)}}
        except (KeyError, IndexError, TypeError) as e:
            status, reply = 400, {"error": {"message": f"malformed request: {e!r}"}}
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
