#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 600) one after another on the committed seed
# corpora, writing each run's log to fuzz/logs/TARGET.log. Needs the nightly toolchain and
# cargo-fuzz (`cargo install cargo-fuzz`).
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-600}
mkdir -p logs
for target in query catalog config jsonrpc; do
    # A scratch copy of the seeds, so that a run does not grow the committed corpus.
    work=$(mktemp -d)
    cp -r "corpus/$target/." "$work/"
    cargo +nightly fuzz run -O "$target" "$work" -- -max_total_time="$seconds" -rss_limit_mb=4096 \
        > "logs/$target.log" 2>&1 || { echo "fuzz target $target failed; see fuzz/logs/$target.log"; tail -30 "logs/$target.log"; exit 1; }
    grep -E "^#[0-9]+[[:space:]]+DONE|^Done" "logs/$target.log" | sed "s/^/$target: /"
    rm -rf "$work"
done
