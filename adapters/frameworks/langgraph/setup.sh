#!/usr/bin/env bash
# Installs LangGraph's pinned requirements into its own venv under target/ (only when
# missing) and prints, as .ci/frameworks.sh expects, the engine command on the first
# line and the interpreter of the hand checks on the second. Run from the repository
# root; writes only under target/.
set -euo pipefail
venv=target/fw-venvs/langgraph
req=adapters/frameworks/langgraph/requirements.txt
mkdir -p "$(dirname "$venv")"
if [ ! -x "$venv/bin/python3" ]; then
    python3 -m venv "$venv" >&2
fi
# pip is asked only when the venv does not already hold exactly these pins.
if ! diff <(grep -v '^#' "$req" | sort) <("$venv/bin/python3" -m pip freeze --disable-pip-version-check 2>/dev/null | sort) >/dev/null; then
    "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check -r "$req" >&2
fi
echo "$venv/bin/python3 adapters/frameworks/langgraph/engine.py"
echo "$venv/bin/python3"
