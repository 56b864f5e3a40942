"""For fast-math-approximations.mlir. `write FILE`: the arguments, an f32
.npy of 4,096 points over [-20, 20] and the edges (exp's overflow and
underflow, tanh's small and saturated ranges, NaN). `check A B`: two
tempo-run --format json outputs of the same program; prints the largest
error of A against B in units of B's f32 spacing (ulps) per output,
exits 1 past argv[4] ulps or on a NaN mismatch."""
import json
import math
import struct
import sys

EDGES = [0.0, -0.0, 1e-6, -3e-4, 3.9e-4, 4.1e-4, 0.5, -0.625, 7.9, -7.91, 9.0, 30.0,
         80.0, 88.5, 88.72, 88.8, -87.0, -100.0, -103.9, -104.5, -120.0, float("nan")]


def write(path):
    values = [-20.0 + 40.0 * i / 4073 for i in range(4074)] + EDGES
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def ulp(x):
    """The spacing of f32 at x (at least that of the smallest normal)."""
    x = abs(x)
    if math.isinf(x):
        return math.inf
    exponent = math.frexp(max(x, 2.0 ** -126))[1]
    return 2.0 ** (exponent - 24)


def flat(v):
    if isinstance(v, list):
        for x in v:
            yield from flat(x)
    else:
        yield float(v)


def check(a_path, b_path, limit):
    load = lambda p: [json.loads(line) for line in open(p) if line.strip()]
    worst_all = 0.0
    for x, y in zip(load(a_path), load(b_path)):
        worst = 0.0
        for p, q in zip(flat(x["values"]), flat(y["values"])):
            if math.isnan(p) or math.isnan(q):
                if not (math.isnan(p) and math.isnan(q)):
                    sys.exit(f"{x['name']}: {p} against {q}")
                continue
            if p == q:
                continue
            if math.isinf(p) or math.isinf(q):
                sys.exit(f"{x['name']}: {p} against {q}")
            worst = max(worst, abs(p - q) / ulp(q))
        print(f"{x['name']}: largest error {worst:.1f} ulps")
        worst_all = max(worst_all, worst)
    sys.exit(1 if worst_all > limit else 0)


if sys.argv[1] == "write":
    write(sys.argv[2])
else:
    check(sys.argv[2], sys.argv[3], float(sys.argv[4]))
