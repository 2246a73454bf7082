"""A real MCP server (the Python `mcp` SDK's MCPServer) that writes down everything a client
did to it, for the tests of toolgate's HTTP sessions against a second tenant
(`e2e/tenants.py`): a call, a cancellation or a `logging/setLevel` that reaches it shows in its
log, whoever sent it through the gateway.

Tools:

- `slow_echo {text, seconds}` sleeps `seconds`, then answers `text`. A cancellation stops it
  (the SDK interrupts the call) and is written down.
- `echo {text}` answers `text` at once.
- `chatty {text}` sends three log messages (`notifications/message`, level `info`, each
  naming `text`) during the call, then answers `text`. Like a server of the 2025-11-25
  revision must, it sends only messages at or above the level the client last set with
  `logging/setLevel` (all of them until one is set).

Every event is appended, as one JSON line, to the file named by `TENANT_LOG` if set:
`{"event": "call", "tool", "args"}` for each call, `{"event": "cancelled", "tool", "args"}`
for each call stopped by a cancellation, `{"event": "set_level", "level"}` for each
`logging/setLevel`. `TENANT_NAME` names the server (`tenant` by default).

Logging is a capability of the 2025-11-25 revision (2026-07-28 removes `logging/setLevel`),
so put this server behind the gateway with `protocol = "2025-11-25"`.

    python tenant_server.py            (stdio)
"""

from __future__ import annotations

import json
import os
import warnings

import anyio

from mcp import types
from mcp.server.mcpserver import Context, MCPServer

warnings.simplefilter("ignore")  # the logging capability is deprecated at 2026-07-28

server = MCPServer(os.environ.get("TENANT_NAME", "tenant"))

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
# The level the client last set; `None` until it sets one (then every level is sent).
level: str | None = None


def log(event: dict) -> None:
    path = os.environ.get("TENANT_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(event) + "\n")


@server.tool()
async def slow_echo(text: str, seconds: float) -> str:
    """Waits `seconds`, then answers `text`."""
    args = {"text": text, "seconds": seconds}
    log({"event": "call", "tool": "slow_echo", "args": args})
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            log({"event": "cancelled", "tool": "slow_echo", "args": args})
        raise
    return text


@server.tool()
async def echo(text: str) -> str:
    """Answers `text`."""
    log({"event": "call", "tool": "echo", "args": {"text": text}})
    return text


@server.tool()
async def chatty(text: str, ctx: Context) -> str:
    """Sends three log messages naming `text` during the call, then answers `text`."""
    log({"event": "call", "tool": "chatty", "args": {"text": text}})
    for i in range(3):
        if level is None or LEVELS.index("info") >= LEVELS.index(level):
            await ctx.log("info", f"chatty {text} line {i}")
        await anyio.sleep(0.05)
    return text


async def set_level(ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
    global level
    level = params.level
    log({"event": "set_level", "level": params.level})
    return types.EmptyResult()


# MCPServer has no decorator for `logging/setLevel`: its low-level server takes the handler
# (and then declares the logging capability).
server._lowlevel_server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)


if __name__ == "__main__":
    server.run()
