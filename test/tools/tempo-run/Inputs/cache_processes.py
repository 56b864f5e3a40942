"""Compiles one program in several tempo-run processes at once against one
fresh cache directory: every process prints the same outputs, and the
directory ends with exactly one whole entry (no temporary files).

    cache_processes.py DIR PROGRAM N [tempo-run arguments...]
"""
import os
import shutil
import subprocess
import sys

directory, program, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
arguments = sys.argv[4:]
shutil.rmtree(directory, ignore_errors=True)
environment = dict(os.environ, TEMPO_CACHE_DIR=directory)
processes = [
    subprocess.Popen(["tempo-run", program, *arguments], env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(count)
]
results = [p.communicate() + (p.returncode,) for p in processes]
for out, err, code in results:
    if code != 0:
        sys.exit(f"a process failed ({code}): {err.decode()}")
outputs = {out for out, _, _ in results}
if len(outputs) != 1:
    sys.exit(f"the processes printed {len(outputs)} different outputs")
entries = sorted(os.listdir(directory))
if len(entries) != 1 or not entries[0].endswith(".tempo"):
    sys.exit(f"the cache holds {entries}, not one entry")
# Another process now hits the entry and prints the same.
again = subprocess.run(["tempo-run", program, *arguments, "--timings"], env=environment, capture_output=True)
if b"compile cache: hit" not in again.stderr or again.stdout not in outputs:
    sys.exit("a later process did not hit the entry: " + again.stderr.decode())
print(f"{count} processes, one entry, outputs agree")
