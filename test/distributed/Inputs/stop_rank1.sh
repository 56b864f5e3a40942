#!/bin/sh
# Under mpirun: rank 1 runs COMMAND... and is stopped (SIGSTOP: alive, so
# the launcher sees nothing wrong, but it never reaches its next
# collective) after SECONDS; other ranks run it to the end.
# usage: stop_rank1.sh SECONDS COMMAND...
seconds=$1
shift
if [ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ]; then
    "$@" &
    pid=$!
    sleep "$seconds"
    kill -STOP "$pid"
    wait "$pid"
    exit $?
fi
exec "$@"
