// SPDX-License-Identifier: Apache-2.0
// KILN_DEVICE specifications of many terms: parsed in work linear in their length, which this
// binary checks by counting heap allocations (it replaces the global operator new for that).
#include <gtest/gtest.h>

#include <cstdlib>
#include <kiln/kiln.hpp>
#include <new>
#include <string>

namespace {

// Allocations made by this thread while counting; other threads (the driver's) do not count.
thread_local bool counting = false;
thread_local std::size_t allocations = 0;

void* allocate(std::size_t size) noexcept {
    if (counting) ++allocations;
    return std::malloc(size == 0 ? 1 : size);
}

/// The heap allocations `work` makes on this thread.
template <class F>
std::size_t allocations_of(F&& work) {
    allocations = 0;
    counting = true;
    work();
    counting = false;
    return allocations;
}

}  // namespace

// Every non-aligned form, so that what one allocates the other frees (sanitizers check pairs).
// Both sides are malloc and free: g++ 12 under ASan inlines these operator deletes into
// GoogleTest's `new TestClass` and, seeing operator new's name there, warns
// -Wmismatched-new-delete about a pair that matches.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
    if (void* p = allocate(size)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
    return operator new(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    return allocate(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
    return allocate(size);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
#pragma GCC diagnostic pop

namespace {

/// "opencl,cpu,opencl,cpu,...": `count` terms, alternating.
std::string long_spec(std::size_t count) {
    std::string spec;
    for (std::size_t i = 0; i < count; ++i) spec += i % 2 == 0 ? "opencl," : "cpu,";
    return spec;
}

// Parsing copied the whole chain of filters at every term: 3000 terms made about 9 million
// allocations (and 30000 terms took 75 s). Linear parsing makes a few per term; the bound of 20
// per term is met by construction, not by timing.
TEST(device_spec, parsing_is_linear_in_the_number_of_terms) {
    constexpr std::size_t terms = 3000;
    const std::string spec = long_spec(terms);
    const std::size_t made = allocations_of([&] { (void)kiln::filters::from_spec(spec); });
    EXPECT_LT(made, 20 * terms) << made << " allocations to parse " << terms << " terms";
    EXPECT_GT(made, 0u) << "the allocation counter counts nothing";
}

TEST(device_spec, many_terms_select_what_one_of_each_selects) {
    const auto few = kiln::devices(kiln::filters::from_spec("opencl,cpu"));
    EXPECT_EQ(kiln::devices(kiln::filters::from_spec(long_spec(100000))), few);
    EXPECT_EQ(few, kiln::devices(kiln::filters::backend(kiln::backend_kind::opencl) &&
                                 kiln::filters::cpu()));
}

}  // namespace
