// SPDX-License-Identifier: Apache-2.0
// A histogram through sorting: sort the bin index of every sample, then reduce_by_key adds a
// one per sample over each run of equal bins; checked against a histogram counted on the CPU.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <kiln/algorithm.hpp>
#include <kiln/kiln.hpp>
#include <kiln/vector.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

int main() {
    try {
        const std::size_t n = 1000003;
        // Sums of three dice rolls, 3 to 18: a bell-shaped histogram.
        std::mt19937 engine(7);
        std::uniform_int_distribution<int> die(1, 6);
        std::vector<std::int32_t> samples(n);
        for (auto& s : samples) s = die(engine) + die(engine) + die(engine);
        kiln::queue q(kiln::default_device());

        // [doc:sort-histogram]
        kiln::vector<std::int32_t> bins(q, samples), ones(q, n), values(q, n), counts(q, n);
        ones = 1;
        kiln::sort(bins);  // equal bins are now neighbours
        const std::size_t used = kiln::reduce_by_key(bins, ones, values, counts);
        // values[0, used) are the bins that occur, counts[0, used) how often
        // [/doc]

        std::map<std::int32_t, std::int32_t> expected;
        for (auto s : samples) ++expected[s];
        const std::vector<std::int32_t> got_values = values.read(), got_counts = counts.read();
        bool right = used == expected.size();
        std::size_t k = 0;
        for (const auto& [value, count] : expected) {
            if (!right) break;
            right = got_values[k] == value && got_counts[k] == count;
            ++k;
        }
        if (!right) {
            std::fprintf(stderr, "sort_histogram: the device histogram differs from the CPU's\n");
            return 1;
        }
        std::printf("histogram of %zu sums of three dice on %s:\n", n, q.device().name().c_str());
        for (std::size_t b = 0; b < used; ++b)
            std::printf("%3d %7d %s\n", got_values[b], got_counts[b],
                        std::string(static_cast<std::size_t>(got_counts[b] / 4000), '#').c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sort_histogram: %s\n", e.what());
        return 1;
    }
}
