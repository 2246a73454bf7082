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
                f"| {CLIENT_NAMES[r['client']]} | {ARM_NAMES[r['arm']]} | {r['form']} | {r['requests']}{problems} | {gold} | "
                f"{r['mean_input_tokens']:,} | {uncached} | {r['mean_prefix_changed_bytes']:,} | {r['mean_turns']} | {r['mean_seconds']} |"
            )
        out.append("")
    return "\n".join(out)


def chart(rows: list[dict], form: str = "keywords") -> str:
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
            svg.append(f'<text x="{x0 + label - 8}" y="{y + len(arms) * bar / 2 + 4}" text-anchor="end">{CLIENT_NAMES[client]}</text>')
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
    (args.out / "chart.svg").write_text(chart(rows), encoding="utf-8")
    print(table(rows))


if __name__ == "__main__":
    main()
