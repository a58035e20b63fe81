#!/usr/bin/env bash
# Fails when git tracks a binary artefact (a wheel, an archive, a shared object, a
# compiled file, or any file with a NUL byte in its first 8 KB) outside the folders
# that hold test data on purpose. Built files belong in a registry or in target/, not
# in every clone's history: 17 Python wheels once sat at the root unnoticed, because
# nothing looked. Both tests are needed: an extension check alone misses a binary
# under an innocent name, a content check alone misses a text-only archive format.
set -euo pipefail
cd "$(dirname "$0")/.."

# Folders whose binary files are test inputs (fuzz seeds and regression inputs,
# recorded transcripts and streams).
allowed_dirs=(fuzz/seeds/ fuzz/regressions/ sim/tests/data/ core/tests/data/)
# Extensions that are built or packaged artefacts whatever their content.
artefact_ext='\.(whl|egg|tar|tar\.gz|tgz|tar\.bz2|tar\.xz|gz|bz2|xz|zst|zip|7z|rar|jar|so|so\.[0-9.]+|dylib|dll|exe|a|o|rlib|rmeta|pyc|pyo|pyd|deb|rpm|wasm|bin|profraw|profdata)$'

is_allowed() {
    local f="$1" d
    # Pictures the documentation shows (docs/timeline.png in the README).
    case "$f" in docs/*.png) return 0 ;; esac
    for d in "${allowed_dirs[@]}"; do
        case "$f" in "$d"*) return 0 ;; esac
    done
    return 1
}

has_nul() {
    # The number of bytes in the first 8 KB with NULs removed differs from the
    # number of bytes: the file holds a NUL.
    local all kept
    all=$(head -c 8192 -- "$1" | wc -c)
    kept=$(head -c 8192 -- "$1" | tr -d '\000' | wc -c)
    [ "$all" -ne "$kept" ]
}

found=()
while IFS= read -r -d '' f; do
    is_allowed "$f" && continue
    if printf '%s\n' "$f" | grep -qiE "$artefact_ext"; then
        found+=("$f (artefact extension)")
    elif [ -f "$f" ] && [ ! -L "$f" ] && has_nul "$f"; then
        found+=("$f (NUL byte in the first 8 KB)")
    fi
done < <(git ls-files -z)

if [ "${#found[@]}" -gt 0 ]; then
    echo "no-artefacts: ${#found[@]} binary artefact(s) tracked outside test data:" >&2
    printf '  %s\n' "${found[@]}" >&2
    echo "remove them (git rm --cached FILE) and ignore them in .gitignore; test inputs go under ${allowed_dirs[*]}" >&2
    exit 1
fi
echo "no-artefacts: no binary artefact tracked outside test data"
