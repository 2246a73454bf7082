"""The scripted model of the client harness: one request of a bench set, played the same way
whatever search is in front of it.

It speaks the provider API each agent CLI speaks (through `e2e/scripted_model.py`: Anthropic
Messages for Claude Code, OpenAI Responses for Codex, the Gemini API for Gemini CLI) and, turn
by turn, from the request it got:

1. searches with the search tool in front of it, with the task's query: toolgate's
   `tool_search` when the CLI offers it (however the CLI names it), else the CLI's own (Claude
   Code's `ToolSearch`, Codex's `tool_search`), and under Codex's code mode from inside `exec`;
   with no search at all (every tool listed) it answers at once: that run only counts tokens;
2. calls the first tool the search made available (the first a search result names that the
   CLI now lets it call), with arguments made from its schema (each required property a value
   of its type);
3. answers "done".

A run that goes wrong ends within eight turns. Every request body is logged (one JSON line
each) by the handler it shares with `e2e/scripted_model.py`.

    python model.py --port-file F --log F --task TASK.json

TASK.json: {"query": "the text the model searches with"}.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e"))

import scripted_model as sm  # noqa: E402

MAX_TURNS = 8


def dummy(schema: dict) -> object:
    """A value of the type `schema` asks for."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if kind == "integer":
        return 1
    if kind == "number":
        return 1
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return arguments(schema)
    for alt in schema.get("anyOf", []) + schema.get("oneOf", []):
        if alt.get("type") != "null":
            return dummy(alt)
    return "x"


def arguments(schema: dict | None) -> dict:
    """Arguments for a tool of input schema `schema`: each required property, a value of its type."""
    schema = schema or {}
    props = schema.get("properties") or {}
    return {name: dummy(props.get(name) or {}) for name in schema.get("required") or [] if isinstance(name, str)}


# What a search result names, in order -------------------------------------------------------

FUNCTION = re.compile(r"<function>(\{.*?\})</function>", re.S)
LOADED = re.compile(r"Loaded \d+ tools?[^\n]*\n((?:- [^\n]*\n?)+)")
ALREADY = re.compile(r"(?:Already loaded|already loaded)[^\n]*?:\s*([^\n]+)")


def texts(value: object) -> str:
    """Every text inside a tool result as the API carries it (a string, content blocks, output
    items, a function response), joined by newlines; a `tool_reference` block as its name."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(texts(v) for v in value)
    if isinstance(value, dict):
        if value.get("type") == "tool_reference":
            return f'<function>{json.dumps({"name": value.get("tool_name")})}</function>'
        for key in ("text", "output", "content", "response", "result"):
            if key in value:
                return texts(value[key])
        return json.dumps(value, ensure_ascii=False)
    return ""


def structured_in(text: str) -> object:
    """The JSON object a result's text carries, after whatever the CLI put before it (Codex
    writes `Wall time: …\nOutput:\n` first), or None."""
    at = text.find("{")
    if at < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(text[at:])[0]
    except json.JSONDecodeError:
        return None


def toolgate_loaded(text: str) -> list[str]:
    """The tools a toolgate `tool_search` result says it loaded (or had loaded), in order: from
    its structured content when the CLI passed that on (Claude Code does), else its text."""
    structured = structured_in(text)
    if isinstance(structured, dict) and isinstance(structured.get("loaded"), list):
        return [n for n in structured["loaded"] + structured.get("already_loaded", []) if isinstance(n, str)]
    names = []
    for block in LOADED.findall(text):
        names += [m.group(1) for m in re.finditer(r"^- ([^\s:]+):", block, re.M)]
    for line in ALREADY.findall(text):
        names += [n.strip() for n in line.split(",") if n.strip()]
    return names


def schemas_in(text: str) -> dict[str, dict]:
    """The input schemas a toolgate result lists (`- NAME: {...}` lines after "Input schemas")."""
    out = {}
    structured = structured_in(text)
    if isinstance(structured, dict):
        text = str(structured.get("message", ""))
    at = text.find("Input schemas")
    if at < 0:
        return out
    for m in re.finditer(r"^- ([^\s:]+): (\{.*)$", text[at:], re.M):
        try:
            out[m.group(1)] = json.loads(m.group(2))
        except json.JSONDecodeError:
            pass
    return out


class Bench:
    """One request, played turn by turn; holds nothing between requests but the query."""

    def __init__(self, query: str) -> None:
        self.query = query

    # Anthropic Messages (Claude Code) ----------------------------------------------------------
    def anthropic(self, body: dict) -> tuple[str, str, dict | None]:
        tools = {t.get("name", ""): t for t in body.get("tools", []) if isinstance(t, dict)}
        uses, results = [], []
        for message in body.get("messages", []):
            for block in message.get("content", []) if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_use":
                    uses.append(block)
                elif block.get("type") == "tool_result":
                    results.append((block.get("tool_use_id"), texts(block.get("content"))))
        if len(uses) >= 2 or len(results) >= MAX_TURNS:
            return ("say", "done", None)
        # The gateway's search, however the CLI names an MCP tool (`mcp__toolgate__tool_search`
        # in Claude Code, `toolgate-tool_search` in Copilot CLI), else the CLI's own.
        gateway_search = next((n for n in tools if n.endswith("tool_search") and n != "tool_search"), None)
        own = "ToolSearch" if "ToolSearch" in tools else ("tool_search_tool" if "tool_search_tool" in tools else None)
        search = gateway_search or own
        if not uses:
            if search is None:
                return ("say", "done", None)
            if search == "tool_search_tool":
                # Copilot CLI's own search takes a regular expression: the query's words, any of them.
                words = [re.escape(w) for w in re.findall(r"[^\W_]{3,}", self.query)]
                return ("call", search, {"pattern": "|".join(words)[:200] or self.query[:200]})
            return ("call", search, {"query": self.query})
        found = dict(results).get(uses[0].get("id"), "")
        if uses[0].get("name") in ("ToolSearch", "tool_search_tool"):
            for raw in FUNCTION.findall(found):
                try:
                    function = json.loads(raw)
                except json.JSONDecodeError:
                    continue
                if function.get("name") in tools and not function.get("parameters"):
                    function["parameters"] = tools[function["name"]].get("input_schema")
                return ("call", function["name"], arguments(function.get("parameters")))
            return ("say", "done", None)
        prefix = uses[0]["name"][: -len("tool_search")]
        schemas = schemas_in(found)
        for name in toolgate_loaded(found):
            if prefix + name in tools:
                return ("call", prefix + name, arguments(tools[prefix + name].get("input_schema")))
            if prefix + "call_tool" in tools:
                return ("call", prefix + "call_tool", {"name": name, "arguments": arguments(schemas.get(name))})
        return ("say", "done", None)

    # OpenAI Responses (Codex) -------------------------------------------------------------------
    def openai(self, body: dict) -> tuple[str, str, object]:
        inputs = body.get("input", [])
        calls = [i for i in inputs if i.get("type") in ("function_call", "tool_search_call", "custom_tool_call")]
        outputs = {i.get("call_id"): i for i in inputs if str(i.get("type", "")).endswith("_output")}
        if len(calls) >= 2 or len(outputs) >= MAX_TURNS:
            return ("say", "done", None)
        offered = list(body.get("tools", []))
        for item in inputs:
            if item.get("type") == "additional_tools":
                offered += item.get("tools", [])
        functions = {}
        for t in offered:
            if t.get("type") == "namespace":
                for inner in t.get("tools", []):
                    functions[t.get("name", "") + inner.get("name", "")] = (t.get("name"), inner)
            elif t.get("name"):
                functions[t["name"]] = (None, t)
        code_mode = "functionsexec" in functions or "exec" in functions
        gateway_search = next((n for n in functions if n.startswith("mcp__") and n.endswith("tool_search")), None)
        if code_mode:
            return self.code_mode(body, calls, outputs)
        if not calls:
            if gateway_search:
                namespace, tool = functions[gateway_search]
                return ("call", gateway_search, {"query": self.query})
            if any(t.get("type") == "tool_search" for t in offered):
                return ("tool_search", self.query, None)
            return ("say", "done", None)
        first = calls[0]
        output = outputs.get(first.get("call_id"), {})
        if first.get("type") == "tool_search_call":
            for namespace in output.get("tools", []):
                inner = (namespace.get("tools") or [namespace])[0]
                space = namespace.get("name", "") if namespace.get("type") == "namespace" else ""
                return ("call", (space, inner.get("name", "")), arguments(inner.get("parameters")))
            return ("say", "done", None)
        text = texts(output.get("output"))
        prefix = gateway_search[: -len("tool_search")] if gateway_search else ""
        schemas = schemas_in(text)
        for name in toolgate_loaded(text):
            if prefix + name in functions:
                return ("call", prefix + name, arguments(functions[prefix + name][1].get("parameters")))
            if prefix + "call_tool" in functions:
                return ("call", prefix + "call_tool", {"name": name, "arguments": arguments(schemas.get(name))})
        return ("say", "done", None)

    def code_mode(self, body: dict, calls: list, outputs: dict) -> tuple[str, str, object]:
        """Codex's code mode: one `exec` tool that runs JavaScript; MCP tools are `tools.NAME`
        inside it. The gateway's namespace is among the deferred ones the prompt names."""
        text = json.dumps(body.get("input", []), ensure_ascii=False)
        # The gateway's namespace: declared in `exec`'s description (`## mcp__NAME` then the
        # gateway's instructions) or among the deferred ones (`- mcp__NAME: toolgate …`).
        gateway = re.search(r"(?:## |- )(mcp__[A-Za-z0-9_]+)(?::|\\n) ?toolgate", text)
        if not gateway:
            return ("say", "done", None)
        prefix = gateway.group(1) + "__"
        if not calls:
            script = (
                f"const found = await tools.{prefix}tool_search({json.dumps({'query': self.query})});\n"
                'text(found.content.map((c) => c.text ?? "").join("\\n"));'
            )
            return ("custom", "exec", script)
        found = texts(outputs.get(calls[0].get("call_id"), {}).get("output"))
        schemas = schemas_in(found)
        for name in toolgate_loaded(found):
            call = {"name": name, "arguments": arguments(schemas.get(name))}
            script = (
                f"const answer = await tools.{prefix}call_tool({json.dumps(call)});\n"
                'text(answer.content.map((c) => c.text ?? "").join("\\n"));'
            )
            return ("custom", "exec", script)
        return ("say", "done", None)

    # Gemini API (Gemini CLI) --------------------------------------------------------------------
    def gemini(self, body: dict) -> tuple[str, str, dict | None]:
        declared = {}
        for t in body.get("tools", []):
            for d in t.get("functionDeclarations", []) if isinstance(t, dict) else []:
                declared[d.get("name", "")] = d
        calls, responses = [], []
        for content in body.get("contents", []):
            for part in content.get("parts", []):
                if "functionCall" in part:
                    calls.append(part["functionCall"])
                if "functionResponse" in part:
                    responses.append(part["functionResponse"])
        if len(calls) >= 2 or len(responses) >= MAX_TURNS:
            return ("say", "done", None)
        # Gemini CLI names an MCP tool `mcp_<server>_<tool>`: toolgate's search is
        # `mcp_toolgate_tool_search` (a catalog's own `mcp_metatool_search` is not a search).
        search = next((n for n in declared if n.endswith("_toolgate_tool_search")), None)
        if not calls:
            return ("call", search, {"query": self.query}) if search else ("say", "done", None)
        found = texts(responses[0] if responses else "")
        prefix = calls[0]["name"][: -len("tool_search")]
        schemas = schemas_in(found)
        for name in toolgate_loaded(found):
            if prefix + name in declared:
                schema = declared[prefix + name].get("parametersJsonSchema") or declared[prefix + name].get("parameters")
                return ("call", prefix + name, arguments(schema))
            if prefix + "call_tool" in declared:
                return ("call", prefix + "call_tool", {"name": name, "arguments": arguments(schemas.get(name))})
        return ("say", "done", None)


class Handler(sm.Handler):
    """The shared handler, with each request decided by the bench's plan."""

    bench: Bench

    def anthropic(self, body: dict) -> None:
        if not body.get("tools"):
            return self.emit_anthropic(body, "say", "done", None)
        self.emit_anthropic(body, *self.bench.anthropic(body))

    def openai(self, body: dict) -> None:
        self.emit_openai(body, *self.bench.openai(body))

    def gemini(self, body: dict, path: str) -> None:
        if (body.get("generationConfig") or {}).get("responseMimeType") == "application/json":
            return self.emit_gemini(body, path, "say", "{}", None)
        kind, what, args = self.bench.gemini(body)
        if kind == "call":
            args = dict(args)
        self.emit_gemini(body, path, kind, what, args)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--task", required=True)
    args = parser.parse_args()
    with open(args.task, encoding="utf-8") as f:
        task = json.load(f)
    Handler.bench = Bench(task["query"])
    Handler.log_path = args.log
    Handler.plan = sm.Plan("")
    sm.serve(Handler, args.port_file)


if __name__ == "__main__":
    main()
