"""Compares two `tempo-run --format json` outputs (one JSON object per
line): same names and shapes, values within 1e-5 relative (NaN equal)."""

import json
import math
import sys


def flat(values):
    if isinstance(values, list):
        for v in values:
            yield from flat(v)
    else:
        yield values


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


a, b = load(sys.argv[1]), load(sys.argv[2])
assert [(x["name"], x["shape"]) for x in a] == [(y["name"], y["shape"]) for y in b], "different outputs"
for x, y in zip(a, b):
    for u, v in zip(flat(x["values"]), flat(y["values"])):
        same = (isinstance(u, float) and math.isnan(u) and math.isnan(v)) or abs(u - v) <= 1e-5 * (1 + abs(v))
        if not same:
            sys.exit(f"{x['name']}: {u} and {v} differ")
print("outputs agree")
