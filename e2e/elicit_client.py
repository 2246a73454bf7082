"""The real Python MCP client (`mcp` 2.3.0) calling an upstream that asks its user something,
through `toolgate serve`, for the elicitation tests.

It connects to toolgate (over stdio, launching it, or over streamable HTTP at a URL) in one
protocol mode (`legacy`: initialize and 2025-11-25; `2026-07-28`: pinned, no handshake;
`auto`: probe), with or without an elicitation callback (`--answer N` declares elicitation and
answers every question with `{"guests": N}`; without it the client declares nothing), loads the
upstream's `elicit__book_table` and `elicit__seen_capabilities` with `tool_search`, calls them,
and prints one JSON line: the questions it was asked, the booking's text and whether it was an
error, and what the upstream says it was told.

    python elicit_client.py --mode legacy|auto|2026-07-28 (--toolgate BIN --config FILE | --url URL)
                            [--answer N]
"""

from __future__ import annotations

import argparse
import json
import sys

import anyio
from mcp import Client, StdioServerParameters, types


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def run(args: argparse.Namespace) -> dict:
    asked: list[str] = []

    async def answer(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"guests": args.answer})

    if args.url:
        server = args.url
    else:
        server = StdioServerParameters(command=args.toolgate, args=["serve", "--stdio", "--config", args.config])
    callback = answer if args.answer is not None else None
    async with Client(server, mode=args.mode, elicitation_callback=callback) as client:
        # The upstream may still be starting: search until it is there (at most 60 s).
        with anyio.fail_after(60):
            while True:
                found = await client.call_tool(
                    "tool_search", {"query": "select:elicit__book_table,elicit__seen_capabilities"}
                )
                if "elicit__book_table" in text_of(found) and "still starting" not in text_of(found):
                    break
                await anyio.sleep(0.2)
        booked = await client.call_tool("elicit__book_table", {"restaurant": "Chez Toolgate"})
        seen = await client.call_tool("elicit__seen_capabilities", {})
        try:
            told = json.loads(text_of(seen))
        except json.JSONDecodeError:
            told = {"error": text_of(seen)}
        return {
            "protocol": str(getattr(client, "protocol_version", "") or ""),
            "asked": asked,
            "booked": text_of(booked),
            "booked_is_error": bool(booked.is_error),
            "upstream_was_told": told,
        }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", required=True, help="legacy, auto or 2026-07-28")
    ap.add_argument("--toolgate", help="path of the toolgate binary (stdio)")
    ap.add_argument("--config", help="the gateway configuration (stdio)")
    ap.add_argument("--url", help="the gateway's MCP endpoint (HTTP)")
    ap.add_argument("--answer", type=int, help="declare elicitation and answer every question with this many guests")
    args = ap.parse_args()
    if not args.url and not (args.toolgate and args.config):
        ap.error("give --url, or --toolgate and --config")
    facts = anyio.run(run, args)
    print(json.dumps(facts, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
