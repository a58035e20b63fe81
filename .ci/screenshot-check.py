#!/usr/bin/env python3
"""A browser's screenshot shows a drawn picture, not an empty page.

Chromium writes a screenshot even when the page rendered nothing (a script that threw
before drawing, a style the Content-Security-Policy refused, a missing font turning
every label blank), so the file's existence proves little. This decodes the PNG with
the standard library only (CI installs nothing for it) and fails unless the picture
has many colours, no single colour covers nearly all of it, and enough pixels carry
the one colour the page must show (the timeline's violation red), so a page that
lost its drawing or its styling is red here.

Usage: screenshot-check.py SHOT.png RRGGBB MIN_PIXELS
"""

import struct
import sys
import zlib


def read_png(path):
    """Width, height, channels and the unfiltered rows of an 8-bit, non-interlaced
    RGB or RGBA PNG (what Chromium writes)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    channels = {2: 3, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace != 0:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        elif kind != 0:
            raise ValueError(f"row {y}: unknown filter {kind}")
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def main():
    path, colour, min_pixels = sys.argv[1], sys.argv[2], int(sys.argv[3])
    want = tuple(int(colour[i : i + 2], 16) for i in range(0, 6, 2))
    width, height, channels, rows = read_png(path)
    counts = {}
    for line in rows:
        for x in range(0, len(line), channels):
            rgb = line[x : x + 3]
            counts[rgb] = counts.get(rgb, 0) + 1
    total = width * height
    top = max(counts.values())
    # Antialiasing shifts edge pixels a little; the mark's own pixels are within 8.
    near = sum(n for rgb, n in counts.items() if all(abs(c - w) <= 8 for c, w in zip(rgb, want)))
    problems = []
    if len(counts) < 16:
        problems.append(f"only {len(counts)} colours")
    if top > 0.97 * total:
        problems.append(f"one colour covers {100 * top / total:.1f}% of it")
    if near < min_pixels:
        problems.append(f"{near} pixels of #{colour}, fewer than {min_pixels}")
    summary = f"{width}x{height}, {len(counts)} colours, {near} pixels of #{colour}"
    if problems:
        print(f"screenshot-check: {path} looks empty ({summary}): {'; '.join(problems)}", file=sys.stderr)
        return 1
    print(f"screenshot-check: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
