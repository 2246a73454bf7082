"""The tables and chart of the client harness, from its runs (`harness.py`'s runs.jsonl, one or
several concatenated).

    python3 bench/clients/report.py RUNS.jsonl [RUNS2.jsonl ...] --out DIR

writes DIR/summary.json, DIR/table.md (one table per catalog: client × arm × query form, with
the gold-tool rate, mean input tokens per task and those past the cached prefix, mean bytes of
the cached prefix changed per turn, turns and seconds), DIR/chart.svg (mean cumulative input
tokens per turn, one line per client and arm, one panel per catalog, keyword-form queries) and
DIR/tasks.svg (mean input tokens per task and the gold rate, a bar per client and arm).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

ARMS = ["direct", "listing", "toolgate"]
# Each client's name, `{version}` standing for the version of the CLI its runs record.
CLIENT_NAMES = {
    "claude": "Claude Code {version}",
    "codex": "Codex {version} (gpt-5.5)",
    "codex-code": "Codex {version} code mode (gpt-6-sol)",
    "gemini": "Gemini CLI {version}",
    "copilot": "GitHub Copilot CLI {version}",
}
# The versions of each client's CLI the runs were made with ("?" where a run does not say).
VERSIONS: dict[str, set[str]] = defaultdict(set)


def client_name(client: str) -> str:
    """`client` as the tables and charts name it, with the versions its runs were made with."""
    return CLIENT_NAMES[client].format(version="/".join(sorted(VERSIONS[client])) or "?")
ARM_NAMES = {
    "direct": "client alone",
    "listing": "every tool listed",
    "toolgate": "toolgate",
}
COLOURS = {"direct": "#d62728", "listing": "#7f7f7f", "toolgate": "#1f77b4"}


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summarise(runs: list[dict]) -> list[dict]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in runs:
        groups[(r["catalog"], r["client"], r["arm"], r["form"])].append(r)
    rows = []
    for (catalog, client, arm, form), group in sorted(groups.items(), key=lambda kv: (kv[0][0], list(CLIENT_NAMES).index(kv[0][1]), ARMS.index(kv[0][2]), kv[0][3])):
        searched = [r for r in group if r["searched"]]
        changed = [c for r in group for c in r["prefix_changed_bytes"]]
        rows.append(
            {
                "catalog": catalog,
                "client": client,
                "arm": arm,
                "form": form,
                "requests": len(group),
                "searched": len(searched),
                "gold_rate": mean([1.0 if r["gold"] else 0.0 for r in group]) if searched else None,
                "mean_input_tokens": round(mean([r["input_tokens"] for r in group])),
                "mean_uncached_tokens": round(mean([r["uncached_tokens"] for r in group])) if all("uncached_tokens" in r for r in group) else None,
                "mean_prefix_changed_bytes": round(mean(changed)),
                "mean_turns": round(mean([r["turns"] for r in group]), 2),
                "mean_seconds": round(mean([r["seconds"] for r in group]), 1),
                "problems": sum(1 for r in group if r["problems"]),
            }
        )
    return rows


def table(rows: list[dict]) -> str:
    out = []
    for catalog in sorted({r["catalog"] for r in rows}):
        out.append(f"#### {catalog}\n")
        out.append("| client | arm | query | runs | gold tool called | input tokens per task | of them past the cached prefix | prefix bytes changed per turn | turns | seconds |")
        out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            if r["catalog"] != catalog:
                continue
            gold = "—" if r["gold_rate"] is None else f"{r['gold_rate']:.2f}"
            problems = f" ({r['problems']} failed)" if r["problems"] else ""
            uncached = "—" if r["mean_uncached_tokens"] is None else f"{r['mean_uncached_tokens']:,}"
            out.append(
                f"| {client_name(r['client'])} | {ARM_NAMES[r['arm']]} | {r['form']} | {r['requests']}{problems} | {gold} | "
                f"{r['mean_input_tokens']:,} | {uncached} | {r['mean_prefix_changed_bytes']:,} | {r['mean_turns']} | {r['mean_seconds']} |"
            )
        out.append("")
    return "\n".join(out)


def bars(rows: list[dict], form: str = "keywords") -> str:
    """An SVG of mean input tokens per task: one panel per catalog, a row per client, a bar
    per arm, with its gold rate beside it."""
    catalogs = sorted({r["catalog"] for r in rows})
    clients = [c for c in CLIENT_NAMES if any(r["client"] == c for r in rows)]
    arms = [a for a in ARMS if any(r["arm"] == a for r in rows)]
    bar, gap, label, width = 14, 10, 250, 640
    panel_height = 40 + len(clients) * (len(arms) * bar + gap) + 40
    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * len(catalogs)}" height="{panel_height + 30}" '
        'font-family="sans-serif" font-size="12">',
        '<rect width="100%" height="100%" fill="white"/>',
    ]
    for panel, catalog in enumerate(catalogs):
        x0 = panel * width
        group = [r for r in rows if r["catalog"] == catalog and r["form"] == form]
        top = max([r["mean_input_tokens"] for r in group] + [1])
        scale = (width - label - 90) / top
        svg.append(
            f'<text x="{x0 + width / 2}" y="18" text-anchor="middle" font-weight="bold">'
            f"{catalog}: mean input tokens per task ({form} queries)</text>"
        )
        y = 36
        for client in clients:
            svg.append(f'<text x="{x0 + label - 8}" y="{y + len(arms) * bar / 2 + 4}" text-anchor="end">{client_name(client)}</text>')
            for arm in arms:
                r = next((r for r in group if r["client"] == client and r["arm"] == arm), None)
                if r is not None:
                    w = r["mean_input_tokens"] * scale
                    note = f'{r["mean_input_tokens"]:,}'
                    if r["problems"] == r["requests"]:
                        note = "failed"
                    elif r["gold_rate"] is not None:
                        note += f' · gold {r["gold_rate"]:.2f}'
                    svg.append(f'<rect x="{x0 + label}" y="{y}" width="{w:.1f}" height="{bar - 2}" fill="{COLOURS[arm]}"/>')
                    svg.append(f'<text x="{x0 + label + w + 4:.1f}" y="{y + bar - 4}" font-size="10">{note}</text>')
                y += bar
            y += gap
        for n, arm in enumerate(arms):
            lx = x0 + label + n * 130
            svg.append(f'<rect x="{lx}" y="{y + 8}" width="14" height="10" fill="{COLOURS[arm]}"/>')
            svg.append(f'<text x="{lx + 18}" y="{y + 17}">{ARM_NAMES[arm]}</text>')
    svg.append("</svg>")
    return "\n".join(svg) + "\n"


def chart(runs: list[dict], form: str = "keywords") -> str:
    """An SVG of mean cumulative input tokens per turn: one panel per catalog, a line per
    client and arm (colour the arm, dashes the client), a dot at each model request."""
    catalogs = sorted({r["catalog"] for r in runs})
    width, plot, pad = 640, 330, 70
    dashes = {"claude": "", "codex": "7,3", "codex-code": "2,3", "gemini": "10,3,2,3", "copilot": "1,2"}
    panels = []
    for catalog in catalogs:
        series = {}
        for client in CLIENT_NAMES:
            for arm in ARMS:
                group = [
                    r for r in runs
                    if r["catalog"] == catalog and r["client"] == client and r["arm"] == arm and r["form"] == form and r["turn_tokens"]
                ]
                if group:
                    longest = max(len(r["turn_tokens"]) for r in group)
                    series[(client, arm)] = [mean([sum(r["turn_tokens"][: t + 1]) for r in group]) for t in range(longest)]
        panels.append((catalog, series))
    rows = max([len(series) for _, series in panels] + [0])
    height = plot + 60 + rows * 15
    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * len(catalogs)}" height="{height}" '
        'font-family="sans-serif" font-size="12">',
        '<rect width="100%" height="100%" fill="white"/>',
    ]
    for panel, (catalog, series) in enumerate(panels):
        if not series:
            continue
        x0 = panel * width
        top = max(max(p) for p in series.values())
        turns = max(len(p) for p in series.values())
        sx = lambda i: x0 + pad + (width - 2 * pad) * (i / max(turns - 1, 1))  # noqa: E731
        sy = lambda v: 30 + (plot - 60) * (1 - v / top)  # noqa: E731
        svg.append(
            f'<text x="{x0 + width / 2}" y="18" text-anchor="middle" font-weight="bold">'
            f"{catalog}: mean cumulative input tokens per turn ({form} queries)</text>"
        )
        svg.append(f'<line x1="{x0 + pad}" y1="{plot - 30}" x2="{x0 + width - pad}" y2="{plot - 30}" stroke="black"/>')
        svg.append(f'<line x1="{x0 + pad}" y1="30" x2="{x0 + pad}" y2="{plot - 30}" stroke="black"/>')
        for k in range(5):
            v = top * k / 4
            svg.append(f'<text x="{x0 + pad - 6}" y="{sy(v) + 4:.1f}" text-anchor="end">{v / 1000:.0f}k</text>')
            svg.append(f'<line x1="{x0 + pad}" y1="{sy(v):.1f}" x2="{x0 + width - pad}" y2="{sy(v):.1f}" stroke="#eee"/>')
        for i in range(turns):
            svg.append(f'<text x="{sx(i):.1f}" y="{plot - 14}" text-anchor="middle">{i + 1}</text>')
        svg.append(f'<text x="{x0 + width / 2}" y="{plot + 2}" text-anchor="middle">model request (turn)</text>')
        order = sorted(series.items(), key=lambda kv: (list(CLIENT_NAMES).index(kv[0][0]), ARMS.index(kv[0][1])))
        for n, ((client, arm), points) in enumerate(order):
            dash = f' stroke-dasharray="{dashes[client]}"' if dashes[client] else ""
            path = " ".join(f"{sx(i):.1f},{sy(v):.1f}" for i, v in enumerate(points))
            svg.append(f'<polyline points="{path}" fill="none" stroke="{COLOURS[arm]}" stroke-width="2"{dash}/>')
            for i, v in enumerate(points):
                svg.append(f'<circle cx="{sx(i):.1f}" cy="{sy(v):.1f}" r="3" fill="{COLOURS[arm]}"/>')
            ly = plot + 22 + n * 15
            svg.append(f'<line x1="{x0 + pad}" y1="{ly - 4}" x2="{x0 + pad + 28}" y2="{ly - 4}" stroke="{COLOURS[arm]}" stroke-width="2"{dash}/>')
            svg.append(
                f'<text x="{x0 + pad + 34}" y="{ly}">{client_name(client)}, {ARM_NAMES[arm]}: '
                f"{points[-1]:,.0f} after {len(points)}</text>"
            )
    svg.append("</svg>")
    return "\n".join(svg) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    runs = [json.loads(line) for path in args.runs for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for run in runs:
        VERSIONS[run["client"]].add(run.get("version", "?"))
    rows = summarise(runs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    (args.out / "table.md").write_text(table(rows), encoding="utf-8")
    (args.out / "chart.svg").write_text(chart(runs), encoding="utf-8")
    (args.out / "tasks.svg").write_text(bars(rows), encoding="utf-8")
    print(table(rows))


if __name__ == "__main__":
    main()
