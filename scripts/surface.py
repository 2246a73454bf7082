#!/usr/bin/env python3
"""The shape of the code, as issues 29 and 42 measure it: the largest types by method count,
the public items of each library module, what the gateway names of the library, and the
gateway's downstream side: its crate-public fields, where a request's headers are read and
its profile decided, the files each large type's methods are spread over, and where a
refused call's audit record is written.

    python3 scripts/surface.py [ROOT]      # ROOT: a checkout (default: this one)

Counts are read from the source text, not from a compiler: a method is an `fn` inside an
`impl` block of the type (test modules and `tests.rs` files left out); a public item is a
`pub` item (fn, struct, enum, trait, type, const, static, mod, use, field or method) in a
public module, `pub(crate)` and private items left out. Rough, but the same rule on every
checkout, so before and after compare.
"""

import collections
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
CRATES = os.path.join(ROOT, "crates")


def rust_files(top):
    for base, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in ("tests", "benches", "examples", "bin"))
        for f in sorted(files):
            if f.endswith(".rs") and f != "tests.rs" and not f.endswith("_tests.rs"):
                yield os.path.join(base, f)


def without_tests(text):
    """The text before a `#[cfg(test)]` module, the usual last part of a file."""
    cut = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod ", text, re.M)
    return text[: cut.start()] if cut else text


def impl_blocks(text):
    """(type name, whether the block implements a trait, body) of every `impl` block."""
    for m in re.finditer(r"^impl(?:<[^>{]*>)?\s+(?:([\w:<>, ]+)\s+for\s+)?([A-Za-z_][\w]*)[^{;]*\{", text, re.M):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        yield m.group(2), m.group(1) is not None, text[m.end() : i]


def methods():
    """Inherent methods of each type, and those of its trait impls apart."""
    count, traits = collections.Counter(), collections.Counter()
    for krate in sorted(os.listdir(CRATES)):
        for path in rust_files(os.path.join(CRATES, krate, "src")):
            text = without_tests(open(path, encoding="utf-8").read())
            for name, is_trait, body in impl_blocks(text):
                n = len(re.findall(r"^    (?:pub(?:\([^)]*\))? )?(?:const )?(?:async )?(?:unsafe )?fn ", body, re.M))
                (traits if is_trait else count)[(krate, name)] += n
    return count, traits


PUB_ITEM = re.compile(r"^\s*pub (?:const |async |unsafe )*(fn|struct|enum|trait|type|const|static|mod|use)\b|^\s*pub \w+\s*:", re.M)


def module_of(src, path):
    rel = os.path.relpath(path, src)[:-3]
    parts = rel.split(os.sep)
    if parts[-1] in ("lib", "mod"):
        parts = parts[:-1]
    return parts[0] if parts else "(root)"


def public_modules(src):
    lib = open(os.path.join(src, "lib.rs"), encoding="utf-8").read()
    return set(re.findall(r"^pub mod (\w+)", lib, re.M))


def public_items(krate):
    src = os.path.join(CRATES, krate, "src")
    public = public_modules(src)
    per = collections.Counter()
    for path in rust_files(src):
        module = module_of(src, path)
        if module != "(root)" and module not in public:
            continue
        text = without_tests(open(path, encoding="utf-8").read())
        per[module] += len(PUB_ITEM.findall(text))
    return per


def gateway_imports():
    names = set()
    for path in rust_files(os.path.join(CRATES, "toolgate-mcp", "src")):
        text = open(path, encoding="utf-8").read()
        for krate, rest in re.findall(r"\b(toolgate(?:_catalog|_search)?)::(\w+)", text):
            if not re.search(rf'"{krate}::{rest}\b[\w:]*"', text):
                names.add(f"{krate}::{rest}")
        for block in re.findall(r"use (toolgate(?:_catalog|_search)?)::\{([^;]*)\};", text, re.S):
            for item in re.findall(r"(?:^|[{,]\s*)(\w+)", block[1]):
                names.add(f"{block[0]}::{item}")
    return sorted(n for n in names if n.split("::")[1][0].islower())


def gateway_files():
    src = os.path.join(CRATES, "toolgate-mcp", "src")
    for path in rust_files(src):
        yield os.path.relpath(path, src), without_tests(open(path, encoding="utf-8").read())


def crate_public_fields():
    """`pub(crate)` and `pub` fields of the gateway's structs, by struct."""
    per = collections.Counter()
    for _, text in gateway_files():
        for m in re.finditer(r"^(?:pub(?:\([^)]*\))? )?struct (\w+)[^{;]*\{(.*?)^\}", text, re.M | re.S):
            n = len(re.findall(r"^\s+pub(?:\(crate\))? \w+\s*:", m.group(2), re.M))
            if n:
                per[m.group(1)] += n
    return per


# A request's headers that say who is asking, read from the request (not a response).
HEADER_READS = re.compile(
    r"get\((?:SESSION_HEADER|PROFILE_HEADER|header::AUTHORIZATION|AUTHORIZATION|\"authorization\"|\"mcp-session-id\"|\"x-toolgate-profile\")\)"
    r"|contains_key\((?:SESSION_HEADER|PROFILE_HEADER)\)"
)
# Where a request's profile is worked out from what it carries: a profile header read, or the
# one check of the asked profile called.
PROFILE_DECISIONS = re.compile(r"get\(PROFILE_HEADER\)|asked_profile\(gateway|asked_profile\(&self\.gateway|asked_profile\(self\.server")
REFUSAL_WRITES = re.compile(r'action = "refused"|metrics\.refused\(|\.refusal\(&')


def sites(pattern):
    found = collections.Counter()
    for rel, text in gateway_files():
        text = text.replace("response.headers().get(SESSION_HEADER)", "")
        n = len(pattern.findall(text))
        if n:
            found[rel] += n
    return found


def impl_spread(names):
    files = collections.defaultdict(set)
    for krate in sorted(os.listdir(CRATES)):
        for path in rust_files(os.path.join(CRATES, krate, "src")):
            text = without_tests(open(path, encoding="utf-8").read())
            for name, is_trait, _ in impl_blocks(text):
                if name in names and not is_trait:
                    files[name].add(os.path.relpath(path, CRATES))
    return files


def main():
    print("Largest types by inherent method count (trait impls' methods apart):")
    count, traits = methods()
    for (krate, name), n in count.most_common(8):
        print(f"  {n:3}  {name} ({krate}; +{traits[(krate, name)]} in trait impls)")
    print("Public items of each library crate, by public module:")
    for krate in ("toolgate", "toolgate-search", "toolgate-catalog"):
        if not os.path.isdir(os.path.join(CRATES, krate)):
            continue
        per = public_items(krate)
        total = sum(per.values())
        parts = ", ".join(f"{m} {n}" for m, n in sorted(per.items(), key=lambda kv: -kv[1]))
        print(f"  {krate}: {total} in {len(per)} modules ({parts})")
    print("Library modules the gateway names:")
    print("  " + ", ".join(gateway_imports()))
    fields = crate_public_fields()
    print(f"The gateway's crate-public fields: {sum(fields.values())} in {len(fields)} structs; the most:")
    print("  " + ", ".join(f"{name} {n}" for name, n in fields.most_common(6)))
    for title, pattern in (
        ("Reads of who-is-asking headers", HEADER_READS),
        ("Places a request's profile is worked out", PROFILE_DECISIONS),
        ("Writers of a refused call's audit record or metrics entry", REFUSAL_WRITES),
    ):
        found = sites(pattern)
        where = ", ".join(f"{f} {n}" for f, n in sorted(found.items()))
        print(f"{title}: {sum(found.values())} in {len(found)} files ({where})")
    spread = impl_spread({"Gateway", "GatewayServer", "Toolbox", "SessionState"})
    print("Files holding a type's inherent methods:")
    for name in sorted(spread):
        print(f"  {name}: {len(spread[name])} ({', '.join(sorted(spread[name]))})")


if __name__ == "__main__":
    main()
