#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs one MPI rank's program with a PoCL kernel cache of the rank's own,
# $POCL_CACHE_DIR/rank-N (PoCL's default directory when POCL_CACHE_DIR is unset):
#
#     mpirun -n 4 scripts/pocl-cache-per-rank.sh ./program arguments...
#
# Ranks on one node that build the same program into one PoCL cache at the same moment can fail
# one rank's clBuildProgram with an empty log (pocl issue 1480; docs/mpi.md). The rank number
# comes from Open MPI, MPICH or Slurm; without one the program runs unchanged.
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-}}}
if [ -n "$rank" ]; then
    base=${POCL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pocl}
    POCL_CACHE_DIR=$base/rank-$rank
    export POCL_CACHE_DIR
fi
exec "$@"
