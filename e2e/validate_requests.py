"""Checks toolgate's rendered requests against the official SDKs' typed request parameters.

Usage: python validate_requests.py FILE...

Each FILE is a golden session of `crates/toolgate/tests/render_golden.rs`: a JSON object with
`provider` and `turns`, each turn holding the `tools` array sent and the `answers` sent back
(search results, tool results). Every value is validated with pydantic's TypeAdapter over the
types of the `anthropic` and `openai` packages (and Gemini's with the `google-genai` models),
every top-level object is checked for keys its type does not have (TypedDicts would ignore
them), and the documented constraints are checked: at least one tool not deferred and no
`cache_control` on a deferred tool (Anthropic), the name pattern and the 128-tool cap (OpenAI
Chat Completions), Gemini's name rule and its 512 (Vertex AI: 128) declarations. Exits 1
naming every problem.
"""

import json
import re
import sys
import typing

from pydantic import TypeAdapter

import anthropic.types as at
import openai.types.chat as oc
import openai.types.responses as orr
from google.genai import types as gt

OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
GEMINI_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")


def keys(td) -> frozenset:
    return frozenset(td.__required_keys__ | td.__optional_keys__)


def strict(value: dict, td, where: str, problems: list) -> None:
    extra = set(value) - keys(td)
    if extra:
        problems.append(f"{where}: keys {sorted(extra)} are not in {td.__name__}")


def validate(adapter_type, value, where: str, problems: list) -> None:
    try:
        TypeAdapter(adapter_type).validate_python(value)
    except Exception as e:  # pydantic.ValidationError, reported whole
        problems.append(f"{where}: {e}")


ANTHROPIC_TOOL_TYPES = {
    None: at.ToolParam,
    "custom": at.ToolParam,
    "tool_search_tool_bm25_20251119": at.ToolSearchToolBm25_20251119Param,
    "tool_search_tool_regex_20251119": at.ToolSearchToolRegex20251119Param,
}

RESPONSES_TOOL_TYPES = {
    "function": orr.FunctionToolParam,
    "namespace": orr.NamespaceToolParam,
    "tool_search": orr.ToolSearchToolParam,
}


def anthropic_turn(turn: dict, where: str, problems: list) -> None:
    tools = turn["tools"]
    validate(typing.List[at.ToolUnionParam], tools, f"{where} tools", problems)
    for i, t in enumerate(tools):
        strict(t, ANTHROPIC_TOOL_TYPES.get(t.get("type"), at.ToolParam), f"{where} tools[{i}]", problems)
        if t.get("defer_loading") and "cache_control" in t:
            problems.append(f"{where} tools[{i}]: a deferred tool carries cache_control")
    if tools and all(t.get("defer_loading") for t in tools):
        problems.append(f"{where}: every tool is deferred (the API answers 400)")
    names = {t.get("name") for t in tools}
    for j, a in enumerate(turn.get("answers", [])):
        validate(at.ToolResultBlockParam, a, f"{where} answers[{j}]", problems)
        strict(a, at.ToolResultBlockParam, f"{where} answers[{j}]", problems)
        for block in a.get("content", []) if isinstance(a.get("content"), list) else []:
            if block.get("type") == "tool_reference" and block.get("tool_name") not in names:
                problems.append(f"{where} answers[{j}]: references {block.get('tool_name')}, not in tools")


def responses_turn(turn: dict, where: str, problems: list) -> None:
    tools = turn["tools"]
    validate(typing.List[orr.ToolParam], tools, f"{where} tools", problems)
    for i, t in enumerate(tools):
        td = RESPONSES_TOOL_TYPES.get(t.get("type"))
        if td is None:
            problems.append(f"{where} tools[{i}]: unexpected type {t.get('type')}")
            continue
        strict(t, td, f"{where} tools[{i}]", problems)
        for f in t.get("tools", []):
            strict(f, orr.FunctionToolParam, f"{where} tools[{i}].tools", problems)
            if not OPENAI_NAME.match(f.get("name", "")):
                problems.append(f"{where}: function name {f.get('name')!r} breaks the name pattern")
    for j, a in enumerate(turn.get("answers", [])):
        validate(orr.ResponseInputItemParam, a, f"{where} answers[{j}]", problems)


def chat_turn(turn: dict, where: str, problems: list) -> None:
    tools = turn["tools"]
    validate(typing.List[oc.ChatCompletionToolParam], tools, f"{where} tools", problems)
    if len(tools) > 128:
        problems.append(f"{where}: {len(tools)} tools, over the 128 cap")
    for i, t in enumerate(tools):
        strict(t, oc.ChatCompletionFunctionToolParam, f"{where} tools[{i}]", problems)
        name = t.get("function", {}).get("name", "")
        if not OPENAI_NAME.match(name):
            problems.append(f"{where} tools[{i}]: name {name!r} breaks the name pattern")
    for j, a in enumerate(turn.get("answers", [])):
        validate(oc.ChatCompletionToolMessageParam, a, f"{where} answers[{j}]", problems)


def gemini_turn(turn: dict, where: str, problems: list, cap: int) -> None:
    # google-genai's models forbid unknown fields themselves.
    tools = turn["tools"]
    declarations = 0
    for i, t in enumerate(tools):
        try:
            tool = gt.Tool.model_validate(t)
        except Exception as e:
            problems.append(f"{where} tools[{i}]: {e}")
            continue
        for f in tool.function_declarations or []:
            declarations += 1
            if not GEMINI_NAME.match(f.name or ""):
                problems.append(f"{where}: declaration name {f.name!r} breaks Gemini's name rule")
    if declarations > cap:
        problems.append(f"{where}: {declarations} declarations, over the cap of {cap}")
    for j, a in enumerate(turn.get("answers", [])):
        try:
            gt.Part.model_validate(a)
        except Exception as e:
            problems.append(f"{where} answers[{j}]: {e}")


CHECKS = {
    "anthropic": anthropic_turn,
    "anthropic-server": anthropic_turn,
    "anthropic-server-regex": anthropic_turn,
    "openai-responses": responses_turn,
    "anthropic-inject": anthropic_turn,
    "openai-responses-inject": responses_turn,
    "chat": chat_turn,
    "bridge": chat_turn,
    "gemini": lambda t, w, p: gemini_turn(t, w, p, 512),
    "vertex": lambda t, w, p: gemini_turn(t, w, p, 128),
}


def main() -> int:
    problems: list = []
    checked = 0
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            session = json.load(f)
        check = CHECKS.get(session["provider"])
        if check is None:
            continue
        for n, turn in enumerate(session["turns"], 1):
            check(turn, f"{path} turn {n}", problems)
            checked += 1
    for p in problems:
        print(p)
    print(f"{checked} turns checked, {len(problems)} problems")
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
