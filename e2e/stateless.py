"""The stateless run of the Python MCP SDK's `Client`, pinned to 2026-07-28 (no `initialize`, no
session: every request carries its revision and capabilities in `_meta`), against toolgate over
streamable HTTP, usually through `round_robin.py` in front of two gateway replicas, in front of
`changing_server.py` (server `changing`: `greet {name}` and `secret_op {}`).

    python stateless.py URL TOKEN CHANGING_FILE                         (alice's run)
    python stateless.py URL TOKEN CHANGING_FILE --reader [--stolen-grant=GRANT]

    URL            the gateway's endpoint, e.g. http://127.0.0.1:PORT/mcp
    TOKEN          the bearer token sent with every request
    CHANGING_FILE  the file whose content is greet's version (this script writes a new one)

Alice's run: `server/discover`; `tools/list`; `tool_search` for greet (retried while servers
are still starting, up to 60 s); greet called through `call_tool` with its grant, and directly
(`tools/call` with `_meta["toolgate/grant"]`); `changing__secret_op`, never searched, called
without a grant and with greet's grant (both ways); then a new version is written to
CHANGING_FILE and, 1.5 s later, greet is called with the old grant (both ways), searched again
and called with the new grant; last, `select:changing__secret_op` is searched (its grant is
printed for the reader's run, never used here).

The reader's run (a token whose profile denies `changing__secret_op`): `server/discover`,
`tools/list`, searches for the secret tool (its exact `select:` name included) and for greet,
and calls of `changing__secret_op` without a grant and with the grant alice got (both ways).

It prints ONE JSON line of what it observed at each step (texts, isError flags, listed tools,
`ttlMs`, `cacheScope`, structured content): observations, not verdicts; the Rust test
(`crates/toolgate-cli/tests/stateless.rs`) asserts. A request that throws (a protocol error)
or hangs ends the run: the line printed then has `error`, naming the step, and it exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from errors import describe, leaves

PIN = "2026-07-28"
GREET = "changing__greet"
SECRET = "changing__secret_op"
GREET_QUERY = "greet someone by name"
GRANT_META = "toolgate/grant"
# A hang is a finding too: after this long the run stops and says which step never finished.
DEADLINE_SECS = 150


class StepFailed(Exception):
    """A request threw or timed out; the message names the step."""


def observe(result: Any) -> dict:
    """A tools/call result as the facts the test reads."""
    text = "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")
    return {
        "text": text,
        "isError": bool(result.is_error),
        "structured": result.structured_content,
    }


class Run:
    def __init__(self, client: Client, facts: dict) -> None:
        self.client = client
        self.facts = facts
        self.step = "connect"

    async def run(self, name: str, request):
        self.step = name
        try:
            return await request
        except Exception as e:
            raise StepFailed(f"{name}: {describe(e)}") from e

    async def discover(self) -> None:
        # Pinned, the client adopts the revision without a probe: ask for the discover result
        # itself, to read what its instructions say.
        raw = await self.run("server/discover", self.client.session.send_discover(PIN))
        self.facts["instructions"] = raw.get("instructions")
        self.facts["discover_versions"] = raw.get("supportedVersions")

    async def list_tools(self) -> None:
        listed = await self.run("tools/list", self.client.list_tools(cache_mode="bypass"))
        self.facts["tools"] = [t.name for t in listed.tools]
        given = listed.model_fields_set
        self.facts["ttlMs"] = listed.ttl_ms if "ttl_ms" in given else None
        self.facts["cacheScope"] = listed.cache_scope if "cache_scope" in given else None

    async def call(self, name: str, arguments: dict) -> dict:
        return observe(await self.run(f"call {name} {json.dumps(arguments)}", self.client.call_tool(name, arguments)))

    async def search(self, query: str) -> dict:
        """`tool_search`, again while the answer says servers are still starting (60 s at most)."""
        deadline = time.monotonic() + 60
        while True:
            seen = await self.call("tool_search", {"query": query})
            if "still starting" not in seen["text"] or time.monotonic() > deadline:
                break
            await anyio.sleep(0.5)
        structured = seen["structured"] if isinstance(seen["structured"], dict) else {}
        seen["loaded"] = structured.get("loaded")
        seen["grants"] = structured.get("grants")
        schemas = structured.get("schemas")
        seen["schemas"] = sorted(schemas) if isinstance(schemas, dict) else None
        return seen

    async def bridged(self, name: str, arguments: dict, grant: str | None) -> dict:
        """A call through `call_tool`, with `grant` when there is one."""
        args: dict = {"name": name, "arguments": arguments}
        if grant is not None:
            args["grant"] = grant
        return await self.call("call_tool", args)

    async def direct(self, name: str, arguments: dict, grant: str | None) -> dict:
        """A plain `tools/call` of the tool, its grant in `_meta` when there is one."""
        meta = {GRANT_META: grant} if grant is not None else None
        label = f"tools/call {name} (grant in _meta: {grant is not None})"
        return observe(await self.run(label, self.client.call_tool(name, arguments, meta=meta)))


def grant_of(search: dict, name: str) -> str | None:
    grants = search.get("grants")
    return grants.get(name) if isinstance(grants, dict) else None


async def alice(run: Run, changing_file: Path) -> None:
    f = run.facts
    await run.discover()
    await run.list_tools()

    f["search"] = await run.search(GREET_QUERY)
    grant = grant_of(f["search"], GREET)
    f["grant"] = grant
    f["call_bridge"] = await run.bridged(GREET, {"name": "Ada"}, grant)
    f["call_direct"] = await run.direct(GREET, {"name": "Bob"}, grant)

    # Never searched: no grant, or greet's grant for another tool.
    f["unloaded_bridge"] = await run.bridged(SECRET, {}, None)
    f["unloaded_direct"] = await run.direct(SECRET, {}, None)
    f["wrong_grant_bridge"] = await run.bridged(SECRET, {}, grant)
    f["wrong_grant_direct"] = await run.direct(SECRET, {}, grant)

    # greet's definition changes upstream: the old grant no longer works, a new search's does.
    f["old_version"] = changing_file.read_text().strip()
    f["new_version"] = f"py-{time.time_ns()}"
    run.step = "write CHANGING_FILE"
    changing_file.write_text(f["new_version"] + "\n")
    await anyio.sleep(1.5)
    f["old_grant_bridge"] = await run.bridged(GREET, {"name": "Cy"}, grant)
    f["old_grant_direct"] = await run.direct(GREET, {"name": "Cy"}, grant)
    f["search_again"] = await run.search(GREET_QUERY)
    new_grant = grant_of(f["search_again"], GREET)
    f["new_grant"] = new_grant
    f["new_grant_bridge"] = await run.bridged(GREET, {"name": "Dee"}, new_grant)
    f["new_grant_direct"] = await run.direct(GREET, {"name": "Eve"}, new_grant)

    # A grant for the secret tool, for the reader's run to try; never used here.
    f["secret_search"] = await run.search(f"select:{SECRET}")
    f["secret_grant"] = grant_of(f["secret_search"], SECRET)


async def reader(run: Run, stolen: str | None) -> None:
    f = run.facts
    await run.discover()
    await run.list_tools()
    f["searches"] = {}
    for query in [f"select:{SECRET}", "secret_op", "run the secret operation", "secret", GREET_QUERY]:
        f["searches"][query] = await run.search(query)
    f["unloaded_bridge"] = await run.bridged(SECRET, {}, None)
    f["unloaded_direct"] = await run.direct(SECRET, {}, None)
    if stolen is not None:
        f["stolen_grant_bridge"] = await run.bridged(SECRET, {}, stolen)
        f["stolen_grant_direct"] = await run.direct(SECRET, {}, stolen)


async def main_async(args: argparse.Namespace, facts: dict) -> None:
    headers = {"Authorization": f"Bearer {args.token}"}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=120.0))
    info = Implementation(name="stateless-py", version="1.0.0")
    run: Run | None = None
    with anyio.move_on_after(DEADLINE_SECS) as scope:
        try:
            async with http:
                transport = streamable_http_client(args.url, http_client=http)
                async with Client(transport, mode=PIN, client_info=info) as client:
                    facts["protocol_version"] = client.protocol_version
                    run = Run(client, facts)
                    if args.reader:
                        await reader(run, args.stolen_grant)
                    else:
                        await alice(run, Path(args.changing_file))
                    run.step = "close"
        except StepFailed:
            raise
        except Exception as e:
            failed = [x for x in leaves(e) if isinstance(x, StepFailed)]
            if failed:
                raise failed[0] from e
            step = run.step if run else "connect"
            raise StepFailed(f"{step}: {describe(e)}") from e
    if scope.cancelled_caught:
        raise StepFailed(f"{run.step if run else 'connect'}: no answer after {DEADLINE_SECS} s (hang)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("url")
    ap.add_argument("token")
    ap.add_argument("changing_file")
    ap.add_argument("--reader", action="store_true", help="the profile check instead of alice's run")
    ap.add_argument("--stolen-grant", help="with --reader: a grant for changing__secret_op to try")
    args = ap.parse_args()
    facts: dict = {"client": "py", "run": "reader" if args.reader else "alice"}
    try:
        anyio.run(main_async, args, facts)
    except StepFailed as e:
        facts["error"] = str(e)
        print(json.dumps(facts, ensure_ascii=False), flush=True)
        print(f"stateless.py: {e}", file=sys.stderr)
        return 1
    print(json.dumps(facts, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
