#!/usr/bin/env python3
"""sentence-transformers' vectors of a few texts, recorded for `crates/toolgate-search/tests/encoder.rs`.

The `bert` strategy reimplements sentence-transformers' encoding of a BERT model (WordPiece, the
forward pass, mean pooling, normalisation). The test compares its vectors with the ones this
script records from sentence-transformers itself, on the model `e2e/setup.sh` installs: a short
request, a paragraph, one long enough to be cut at 256 tokens, accents, Chinese, one letter.

sentence-transformers runs on torch, whose PyPI wheels pull gigabytes of CUDA libraries, so the
tests do not install it; run this by hand when the model or a text changes:

    python3 -m venv /tmp/venv-st
    /tmp/venv-st/bin/pip install sentence-transformers==6.3.0
    /tmp/venv-st/bin/python scripts/minilm_reference.py e2e/model \
        > crates/toolgate-search/tests/data/minilm_reference.json
"""

import hashlib
import json
import os
import sys

LONG = "Every Monday someone exports the numbers, cleans them by hand and mails a chart. " * 40

TEXTS = [
    "find the cheapest flight from Berlin to Lisbon next Friday",
    "Read notes.md, pull out every line that mentions a deadline, and add each of them as an "
    "event to my calendar for the right day, with a reminder one day before.",
    LONG,
    "Crème brûlée recipes, naïve café reviews",
    "帮我查一下明天北京的天气",
    "a",
]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: minilm_reference.py MODEL_DIR")
    model_dir = sys.argv[1]
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    with open(os.path.join(model_dir, "model.safetensors"), "rb") as f:
        weights = hashlib.sha256(f.read()).hexdigest()
    model = SentenceTransformer(model_dir, device="cpu")
    # One text a pass, as a search encodes its request.
    vectors = [model.encode(t, normalize_embeddings=True).tolist() for t in TEXTS]
    made_with = f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}"
    texts = [{"text": t, "vector": [float(f"{x:.7g}") for x in v]} for t, v in zip(TEXTS, vectors)]
    # One text a line.
    print("{")
    print(f' "made_with": {json.dumps(made_with)},')
    print(f' "model_safetensors_sha256": "{weights}",')
    print(' "texts": [')
    print(",\n".join("  " + json.dumps(t, ensure_ascii=False) for t in texts))
    print(" ]")
    print("}")


if __name__ == "__main__":
    main()
