// SPDX-License-Identifier: Apache-2.0
// copy_if over vectors that its input and its stencil both read: the kernel takes each such vector
// once and reads it through one name (src/algo/scan/copy_if.cpp), and kernels of the same node
// types that share other vectors are told apart, or the second would read the first's vectors.
#include <gtest/gtest.h>

#include <cstdint>
#include <kiln/algorithm.hpp>
#include <kiln/kiln.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "algo/dispatch_paths.hpp"
#include "expr/test_data.hpp"
#include "runtime/test_helpers.hpp"
#include "support/device_param.hpp"

namespace {

using kiln::test::random_values;

/// Spans several tiles and chunks on every device's rows and the tests' chunks.
constexpr std::size_t n = 20011;
/// The stencils' threshold, passed as a kernel argument.
constexpr std::int32_t t = 5;

/// Expects copy_if's `kept` elements in `out` to be the elements of `values` whose flag is set.
void expect_kept(std::size_t kept, const kiln::vector<std::int32_t>& out,
                 const std::vector<std::int32_t>& values, const std::vector<bool>& flags) {
    std::vector<std::int32_t> expected;
    for (std::size_t i = 0; i < values.size(); ++i)
        if (flags[i]) expected.push_back(values[i]);
    ASSERT_EQ(kept, expected.size());
    auto got = out.read();
    got.resize(kept);
    EXPECT_EQ(got, expected);
}

template <class Flag>
std::vector<bool> flags_of(std::size_t count, Flag flag) {
    std::vector<bool> flags(count);
    for (std::size_t i = 0; i < count; ++i) flags[i] = flag(i);
    return flags;
}

/// The `global const int*` parameters of each kernel of a printed program, and its lines that
/// declare such a pointer as another name for one.
struct int_pointers {
    std::vector<std::vector<std::string>> parameters;
    std::vector<std::string> aliases;
};
int_pointers int_pointers_of(const std::string& printed) {
    int_pointers found;
    std::istringstream lines(printed);
    for (std::string line; std::getline(lines, line);) {
        line.erase(0, line.find_first_not_of(' '));
        if (line.starts_with("kernel ")) found.parameters.emplace_back();
        if (!line.starts_with("global const int* ") || found.parameters.empty()) continue;
        if (line.find(" = ") != std::string::npos)
            found.aliases.push_back(line);
        else
            found.parameters.back().push_back(line);
    }
    return found;
}

class copy_if_shared_vectors : public kiln::test::device_queue_test {
  protected:
    /// What these tests check is what the kernels read: each write form once.
    template <class Body>
    void on_each_write_form_once(Body&& body) {
        kiln::test::on_every_compaction_path(device(), body,
                                             kiln::test::dispatch_paths::one_per_form);
    }

    const std::vector<std::int32_t> hx = random_values<std::int32_t>(n, -100, 100, 1);
    const std::vector<std::int32_t> hz = random_values<std::int32_t>(n, -100, 100, 2);
    kiln::vector<std::int32_t> x{q, hx}, z{q, hz}, out{q, n};
};

// The case of docs/algorithms.md's Performance section, without kiln::tag: x in both.
TEST_P(copy_if_shared_vectors, the_kernels_take_a_vector_read_twice_once) {
    on_each_write_form_once([&] {
        // Generated and compiled again, so that KILN_SHOW_KERNELS prints it.
        kiln::detail::clear_algorithm_programs();
        kiln::program_cache::clear_memory();
        const kiln::test::scoped_env show("KILN_SHOW_KERNELS", "1");
        testing::internal::CaptureStderr();
        const std::size_t kept = kiln::copy_if(x, (x & 1) == 0, out);
        const std::string printed = testing::internal::GetCapturedStderr();
        expect_kept(kept, out, hx, flags_of(n, [&](std::size_t i) { return (hx[i] & 1) == 0; }));

        const int_pointers pointers = int_pointers_of(printed);
        std::size_t reading = 0;
        for (const auto& parameters : pointers.parameters) {
            EXPECT_LE(parameters.size(), 1u) << printed;
            reading += parameters.size();
        }
        EXPECT_GT(reading, 0u) << printed;
        // Each kernel that reads x names it a second time, for the input's reads.
        EXPECT_EQ(pointers.aliases.size(), reading) << printed;
    });
}

// One process, the same node types: only which arguments share a vector tells the kernels apart.
TEST_P(copy_if_shared_vectors, kernels_differ_by_the_vectors_their_arguments_share) {
    on_each_write_form_once([&] {
        expect_kept(kiln::copy_if(x, x > t, out), out, hx,
                    flags_of(n, [&](std::size_t i) { return hx[i] > t; }));
        expect_kept(kiln::copy_if(x, z > t, out), out, hx,
                    flags_of(n, [&](std::size_t i) { return hz[i] > t; }));
        expect_kept(kiln::copy_if(z, x > t, out), out, hz,
                    flags_of(n, [&](std::size_t i) { return hx[i] > t; }));
        expect_kept(kiln::copy_if(z, z > t, out), out, hz,
                    flags_of(n, [&](std::size_t i) { return hz[i] > t; }));
    });
}

TEST_P(copy_if_shared_vectors, a_vector_read_three_times_and_beside_others) {
    on_each_write_form_once([&] {
        expect_kept(kiln::copy_if(x, x * x > 50 * x, out), out, hx,
                    flags_of(n, [&](std::size_t i) { return hx[i] * hx[i] > 50 * hx[i]; }));
        std::vector<std::int32_t> difference(n);
        for (std::size_t i = 0; i < n; ++i) difference[i] = hx[i] - hz[i];
        expect_kept(kiln::copy_if(x - z, z < x + t, out), out, difference,
                    flags_of(n, [&](std::size_t i) { return hz[i] < hx[i] + t; }));
    });
}

// A tagged x is one parameter; the untagged x beside it is another name for it.
TEST_P(copy_if_shared_vectors, a_tagged_vector_beside_itself_untagged) {
    on_each_write_form_once([&] {
        const auto tx = kiln::tag<1>(x);
        expect_kept(kiln::copy_if(tx, x % 3 == tx % 2, out), out, hx,
                    flags_of(n, [&](std::size_t i) { return hx[i] % 3 == hx[i] % 2; }));
        expect_kept(kiln::copy_if(x, tx > z, out), out, hx,
                    flags_of(n, [&](std::size_t i) { return hx[i] > hz[i]; }));
    });
}

// In place, the stencil reading the output beside another vector: the kept elements go through
// scratch, the input's reads through one name.
TEST_P(copy_if_shared_vectors, into_the_vector_both_read) {
    on_each_write_form_once([&] {
        x.write(hx);
        const std::size_t kept = kiln::copy_if(x, x > z, x);
        std::vector<std::int32_t> expected = hx;
        std::size_t at = 0;
        for (std::size_t i = 0; i < n; ++i)
            if (hx[i] > hz[i]) expected[at++] = hx[i];
        ASSERT_EQ(kept, at);
        EXPECT_EQ(x.read(), expected);
    });
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(copy_if_shared_vectors);

class copy_if_shared_vectors_split : public kiln::test::two_parts_test {};

// Each part's arguments take each vector once, as its kernel declares them.
TEST_F(copy_if_shared_vectors_split, each_part_takes_each_vector_once) {
    const auto hx = random_values<std::int32_t>(n, -100, 100, 3);
    const auto hz = random_values<std::int32_t>(n, -100, 100, 4);
    kiln::vector<std::int32_t> x(queues, hx), z(queues, hz), out(queues, n);
    ASSERT_EQ(x.part_count(), 2u);
    expect_kept(kiln::copy_if(x, x > t, out), out, hx,
                flags_of(n, [&](std::size_t i) { return hx[i] > t; }));
    expect_kept(kiln::copy_if(x, z > t, out), out, hx,
                flags_of(n, [&](std::size_t i) { return hz[i] > t; }));
    expect_kept(kiln::copy_if(x, x * x > 50 * x, out), out, hx,
                flags_of(n, [&](std::size_t i) { return hx[i] * hx[i] > 50 * hx[i]; }));
}

}  // namespace
