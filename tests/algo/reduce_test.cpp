// SPDX-License-Identifier: Apache-2.0
// The reduce module (src/algo/reduce/): its program key, its tuning rows and their text, and
// reductions on every device under every row and the sweep's other shapes, so that PoCL runs
// the GPU rows' kernels (strided loops, 16-byte loads of 16-bit elements) as well as its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <kiln/detail/algo/reduce_tuning.hpp>
#include <kiln/kiln.hpp>
#include <limits>
#include <string>
#include <vector>

#include "algo/key_changes.hpp"
#include "algo/reduce/reduce_kernels.hpp"
#include "support/binary16_types.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::detail::loop_style;
using kiln::detail::reduce_tuning;

TEST(reduce_module, shape_key_changes_with_every_field) {
    using kiln::detail::reduce_shape;
    // A new field fails here first: add it to reduce_shape::key() and to the changes below.
    static_assert(sizeof(reduce_shape) == 144);
    const std::vector<std::function<void(reduce_shape&)>> changes = {
        [](reduce_shape& s) { s.loop = loop_style::chunked; },
        [](reduce_shape& s) { s.accumulators = 2; },
        [](reduce_shape& s) { s.wide_loads = 2; },
        [](reduce_shape& s) { s.lanes = 8; },
        [](reduce_shape& s) { s.vector_lanes = 16; },
        [](reduce_shape& s) { s.state_type = "double"; },
        [](reduce_shape& s) { s.reducer = "maximum"; },
        [](reduce_shape& s) { s.expression = "x * x"; },
        // state_bytes follows state_type: not a key field of its own.
    };
    kiln::test::expect_every_change_changes_the_key(changes);
}

TEST(reduce_module, tunings_read_back_from_their_keys) {
    for (const auto& row : kiln::detail::algorithm::reduce_rows::rows()) {
        SCOPED_TRACE(row.tuning.key());
        EXPECT_FALSE(row.provenance.empty());
        const std::optional<reduce_tuning> back =
            kiln::detail::parse_reduce_tuning(row.tuning.key());
        ASSERT_TRUE(back.has_value());
        EXPECT_EQ(back->key(), row.tuning.key());
    }
    const std::optional<reduce_tuning> partial = kiln::detail::parse_reduce_tuning("strided w3 a2");
    ASSERT_TRUE(partial.has_value());
    EXPECT_EQ(partial->key(), "strided g256 p16 a2 w3 v0");
    for (const char* wrong :
         {"", "w3", "tiled g256", "strided g0", "strided a", "strided x4", "strided g256x",
          "chunked a0", "chunked v1", "chunked v3", "chunked v32"})
        EXPECT_FALSE(kiln::detail::parse_reduce_tuning(wrong).has_value()) << wrong;
}

/// The rows of a GPU through NVIDIA's and any other vendor's driver, and of a CPU device.
TEST(reduce_module, devices_find_their_rows) {
    kiln::device_properties gpu;
    gpu.type = kiln::device_type::gpu;
    gpu.vendor = "NVIDIA Corporation";
    kiln::device_properties cpu;
    cpu.type = kiln::device_type::cpu;
    cpu.vendor = "pocl";
    using table = kiln::detail::tuning_table<kiln::detail::algorithm::reduce_rows>;
    EXPECT_EQ(table::tuning_for(gpu, std::nullopt).key(), "strided g256 p16 a4 w1 v0 s8x8");
    gpu.vendor = "AMD";
    EXPECT_EQ(table::tuning_for(gpu, std::nullopt).key(), "strided g256 p16 a4 w1 v0");
    EXPECT_EQ(table::tuning_for(cpu, std::nullopt).key(), "chunked g1 p16 a4 w0 v16");
}

class reduce_module_test : public kiln::test::device_queue_test {};

/// The rows, each run with every reduction below.
std::vector<reduce_tuning> row_tunings() {
    std::vector<reduce_tuning> tunings;
    for (const auto& row : kiln::detail::algorithm::reduce_rows::rows())
        tunings.push_back(row.tuning);
    return tunings;
}

/// The shapes expr_bench's sweep tries beside the rows: one accumulator and three, element loads
/// and 2 or 4 16-byte loads per step, small groups, chunks without the vector form and with
/// vectors of 2 and 8 elements. A shape changes the loops, not how the reducer combines two
/// states (which the rows run for every reducer): these run the sums alone, of each element
/// width and of an expression's vector form.
std::vector<reduce_tuning> sweep_tunings() {
    std::vector<reduce_tuning> tunings;
    for (const char* key : {"strided g64 p4 a1 w0", "strided g64 p2 a3 w2", "strided g32 p1 a2 w4",
                            "chunked g1 p2 a1 w0", "chunked g4 p3 a3 w0", "chunked g1 p2 a1 v8",
                            "chunked g1 p3 a3 v2"})
        tunings.push_back(*kiln::detail::parse_reduce_tuning(key));
    return tunings;
}

/// Sizes around the accumulators' and the 16-byte loads' steps: none, one, a load's 8 and the
/// elements beside it, and more elements than the work-items.
const std::size_t sizes[] = {0, 1, 7, 8, 9, 17, 1001, 65537};

TEST_P(reduce_module_test, every_tuning_reduces_every_size) {
    const auto reduce_every_size = [&](const reduce_tuning& tuning, bool every_reducer) {
        SCOPED_TRACE(tuning.key());
        const kiln::detail::scoped_algorithm_policy forcing(tuning);
        for (const std::size_t n : sizes) {
            SCOPED_TRACE("n = " + std::to_string(n));
            // Small integers: every sum exact in float, in any order.
            std::vector<float> hf(n);
            std::vector<std::int32_t> hi(n);
            for (std::size_t i = 0; i < n; ++i) {
                hi[i] = static_cast<std::int32_t>(i % 13) - 6;
                hf[i] = static_cast<float>(hi[i]);
            }
            if (n > 0) hf[n - 1] = 100.0f;  // the largest in the last element, a tail's
            float total = 0;
            for (const float v : hf) total += v;
            kiln::vector<float> x(q, hf);
            kiln::vector<std::int32_t> k(q, hi);
            EXPECT_EQ(kiln::sum(x), total);
            std::int64_t int_total = 0;
            for (const std::int32_t v : hi) int_total += v;
            EXPECT_EQ(kiln::sum(k), int_total);
            kiln::test::for_each_binary16([&]<class T>() {
                std::vector<T> h(n);
                for (std::size_t i = 0; i < n; ++i) h[i] = T(hf[i]);
                kiln::vector<T> x16(q, h);
                EXPECT_EQ(kiln::sum(x16), total);
                EXPECT_EQ(kiln::sum(x16 * 2), 2 * total);
                if (every_reducer && n > 0) {
                    EXPECT_EQ(kiln::maximum(x16), 100.0f);
                    EXPECT_EQ(kiln::minimum(-x16), -100.0f);
                }
            });
            if (!every_reducer) continue;
            EXPECT_EQ(kiln::count(x), static_cast<std::uint64_t>(std::count_if(
                                          hf.begin(), hf.end(), [](float v) { return v != 0; })));
            if (n > 0) {
                EXPECT_EQ(kiln::maximum(x), 100.0f);
                const auto [low, high] = kiln::minmax(k * 2);
                EXPECT_EQ(low, 2 * *std::min_element(hi.begin(), hi.end()));
                EXPECT_EQ(high, 2 * *std::max_element(hi.begin(), hi.end()));
            }
        }
    };
    for (const reduce_tuning& tuning : row_tunings()) reduce_every_size(tuning, true);
    for (const reduce_tuning& tuning : sweep_tunings()) reduce_every_size(tuning, false);
}

TEST_P(reduce_module_test, a_malformed_tuning_from_the_environment_is_named) {
    ::setenv("KILN_REDUCE_TUNING", "strided g256 q4", 1);
    kiln::vector<float> x(q, 16);
    try {
        (void)kiln::sum(x);
        ADD_FAILURE() << "no error";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("strided g256 q4"), std::string::npos) << e.what();
    }
    ::unsetenv("KILN_REDUCE_TUNING");
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(reduce_module_test);

}  // namespace
