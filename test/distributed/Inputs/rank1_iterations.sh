#!/bin/sh
# Under mpirun: rank 1 runs COMMAND... with --iterations N1 appended, the
# others with --iterations N0: programs that disagree on how many
# collectives they reach.
# usage: rank1_iterations.sh N0 N1 COMMAND...
n0=$1
n1=$2
shift 2
if [ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ]; then
    exec "$@" --iterations "$n1"
fi
exec "$@" --iterations "$n0"
