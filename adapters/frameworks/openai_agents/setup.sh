#!/usr/bin/env bash
# Installs the OpenAI Agents SDK's pinned requirements into its own venv under target/
# (only when missing) and prints, as .ci/frameworks.sh expects, the engine command on
# the first line and the interpreter of the hand checks on the second. Run from the
# repository root; writes only under target/. The engine runs with PYTHONHASHSEED=0 so
# no set or dict of strings the SDK iterates can order anything differently from one
# process to the next (the harness may start several).
set -euo pipefail
venv=target/fw-venvs/openai_agents
mkdir -p "$(dirname "$venv")"
if [ ! -x "$venv/bin/python3" ]; then
    python3 -m venv "$venv" >&2
fi
if ! cmp -s adapters/frameworks/openai_agents/requirements.txt "$venv/.installed" 2>/dev/null; then
    "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check \
        -r adapters/frameworks/openai_agents/requirements.txt >&2
    cp adapters/frameworks/openai_agents/requirements.txt "$venv/.installed"
fi
echo "env PYTHONHASHSEED=0 $venv/bin/python3 adapters/frameworks/openai_agents/engine.py"
echo "$venv/bin/python3"
