"""Whole tasks through real agent CLIs, with and without toolgate in front of a bench set's
servers: what a user pays (input tokens of every model request, bytes of the cached prefix
that changed) and gets (whether a gold tool was called), per client and arm.

Every server of the set runs as a process of its own, serving that server's published
definitions and answering every call with a marker (`toolgate-fixture-server` with
`FIXTURE_TOOLS`); the calls it received are its log. The only scripted part is the model
(`model.py`): it searches with the search tool in front of it, calls the first tool the search
made available, and ends. Arms:

- `direct`: every server connected to the CLI as it ships, its own tool search on (Claude
  Code's `ToolSearch`, Codex's `tool_search`; Gemini CLI has none, so there it lists every tool);
- `listing`: the same with the CLI's own search off (Claude Code `ENABLE_TOOL_SEARCH=false`,
  Codex a model without its search): every definition on every request, the token baseline;
- `toolgate`: the same servers behind `toolgate serve --stdio`, registered with the snippet
  `docs/gateway.md` gives for the CLI.

Clients: `claude` (Claude Code), `codex` (Codex with `gpt-5.5`, outside code mode), `codex-code`
(Codex with `gpt-6-sol`, code mode: one `exec` tool running JavaScript) and `gemini` (Gemini
CLI). Each request is asked twice, with its text (`text`) and with a short keyword form of it
(`keywords`), as a model would write either.

    python3 bench/clients/harness.py --toolgate target/release/toolgate \\
        --fixture target/release/toolgate-fixture-server --set livemcpbench --out OUT

writes OUT/runs.jsonl (one line per run), OUT/summary.json, OUT/table.md, OUT/chart.svg
(cumulative tokens per turn) and OUT/tasks.svg (tokens per task); `report.py` makes the last
four from the first.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
E2E = REPO / "e2e"
BIN = E2E / "node_modules" / ".bin"

# The npm package of each client's CLI, whose installed version each run records.
PACKAGES = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "codex-code": "@openai/codex",
    "gemini": "@google/gemini-cli",
    "copilot": "@github/copilot",
}


def cli_version(client: str) -> str:
    """The version of `client`'s CLI as installed in e2e/node_modules."""
    manifest = E2E / "node_modules" / PACKAGES[client] / "package.json"
    return json.loads(manifest.read_text(encoding="utf-8"))["version"]

# The sets a run can serve: a bench set, or several served together (one catalog, their
# requests together).
SETS = {
    "livemcpbench": ["livemcpbench"],
    "big": ["livemcpbench", "metatool", "acebench-en"],
}

CLIENTS = {
    "claude": ["direct", "listing", "toolgate"],
    "codex": ["direct", "listing", "toolgate"],
    "codex-code": ["direct", "toolgate"],
    "gemini": ["direct", "toolgate"],
    "copilot": ["direct", "listing", "toolgate"],
}

# Words a request uses to address the answer or frame the task, not to say what it needs:
# left out of the keyword form.
STOP = set(
    """a an the and or but of to in on at for from by with about into over as is are was were be
    been being do does did have has had i me my we our you your he she it its they them their this
    that these those there here what which who whom whose when where why how please can could would
    should will shall may might must let help want need like just also then than so such very some
    any all each every get give make use using tell show find me's it's i'm i'd i'll""".split()
)


def keywords(query: str, most: int = 8) -> str:
    """A short keyword form of `query`, as a model writes a search: its first content words
    (no numbers, no single letters)."""
    words = re.findall(r"[A-Za-z][A-Za-z0-9_\-]*[A-Za-z0-9]|[\u4e00-\u9fff]+", query)
    kept = [w for w in words if w.lower() not in STOP]
    return " ".join(kept[:most]) or query


def part_of(query_id: str) -> str:
    """`tune` or `check`, as `bench/README.md` splits every set."""
    return "tune" if hashlib.sha256(query_id.encode()).digest()[0] % 2 == 0 else "check"


def load_set(name: str, part: str, limit: int) -> tuple[dict[str, list[dict]], list[dict]]:
    """The servers of set `name` (server → MCP tool objects) and its requests of `part`, at
    most `limit` of each member set (in file order)."""
    servers: dict[str, list[dict]] = {}
    requests: list[dict] = []
    for member in SETS[name]:
        folder = REPO / "bench" / member
        for line in (folder / "catalog.jsonl").read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            tool = json.loads(line)
            servers.setdefault(tool["server"], []).append(
                {
                    "name": tool["name"],
                    "description": tool["description"],
                    "inputSchema": tool["input_schema"],
                    "annotations": tool.get("annotations") or {},
                }
            )
        taken = 0
        for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            query = json.loads(line)
            if part != "all" and part_of(query["id"]) != part:
                continue
            if taken >= limit:
                break
            query["set"] = member
            requests.append(query)
            taken += 1
    return servers, requests


def gold_hit(query: dict, calls: list[tuple[str, str]]) -> bool:
    """Whether one of `calls` ((server, tool) the marker servers received) is a gold tool."""
    gold = set(query["gold"])
    for server, tool in calls:
        key = {"tool": f"{server}__{tool}", "name": tool, "server": server}[query["gold_level"]]
        if key in gold:
            return True
    return False


class Lab:
    """What every run of one set shares: the servers' tool files and the binaries."""

    def __init__(self, root: Path, servers: dict[str, list[dict]], toolgate: Path, fixture: Path) -> None:
        self.root = root
        self.toolgate = toolgate
        self.fixture = fixture
        self.tools_dir = root / "tools"
        self.tools_dir.mkdir(parents=True, exist_ok=True)
        self.servers = sorted(servers)
        for server, tools in servers.items():
            (self.tools_dir / f"{server}.json").write_text(json.dumps(tools), encoding="utf-8")

    def server_env(self, server: str, calls: Path) -> dict[str, str]:
        return {
            "FIXTURE_TOOLS": str(self.tools_dir / f"{server}.json"),
            "FIXTURE_LOG": str(calls / f"{server}.jsonl"),
            "FIXTURE_PAGE_SIZE": "1000",
        }

    def toolgate_config(self, run: Path, calls: Path) -> Path:
        """A toolgate configuration serving every server of the set, as a new user writes one."""
        lines = ["[gateway]", "ready_timeout_secs = 60", ""]
        for server in self.servers:
            env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in self.server_env(server, calls).items())
            lines += [f"[servers.{json.dumps(server)}]", f"command = {json.dumps(str(self.fixture))}", f"env = {{ {env} }}", ""]
        path = run / "toolgate.toml"
        path.write_text("\n".join(lines), encoding="utf-8")
        return path

    def toolgate_args(self, config: Path) -> list[str]:
        return ["serve", "--stdio", "--config", str(config)]


class Model:
    """The scripted model (`model.py`) for one run."""

    def __init__(self, run: Path, query: str) -> None:
        self.log = run / "model.jsonl"
        task = run / "task.json"
        task.write_text(json.dumps({"query": query}), encoding="utf-8")
        port_file = run / "port"
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "model.py"), "--port-file", str(port_file), "--log", str(self.log), "--task", str(task)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 20
        while not port_file.exists():
            if time.time() > deadline:
                raise RuntimeError("the scripted model did not start")
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{port_file.read_text()}"

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()

    def requests(self) -> list[tuple[str, dict]]:
        if not self.log.exists():
            return []
        out = []
        for line in self.log.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            out.append((record["path"], record["body"]))
        return out


def base_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "LANG": "C.UTF-8"}


def run_claude(lab: Lab, run: Path, arm: str, query: str, model: Model, calls: Path) -> list[str]:
    servers = {}
    if arm == "toolgate":
        config = lab.toolgate_config(run, calls)
        # docs/gateway.md's snippet: alwaysLoad, so Claude Code waits for toolgate.
        servers["toolgate"] = {"type": "stdio", "command": str(lab.toolgate), "args": lab.toolgate_args(config), "alwaysLoad": True}
    else:
        for server in lab.servers:
            servers[server] = {"type": "stdio", "command": str(lab.fixture), "args": [], "env": lab.server_env(server, calls)}
    mcp = run / "mcp.json"
    mcp.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    allowed = ",".join(f"mcp__{name}" for name in servers)
    command = [str(BIN / "claude"), "-p", query, "--output-format", "json", "--mcp-config", str(mcp), "--strict-mcp-config", "--allowedTools", allowed]
    env = base_env(run / "home") | {
        "ANTHROPIC_BASE_URL": model.url,
        "ANTHROPIC_API_KEY": "sk-scripted",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # Every arm's servers are connected before the first request (toolgate's alwaysLoad
        # does the same for its one entry).
        "MCP_CONNECTION_NONBLOCKING": "0",
    }
    if arm == "listing":
        env["ENABLE_TOOL_SEARCH"] = "false"
    return run_cli(command, env, run)


def run_codex(lab: Lab, run: Path, arm: str, query: str, model: Model, calls: Path, code_mode: bool) -> list[str]:
    codex_home = run / "home" / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    name = "gpt-6-sol" if code_mode else ("gpt-5" if arm == "listing" else "gpt-5.5")
    lines = [
        f'model = "{name}"',
        'model_provider = "scripted"',
        "",
        "[model_providers.scripted]",
        'name = "scripted"',
        f'base_url = "{model.url}/v1"',
        'wire_api = "responses"',
        'env_key = "SCRIPTED_API_KEY"',
        "",
    ]
    if arm == "toolgate":
        config = lab.toolgate_config(run, calls)
        # docs/gateway.md's snippet for Codex.
        lines += [
            "[mcp_servers.toolgate]",
            f"command = {json.dumps(str(lab.toolgate))}",
            f"args = {json.dumps(lab.toolgate_args(config))}",
            'default_tools_approval_mode = "approve"',
            "required = true",
            "startup_timeout_sec = 60",
            'omit_tools_from = ["deferred"]',
            "",
        ]
    else:
        for server in lab.servers:
            env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in lab.server_env(server, calls).items())
            lines += [
                f"[mcp_servers.{json.dumps(server)}]",
                f"command = {json.dumps(str(lab.fixture))}",
                f"env = {{ {env} }}",
                'default_tools_approval_mode = "approve"',
                "",
            ]
    (codex_home / "config.toml").write_text("\n".join(lines), encoding="utf-8")
    command = [str(BIN / "codex"), "exec", "--skip-git-repo-check", query]
    env = base_env(run / "home") | {"CODEX_HOME": str(codex_home), "SCRIPTED_API_KEY": "scripted"}
    return run_cli(command, env, run)


def run_gemini(lab: Lab, run: Path, arm: str, query: str, model: Model, calls: Path) -> list[str]:
    servers = {}
    if arm == "toolgate":
        config = lab.toolgate_config(run, calls)
        servers["toolgate"] = {"command": str(lab.toolgate), "args": lab.toolgate_args(config), "trust": True}
    else:
        for server in lab.servers:
            servers[server] = {"command": str(lab.fixture), "args": [], "env": lab.server_env(server, calls), "trust": True}
    settings = run / "home" / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(
        json.dumps(
            {
                "mcpServers": servers,
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "privacy": {"usageStatisticsEnabled": False},
            }
        ),
        encoding="utf-8",
    )
    command = [str(BIN / "gemini"), "-p", query, "--model", "gemini-2.5-flash", "--output-format", "json"]
    env = base_env(run / "home") | {
        "GEMINI_API_KEY": "scripted",
        "GOOGLE_GEMINI_BASE_URL": model.url,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    return run_cli(command, env, run)


def run_copilot(lab: Lab, run: Path, arm: str, query: str, model: Model, calls: Path) -> list[str]:
    """GitHub Copilot CLI with its own provider (BYOK) pointed at the scripted model, offline."""
    home = run / "home" / ".copilot"
    home.mkdir(parents=True, exist_ok=True)
    servers = {}
    if arm == "toolgate":
        config = lab.toolgate_config(run, calls)
        # docs/gateway.md's snippet for Copilot CLI.
        servers["toolgate"] = {"type": "local", "command": str(lab.toolgate), "args": lab.toolgate_args(config), "tools": ["*"], "deferTools": "never"}
    else:
        for server in lab.servers:
            servers[server] = {"type": "local", "command": str(lab.fixture), "args": [], "env": lab.server_env(server, calls), "tools": ["*"]}
    (home / "mcp-config.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    if arm == "listing":
        (home / "settings.json").write_text(json.dumps({"toolSearch": False}), encoding="utf-8")
    command = [str(BIN / "copilot"), "-p", query, "-s", "--no-auto-update"]
    env = base_env(run / "home") | {
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": model.url,
        "COPILOT_PROVIDER_TYPE": "anthropic",
        "COPILOT_PROVIDER_API_KEY": "scripted",
        "COPILOT_MODEL": "claude-sonnet-4.5",
        "COPILOT_ALLOW_ALL": "true",
    }
    return run_cli(command, env, run)


def run_cli(command: list[str], env: dict[str, str], run: Path) -> list[str]:
    """Runs an agent CLI to its end (at most three minutes); its problems, if any."""
    (run / "home").mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(command, env=env, cwd=run, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return ["the CLI did not finish within 180 s"]
    (run / "cli.out").write_text(done.stdout, encoding="utf-8")
    (run / "cli.err").write_text(done.stderr, encoding="utf-8")
    return [] if done.returncode == 0 else [f"the CLI exited with {done.returncode}: {done.stderr[-400:]}"]


# What the model read, as the provider takes it ------------------------------------------------


def read_part(path: str, body: dict) -> tuple[bool, str]:
    """Whether a request is one of the agent's turns (it offers tools), and the JSON text of
    what the model reads, in the order a provider caches it: tools, system, conversation."""
    if "/v1/messages" in path:
        # A tool sent with `defer_loading` is not in the model's context until a
        # `tool_reference` in the conversation loads it (Anthropic's tool search).
        referenced = set(re.findall(r'"tool_reference",\s*"(?:tool_)?name":\s*"([^"]+)"', json.dumps(body.get("messages", []))))
        referenced |= set(re.findall(r'"(?:tool_)?name":\s*"([^"]+)",\s*"type":\s*"tool_reference"', json.dumps(body.get("messages", []))))
        tools = [t for t in body.get("tools", []) if not t.get("defer_loading") or t.get("name") in referenced]
        parts = {"tools": tools, "system": body.get("system"), "messages": body.get("messages")}
        turn = bool(body.get("tools"))
    elif "responses" in path:
        parts = {k: body.get(k) for k in ("tools", "instructions", "input")}
        turn = bool(body.get("tools")) or any(i.get("type") == "additional_tools" for i in body.get("input", []))
    else:
        parts = {k: body.get(k) for k in ("tools", "systemInstruction", "contents")}
        turn = bool(body.get("tools"))
    return turn, json.dumps(parts, ensure_ascii=False, separators=(",", ":"))


def count_tokens(toolgate: Path, texts: list[str], scratch: Path) -> list[int]:
    """The o200k_base tokens of each text, counted by `toolgate tokens --count`."""
    if not texts:
        return []
    file = scratch / "texts.txt"
    file.write_text("\n".join(t.replace("\n", " ") for t in texts) + "\n", encoding="utf-8")
    out = subprocess.run([str(toolgate), "tokens", "--count", str(file), "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["tokens"]


def common_prefix_chars(previous: str, current: str) -> int:
    """How many characters two texts share from their start."""
    common = 0
    for x, y in zip(previous, current):
        if x != y:
            break
        common += 1
    return common


def changed_prefix_bytes(previous: str, current: str) -> int:
    """How many bytes of the previous request's text are not a prefix of this one's: what a
    provider's prompt cache cannot reuse."""
    a, b = previous.encode(), current.encode()
    common = 0
    for x, y in zip(a, b):
        if x != y:
            break
        common += 1
    return len(a) - common


def measure(lab: Lab, client: str, arm: str, form: str, query: dict, scratch: Path) -> dict:
    run = Path(tempfile.mkdtemp(prefix=f"{client}-{arm}-{form}-", dir=scratch))
    calls = run / "calls"
    calls.mkdir()
    text = query["query"] if form == "text" else keywords(query["query"])
    model = Model(run, text)
    started = time.time()
    try:
        if client == "claude":
            problems = run_claude(lab, run, arm, query["query"], model, calls)
        elif client in ("codex", "codex-code"):
            problems = run_codex(lab, run, arm, query["query"], model, calls, client == "codex-code")
        elif client == "copilot":
            problems = run_copilot(lab, run, arm, query["query"], model, calls)
        else:
            problems = run_gemini(lab, run, arm, query["query"], model, calls)
    finally:
        seconds = time.time() - started
        model.stop()
    requests = model.requests()
    parts = [read_part(path, body) for path, body in requests]
    tokens = count_tokens(lab.toolgate, [p for _, p in parts], run)
    turns = [(p, t) for (turn, p), t in zip(parts, tokens) if turn]
    changed = [changed_prefix_bytes(a, b) for (a, _), (b, _) in zip(turns, turns[1:])]
    # What a provider's prompt cache cannot serve: the first turn whole, then each turn's text
    # after the prefix it shares with the one before (side requests whole).
    suffixes = [b[common_prefix_chars(a, b):] for (a, _), (b, _) in zip(turns, turns[1:])]
    side = sum(t for (turn, _), t in zip(parts, tokens) if not turn)
    uncached = side + (turns[0][1] if turns else 0) + sum(count_tokens(lab.toolgate, suffixes, run))
    made = []
    for log in sorted(calls.glob("*.jsonl")):
        for line in log.read_text(encoding="utf-8").splitlines():
            if line.strip():
                made.append((log.stem, json.loads(line)["tool"]))
    # The model searched on its first turn and went on (with no search it ends there).
    searched = len(turns) >= 2
    record = {
        "client": client,
        "arm": arm,
        "form": form,
        "set": query["set"],
        "id": query["id"],
        "searched_with": text,
        "gold": gold_hit(query, made),
        "called": [f"{s}__{t}" for s, t in made],
        "requests": len(requests),
        "turns": len(turns),
        "input_tokens": sum(tokens),
        "uncached_tokens": uncached,
        "turn_tokens": [t for _, t in turns],
        "prefix_changed_bytes": changed,
        "searched": searched,
        "seconds": round(seconds, 2),
        "problems": problems,
    }
    if KEEP:
        record["run_dir"] = str(run)
    else:
        shutil.rmtree(run, ignore_errors=True)
    return record


# Keep each run's folder (configurations, the model's log, the CLI's output) for a look.
KEEP = False


def main() -> None:
    global KEEP
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--toolgate", required=True, type=Path)
    parser.add_argument("--fixture", required=True, type=Path, help="toolgate-fixture-server")
    parser.add_argument("--set", default="livemcpbench", choices=sorted(SETS))
    parser.add_argument("--part", default="check", choices=["check", "tune", "all"])
    parser.add_argument("--limit", type=int, default=1000, help="requests of each member set, at most")
    parser.add_argument("--clients", default="claude,codex,codex-code,gemini")
    parser.add_argument("--arms", default="direct,listing,toolgate")
    parser.add_argument("--forms", default="text,keywords")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--keep", action="store_true", help="keep each run's folder (named in runs.jsonl)")
    args = parser.parse_args()
    KEEP = args.keep
    servers, requests = load_set(args.set, args.part, args.limit)
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="toolgate-clients-"))
    lab = Lab(scratch, servers, args.toolgate.resolve(), args.fixture.resolve())
    runs = args.out / "runs.jsonl"
    with runs.open("w", encoding="utf-8") as out:
        for client in args.clients.split(","):
            version = cli_version(client)
            for arm in CLIENTS[client]:
                if arm not in args.arms.split(","):
                    continue
                for form in args.forms.split(","):
                    for query in requests:
                        record = measure(lab, client, arm, form, query, scratch)
                        record["catalog"] = args.set
                        record["version"] = version
                        out.write(json.dumps(record) + "\n")
                        out.flush()
                        print(
                            f"{client:10} {arm:8} {form:8} {query['id'][:12]:12} gold={int(record['gold'])} "
                            f"tokens={record['input_tokens']:>8} turns={record['turns']} {record['seconds']:5.1f}s"
                            + (f" {record['problems'][0][:100]}" if record["problems"] else ""),
                            file=sys.stderr,
                            flush=True,
                        )
    if not KEEP:
        shutil.rmtree(scratch, ignore_errors=True)
    subprocess.run([sys.executable, str(HERE / "report.py"), str(runs), "--out", str(args.out)], check=True)


if __name__ == "__main__":
    main()
