#!/usr/bin/env python3
"""Instructions per search: a steady figure for a search's work where timings are noisy.

    python3 scripts/instructions.py BENCH_BINARY 'tasks/semantic/10000$' [--seconds 10]

BENCH_BINARY is the criterion benchmark `cargo bench -p toolgate-search --features semantic
--bench search --no-run` prints ("Executable benches/search.rs (target/release/deps/search-…)").
The benchmark named by the filter runs under valgrind's callgrind in criterion's profiling mode
for the given seconds of (slowed) time, counting only inside `Index::search`; the script prints
how many searches ran and the instructions per search. Compare two builds by running both:
the rotation over requests makes the figure move by a few tenths of a percent from run to run.
Needs valgrind (Debian's `valgrind` package). Only the standard library.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

SEARCH = "toolgate_search::Index::search"


def per_search(profile):
    """(searches, instructions) summed over every call of `Index::search` in a callgrind file."""
    with open(profile, encoding="utf-8", errors="replace") as f:
        text = f.read()
    found = re.search(r"\((\d+)\) " + re.escape(SEARCH) + r"\n", text)
    if not found:
        sys.exit(f"no call of {SEARCH} in {profile}: does the filter name a search benchmark?")
    calls = cost = 0
    pattern = r"cfn=\(%s\)(?: [^\n]*)?\ncalls=(\d+) [^\n]*\n\S+ (\d+)" % found.group(1)
    for m in re.finditer(pattern, text):
        calls += int(m.group(1))
        cost += int(m.group(2))
    if calls == 0:
        sys.exit(f"{SEARCH} was never called")
    return calls, cost


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", help="the search benchmark's executable")
    parser.add_argument("filter", help="a criterion filter naming one benchmark, e.g. 'tasks/semantic/10000$'")
    parser.add_argument("--seconds", type=int, default=10, help="criterion's --profile-time (default 10)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        profile = os.path.join(tmp, "callgrind.out")
        run = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={profile}",
                f"--toggle-collect={SEARCH}",
                args.bench,
                "--bench",
                "--profile-time",
                str(args.seconds),
                args.filter,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if run.returncode != 0 or not os.path.exists(profile):
            sys.exit(f"valgrind failed ({run.returncode}):\n{run.stderr[-2000:]}")
        calls, cost = per_search(profile)
    print(f"{args.filter}: {calls} searches, {cost / calls:,.0f} instructions per search")


if __name__ == "__main__":
    main()
