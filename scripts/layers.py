#!/usr/bin/env python3
"""The import graph of core/src and sim/src, from the code's own paths.

Every `use crate::…`, `use super::…`, `use self::…`, `use child::…` and every inline
`crate::…`, `super::…` or `child::…` path becomes an edge from the file that writes it
to the file that defines the module it names (re-exports followed to where the item
lives). A module's paths into its own descendants are not edges: a parent module (a
`mod.rs`, or `foo.rs` with `foo/`) is the façade of the modules it declares and stands
above them. The script then reports two things and exits 1 if either is not empty:

- circles: sets of files that import each other round a loop (strongly connected
  components of more than one file);
- upward imports: a file of a lower layer importing a file of a higher one, the
  layers being the line in LAYERS below (docs/architecture.md draws it).

`python3 scripts/layers.py` checks; `--graph` prints every edge; `--verbose` names the
line of each edge of a circle; `--root DIR` checks another checkout. Exit 0: clean,
1: problems found, 2: usage. sim/tests/layers.rs runs it under `cargo test`.
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

# The line for sim/src, lowest first: a module may import only its own layer (without
# a circle) or one below. Keys are the first segment after `crate::`; `lib` is the
# crate root (the façade), which nothing inside the crate may import.
SIM_LAYERS = [
    # 0: leaves shared by everything: exit codes, atomic writes, canonical JSON, base64,
    # a stdout that survives its reader
    ["exit", "invariant", "atomic", "run_digest", "cliargs", "base64", "stdout"],
    # 1: wire readers
    ["openai", "gemini"],
    # 2: the one judge
    ["judge"],
    # 3: conventions (an engine's wording and layout)
    ["conventions"],
    # 4: the checkers
    ["checkers"],
    # 5: the engine seam and the simulated pieces
    ["engine", "options", "decide", "scheduler", "disk", "tools", "script", "provider",
     "trace", "canary", "canary_turns"],
    # 6: the world
    ["world"],
    # 7: runner, shrink, scenario, report
    ["scenario", "runner", "shrink", "report", "seedset", "summary_file", "timeline"],
    # 8: the live wing and the transcript checker
    ["check", "serve", "drive", "stdio_engine", "fuzz_bodies"],
    # 9: the command line
    ["cli", "testing"],
    # 10: the crate root and the binary
    ["lib", "main"],
]

CORE_LAYERS = None  # core is checked for circles only; its folders are one layer


def strip(src):
    """Source with comments, strings and char literals blanked (lengths kept, so
    line numbers survive)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', src[i:i + 10]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'r(#*)"', src[i:])
            hashes = m.group(1)
            end = src.find('"' + hashes, i + len(m.group(0)))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", src[i:end]))
            i = end
        elif c == "b" and src.startswith('b"', i) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            out.append(" ")
            i += 1
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", src[i:j + 1]))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^'\\])'", src[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_tree(tree):
    """`a::{b, c::{d, e as f}, self}` -> [[a,b],[a,c,d],[a,c,e],[a]]"""
    tree = tree.strip()
    if not tree:
        return []
    depth, start, parts = 0, 0, []
    # split a top-level comma list
    if tree.startswith("{") and tree.endswith("}"):
        inner = tree[1:-1]
        for k, ch in enumerate(inner):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(inner[start:k])
                start = k + 1
        parts.append(inner[start:])
        res = []
        for p in parts:
            res.extend(expand_tree(p))
        return res
    m = re.match(r"([A-Za-z_][\w]*)\s*(::\s*(.*))?$", tree, re.S)
    if not m:
        return []
    head, rest = m.group(1), m.group(3)
    if rest is None:
        name = re.split(r"\s+as\s+", tree)[0].strip()
        return [[name]]
    rest = rest.strip()
    if rest == "*":
        return [[head, "*"]]
    return [[head] + p for p in expand_tree(rest)]


class File:
    def __init__(self, crate, rel, path):
        self.crate = crate
        self.rel = rel
        self.path = path
        self.module = module_of(rel)
        self.src = strip(open(path, encoding="utf-8").read())
        self.inline = inline_mods(self.src)
        # Child modules declared here (`mod name;` or inline): a path may start with
        # one of them without `self::` (2018 edition paths).
        self.children = set(re.findall(r"\bmod\s+([A-Za-z_]\w*)\s*[;{]", self.src))
        self.uses = []  # (line, absolute segments)
        self.reexports = {}  # name -> absolute segments


def module_of(rel):
    parts = rel[:-3].split("/")
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1] if parts[-1] != "main" else ["main"]
    return parts


def inline_mods(src):
    """[(start, end, name)] of inline `mod name { … }` blocks."""
    res = []
    for m in re.finditer(r"\bmod\s+([A-Za-z_]\w*)\s*\{", src):
        depth, j = 1, m.end()
        while j < len(src) and depth:
            if src[j] == "{":
                depth += 1
            elif src[j] == "}":
                depth -= 1
            j += 1
        res.append((m.start(), j, m.group(1)))
    return res


def scope_at(f, pos):
    scope = list(f.module)
    for (s, e, name) in sorted(f.inline):
        if s < pos < e:
            scope.append(name)
    return scope


def absolute(f, pos, segs):
    scope = scope_at(f, pos)
    if segs[0] in f.children:
        return scope + segs
    if segs[0] == "crate":
        return segs[1:]
    if segs[0] in ("super", "self"):
        cur = list(scope)
        k = 0
        while k < len(segs) and segs[k] in ("super", "self"):
            if segs[k] == "super":
                cur = cur[:-1]
            k += 1
        return cur + segs[k:]
    return None


def collect(files):
    for f in files.values():
        src = f.src
        spans = []
        for m in re.finditer(r"\b(pub(\s*\([^)]*\))?\s+)?use\s+([^;]*);", src):
            spans.append((m.start(), m.end()))
            tree = re.sub(r"\s+", " ", m.group(3)).strip()
            if tree.startswith("::"):
                continue
            line = src.count("\n", 0, m.start()) + 1
            for segs in expand_tree(tree):
                segs = [s for s in segs if s]
                if not segs or (segs[0] not in ("crate", "super", "self") and segs[0] not in f.children):
                    continue
                if segs[-1] == "self":
                    segs = segs[:-1]
                ab = absolute(f, m.start(), segs)
                if ab is None:
                    continue
                f.uses.append((line, ab))
                if m.group(1) and segs[-1] != "*" and scope_at(f, m.start()) == f.module:
                    alias = re.search(r"\b" + re.escape(segs[-1]) + r"\s+as\s+(\w+)", tree)
                    f.reexports[alias.group(1) if alias else segs[-1]] = ab
        blank = list(src)
        for (s, e) in spans:
            for k in range(s, e):
                if blank[k] != "\n":
                    blank[k] = " "
        rest = "".join(blank)
        roots = "|".join(["crate", "super", "self"] + sorted(f.children))
        for m in re.finditer(r"(?<![\w:])((?:" + roots + r")(?:\s*::\s*(?:super|[A-Za-z_]\w*))+)", rest):
            segs = [s.strip() for s in m.group(1).split("::")]
            if segs[0] == "self" and len(segs) < 2:
                continue
            ab = absolute(f, m.start(), segs)
            line = rest.count("\n", 0, m.start()) + 1
            f.uses.append((line, ab))


def resolve(files, by_module, ab, depth=0):
    """The file that defines what the absolute path `ab` names."""
    best = None
    for k in range(len(ab), -1, -1):
        key = tuple(ab[:k])
        if key in by_module:
            best = (k, by_module[key])
            break
    if best is None:
        return None
    k, target = best
    if depth < 8 and k < len(ab):
        name = ab[k]
        if name in target.reexports:
            nxt = target.reexports[name] + ab[k + 1:]
            if nxt != ab:
                r = resolve(files, by_module, nxt, depth + 1)
                if r is not None:
                    return r
    return target


def load(crate, src_dir):
    files = {}
    for dirpath, _, names in os.walk(src_dir):
        for name in names:
            if name.endswith(".rs"):
                p = os.path.join(dirpath, name)
                rel = os.path.relpath(p, src_dir).replace(os.sep, "/")
                files[rel] = File(crate, rel, p)
    # `#[path]` modules: provider.rs declares provider_refusal.rs and provider_tests.rs
    # as its children; the binary's own modules are not the library's.
    for rel in list(files):
        if rel.startswith("bin/"):
            del files[rel]
    for f in files.values():
        for m in re.finditer(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)', open(f.path, encoding="utf-8").read()):
            child = os.path.normpath(os.path.join(os.path.dirname(f.rel), m.group(1))).replace(os.sep, "/")
            if child in files:
                files[child].module = f.module + [m.group(2)]
    by_module = {tuple(f.module): f for f in files.values()}
    collect(files)
    edges = {}
    for f in files.values():
        for line, ab in f.uses:
            t = resolve(files, by_module, ab)
            if t is None or t is f:
                continue
            # A module stands above the modules it declares: it is their façade and
            # the place that puts them together, so its use of its own descendants is
            # the module tree, not an import. Their use of it (`super::…`) is one.
            if t.module[:len(f.module)] == f.module:
                continue
            edges.setdefault(f.rel, {}).setdefault(t.rel, line)
    return files, edges


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def layer_of(layers, f):
    top = f.module[0] if f.module else "lib"
    for k, names in enumerate(layers):
        if top in names:
            return k
    return None


def main():
    global ROOT
    verbose = "--verbose" in sys.argv
    graph = "--graph" in sys.argv
    if "--root" in sys.argv:
        k = sys.argv.index("--root")
        if k + 1 >= len(sys.argv):
            print("--root needs a directory (one holding core/src and sim/src)")
            return 2
        ROOT = os.path.abspath(sys.argv[k + 1])
    for src in ("core/src", "sim/src"):
        if not os.path.isdir(os.path.join(ROOT, src)):
            print(f"{os.path.join(ROOT, src)}: not a directory; expected the repository's {src}")
            return 2
    problems = 0
    for crate, src, layers in (("core", "core/src", CORE_LAYERS), ("sim", "sim/src", SIM_LAYERS)):
        files, edges = load(crate, os.path.join(ROOT, src))
        if graph:
            for a in sorted(edges):
                for b in sorted(edges[a]):
                    print(f"{crate}: {a} -> {b}  (line {edges[a][b]})")
        for comp in sccs(files.keys(), edges):
            problems += 1
            print(f"circle in {src}: {len(comp)} files: {', '.join(comp)}")
            if verbose:
                inside = set(comp)
                for a in comp:
                    for b, line in sorted(edges.get(a, {}).items()):
                        if b in inside:
                            print(f"    {a}:{line} -> {b}")
        if layers is None:
            continue
        for rel in sorted(files):
            if layer_of(layers, files[rel]) is None:
                problems += 1
                print(f"{src}/{rel}: its top-level module is in no layer of scripts/layers.py")
        for a in sorted(edges):
            la = layer_of(layers, files[a])
            for b, line in sorted(edges[a].items()):
                lb = layer_of(layers, files[b])
                if la is not None and lb is not None and lb > la:
                    problems += 1
                    print(f"upward import: {src}/{a}:{line} (layer {la}) -> {b} (layer {lb})")
    if problems:
        print(f"{problems} problem(s)")
        return 1
    print("layers: no circles, no upward imports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
