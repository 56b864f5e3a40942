#!/bin/sh
# fails_within.sh SECONDS COMMAND...: runs COMMAND with a time limit and
# succeeds only if it fails (a non-zero status) before the limit; prints
# how it ended. A hang (the limit reached) is a failure of the test.
limit=$1
shift
start=$(date +%s)
timeout -k 5 "$limit" "$@"
rc=$?
end=$(date +%s)
# timeout's status on a hang: 124, or 137 when it had to kill (a run's own
# status may be 137 too: a process killed by SIGKILL).
if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ $((end - start)) -ge "$limit" ]; }; then
    echo "HANG: still running after $limit s"
    exit 1
fi
if [ "$rc" -eq 0 ]; then
    echo "the run succeeded"
    exit 1
fi
echo "failed (status $rc) within $limit s (took $((end - start)) s)"
exit 0
