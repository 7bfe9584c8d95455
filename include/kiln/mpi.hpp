// SPDX-License-Identifier: Apache-2.0
// kiln::mpi: communicators, distributed vectors, reductions and halo exchange over MPI ranks
// (built when CMake finds MPI; link kiln::mpi). See docs/mpi.md.
#pragma once
#pragma GCC visibility push(default)

#include <kiln/mpi/communicator.hpp>
#include <kiln/mpi/exchange.hpp>
#include <kiln/mpi/sparse.hpp>
#include <kiln/mpi/vector.hpp>
#pragma GCC visibility pop
