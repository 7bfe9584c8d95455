// SPDX-License-Identifier: Apache-2.0
// Sizes and offsets past 2^31 and 2^32: nothing between kiln and the device may truncate them
// to 32 bits. Kept apart from the other areas because a driver that does truncate may leave
// the device context unusable for the rest of the process.
#include <gtest/gtest.h>

#include <cstdint>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

#include "support/device_param.hpp"

namespace {

class large : public kiln::test::device_test {};

// Byte offsets past 2^31 in reads, writes, copies and fills. PoCL allows single allocations of
// a quarter of its global memory, and its POCL_MEMORY_LIMIT can only lower that, so on small
// machines this skips.
TEST_P(large, buffer_offsets_past_two_gibibytes) {
    const std::size_t big = (std::size_t(1) << 31) + (std::size_t(1) << 20);
    const auto& p = device().properties();
    if (p.max_allocation_bytes < big || p.global_memory_bytes < 2 * big)
        GTEST_SKIP() << device().name() << " allows single allocations of "
                     << p.max_allocation_bytes << " bytes (global memory " << p.global_memory_bytes
                     << "); this test needs " << big;
    kiln::queue q(device());
    kiln::buffer<std::uint8_t> b(q, big);
    const std::size_t far = (std::size_t(1) << 31) + 4099;
    const std::vector<std::uint8_t> marker = {1, 2, 3, 4, 5, 6, 7, 8};
    b.write(q, std::vector<std::uint8_t>(big, 0));
    b.write(q, far, marker);
    std::vector<std::uint8_t> back(8);
    b.read(q, far, back);
    EXPECT_EQ(back, marker);
    // The bytes at `far` modulo 2^31 must be untouched.
    b.read(q, far - (std::size_t(1) << 31), back);
    EXPECT_EQ(back, std::vector<std::uint8_t>(8, 0));
    b.copy_to(q, far, b, 16, 8).wait();
    b.read(q, 16, back);
    EXPECT_EQ(back, marker);
    b.fill(q, 9, big - 8, 8).wait();
    b.read(q, big - 8, back);
    EXPECT_EQ(back, std::vector<std::uint8_t>(8, 9));
}

// Global ids past 2^31 and 2^32 through the launch offset, which needs no memory at all. The
// kernel guards its index, so a driver that truncates the offset fails this test cleanly
// instead of writing out of bounds.
TEST_P(large, global_offsets_past_two_and_four_gibi_items) {
    kiln::program prog(device(), R"(
kernel void global_ids(global ulong* ids, global ulong* offset, ulong base, uint n) {
    size_t i = get_global_id(0) - base;
    if (i < n) ids[i] = get_global_id(0);
    if (get_group_id(0) == 0 && get_local_id(0) == 0) offset[0] = get_global_offset(0);
}
)");
    kiln::queue q(device());
    const unsigned n = 64;
    const auto& props = device().properties();
    if (props.backend == kiln::backend_kind::opencl &&
        props.platform.find("NVIDIA") != std::string::npos) {
        // NVIDIA's OpenCL truncates such offsets (src/backend/opencl/opencl_quirks.hpp): kiln
        // must refuse them before the driver corrupts memory.
        kiln::buffer<std::uint64_t> ids(q, n);
        kiln::single<std::uint64_t> offset(q, 0);
        const std::uint64_t base = (std::uint64_t(1) << 31) + 17;
        EXPECT_THROW(prog.kernel("global_ids")(ids, offset, base, n).launch(q, {n}, {8}, {base}),
                     kiln::invalid_argument_error);
        return;
    }
    for (std::uint64_t base : {(std::uint64_t(1) << 31) + 17, (std::uint64_t(1) << 32) + 5}) {
        kiln::buffer<std::uint64_t> ids(q, std::vector<std::uint64_t>(n, 0));
        kiln::single<std::uint64_t> offset(q, 0);
        auto done = prog.kernel("global_ids")(ids, offset, base, n).launch(q, {n}, {8}, {base});
        EXPECT_EQ(offset.get(q, done), base) << "get_global_offset(0) in the kernel";
        auto got = ids.read(q);
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], base + i) << "base " << base;
    }
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(large);

}  // namespace
