"""Compares the parameter files of data-parallel runs (written by the
examples' --params): every rank of a run holds the same parameters (a
checksum of each rank's file, compared exactly), and they equal a
reference run's within a relative tolerance (the order of float sums
differs between one process and several). With --differs FILE, they must
also differ from FILE's by more than the tolerance somewhere (the check is
able to fail: a run on half the batch is not the run on the whole).

usage: compare_params.py REFERENCE RANK0 [RANK1 ...] --rtol R [--differs FILE]
"""

import hashlib
import sys


def load(path):
    params = {}
    with open(path) as f:
        for line in f:
            name, *values = line.split()
            params[name] = [float(v) for v in values]
    if not params:
        sys.exit(f"{path}: no parameters")
    return params


def worst(a, b):
    """The largest relative difference over every element (relative to the
    largest magnitude of the parameter, so near-zero elements do not
    dominate)."""
    if a.keys() != b.keys():
        sys.exit(f"different parameters: {sorted(a)} against {sorted(b)}")
    out = 0.0
    for name in a:
        x, y = a[name], b[name]
        if len(x) != len(y):
            sys.exit(f"{name}: {len(x)} values against {len(y)}")
        scale = max(max(abs(v) for v in x), 1e-30)
        out = max(out, max(abs(u - v) for u, v in zip(x, y)) / scale)
    return out


args = sys.argv[1:]
rtol = float(args[args.index("--rtol") + 1])
differs = args[args.index("--differs") + 1] if "--differs" in args else None
files = [a for k, a in enumerate(args) if not a.startswith("--") and (k == 0 or not args[k - 1].startswith("--"))]
reference, ranks = files[0], files[1:]
sums = [hashlib.sha256(open(r, "rb").read()).hexdigest() for r in ranks]
print(f"ranks: {len(ranks)}, checksums equal: {len(set(sums)) == 1}")
if len(set(sums)) != 1:
    sys.exit(f"the ranks hold different parameters: {dict(zip(ranks, sums))}")
ref = load(reference)
got = load(ranks[0])
error = worst(ref, got)
print(f"parameters: {len(ref)}, within rtol: {error <= rtol}")
if error > rtol:
    sys.exit(f"largest relative difference {error:.3e} > {rtol:.1e}")
if differs is not None:
    other = worst(ref, load(differs))
    print(f"the other run differs: {other > rtol}")
    if other <= rtol:
        sys.exit(f"{differs} is within {rtol:.1e} of the reference ({other:.3e}): the comparison cannot fail")
