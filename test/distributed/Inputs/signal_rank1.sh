#!/bin/sh
# Under mpirun: rank 1 runs COMMAND... and gets SIGNAL after SECONDS
# (KILL: killed, no MPI_Abort, no finalize; STOP: stopped, alive, so the
# launcher sees nothing wrong, but it never reaches its next collective);
# other ranks run it to the end.
# usage: signal_rank1.sh SIGNAL SECONDS COMMAND...
signal=$1
seconds=$2
shift 2
if [ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ]; then
    "$@" &
    pid=$!
    sleep "$seconds"
    kill -"$signal" "$pid"
    wait "$pid"
    exit $?
fi
exec "$@"
