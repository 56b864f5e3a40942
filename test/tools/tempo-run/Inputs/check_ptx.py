"""Compiles every program (`*.mlir`) of the given directories for the CUDA
target (`tempo-run --target cuda --emit-ptx`, no GPU needed) and assembles
each kernel's PTX with NVIDIA's ptxas for the same architecture. Prints one
line per program and exits non-zero on the first failure. Programs with
reads through data or stops (`temporal.read_at`, `temporal.stop`) are not
compiled for the GPU yet: for them the refusal, a located "not yet"
error, is what is checked.

    check_ptx.py PTXAS SCRATCH_DIR ARCH [-O N] DIR...
"""

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
total = 0
refused = 0
for program in programs:
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
            sys.exit(f"{name}: expected the GPU target to refuse it (not yet), got:\n{compiled.stderr}")
        refused += 1
        print(f"{name}: refused for the GPU target (not yet)")
        continue
    if compiled.returncode != 0:
        sys.exit(f"{name}: tempo-run failed:\n{compiled.stderr}")
    kernels = sorted(glob.glob(os.path.join(out, "*.ptx")))
    for kernel in kernels:
        assembled = subprocess.run([ptxas, f"-arch={arch}", kernel, "-o", os.devnull], capture_output=True, text=True)
        if assembled.returncode != 0:
            sys.exit(f"{name}: ptxas rejects {os.path.basename(kernel)}:\n{assembled.stderr}")
    total += len(kernels)
    print(f"{name}: {len(kernels)} kernels, ptxas ok")
print(f"{len(programs) - refused} programs, {total} kernels accepted by ptxas ({arch}); {refused} refused")
