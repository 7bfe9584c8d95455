// SPDX-License-Identifier: Apache-2.0
// The host work of a launch: enqueueing a bound kernel allocates the same on the heap whatever its
// number of arguments (no text built per argument, or per launch, for errors that did not
// happen), an OpenCL launch sets only the arguments that changed since its kernel object's last
// launch, and its results stay right. This binary replaces operator new and clSetKernelArg to
// count the calling thread's calls of them, so it is a test program of its own.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <kiln/kiln.hpp>
#include <new>
#include <optional>
#include <vector>

#include "support/device_param.hpp"

namespace {

thread_local bool counting = false;
thread_local std::size_t allocations = 0;

thread_local bool counting_arguments = false;
thread_local std::size_t arguments_set = 0;

}  // namespace

// Counts, then forwards to the OpenCL library's own (kiln links it; this definition comes first).
// Declared with the C types of cl_kernel, cl_uint and cl_int, so that the test needs no OpenCL
// headers.
extern "C" std::int32_t clSetKernelArg(void* kernel, std::uint32_t index, std::size_t size,
                                       const void* value) {
    using set_kernel_arg = std::int32_t (*)(void*, std::uint32_t, std::size_t, const void*);
    static const auto library =
        reinterpret_cast<set_kernel_arg>(dlsym(RTLD_NEXT, "clSetKernelArg"));
    if (counting_arguments) ++arguments_set;
    return library(kernel, index, size, value);
}

// GCC takes the std::free below for a mismatch once it sees the replaced operator new inlined
// into a caller; the pair is matched (malloc with free), as a replacement must be.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t bytes) {
    if (counting) ++allocations;
    if (void* memory = std::malloc(bytes == 0 ? 1 : bytes)) return memory;
    throw std::bad_alloc();
}
// The nothrow and array forms too: a sanitizer's runtime defines every form itself, so one left to
// it would allocate with its own and free with the std::free below (LLVM in PoCL calls the nothrow
// form).
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
    if (counting) ++allocations;
    return std::malloc(bytes == 0 ? 1 : bytes);
}
void* operator new[](std::size_t bytes) {
    return operator new(bytes);
}
void* operator new[](std::size_t bytes, const std::nothrow_t& tag) noexcept {
    return operator new(bytes, tag);
}
void operator delete(void* memory) noexcept {
    std::free(memory);
}
void operator delete(void* memory, std::size_t) noexcept {
    std::free(memory);
}
void operator delete(void* memory, const std::nothrow_t&) noexcept {
    std::free(memory);
}
void operator delete[](void* memory) noexcept {
    std::free(memory);
}
void operator delete[](void* memory, std::size_t) noexcept {
    std::free(memory);
}
void operator delete[](void* memory, const std::nothrow_t&) noexcept {
    std::free(memory);
}

namespace {

class launch_allocations : public kiln::test::device_test {};

// Kernels of one body, with 2, 12 and 46 parameters (the unused ones scalars and buffers; 46 is a
// fused RK4 step's of a multivector<double, 3>): the launch's own allocations must not depend on
// how many arguments it sets.
const char* source = R"(
kernel void two(global int* data, uint n) {
    size_t i = get_global_id(0);
    if (i < n) data[i] += 1;
}
kernel void twelve(global int* data, uint n, global const int* a, global const int* b,
                   global const int* c, global const int* d, int e, int f, float g, float h,
                   ulong k, ulong m) {
    size_t i = get_global_id(0);
    if (i < n) data[i] += 1 + (a[0] + b[0] + c[0] + d[0] + e + f + (int)g + (int)h + (int)k +
                               (int)m) * 0;
}
kernel void forty_six(global int* data, uint n, global const int* a, global const int* b,
                      global const int* c, global const int* d, global const int* e,
                      global const int* f, global const int* g, global const int* h, float s0,
                      float s1, float s2, float s3, float s4, float s5, float s6, float s7,
                      float s8, float s9, float s10, float s11, float s12, float s13, float s14,
                      float s15, float s16, float s17, float s18, float s19, float s20, float s21,
                      float s22, float s23, float s24, float s25, float s26, float s27, float s28,
                      float s29, float s30, float s31, float s32, float s33, float s34, float s35) {
    size_t i = get_global_id(0);
    if (i < n) data[i] += 1 + (a[0] + b[0] + c[0] + d[0] + e[0] + f[0] + g[0] + h[0]) * 0 +
                          (int)(s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7 + s8 + s9 + s10 + s11 +
                                s12 + s13 + s14 + s15 + s16 + s17 + s18 + s19 + s20 + s21 +
                                s22 + s23 + s24 + s25 + s26 + s27 + s28 + s29 + s30 + s31 +
                                s32 + s33 + s34 + s35) * 0;
}
)";

/// Heap allocations of this thread for `times` calls of `run`, after a first call outside the
/// count that may set up what later ones reuse (a kernel built, a list sized).
template <class Run>
std::size_t allocations_of(const kiln::queue& q, int times, const Run& run) {
    run();
    q.finish();
    allocations = 0;
    counting = true;
    for (int t = 0; t < times; ++t) run();
    counting = false;
    q.finish();
    return allocations;
}

/// Heap allocations of this thread for `launches` enqueues of `bound` (its events dropped).
std::size_t allocations_of(const kiln::bound_kernel& bound, const kiln::queue& q, std::size_t n,
                           int launches) {
    return allocations_of(q, launches, [&] { bound.launch(q, {n}); });
}

TEST_P(launch_allocations, do_not_grow_with_the_number_of_arguments) {
    kiln::program prog(device(), source);
    kiln::queue q(device());
    constexpr std::size_t n = 64;
    constexpr int launches = 20;
    kiln::buffer<int> data(q, std::vector<int>(n, 0)), ones(q, std::vector<int>(n, 1));
    const auto two = prog.kernel("two")(data, static_cast<unsigned>(n));
    const auto twelve =
        prog.kernel("twelve")(data, static_cast<unsigned>(n), ones, ones, ones, ones, 1, 2, 3.0f,
                              4.0f, std::uint64_t{5}, std::uint64_t{6});
    std::vector<kiln::detail::kernel_argument> many{kiln::detail::make_argument(data),
                                                    kiln::detail::make_argument(unsigned(n))};
    for (int b = 0; b < 8; ++b) many.push_back(kiln::detail::make_argument(ones));
    for (int s = 0; s < 36; ++s) many.push_back(kiln::detail::make_argument(float(s)));
    const auto forty_six = prog.kernel("forty_six").bind(std::move(many));
    const std::size_t with_two = allocations_of(two, q, n, launches);
    const std::size_t with_twelve = allocations_of(twelve, q, n, launches);
    const std::size_t with_forty_six = allocations_of(forty_six, q, n, launches);
    EXPECT_EQ(with_twelve, with_two)
        << "a launch of 12 arguments allocated " << with_twelve << " times in " << launches
        << " launches, one of 2 arguments " << with_two << " times";
    EXPECT_EQ(with_forty_six, with_two)
        << "a launch of 46 arguments allocated " << with_forty_six << " times in " << launches
        << " launches, one of 2 arguments " << with_two << " times";
    // The event each launch returns is the one allocation a launch needs (a few for backends
    // that keep an event pool or more per command).
    EXPECT_LE(with_two, std::size_t{4} * launches);
    // Every launch ran: 3 * (1 + launches) increments.
    EXPECT_EQ(data.read(q), std::vector<int>(n, 3 * (1 + launches)));
}

// An eager statement allocates nothing of its own once the thread has run statements: its lists
// of arguments and of the vectors it checks take the storage of lists that earlier statements
// finished with (reuse_argument_list, reuse_vector_list), its name for errors stays a literal
// until an error needs it, and its launch makes no event, since nobody can wait for it
// (kiln::detail::repeated_launch).
TEST_P(launch_allocations, an_eager_statement_allocates_nothing_of_its_own) {
    kiln::queue q(device());
    for (const std::size_t n : {std::size_t{1}, std::size_t{1000}}) {
        constexpr int statements = 20;
        kiln::vector<float> x(q, std::vector<float>(n, 1.0f)), z(q, std::vector<float>(n, 2.0f)),
            y(q, n);
        y = 2 * x + z;  // the first statement of its type generates and builds the kernel
        q.finish();
        allocations = 0;
        counting = true;
        for (int s = 0; s < statements; ++s) y = 2 * y + z;
        counting = false;
        y = 2 * y + z;
        q.finish();
        EXPECT_EQ(allocations, 0u) << statements << " statements of " << n << " elements allocated "
                                   << allocations << " times";
        // 4, then 10, 22, ...: each of the 22 statements ran, in order.
        float expected = 4.0f;
        for (int s = 0; s < statements + 1; ++s) expected = 2 * expected + 2.0f;
        EXPECT_EQ(y.read(), std::vector<float>(n, expected));
    }
}

// A block of statements fused into one kernel allocates nothing of its own once the thread has
// run two such blocks (the first one's trace stays as the thread's last group): the statements
// take their room from the thread's arena (statement_arena), and the group's lists (statements,
// signature, trace, the vectors it numbers) and its launch's arguments take the storage that the
// block before finished with.
TEST_P(launch_allocations, a_fused_block_allocates_nothing_of_its_own) {
    kiln::queue q(device());
    constexpr std::size_t n = 1000;
    constexpr int blocks = 10;
    kiln::vector<float> x(q, std::vector<float>(n, 1.0f)), z(q, std::vector<float>(n, 2.0f)),
        y(q, n), w(q, n);
    const auto block = [&] {
        y = 2 * x + z;
        w = y * z + x;
        x = 0.5f * w;
    };
    kiln::fused(q, block);  // the first block generates and builds the kernel
    kiln::fused(q, block);
    constexpr int before = 2;
    q.finish();
    allocations = 0;
    counting = true;
    for (int b = 0; b < blocks; ++b) kiln::fused(q, block);
    counting = false;
    q.finish();
    EXPECT_EQ(allocations, 0u) << blocks << " fused blocks allocated " << allocations << " times";
    // x: 1, then ((2x + 2) * 2 + x) / 2, once a block.
    float expected = 1.0f;
    for (int b = 0; b < before + blocks; ++b) expected = 0.5f * ((2 * expected + 2) * 2 + expected);
    EXPECT_EQ(x.read(), std::vector<float>(n, expected));
}

// A statement of more arguments than most (15 here, of which 11 scalars) collects them into a
// list that earlier statements' launches finished with too.
TEST_P(launch_allocations, an_eager_statement_of_many_arguments_allocates_nothing_of_its_own) {
    kiln::queue q(device());
    constexpr std::size_t n = 100;
    constexpr int statements = 20;
    kiln::vector<float> x(q, std::vector<float>(n, 1.0f)), z(q, std::vector<float>(n, 2.0f)),
        y(q, n);
    const std::size_t counted = allocations_of(
        q, statements, [&] { y = (x + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10) * 2 + z; });
    EXPECT_EQ(counted, 0u) << statements << " statements of 15 arguments allocated " << counted
                           << " times";
    EXPECT_EQ(y.read(), std::vector<float>(n, (1.0f + 55) * 2 + 2));
}

// The list of vectors a statement checks has room for more than most statements have: here 11
// vector operands (an RK4 update of a multivector<double, 3> has 18).
TEST_P(launch_allocations, an_eager_statement_of_many_vectors_allocates_nothing_of_its_own) {
    kiln::queue q(device());
    constexpr std::size_t n = 100;
    constexpr int statements = 20;
    std::vector<kiln::vector<float>> inputs;
    for (int v = 0; v < 8; ++v) inputs.emplace_back(q, std::vector<float>(n, float(v)));
    kiln::vector<float> z(q, std::vector<float>(n, 0.5f)), y(q, n);
    const auto& in = inputs;
    const std::size_t counted = allocations_of(q, statements, [&] {
        y = in[0] + in[1] + in[2] + in[3] + in[4] + in[5] + in[6] + in[7] + z + in[7];
    });
    EXPECT_EQ(counted, 0u) << statements << " statements of 10 vectors allocated " << counted
                           << " times";
    EXPECT_EQ(y.read(), std::vector<float>(n, 0.0f + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 0.5f + 7));
}

/// The clSetKernelArg calls of this thread while `run` runs, its work finished first.
template <class Run>
std::size_t arguments_set_by(const kiln::queue& q, const Run& run) {
    arguments_set = 0;
    counting_arguments = true;
    run();
    counting_arguments = false;
    q.finish();
    return arguments_set;
}

// A kernel object keeps its arguments from launch to launch: a launch sets again only those that
// changed since the object's last launch, and every one that changed reaches the kernel, a buffer
// made where a released one was included (OpenCL may hand it the same handle).
TEST_P(launch_allocations, a_launch_sets_only_the_arguments_that_changed) {
    if (device().backend() != kiln::backend_kind::opencl)
        GTEST_SKIP() << "CUDA passes every argument with the launch";
    kiln::program prog(device(), R"(
kernel void add(global int* data, uint n, int amount) {
    size_t i = get_global_id(0);
    if (i < n) data[i] += amount;
}
)");
    const kiln::kernel add = prog.kernel("add");
    kiln::queue q(device());
    constexpr std::size_t n = 16;
    const auto count = static_cast<unsigned>(n);
    kiln::buffer<int> a(q, std::vector<int>(n, 0)), b(q, std::vector<int>(n, 0));
    const auto launch = [&](const kiln::bound_kernel& bound) {
        return arguments_set_by(q, [&] { bound.launch(q, {n}); });
    };
    EXPECT_EQ(launch(add(a, count, 1)), 3u);
    EXPECT_EQ(launch(add(a, count, 1)), 0u) << "the same arguments again";
    EXPECT_EQ(launch(add(a, count, 5)), 1u) << "a scalar changed";
    EXPECT_EQ(launch(add(b, count, 5)), 1u) << "a buffer changed";
    EXPECT_EQ(a.read(q), std::vector<int>(n, 7));
    EXPECT_EQ(b.read(q), std::vector<int>(n, 5));
    std::optional<kiln::buffer<int>> released(std::in_place, q, std::vector<int>(n, 0));
    EXPECT_EQ(launch(add(*released, count, 5)), 1u);
    released.reset();
    kiln::buffer<int> made(q, std::vector<int>(n, 100));
    EXPECT_EQ(launch(add(made, count, 5)), 1u) << "a buffer made after another was released";
    EXPECT_EQ(made.read(q), std::vector<int>(n, 105));

    // A statement launched again sets its scalars that changed, and nothing else.
    kiln::vector<float> x(q, std::vector<float>(n, 1.0f)), z(q, std::vector<float>(n, 2.0f)),
        y(q, n);
    y = 2 * x + z;
    q.finish();
    EXPECT_EQ(arguments_set_by(q, [&] { y = 2 * x + z; }), 0u);
    EXPECT_EQ(arguments_set_by(q, [&] { y = 3 * x + z; }), 1u);
    EXPECT_EQ(y.read(), std::vector<float>(n, 5.0f));
    EXPECT_EQ(arguments_set_by(q, [&] { x = 3 * y + z; }), 2u) << "its two vectors swapped places";
    EXPECT_EQ(x.read(), std::vector<float>(n, 17.0f));
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(launch_allocations);

}  // namespace
