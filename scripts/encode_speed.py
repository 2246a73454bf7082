#!/usr/bin/env python3
"""The `bert` strategy's encoding of a request beside sentence-transformers on torch, on the
same texts, on this machine, in one run.

    e2e/.venv/bin/python scripts/encode_speed.py [--model e2e/model] [--runs 21]

Each text (a short request, a paragraph, a long multi-paragraph task) is encoded RUNS times
by each side after one warm-up, one text at a time as a search encodes its request; the table
gives each side's median in milliseconds, the ratio, and the cosine between the two vectors
(both are all-MiniLM-L6-v2 with mean pooling, so it should be 1.000 up to rounding, and is
lower only where a text is longer than the 256 tokens both read). toolgate's side is the
example `crates/toolgate-search/examples/encode.rs`, built here with cargo unless `--encoder`
names a built one. Needs torch and sentence-transformers (`e2e/setup.sh` installs both into
`e2e/.venv`).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TEXTS = [
    ("short", "find the cheapest flight from Berlin to Lisbon next Friday"),
    (
        "paragraph",
        "I keep my notes in a folder of markdown files. Please read the one called notes.md, "
        "pull out every line that mentions a deadline, and add each of them as an event to my "
        "calendar for the right day, with the line itself as the title and a reminder one day "
        "before.",
    ),
    (
        "long",
        "We are moving the team's weekly report from a spreadsheet to a proper dashboard, and I "
        "need help with the whole chain this week. Every Monday morning someone exports the "
        "sales figures from the shop's admin page as a CSV file, opens it in a spreadsheet, "
        "removes the test orders, sums the revenue per product line and per region, and pastes "
        "the totals into a slide deck that goes out by email before the ten o'clock meeting. "
        "It takes about two hours and it is easy to get wrong.\n\n"
        "First, fetch last week's orders from the shop's API instead of the export, leave out "
        "every order whose customer address is our own office or whose email ends with our "
        "company domain, and convert the amounts in pounds and dollars to euros at the rate of "
        "the day the order was placed. Keep the raw rows in a database table so that we can "
        "check the numbers later, with one row per order line and the conversion rate used.\n\n"
        "Second, compute the totals per product line and per region, and the change against the "
        "week before and against the same week last year, as both an amount and a percentage. "
        "Flag every line that moved by more than fifteen percent either way, and write two or "
        "three sentences about the largest movements in plain language for people who do not "
        "read tables.\n\n"
        "Third, draw a bar chart of revenue per region and a line chart of the last twelve weeks "
        "per product line, save both as images, put them with the table and the sentences into "
        "a short document, and send it to the sales channel in our chat and by email to the "
        "three regional managers, with the document attached and a link to the raw table. If "
        "the shop's API is down or returns an error, do not send anything: tell me what failed "
        "and when, and try again an hour later, at most three times before giving up for the "
        "day. Finally, write down every step you took in a log file in the shared folder so "
        "that anyone can repeat it by hand if something goes wrong next week while I am on "
        "holiday.",
    ),
]


def sentence_transformers_side(model_dir, runs):
    """Label -> (p50 ms, token count, unit vector) for sentence-transformers on the CPU."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_dir, device="cpu")
    out = {}
    for label, text in TEXTS:
        tokens = len(model.tokenizer(text, truncation=True, max_length=model.max_seq_length)["input_ids"])
        model.encode(text, normalize_embeddings=True)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            vector = model.encode(text, normalize_embeddings=True)
            times.append((time.perf_counter() - start) * 1e3)
        out[label] = (statistics.median(times), tokens, [float(x) for x in vector])
    return out, torch.get_num_threads(), torch.__version__


def toolgate_side(encoder, model_dir, runs):
    """Label -> (p50 ms, unit vector) for toolgate's encoder (the example)."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for label, text in TEXTS:
            f.write(json.dumps({"label": label, "text": text}) + "\n")
        texts = f.name
    try:
        done = subprocess.run([encoder, model_dir, texts, str(runs)], check=True, capture_output=True, text=True)
    finally:
        os.unlink(texts)
    out = {}
    for line in done.stdout.splitlines():
        row = json.loads(line)
        out[row["label"]] = (row["p50_ms"], row["vector"])
    return out


def build_encoder():
    cmd = ["cargo", "build", "--release", "-p", "toolgate-search", "--features", "bert", "--example", "encode"]
    subprocess.run(cmd, cwd=ROOT, check=True)
    return os.path.join(ROOT, "target", "release", "examples", "encode")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=os.path.join(ROOT, "e2e", "model"))
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--encoder", help="a built `encode` example (default: build it)")
    args = parser.parse_args()
    model_dir = os.path.realpath(args.model)
    encoder = args.encoder or build_encoder()

    theirs, threads, version = sentence_transformers_side(model_dir, args.runs)
    ours = toolgate_side(encoder, model_dir, args.runs)
    print(f"all-MiniLM-L6-v2, one text at a time, median of {args.runs} runs; torch {version} on {threads} threads")
    print(f"{'text':<10} {'words':>5} {'tokens':>6} {'sentence-transformers':>22} {'toolgate':>10} {'ratio':>6} {'cosine':>7}")
    for label, text in TEXTS:
        st_ms, tokens, st_vec = theirs[label]
        tg_ms, tg_vec = ours[label]
        cosine = sum(a * b for a, b in zip(st_vec, tg_vec))
        words = len(text.split())
        print(f"{label:<10} {words:>5} {tokens:>6} {st_ms:>19.2f} ms {tg_ms:>7.2f} ms {tg_ms / st_ms:>5.2f}x {cosine:>7.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
