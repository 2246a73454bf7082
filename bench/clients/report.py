"""The tables and chart of the client harness, from its runs (`harness.py`'s runs.jsonl, one or
several concatenated).

    python3 bench/clients/report.py RUNS.jsonl [RUNS2.jsonl ...] --out DIR

writes DIR/summary.json, DIR/table.md (one table per catalog: client × arm × query form, with
the gold-tool rate, mean input tokens per task, mean bytes of the cached prefix changed per
turn, turns and seconds) and DIR/chart.svg (mean cumulative input tokens per turn, one line
per client and arm, one panel per catalog, keyword-form queries).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

ARMS = ["direct", "listing", "toolgate"]
CLIENT_NAMES = {
    "claude": "Claude Code 2.1.332",
    "codex": "Codex 0.171 (gpt-5.5)",
    "codex-code": "Codex 0.171 code mode (gpt-6-sol)",
    "gemini": "Gemini CLI 0.61",
    "copilot": "GitHub Copilot CLI 1.0.102",
}
ARM_NAMES = {
    "direct": "own search",
    "listing": "every tool listed",
    "toolgate": "toolgate",
}
COLOURS = {"direct": "#d62728", "listing": "#7f7f7f", "toolgate": "#1f77b4"}
DASHES = {"claude": "", "codex": "6,3", "codex-code": "2,3", "gemini": "10,3,2,3", "copilot": "1,2"}


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
        out.append("| client | arm | query | runs | gold tool called | input tokens per task | prefix bytes changed per turn | turns | seconds |")
        out.append("|---|---|---|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            if r["catalog"] != catalog:
                continue
            gold = "—" if r["gold_rate"] is None else f"{r['gold_rate']:.2f}"
            problems = f" ({r['problems']} failed)" if r["problems"] else ""
            out.append(
                f"| {CLIENT_NAMES[r['client']]} | {ARM_NAMES[r['arm']]} | {r['form']} | {r['requests']}{problems} | {gold} | "
                f"{r['mean_input_tokens']:,} | {r['mean_prefix_changed_bytes']:,} | {r['mean_turns']} | {r['mean_seconds']} |"
            )
        out.append("")
    return "\n".join(out)


def chart(runs: list[dict], form: str = "keywords") -> str:
    """An SVG of mean cumulative input tokens per turn, one panel per catalog."""
    catalogs = sorted({r["catalog"] for r in runs})
    width, height, pad = 620, 360, 60
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * len(catalogs)}" height="{height + 90}" font-family="sans-serif" font-size="12">']
    svg.append(f'<rect width="100%" height="100%" fill="white"/>')
    for panel, catalog in enumerate(catalogs):
        x0 = panel * width
        series = {}
        for client in CLIENT_NAMES:
            for arm in ARMS:
                group = [r for r in runs if r["catalog"] == catalog and r["client"] == client and r["arm"] == arm and r["form"] == form]
                if not group:
                    continue
                longest = max(len(r["turn_tokens"]) for r in group)
                points = []
                for turn in range(longest):
                    points.append(mean([sum(r["turn_tokens"][: turn + 1]) for r in group]))
                series[(client, arm)] = points
        if not series:
            continue
        top = max(max(p) for p in series.values()) or 1
        turns = max(len(p) for p in series.values())
        sx = lambda i: x0 + pad + (width - 2 * pad) * (i / max(turns - 1, 1))  # noqa: E731
        sy = lambda v: 30 + (height - 60) * (1 - v / top)  # noqa: E731
        svg.append(f'<text x="{x0 + width / 2}" y="18" text-anchor="middle" font-weight="bold">{catalog}: mean cumulative input tokens per turn ({form} queries)</text>')
        svg.append(f'<line x1="{x0 + pad}" y1="{height - 30}" x2="{x0 + width - pad}" y2="{height - 30}" stroke="black"/>')
        svg.append(f'<line x1="{x0 + pad}" y1="30" x2="{x0 + pad}" y2="{height - 30}" stroke="black"/>')
        for k in range(5):
            v = top * k / 4
            svg.append(f'<text x="{x0 + pad - 6}" y="{sy(v) + 4:.1f}" text-anchor="end">{v / 1000:.0f}k</text>')
            svg.append(f'<line x1="{x0 + pad}" y1="{sy(v):.1f}" x2="{x0 + width - pad}" y2="{sy(v):.1f}" stroke="#eee"/>')
        for i in range(turns):
            svg.append(f'<text x="{sx(i):.1f}" y="{height - 14}" text-anchor="middle">{i + 1}</text>')
        svg.append(f'<text x="{x0 + width / 2}" y="{height + 2}" text-anchor="middle">model request (turn)</text>')
        legend_y = height + 18
        for n, ((client, arm), points) in enumerate(sorted(series.items(), key=lambda kv: (list(CLIENT_NAMES).index(kv[0][0]), ARMS.index(kv[0][1])))):
            path = " ".join(f"{sx(i):.1f},{sy(v):.1f}" for i, v in enumerate(points))
            dash = f' stroke-dasharray="{DASHES[client]}"' if DASHES[client] else ""
            svg.append(f'<polyline points="{path}" fill="none" stroke="{COLOURS[arm]}" stroke-width="2"{dash}/>')
            lx = x0 + pad + (n % 2) * 270
            ly = legend_y + (n // 2) * 15
            svg.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 24}" y2="{ly - 4}" stroke="{COLOURS[arm]}" stroke-width="2"{dash}/>')
            svg.append(f'<text x="{lx + 30}" y="{ly}">{CLIENT_NAMES[client]}, {ARM_NAMES[arm]}</text>')
    svg.append("</svg>")
    return "\n".join(svg) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    runs = [json.loads(line) for path in args.runs for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = summarise(runs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    (args.out / "table.md").write_text(table(rows), encoding="utf-8")
    (args.out / "chart.svg").write_text(chart(runs), encoding="utf-8")
    print(table(rows))


if __name__ == "__main__":
    main()
