// SPDX-License-Identifier: Apache-2.0
// Errors and ownership: the exception types and what they carry, real API failures, and the
// RAII handle template's retain / release bookkeeping.
#include <gtest/gtest.h>

#include <algorithm>
#include <kiln/detail/handle.hpp>
#include <kiln/kiln.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/device_param.hpp"

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// --- the exception types ------------------------------------------------------------------

static_assert(std::is_base_of_v<std::runtime_error, kiln::error>);
static_assert(std::is_base_of_v<kiln::error, kiln::build_error>);
static_assert(std::is_base_of_v<kiln::error, kiln::out_of_memory_error>);
static_assert(std::is_base_of_v<kiln::error, kiln::invalid_argument_error>);
static_assert(std::is_base_of_v<kiln::error, kiln::sticky_device_error>);
// Destructors never throw.
static_assert(std::is_nothrow_destructible_v<kiln::queue> &&
              std::is_nothrow_destructible_v<kiln::program> &&
              std::is_nothrow_destructible_v<kiln::event> &&
              std::is_nothrow_destructible_v<kiln::kernel> &&
              std::is_nothrow_destructible_v<kiln::single<int>>);

TEST(error_types, carry_the_call_the_code_and_its_name) {
    kiln::error e("clFrobnicate", -30, "CL_INVALID_VALUE", "while testing");
    EXPECT_EQ(e.call(), "clFrobnicate");
    EXPECT_EQ(e.code(), -30);
    EXPECT_EQ(e.code_name(), "CL_INVALID_VALUE");
    EXPECT_STREQ(e.what(), "clFrobnicate failed: CL_INVALID_VALUE (-30): while testing");
    EXPECT_TRUE(contains(e.where().file_name(), "errors_test.cpp")) << e.where().file_name();

    kiln::invalid_argument_error bad("kiln::thing", "is wrong");
    EXPECT_EQ(bad.code(), 0);
    EXPECT_EQ(bad.code_name(), "KILN_INVALID_ARGUMENT");
    EXPECT_STREQ(bad.what(), "kiln::thing failed: KILN_INVALID_ARGUMENT: is wrong");

    kiln::build_error build("clBuildProgram", -11, "CL_BUILD_PROGRAM_FAILURE", "line 3: oops");
    EXPECT_EQ(build.log(), "line 3: oops");
    EXPECT_TRUE(contains(build.what(), "CL_BUILD_PROGRAM_FAILURE"));
    EXPECT_TRUE(contains(build.what(), "line 3: oops"));

    kiln::out_of_memory_error oom("clCreateBuffer", -4, "CL_MEM_OBJECT_ALLOCATION_FAILURE",
                                  3ull << 30, 1ull << 30, 4ull << 30, "Some Device");
    EXPECT_EQ(oom.requested_bytes(), 3ull << 30);
    EXPECT_EQ(oom.max_allocation_bytes(), 1ull << 30);
    EXPECT_EQ(oom.global_memory_bytes(), 4ull << 30);
    for (const char* part :
         {"3221225472 bytes (3.0 GiB)", "1073741824 bytes (1.0 GiB)", "4.0 GiB", "Some Device"})
        EXPECT_TRUE(contains(oom.what(), part)) << oom.what();
}

class api_errors : public kiln::test::device_test {};

TEST_P(api_errors, name_the_failing_call_and_the_symbolic_code) {
    kiln::program prog(device(), "kernel void only_kernel(global int* x) { x[0] = 1; }");
    try {
        (void)prog.kernel("missing");
        FAIL();
    } catch (const kiln::error& e) {
        EXPECT_FALSE(e.call().empty());
        EXPECT_NE(e.code(), 0);
        EXPECT_FALSE(e.code_name().empty());
        EXPECT_TRUE(contains(e.what(), e.call() + " failed: " + e.code_name())) << e.what();
        if (device().backend() == kiln::backend_kind::opencl) {
            EXPECT_EQ(e.call(), "clCreateKernel");
            EXPECT_EQ(e.code(), -46);
            EXPECT_EQ(e.code_name(), "CL_INVALID_KERNEL_NAME");
        }
    }
    try {
        kiln::program(device(), "kernel void k(global int* x) { x[0] = ; }");
        FAIL();
    } catch (const kiln::build_error& e) {
        if (device().backend() == kiln::backend_kind::opencl) {
            EXPECT_EQ(e.code(), -11);
            EXPECT_EQ(e.code_name(), "CL_BUILD_PROGRAM_FAILURE");
        }
        // Caught as the base class and as std::runtime_error alike: one error path.
        const std::runtime_error& base = e;
        EXPECT_TRUE(contains(base.what(), e.log()));
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(api_errors);

// --- the RAII handle ----------------------------------------------------------------------

/// Counts what kiln::detail::handle does to fake raw handles (small ints, 0 is null).
struct counting_traits {
    using value_type = int;
    static inline std::vector<int> retained, released;
    static constexpr int null() noexcept { return 0; }
    static void retain(int h) noexcept { retained.push_back(h); }
    static void release(int h) noexcept { released.push_back(h); }
    static void reset_counts() {
        retained.clear();
        released.clear();
    }
};
using counted = kiln::detail::handle<counting_traits>;

/// A handle type without retain(): ownership can move but never be shared.
struct unique_traits {
    using value_type = int;
    static constexpr int null() noexcept { return 0; }
    static void release(int) noexcept {}
};

static_assert(std::is_copy_constructible_v<counted> &&
              std::is_nothrow_move_constructible_v<counted>);
static_assert(!std::is_copy_constructible_v<kiln::detail::handle<unique_traits>>);
static_assert(std::is_nothrow_move_assignable_v<kiln::detail::handle<unique_traits>>);
static_assert(std::is_nothrow_destructible_v<counted>);

class handles : public testing::Test {
  protected:
    void SetUp() override { counting_traits::reset_counts(); }
    using ints = std::vector<int>;
};

TEST_F(handles, destruction_releases_exactly_once) {
    { counted h(7); }
    EXPECT_EQ(counting_traits::released, ints{7});
    EXPECT_TRUE(counting_traits::retained.empty());
    { counted empty; }
    EXPECT_EQ(counting_traits::released, ints{7}) << "a null handle releases nothing";
}

TEST_F(handles, moves_null_the_source_and_never_touch_the_count) {
    {
        counted a(3);
        counted b(std::move(a));
        EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): that is the point
        EXPECT_EQ(a.get(), 0);
        EXPECT_EQ(b.get(), 3);
        counted c(9);
        c = std::move(b);  // releases 9, takes 3
        EXPECT_EQ(counting_traits::released, ints{9});
        EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move)
        EXPECT_EQ(c.get(), 3);
    }
    EXPECT_EQ(counting_traits::released, (ints{9, 3}));
    EXPECT_TRUE(counting_traits::retained.empty());
}

TEST_F(handles, copies_retain_and_each_copy_releases) {
    {
        counted a(5);
        counted b(a);
        EXPECT_EQ(counting_traits::retained, ints{5});
        EXPECT_EQ(b.get(), 5);
        counted c(8);
        c = a;  // retains 5, releases 8
        EXPECT_EQ(counting_traits::retained, (ints{5, 5}));
        EXPECT_EQ(counting_traits::released, ints{8});
        const counted& same = c;
        c = same;  // self-assignment: one retain, one release, nothing lost
        EXPECT_EQ(c.get(), 5);
        EXPECT_EQ(counting_traits::retained, (ints{5, 5, 5}));
        EXPECT_EQ(counting_traits::released, (ints{8, 5}));
        counted empty;
        counted copy_of_empty(empty);
        EXPECT_EQ(counting_traits::retained.size(), 3u) << "copying a null handle retains nothing";
    }
    // Every retain is matched by a release, plus the release of the reference `a` started with.
    EXPECT_EQ(counting_traits::released, (ints{8, 5, 5, 5, 5}));
}

TEST_F(handles, release_gives_up_ownership_and_reset_releases_now) {
    counted a(4);
    EXPECT_EQ(a.release(), 4);
    EXPECT_FALSE(a);
    counted b(6);
    b.reset();
    EXPECT_FALSE(b);
    EXPECT_EQ(counting_traits::released, ints{6});
    b.reset();
    EXPECT_EQ(counting_traits::released, ints{6}) << "resetting a null handle does nothing";
    counted x(1), y(2);
    x.swap(y);
    EXPECT_EQ(x.get(), 2);
    EXPECT_EQ(y.get(), 1);
}

TEST_F(handles, borrowed_handles_neither_retain_nor_release) {
    {
        counted lent = counted::borrowed(5);
        EXPECT_FALSE(lent.owned());
        counted copy(lent);
        EXPECT_FALSE(copy.owned()) << "a copy of a borrowed handle borrows too";
        counted moved(std::move(copy));
        EXPECT_FALSE(moved.owned());
        EXPECT_TRUE(copy.owned()) << "a moved-from handle is empty and would own what it gets";
        counted owner(7);
        owner = lent;  // releases 7, borrows 5
        EXPECT_FALSE(owner.owned());
        lent.reset();
        EXPECT_FALSE(lent);
    }
    EXPECT_TRUE(counting_traits::retained.empty());
    EXPECT_EQ(counting_traits::released, ints{7}) << "only the adopted handle was released";
    counted again = counted::borrowed(3);
    again = counted(4);  // the borrowed 3 is dropped unreleased, 4 is owned
    EXPECT_TRUE(again.owned());
    again.reset();
    EXPECT_EQ(counting_traits::released, (ints{7, 4}));
}

}  // namespace
