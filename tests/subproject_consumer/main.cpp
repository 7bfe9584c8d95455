// SPDX-License-Identifier: Apache-2.0
// Uses kiln built as a part of this project: an expression and a sum on the default device.
#include <cstdio>
#include <kiln/kiln.hpp>
#include <vector>

int main() {
    kiln::queue q(kiln::default_device());
    kiln::vector<int> x(q, std::vector<int>{1, 2, 3, 4, 5});
    x = 2 * x + 1;
    const int total = kiln::sum(x);
    if (total != 35) {
        std::fprintf(stderr, "consumer: the sum is %d, not 35\n", total);
        return 1;
    }
    std::printf("consumer: kiln built as a subproject ran on %s\n", q.device().name().c_str());
    return 0;
}
