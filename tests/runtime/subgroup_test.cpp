// SPDX-License-Identifier: Apache-2.0
// Sub-group and work-group collective functions on every device: each one against a host
// computation, with full and partial sub-groups and work-groups, for int, uint, long, ulong,
// float and double; where a device lacks them, the named build error before the driver compile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <kiln/detail/subgroup_support.hpp>
#include <kiln/kiln.hpp>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "support/device_param.hpp"

namespace {

class subgroups : public kiln::test::device_test {};

// The sub-group kernel in parts, one per extension, so that a device runs the families it has
// natively and each one it lacks gives its own named error.
const char* sub_group_core = R"(
kernel void sub_group_ops(global const T* in, global T* out, global int* ids) {
    size_t i = get_global_id(0);
    T x = in[i];
    uint size = get_sub_group_size();
    uint lane = get_sub_group_local_id();
    global T* o = out + 14 * i;
    global int* d = ids + 12 * i;
    o[0] = sub_group_reduce_add(x);
    o[1] = sub_group_reduce_min(x);
    o[2] = sub_group_reduce_max(x);
    o[3] = sub_group_scan_inclusive_add(x);
    o[4] = sub_group_scan_inclusive_min(x);
    o[5] = sub_group_scan_inclusive_max(x);
    o[6] = sub_group_scan_exclusive_add(x);
    o[7] = sub_group_scan_exclusive_min(x);
    o[8] = sub_group_scan_exclusive_max(x);
    o[9] = sub_group_broadcast(x, size - 1);
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    d[0] = size;
    d[1] = lane;
    d[2] = get_sub_group_id();
    d[3] = get_max_sub_group_size();
    d[4] = get_num_sub_groups();
    d[5] = get_group_id(0);
    d[6] = get_local_id(0);
    d[7] = sub_group_any(x == (T)7);
    d[8] = sub_group_all(x != (T)7);
    d[11] = get_local_size(0);
)";
const char* sub_group_ballot_part = R"(
    uint4 odd = sub_group_ballot(((int)x & 1) == 1);
    d[9] = sub_group_ballot_bit_count(odd);
    d[10] = sub_group_ballot_exclusive_scan(odd);
)";
const char* sub_group_shuffle_part = R"(
    o[10] = sub_group_shuffle(x, size - 1 - lane);
    o[11] = sub_group_shuffle_xor(x, 1);
)";
const char* sub_group_relative_part = R"(
    o[12] = sub_group_shuffle_up(x, 1);
    o[13] = sub_group_shuffle_down(x, 1);
)";

/// Which optional parts a sub-group kernel holds; the core part is always there.
struct sub_group_parts {
    bool ballot = false, shuffle = false, relative = false;
};

std::string sub_group_source(sub_group_parts parts) {
    return std::string(sub_group_core) + (parts.ballot ? sub_group_ballot_part : "") +
           (parts.shuffle ? sub_group_shuffle_part : "") +
           (parts.relative ? sub_group_relative_part : "") + "}\n";
}

const char* work_group_source = R"(
kernel void work_group_ops(global const T* in, global T* out, global int* ids) {
    size_t i = get_global_id(0);
    T x = in[i];
    global T* o = out + 10 * i;
    o[0] = work_group_reduce_add(x);
    o[1] = work_group_reduce_min(x);
    o[2] = work_group_reduce_max(x);
    o[3] = work_group_scan_inclusive_add(x);
    o[4] = work_group_scan_inclusive_min(x);
    o[5] = work_group_scan_inclusive_max(x);
    o[6] = work_group_scan_exclusive_add(x);
    o[7] = work_group_scan_exclusive_min(x);
    o[8] = work_group_scan_exclusive_max(x);
    o[9] = work_group_broadcast(x, get_local_size(0) - 1);
    global int* d = ids + 4 * i;
    d[0] = get_group_id(0);
    d[1] = get_local_id(0);
    d[2] = work_group_any(x == (T)7);
    d[3] = work_group_all(x != (T)7);
}
)";

template <class T>
std::string program_text(const char* type_name, const std::string& body) {
    std::string text =
        std::is_same_v<T, double> ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "";
    return text + "typedef " + type_name + " T;\n" + body;
}

/// Small whole numbers, so that float sums are exact in any order; 7 appears now and then.
template <class T>
std::vector<T> inputs(std::size_t n) {
    std::vector<T> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = T((i * 37 + 11) % 23 + 1);
    return values;
}

struct launch_case {
    std::size_t global, local;  // local 0: the backend chooses (partial groups under CUDA)
};
const launch_case cases[] = {{256, 64}, {144, 48}, {21, 7}, {100, 0}, {1000, 0}};

/// Inclusive (or exclusive) scans of `values` with `op` from `identity`.
template <class T, class Op>
std::vector<T> scan(const std::vector<T>& values, Op op, T identity, bool inclusive) {
    std::vector<T> out;
    T running = identity;
    for (T v : values) {
        if (!inclusive) out.push_back(running);
        running = op(running, v);
        if (inclusive) out.push_back(running);
    }
    return out;
}

template <class T>
void expect_collectives(const std::vector<T>& x, const std::vector<std::vector<T>>& results,
                        std::size_t first_result, const std::string& where) {
    const auto add = [](T a, T b) { return T(a + b); };
    const auto mn = [](T a, T b) { return std::min(a, b); };
    const auto mx = [](T a, T b) { return std::max(a, b); };
    const T hi = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                      : std::numeric_limits<T>::max();
    const T lo = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                      : std::numeric_limits<T>::lowest();
    const std::vector<std::vector<T>> expected{
        std::vector<T>(x.size(), scan(x, add, T(0), true).back()),
        std::vector<T>(x.size(), scan(x, mn, hi, true).back()),
        std::vector<T>(x.size(), scan(x, mx, lo, true).back()),
        scan(x, add, T(0), true),
        scan(x, mn, hi, true),
        scan(x, mx, lo, true),
        scan(x, add, T(0), false),
        scan(x, mn, hi, false),
        scan(x, mx, lo, false)};
    const char* names[] = {"reduce_add",         "reduce_min",         "reduce_max",
                           "scan_inclusive_add", "scan_inclusive_min", "scan_inclusive_max",
                           "scan_exclusive_add", "scan_exclusive_min", "scan_exclusive_max"};
    for (std::size_t k = 0; k < expected.size(); ++k)
        EXPECT_EQ(results[first_result + k], expected[k]) << names[k] << " " << where;
}

template <class T>
void check_sub_groups(const kiln::device& dev, const char* type_name, sub_group_parts parts) {
    kiln::program prog(dev, program_text<T>(type_name, sub_group_source(parts)));
    kiln::queue q(dev);
    for (const auto& c : cases) {
        const auto in = inputs<T>(c.global);
        kiln::buffer<T> input(q, in);
        kiln::buffer<T> out(q, 14 * c.global);
        kiln::buffer<int> ids(q, 12 * c.global);
        auto bound = prog.kernel("sub_group_ops")(input, out, ids);
        auto done = c.local ? bound.launch(q, {c.global}, {c.local}) : bound.launch(q, {c.global});
        const auto o = out.read(q, done);
        const auto d = ids.read(q);
        const std::string where = std::string(type_name) + ", global " + std::to_string(c.global) +
                                  ", local " + std::to_string(c.local);

        // Work-items by (group, sub-group), then in lane order.
        std::map<std::pair<int, int>, std::vector<std::size_t>> members;
        for (std::size_t i = 0; i < c.global; ++i)
            members[{d[12 * i + 5], d[12 * i + 2]}].push_back(i);
        for (auto& [key, items] : members) {
            std::sort(items.begin(), items.end(),
                      [&](std::size_t a, std::size_t b) { return d[12 * a + 1] < d[12 * b + 1]; });
            const std::size_t size = items.size();
            const std::size_t first = items.front();
            const int max_size = d[12 * first + 3];
            const int local_size = d[12 * first + 11];
            const std::string here = where + ", group " + std::to_string(key.first) +
                                     ", sub-group " + std::to_string(key.second);
            std::vector<T> x;
            for (auto i : items) x.push_back(in[i]);
            std::vector<std::vector<T>> results(14);
            bool any7 = false;
            int odd_count = 0;
            for (auto v : x) any7 = any7 || v == T(7);
            for (auto v : x) odd_count += (static_cast<int>(v) & 1) == 1;
            for (std::size_t l = 0; l < size; ++l) {
                const std::size_t i = items[l];
                const int* id = &d[12 * i];
                EXPECT_EQ(id[0], int(size)) << "get_sub_group_size " << here;
                EXPECT_EQ(id[1], int(l)) << "get_sub_group_local_id " << here;
                EXPECT_EQ(id[2] * max_size + id[1], id[6]) << "sub-group layout " << here;
                EXPECT_EQ(id[4], (local_size + max_size - 1) / max_size)
                    << "get_num_sub_groups " << here;
                EXPECT_EQ(id[7], any7 ? 1 : 0) << "sub_group_any " << here;
                EXPECT_EQ(id[8], any7 ? 0 : 1) << "sub_group_all " << here;
                if (parts.ballot) {
                    EXPECT_EQ(id[9], odd_count) << "sub_group_ballot_bit_count " << here;
                }
                int odd_before = 0;
                for (std::size_t k = 0; k < l; ++k) odd_before += (static_cast<int>(x[k]) & 1) == 1;
                if (parts.ballot) {
                    EXPECT_EQ(id[10], odd_before) << "sub_group_ballot_exclusive_scan " << here;
                }
                for (std::size_t k = 0; k < 14; ++k) results[k].push_back(o[14 * i + k]);
            }
            expect_collectives(x, results, 0, here);
            for (std::size_t l = 0; l < size; ++l) {
                EXPECT_EQ(results[9][l], x[size - 1]) << "sub_group_broadcast " << here;
                if (parts.shuffle) {
                    EXPECT_EQ(results[10][l], x[size - 1 - l]) << "sub_group_shuffle " << here;
                }
                // A source outside the sub-group is undefined in OpenCL: only those inside count.
                if (parts.shuffle && (l ^ 1) < size) {
                    EXPECT_EQ(results[11][l], x[l ^ 1]) << "sub_group_shuffle_xor " << here;
                }
                if (parts.relative && l >= 1) {
                    EXPECT_EQ(results[12][l], x[l - 1]) << "sub_group_shuffle_up " << here;
                }
                if (parts.relative && l + 1 < size) {
                    EXPECT_EQ(results[13][l], x[l + 1]) << "sub_group_shuffle_down " << here;
                }
            }
        }
    }
}

template <class T>
void check_work_groups(const kiln::device& dev, const char* type_name) {
    kiln::program prog(dev, program_text<T>(type_name, work_group_source));
    kiln::queue q(dev);
    for (const auto& c : cases) {
        const auto in = inputs<T>(c.global);
        kiln::buffer<T> input(q, in);
        kiln::buffer<T> out(q, 10 * c.global);
        kiln::buffer<int> ids(q, 4 * c.global);
        auto bound = prog.kernel("work_group_ops")(input, out, ids);
        auto done = c.local ? bound.launch(q, {c.global}, {c.local}) : bound.launch(q, {c.global});
        const auto o = out.read(q, done);
        const auto d = ids.read(q);
        const std::string where = std::string(type_name) + ", global " + std::to_string(c.global) +
                                  ", local " + std::to_string(c.local);
        std::map<int, std::vector<std::size_t>> groups;
        for (std::size_t i = 0; i < c.global; ++i) groups[d[4 * i]].push_back(i);
        for (auto& [group, items] : groups) {
            std::sort(items.begin(), items.end(),
                      [&](std::size_t a, std::size_t b) { return d[4 * a + 1] < d[4 * b + 1]; });
            const std::string here = where + ", group " + std::to_string(group);
            std::vector<T> x;
            for (auto i : items) x.push_back(in[i]);
            const bool any7 = std::find(x.begin(), x.end(), T(7)) != x.end();
            std::vector<std::vector<T>> results(10);
            for (auto i : items) {
                for (std::size_t k = 0; k < 10; ++k) results[k].push_back(o[10 * i + k]);
                EXPECT_EQ(d[4 * i + 2], any7 ? 1 : 0) << "work_group_any " << here;
                EXPECT_EQ(d[4 * i + 3], any7 ? 0 : 1) << "work_group_all " << here;
            }
            expect_collectives(x, results, 0, here);
            EXPECT_EQ(results[9], std::vector<T>(x.size(), x.back()))
                << "work_group_broadcast " << here;
        }
    }
}

/// Runs `check` for each type, or, where the device lacks what the source needs, expects the
/// named build error saying so.
template <class Check>
void for_each_type(const kiln::device& dev, bool supported, const std::string& source,
                   const std::string& missing, Check check) {
    if (!supported) {
        try {
            kiln::program prog(dev, program_text<int>("int", source));
            ADD_FAILURE() << dev.name() << " built a program it lacks the functions for";
        } catch (const kiln::build_error& e) {
            EXPECT_EQ(e.code_name(), "KILN_KERNEL_FEATURE_UNSUPPORTED");
            EXPECT_NE(e.log().find(dev.name()), std::string::npos) << e.log();
            EXPECT_NE(e.log().find(missing), std::string::npos) << e.log();
        }
        return;
    }
    check.template operator()<int>("int");
    check.template operator()<unsigned>("uint");
    check.template operator()<std::int64_t>("long");
    check.template operator()<std::uint64_t>("ulong");
    check.template operator()<float>("float");
    if (dev.properties().double_precision) check.template operator()<double>("double");
}

TEST_P(subgroups, properties_and_the_support_query_agree) {
    const auto& p = device().properties();
    const auto support = kiln::detail::subgroup_support(device());
    EXPECT_EQ(support.size, p.sub_group_size);
    EXPECT_EQ(support.native_work_group_collectives, p.work_group_collectives);
    EXPECT_EQ(support.core, p.has_extension("cl_khr_subgroups"));
    if (device().backend() == kiln::backend_kind::cuda) {
        EXPECT_EQ(p.sub_group_size, 32u);
        EXPECT_TRUE(support.core && support.ballot && support.shuffle && support.shuffle_relative &&
                    support.native_work_group_collectives);
    }
    EXPECT_NE(device().summary().find("sub-group size: " + std::to_string(p.sub_group_size)),
              std::string::npos);
    EXPECT_NE(device().to_json().find("\"sub_group_size\": " + std::to_string(p.sub_group_size)),
              std::string::npos);
}

TEST_P(subgroups, every_sub_group_function_matches_the_host) {
    const auto support = kiln::detail::subgroup_support(device());
    const sub_group_parts parts{support.ballot, support.shuffle, support.shuffle_relative};
    for_each_type(device(), support.core, sub_group_source(parts), "cl_khr_subgroups",
                  [&]<class T>(const char* name) { check_sub_groups<T>(device(), name, parts); });
}

// Each extension the device lacks gives its own named error, even where it has the others.
TEST_P(subgroups, each_missing_extension_is_named) {
    const auto support = kiln::detail::subgroup_support(device());
    if (!support.core) GTEST_SKIP() << "no sub-groups at all: the test above expects that error";
    const std::pair<bool, sub_group_parts> families[] = {
        {support.ballot, {true, false, false}},
        {support.shuffle, {false, true, false}},
        {support.shuffle_relative, {false, false, true}}};
    const char* names[] = {"cl_khr_subgroup_ballot", "cl_khr_subgroup_shuffle",
                           "cl_khr_subgroup_shuffle_relative"};
    for (std::size_t f = 0; f < 3; ++f) {
        if (families[f].first) continue;
        for_each_type(device(), false, sub_group_source(families[f].second), names[f],
                      [&]<class T>(const char*) {});
    }
}

// Natively where the device has them, else through kiln's local-memory helper.
TEST_P(subgroups, every_work_group_collective_matches_the_host) {
    ASSERT_TRUE(kiln::detail::subgroup_support(device()).work_group_collectives);
    for_each_type(device(), true, work_group_source, "",
                  [&]<class T>(const char* name) { check_work_groups<T>(device(), name); });
}

TEST_P(subgroups, the_error_names_the_call_and_its_line) {
    if (kiln::detail::subgroup_support(device()).core) GTEST_SKIP() << "has sub-groups";
    // A name in a comment or a string is no call; the first real one is on line 4.
    const char* source = R"(// sub_group_reduce_add(x) in a comment
kernel void k(global int* v) {
    /* get_sub_group_size() */ const char* s = "sub_group_any(";
    v[0] = sub_group_reduce_max (v[1]);
})";
    try {
        kiln::program prog(device(), source);
        ADD_FAILURE() << "built";
    } catch (const kiln::build_error& e) {
        EXPECT_NE(e.log().find("sub_group_reduce_max (source 1, line 4) needs cl_khr_subgroups"),
                  std::string::npos)
            << e.log();
        EXPECT_EQ(e.log().find("sub_group_any"), std::string::npos) << e.log();
        EXPECT_EQ(e.log().find("get_sub_group_size"), std::string::npos) << e.log();
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(subgroups);

}  // namespace
