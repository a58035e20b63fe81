#!/usr/bin/env bash
# Installs pydantic-ai's pinned requirements into its own venv under target/ (only
# when missing) and prints, as .ci/frameworks.sh expects, the engine command on the
# first line and the interpreter of the hand checks on the second. Run from the
# repository root; writes only under target/.
set -euo pipefail
venv=target/fw-venvs/pydantic_ai
mkdir -p "$(dirname "$venv")"
if [ ! -x "$venv/bin/python3" ]; then
    python3 -m venv "$venv" >&2
fi
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check \
    -r adapters/frameworks/pydantic_ai/requirements.txt >&2
echo "$venv/bin/python3 adapters/frameworks/pydantic_ai/engine.py"
echo "$venv/bin/python3"
