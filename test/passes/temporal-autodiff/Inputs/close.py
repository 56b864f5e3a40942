"""Compares two tempo-run --format json outputs: same tensors and shapes,
every element within a relative tolerance (argv[3]) of the other's size
(at least 1). Prints the largest difference; exits 1 on a mismatch."""
import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def flat(v):
    if isinstance(v, list):
        for x in v:
            yield from flat(x)
    else:
        yield float(v)


a, b, tolerance = load(sys.argv[1]), load(sys.argv[2]), float(sys.argv[3])
worst = 0.0
if len(a) != len(b):
    sys.exit(f"{len(a)} outputs against {len(b)}")
for x, y in zip(a, b):
    if x.get("name") != y.get("name") or x.get("shape") != y.get("shape"):
        sys.exit(f"outputs differ: {x.get('name')} {x.get('shape')} against {y.get('name')} {y.get('shape')}")
    for p, q in zip(flat(x["values"]), flat(y["values"])):
        worst = max(worst, abs(p - q) / max(1.0, abs(p), abs(q)))
print(f"largest relative difference {worst:.1e}")
sys.exit(1 if worst > tolerance else 0)
