"""Compares the iteration lines of two runs (`iteration N <key> X ...`):
the same iterations, each value within a relative tolerance (plus the
printed rounding). usage: compare_lines.py A B KEY RTOL"""

import sys


def values(path, key):
    out = []
    for line in open(path):
        words = line.split()
        if words[:1] == ["iteration"] and key in words:
            out.append(float(words[words.index(key) + 1]))
    return out


a, b, key, rtol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
x, y = values(a, key), values(b, key)
if not x or len(x) != len(y):
    sys.exit(f"{len(x)} iterations in {a}, {len(y)} in {b}")
for k, (u, v) in enumerate(zip(x, y)):
    if abs(u - v) > rtol * max(abs(u), abs(v)) + 2e-6:
        sys.exit(f"iteration {k}: {key} {u} against {v}")
print(f"iterations: {len(x)}, {key} equal")
