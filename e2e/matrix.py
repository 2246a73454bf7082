"""One cell of the client matrix: the Python MCP SDK's Client against toolgate.

toolgate stands in front of the real server-filesystem and server-memory. This script connects
with `mcp.client.client.Client`, whose `mode=` picks how the protocol version is negotiated:
`legacy` (the initialize handshake), `auto` (probe server/discover, fall back to initialize) or
a modern version string such as `2026-07-28` (adopted directly, with no handshake at all).

    python matrix.py --mode auto|legacy|2026-07-28 --transport stdio|http
                     (--command BIN --args JSON | --url URL) --notes PATH

    --command/--args   stdio: the gateway command and its arguments as a JSON array, e.g.
                       --command target/debug/toolgate --args '["serve","--stdio","--config","/tmp/x.toml"]'
    --url              streamable HTTP: the gateway's endpoint, e.g. http://127.0.0.1:PORT/mcp
    --notes            a file inside the filesystem server's folder; its content is the marker

The cell: tools/list offers tool_search; tool_search "read a text file" (retried while servers
are still starting, up to 60 s) loads filesystem__read_text_file; in native exposure the next
tools/list has it; calling it returns the notes file's content; a call of
memory__create_entities, never loaded, is refused as a tool error naming
select:memory__create_entities. It prints one JSON line of facts and exits 0, or exits 1 saying
which step was not as expected.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp_types import Implementation

from errors import describe, leaves

READER = "filesystem__read_text_file"
INTRUDER = "memory__create_entities"


class CellFailed(Exception):
    """A step of the cell was not as expected; the message says which and why."""


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def dump(result: Any) -> str:
    """A result as the JSON the server sent."""
    return result.model_dump_json(by_alias=True, exclude_none=True)


class Steps:
    """Runs each request as a named step, so a failure or a hang says where it happened."""

    def __init__(self) -> None:
        self.name = "connect"

    async def run(self, name: str, request):
        self.name = name
        try:
            return await request
        except CellFailed:
            raise
        except Exception as e:  # a protocol or validation failure of the request itself
            raise CellFailed(f"{name}: {describe(e)}") from e

    def fail(self, message: str) -> CellFailed:
        """A failure of the current step: raise what this returns."""
        return CellFailed(f"{self.name}: {message}")


async def cell(client: Client, steps: Steps, notes: Path) -> dict:
    facts: dict = {"protocol_version": client.protocol_version}
    info = client.server_info
    facts["server"] = {"name": info.name, "version": info.version} if info else None

    first = await steps.run("first tools/list", client.list_tools())
    facts["first_list"] = [t.name for t in first.tools]
    if "tool_search" not in facts["first_list"]:
        raise steps.fail(f"tools/list lacks tool_search: {facts['first_list']}")
    # Bridge exposure offers call_tool next to tool_search and never changes the list.
    bridge = "call_tool" in facts["first_list"]
    facts["exposure"] = "bridge" if bridge else "native"

    # Upstreams start in the background: search again while the answer says some are starting.
    deadline = time.monotonic() + 60
    attempts = 0
    while True:
        attempts += 1
        search = await steps.run("tool_search", client.call_tool("tool_search", {"query": "read a text file"}))
        if "still starting" not in text_of(search) or time.monotonic() > deadline:
            break
        await anyio.sleep(0.5)
    facts["search_attempts"] = attempts
    structured = search.structured_content if isinstance(search.structured_content, dict) else {}
    facts["loaded"] = structured.get("loaded")
    loaded_text = " ".join(facts["loaded"]) if facts["loaded"] else text_of(search)
    if search.is_error or READER not in loaded_text:
        raise steps.fail(f"tool_search did not load {READER}: {text_of(search)}")

    # Native exposure: the loaded tool now appears in tools/list.
    if not bridge:
        second = await steps.run("second tools/list", client.list_tools())
        facts["second_list"] = [t.name for t in second.tools]
        if READER not in facts["second_list"]:
            raise steps.fail(f"tools/list after the search lacks {READER}: {facts['second_list']}")

    # Over HTTP at 2026-07-28 there is no session: the search hands out a grant per loaded
    # tool, which the call presents (a tool never searched has none).
    grants = structured.get("grants") or {}
    facts["granted"] = sorted(grants)

    def call(name: str, arguments: dict):
        if bridge:
            outer = {"name": name, "arguments": arguments}
            if name in grants:
                outer["grant"] = grants[name]
            return client.call_tool("call_tool", outer)
        return client.call_tool(name, arguments)

    # Call the loaded tool; it must return the notes.
    marker = notes.read_text().strip()
    read = await steps.run(f"call {READER}", call(READER, {"path": str(notes)}))
    if read.is_error or marker not in text_of(read):
        raise steps.fail(f"{READER} did not return {marker!r}: {dump(read)}")
    facts["marker"] = marker

    # A tool the model was never shown: a tool error with the loading hint, never forwarded.
    args = {"entities": [{"name": "intruder", "entityType": "x", "observations": ["y"]}]}
    refused = await steps.run(f"call {INTRUDER}", call(INTRUDER, args))
    facts["refusal"] = text_of(refused)
    if not refused.is_error or f"select:{INTRUDER}" not in facts["refusal"]:
        raise steps.fail(f"{INTRUDER} was not refused with a select: hint: {dump(refused)}")
    return facts


async def run(args: argparse.Namespace) -> dict:
    if args.transport == "stdio":
        server: Any = StdioServerParameters(command=args.command, args=json.loads(args.args or "[]"))
    else:
        server = args.url
    steps = Steps()
    facts: dict = {"client": "py", "mode": args.mode, "transport": args.transport}
    # A hang is a finding too: after 150 s say which step never finished.
    with anyio.move_on_after(150) as scope:
        try:
            info = Implementation(name="matrix-py", version="1.0.0")
            async with Client(server, mode=args.mode, client_info=info) as client:
                facts.update(await cell(client, steps, Path(args.notes)))
                steps.name = "close"
        except CellFailed:
            raise
        except Exception as e:
            # A failed step raised inside the client's task group comes back wrapped in a group.
            failed = [x for x in leaves(e) if isinstance(x, CellFailed)]
            if failed:
                raise failed[0] from e
            raise CellFailed(f"{steps.name}: {describe(e)}") from e  # connect (or close) failed
    if scope.cancelled_caught:
        raise CellFailed(f"{steps.name}: no answer after 150 s (hang)")
    return facts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", required=True, help="legacy, auto, or a modern version such as 2026-07-28")
    ap.add_argument("--transport", choices=["stdio", "http"], required=True)
    ap.add_argument("--command", help="stdio: the gateway command")
    ap.add_argument("--args", help="stdio: the gateway's arguments as a JSON array")
    ap.add_argument("--url", help="http: the gateway's endpoint")
    ap.add_argument("--notes", required=True, help="the notes file inside the filesystem server's folder")
    args = ap.parse_args()
    if args.transport == "stdio" and not args.command:
        ap.error("stdio needs --command (and --args)")
    if args.transport == "http" and not args.url:
        ap.error("http needs --url")
    try:
        facts = anyio.run(run, args)
    except CellFailed as e:
        print(f"matrix.py: {e}", file=sys.stderr)
        return 1
    print(json.dumps(facts, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
