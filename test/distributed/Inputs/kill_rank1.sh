#!/bin/sh
# Under mpirun: rank 1 runs COMMAND... and is killed (SIGKILL, no MPI_Abort,
# no finalize) after SECONDS; other ranks run it to the end.
# usage: kill_rank1.sh SECONDS COMMAND...
seconds=$1
shift
if [ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ]; then
    "$@" &
    pid=$!
    sleep "$seconds"
    kill -9 "$pid"
    wait "$pid"
    exit $?
fi
exec "$@"
