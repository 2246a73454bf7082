"""End-to-end check of the toolgate gateway with the real Python MCP client.

The gateway stands in front of real MCP servers (npm: server-filesystem, server-memory,
server-everything; PyPI: mcp-server-time, mcp-server-git). This script writes a gateway
configuration for them, connects to the gateway over stdio or streamable HTTP, and walks through
what a model would do: list tools, search, receive list_changed, list again, call the loaded
tool, and try a tool it never loaded. Every check that fails raises with a message saying what
was expected; the script exits 0 only when all passed, and prints one JSON line of facts.

    python gateway_client.py --toolgate PATH --transport stdio|http --exposure native|bridge
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).resolve().parent


def fail(message: str) -> None:
    raise AssertionError(message)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def write_config(work: Path, exposure: str) -> Path:
    """A toolgate.toml naming the real servers, with absolute paths."""
    bin_ = HERE / "node_modules" / ".bin"
    venv = HERE / ".venv" / "bin"
    files = work / "files"
    files.mkdir()
    repo = work / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    memory = work / "memory.jsonl"
    config = f"""
[gateway]
exposure = "{exposure}"
mode = "on"
call_timeout_secs = 30

[servers.filesystem]
command = "{bin_ / 'mcp-server-filesystem'}"
args = ["{files}"]

[servers.memory]
command = "{bin_ / 'mcp-server-memory'}"
env = {{ MEMORY_FILE_PATH = "{memory}" }}

[servers.everything]
command = "{bin_ / 'mcp-server-everything'}"

[servers.time]
command = "{venv / 'mcp-server-time'}"

[servers.git]
command = "{venv / 'mcp-server-git'}"
args = ["--repository", "{repo}"]
"""
    path = work / "toolgate.toml"
    path.write_text(config)
    return path


class Probe:
    """Collects notifications the gateway sends."""

    def __init__(self) -> None:
        self.list_changed = anyio.Event()
        self.count = 0

    async def __call__(self, message) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.ToolListChangedNotification) or getattr(root, "method", "") == "notifications/tools/list_changed":
            self.count += 1
            self.list_changed.set()


async def wait_for_servers(session: ClientSession, want: int, exposure: str) -> None:
    """Upstreams start in the background; search until every server answers (or 60 s pass)."""
    deadline = time.monotonic() + 60
    while True:
        result = await session.call_tool("tool_search", {"query": "select:time__get_current_time"})
        text = text_of(result)
        if "still starting" not in text and "time__get_current_time" in text:
            return
        if time.monotonic() > deadline:
            fail(f"upstreams did not finish starting in 60 s; last tool_search said: {text}")
        await anyio.sleep(0.2)


async def scenario(session: ClientSession, probe: Probe, exposure: str, files: Path, memory: Path) -> dict:
    facts: dict = {}
    listed = await session.list_tools()
    names = sorted(t.name for t in listed.tools)
    want = ["call_tool", "tool_search"] if exposure == "bridge" else ["tool_search"]
    if names != want:
        fail(f"first tools/list should be exactly {want}, got {names}")
    facts["first_list"] = names

    await wait_for_servers(session, 5, exposure)
    probe.list_changed = anyio.Event()

    result = await session.call_tool("tool_search", {"query": "read the complete contents of a text file from the file system"})
    text = text_of(result)
    match = re.search(r"\b(filesystem__read_(?:text_)?file)\b", text)
    if not match:
        fail(f"tool_search for reading a file did not load a filesystem read tool:\n{text}")
    read_tool = match.group(1)
    facts["read_tool"] = read_tool

    target = files / "hello.txt"
    target.write_text("hello from toolgate\n")
    if exposure == "native":
        with anyio.fail_after(10):
            await probe.list_changed.wait()
        listed = await session.list_tools()
        by_name = {t.name: t for t in listed.tools}
        if read_tool not in by_name:
            fail(f"after list_changed, tools/list lacks {read_tool}: {sorted(by_name)}")
        schema = by_name[read_tool].input_schema
        if "path" not in schema.get("properties", {}):
            fail(f"{read_tool} came without its schema: {schema}")
        result = await session.call_tool(read_tool, {"path": str(target)})
    else:
        if '"path"' not in text:
            fail(f"bridge tool_search results must carry the input schema:\n{text}")
        listed = await session.list_tools()
        if sorted(t.name for t in listed.tools) != want:
            fail("bridge tools/list changed after a search")
        result = await session.call_tool("call_tool", {"name": read_tool, "arguments": {"path": str(target)}})
    if result.is_error or "hello from toolgate" not in text_of(result):
        fail(f"calling {read_tool} did not return the file's content: {result}")

    # A tool the model never loaded: refused with the loading hint, and never forwarded.
    args = {"entities": [{"name": "intruder", "entityType": "person", "observations": ["x"]}]}
    if exposure == "native":
        result = await session.call_tool("memory__create_entities", args)
    else:
        result = await session.call_tool("call_tool", {"name": "memory__create_entities", "arguments": args})
    refusal = text_of(result)
    if not result.is_error or "select:memory__create_entities" not in refusal:
        fail(f"an unloaded tool must be refused with a select: hint, got: {result}")
    facts["refusal"] = refusal

    # Prove the upstream saw nothing: load read_graph properly and look at the graph.
    await session.call_tool("tool_search", {"query": "select:memory__read_graph"})
    if exposure == "native":
        result = await session.call_tool("memory__read_graph", {})
    else:
        result = await session.call_tool("call_tool", {"name": "memory__read_graph", "arguments": {}})
    graph = json.loads(text_of(result))
    if graph.get("entities"):
        fail(f"the refused call reached server-memory: {graph}")
    facts["memory_entities"] = len(graph.get("entities", []))

    # Prompts and resources of upstreams come through too: prompts namespaced, URIs as they are.
    prompts = (await session.list_prompts()).prompts
    everything = [p for p in prompts if p.name.startswith("everything__")]
    if not everything:
        fail(f"prompts/list lacks server-everything's prompts: {[p.name for p in prompts]}")
    simple = next((p for p in everything if not any(a.required for a in (p.arguments or []))), None)
    if simple is None:
        fail(f"server-everything offers no prompt without required arguments: {[p.name for p in everything]}")
    got = await session.get_prompt(simple.name, {})
    if not got.messages:
        fail(f"prompts/get {simple.name} returned no messages")
    facts["prompt"] = simple.name
    resources = (await session.list_resources()).resources
    if not resources:
        fail("resources/list is empty although server-everything offers resources")
    read = await session.read_resource(resources[0].uri)
    if not read.contents:
        fail(f"resources/read {resources[0].uri} returned nothing")
    facts["resources"] = len(resources)
    return facts


async def run(args: argparse.Namespace) -> dict:
    work = Path(tempfile.mkdtemp(prefix="toolgate-e2e-"))
    try:
        config = write_config(work, args.exposure)
        probe = Probe()
        if args.transport == "stdio":
            params = StdioServerParameters(command=args.toolgate, args=["serve", "--stdio", "--config", str(config)])
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write, message_handler=probe) as session:
                    await session.initialize()
                    return await scenario(session, probe, args.exposure, work / "files", work / "memory.jsonl")
        proc = subprocess.Popen(
            [args.toolgate, "serve", "--http", "127.0.0.1:0", "--config", str(config)],
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            url = None
            deadline = time.monotonic() + 60
            while url is None and time.monotonic() < deadline:
                line = proc.stderr.readline()
                if not line:
                    fail(f"the gateway exited before listening (code {proc.poll()})")
                m = re.search(r"listening on (http://\S+/mcp)", line)
                if m:
                    url = m.group(1)
            if url is None:
                fail("the gateway never said where it listens")
            async with streamable_http_client(url) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write, message_handler=probe) as session:
                    await session.initialize()
                    return await scenario(session, probe, args.exposure, work / "files", work / "memory.jsonl")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--toolgate", required=True, help="path of the toolgate binary")
    ap.add_argument("--transport", choices=["stdio", "http"], required=True)
    ap.add_argument("--exposure", choices=["native", "bridge"], required=True)
    args = ap.parse_args()
    facts = anyio.run(run, args)
    print(json.dumps(facts, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
