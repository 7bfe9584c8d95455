// SPDX-License-Identifier: Apache-2.0
// Uses an installed kiln::mpi: a vector over the ranks (one, when run without mpirun), summed.
#include <cstdio>
#include <kiln/kiln.hpp>
#include <kiln/mpi.hpp>
#include <vector>

int main(int argc, char** argv) {
    kiln::mpi::environment mpi(argc, argv);
    kiln::mpi::communicator comm;
    kiln::queue q(kiln::mpi::local_device(comm));
    kiln::mpi::vector<int> x(comm, q, 3);
    x.local() = 2;
    const auto total = kiln::mpi::sum(comm, x.local());
    if (total != 6 * comm.size()) return 1;
    std::printf("consumer: installed kiln::mpi summed over %d ranks\n", comm.size());
    return 0;
}
