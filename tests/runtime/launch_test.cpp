// SPDX-License-Identifier: Apache-2.0
// Launches: 1-, 2- and 3-D ranges with and without local range and offset, geometry checks
// before enqueueing, non-multiple and empty sizes, local memory, inf / NaN in kernels, and one
// kernel launched from several threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "support/device_param.hpp"

namespace {

class launches : public kiln::test::device_test {};

const char* source = R"(
// Eight numbers per work-item: global ids, local ids, group id 0, and the work dimension.
kernel void where_am_i(global uint* out) {
    size_t x = get_global_id(0) - get_global_offset(0);
    size_t y = get_global_id(1) - get_global_offset(1);
    size_t z = get_global_id(2) - get_global_offset(2);
    size_t i = 8 * ((z * get_global_size(1) + y) * get_global_size(0) + x);
    out[i + 0] = get_global_id(0);
    out[i + 1] = get_global_id(1);
    out[i + 2] = get_global_id(2);
    out[i + 3] = get_local_id(0);
    out[i + 4] = get_local_id(1);
    out[i + 5] = get_local_id(2);
    out[i + 6] = get_group_id(0);
    out[i + 7] = get_work_dim();
}
kernel void add_one(global int* data, uint n) {
    size_t i = get_global_id(0);
    if (i < n) data[i] += 1;
}
kernel void group_sums(global const int* in, global int* sums, local int* scratch, uint n) {
    size_t g = get_global_id(0), l = get_local_id(0);
    scratch[l] = g < n ? in[g] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
        if (l < stride) scratch[l] += scratch[l + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) sums[get_group_id(0)] = scratch[0];
}
kernel void classify(global const float* in, global float* copy, global int* kind) {
    size_t i = get_global_id(0);
    float x = in[i];
    copy[i] = x;
    kind[i] = isnan(x) ? 1 : isinf(x) ? (x > 0.0f ? 2 : 3) : 0;
}
kernel void make_specials(global float* out, float zero) {
    out[0] = 1.0f / zero;
    out[1] = -1.0f / zero;
    out[2] = zero / zero;
    out[3] = sqrt(zero - 1.0f);
    out[4] = exp(1000.0f + zero);
}
)";

struct case_3d {
    kiln::range global, local, offset;
};

void check_ids(const std::vector<unsigned>& out, const case_3d& c) {
    const std::size_t dims = c.global.dims();
    for (std::size_t z = 0; z < c.global[2]; ++z)
        for (std::size_t y = 0; y < c.global[1]; ++y)
            for (std::size_t x = 0; x < c.global[0]; ++x) {
                const std::size_t at[3] = {x, y, z};
                const std::size_t i = 8 * ((z * c.global[1] + y) * c.global[0] + x);
                for (std::size_t d = 0; d < 3; ++d) {
                    const std::size_t offset = c.offset.empty() || d >= dims ? 0 : c.offset[d];
                    ASSERT_EQ(out[i + d], at[d] + offset)
                        << "global id " << d << " of item " << x << "," << y << "," << z;
                    if (!c.local.empty()) {
                        ASSERT_EQ(out[i + 3 + d], at[d] % c.local[d]) << "local id " << d;
                    }
                }
                if (!c.local.empty()) {
                    ASSERT_EQ(out[i + 6], x / c.local[0]);
                }
                ASSERT_EQ(out[i + 7], dims);
            }
}

TEST_P(launches, cover_one_two_and_three_dimensions) {
    kiln::program prog(device(), source);
    auto where_am_i = prog.kernel("where_am_i");
    kiln::queue q(device());
    const std::vector<case_3d> cases = {
        {{37}, {}, {}},
        {{40}, {8}, {}},
        {{40}, {8}, {5}},
        {{37}, {}, {1000}},
        {{6, 10}, {}, {}},
        {{8, 12}, {4, 3}, {}},
        {{8, 12}, {4, 3}, {1, 2}},
        {{3, 4, 5}, {}, {}},
        {{4, 6, 2}, {2, 3, 1}, {}},
        {{4, 6, 2}, {2, 3, 1}, {7, 0, 9}},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE("global " + c.global.to_string() + " local " + c.local.to_string() +
                     " offset " + c.offset.to_string());
        kiln::buffer<unsigned> out(q, 8 * c.global.total());
        auto done = where_am_i(out).launch(q, c.global, c.local, c.offset);
        check_ids(out.read(q, done), c);
    }
}

TEST_P(launches, bad_geometry_is_rejected_before_anything_is_enqueued) {
    kiln::program prog(device(), source);
    auto add_one = prog.kernel("add_one");
    kiln::queue q(device());
    const std::size_t n = 64;
    kiln::buffer<int> data(q, std::vector<int>(n, 0));
    auto bound = add_one(data, static_cast<unsigned>(n));
    const auto& p = device().properties();
    const std::size_t kernel_limit = std::min(p.max_work_group_size, add_one.max_work_group_size());
    auto rejects = [&](const kiln::range& global, const kiln::range& local,
                       const kiln::range& offset, const std::string& expected) {
        try {
            (void)bound.launch(q, global, local, offset);
            ADD_FAILURE() << "launched global " << global.to_string() << " local "
                          << local.to_string();
        } catch (const kiln::invalid_argument_error& e) {
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("add_one"), std::string::npos) << e.what();
        }
    };
    rejects({60}, {8}, {}, "does not divide global range {60}");
    rejects({8, 9}, {8, 2}, {}, "(dimension 1)");
    rejects({n}, {0}, {}, "zero extent");
    rejects({n}, {8, 1}, {}, "differ in dimensions");
    rejects({n}, {}, {1, 1}, "differ in dimensions");
    rejects(kiln::range(), {}, {}, "global range is empty");
    const std::size_t too_wide = p.max_work_item_sizes[0] * 2;
    rejects({too_wide}, {too_wide}, {}, "maximum work-item size");
    // Each extent within the per-dimension limits, the product beyond the kernel's limit.
    if (p.max_work_item_sizes[0] >= kernel_limit && p.max_work_item_sizes[1] >= 2)
        rejects({kernel_limit, 2}, {kernel_limit, 2}, {},
                "exceeds this kernel's limit of " + std::to_string(kernel_limit));
    q.finish();
    EXPECT_EQ(data.read(q), std::vector<int>(n, 0)) << "a rejected launch ran anyway";
}

// Ranges whose work-item count or last global id does not fit in size_t, and ranges with more
// work-groups than the backend can count: all are errors, never a wrapped launch or an abort.
TEST_P(launches, ranges_past_size_t_or_the_grid_limits_are_rejected) {
    const std::size_t max = std::numeric_limits<std::size_t>::max();
    const std::size_t two_32 = std::size_t{1} << 32;
    try {
        kiln::range wrapped{two_32, two_32};
        ADD_FAILURE() << "{2^32, 2^32} has " << wrapped.total() << " work-items";
    } catch (const kiln::invalid_argument_error& e) {
        EXPECT_NE(std::string(e.what()).find("size_t overflows"), std::string::npos) << e.what();
    }
    EXPECT_THROW((kiln::range{2, max / 2 + 1}), kiln::invalid_argument_error);
    EXPECT_EQ((kiln::range{0, max, max}).total(), 0u);

    kiln::program prog(device(), source);
    auto add_one = prog.kernel("add_one");
    kiln::queue q(device());
    kiln::buffer<int> data(q, std::vector<int>(64, 0));
    auto bound = add_one(data, 64u);
    auto rejects = [&](const kiln::range& global, const kiln::range& local,
                       const kiln::range& offset, const std::string& expected) {
        try {
            (void)bound.launch(q, global, local, offset);
            ADD_FAILURE() << "launched global " << global.to_string() << " local "
                          << local.to_string() << " offset " << offset.to_string();
        } catch (const kiln::invalid_argument_error& e) {
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
        }
    };
    rejects({2}, {}, {max}, "passes the largest global id");
    rejects({8, 2}, {}, {0, max - 1}, "in dimension 1");
    rejects({std::size_t{1} << 62}, {}, {}, "work-groups");
    rejects({two_32 * 2, 1}, {1, 1}, {}, "work-groups");
    q.finish();
    EXPECT_EQ(data.read(q), std::vector<int>(64, 0)) << "a rejected launch ran anyway";
}

TEST_P(launches, local_memory_beyond_a_work_group_is_rejected) {
    const char* own_array_source = R"(
kernel void with_own_array(global int* out, local int* more) {
    local int own[1024];
    own[get_local_id(0)] = 1;
    more[0] = 2;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = own[0] + more[0];
}
)";
    EXPECT_THROW(kiln::local<double>(std::numeric_limits<std::size_t>::max() / 4),
                 kiln::invalid_argument_error);
    kiln::program prog(device(), own_array_source);
    auto with_own_array = prog.kernel("with_own_array");
    kiln::queue q(device());
    kiln::buffer<int> out(q, std::vector<int>(4, 0));
    auto rejects = [&](std::size_t local_ints) {
        try {
            (void)with_own_array(out, kiln::local<int>(local_ints)).launch(q, {4}, {4});
            ADD_FAILURE() << local_ints << " local ints on top of the kernel's own were launched";
        } catch (const kiln::invalid_argument_error& e) {
            EXPECT_NE(std::string(e.what()).find("bytes a work-group can have"), std::string::npos)
                << e.what();
        }
    };
    // A work-group's local memory; CUDA kernels may opt in to more than static arrays can have.
    const auto& p = device().properties();
    const std::size_t device_ints =
        std::max(p.local_memory_bytes, p.shared_memory_per_block_bytes) / sizeof(int);
    // Twice the limit: a PoCL assertion (abort) before kiln checked it.
    rejects(device_ints * 2);
    rejects(std::numeric_limits<std::size_t>::max() / sizeof(int));
    // Within the limit on its own, past it with the kernel's own array as its driver reports
    // it: 4 KiB from PoCL 3.1 and CUDA; the newer PoCL of an H100 machine reported less.
    const std::size_t own = with_own_array.local_memory_bytes();
    if (device().backend() == kiln::backend_kind::cuda) {
        EXPECT_GE(own, 4096u);
    }
    rejects(device_ints - std::min(device_ints, own / sizeof(int)) + 1);
    auto done = with_own_array(out, kiln::local<int>(4)).launch(q, {4}, {4});
    EXPECT_EQ(out.read(q, done), std::vector<int>(4, 3));
}

TEST_P(launches, sizes_that_are_not_multiples_of_the_group_size) {
    kiln::program prog(device(), source);
    auto add_one = prog.kernel("add_one");
    kiln::queue q(device());
    for (std::size_t n : {1u, 63u, 65u, 1000u}) {
        kiln::buffer<int> data(q, std::vector<int>(n, 41));
        const std::size_t group = 64;
        const std::size_t rounded = (n + group - 1) / group * group;
        auto done = add_one(data, static_cast<unsigned>(n)).launch(q, {rounded}, {group});
        EXPECT_EQ(data.read(q, done), std::vector<int>(n, 42)) << n;
        done = add_one(data, static_cast<unsigned>(n)).launch(q, {n});
        EXPECT_EQ(data.read(q, done), std::vector<int>(n, 43)) << n;
    }
}

TEST_P(launches, an_empty_range_runs_nothing_but_still_orders) {
    kiln::program prog(device(), source);
    kiln::queue q(device());
    kiln::buffer<int> data(q, std::vector<int>(4, 7));
    kiln::buffer<int> empty(q, 0);
    auto filled = data.fill(q, 9);
    auto done = prog.kernel("add_one")(data, 4u).launch(q, {0}, {}, {}, filled);
    done.wait();
    EXPECT_TRUE(filled.done());
    EXPECT_EQ(data.read(q), std::vector<int>(4, 9));
    // An empty buffer is a valid argument for a launch that touches nothing.
    prog.kernel("add_one")(empty, 0u).launch(q, {0, 5}).wait();
}

TEST_P(launches, local_memory_reduction_per_group) {
    kiln::program prog(device(), source);
    kiln::queue q(device());
    const std::size_t n = 1000, group = 64, groups = (n + group - 1) / group;
    std::vector<int> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<int>(i % 17) - 8;
    kiln::buffer<int, kiln::in> in(q, host);
    kiln::buffer<int, kiln::out> sums(q, groups);
    auto done =
        prog.kernel("group_sums")(in, sums, kiln::local<int>(group), static_cast<unsigned>(n))
            .launch(q, {groups * group}, {group});
    auto result = sums.read(q, done);
    for (std::size_t g = 0; g < groups; ++g) {
        int expected = 0;
        for (std::size_t i = g * group; i < std::min(n, (g + 1) * group); ++i) expected += host[i];
        EXPECT_EQ(result[g], expected) << "group " << g;
    }
}

TEST_P(launches, a_kernel_runs_the_group_it_requires) {
    // NVIDIA's OpenCL reports 256 work-items for every kernel (CL_KERNEL_WORK_GROUP_SIZE) and
    // runs more; a kernel's required group is its limit there (opencl_quirks.hpp).
    const std::size_t group = std::min<std::size_t>(512, device().properties().max_work_group_size);
    const std::string required =
        "kernel __attribute__((reqd_work_group_size(" + std::to_string(group) +
        ", 1, 1))) void reversed(global const int* in, global int* out) {\n"
        "    local int staged[" +
        std::to_string(group) +
        "];\n"
        "    const uint t = get_local_id(0);\n"
        "    staged[t] = in[get_global_id(0)];\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    out[get_global_id(0)] = staged[get_local_size(0) - 1 - t];\n"
        "}\n";
    kiln::program prog(device(), required);
    auto reversed = prog.kernel("reversed");
    EXPECT_GE(reversed.max_work_group_size(), group);
    kiln::queue q(device());
    std::vector<int> host(3 * group);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<int>(i);
    kiln::buffer<int> in(q, host), out(q, host.size());
    auto done = reversed(in, out).launch(q, {host.size()}, {group});
    const std::vector<int> result = out.read(q, done);
    for (std::size_t i = 0; i < host.size(); ++i)
        ASSERT_EQ(result[i], host[i / group * group + group - 1 - i % group]) << i;
}

TEST_P(launches, a_required_group_past_the_device_is_no_limit) {
    // A plan's first try at a group (the stencils' 8192) may pass the device's largest; the
    // kernel's limit must not, so that the plan halves the group until it launches. On NVIDIA's
    // OpenCL the required size was taken as the limit, and 8192 failed to launch.
    const std::size_t largest = device().properties().max_work_group_size;
    const std::string too_large = "kernel __attribute__((reqd_work_group_size(" +
                                  std::to_string(8 * largest) +
                                  ", 1, 1))) void too_large(global int* out) {\n"
                                  "    out[get_global_id(0)] = 1;\n"
                                  "}\n";
    kiln::program prog(device(), too_large);
    EXPECT_LE(prog.kernel("too_large").max_work_group_size(), largest);
}

TEST_P(launches, infinities_and_nans_pass_through_kernels) {
    kiln::program prog(device(), source);
    kiln::queue q(device());
    const float inf = std::numeric_limits<float>::infinity(),
                nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> host = {inf,  -inf,  nan,
                                     1.0f, -0.0f, std::numeric_limits<float>::max()};
    kiln::buffer<float, kiln::in> in(q, host);
    kiln::buffer<float, kiln::out> copy(q, host.size());
    kiln::buffer<int, kiln::out> kind(q, host.size());
    auto done = prog.kernel("classify")(in, copy, kind).launch(q, {host.size()});
    EXPECT_EQ(kind.read(q, done), (std::vector<int>{2, 3, 1, 0, 0, 0}));
    auto copied = copy.read(q);
    for (std::size_t i = 0; i < host.size(); ++i) {
        if (std::isnan(host[i]))
            EXPECT_TRUE(std::isnan(copied[i])) << i;
        else
            EXPECT_EQ(std::bit_cast<std::uint32_t>(copied[i]),
                      std::bit_cast<std::uint32_t>(host[i]))
                << i;
    }

    kiln::buffer<float> specials(q, 5);
    done = prog.kernel("make_specials")(specials, 0.0f).launch(q, {1});
    auto made = specials.read(q, done);
    EXPECT_TRUE(std::isinf(made[0]) && made[0] > 0);
    EXPECT_TRUE(std::isinf(made[1]) && made[1] < 0);
    EXPECT_TRUE(std::isnan(made[2]));
    EXPECT_TRUE(std::isnan(made[3]));
    EXPECT_TRUE(std::isinf(made[4]) && made[4] > 0);
}

TEST_P(launches, one_kernel_from_several_threads) {
    kiln::program prog(device(), source);
    auto add_one = prog.kernel("add_one");
    constexpr int threads = 4, rounds = 20;
    const std::size_t n = 256;
    std::vector<std::vector<int>> results(threads);
    std::vector<std::string> errors(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            // An exception must not escape a thread: that would end the whole test program.
            try {
                kiln::queue q(device());  // a queue is used by one thread at a time
                kiln::buffer<int> data(q, std::vector<int>(n, 1000 * t));
                kiln::event last;
                for (int r = 0; r < rounds; ++r)
                    last = add_one(data, static_cast<unsigned>(n)).launch(q, {n}, {}, {}, last);
                results[t] = data.read(q, last);
            } catch (const std::exception& e) {
                errors[t] = e.what();
            }
        });
    }
    for (auto& w : workers) w.join();
    for (int t = 0; t < threads; ++t) {
        EXPECT_EQ(errors[t], "") << "thread " << t;
        EXPECT_EQ(results[t], std::vector<int>(n, 1000 * t + rounds)) << "thread " << t;
    }
}

// A scalar argument keeps up to 16 bytes in itself and a larger one (a tile map's 128) in an
// allocation of its own (kernel_argument::inline_value_bytes): values at, just past and far past
// that size reach the kernel whole, from a bound kernel and from its copy.
TEST_P(launches, scalars_of_every_size_reach_the_kernel_whole) {
    const char* spread_source = R"(
typedef struct { uint values[6]; } uint6_t;
typedef struct { float values[32]; } wide_t;
kernel void spread(global float* out, float4 small, uint6_t middle, wide_t large) {
    out[0] = small.x;
    out[1] = small.y;
    out[2] = small.z;
    out[3] = small.w;
    for (int i = 0; i < 6; ++i) out[4 + i] = (float)middle.values[i];
    for (int i = 0; i < 32; ++i) out[10 + i] = large.values[i];
}
)";
    struct uint6 {
        std::uint32_t values[6];
    };
    struct wide {
        float values[32];
    };
    kiln::program prog(device(), spread_source);
    kiln::queue q(device());
    const kiln::float4 small{1.5f, -2.5f, 3.5f, -4.5f};
    uint6 middle{};
    wide large{};
    std::vector<float> expected{small[0], small[1], small[2], small[3]};
    for (std::uint32_t i = 0; i < 6; ++i) {
        middle.values[i] = 100 + i;
        expected.push_back(static_cast<float>(100 + i));
    }
    for (int i = 0; i < 32; ++i) {
        large.values[i] = 0.25f * static_cast<float>(i) - 3.0f;
        expected.push_back(large.values[i]);
    }
    kiln::buffer<float> out(q, expected.size());
    const kiln::bound_kernel bound = prog.kernel("spread")(out, small, middle, large);
    EXPECT_EQ(out.read(q, bound.launch(q, {1})), expected);
    const kiln::bound_kernel copy = bound;
    kiln::buffer<float> zeros(q, std::vector<float>(expected.size(), 0.0f));
    zeros.copy_to(q, out);
    EXPECT_EQ(out.read(q, copy.launch(q, {1})), expected);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(launches);

}  // namespace
