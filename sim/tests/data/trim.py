"""Makes a recorded log small enough to keep as test data without changing what is
judged: every JSON string longer than LIMIT characters (instructions, tool schemas,
environment blurbs) is cut to its first 160 characters plus a marker saying how much
was cut, and the recording machine's paths become /home/user. Structure, ids, roles,
tool names, call ids and short arguments stay byte for byte; lines stay lines.

Usage: python3 trim.py IN OUT [PATH_TO_HIDE...]
"""

import json
import sys

LIMIT = 300


def cut(v, hide):
    if isinstance(v, str):
        for h in hide:
            v = v.replace(h, "/home/user")
        if len(v) > LIMIT:
            return v[:160] + f" [turnsim: {len(v) - 160} characters cut]"
        return v
    if isinstance(v, list):
        return [cut(x, hide) for x in v]
    if isinstance(v, dict):
        return {k: cut(x, hide) for k, x in v.items()}
    return v


def main():
    src, dst, hide = sys.argv[1], sys.argv[2], sorted(sys.argv[3:], key=len, reverse=True)
    out = []
    for line in open(src, encoding="utf-8"):
        if line.strip():
            out.append(json.dumps(cut(json.loads(line), hide), ensure_ascii=False, separators=(",", ":")))
    with open(dst, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
