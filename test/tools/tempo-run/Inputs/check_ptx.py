"""Compiles every program (`*.mlir`) of the given directories for the CUDA
target (`tempo-run --target cuda --emit-ptx`, no GPU needed) and assembles
each kernel's PTX with NVIDIA's ptxas for the same architecture. Prints one
line per program and exits non-zero on the first failure. Programs with
reads through data or stops (`temporal.read_at`, `temporal.stop`) are not
compiled for the GPU yet: for them the refusal, a located "not yet"
error, is what is checked.

    check_ptx.py PTXAS SCRATCH_DIR ARCH [-O N] DIR...
"""

import concurrent.futures
import glob
import os
import subprocess
import sys

ptxas, scratch, arch = sys.argv[1:4]
rest = sys.argv[4:]
level = []
if rest[:1] == ["-O"]:
    level, rest = ["-O", rest[1]], rest[2:]
programs = [p for d in rest for p in sorted(glob.glob(os.path.join(d, "*.mlir")))]

def check(program):
    """(line printed, kernels, refused) for one program; an error message
    as the first element's "error" form on failure."""
    name = os.path.join(os.path.basename(os.path.dirname(program)), os.path.basename(program))
    out = os.path.join(scratch, name.replace("/", "_"))
    os.makedirs(out, exist_ok=True)
    compiled = subprocess.run(
        ["tempo-run", program, "--target", "cuda", "--gpu-arch", arch, "--emit-ptx", out] + level,
        capture_output=True, text=True,
    )
    text = open(program).read()
    if "temporal.read_at" in text or "temporal.stop" in text:
        if compiled.returncode == 0 or "error: not yet:" not in compiled.stderr:
            return f"{name}: expected the GPU target to refuse it (not yet), got:\n{compiled.stderr}", None, 0
        return f"{name}: refused for the GPU target (not yet)", 0, 1
    if compiled.returncode != 0:
        return f"{name}: tempo-run failed:\n{compiled.stderr}", None, 0
    kernels = sorted(glob.glob(os.path.join(out, "*.ptx")))
    for kernel in kernels:
        assembled = subprocess.run([ptxas, f"-arch={arch}", kernel, "-o", os.devnull], capture_output=True, text=True)
        if assembled.returncode != 0:
            return f"{name}: ptxas rejects {os.path.basename(kernel)}:\n{assembled.stderr}", None, 0
    return f"{name}: {len(kernels)} kernels, ptxas ok", len(kernels), 0


# The programs on the machine's cores (each a tempo-run and ptxas
# processes), reported in order; the first failure in that order ends it.
total = 0
refused = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
    for line, kernels, refusal in pool.map(check, programs):
        if kernels is None:
            sys.exit(line)
        total += kernels
        refused += refusal
        print(line)
print(f"{len(programs) - refused} programs, {total} kernels accepted by ptxas ({arch}); {refused} refused")
