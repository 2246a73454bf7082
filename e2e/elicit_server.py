"""A real MCP server (the Python `mcp` SDK's MCPServer) that asks its user something in the
middle of a call, for the elicitation tests of the toolgate gateway.

Tools:

- `book_table {restaurant}` asks how many guests (an elicitation with a form `{guests: int}`)
  and answers `booked a table for N at RESTAURANT`, or `nobody was asked: ACTION` when the
  question was declined or cancelled.
- `seen_capabilities {}` answers, as JSON, the protocol revision of the request and the client
  capabilities the server was told (on 2026-07-28 the capabilities come with each request).

The SDK picks the shape of the question from the revision it negotiated: on 2026-07-28 an
`InputRequiredResult` whose `requestState` the client must send back untouched, on 2025-11-25
an `elicitation/create` request in the middle of the call. Every call it receives is appended,
as one JSON line `{"tool", "protocol"}`, to the file named by `ELICIT_LOG` if set.

    python elicit_server.py            (stdio)
"""

from __future__ import annotations

import json
import os
from typing import Annotated

from pydantic import BaseModel

from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve

server = MCPServer("elicit-fixture")


class Guests(BaseModel):
    guests: int


def log(tool: str, ctx: Context) -> None:
    path = os.environ.get("ELICIT_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, "protocol": ctx.protocol_version}) + "\n")


def ask_guests(restaurant: str) -> Elicit[Guests]:
    return Elicit(f"How many guests for {restaurant}?", Guests)


@server.tool()
async def book_table(
    restaurant: str,
    ctx: Context,
    answer: Annotated[ElicitationResult[Guests], Resolve(ask_guests)],
) -> str:
    """Book a table at a restaurant; asks the user how many guests."""
    log("book_table", ctx)
    if answer.action == "accept":
        return f"booked a table for {answer.data.guests} at {restaurant}"
    return f"nobody was asked: {answer.action}"


@server.tool()
async def seen_capabilities(ctx: Context) -> str:
    """The protocol revision and the client capabilities this server was told."""
    log("seen_capabilities", ctx)
    caps = ctx.client_capabilities
    told = caps.model_dump(mode="json", exclude_none=True, by_alias=True) if caps is not None else None
    return json.dumps({"protocol": ctx.protocol_version, "capabilities": told})


if __name__ == "__main__":
    server.run()
