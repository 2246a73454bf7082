"""A real MCP server (the Python `mcp` SDK's low-level `Server`, over stdio) whose tool
definition changes while it runs, for the stateless tests of the toolgate gateway.

Tools:

- `greet {name}` answers `Hello, NAME! (greet version V)`. Its description carries the version
  `V`, read from the file named by `CHANGING_FILE` at every `tools/list` (and every call), so a
  test changes the tool's definition by writing that file.
- `secret_op {}` answers `secret done`; a test's profile denies it.

The server polls `CHANGING_FILE` every 100 ms and, when its content changes, tells the client
its tool list changed: `notifications/tools/list_changed` on a 2025-11-25 connection, and on
2026-07-28 the same notice on every open `subscriptions/listen` stream (the SDK's
`ListenHandler`). Every call it receives is appended, as one JSON line `{"tool", "args"}`, to
the file named by `CHANGING_LOG` if set, so a test can prove that a refused call never arrived.

    CHANGING_FILE=/tmp/version CHANGING_LOG=/tmp/calls.jsonl python changing_server.py   (stdio)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types

from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

POLL_SECONDS = 0.1


def version() -> str:
    """The version the file names now ("" when it is missing)."""
    path = os.environ.get("CHANGING_FILE")
    if not path:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def log(tool: str, args: Any) -> None:
    path = os.environ.get("CHANGING_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, "args": args}) + "\n")


def text(message: str, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=error)


bus = InMemorySubscriptionBus()
# The 2025-11-25 connection, once a request has come on it: list changes are told on it.
legacy_sessions: list[ServerSession] = []


def remember(ctx: ServerRequestContext[Any, Any]) -> None:
    if ctx.protocol_version < "2026" and not legacy_sessions:
        legacy_sessions.append(ctx.session)


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    remember(ctx)
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name="greet",
                description=f"Greet someone by name (greet version {version()}).",
                input_schema={
                    "type": "object",
                    "properties": {"name": {"type": "string", "description": "who to greet"}},
                    "required": ["name"],
                },
            ),
            types.Tool(
                name="secret_op",
                description="Run the secret operation.",
                input_schema={"type": "object", "properties": {}},
            ),
        ]
    )


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    remember(ctx)
    args = params.arguments or {}
    log(params.name, args)
    if params.name == "greet":
        return text(f"Hello, {args.get('name', 'nobody')}! (greet version {version()})")
    if params.name == "secret_op":
        return text("secret done")
    return text(f"unknown tool {params.name}", error=True)


server = Server(
    "changing-fixture",
    version="1.0.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_subscriptions_listen=ListenHandler(bus),
)


async def watch() -> None:
    """Tells the client whenever the version file changes."""
    seen = version()
    while True:
        await anyio.sleep(POLL_SECONDS)
        now = version()
        if now == seen:
            continue
        seen = now
        await bus.publish(ToolsListChanged())
        for session in legacy_sessions:
            try:
                await session.send_tool_list_changed()
            except Exception:  # the connection is closing: nothing to tell
                pass


async def main() -> None:
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read_stream, write_stream):
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            await server.run(read_stream, write_stream, options)
            tg.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main)
